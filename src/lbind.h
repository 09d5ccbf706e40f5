/* lbind: what the Lua binding files (script.c, lrow.c, lreport.c) share. Not part of
 * the plain-C core: only these files include lua.h. */
#ifndef HM_LBIND_H
#define HM_LBIND_H

#include "fields.h"
#include "output.h"

#include <lua.h>

#define HM_ROW_META "hmem.row"
#define HM_SERIES_META "hmem.series"

/* Call the function below nargs arguments through a message handler that adds a
 * traceback (lua.c's docall). [-(nargs+1), +(nres|1), -] */
int hm_lua_docall(lua_State *L, int nargs, int nres);

/* Register the row metatable. [-0, +0, m] */
void hm_lua_row_register(lua_State *L);

/* A row is a full userdata, one per event while Lua holds it anywhere, so that rows of
 * the same event are == and the same table key from classify to done: the rows made so
 * far are in the registry's "hmem.rows", a table keyed by the event's slot in its series
 * (light userdata) whose metatable, the row metatable, makes its values weak. */
typedef struct hm_rows {
	int made_ref;          /* "hmem.rows" (0 until the first row) */
	const hm_strtab *cats; /* names categories once classify is over (row.category) */
} hm_rows;

/* The state's rows (kept by script.c). */
hm_rows *hm_lua_rows(lua_State *L);

/* Push the row for position k of series s: the one already made for it if Lua still holds
 * it. cats (NULL inside classify) names categories for row.category from then on, for
 * every row; it must outlive the state. [-0, +1, m] */
void hm_lua_row_push(lua_State *L, const hm_file *f, const hm_series *s, uint32_t k, const hm_strtab *cats);

/* Push a scalar field value (lists are not scalars: pushes nil). [-0, +1, m] */
void hm_lua_push_value(lua_State *L, const hm_value *v);

/* Push the report table given to done(report). [-0, +1, m] */
void hm_lua_report_push(lua_State *L, const hm_report *rep);

/* Compute every aggregation declared with hmem.aggregate into rep->aggs (owned by rep,
 * so an error in a key function leaves nothing unfreed). [-0, +0, e] */
void hm_lua_aggregate_all(lua_State *L, hm_report *rep);

/* Register the series metatable. [-0, +0, m] */
void hm_lua_series_register(lua_State *L);

#endif
