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
 * the same event are == and the same table key from classify to done. The rows made so
 * far are in weak-valued tables, one per file, keyed by the event's index in the file's
 * memory columns + 1 and sized for all of them (an insert never rehashes); the registry's
 * "hmem.rows" holds them by file (light userdata). */
typedef struct hm_rows {
	int mt_ref;            /* the row metatable */
	int made_ref;          /* the table of rows made for file last (a registry slot) */
	const hm_file *last;   /* NULL until the first table */
	const hm_strtab *cats; /* names categories once classify is over (row.category) */
	const struct fslot *fslots; /* field ids by name (lrow.c) */
} hm_rows;

/* The state's rows (kept by script.c). */
hm_rows *hm_lua_rows(lua_State *L);

/* Push the row for position k of series s: the one already made for it if Lua still holds
 * it. cats (NULL inside classify) names categories for row.category from then on, for
 * every row; it must outlive the state. [-0, +1, m] */
void hm_lua_row_push(lua_State *L, const hm_file *f, const hm_series *s, uint32_t k, const hm_strtab *cats);

/* For classify, which pushes each event at most once, so it needs no look-up: push the
 * row metatable, then, if keep, the table of rows made for f. Without keep no later phase
 * may push rows again (so nothing could meet a row twice). [-0, +1|2, m] */
void hm_lua_rows_begin(lua_State *L, const hm_file *f, int keep);

/* Push a new row for an event of f not pushed before, given the metatable at mt and the
 * table of rows made at made (0: not kept). [-0, +1, m] */
void hm_lua_row_new(lua_State *L, const hm_file *f, const hm_series *s, uint32_t k, int mt, int made);

/* Push a scalar field value (lists are not scalars: pushes nil). [-0, +1, m] */
void hm_lua_push_value(lua_State *L, const hm_value *v);

/* Push the report table given to done(report). [-0, +1, m] */
void hm_lua_report_push(lua_State *L, const hm_report *rep);

/* An aggregation declared with hmem.aggregate, checked and copied when declared: C
 * never reads the rule's table again. Functions are held by registry reference (out of
 * reach of Lua code). */
typedef struct hm_aggdecl {
	char *name;                          /* owned; never holds a NUL */
	int nby, by_field[16], by_ref[16];   /* a field id, or 0 and a function's reference */
	int sum, max, count;                 /* field ids (0: none); count 0 or 1 */
	int where, where_ref;                /* 0 all, 1 live at peak, 2 live at end; or a function's reference */
	lua_Integer top;                     /* 0: every group */
} hm_aggdecl;

/* The declarations of a state (kept by script.c); closed once the rules have loaded. */
typedef struct hm_decls {
	hm_aggdecl *v;
	size_t n, cap;
	int closed;
} hm_decls;

hm_decls *hm_lua_decls(lua_State *L);

/* Frees the names and the array (the references die with the state). */
void hm_lua_decls_free(hm_decls *d);

/* hmem.aggregate{...} inside hmem run: checks the declaration, copies it into the
 * state's hm_decls and returns a fresh table describing it. [-1, +1, e] */
int hm_lua_aggregate_declare(lua_State *L);

/* Compute every declared aggregation into rep->aggs (owned by rep, so an error in a key
 * function leaves nothing unfreed). [-0, +0, e] */
void hm_lua_aggregate_all(lua_State *L, hm_report *rep);

/* Count bytes hmem keeps in C on a rule file's behalf against its --lua-mem limit:
 * raises (as the allocator does) when they do not fit. uncharge gives them back.
 * [-0, +0, e] */
void hm_lua_charge(lua_State *L, size_t bytes);
void hm_lua_uncharge(lua_State *L, size_t bytes);

/* The bytes --lua-mem still allows (SIZE_MAX without a limit). */
size_t hm_lua_mem_left(lua_State *L);

/* A fresh instance of lua-cjson's C library (cjson.safe if safe) for one chunk, its
 * nesting depths capped (lcjson.c). [-0, +1, e] */
void hm_lua_push_cjson(lua_State *L, int safe);

/* Register the series metatable. [-0, +0, m] */
void hm_lua_series_register(lua_State *L);

#endif
