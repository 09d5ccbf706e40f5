/* lbind: the Lua binding, the only files that include lua.h (the rest of hmem is plain C
 * that can be tested and fuzzed without Lua). Calls go one way, down; no file calls back
 * into one above it (the host's data reaches a lower file only as an argument):
 *
 *   script      the rule file's state: sandbox, require, packs, hooks, the hm_script API
 *    |   \        main uses (script.h)
 *    |  lclassify   the classify loop and the cache_by memo
 *    |   |
 *   lreport |     done(report), series methods, hmem.aggregate
 *    |   |
 *   lrow ---      the row userdata
 *    |
 *   lctx        the state and its limits (--lua-mem, --timeout), docall, the --lua-mem
 *    |            charge, and the per-state data of rows and declarations
 *   watchdog    (plain C) the --timeout's thread
 *
 *   script -> lclassify, lreport, lrow, lctx, lbounds, lcjson, watchdog
 *   lclassify -> lrow, lctx        lreport -> lrow, lctx, timeline
 *   lrow -> lctx, fields           lcjson -> lctx        lctx -> watchdog
 *   lbounds -> (Lua only)
 *
 * Each file's header is its whole surface, so the include graph is the call graph:
 * tests/layers.lua fails on a circle in it, on a function declared in another unit's
 * header, and on lua.h reached from a file outside the binding (Makefile's LUA_SIDE).
 * This header holds the names the userdata types are registered under. */
#ifndef HM_LBIND_H
#define HM_LBIND_H

#define HM_ROW_META "hmem.row"
#define HM_SERIES_META "hmem.series"

#endif
