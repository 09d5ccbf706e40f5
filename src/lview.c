/* A pack's view of the context: codes of names, worked out once per name, and sequences of
 * codes as paths of a tree remembered per slice. */
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

const char *hm_view_field_names(void)
{
	static char all[640];
	if (!all[0])
		snprintf(all, sizeof all, "%s, view, free_view", hm_field_names());
	return all;
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
static uint32_t code_by_id(hm_view *v, lua_State *L, const hm_trace *t, int field, int which, const char *kind,
			   int32_t slice)
{
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
	/* ProfilerStep#N markers are left out as in row.context (row.step says the step) */
	uint32_t c = len >= 13 && memcmp(s, "ProfilerStep#", 13) == 0 ? 0 : code_of(v, L, kind, s, len);
	if (nm < v->by_name_n)
		v->by_name[which][nm] = c + 1;
	return c;
}

/* The code of slice s (0: none: not an annotation, python frame or op, a ProfilerStep#N
 * marker, or left out by the view). */
static uint32_t slice_code(hm_view *v, lua_State *L, const hm_trace *t, int32_t s)
{
	static const int field[] = {[HM_SL_ANNOTATION] = HM_F_ANNOTATIONS, [HM_SL_PYTHON] = HM_F_PYTHON, [HM_SL_OP] = HM_F_OPS};
	static const char *const name[] = {[HM_SL_ANNOTATION] = "annotation", [HM_SL_PYTHON] = "python", [HM_SL_OP] = "op"};
	int kind = t->sl.kind[s];
	if (kind != HM_SL_ANNOTATION && kind != HM_SL_PYTHON && kind != HM_SL_OP)
		return 0;
	return code_by_id(v, L, t, field[kind], kind == HM_SL_ANNOTATION ? 0 : kind == HM_SL_PYTHON ? 1 : 2, name[kind], s);
}

/* The node under parent for a code (id + 1) of a kind; parent itself for no code. */
static uint32_t node_add(hm_view *v, uint32_t parent, int kind, uint32_t code)
{
	if (!code)
		return parent;
	uint32_t key[3] = {parent, (uint32_t)kind, code};
	return hm_strtab_intern(&v->nodes, (const char *)key, sizeof key) + 1;
}

/* The nodes (all kinds, ops only) of slice s and its enclosing slices still running at ts,
 * walked without the memo; *minend gets the earliest end among those with a code. */
static void nodes_at(hm_view *v, lua_State *L, const hm_file *f, int32_t s, int64_t ts, uint32_t node[2], int64_t *minend)
{
	const hm_trace *t = f->t;
	int32_t path[256];
	int n = 0;
	node[0] = node[1] = 0;
	*minend = INT64_MAX;
	for (; s >= 0; s = f->parent[s])
		if (t->sl.ts[s] + t->sl.dur[s] >= ts && slice_code(v, L, t, s)) {
			if (n == (int)(sizeof path / sizeof *path))
				luaL_error(L, "view: a context deeper than %d slices", n);
			path[n++] = s;
		}
	while (n--) {
		s = path[n];
		uint32_t c = slice_code(v, L, t, s);
		node[0] = node_add(v, node[0], t->sl.kind[s], c);
		if (t->sl.kind[s] == HM_SL_OP)
			node[1] = node_add(v, node[1], HM_SL_OP, c);
		if (t->sl.ts[s] + t->sl.dur[s] < *minend)
			*minend = t->sl.ts[s] + t->sl.dur[s];
	}
}

#define VIEW_SLOTS 4096

/* Slice s's memo entry, made from its nearest remembered ancestor (as fields.c's context
 * memo): valid for an event under s at or before the entry's minend. */
static const struct hm_view_slot *slice_nodes(hm_view *v, lua_State *L, const hm_file *f, int32_t s)
{
	const hm_trace *t = f->t;
	if (v->file != f) {
		if (!v->slot)
			v->slot = hm_xcalloc(VIEW_SLOTS, sizeof *v->slot);
		if (++v->gen == 0) {
			memset(v->slot, 0, VIEW_SLOTS * sizeof *v->slot);
			v->gen = 1;
		}
		v->file = f;
	}
	int32_t path[256];
	int n = 0;
	uint32_t node[2] = {0, 0};
	int64_t minend = INT64_MAX;
	struct hm_view_slot *e = NULL;
	for (; s >= 0; s = f->parent[s]) {
		e = &v->slot[(uint32_t)s % VIEW_SLOTS];
		if (e->gen == v->gen && e->slice == s) {
			node[0] = e->node[0], node[1] = e->node[1], minend = e->minend;
			break;
		}
		if (n == (int)(sizeof path / sizeof *path))
			luaL_error(L, "view: a context deeper than %d slices", n);
		path[n++] = s;
	}
	while (n--) {
		s = path[n];
		/* an enclosing slice that ended before s began encloses nothing under s */
		if (minend < t->sl.ts[s])
			nodes_at(v, L, f, f->parent[s], t->sl.ts[s], node, &minend);
		uint32_t c = slice_code(v, L, t, s);
		if (c) {
			node[0] = node_add(v, node[0], t->sl.kind[s], c);
			if (t->sl.kind[s] == HM_SL_OP)
				node[1] = node_add(v, node[1], HM_SL_OP, c);
			if (t->sl.ts[s] + t->sl.dur[s] < minend)
				minend = t->sl.ts[s] + t->sl.dur[s];
		}
		e = &v->slot[(uint32_t)s % VIEW_SLOTS];
		*e = (struct hm_view_slot){v->gen, s, minend, {node[0], node[1]}};
	}
	return e;
}

/* The view of the thread's code under node: one more level of the tree, remembered. */
static uint32_t with_thread(hm_view *v, lua_State *L, const hm_rowref *r, uint32_t node)
{
	hm_value t;
	hm_field_get(r, HM_F_THREAD, NULL, &t);
	if (t.type == HM_V_STR && t.s != v->thread) {
		v->thread_code = code_of(v, L, "thread", t.s, t.len);
		v->thread = t.s;
	}
	uint32_t code = t.type == HM_V_STR ? v->thread_code : 0;
	struct hm_view_recent *rc = &v->recent[(node * 0x9e3779b1u ^ code) % 256];
	if (rc->view && rc->node == node && rc->thread == code)
		return rc->view;
	/* the thread as kind 0 (no slice kind), always a node: a view is never the root */
	uint32_t view = hm_strtab_intern(&v->nodes, (const char *)(uint32_t[3]){node, 0, code}, 3 * sizeof(uint32_t)) + 1;
	*rc = (struct hm_view_recent){node, code, view};
	return view;
}

int64_t hm_view_of(hm_view *v, lua_State *L, const hm_rowref *r, int field)
{
	if (!v || v->ref <= 0)
		luaL_error(L, "row.%s: the rules declare no view; add view = function(name, kind) ... end to the pack "
			   "(see The row in the README)", field == HM_F_VIEW ? "view" : "free_view");
	uint32_t e = hm_field_event(r, field == HM_F_VIEW ? HM_F_CONTEXT : HM_F_FREE_CONTEXT);
	if (e == UINT32_MAX)
		return HM_NONE;
	const hm_file *f = r->f;
	int side = field == HM_F_VIEW ? 0 : 1;
	int32_t s = f->inner_of[e];
	uint32_t node[2] = {0, 0};
	if (s >= 0) {
		const struct hm_view_slot *slot = slice_nodes(v, L, f, s);
		int64_t minend;
		if (f->t->mem.ts[e] <= slot->minend)
			node[0] = slot->node[0], node[1] = slot->node[1];
		else /* a slice of the chain ended before the event */
			nodes_at(v, L, f, s, f->t->mem.ts[e], node, &minend);
	}
	if (side)
		return (int64_t)node[1] + 1; /* ops only, no thread: 1 is "no op" */
	return with_thread(v, L, r, node[0]);
}

void hm_view_next_trace(hm_view *v)
{
	v->trace = NULL;
	v->thread = NULL;
	v->file = NULL;
}

void hm_view_free(hm_view *v)
{
	hm_strtab_free(&v->names);
	hm_strtab_free(&v->codes);
	hm_strtab_free(&v->nodes);
	free(v->code);
	free(v->slot);
	for (int i = 0; i < 3; i++)
		free(v->by_name[i]);
	memset(v, 0, sizeof *v);
}
