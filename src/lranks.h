/* lranks: the cross-rank rows (ranks.h) as the plain table done(report) reads as
 * report.ranks. A Lua binding file below lreport: calls only the plain-C core (ranks). */
#ifndef HM_LRANKS_H
#define HM_LRANKS_H

#include "output.h"

#include <lua.h>

/* Push the list of cross-rank rows of rep, one table per row with the keys of --json's
 * "ranks" (category and max_rank nil when none, imbalance a number or nil). [-0, +1, m] */
void hm_lua_ranks_push(lua_State *L, const hm_report *rep);

#endif
