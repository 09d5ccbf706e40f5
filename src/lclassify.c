/* The classify loop: every allocation's row through classify(row) in one protected call
 * per file, category names to ids through a small cache of interned strings, and the
 * cache_by memo. */
#include "lclassify.h"
#include "lrow.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

/* hmem.cache_by{field, ...} inside hmem run: checked, and kept as field ids in C (the
 * list is not read again); a function entry is held by reference. Only while the rules
 * load. [-1, +0, e] */
static int l_cache_by(lua_State *L)
{
	hm_classify *s = lua_touserdata(L, lua_upvalueindex(1));
	int ids[sizeof s->cache_fields / sizeof *s->cache_fields], refs[sizeof ids / sizeof *ids], n = 0;
	if (hm_lua_decls(L)->closed)
		return luaL_error(L, "cache_by: declare it while the rule file loads, not later");
	if (!lua_istable(L, 1) || lua_rawlen(L, 1) == 0)
		return luaL_error(L, "cache_by: expected a list of row field names, e.g. {\"op\", \"bytes\"}");
	for (lua_Integer i = 1; lua_rawgeti(L, 1, i) != LUA_TNIL; i++) {
		if (n == (int)(sizeof ids / sizeof *ids))
			return luaL_error(L, "cache_by: at most 16 fields");
		if (lua_type(L, -1) == LUA_TFUNCTION) { /* a key worked out once per context */
			ids[n] = HM_F_NONE;
			refs[n++] = luaL_ref(L, LUA_REGISTRYINDEX);
			continue;
		}
		if (lua_type(L, -1) != LUA_TSTRING)
			return luaL_error(L, "cache_by: entries must be row field names (strings) or functions of the context");
		size_t len;
		const char *f = lua_tolstring(L, -1, &len);
		int id = hm_view_field(f, len);
		if (id == HM_F_NONE)
			id = hm_field_id(f, len);
		if (id == HM_F_NONE || id == HM_F_CATEGORY) {
			char names[HM_FIELD_NAMES_CAP];
			hm_view_field_names(names, sizeof names);
			return luaL_error(L, "cache_by: '%s' is not a row field (fields: %s)", f, names);
		}
		if (hm_field_is_list(id) && id != HM_F_FRAMES && id != HM_F_FREE_FRAMES) /* stacks key by id */
			return luaL_error(L, "cache_by: '%s' is a list; use a single-valued field such as op", f);
		ids[n] = id;
		refs[n++] = LUA_NOREF;
		lua_pop(L, 1);
	}
	memcpy(s->cache_fields, ids, (size_t)n * sizeof *ids);
	memcpy(s->cache_fn, refs, (size_t)n * sizeof *refs);
	s->ncache = n;
	return 0;
}

void hm_lua_push_cache_by(lua_State *L, hm_classify *c)
{
	lua_pushlightuserdata(L, c);
	lua_pushcclosure(L, l_cache_by, 1);
}

/* hmem.cache_clear(): the memo forgets every answer (a stateful rule whose state changed
 * what it would answer for combinations it has answered). [-0, +0, -] */
static int l_cache_clear(lua_State *L)
{
	hm_classify *s = lua_touserdata(L, lua_upvalueindex(1));
	hm_classify_forget(s);
	s->cache_clears++;
	return 0;
}

void hm_classify_forget(hm_classify *c)
{
	if (c->memo_n) {
		memset(c->memo, 0, c->memo_slots * sizeof *c->memo);
		c->memo_n = c->memo_keylen = 0;
	}
}

void hm_lua_push_cache_clear(lua_State *L, hm_classify *c)
{
	lua_pushlightuserdata(L, c);
	lua_pushcclosure(L, l_cache_clear, 1);
}

const char *hm_classify_view_missing(const hm_classify *c)
{
	for (int i = 0; i < c->ncache && c->view.ref <= 0; i++)
		if (c->cache_fields[i] == HM_F_VIEW || c->cache_fields[i] == HM_F_FREE_VIEW)
			return c->cache_fields[i] == HM_F_VIEW ? "view" : "free_view";
	return NULL;
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
	hm_fmt_us(ts, hm_mem_ts(&t->mem, e));
	int32_t op = f->op_of[e];
	snprintf(out, n, "while classifying the %s of %lld bytes on %s at ts %s (op %s) in %s",
		 hm_mem_bytes(&t->mem, e) < 0 ? "free" : "allocation",
		 (long long)(hm_mem_bytes(&t->mem, e) < 0 ? -hm_mem_bytes(&t->mem, e) : hm_mem_bytes(&t->mem, e)), x->device, ts,
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

/* What the cache_by key needs to make the row when a key function asks for it: the
 * row is made once, left on the stack at *row, and classify gets the same one. */
typedef struct keyrow {
	lua_State *L;
	hm_lctx *lx;
	hm_file *f;
	hm_series *x;
	uint32_t k;
	int mt, made, row;
} keyrow;

/* The memo's hash, mixed in value by value as a key is put together: read back from the key
 * bytes, the words would wait on the narrower stores that wrote them (a type byte, then a
 * value at an odd offset; perf put half of cache_slot's time on those two loads). Only where
 * keys sit in the memo depends on it, never an answer. A string value's bytes are hashed
 * from the string itself (util.c's words). */
static uint64_t mix_bytes(uint64_t h, const char *s, size_t len)
{
	uint64_t w;
	h = hm_hash_words(h, s, len, &w);
	return hm_hash_mix(h, w);
}

/* A value as key bytes (its type, then its bytes) into *buf at n, mixed into *h; returns the
 * new length. */
static inline size_t key_put(char **buf, size_t *cap, size_t n, const hm_value *v, uint64_t *h)
{
	size_t need = n + 1 + sizeof(int64_t) + sizeof(size_t) + (v->type == HM_V_STR ? v->len : 0);
	if (need > *cap)
		hm_grow(buf, cap, need, 1);
	char *b = *buf;
	b[n++] = (char)v->type;
	uint64_t type = (uint64_t)v->type * 0x9e3779b97f4a7c15ull; /* one mix a value, its type added in */
	if (v->type == HM_V_INT || v->type == HM_V_BOOL) {
		memcpy(b + n, &v->i, sizeof v->i), n += sizeof v->i;
		*h = hm_hash_mix(*h, (uint64_t)v->i + type);
	} else if (v->type == HM_V_NUM) {
		uint64_t w;
		memcpy(&w, &v->d, sizeof w);
		memcpy(b + n, &v->d, sizeof v->d), n += sizeof v->d;
		*h = hm_hash_mix(*h, w + type);
	} else if (v->type == HM_V_STR) {
		memcpy(b + n, &v->len, sizeof v->len), n += sizeof v->len;
		memcpy(b + n, v->s, v->len), n += v->len;
		*h = mix_bytes(hm_hash_mix(*h, v->len + type), v->s, v->len);
	} else {
		*h = hm_hash_mix(*h, type);
	}
	return n;
}

/* A key function's answer (at -1) as a value; anything but a scalar is an error that
 * names the function (ref). [-0, +0, v] */
static hm_value key_answer(lua_State *L, int ref)
{
	hm_value v = {HM_V_NIL, 0, 0, NULL, 0};
	switch (lua_type(L, -1)) {
	case LUA_TNIL: break;
	case LUA_TBOOLEAN: v.type = HM_V_BOOL, v.i = lua_toboolean(L, -1); break;
	case LUA_TNUMBER:
		if (lua_isinteger(L, -1))
			v.type = HM_V_INT, v.i = (int64_t)lua_tointeger(L, -1);
		else
			v.type = HM_V_NUM, v.d = (double)lua_tonumber(L, -1);
		break;
	case LUA_TSTRING: v.type = HM_V_STR, v.s = lua_tolstring(L, -1, &v.len); break;
	default: {
		lua_Debug ar;
		const char *type = luaL_typename(L, -1);
		lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
		lua_getinfo(L, ">S", &ar);
		luaL_error(L, "%s:%d: cache_by: the key function returned a %s; it must return a string, number, boolean or nil",
			   ar.short_src, ar.linedefined, type);
	}
	}
	return v;
}

/* The value id of cache_by function i for the row's context: called once per context (once
 * per view when the rules declare one), its answer kept in s->fn_vals (encoded as key
 * bytes). [-0, +0|1, e]: may leave the row. */
static uint32_t key_function(hm_classify *s, int i, const hm_rowref *r, hm_ctxmemo *memo, keyrow *kr)
{
	int64_t ctx;
	if (s->view.ref > 0) {
		hm_lctx_arm(kr->lx, "view");
		ctx = hm_view_of(&s->view, kr->L, r, memo, HM_F_VIEW);
		hm_lctx_arm(kr->lx, "classify");
	} else
		ctx = hm_field_context(r, HM_F_CONTEXT, memo);
	struct hm_fn_recent *recent = &s->fn_recent[((uint64_t)ctx ^ (uint64_t)i) % 1024];
	if (recent->fn == i + 1 && recent->ctx == ctx)
		return recent->val;
	char key[1 + sizeof ctx];
	key[0] = (char)i;
	memcpy(key + 1, &ctx, sizeof ctx);
	uint32_t id = hm_strtab_intern(&s->fn_ctx, key, sizeof key);
	if (id < s->nfn_val) {
		*recent = (struct hm_fn_recent){ctx, i + 1, s->fn_val[id]};
		return s->fn_val[id];
	}
	lua_State *L = kr->L;
	if (!kr->row) {
		hm_lua_row_new(L, kr->f, kr->x, kr->k, kr->mt, kr->made);
		kr->row = lua_gettop(L);
	}
	lua_rawgeti(L, LUA_REGISTRYINDEX, s->cache_fn[i]);
	lua_pushvalue(L, kr->row);
	hm_lctx_arm(kr->lx, "cache_by");
	lua_call(L, 1, 1);
	hm_lctx_arm(kr->lx, "classify");
	hm_value v = key_answer(L, s->cache_fn[i]);
	uint64_t h = 0; /* not needed: the answer is interned by its bytes */
	size_t n = key_put(&s->valbuf, &s->valcap, 0, &v, &h);
	lua_pop(L, 1);
	uint32_t val = hm_strtab_intern(&s->fn_vals, s->valbuf, n);
	hm_grow(&s->fn_val, &s->fn_cap, id + 1, sizeof *s->fn_val);
	s->fn_val[id] = val;
	s->nfn_val = id + 1;
	*recent = (struct hm_fn_recent){ctx, i + 1, val};
	return val;
}

static void memo_grow(hm_classify *s)
{
	size_t nslots = s->memo_slots ? s->memo_slots * 2 : 256;
	struct hm_memo_slot *slot = hm_xcalloc(nslots, sizeof *slot);
	for (size_t i = 0; i < s->memo_slots; i++)
		if (s->memo[i].len) {
			size_t j = s->memo[i].hash & (nslots - 1);
			while (slot[j].len)
				j = (j + 1) & (nslots - 1);
			slot[j] = s->memo[i];
		}
	free(s->memo);
	s->memo = slot;
	s->memo_slots = nslots;
}

/* The memo slot of a key (len > 0, hash h from key_put), added unanswered when new. The
 * slot stays valid until the next key is added or the memo is cleared. */
static uint32_t memo_find(hm_classify *s, const char *key, size_t len, uint64_t h)
{
	if ((s->memo_n + 1) * 2 > s->memo_slots)
		memo_grow(s);
	h = (h ^ len) * 0x94d049bb133111ebull;
	h ^= h >> 29;
	size_t i = h & (s->memo_slots - 1);
	for (; s->memo[i].len; i = (i + 1) & (s->memo_slots - 1))
		if (s->memo[i].hash == h && s->memo[i].len == len && memcmp(s->memo_keys + s->memo[i].off, key, len) == 0)
			return (uint32_t)i;
	hm_grow(&s->memo_keys, &s->memo_keycap, s->memo_keylen + len, 1);
	memcpy(s->memo_keys + s->memo_keylen, key, len);
	s->memo[i] = (struct hm_memo_slot){h, (uint32_t)s->memo_keylen, (uint32_t)len, -1};
	s->memo_keylen += len;
	s->memo_n++;
	return (uint32_t)i;
}

/* The cache_by key of a row: each field's type and value, as bytes (context fields
 * through the state's memo, functions as the id of their answer). Returns its memo slot. */
static uint32_t cache_slot(hm_classify *s, const hm_rowref *r, hm_ctxmemo *memo, keyrow *kr)
{
	size_t n = 0;
	uint64_t h = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < s->ncache; i++) {
		hm_value v;
		int field = s->cache_fields[i];
		if (field == HM_F_NONE) {
			v.type = HM_V_INT; /* a function's answer id: its own key bytes are unique */
			v.i = key_function(s, i, r, memo, kr);
		} else if (field == HM_F_VIEW || field == HM_F_FREE_VIEW) {
			hm_lctx_arm(kr->lx, "view");
			v.i = hm_view_of(&s->view, kr->L, r, memo, field);
			hm_lctx_arm(kr->lx, "classify");
			v.type = v.i == HM_NONE ? HM_V_NIL : HM_V_INT;
		} else if (field == HM_F_FRAMES || field == HM_F_FREE_FRAMES) {
			v.i = hm_field_stack_id(r, field); /* interned: equal stacks, equal ids */
			v.type = v.i == HM_NONE ? HM_V_NIL : HM_V_INT;
		} else if (hm_field_memoised(field)) {
			v.i = hm_field_context(r, field, memo);
			v.type = v.i == HM_NONE ? HM_V_NIL : HM_V_INT;
		} else
			hm_field_get(r, field, NULL, &v);
		n = key_put(&s->keybuf, &s->keycap, n, &v, &h);
	}
	return memo_find(s, s->keybuf, n, h);
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
 * c->si and c->k tell which row an error came from. Everything Lua allocates on behalf of
 * a row (the row itself, the cache_by key functions' and the view's calls, the category
 * name's cache entry) happens inside the row's armed call: any allocation may run a GC
 * step, and a step may run a __gc finalizer of the rule file, which only the watchdog can
 * stop (issue 24). A row answered by the memo alone is not armed, so the limit is per row,
 * never per file. [-1, +0, e] */
static int classify_protected(lua_State *L)
{
	classify_ctx *c = lua_touserdata(L, 1);
	hm_classify *s = c->s;
	hm_lctx *lx = c->x;
	hm_file *f = c->f;
	const hm_mem *m = &f->t->mem;
	hm_lctx_arm(lx, "classify"); /* the tables pushed below may allocate */
	lua_rawgeti(L, LUA_REGISTRYINDEX, s->cats_ref);
	lua_rawgeti(L, LUA_REGISTRYINDEX, c->fn_ref);
	int keep = c->keep;
	hm_lua_rows_begin(L, f, keep);
	hm_ctxmemo *memo = hm_lua_rows(L)->ctx;
	int cache = 2, fn = 3, mt = 4, made = keep ? 5 : 0;
	keyrow kr = {L, lx, f, NULL, 0, mt, made, 0};
	hm_lctx_done(lx);
	for (; c->si < f->nseries; c->si++, c->k = 0) {
		hm_series *x = &f->series[c->si];
		for (; c->k < x->n; c->k++) {
			size_t k = c->k;
			int64_t b = hm_mem_bytes(m, x->ev[k]);
			if (b == 0) {
				x->cat[k] = -1;
				continue;
			}
			if (b < 0 && x->partner[k] >= 0) {
				x->cat[k] = x->cat[x->partner[k]];
				continue;
			}
			if (x->before[k] == HM_BEFORE_WINDOW) { /* "(before window)" gives it back (window.h) */
				x->cat[k] = 0;
				continue;
			}
			uint32_t slot = 0;
			kr.x = x, kr.k = (uint32_t)k, kr.row = 0;
			hm_lctx_arm(lx, "classify");
			if (s->ncache) {
				hm_rowref ref = {f, x, (uint32_t)k};
				slot = cache_slot(s, &ref, memo, &kr);
				if (s->memo[slot].cat >= 0) {
					x->cat[k] = s->memo[slot].cat;
					s->cache_hits++;
					if (kr.row)
						lua_settop(L, kr.row - 1);
					hm_lctx_done(lx);
					continue;
				}
			}
			uint64_t clears = s->cache_clears;
			lua_pushvalue(L, fn);
			if (kr.row)
				lua_pushvalue(L, kr.row);
			else
				hm_lua_row_new(L, f, x, (uint32_t)k, mt, made);
			s->calls++;
			hm_lctx_arm(lx, "classify"); /* its own limit, after the cache_by keys' */
			lua_call(L, 1, 2);
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
			if (s->ncache && remember) {
				if (s->cache_clears != clears) { /* the memo was cleared during the call */
					hm_rowref ref = {f, x, (uint32_t)k};
					slot = cache_slot(s, &ref, memo, &kr);
				}
				s->memo[slot].cat = x->cat[k];
			}
			if (kr.row)
				lua_settop(L, kr.row - 1);
			hm_lctx_done(lx);
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
	int status = lua_pcall(L, 1, 1, top + 1); /* an error leaves the row's call armed */
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
	hm_lctx_done(x);
	return status != LUA_OK || c.bad_type != LUA_TNIL ? -1 : 0;
}

void hm_classify_free(hm_classify *c)
{
	free(c->memo);
	free(c->memo_keys);
	hm_strtab_free(&c->fn_ctx);
	hm_strtab_free(&c->fn_vals);
	free(c->fn_val);
	free(c->valbuf);
	free(c->keybuf);
	hm_view_free(&c->view);
}
