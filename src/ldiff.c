/* `hmem diff`'s comparison in embedded Lua (hmem.diff). */
#include "ldiff.h"
#include "embedded.h"
#include "lbounds.h"
#include "lcjson.h"
#include "lctx.h"
#include "util.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdlib.h>
#include <string.h>

static const char *const format_names[HM_DIFF_FORMATS] = {"text", "json", "csv", "html"};

/* require in the comparison's state: only the modules it is made of, built into hmem
 * (hmem.diff, hmem.diff_html), and cjson, each loaded once; never a file. upvalue 1: the
 * loaded modules. [-1, +1, e] */
static int diff_require(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	if (lua_getfield(L, lua_upvalueindex(1), name) != LUA_TNIL)
		return 1;
	lua_pop(L, 1);
	const hm_embedded *m = hm_embedded_modules;
	while (m->name && (strncmp(name, "hmem.diff", 9) || strcmp(m->name, name)))
		m++;
	if (!m->name)
		return luaL_error(L, "module '%s' is not part of hmem diff", name);
	lua_pushfstring(L, "@%s", m->path);
	if (luaL_loadbufferx(L, m->source, strlen(m->source), lua_tostring(L, -1), "t") != LUA_OK)
		return lua_error(L);
	lua_pushstring(L, name);
	lua_call(L, 1, 1);
	if (lua_isnil(L, -1))
		lua_pushboolean(L, 1);
	lua_pushvalue(L, -1);
	lua_setfield(L, lua_upvalueindex(1), name);
	return 1;
}

/* The comparison's libraries: base (without dofile, loadfile, load), string, table, math
 * and utf8, bounded as a rule file's (lbounds.h), cjson, and diff_require. [-0, +0, e] */
static void open_diff_libs(lua_State *L)
{
	static const luaL_Reg libs[] = {{LUA_GNAME, luaopen_base}, {LUA_STRLIBNAME, luaopen_string},
					{LUA_TABLIBNAME, luaopen_table}, {LUA_MATHLIBNAME, luaopen_math},
					{LUA_UTF8LIBNAME, luaopen_utf8}, {NULL, NULL}};
	for (const luaL_Reg *l = libs; l->name; l++) {
		luaL_requiref(L, l->name, l->func, 1);
		lua_pop(L, 1);
	}
	hm_lctx *x = hm_lctx_of(L);
	hm_lua_bound_libs(L, x->mem_limit, &x->killed);
	static const char *const gone[] = {"dofile", "loadfile", "load", NULL};
	for (int i = 0; gone[i]; i++) {
		lua_pushnil(L);
		lua_setglobal(L, gone[i]);
	}
	lua_newtable(L); /* the modules loaded */
	hm_lua_push_cjson(L, 0);
	lua_setfield(L, -2, "cjson");
	lua_pushcclosure(L, diff_require, 1);
	lua_setglobal(L, "require");
}

/* A copy of the string at idx, malloc'd (NULL for a non-string). */
static char *copy_str(lua_State *L, int idx, size_t *len)
{
	size_t n;
	const char *s = lua_tolstring(L, idx, &n);
	if (!s)
		return NULL;
	char *c = hm_xcalloc(n + 1, 1);
	memcpy(c, s, n);
	if (len)
		*len = n;
	return c;
}

/* The strings of the list at idx into a malloc'd array. [-0, +0, -] */
static char **copy_list(lua_State *L, int idx, size_t *n)
{
	*n = lua_rawlen(L, idx);
	char **v = hm_xcalloc(*n + 1, sizeof *v);
	for (size_t i = 0; i < *n; i++) {
		lua_rawgeti(L, idx, (lua_Integer)i + 1);
		v[i] = copy_str(L, -1, NULL);
		lua_pop(L, 1);
	}
	return v;
}

/* The options table of diff.run. [-0, +1, m] */
static void push_opts(lua_State *L, const hm_diff_req *q)
{
	lua_newtable(L);
	lua_createtable(L, 2, 0);
	for (int i = 0; i < 2; i++) {
		lua_pushstring(L, q->name[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "names");
	lua_pushinteger(L, q->top);
	lua_setfield(L, -2, "top");
	lua_pushboolean(L, q->changed_only);
	lua_setfield(L, -2, "changed_only");
	lua_newtable(L);
	for (int f = 0; f < HM_DIFF_FORMATS; f++)
		if (q->want[f]) {
			lua_pushboolean(L, 1);
			lua_setfield(L, -2, format_names[f]);
		}
	lua_setfield(L, -2, "formats");
	lua_createtable(L, (int)q->ndeltas, 0);
	for (size_t i = 0; i < q->ndeltas; i++) {
		const hm_diff_delta *d = &q->deltas[i];
		lua_newtable(L);
		lua_pushstring(L, d->key);
		lua_setfield(L, -2, "key");
		lua_pushboolean(L, d->device);
		lua_setfield(L, -2, "device");
		if (d->is_pct)
			lua_pushnumber(L, d->pct), lua_setfield(L, -2, "pct");
		else
			lua_pushinteger(L, d->bytes), lua_setfield(L, -2, "bytes");
		lua_pushstring(L, d->from);
		lua_setfield(L, -2, "from");
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_setfield(L, -2, "deltas");
}

/* [-2, +0, e] */
static int compute_protected(lua_State *L)
{
	const hm_diff_req *q = lua_touserdata(L, 1);
	hm_diff_res *res = lua_touserdata(L, 2);
	open_diff_libs(L);
	lua_getglobal(L, "require");
	lua_pushliteral(L, "hmem.diff");
	lua_call(L, 1, 1);
	lua_getfield(L, -1, "run");
	lua_pushlstring(L, q->text[0], q->len[0]);
	lua_pushlstring(L, q->text[1], q->len[1]);
	push_opts(L, q);
	lua_call(L, 3, 3);
	int outs = lua_absindex(L, -3);
	for (int f = 0; f < HM_DIFF_FORMATS; f++) {
		lua_getfield(L, outs, format_names[f]);
		res->out[f] = copy_str(L, -1, &res->outlen[f]);
		lua_pop(L, 1);
	}
	res->breaks = copy_list(L, outs + 1, &res->nbreaks);
	res->notes = copy_list(L, outs + 2, &res->nnotes);
	return 0;
}

int hm_diff_compute(const hm_diff_req *q, hm_diff_res *res, char *err, size_t errsz)
{
	*res = (hm_diff_res){0};
	hm_lctx *c = hm_lctx_new(q->mem_limit, q->timeout_s, "hmem diff", NULL, err, errsz);
	if (!c)
		return -1;
	lua_State *L = c->L;
	lua_pushcfunction(L, compute_protected);
	lua_pushlightuserdata(L, (void *)q);
	lua_pushlightuserdata(L, res);
	hm_lctx_arm(c, "comparing the two sides");
	int status = hm_lua_docall(L, 2, 0);
	int limit = status != LUA_OK && (c->killed || c->mem_hit);
	if (limit) {
		if (c->killed)
			snprintf(err, errsz, "diff: comparing %s and %s ran longer than --timeout %g s (--timeout SEC "
				 "raises the limit)", q->name[0], q->name[1], q->timeout_s);
		else
			snprintf(err, errsz, "diff: comparing %s and %s used more than --lua-mem %zu MB of Lua memory "
				 "(--lua-mem MB raises the limit)", q->name[0], q->name[1], q->mem_limit >> 20);
	} else if (status != LUA_OK) {
		const char *msg = lua_tostring(L, -1);
		snprintf(err, errsz, "%.*s", (int)strcspn(msg ? msg : "?", "\n"), msg ? msg : "?");
	}
	hm_lctx_done(c);
	hm_lctx_free(c);
	return status == LUA_OK ? 0 : limit ? -2 : -1;
}

void hm_diff_res_free(hm_diff_res *res)
{
	for (int f = 0; f < HM_DIFF_FORMATS; f++)
		free(res->out[f]);
	for (size_t i = 0; i < res->nbreaks; i++)
		free(res->breaks[i]);
	for (size_t i = 0; i < res->nnotes; i++)
		free(res->notes[i]);
	free(res->breaks);
	free(res->notes);
	*res = (hm_diff_res){0};
}
