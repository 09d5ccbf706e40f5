/* The row userdata: the position of one memory event; fields are computed when read. */
#include "lbind.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

typedef struct row {
	hm_rowref r;
	const hm_strtab *cats;
} row;

/* The span holding p, or NULL (a binary search: a run has a series per file and device). */
static const hm_rowspan *span_of(hm_rows *t, const uint32_t *p)
{
	if (t->last < t->n && t->v[t->last].lo <= p && p < t->v[t->last].hi)
		return &t->v[t->last];
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->v[mid].hi <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->n || p < t->v[lo].lo)
		return NULL;
	t->last = lo;
	return &t->v[lo];
}

/* The row at argument i, or an error naming what it is instead. [-0, +0, v] */
static row check_row(lua_State *L, int i)
{
	hm_rows *t = hm_lua_rows(L);
	/* a full userdata's block is never inside a series: span_of tells rows from anything else */
	uintptr_t a = (uintptr_t)lua_touserdata(L, i);
	const hm_rowspan *sp = a ? span_of(t, (const uint32_t *)(a & ~(uintptr_t)1)) : NULL;
	if (!sp)
		luaL_typeerror(L, i, HM_ROW_META);
	row r = {{sp->f, sp->s, (uint32_t)((const uint32_t *)(a & ~(uintptr_t)1) - sp->s->ev)}, a & 1 ? t->cats : NULL};
	return r;
}

void hm_lua_push_value(lua_State *L, const hm_value *v)
{
	switch (v->type) {
	case HM_V_INT: lua_pushinteger(L, (lua_Integer)v->i); break;
	case HM_V_NUM: lua_pushnumber(L, (lua_Number)v->d); break;
	case HM_V_STR: lua_pushlstring(L, v->s, v->len); break;
	case HM_V_BOOL: lua_pushboolean(L, (int)v->i); break;
	default: lua_pushnil(L); break;
	}
}

/* A list field as a table of names, or of {name=, cat=} for stack. [-0, +1, m] */
static void push_list(lua_State *L, const row *r, int field)
{
	int32_t buf[64];
	size_t n = hm_field_list(&r->r, field, buf, 64);
	int32_t *sl = n <= 64 ? buf : hm_xcalloc(n, sizeof *sl);
	if (sl != buf)
		hm_field_list(&r->r, field, sl, n);
	const hm_trace *t = r->r.f->t;
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		uint32_t nm = t->sl.name[sl[i]];
		if (field == HM_F_STACK) {
			lua_createtable(L, 0, 4);
			lua_pushlstring(L, t->names.str[nm], t->names.len[nm]);
			lua_setfield(L, -2, "name");
			uint32_t c = t->sl.cat[sl[i]];
			lua_pushlstring(L, t->names.str[c], t->names.len[c]);
			lua_setfield(L, -2, "cat");
			lua_pushnumber(L, (lua_Number)t->sl.ts[sl[i]] / 1000.0);
			lua_setfield(L, -2, "ts");
			lua_pushnumber(L, (lua_Number)t->sl.dur[sl[i]] / 1000.0);
			lua_setfield(L, -2, "dur");
		} else {
			lua_pushlstring(L, t->names.str[nm], t->names.len[nm]);
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	if (sl != buf)
		free(sl);
}

/* Field ids by the address of their name. Names are short strings, which Lua interns: a
 * key equal to a name is the very string the names table (upvalue 1) keeps alive, so
 * row.bytes costs a pointer compare, not a table lookup. */
#define FSLOTS 64
typedef struct fslot {
	const char *name;
	int field;
} fslot;

static unsigned fslot_hash(const char *p)
{
	uintptr_t a = (uintptr_t)p;
	return (unsigned)(a >> 4 ^ a >> 10) & (FSLOTS - 1);
}

/* row[key]: the field id from upvalue 2 (fslot[FSLOTS]). [-0, +1, e] */
static int row_index(lua_State *L)
{
	row rw = check_row(L, 1);
	const row *r = &rw;
	int field = HM_F_NONE;
	const char *k = lua_tolstring(L, 2, NULL); /* a number key becomes a string, never a name */
	if (k) {
		const fslot *fs = lua_touserdata(L, lua_upvalueindex(2));
		for (unsigned h = fslot_hash(k); fs[h].name; h = (h + 1) & (FSLOTS - 1))
			if (fs[h].name == k) {
				field = fs[h].field;
				break;
			}
	}
	if (field == HM_F_NONE)
		return luaL_error(L, "row has no field '%s' (fields: %s)", luaL_tolstring(L, 2, NULL), hm_field_names());
	hm_value v;
	hm_field_get(&r->r, field, r->cats, &v);
	if (v.type == HM_V_LIST)
		push_list(L, r, field);
	else
		hm_lua_push_value(L, &v);
	return 1;
}

/* [-0, +0, e] */
static int row_newindex(lua_State *L)
{
	return luaL_error(L, "rows are read-only (tried to set '%s')", luaL_tolstring(L, 2, NULL));
}

/* [-0, +1, m] */
static int row_tostring(lua_State *L)
{
	row rw = check_row(L, 1);
	const row *r = &rw;
	const hm_mem *m = &r->r.f->t->mem;
	uint32_t e = r->r.s->ev[r->r.k];
	char ts[32];
	hm_fmt_us(ts, m->ts[e]);
	lua_pushfstring(L, "hmem.row(%s %I bytes on %s at ts %s)", m->bytes[e] < 0 ? "free" : "alloc",
			(lua_Integer)(m->bytes[e] < 0 ? -m->bytes[e] : m->bytes[e]), r->r.s->device, ts);
	return 1;
}

void hm_lua_row_register(lua_State *L)
{
	luaL_newmetatable(L, HM_ROW_META);
	lua_createtable(L, 0, HM_F_COUNT);
	fslot *fs = lua_newuserdatauv(L, FSLOTS * sizeof *fs, 0);
	memset(fs, 0, FSLOTS * sizeof *fs);
	for (int i = 1; i < HM_F_COUNT; i++) {
		lua_pushstring(L, hm_field_name(i));
		unsigned h = fslot_hash(lua_tostring(L, -1));
		while (fs[h].name)
			h = (h + 1) & (FSLOTS - 1);
		fs[h] = (fslot){lua_tostring(L, -1), i};
		lua_pushboolean(L, 1);
		lua_rawset(L, -4); /* names[name] = true: keeps the string */
	}
	lua_pushcclosure(L, row_index, 2);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, row_newindex);
	lua_setfield(L, -2, "__newindex");
	lua_pushcfunction(L, row_tostring);
	lua_setfield(L, -2, "__tostring");
	/* rows are the only light userdata Lua code sees: theirs is the metatable of all */
	lua_pushlightuserdata(L, NULL);
	lua_pushvalue(L, -2);
	lua_setmetatable(L, -2);
	lua_pop(L, 2);
}

void hm_lua_row_push(lua_State *L, const hm_file *f, const hm_series *s, uint32_t k, const hm_strtab *cats)
{
	hm_rows *t = hm_lua_rows(L);
	const uint32_t *p = s->ev + k;
	if (!(t->last < t->n && t->v[t->last].s == s) && !span_of(t, p)) {
		size_t i = 0; /* a series rows were not made for yet: into the table, in order */
		while (i < t->n && t->v[i].lo < s->ev)
			i++;
		hm_grow(&t->v, &t->cap, t->n + 1, sizeof *t->v);
		memmove(t->v + i + 1, t->v + i, (t->n - i) * sizeof *t->v);
		t->v[i] = (hm_rowspan){s->ev, s->ev + s->n, f, s};
		t->n++;
		t->last = i;
	}
	if (cats)
		t->cats = cats;
	lua_pushlightuserdata(L, (void *)((uintptr_t)p | (cats != NULL)));
}
