/* The classify loop: every allocation's row through classify(row) in one protected call
 * per file, category names to ids through a small cache of interned strings, and the
 * cache_by memo. */
#include "lclassify.h"
#include "lrow.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

/* hmem.cache_by{field, ...} inside hmem run: checked, and kept as field ids in C (the
 * list is not read again). Only while the rules load. [-1, +0, e] */
static int l_cache_by(lua_State *L)
{
	hm_classify *s = lua_touserdata(L, lua_upvalueindex(1));
	int ids[sizeof s->cache_fields / sizeof *s->cache_fields], n = 0;
	if (hm_lua_decls(L)->closed)
		return luaL_error(L, "cache_by: declare it while the rule file loads, not later");
	if (!lua_istable(L, 1) || lua_rawlen(L, 1) == 0)
		return luaL_error(L, "cache_by: expected a list of row field names, e.g. {\"op\", \"bytes\"}");
	for (lua_Integer i = 1; lua_rawgeti(L, 1, i) != LUA_TNIL; i++) {
		if (lua_type(L, -1) != LUA_TSTRING)
			return luaL_error(L, "cache_by: field names must be strings");
		size_t len;
		const char *f = lua_tolstring(L, -1, &len);
		int id = hm_field_id(f, len);
		if (id == HM_F_NONE || id == HM_F_CATEGORY)
			return luaL_error(L, "cache_by: '%s' is not a row field (fields: %s)", f, hm_field_names());
		if (hm_field_is_list(id))
			return luaL_error(L, "cache_by: '%s' is a list; use a single-valued field such as op", f);
		if (n == (int)(sizeof ids / sizeof *ids))
			return luaL_error(L, "cache_by: at most 16 fields");
		ids[n++] = id;
		lua_pop(L, 1);
	}
	memcpy(s->cache_fields, ids, (size_t)n * sizeof *ids);
	s->ncache = n;
	return 0;
}

void hm_lua_push_cache_by(lua_State *L, hm_classify *c)
{
	lua_pushlightuserdata(L, c);
	lua_pushcclosure(L, l_cache_by, 1);
}

void hm_classify_init(hm_classify *c, lua_State *L)
{
	lua_newtable(L);
	c->cats_ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* Which event was being classified, for error messages. */
static void describe(const hm_file *f, const hm_series *x, size_t k, char *out, size_t n)
{
	const hm_trace *t = f->t;
	uint32_t e = x->ev[k];
	char ts[32];
	hm_fmt_us(ts, t->mem.ts[e]);
	int32_t op = f->op_of[e];
	snprintf(out, n, "while classifying the %s of %lld bytes on %s at ts %s (op %s) in %s",
		 t->mem.bytes[e] < 0 ? "free" : "allocation",
		 (long long)(t->mem.bytes[e] < 0 ? -t->mem.bytes[e] : t->mem.bytes[e]), x->device, ts,
		 op >= 0 ? t->names.str[t->sl.name[op]] : "none", t->path);
}

/* Category id of the string on top of the stack (popped); the cache table keeps Lua's
 * interned string as the key, so repeated names cost one table lookup. [-1, +0, m] */
static int32_t category_id(hm_classify *s, lua_State *L, int cache, hm_strtab *cats)
{
	/* Short strings are interned, and the cache table keeps each one it has seen: while it
	 * does, its address names it (a rule's literals cost a compare, not a table lookup). */
	size_t len;
	const char *p = lua_tolstring(L, -1, &len);
	unsigned h = (unsigned)((uintptr_t)p >> 4 ^ (uintptr_t)p >> 9) & 15;
	if (s->cat_addr[h] == p) {
		lua_pop(L, 1);
		return s->cat_id[h];
	}
	int32_t id;
	lua_pushvalue(L, -1);
	if (lua_rawget(L, cache) == LUA_TNUMBER) {
		id = (int32_t)lua_tointeger(L, -1);
		lua_pop(L, 2);
	} else {
		lua_pop(L, 1);
		size_t before = cats->n;
		id = (int32_t)hm_strtab_intern(cats, p, len);
		if (cats->n != before) /* a new name, kept in C: counted against --lua-mem */
			hm_lua_charge(L, len + 1 + 8 * sizeof(void *));
		lua_pushinteger(L, id);
		lua_rawset(L, cache);
	}
	if (len <= 40) /* LUAI_MAXSHORTLEN: longer strings are not interned */
		s->cat_addr[h] = p, s->cat_id[h] = id;
	return id;
}

/* The cache_by key of a row: each field's type and value, as bytes. Returns its memo slot. */
static uint32_t cache_slot(hm_classify *s, const hm_rowref *r)
{
	size_t n = 0;
	for (int i = 0; i < s->ncache; i++) {
		hm_value v;
		hm_field_get(r, s->cache_fields[i], NULL, &v);
		size_t need = n + 1 + sizeof(int64_t) + sizeof(size_t) + (v.type == HM_V_STR ? v.len : 0);
		hm_grow(&s->keybuf, &s->keycap, need, 1);
		s->keybuf[n++] = (char)v.type;
		if (v.type == HM_V_INT || v.type == HM_V_BOOL)
			memcpy(s->keybuf + n, &v.i, sizeof v.i), n += sizeof v.i;
		else if (v.type == HM_V_NUM)
			memcpy(s->keybuf + n, &v.d, sizeof v.d), n += sizeof v.d;
		else if (v.type == HM_V_STR) {
			memcpy(s->keybuf + n, &v.len, sizeof v.len), n += sizeof v.len;
			memcpy(s->keybuf + n, v.s, v.len), n += v.len;
		}
	}
	uint32_t id = hm_strtab_intern(&s->cache_keys, s->keybuf, n);
	if (id >= s->cache_cap) {
		size_t old = s->cache_cap;
		hm_grow(&s->cache_cat, &s->cache_cap, id + 1, sizeof *s->cache_cat);
		for (size_t i = old; i < s->cache_cap; i++)
			s->cache_cat[i] = -1;
	}
	return id;
}

typedef struct classify_ctx {
	hm_classify *s;
	hm_lctx *x;
	int fn_ref, keep;
	hm_file *f;
	hm_strtab *cats;
	size_t si, k; /* the row being classified (for error messages) */
	int bad_type; /* classify returned this type (neither a string nor nil): stopped */
} classify_ctx;

/* Every row of a file in one protected call (a pcall per row would cost a setjmp each);
 * c->si and c->k tell which row an error came from. [-1, +0, e] */
static int classify_protected(lua_State *L)
{
	classify_ctx *c = lua_touserdata(L, 1);
	hm_classify *s = c->s;
	hm_lctx *lx = c->x;
	hm_file *f = c->f;
	const hm_mem *m = &f->t->mem;
	lua_rawgeti(L, LUA_REGISTRYINDEX, s->cats_ref);
	lua_rawgeti(L, LUA_REGISTRYINDEX, c->fn_ref);
	int keep = c->keep;
	hm_lua_rows_begin(L, f, keep);
	int cache = 2, fn = 3, mt = 4, made = keep ? 5 : 0;
	for (; c->si < f->nseries; c->si++, c->k = 0) {
		hm_series *x = &f->series[c->si];
		for (; c->k < x->n; c->k++) {
			size_t k = c->k;
			int64_t b = m->bytes[x->ev[k]];
			if (b == 0) {
				x->cat[k] = -1;
				continue;
			}
			if (b < 0 && x->partner[k] >= 0) {
				x->cat[k] = x->cat[x->partner[k]];
				continue;
			}
			uint32_t slot = 0;
			if (s->ncache) {
				hm_rowref ref = {f, x, (uint32_t)k};
				slot = cache_slot(s, &ref);
				if (s->cache_cat[slot] >= 0) {
					x->cat[k] = s->cache_cat[slot];
					s->cache_hits++;
					continue;
				}
			}
			lua_pushvalue(L, fn);
			hm_lua_row_new(L, f, x, (uint32_t)k, mt, made);
			s->calls++;
			hm_lctx_arm(lx, "classify");
			lua_call(L, 1, 2);
			hm_lctx_done(lx);
			/* A second result false: the answer depends on more than the cache_by fields
			 * (state, such as what came before): not remembered. */
			int remember = !(lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1));
			lua_pop(L, 1);
			int type = lua_type(L, -1);
			if (type == LUA_TNIL) {
				lua_pop(L, 1);
				lua_pushliteral(L, "unclassified");
			} else if (type != LUA_TSTRING || lua_rawlen(L, -1) == 0) {
				c->bad_type = type; /* an empty name too (issue 17) */
				return 0;
			}
			x->cat[k] = category_id(s, L, cache, c->cats);
			if (s->ncache && remember)
				s->cache_cat[slot] = x->cat[k];
		}
	}
	return 0;
}

/* msghandler for classify_protected: its own frame ends the traceback; leave it out. */
static int classify_msghandler(lua_State *L)
{
	hm_lua_msghandler(L);
	size_t n;
	const char *tb = lua_tolstring(L, -1, &n);
	static const char tail[] = "\n\t[C]: in ?";
	if (tb && n >= sizeof tail - 1 && memcmp(tb + n - (sizeof tail - 1), tail, sizeof tail - 1) == 0)
		lua_pushlstring(L, tb, n - (sizeof tail - 1));
	return 1;
}

int hm_classify_run(hm_classify *s, hm_lctx *x, int fn_ref, int keep, hm_file *f, hm_strtab *cats, const char *path,
		    char *err, size_t errsz)
{
	lua_State *L = x->L;
	classify_ctx c = {s, x, fn_ref, keep, f, cats, 0, 0, LUA_TNIL};
	int top = lua_gettop(L);
	lua_pushcfunction(L, classify_msghandler);
	lua_pushcfunction(L, classify_protected);
	lua_pushlightuserdata(L, &c);
	int status = lua_pcall(L, 1, 1, top + 1);
	hm_lctx_done(x);
	char where[512], limit[512];
	if (status != LUA_OK) {
		describe(f, &f->series[c.si], c.k, where, sizeof where);
		const char *msg = hm_lctx_limit_report(x, path, limit, sizeof limit) ? limit : lua_tostring(L, -1);
		const char *tb = strstr(msg, "\nstack traceback:");
		snprintf(err, errsz, "%.*s\n  %s%s", tb ? (int)(tb - msg) : (int)strlen(msg), msg, where, tb ? tb : "");
	} else if (c.bad_type != LUA_TNIL) {
		lua_rawgeti(L, LUA_REGISTRYINDEX, fn_ref);
		lua_Debug ar;
		lua_getinfo(L, ">S", &ar);
		describe(f, &f->series[c.si], c.k, where, sizeof where);
		int empty = c.bad_type == LUA_TSTRING;
		snprintf(err, errsz, "%s:%d: classify returned %s%s; it must return a category name (a%s string) or nil\n  %s",
			 ar.short_src, ar.linedefined, empty ? "an empty string" : "a ", empty ? "" : lua_typename(L, c.bad_type),
			 empty ? " non-empty" : "", where);
	}
	lua_settop(L, top);
	return status != LUA_OK || c.bad_type != LUA_TNIL ? -1 : 0;
}

void hm_classify_free(hm_classify *c)
{
	hm_strtab_free(&c->cache_keys);
	free(c->cache_cat);
	free(c->keybuf);
}
