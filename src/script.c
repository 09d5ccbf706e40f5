#include "script.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hm_script {
	lua_State *L;
	char *path;
	int classify_ref; /* registry ref of the classify function */
	int cats_ref;     /* registry ref of the name -> category id cache */
	uint64_t calls;
};

/* A row is the position of one memory event; its fields are computed when read. */
typedef struct row {
	const hm_file *f;
	const hm_series *s;
	uint32_t k;
} row;

#define ROW_META "hmem.row"

enum field {
	F_TS = 1, F_TS_NS, F_BYTES, F_KIND, F_BEFORE, F_ADDR, F_DEVICE, F_DEVICE_TYPE, F_DEVICE_ID,
	F_RANK, F_FILE, F_PID, F_TID, F_EV_IDX, F_TOTAL_ALLOC, F_TOTAL_RES, F_FREE_TS, F_LIFETIME,
	F_OP, F_OPS,
};

static const char *const field_names[] = {
	"ts", "ts_ns", "bytes", "kind", "before_trace", "addr", "device", "device_type", "device_id",
	"rank", "file", "pid", "tid", "ev_idx", "total_allocated", "total_reserved", "free_ts",
	"lifetime", "op", "ops", NULL,
};

/* Message handler (lua.c's msghandler): any error value becomes a message with a traceback.
 * [-1, +1, m] */
static int msghandler(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);
	if (msg == NULL) {
		if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
			return 1;
		msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
	}
	luaL_traceback(L, L, msg, 1);
	return 1;
}

/* Every entry into Lua goes through here (lua.c's docall). [-(nargs+1), +nres, -] */
static int docall(lua_State *L, int nargs, int nres)
{
	int base = lua_gettop(L) - nargs;
	lua_pushcfunction(L, msghandler);
	lua_insert(L, base);
	int status = lua_pcall(L, nargs, nres, base);
	lua_remove(L, base);
	return status;
}

static void push_opt_int(lua_State *L, int64_t v)
{
	if (v == HM_NONE)
		lua_pushnil(L);
	else
		lua_pushinteger(L, (lua_Integer)v);
}

/* pid or tid from the thread key "pid\x1ftid": an integer when it is one. [-0, +1, -] */
static void push_id(lua_State *L, const char *s, size_t n)
{
	if (n == 0) {
		lua_pushnil(L);
		return;
	}
	int64_t v;
	if (!hm_num_i64(s, n, 0, 0, &v))
		lua_pushinteger(L, (lua_Integer)v);
	else
		lua_pushlstring(L, s, n);
}

static void push_thread_part(lua_State *L, const row *r, int part)
{
	const hm_trace *t = r->f->t;
	uint32_t th = t->mem.thread[r->s->ev[r->k]];
	const char *key = t->threads.str[th], *sep = memchr(key, 0x1f, t->threads.len[th]);
	if (part == 0)
		push_id(L, key, (size_t)(sep - key));
	else
		push_id(L, sep + 1, t->threads.len[th] - (size_t)(sep + 1 - key));
}

/* Where the event's allocation was freed: its own time for a free. */
static int64_t free_ts_of(const row *r)
{
	const hm_mem *m = &r->f->t->mem;
	uint32_t e = r->s->ev[r->k];
	if (m->bytes[e] < 0)
		return m->ts[e];
	int32_t p = r->s->partner[r->k];
	return p >= 0 ? m->ts[r->s->ev[p]] : HM_NONE;
}

/* row[key]: fields are looked up by name in the upvalue table. [-0, +1, e] */
static int row_index(lua_State *L)
{
	const row *r = luaL_checkudata(L, 1, ROW_META);
	lua_pushvalue(L, 2);
	int f = lua_rawget(L, lua_upvalueindex(1)) == LUA_TNUMBER ? (int)lua_tointeger(L, -1) : 0;
	lua_pop(L, 1);
	const hm_trace *t = r->f->t;
	const hm_mem *m = &t->mem;
	uint32_t e = r->s->ev[r->k];
	switch (f) {
	case F_TS: lua_pushnumber(L, (lua_Number)m->ts[e] / 1000.0); break;
	case F_TS_NS: lua_pushinteger(L, m->ts[e]); break;
	case F_BYTES: lua_pushinteger(L, m->bytes[e] < 0 ? -m->bytes[e] : m->bytes[e]); break;
	case F_KIND: lua_pushstring(L, m->bytes[e] < 0 ? "free" : "alloc"); break;
	case F_BEFORE: lua_pushboolean(L, r->s->before[r->k]); break;
	case F_ADDR:
		if (m->has_addr[e])
			lua_pushinteger(L, (lua_Integer)m->addr[e]);
		else
			lua_pushnil(L);
		break;
	case F_DEVICE: lua_pushstring(L, r->s->device); break;
	case F_DEVICE_TYPE: lua_pushinteger(L, r->s->dev_type); break;
	case F_DEVICE_ID: lua_pushinteger(L, r->s->dev_id); break;
	case F_RANK: push_opt_int(L, t->rank); break;
	case F_FILE: lua_pushstring(L, t->path); break;
	case F_PID: push_thread_part(L, r, 0); break;
	case F_TID: push_thread_part(L, r, 1); break;
	case F_EV_IDX: push_opt_int(L, m->ev_idx[e]); break;
	case F_TOTAL_ALLOC: push_opt_int(L, m->total_alloc[e]); break;
	case F_TOTAL_RES: push_opt_int(L, m->total_res[e]); break;
	case F_FREE_TS: {
		int64_t ft = free_ts_of(r);
		if (ft == HM_NONE)
			lua_pushnil(L);
		else
			lua_pushnumber(L, (lua_Number)ft / 1000.0);
		break;
	}
	case F_LIFETIME: {
		int32_t p = r->s->partner[r->k];
		if (p < 0)
			lua_pushnil(L);
		else
			lua_pushnumber(L, (lua_Number)(m->ts[r->s->ev[p]] - m->ts[e]) / 1000.0 * (m->bytes[e] < 0 ? -1 : 1));
		break;
	}
	case F_OP: {
		int32_t op = r->f->op_of[e];
		if (op < 0)
			lua_pushnil(L);
		else
			lua_pushlstring(L, t->names.str[t->ops.name[op]], t->names.len[t->ops.name[op]]);
		break;
	}
	case F_OPS: {
		int32_t buf[64];
		size_t n = hm_ops_of(r->f, e, buf, 64);
		int32_t *ops = n <= 64 ? buf : hm_xcalloc(n, sizeof *ops);
		if (ops != buf)
			hm_ops_of(r->f, e, ops, n);
		lua_createtable(L, (int)n, 0);
		for (size_t i = 0; i < n; i++) {
			uint32_t nm = t->ops.name[ops[i]];
			lua_pushlstring(L, t->names.str[nm], t->names.len[nm]);
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		if (ops != buf)
			free(ops);
		break;
	}
	default:
		return luaL_error(L, "row has no field '%s' (fields: ts, ts_ns, bytes, kind, before_trace, addr, device, "
				  "device_type, device_id, rank, file, pid, tid, ev_idx, total_allocated, "
				  "total_reserved, free_ts, lifetime, op, ops)", luaL_tolstring(L, 2, NULL));
	}
	return 1;
}

/* [-0, +1, e] */
static int row_newindex(lua_State *L)
{
	return luaL_error(L, "rows are read-only (tried to set '%s')", luaL_tolstring(L, 2, NULL));
}

/* [-0, +1, m] */
static int row_tostring(lua_State *L)
{
	const row *r = luaL_checkudata(L, 1, ROW_META);
	const hm_mem *m = &r->f->t->mem;
	uint32_t e = r->s->ev[r->k];
	char ts[32];
	hm_fmt_us(ts, m->ts[e]);
	lua_pushfstring(L, "hmem.row(%s %I bytes on %s at ts %s)", m->bytes[e] < 0 ? "free" : "alloc",
			(lua_Integer)(m->bytes[e] < 0 ? -m->bytes[e] : m->bytes[e]), r->s->device, ts);
	return 1;
}

/* Modules compiled into the binary, found before package.path. [-1, +2, -] */
static int embedded_searcher(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	for (const hm_embedded *m = hm_embedded_modules; m->name; m++)
		if (strcmp(m->name, name) == 0) {
			char chunk[128];
			snprintf(chunk, sizeof chunk, "=[hmem] %s", name);
			if (luaL_loadbufferx(L, m->source, strlen(m->source), chunk, "t") != LUA_OK)
				return lua_error(L);
			lua_pushstring(L, name);
			return 2;
		}
	lua_pushfstring(L, "no module '%s' built into hmem", name);
	return 1;
}

/* Lets require find modules next to the rule file and on HMEM_PATH, and the bundled
 * ones first. [-0, +0, e] */
static void setup_require(lua_State *L, const char *rules_path)
{
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "searchers");
	lua_Integer n = (lua_Integer)luaL_len(L, -1);
	for (lua_Integer i = n; i >= 2; i--) {
		lua_rawgeti(L, -1, i);
		lua_rawseti(L, -2, i + 1);
	}
	lua_pushcfunction(L, embedded_searcher);
	lua_rawseti(L, -2, 2);
	lua_pop(L, 1);

	/* package.path = <rule file's directory>/?.lua;<each HMEM_PATH entry>/?.lua;...;<default> */
	const char *slash = strrchr(rules_path, '/');
	int parts = 0;
	if (slash)
		lua_pushlstring(L, rules_path, (size_t)(slash - rules_path + 1));
	else
		lua_pushliteral(L, "./");
	lua_pushliteral(L, "?.lua;");
	parts += 2;
	const char *env = getenv("HMEM_PATH");
	for (const char *p = env; p && *p;) {
		const char *q = strchr(p, ':');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		if (len) {
			lua_pushlstring(L, p, len);
			lua_pushliteral(L, "/?.lua;");
			lua_pushlstring(L, p, len);
			lua_pushliteral(L, "/?/init.lua;");
			lua_concat(L, 4);
			parts++;
		}
		p = q ? q + 1 : p + len;
	}
	lua_getfield(L, -parts - 1, "path");
	lua_concat(L, parts + 1);
	lua_setfield(L, -2, "path");
	lua_pop(L, 1);
}

/* Runs in protected mode: a failure anywhere raises, never panics. [-1, +0, e] */
static int open_protected(lua_State *L)
{
	const char *path = lua_touserdata(L, 1);
	luaL_openlibs(L);
	setup_require(L, path);

	luaL_newmetatable(L, ROW_META);
	lua_createtable(L, 0, 24);
	for (int i = 0; field_names[i]; i++) {
		lua_pushinteger(L, i + 1);
		lua_setfield(L, -2, field_names[i]);
	}
	lua_pushcclosure(L, row_index, 1);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, row_newindex);
	lua_setfield(L, -2, "__newindex");
	lua_pushcfunction(L, row_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);

	if (luaL_loadfilex(L, path, "t") != LUA_OK)
		return lua_error(L);
	lua_call(L, 0, 0);
	return 0;
}

hm_script *hm_script_open(const char *path, char *err, size_t errsz)
{
	lua_State *L = luaL_newstate();
	if (!L) {
		snprintf(err, errsz, "cannot create a Lua state (out of memory)");
		return NULL;
	}
	lua_pushcfunction(L, open_protected);
	lua_pushlightuserdata(L, (void *)path);
	if (docall(L, 1, 0) != LUA_OK) {
		/* A traceback through no Lua file (a syntax error, a missing file) says nothing. */
		const char *msg = lua_tostring(L, -1), *tb = strstr(msg, "\nstack traceback:");
		int useful = tb && strstr(tb, ".lua:");
		snprintf(err, errsz, "%.*s", useful || !tb ? (int)strlen(msg) : (int)(tb - msg), msg);
		lua_close(L);
		return NULL;
	}
	if (lua_getglobal(L, "classify") != LUA_TFUNCTION) {
		snprintf(err, errsz, "%s: defines no function classify(row) (it must return a category name for one allocation)", path);
		lua_close(L);
		return NULL;
	}
	hm_script *s = hm_xcalloc(1, sizeof *s);
	s->L = L;
	s->path = hm_xstrdup(path);
	s->classify_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_newtable(L);
	s->cats_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	return s;
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
		 op >= 0 ? t->names.str[t->ops.name[op]] : "none", t->path);
}

/* Category id of the string on top of the stack (popped); the cache table keeps Lua's
 * interned string as the key, so repeated names cost one table lookup. [-1, +0, m] */
static int32_t category_id(lua_State *L, int cache, hm_strtab *cats)
{
	lua_pushvalue(L, -1);
	if (lua_rawget(L, cache) == LUA_TNUMBER) {
		int32_t id = (int32_t)lua_tointeger(L, -1);
		lua_pop(L, 2);
		return id;
	}
	lua_pop(L, 1);
	size_t len;
	const char *name = lua_tolstring(L, -1, &len);
	int32_t id = (int32_t)hm_strtab_intern(cats, name, len);
	lua_pushinteger(L, id);
	lua_rawset(L, cache);
	return id;
}

int hm_script_classify(hm_script *s, hm_file *f, hm_strtab *cats, char *err, size_t errsz)
{
	lua_State *L = s->L;
	const hm_mem *m = &f->t->mem;
	lua_rawgeti(L, LUA_REGISTRYINDEX, s->cats_ref);
	int cache = lua_gettop(L);
	for (size_t si = 0; si < f->nseries; si++) {
		hm_series *x = &f->series[si];
		for (size_t k = 0; k < x->n; k++) {
			int64_t b = m->bytes[x->ev[k]];
			if (b == 0) {
				x->cat[k] = -1;
				continue;
			}
			if (b < 0 && x->partner[k] >= 0) {
				x->cat[k] = x->cat[x->partner[k]];
				continue;
			}
			lua_rawgeti(L, LUA_REGISTRYINDEX, s->classify_ref);
			row *r = lua_newuserdatauv(L, sizeof *r, 0);
			r->f = f, r->s = x, r->k = (uint32_t)k;
			luaL_setmetatable(L, ROW_META);
			s->calls++;
			char where[512];
			if (docall(L, 1, 1) != LUA_OK) {
				describe(f, x, k, where, sizeof where);
				const char *msg = lua_tostring(L, -1);
				const char *tb = strstr(msg, "\nstack traceback:");
				snprintf(err, errsz, "%.*s\n  %s%s", tb ? (int)(tb - msg) : (int)strlen(msg), msg, where, tb ? tb : "");
				lua_settop(L, cache - 1);
				return -1;
			}
			int type = lua_type(L, -1);
			if (type == LUA_TNIL) {
				lua_pop(L, 1);
				lua_pushliteral(L, "unclassified");
			} else if (type != LUA_TSTRING) {
				lua_rawgeti(L, LUA_REGISTRYINDEX, s->classify_ref);
				lua_Debug ar;
				lua_getinfo(L, ">S", &ar);
				describe(f, x, k, where, sizeof where);
				snprintf(err, errsz, "%s:%d: classify returned a %s; it must return a category name (a string) or nil\n  %s",
					 s->path, ar.linedefined, lua_typename(L, type), where);
				lua_settop(L, cache - 1);
				return -1;
			}
			x->cat[k] = category_id(L, cache, cats);
		}
	}
	lua_settop(L, cache - 1);
	return 0;
}

uint64_t hm_script_calls(const hm_script *s)
{
	return s->calls;
}

void hm_script_close(hm_script *s)
{
	if (!s)
		return;
	lua_close(s->L);
	free(s->path);
	free(s);
}
