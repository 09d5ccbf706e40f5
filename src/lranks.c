#include "lranks.h"
#include "ranks.h"

#include <lauxlib.h>

/* An integer field of the table on top. [-0, +0, m] */
static void set_int(lua_State *L, const char *k, int64_t v)
{
	if (v == HM_NONE)
		return; /* nil: the key is absent */
	lua_pushinteger(L, (lua_Integer)v);
	lua_setfield(L, -2, k);
}

#define RANKS_META "hmem.ranks"

/* __gc of the box holding the computed rows. [-0, +0, -] */
static int ranks_gc(lua_State *L)
{
	hm_ranks_free(lua_touserdata(L, 1));
	return 0;
}

/* The rows live in a userdata box with __gc while the tables are made, so a memory error
 * (--lua-mem) in between frees them. */
void hm_lua_ranks_push(lua_State *L, const hm_report *rep)
{
	hm_ranks *k = lua_newuserdatauv(L, sizeof *k, 0);
	k->rows = NULL, k->n = 0;
	if (luaL_newmetatable(L, RANKS_META)) {
		lua_pushcfunction(L, ranks_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	hm_ranks_compute(rep, k);
	lua_createtable(L, (int)k->n, 0);
	for (size_t i = 0; i < k->n; i++) {
		const hm_rankrow *w = &k->rows[i];
		lua_createtable(L, 0, 11);
		lua_pushstring(L, w->kind);
		lua_setfield(L, -2, "device_kind");
		if (w->cat != HM_RANKS_DEVICE) {
			lua_pushlstring(L, rep->cats->str[w->cat], rep->cats->len[w->cat]);
			lua_setfield(L, -2, "category");
		}
		set_int(L, "series", (int64_t)w->n);
		set_int(L, "max_bytes", w->max);
		lua_pushstring(L, w->max_f->t->path);
		lua_setfield(L, -2, "max_path");
		set_int(L, "max_rank", w->max_f->t->rank);
		lua_pushstring(L, w->max_s->device);
		lua_setfield(L, -2, "max_device");
		set_int(L, "min_bytes", w->min);
		set_int(L, "median_bytes", w->median);
		set_int(L, "mean_bytes", w->mean);
		if (w->imbalance != HM_NONE) {
			lua_pushnumber(L, (lua_Number)w->imbalance / 1000.0);
			lua_setfield(L, -2, "imbalance");
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	hm_ranks_free(k); /* now: the box is collected later, with nothing left to free */
	lua_remove(L, -2);
}
