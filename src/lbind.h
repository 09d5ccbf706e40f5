/* lbind: the Lua binding, the only files that include lua.h (the rest of hmem is plain C
 * that can be tested and fuzzed without Lua). Calls go one way, down; no file calls back
 * into one above it (the host's data reaches a lower file only as an argument):
 *
 *   script      the rule file's life: its hooks, categories, `hmem packs`; the hm_script
 *    |            API main uses (script.h, which has no Lua type)
 *   lsandbox    each chunk's environment, require, where modules and packs are found
 *    |
 *   lclassify   the classify loop and the cache_by memo
 *    |
 *   lreport     done(report), series methods, hmem.aggregate
 *    |
 *   lrow        the row userdata; beside it lexplain (the explain results as done's tables)
 *    |            and lranks (the cross-rank rows as report.ranks); lbounds, lcjson: the
 *    |            library functions' bounds and cjson, for lsandbox and ldiff
 *    |
 *   lview       a pack's view of the context (row.view)
 *   lctx        the state and its limits (--lua-mem, --timeout), docall, the --lua-mem
 *    |            charge, and the per-state data of rows and declarations
 *   watchdog    (plain C) the --timeout's thread
 *
 * ldiff (hmem diff's own state) stands apart. These are all the calls within the binding
 * (each may also call the plain-C core: util, fields, timeline, outfile); tests/layers.lua
 * fails when a line here and the calls differ:
 *   script -> lclassify, lctx, lreport, lsandbox, lview
 *   lsandbox -> lbounds, lcjson, lclassify, lctx, lreport, lrow
 *   lclassify -> lctx, lrow, lview
 *   lreport -> lctx, lexplain, lranks, lrow
 *   lrow -> lctx, lview
 *   ldiff -> lbounds, lcjson, lctx
 *   lcjson -> lctx
 *   lctx -> watchdog
 *   lview, lbounds, lexplain, lranks, watchdog -> none
 *
 * Each file's header is its whole surface. tests/layers.lua also fails on a circle of calls
 * or of includes between files (anywhere in src/), on a function declared in another file's
 * header, and on lua.h reached from a file outside the binding (the Makefile's LUA_SIDE).
 * This header holds the names the userdata types are registered under. */
#ifndef HM_LBIND_H
#define HM_LBIND_H

#define HM_ROW_META "hmem.row"
#define HM_SERIES_META "hmem.series"

#endif
