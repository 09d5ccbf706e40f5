/* The Lua state of a run: a sandbox per loaded chunk, packs found by name, hooks held
 * by reference, classify called once per allocation (or answered from the cache_by memo). */
#include "script.h"
#include "lbind.h"

#include <dirent.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct hm_script {
	lua_State *L;
	char *name;     /* as reported */
	char *path;     /* the file loaded (for shipped packs, its path in lua/) */
	int classify_ref, init_ref, done_ref; /* LUA_NOREF when absent */
	int cats_ref;   /* name -> category id */
	uint64_t calls, cache_hits;
	int cache_fields[16];
	int ncache;
	hm_strtab cache_keys; /* cache_by key bytes -> id */
	int32_t *cache_cat;   /* id -> category */
	size_t cache_cap;
	char *keybuf;
	size_t keycap;
	const hm_script_opts *o;
};

/* Message handler (lua.c's msghandler): any error value becomes a message with a
 * traceback. [-1, +1, m] */
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

int hm_lua_docall(lua_State *L, int nargs, int nres)
{
	int base = lua_gettop(L) - nargs;
	lua_pushcfunction(L, msghandler);
	lua_insert(L, base);
	int status = lua_pcall(L, nargs, nres, base);
	lua_remove(L, base);
	return status;
}

/* ---- the sandbox ---- */

static const char *const safe_globals[] = {
	"assert", "error", "getmetatable", "ipairs", "next", "pairs", "pcall", "print", "rawequal",
	"rawget", "rawlen", "rawset", "select", "setmetatable", "tonumber", "tostring", "type",
	"xpcall", "_VERSION", "collectgarbage", "string", "table", "math", "utf8", NULL,
};

/* Reading a global that does not exist is an error at the reader's line. [-2, +0, e] */
static int strict_index(lua_State *L)
{
	return luaL_error(L, "undefined global '%s'", luaL_tolstring(L, 2, NULL));
}

/* load(chunk [, name [, mode [, env]]]) for sandboxed code: text only, and the caller's
 * sandbox as the default environment. [-?, +?, e] */
static int safe_load(lua_State *L)
{
	int nargs = lua_gettop(L);
	lua_getglobal(L, "load");
	lua_pushvalue(L, 1);
	if (nargs >= 2)
		lua_pushvalue(L, 2);
	else
		lua_pushnil(L);
	lua_pushliteral(L, "t");
	if (nargs >= 4)
		lua_pushvalue(L, 4);
	else
		lua_pushvalue(L, lua_upvalueindex(1));
	lua_call(L, 4, 2);
	return 2;
}

static int sandbox_require(lua_State *L);

/* A fresh environment for one chunk: the allow-listed globals (all of _G with
 * --allow-io), its own require and load, and an error for any other global read.
 * [-0, +1, m] */
static void push_env(lua_State *L, const hm_script_opts *o)
{
	lua_newtable(L);
	int env = lua_gettop(L);
	if (o->allow_io) {
		lua_pushglobaltable(L);
		lua_pushnil(L);
		while (lua_next(L, -2)) {
			lua_pushvalue(L, -2);
			lua_insert(L, -2);
			lua_rawset(L, env);
		}
		lua_pop(L, 1);
	} else {
		for (int i = 0; safe_globals[i]; i++) {
			lua_getglobal(L, safe_globals[i]);
			lua_setfield(L, env, safe_globals[i]);
		}
		lua_pushvalue(L, env);
		lua_pushcclosure(L, safe_load, 1);
		lua_setfield(L, env, "load");
		lua_createtable(L, 0, 4); /* os: time only, no commands, no environment */
		const char *os_ok[] = {"time", "clock", "date", "difftime"};
		lua_getglobal(L, "os");
		for (int i = 0; i < 4; i++) {
			lua_getfield(L, -1, os_ok[i]);
			lua_setfield(L, -3, os_ok[i]);
		}
		lua_pop(L, 1);
		lua_setfield(L, env, "os");
	}
	lua_pushlightuserdata(L, (void *)o);
	lua_pushcclosure(L, sandbox_require, 1);
	lua_setfield(L, env, "require");
	lua_pushvalue(L, env);
	lua_setfield(L, env, "_G");
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, strict_index);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, env);
}

/* Load path as text with chunk name @path in a fresh sandbox. [-0, +1, e] */
static void load_chunk(lua_State *L, const hm_script_opts *o, const char *path, const char *source)
{
	int rc;
	if (source) {
		lua_pushfstring(L, "@%s", path);
		rc = luaL_loadbufferx(L, source, strlen(source), lua_tostring(L, -1), "t");
		lua_remove(L, -2);
	} else {
		rc = luaL_loadfilex(L, path, "t");
	}
	if (rc != LUA_OK)
		lua_error(L);
	push_env(L, o);
	if (!lua_setupvalue(L, -2, 1))
		lua_pop(L, 1);
}

static int file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Where require and pack names look, in order: the rule file's directory (for require),
 * -I directories, HMEM_PATH, then the modules built into hmem. Pushes the file path
 * found, or nil and the list of places tried. [-0, +1 or +2, m] */
static const hm_embedded *find_module(lua_State *L, const hm_script_opts *o, const char *name, int rule_dir)
{
	luaL_Buffer tried;
	luaL_buffinit(L, &tried);
	char rel[512];
	snprintf(rel, sizeof rel, "%s", name);
	for (char *p = rel; *p; p++)
		if (*p == '.')
			*p = '/';
	lua_newtable(L); /* directories */
	int dirs = lua_gettop(L), nd = 0;
	if (rule_dir && o->rules && strchr(o->rules, '/')) {
		lua_pushlstring(L, o->rules, (size_t)(strrchr(o->rules, '/') - o->rules));
		lua_rawseti(L, dirs, ++nd);
	} else if (rule_dir) {
		lua_pushliteral(L, ".");
		lua_rawseti(L, dirs, ++nd);
	}
	for (int i = 0; i < o->ninc; i++) {
		lua_pushstring(L, o->inc[i]);
		lua_rawseti(L, dirs, ++nd);
	}
	const char *env = getenv("HMEM_PATH");
	for (const char *p = env; p && *p;) {
		const char *q = strchr(p, ':');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		if (len) {
			lua_pushlstring(L, p, len);
			lua_rawseti(L, dirs, ++nd);
		}
		p = q ? q + 1 : p + len;
	}
	for (int i = 1; i <= nd; i++) {
		lua_rawgeti(L, dirs, i);
		const char *d = lua_tostring(L, -1);
		for (int init = 0; init < 2; init++) {
			lua_pushfstring(L, init ? "%s/%s/init.lua" : "%s/%s.lua", d, rel);
			if (file_exists(lua_tostring(L, -1))) {
				lua_replace(L, dirs);
				lua_settop(L, dirs);
				return NULL;
			}
			lua_pushfstring(L, "\n\tno file '%s'", lua_tostring(L, -1));
			lua_remove(L, -2);
			lua_insert(L, dirs); /* keep the buffer's items below the work area */
			dirs++;
		}
		lua_pop(L, 1);
	}
	for (const hm_embedded *m = hm_embedded_modules; m->name; m++)
		if (strcmp(m->name, name) == 0) {
			lua_settop(L, dirs - 1);
			lua_pushstring(L, m->path);
			return m;
		}
	lua_settop(L, dirs - 1);
	lua_concat(L, lua_gettop(L) - lua_gettop(L) + 0);
	(void)tried;
	lua_pushnil(L);
	return NULL;
}

/* require for sandboxed chunks: modules from the places of find_module run in their
 * own sandbox; cjson is the real one. [-1, +1, e] */
static int sandbox_require(lua_State *L)
{
	const hm_script_opts *o = lua_touserdata(L, lua_upvalueindex(1));
	const char *name = luaL_checkstring(L, 1);
	lua_getfield(L, LUA_REGISTRYINDEX, "hmem.loaded");
	if (lua_getfield(L, -1, name) != LUA_TNIL)
		return 1;
	lua_pop(L, 1);
	int loaded = lua_gettop(L);
	if (strcmp(name, "cjson") == 0 || strcmp(name, "cjson.safe") == 0 || o->allow_io) {
		lua_getglobal(L, "require");
		lua_pushstring(L, name);
		if (o->allow_io && lua_pcall(L, 1, 1, 0) == LUA_OK) {
			lua_pushvalue(L, -1);
			lua_setfield(L, loaded, name);
			return 1;
		}
		if (!o->allow_io) {
			lua_call(L, 1, 1);
			return 1;
		}
		lua_pop(L, 1);
	}
	int top = lua_gettop(L);
	const hm_embedded *m = find_module(L, o, name, 1);
	if (lua_isnil(L, -1)) {
		lua_settop(L, top);
		const char *places = "the rule file's directory, -I directories, HMEM_PATH and the modules built into hmem";
		return luaL_error(L, "module '%s' not found (looked in %s)", name, places);
	}
	const char *path = lua_tostring(L, -1);
	load_chunk(L, o, path, m ? m->source : NULL);
	lua_pushstring(L, name);
	lua_pushstring(L, path);
	lua_call(L, 2, 1);
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		lua_pushboolean(L, 1);
	}
	lua_pushvalue(L, -1);
	lua_setfield(L, loaded, name);
	return 1;
}

/* hmem.write(name, text): a file in --out DIR, written whole or not at all. [-2, +0, e] */
static int l_write(lua_State *L)
{
	const char *dir = lua_tostring(L, lua_upvalueindex(1));
	size_t len;
	const char *name = luaL_checkstring(L, 1);
	const char *text = luaL_checklstring(L, 2, &len);
	if (!*name || strchr(name, '/') || strcmp(name, "..") == 0 || strcmp(name, ".") == 0)
		return luaL_error(L, "hmem.write: '%s' must be a plain file name (it goes into %s)", name, dir);
	lua_pushfstring(L, "%s/%s", dir, name);
	hm_out out;
	char err[512];
	if (hm_out_open(&out, lua_tostring(L, -1), err, sizeof err) == 0) {
		fwrite(text, 1, len, out.f);
		if (hm_out_commit(&out, err, sizeof err) == 0)
			return 0;
	}
	return luaL_error(L, "hmem.write: %s", err);
}

/* ---- loading the rules ---- */

typedef struct open_ctx {
	hm_script *s;
	hm_strtab *cats;
} open_ctx;

/* A declared category list: names or {name=, color=}. [-0, +0, e] */
static void declare_categories(lua_State *L, int idx, hm_strtab *cats)
{
	if (lua_isnil(L, idx))
		return;
	luaL_argexpected(L, lua_istable(L, idx), idx, "categories: a list of names");
	for (lua_Integer i = 1; lua_rawgeti(L, idx, i) != LUA_TNIL; i++) {
		if (lua_istable(L, -1))
			lua_getfield(L, -1, "name");
		else
			lua_pushvalue(L, -1);
		if (lua_type(L, -1) != LUA_TSTRING)
			luaL_error(L, "categories[%d]: expected a name or {name=, color=}", (int)i);
		size_t n;
		const char *name = lua_tolstring(L, -1, &n);
		hm_strtab_intern(cats, name, n);
		lua_pop(L, 2);
	}
	lua_pop(L, 1);
}

static int ref_function(lua_State *L, int idx, const char *what, const char *where)
{
	int t = lua_type(L, idx);
	if (t == LUA_TNIL)
		return LUA_NOREF;
	if (t != LUA_TFUNCTION)
		luaL_error(L, "%s: %s must be a function, not a %s", where, what, lua_typename(L, t));
	lua_pushvalue(L, idx);
	return luaL_ref(L, LUA_REGISTRYINDEX);
}

/* Runs in protected mode: a failure anywhere raises, never panics. [-1, +0, e] */
static int open_protected(lua_State *L)
{
	open_ctx *c = lua_touserdata(L, 1);
	hm_script *s = c->s;
	const hm_script_opts *o = s->o;
	luaL_openlibs(L);
	hm_lua_row_register(L);
	hm_lua_series_register(L);
	lua_newtable(L);
	lua_setfield(L, LUA_REGISTRYINDEX, "hmem.loaded");

	/* The hmem module, with the host's own functions added. */
	lua_getglobal(L, "require");
	(void)lua_gettop(L);
	lua_pop(L, 1);
	push_env(L, o);
	lua_getfield(L, -1, "require");
	lua_pushliteral(L, "hmem");
	lua_call(L, 1, 1);
	int hmem = lua_gettop(L);
	if (o->out_dir) {
		lua_pushstring(L, o->out_dir);
		lua_pushcclosure(L, l_write, 1);
		lua_setfield(L, hmem, "write");
	}

	/* The rules: a file, or a pack by name. */
	const hm_embedded *m = NULL;
	if (file_exists(o->rules)) {
		s->path = hm_xstrdup(o->rules);
		s->name = hm_xstrdup(o->rules);
	} else if (strchr(o->rules, '/') || strstr(o->rules, ".lua")) {
		return luaL_error(L, "%s: no such rule file", o->rules);
	} else {
		lua_pushfstring(L, "hmem.rules.%s", o->rules);
		const char *modname = lua_tostring(L, -1);
		m = find_module(L, o, modname, 0);
		if (lua_isnil(L, -1)) {
			/* a pack on -I / HMEM_PATH may also be a plain NAME.lua */
			lua_pop(L, 1);
			m = find_module(L, o, o->rules, 0);
			if (lua_isnil(L, -1) || m)
				return luaL_error(L, "%s: no such rule file or pack (shipped packs: size, op, phase, "
						     "lifetime, pytorch; 'hmem packs' lists all)", o->rules);
		}
		s->path = hm_xstrdup(lua_tostring(L, -1));
		lua_pushfstring(L, "%s (pack)", o->rules);
		s->name = hm_xstrdup(lua_tostring(L, -1));
	}
	load_chunk(L, o, s->path, m ? m->source : NULL);
	lua_pushvalue(L, -1);
	int env_of_chunk = 0;
	lua_getupvalue(L, -1, 1); /* the chunk's sandbox, for global hooks */
	env_of_chunk = lua_gettop(L);
	lua_insert(L, -2);
	lua_pop(L, 1);
	lua_pushvalue(L, -2);
	lua_remove(L, -3);
	(void)env_of_chunk;
	lua_call(L, 0, 1);
	int ret = lua_gettop(L), env = ret - 1;
	const char *where = s->path;
	if (lua_istable(L, ret)) {
		lua_getfield(L, ret, "categories");
		declare_categories(L, lua_gettop(L), c->cats);
		lua_getfield(L, ret, "classify");
		if (!lua_isfunction(L, -1))
			return luaL_error(L, "%s: the returned pack has no classify function", where);
		s->classify_ref = ref_function(L, -1, "classify", where);
		lua_getfield(L, ret, "init");
		s->init_ref = ref_function(L, -1, "init", where);
		lua_getfield(L, ret, "done");
		s->done_ref = ref_function(L, -1, "done", where);
		lua_getfield(L, ret, "cache_by");
		if (!lua_isnil(L, -1)) {
			lua_getfield(L, hmem, "cache_by");
			lua_pushvalue(L, -2);
			lua_call(L, 1, 0);
		}
	} else {
		lua_rawgetp(L, LUA_REGISTRYINDEX, NULL);
		lua_pop(L, 1);
		if (lua_rawgetfield_compat(L, env, "classify") != LUA_TFUNCTION)
			return luaL_error(L, "%s: defines no function classify(row) (it must return a category name "
					     "for one allocation), and returns no pack table", where);
		s->classify_ref = ref_function(L, -1, "classify", where);
		lua_rawgetfield_compat(L, env, "init");
		s->init_ref = ref_function(L, -1, "init", where);
		lua_rawgetfield_compat(L, env, "done");
		s->done_ref = ref_function(L, -1, "done", where);
		lua_rawgetfield_compat(L, env, "categories");
		declare_categories(L, lua_gettop(L), c->cats);
	}

	/* cache_by: field names become ids; lists cannot be keys. */
	lua_getfield(L, hmem, "_cache_by");
	if (lua_istable(L, -1)) {
		for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TSTRING; i++) {
			size_t n;
			const char *f = lua_tolstring(L, -1, &n);
			int id = hm_field_id(f, n);
			if (id == HM_F_NONE || id == HM_F_CATEGORY)
				return luaL_error(L, "cache_by: '%s' is not a row field (fields: %s)", f, hm_field_names());
			hm_value v;
			(void)v;
			if (id == HM_F_OPS || id == HM_F_ANNOTATIONS || id == HM_F_PYTHON || id == HM_F_FREE_OPS || id == HM_F_STACK)
				return luaL_error(L, "cache_by: '%s' is a list; use a single-valued field such as op", f);
			if (s->ncache == (int)(sizeof s->cache_fields / sizeof *s->cache_fields))
				return luaL_error(L, "cache_by: at most 16 fields");
			s->cache_fields[s->ncache++] = id;
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	lua_pushvalue(L, hmem);
	lua_setfield(L, LUA_REGISTRYINDEX, "hmem.module");

	if (s->init_ref != LUA_NOREF) {
		lua_rawgeti(L, LUA_REGISTRYINDEX, s->init_ref);
		lua_call(L, 0, 0);
	}
	return 0;
}
