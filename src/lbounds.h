/* lbounds: bounds on the standard library functions that loop in C, where the --timeout's
 * hook cannot stop them (README "Scripting"). A Lua binding file (includes lua.h) that
 * calls no other (lbind.h); it owns nothing: the bounded functions live in the state. */
#ifndef HM_LBOUNDS_H
#define HM_LBOUNDS_H

#include <lua.h>
#include <signal.h>
#include <stddef.h>

/* Replace string.rep, table.insert, table.remove, table.move, table.concat and xpcall in
 * the global tables (the sandboxes copy them from there) with bounded versions:
 * string.rep's result fits in mem_limit bytes and costs nothing when empty; the table
 * functions touch at most mem_limit / 16 elements (what a table can hold); an xpcall
 * message handler is skipped once *stopped is set (the timeout's error must not run rule
 * code where hooks cannot). mem_limit 0: no size bound. stopped must outlive L. Call after
 * luaL_openlibs. [-0, +0, m] */
void hm_lua_bound_libs(lua_State *L, size_t mem_limit, volatile sig_atomic_t *stopped);

#endif
