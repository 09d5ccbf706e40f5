/* lexplain: the explain results of a series (explain.h) as the plain tables done(report)
 * reads: series.steps, series.steps_note, series.ooms, series.leak and the reserved-but-unallocated figures.
 * A Lua binding file below lreport: calls only the plain-C core (explain, timeline). */
#ifndef HM_LEXPLAIN_H
#define HM_LEXPLAIN_H

#include "analyze.h"
#include "util.h"

#include <lua.h>

/* Push the series field key when it is one of the explain fields (times in µs, absent
 * values nil) and return 1; return 0 and push nothing otherwise. cats names the categories.
 * ooms[i].live is left to the caller (rows belong to lreport). [-0, +(0|1), m] */
int hm_lua_explain_field(lua_State *L, const hm_strtab *cats, const hm_file *f, const hm_series *s, const char *key);

/* The names of those fields, for error messages. */
#define HM_LUA_EXPLAIN_FIELDS "steps, steps_note, ooms, leak, reserved_unallocated_at_peak, max_reserved_unallocated, max_reserved_unallocated_ts"

#endif
