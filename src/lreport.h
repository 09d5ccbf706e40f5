/* lreport: what done(report) sees (the report as tables, series as "hmem.series"
 * userdata with methods) and the hmem.aggregate declarations and their results. A Lua
 * binding file: calls lrow (rows of the report), lctx (the declarations and the
 * --lua-mem charge) and the plain-C timeline, never the host (lbind.h). */
#ifndef HM_LREPORT_H
#define HM_LREPORT_H

#include "lctx.h"
#include "output.h"

/* Register the series metatable. [-0, +0, m] */
void hm_lua_series_register(lua_State *L);

/* Push the report table given to done(report); it points into rep, which must outlive
 * the state. [-0, +1, m] */
void hm_lua_report_push(lua_State *L, const hm_report *rep);

/* hmem.aggregate{...} inside hmem run: checks the declaration, copies it into the
 * state's hm_decls (lctx owns the copy) and returns a fresh table describing it.
 * [-1, +1, e] */
int hm_lua_aggregate_declare(lua_State *L);

/* Compute every declared aggregation into rep->aggs (owned by rep, so an error in a key
 * function leaves nothing unfreed). [-0, +0, e] */
void hm_lua_aggregate_all(lua_State *L, hm_report *rep);

#endif
