/* require "cjson" in a rule file: lua-cjson's C library, linked into hmem (never a file
 * found on a search path), one fresh instance per requiring chunk (so one pack's settings
 * never change another's), with the nesting depths capped: decoding or encoding recurses
 * on the C stack, and a depth of a million overflows it. encode writes into a buffer of its
 * own (malloc, not Lua's allocator): a table holding one long string a thousand times
 * makes a text a thousand times longer, so encode first checks it fits in --lua-mem. */
#include "lcjson.h"
#include "lctx.h"

#include <lauxlib.h>
#include <stdint.h>

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

/* At most the bytes encode writes for the value at idx, counted until past limit: a string
 * escapes to at most 6 bytes a byte, a number or literal takes at most 32, a table its
 * brackets and separators. TOO_DEEP past cjson's depth cap. [-0, +0, e] */
#define TOO_DEEP SIZE_MAX

static size_t encode_bound(lua_State *L, int idx, int depth, size_t sum, size_t limit)
{
	if (sum > limit)
		return sum;
	if (depth > HM_CJSON_MAX_DEPTH)
		return TOO_DEEP; /* stop at once: encode raises (a table that holds itself twice
				  * would otherwise take 2^1000 steps here) */
	if (lua_type(L, idx) == LUA_TSTRING)
		return sum + 6 * lua_rawlen(L, idx) + 2;
	if (lua_type(L, idx) != LUA_TTABLE)
		return sum + 32;
	sum += 2;
	luaL_checkstack(L, 3, "cjson.encode");
	lua_pushnil(L);
	while (sum <= limit && lua_next(L, idx)) {
		int top = lua_gettop(L);
		sum = encode_bound(L, top - 1, depth + 1, sum + 2, limit);
		sum = encode_bound(L, top, depth + 1, sum, limit);
		lua_pop(L, 1);
	}
	if (sum > limit)
		lua_pop(L, 1); /* the key lua_next left */
	return sum;
}

/* encode(value): the original (upvalue 1) once the text, and the buffer that doubles to
 * hold it, fit in what --lua-mem leaves; cjson.safe's (upvalue 2 true) returns nil and
 * the message instead of raising. [-1, +1, e] */
static int bounded_encode(lua_State *L)
{
	size_t left = hm_lua_mem_left(L);
	lua_settop(L, 1);
	size_t bound = encode_bound(L, 1, 0, 0, left / 3);
	if (bound != TOO_DEEP && bound > left / 3) {
		const char *msg = "cjson.encode: the text would not fit in the memory --lua-mem leaves";
		if (!lua_toboolean(L, lua_upvalueindex(2)))
			return luaL_error(L, "%s", msg);
		lua_pushnil(L);
		lua_pushstring(L, msg);
		return 2;
	}
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, 1, LUA_MULTRET);
	return lua_gettop(L);
}

static void cap(lua_State *L, int safe);

/* cjson.new(): a fresh instance, capped as well (upvalue 1: the original, 2: safe).
 * [-0, +1, e] */
static int capped_new(lua_State *L)
{
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_call(L, 0, 1);
	cap(L, lua_toboolean(L, lua_upvalueindex(2)));
	return 1;
}

/* Wrap the configuration functions of the instance at -1 (a table lua-cjson just made,
 * not yet seen by Lua code). [-0, +0, e] */
static void cap(lua_State *L, int safe)
{
	luaL_checktype(L, -1, LUA_TTABLE);
	lua_getfield(L, -1, "encode");
	lua_pushboolean(L, safe);
	lua_pushcclosure(L, bounded_encode, 2);
	lua_setfield(L, -2, "encode");
	const char *depths[] = {"encode_max_depth", "decode_max_depth"};
	for (int i = 0; i < 2; i++) {
		lua_getfield(L, -1, depths[i]);
		lua_pushcclosure(L, capped_depth, 1);
		lua_setfield(L, -2, depths[i]);
	}
	lua_getfield(L, -1, "new");
	lua_pushboolean(L, safe);
	lua_pushcclosure(L, capped_new, 2);
	lua_setfield(L, -2, "new");
}

void hm_lua_push_cjson(lua_State *L, int safe)
{
	lua_pushcfunction(L, safe ? luaopen_cjson_safe : luaopen_cjson);
	lua_call(L, 0, 1);
	cap(L, safe);
}
