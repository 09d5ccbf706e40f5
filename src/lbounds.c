/* Standard library functions that loop in C get bounds, so that their cost follows what
 * the Lua heap can hold: the --timeout's hook runs between Lua instructions, never inside
 * them (the watchdog's second expiry still ends any C loop these bounds do not cover, such
 * as a backtracking pattern). */
#include "lbounds.h"

#include <lauxlib.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

/* A Lua table slot (TValue) takes 16 bytes: no table under the limit holds more. */
#define SLOT_BYTES 16

/* Most elements a table function may touch (upvalue 2). */
static lua_Unsigned max_elems(lua_State *L)
{
	return (lua_Unsigned)lua_tointeger(L, lua_upvalueindex(2));
}

/* Raises when a function would touch count_minus_1 + 1 elements, more than max_elems. */
static void check_count(lua_State *L, const char *fn, lua_Unsigned count_minus_1)
{
	lua_Unsigned max = max_elems(L);
	if (max && count_minus_1 >= max) {
		char msg[200];
		snprintf(msg, sizeof msg, "%s: %.0f elements, more than a table holds under --lua-mem %llu MB (%llu)", fn,
			 (double)count_minus_1 + 1, (unsigned long long)(max * SLOT_BYTES >> 20), (unsigned long long)max);
		luaL_error(L, "%s", msg);
	}
}

/* Call the original function (upvalue 1) with every argument; its results. */
static int call_original(lua_State *L, int nres)
{
	int n = lua_gettop(L);
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, n, nres);
	return lua_gettop(L);
}

/* string.rep(s, n [, sep]), as the manual says (Lua's own limit of INT_MAX bytes, its
 * message), with no loop of n empty copies and no result bigger than the Lua heap may
 * be. [-(2|3), +1, e] */
static int bounded_rep(lua_State *L)
{
	size_t l, lsep = 0;
	const char *s = luaL_checklstring(L, 1, &l);
	lua_Integer n = luaL_checkinteger(L, 2);
	const char *sep = luaL_optlstring(L, 3, "", &lsep);
	if (n <= 0 || l + lsep == 0) {
		lua_pushliteral(L, "");
		return 1;
	}
	if (l + lsep < l || l + lsep > (size_t)INT_MAX / (lua_Unsigned)n)
		return luaL_error(L, "resulting string too large");
	size_t total = (size_t)n * l + (size_t)(n - 1) * lsep;
	lua_Unsigned mem = max_elems(L) * SLOT_BYTES;
	if (mem && total > mem)
		return luaL_error(L, "string.rep: the result would be %I bytes, more than --lua-mem %I MB", (lua_Integer)total,
				  (lua_Integer)(mem >> 20));
	luaL_Buffer b;
	char *p = luaL_buffinitsize(L, &b, total);
	for (; n > 1; n--) {
		memcpy(p, s, l), p += l;
		memcpy(p, sep, lsep), p += lsep;
	}
	memcpy(p, s, l);
	luaL_pushresultsize(&b, total);
	return 1;
}

enum { TAB_R = 1, TAB_W = 2, TAB_L = 4 };

/* Argument arg is a table, or a value whose metatable gives what the function needs
 * (Lua's ltablib checktab). [-0, +0, e] */
static void check_tab(lua_State *L, int arg, int what)
{
	if (lua_type(L, arg) == LUA_TTABLE)
		return;
	int ok = lua_getmetatable(L, arg), n = ok;
	const char *need[] = {"__index", "__newindex", "__len"};
	for (int i = 0; ok && i < 3; i++)
		if (what & (1 << i)) {
			lua_pushstring(L, need[i]);
			ok = lua_rawget(L, -(n + 1)) != LUA_TNIL;
			n++;
		}
	lua_pop(L, n);
	if (!ok)
		luaL_checktype(L, arg, LUA_TTABLE);
}

/* table.move(a1, f, e, t [, a2]), as the manual says, e - f + 1 bounded. [-(4|5), +1, e] */
static int bounded_move(lua_State *L)
{
	lua_Integer f = luaL_checkinteger(L, 2), e = luaL_checkinteger(L, 3), t = luaL_checkinteger(L, 4);
	int tt = !lua_isnoneornil(L, 5) ? 5 : 1;
	check_tab(L, 1, TAB_R);
	check_tab(L, tt, TAB_W);
	if (e >= f) {
		luaL_argcheck(L, f > 0 || e < LUA_MAXINTEGER + f, 3, "too many elements to move");
		check_count(L, "table.move", (lua_Unsigned)e - (lua_Unsigned)f);
		lua_Integer n = e - f + 1;
		luaL_argcheck(L, t <= LUA_MAXINTEGER - n + 1, 4, "destination wrap around");
		if (t > e || t <= f || (tt != 1 && !lua_compare(L, 1, tt, LUA_OPEQ))) {
			for (lua_Integer i = 0; i < n; i++) {
				lua_geti(L, 1, f + i);
				lua_seti(L, tt, t + i);
			}
		} else {
			for (lua_Integer i = n - 1; i >= 0; i--) {
				lua_geti(L, 1, f + i);
				lua_seti(L, tt, t + i);
			}
		}
	}
	lua_pushvalue(L, tt);
	return 1;
}

static void add_field(lua_State *L, luaL_Buffer *b, lua_Integer i)
{
	lua_geti(L, 1, i);
	if (!lua_isstring(L, -1))
		luaL_error(L, "invalid value (%s) at index %I in table for 'concat'", luaL_typename(L, -1), i);
	luaL_addvalue(b);
}

/* table.concat(t [, sep [, i [, j]]]), as the manual says, j - i + 1 bounded.
 * [-(1..4), +1, e] */
static int bounded_concat(lua_State *L)
{
	check_tab(L, 1, TAB_R | TAB_L);
	lua_Integer last = luaL_len(L, 1);
	size_t lsep;
	const char *sep = luaL_optlstring(L, 2, "", &lsep);
	lua_Integer i = luaL_optinteger(L, 3, 1);
	last = luaL_optinteger(L, 4, last);
	if (last >= i)
		check_count(L, "table.concat", (lua_Unsigned)last - (lua_Unsigned)i);
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	for (; i < last; i++) {
		add_field(L, &b, i);
		luaL_addlstring(&b, sep, lsep);
	}
	if (i == last)
		add_field(L, &b, i);
	luaL_pushresult(&b);
	return 1;
}

/* table.insert(t, [pos,] v), as the manual says, the shift bounded. [-(2|3), +0, e] */
static int bounded_insert(lua_State *L)
{
	check_tab(L, 1, TAB_R | TAB_W | TAB_L);
	lua_Integer e = (lua_Integer)((lua_Unsigned)luaL_len(L, 1) + 1u), pos;
	switch (lua_gettop(L)) {
	case 2:
		pos = e;
		break;
	case 3:
		pos = luaL_checkinteger(L, 2);
		luaL_argcheck(L, (lua_Unsigned)pos - 1u < (lua_Unsigned)e, 2, "position out of bounds");
		if (e > pos)
			check_count(L, "table.insert", (lua_Unsigned)e - (lua_Unsigned)pos - 1u);
		for (lua_Integer i = e; i > pos; i--) {
			lua_geti(L, 1, i - 1);
			lua_seti(L, 1, i);
		}
		break;
	default:
		return luaL_error(L, "wrong number of arguments to 'insert'");
	}
	lua_seti(L, 1, pos);
	return 0;
}

/* table.remove(t [, pos]), as the manual says, the shift bounded (an out-of-bounds pos is
 * "bad argument #1", as Lua 5.4 says it). [-(1|2), +1, e] */
static int bounded_remove(lua_State *L)
{
	check_tab(L, 1, TAB_R | TAB_W | TAB_L);
	lua_Integer size = luaL_len(L, 1);
	lua_Integer pos = luaL_optinteger(L, 2, size);
	if (pos != size)
		luaL_argcheck(L, (lua_Unsigned)pos - 1u <= (lua_Unsigned)size, 1, "position out of bounds");
	if (size > pos)
		check_count(L, "table.remove", (lua_Unsigned)size - (lua_Unsigned)pos - 1u);
	lua_geti(L, 1, pos);
	for (; pos < size; pos++) {
		lua_geti(L, 1, pos + 1);
		lua_seti(L, 1, pos);
	}
	lua_pushnil(L);
	lua_seti(L, 1, pos);
	return 1;
}

/* The rule file's message handler, unless the timeout has stopped the call: its error is
 * raised from the hook, where hooks are off, so a handler that loops would never end.
 * [-1, +1, e] */
static int guarded_handler(lua_State *L)
{
	const volatile sig_atomic_t *stopped = lua_touserdata(L, lua_upvalueindex(2));
	if (*stopped) {
		lua_settop(L, 1);
		return 1;
	}
	return call_original(L, 1);
}

static int xpcall_done(lua_State *L, int status, lua_KContext ctx)
{
	(void)status, (void)ctx;
	return lua_gettop(L);
}

/* xpcall(f, msgh, ...) with msgh guarded; yields pass through. [-(2+n), +?, e] */
static int guarded_xpcall(lua_State *L)
{
	luaL_checktype(L, 2, LUA_TFUNCTION);
	lua_pushvalue(L, 2);
	lua_pushvalue(L, lua_upvalueindex(2));
	lua_pushcclosure(L, guarded_handler, 2);
	lua_replace(L, 2);
	int n = lua_gettop(L);
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_callk(L, n, LUA_MULTRET, 0, xpcall_done);
	return lua_gettop(L);
}

/* Replace t[name] (t on top) with fn, its original and limit as upvalues. [-0, +0, m] */
static void wrap(lua_State *L, const char *name, lua_CFunction fn, lua_Integer limit)
{
	lua_getfield(L, -1, name);
	lua_pushinteger(L, limit);
	lua_pushcclosure(L, fn, 2);
	lua_setfield(L, -2, name);
}

void hm_lua_bound_libs(lua_State *L, size_t mem_limit, volatile sig_atomic_t *stopped)
{
	lua_Integer max = (lua_Integer)(mem_limit / SLOT_BYTES);
	lua_getglobal(L, "string");
	wrap(L, "rep", bounded_rep, max);
	lua_pop(L, 1);
	lua_getglobal(L, "table");
	wrap(L, "move", bounded_move, max);
	wrap(L, "concat", bounded_concat, max);
	wrap(L, "insert", bounded_insert, max);
	wrap(L, "remove", bounded_remove, max);
	lua_pop(L, 1);
	lua_pushglobaltable(L);
	lua_getfield(L, -1, "xpcall");
	lua_pushlightuserdata(L, (void *)stopped);
	lua_pushcclosure(L, guarded_xpcall, 2);
	lua_setfield(L, -2, "xpcall");
	lua_pop(L, 1);
}
