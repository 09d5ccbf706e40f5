/* The row userdata: the position of one memory event; fields are computed when read. */
#include "lrow.h"
#include "lbind.h"
#include "lview.h"

#include <lauxlib.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A row's userdata: its event, and the state's rows, which tell a row from any other
 * userdata of its size (a rule file cannot write the bytes of a userdata). */
typedef struct row {
	hm_rowref r;
	const hm_rows *rows;
} row;

/* The row at argument i, or an error naming what it is instead. [-0, +0, v] */
static const row *check_row(lua_State *L, int i)
{
	const row *r = lua_touserdata(L, i);
	if (!r || lua_rawlen(L, i) != sizeof *r || r->rows != hm_lua_rows(L))
		luaL_typeerror(L, i, HM_ROW_META);
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

/* frames or free_frames: {file=, line=, name=} tables, innermost first. [-0, +1, m] */
static void push_frames(lua_State *L, const hm_rowref *r, int field)
{
	const uint32_t *ids;
	size_t n = hm_field_frames(r, field, &ids);
	const hm_trace *t = r->f->t;
	lua_createtable(L, n < INT_MAX ? (int)n : 0, 0);
	for (size_t i = 0; i < n; i++) {
		hm_frame fr = hm_snap_frame(t->snap, ids[i]);
		lua_createtable(L, 0, 3);
		lua_pushlstring(L, t->names.str[fr.file], t->names.len[fr.file]);
		lua_setfield(L, -2, "file");
		lua_pushinteger(L, (lua_Integer)fr.line);
		lua_setfield(L, -2, "line");
		lua_pushlstring(L, t->names.str[fr.name], t->names.len[fr.name]);
		lua_setfield(L, -2, "name");
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

/* A list field as a table of names, or of {name=, cat=} for stack. A list longer than the
 * C stack's 64 slices is read into a userdata, below the table until it is made: every push
 * may raise (out of --lua-mem), and then nothing malloc'd is held (issue 26). [-0, +1, m] */
static void push_list(lua_State *L, const hm_rowref *r, int field)
{
	if (field == HM_F_FRAMES || field == HM_F_FREE_FRAMES) {
		push_frames(L, r, field);
		return;
	}
	int32_t buf[64];
	size_t n = hm_field_list(r, field, buf, 64);
	int32_t *sl = buf;
	if (n > 64) {
		sl = lua_newuserdatauv(L, n * sizeof *sl, 0);
		hm_field_list(r, field, sl, n);
	}
	const hm_trace *t = r->f->t;
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
			size_t len;
			const char *str = hm_field_item(t, field, sl[i], &len);
			lua_pushlstring(L, str, len);
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	if (sl != buf)
		lua_remove(L, -2); /* the userdata */
}

/* Field ids by the address of their name. Names are short strings, which Lua interns: a
 * key equal to a name is the very string the names table (upvalue 1) keeps alive, so
 * row.bytes costs a pointer compare, not a table lookup. */
#define FSLOTS 128
typedef struct fslot {
	const char *name;
	int field;
} fslot;

static unsigned fslot_hash(const char *p)
{
	uintptr_t a = (uintptr_t)p;
	return (unsigned)(a >> 4 ^ a >> 10) & (FSLOTS - 1);
}

/* row[key]: the field id from the state's fslot[FSLOTS] (upvalue 2 keeps it). [-0, +1, e] */
static int row_index(lua_State *L)
{
	const row *r = check_row(L, 1);
	int field = HM_F_NONE;
	const char *k = lua_tolstring(L, 2, NULL); /* a number key becomes a string, never a name */
	if (k) {
		const fslot *fs = r->rows->fslots;
		for (unsigned h = fslot_hash(k); fs[h].name; h = (h + 1) & (FSLOTS - 1))
			if (fs[h].name == k) {
				field = fs[h].field;
				break;
			}
	}
	if (field == HM_F_NONE) {
		char names[HM_FIELD_NAMES_CAP];
		hm_view_field_names(names, sizeof names);
		return luaL_error(L, "row has no field '%s' (fields: %s)", luaL_tolstring(L, 2, NULL), names);
	}
	hm_value v;
	if (field == HM_F_VIEW || field == HM_F_FREE_VIEW) {
		int64_t id = hm_view_of(r->rows->view, L, &r->r, r->rows->ctx, field);
		if (id == HM_NONE)
			lua_pushnil(L);
		else
			lua_pushinteger(L, (lua_Integer)id);
		return 1;
	}
	if (hm_field_memoised(field)) {
		int64_t c = hm_field_context(&r->r, field, r->rows->ctx);
		if (c == HM_NONE)
			lua_pushnil(L);
		else
			lua_pushinteger(L, (lua_Integer)c);
		return 1;
	}
	hm_field_get(&r->r, field, r->rows->cats, &v);
	if (v.type == HM_V_LIST)
		push_list(L, &r->r, field);
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
	const hm_rowref *r = &check_row(L, 1)->r;
	const hm_mem *m = &r->f->t->mem;
	uint32_t e = r->s->ev[r->k];
	char ts[32];
	hm_fmt_us(ts, hm_mem_ts(m, e));
	lua_pushfstring(L, "hmem.row(%s %I bytes on %s at ts %s)", hm_mem_bytes(m, e) < 0 ? "free" : "alloc",
			(lua_Integer)(hm_mem_bytes(m, e) < 0 ? -hm_mem_bytes(m, e) : hm_mem_bytes(m, e)), r->s->device, ts);
	return 1;
}

/* The metatable names "hmem.row" (__name, and __metatable so that rule files cannot reach or
 * change the metamethods). No light userdata gets a metatable: cjson.null stays as
 * lua-cjson made it. */
void hm_lua_row_register(lua_State *L)
{
	luaL_newmetatable(L, HM_ROW_META);
	int mt = lua_gettop(L);
	lua_pushliteral(L, HM_ROW_META);
	lua_setfield(L, mt, "__metatable");
	lua_createtable(L, 0, HM_F_COUNT);
	fslot *fs = lua_newuserdatauv(L, FSLOTS * sizeof *fs, 0);
	memset(fs, 0, FSLOTS * sizeof *fs);
	hm_lua_rows(L)->fslots = fs;
	for (int i = 1; i <= HM_F_FREE_VIEW; i++) {
		if (i == HM_F_COUNT)
			continue;
		lua_pushstring(L, i == HM_F_VIEW ? "view" : i == HM_F_FREE_VIEW ? "free_view" : hm_field_name(i));
		unsigned h = fslot_hash(lua_tostring(L, -1));
		while (fs[h].name)
			h = (h + 1) & (FSLOTS - 1);
		fs[h] = (fslot){lua_tostring(L, -1), i};
		lua_pushboolean(L, 1);
		lua_rawset(L, -4); /* names[name] = true: keeps the string */
	}
	lua_pushcclosure(L, row_index, 2);
	lua_setfield(L, mt, "__index");
	lua_pushcfunction(L, row_newindex);
	lua_setfield(L, mt, "__newindex");
	lua_pushcfunction(L, row_tostring);
	lua_setfield(L, mt, "__tostring");
	lua_pushliteral(L, "v"); /* for the tables of rows made */
	lua_setfield(L, mt, "__mode");
	hm_rows *t = hm_lua_rows(L);
	t->mt_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	t->ctx = lua_newuserdatauv(L, sizeof *t->ctx, 0); /* the registry keeps it */
	memset(t->ctx, 0, sizeof *t->ctx);
	lua_setfield(L, LUA_REGISTRYINDEX, "hmem.ctxmemo");
	lua_pushboolean(L, 0);
	t->made_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_newtable(L);
	lua_setfield(L, LUA_REGISTRYINDEX, "hmem.rows");
}

/* The table of rows made for f's events (made on first use). [-0, +1, m] */
static void push_made(lua_State *L, hm_rows *t, const hm_file *f)
{
	if (t->last == f) {
		lua_rawgeti(L, LUA_REGISTRYINDEX, t->made_ref);
		return;
	}
	lua_getfield(L, LUA_REGISTRYINDEX, "hmem.rows");
	if (lua_rawgetp(L, -1, f) != LUA_TTABLE) {
		lua_pop(L, 1);
		size_t n = f->t->mem.n;
		lua_createtable(L, n < INT_MAX ? (int)n : 0, 0);
		lua_rawgeti(L, LUA_REGISTRYINDEX, t->mt_ref);
		lua_setmetatable(L, -2);
		lua_pushvalue(L, -1);
		lua_rawsetp(L, -3, f);
	}
	lua_replace(L, -2);
	lua_pushvalue(L, -1);
	lua_rawseti(L, LUA_REGISTRYINDEX, t->made_ref);
	t->last = f;
}

void hm_lua_rows_begin(lua_State *L, const hm_file *f, int keep)
{
	hm_rows *t = hm_lua_rows(L);
	lua_rawgeti(L, LUA_REGISTRYINDEX, t->mt_ref);
	if (keep)
		push_made(L, t, f);
}

void hm_lua_row_new(lua_State *L, const hm_file *f, const hm_series *s, uint32_t k, int mt, int made)
{
	row *r = lua_newuserdatauv(L, sizeof *r, 0);
	*r = (row){{f, s, k}, hm_lua_rows(L)};
	lua_pushvalue(L, mt);
	lua_setmetatable(L, -2);
	if (made) {
		lua_pushvalue(L, -1);
		lua_rawseti(L, made, (lua_Integer)s->ev[k] + 1);
	}
}

void hm_lua_row_push(lua_State *L, const hm_file *f, const hm_series *s, uint32_t k, const hm_strtab *cats)
{
	hm_rows *t = hm_lua_rows(L);
	if (cats)
		t->cats = cats;
	push_made(L, t, f);
	lua_Integer key = (lua_Integer)s->ev[k] + 1;
	if (lua_rawgeti(L, -1, key) != LUA_TUSERDATA) {
		lua_pop(L, 1);
		row *r = lua_newuserdatauv(L, sizeof *r, 0);
		*r = (row){{f, s, k}, t};
		lua_rawgeti(L, LUA_REGISTRYINDEX, t->mt_ref);
		lua_setmetatable(L, -2);
		lua_pushvalue(L, -1);
		lua_rawseti(L, -3, key);
	}
	lua_replace(L, -2);
}
