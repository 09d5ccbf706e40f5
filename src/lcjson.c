/* require "cjson" in a rule file: lua-cjson's C library, linked into hmem (never a file
 * found on a search path), one fresh instance per requiring chunk (so one pack's settings
 * never change another's), with the nesting depths capped: decoding or encoding recurses
 * on the C stack, and a depth of a million overflows it. */
#include "lbind.h"

#include <lauxlib.h>

int luaopen_cjson(lua_State *L);
int luaopen_cjson_safe(lua_State *L);

/* lua-cjson's own default: deep enough for any trace or report, shallow enough for the
 * C stack. */
#define HM_CJSON_MAX_DEPTH 1000

/* encode_max_depth / decode_max_depth ([depth]): the original (upvalue 1) with depth
 * checked first. [-?, +?, e] */
static int capped_depth(lua_State *L)
{
	if (!lua_isnoneornil(L, 1)) {
		lua_Integer d = luaL_checkinteger(L, 1);
		luaL_argcheck(L, d >= 1 && d <= HM_CJSON_MAX_DEPTH, 1,
			      "a depth from 1 to 1000: hmem caps it, deeper nesting overflows the C stack");
	}
	int n = lua_gettop(L);
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, n, LUA_MULTRET);
	return lua_gettop(L);
}

static void cap(lua_State *L);

/* cjson.new(): a fresh instance, capped as well (upvalue 1: the original). [-0, +1, e] */
static int capped_new(lua_State *L)
{
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_call(L, 0, 1);
	cap(L);
	return 1;
}

/* Wrap the configuration functions of the instance at -1 (a table lua-cjson just made,
 * not yet seen by Lua code). [-0, +0, e] */
static void cap(lua_State *L)
{
	luaL_checktype(L, -1, LUA_TTABLE);
	const char *depths[] = {"encode_max_depth", "decode_max_depth"};
	for (int i = 0; i < 2; i++) {
		lua_getfield(L, -1, depths[i]);
		lua_pushcclosure(L, capped_depth, 1);
		lua_setfield(L, -2, depths[i]);
	}
	lua_getfield(L, -1, "new");
	lua_pushcclosure(L, capped_new, 1);
	lua_setfield(L, -2, "new");
}

void hm_lua_push_cjson(lua_State *L, int safe)
{
	lua_pushcfunction(L, safe ? luaopen_cjson_safe : luaopen_cjson);
	lua_call(L, 0, 1);
	cap(L);
}
