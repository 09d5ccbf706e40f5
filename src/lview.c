/* A pack's view of the context: codes of names, worked out once per name, and sequences of
 * codes named once per context. */
#include "lview.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hm_view_field(const char *name, size_t len)
{
	if (len == 4 && memcmp(name, "view", 4) == 0)
		return HM_F_VIEW;
	if (len == 9 && memcmp(name, "free_view", 9) == 0)
		return HM_F_FREE_VIEW;
	return HM_F_NONE;
}

size_t hm_view_field_names(char *buf, size_t cap)
{
	size_t n = hm_field_names(buf, cap);
	return n + (size_t)snprintf(n < cap ? buf + n : NULL, n < cap ? cap - n : 0, ", view, free_view");
}

void hm_view_set(hm_view *v, lua_State *L, int idx)
{
	if (v->ref > 0)
		luaL_unref(L, LUA_REGISTRYINDEX, v->ref);
	lua_pushvalue(L, idx);
	v->ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

/* The code id + 1 of a name of a kind ("thread", "annotation", "python", "op"), 0 when
 * the view leaves it out; the function is called the first time only. [-0, +0, e] */
static uint32_t code_of(hm_view *v, lua_State *L, const char *kind, const char *s, size_t len)
{
	char stack[256];
	char *key = len < sizeof stack ? stack : hm_xcalloc(len + 1, 1);
	key[0] = kind[0];
	memcpy(key + 1, s, len);
	uint32_t id = hm_strtab_intern(&v->names, key, len + 1);
	if (key != stack)
		free(key);
	if (id < v->ncode && v->code[id] != UINT32_MAX)
		return v->code[id];
	/* not asked yet (or the asking raised, and a rule's pcall went on): slots up to id
	 * exist, unasked ones UINT32_MAX */
	hm_grow(&v->code, &v->code_cap, id + 1, sizeof *v->code);
	for (; v->ncode <= id; v->ncode++)
		v->code[v->ncode] = UINT32_MAX;
	lua_rawgeti(L, LUA_REGISTRYINDEX, v->ref);
	lua_pushlstring(L, s, len);
	lua_pushstring(L, kind);
	lua_call(L, 2, 1);
	uint32_t code = 0;
	if (lua_type(L, -1) == LUA_TSTRING) {
		size_t n;
		const char *c = lua_tolstring(L, -1, &n);
		code = hm_strtab_intern(&v->codes, c, n) + 1;
	} else if (!lua_isnil(L, -1) && !(lua_isboolean(L, -1) && !lua_toboolean(L, -1))) {
		lua_Debug ar;
		const char *type = luaL_typename(L, -1);
		lua_rawgeti(L, LUA_REGISTRYINDEX, v->ref);
		lua_getinfo(L, ">S", &ar);
		lua_pushlstring(L, s, len);
		luaL_error(L, "%s:%d: view: returned a %s for the %s '%s'; return a string (the name's code) or nil (left out)",
			   ar.short_src, ar.linedefined, type, kind, lua_tostring(L, -1));
	}
	lua_pop(L, 1);
	v->code[id] = code;
	return code;
}

/* code_of through the trace's name ids (names are interned per trace), so that a name
 * already met costs an array read, not a hash of its bytes. */
static uint32_t code_by_id(hm_view *v, lua_State *L, const hm_rowref *r, int field, int which, const char *kind,
			   int32_t slice)
{
	const hm_trace *t = r->f->t;
	if (v->trace != t) {
		for (int i = 0; i < 3; i++) {
			free(v->by_name[i]);
			v->by_name[i] = hm_xcalloc(t->names.n + 1, sizeof *v->by_name[i]);
		}
		v->by_name_n = t->names.n;
		v->trace = t;
	}
	uint32_t nm = t->sl.name[slice];
	if (nm < v->by_name_n && v->by_name[which][nm])
		return v->by_name[which][nm] - 1;
	size_t len;
	const char *s = hm_field_item(t, field, slice, &len);
	uint32_t c = code_of(v, L, kind, s, len);
	if (nm < v->by_name_n)
		v->by_name[which][nm] = c + 1;
	return c;
}

/* The codes of the names of slices sl[0, k) of one kind (a list field's), then a
 * separator (0), appended at n. */
static size_t add_codes(hm_view *v, lua_State *L, const hm_rowref *r, const int32_t *sl, size_t k, int kind, size_t n)
{
	static const int field[] = {[HM_SL_ANNOTATION] = HM_F_ANNOTATIONS, [HM_SL_PYTHON] = HM_F_PYTHON, [HM_SL_OP] = HM_F_OPS};
	static const char *const name[] = {[HM_SL_ANNOTATION] = "annotation", [HM_SL_PYTHON] = "python", [HM_SL_OP] = "op"};
	int which = kind == HM_SL_ANNOTATION ? 0 : kind == HM_SL_PYTHON ? 1 : 2;
	const hm_trace *t = r->f->t;
	hm_grow(&v->seq, &v->seq_cap, n + k + 1, sizeof *v->seq);
	for (size_t i = 0; i < k; i++) {
		uint32_t nm = t->sl.name[sl[i]];
		if (t->sl.kind[sl[i]] != kind ||
		    (t->names.len[nm] >= 13 && memcmp(t->names.str[nm], "ProfilerStep#", 13) == 0))
			continue; /* markers as in row.context: row.step and same_step say the step */
		uint32_t c = code_by_id(v, L, r, field[kind], which, name[kind], sl[i]);
		if (c)
			v->seq[n++] = c;
	}
	v->seq[n++] = 0;
	return n;
}

/* The view of a context not met before: the codes of its names, kind by kind (the
 * enclosing slices walked once). The view function may raise: slices past the C stack's
 * 128 are read into a userdata, so that nothing malloc'd is held then (issue 26). [-0, +0, e] */
static uint32_t view_new(hm_view *v, lua_State *L, const hm_rowref *r, int field)
{
	int32_t buf[128];
	int list = field == HM_F_VIEW ? HM_F_STACK : HM_F_FREE_OPS;
	size_t k = hm_field_list(r, list, buf, 128);
	int32_t *sl = buf;
	if (k > 128) {
		sl = lua_newuserdatauv(L, k * sizeof *sl, 0);
		hm_field_list(r, list, sl, k);
	}
	size_t n = 0;
	if (field == HM_F_VIEW) {
		hm_value t;
		hm_field_get(r, HM_F_THREAD, NULL, &t);
		hm_grow(&v->seq, &v->seq_cap, 2, sizeof *v->seq);
		if (t.type == HM_V_STR) {
			if (t.s != v->thread) {
				v->thread_code = code_of(v, L, "thread", t.s, t.len);
				v->thread = t.s;
			}
			uint32_t c = v->thread_code;
			if (c)
				v->seq[n++] = c;
		}
		v->seq[n++] = 0;
		n = add_codes(v, L, r, sl, k, HM_SL_ANNOTATION, n);
		n = add_codes(v, L, r, sl, k, HM_SL_PYTHON, n);
	}
	n = add_codes(v, L, r, sl, k, HM_SL_OP, n);
	if (sl != buf)
		lua_pop(L, 1); /* the userdata */
	return hm_strtab_intern(&v->seqs, (const char *)v->seq, n * sizeof *v->seq) + 1;
}

int64_t hm_view_of(hm_view *v, lua_State *L, const hm_rowref *r, hm_ctxmemo *memo, int field)
{
	if (!v || v->ref <= 0)
		luaL_error(L, "row.%s: the rules declare no view; add view = function(name, kind) ... end to the pack "
			   "(see The row in the README), or build a pack that wraps another with hmem.extend(inner, {...}), "
			   "which keeps its view", field == HM_F_VIEW ? "view" : "free_view");
	int64_t ctx = hm_field_context(r, field == HM_F_VIEW ? HM_F_CONTEXT : HM_F_FREE_CONTEXT, memo);
	if (ctx == HM_NONE)
		return HM_NONE;
	uint32_t side = field == HM_F_VIEW ? 'a' : 'f';
	struct hm_view_recent *recent = &v->recent[((uint64_t)ctx * 0x9e3779b97f4a7c15ull + side) >> 54];
	if (recent->view && recent->ctx == ctx && recent->side == side)
		return recent->view;
	char key[1 + sizeof ctx];
	key[0] = (char)side;
	memcpy(key + 1, &ctx, sizeof ctx);
	uint32_t id = hm_strtab_intern(&v->ctxs, key, sizeof key);
	if (id < v->nctx && v->ctx_view[id]) {
		*recent = (struct hm_view_recent){ctx, side, v->ctx_view[id]};
		return v->ctx_view[id];
	}
	hm_grow(&v->ctx_view, &v->ctx_cap, id + 1, sizeof *v->ctx_view);
	for (; v->nctx <= id; v->nctx++)
		v->ctx_view[v->nctx] = 0; /* 0: not worked out (views are from 1) */
	uint32_t view = view_new(v, L, r, field);
	*recent = (struct hm_view_recent){ctx, side, view};
	v->ctx_view[id] = view;
	return view;
}

void hm_view_next_trace(hm_view *v)
{
	v->trace = NULL;
	v->thread = NULL;
}

void hm_view_free(hm_view *v)
{
	hm_strtab_free(&v->names);
	hm_strtab_free(&v->codes);
	hm_strtab_free(&v->ctxs);
	hm_strtab_free(&v->seqs);
	free(v->code);
	free(v->ctx_view);
	free(v->seq);
	for (int i = 0; i < 3; i++)
		free(v->by_name[i]);
	memset(v, 0, sizeof *v);
}
