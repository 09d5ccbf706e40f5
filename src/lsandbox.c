/* The sandbox of every chunk a rule file runs, the search for modules and packs, and
 * require. */
#include "lsandbox.h"
#include "plan.h"
#include "lbounds.h"
#include "lcjson.h"
#include "lctx.h"
#include "lreport.h"
#include "lrow.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every chunk (the rule file, each module it requires, each pack) gets its own
 * environment: its own copies of the library tables and its own require with its own
 * loaded modules, so nothing one chunk does to them changes what the host or another
 * chunk sees. The shared metatables (strings, rows, series) are sealed. */

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
 * sandbox as the default environment. upvalue 1: the sandbox, 2: the real load.
 * [-?, +?, e] */
static int safe_load(lua_State *L)
{
	int nargs = lua_gettop(L);
	lua_pushvalue(L, lua_upvalueindex(2));
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

/* A shallow copy of the table at idx (a library table, never the rule's). [-0, +1, m] */
static void push_copy(lua_State *L, int idx)
{
	idx = lua_absindex(L, idx);
	lua_newtable(L);
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		lua_pushvalue(L, -2);
		lua_insert(L, -2);
		lua_rawset(L, -4);
	}
}

static int sandbox_require(lua_State *L);

/* A fresh environment for one chunk: the allow-listed globals (all of _G with
 * --allow-io), library tables copied, its own require and load, and an error for any
 * other global read. [-0, +1, m] */
static void push_env(lua_State *L, const hm_sandbox *o)
{
	lua_newtable(L);
	int env = lua_gettop(L);
	lua_pushglobaltable(L);
	int g = env + 1;
	if (o->allow_io) {
		lua_pushnil(L);
		while (lua_next(L, g)) {
			lua_pushvalue(L, -2);
			if (lua_istable(L, -2) && !lua_rawequal(L, -2, g)) {
				push_copy(L, -2);
				lua_remove(L, -3);
			} else {
				lua_insert(L, -2);
			}
			lua_rawset(L, env);
		}
	} else {
		for (int i = 0; safe_globals[i]; i++) {
			if (lua_getfield(L, g, safe_globals[i]) == LUA_TTABLE) {
				push_copy(L, -1);
				lua_remove(L, -2);
			}
			lua_setfield(L, env, safe_globals[i]);
		}
		lua_pushvalue(L, env);
		lua_getfield(L, g, "load");
		lua_pushcclosure(L, safe_load, 2);
		lua_setfield(L, env, "load");
		lua_createtable(L, 0, 4); /* os: time only, no commands, no environment */
		const char *os_ok[] = {"time", "clock", "date", "difftime"};
		lua_getfield(L, g, "os");
		for (int i = 0; i < 4; i++) {
			lua_getfield(L, -1, os_ok[i]);
			lua_setfield(L, -3, os_ok[i]);
		}
		lua_pop(L, 1);
		lua_setfield(L, env, "os");
	}
	lua_pop(L, 1); /* the real globals */
	lua_pushlightuserdata(L, (void *)o);
	lua_newtable(L); /* this chunk's loaded modules */
	lua_pushcclosure(L, sandbox_require, 2);
	lua_setfield(L, env, "require");
	lua_pushvalue(L, env);
	lua_setfield(L, env, "_G");
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, strict_index);
	lua_setfield(L, -2, "__index");
	lua_setmetatable(L, env);
}

/* Writing to a sealed view. [-3, +0, e] */
static int sealed_newindex(lua_State *L)
{
	return luaL_error(L, "the string library is shared by every rule file: it is read-only (change your own copy, string)");
}

/* A read-only view of the value at idx: a userdata (rawset cannot change it) whose reads
 * go to that value. [-0, +1, m] */
static void push_sealed_view(lua_State *L, int idx)
{
	idx = lua_absindex(L, idx);
	lua_newuserdatauv(L, 0, 0);
	lua_createtable(L, 0, 3);
	lua_pushvalue(L, idx);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, sealed_newindex);
	lua_setfield(L, -2, "__newindex");
	lua_pushboolean(L, 0);
	lua_setfield(L, -2, "__metatable");
	lua_setmetatable(L, -2);
}

/* Every chunk shares the metatable of strings: getmetatable gives a read-only
 * view ({__index = the string library}, read-only), never the metatable itself (rows and
 * series hide theirs with __metatable where they are registered).
 * [-0, +0, m] */
static void seal_metatables(lua_State *L)
{
	lua_pushliteral(L, "");
	lua_getmetatable(L, -1);
	lua_getglobal(L, "string");
	push_sealed_view(L, -1);
	lua_createtable(L, 0, 1);
	lua_pushvalue(L, -2);
	lua_setfield(L, -2, "__index");
	push_sealed_view(L, -1);
	lua_setfield(L, -5, "__metatable");
	lua_pop(L, 5);
}

/* --allow-io gives Lua's own require for other modules: not from the working directory,
 * which may be a folder of downloaded traces. Drops the relative templates of
 * package.path or package.cpath. [-0, +0, m] */
static void drop_relative(lua_State *L, const char *field)
{
	lua_getglobal(L, "package");
	lua_getfield(L, -1, field);
	const char *p = lua_tostring(L, -1);
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	int first = 1;
	while (p && *p) {
		const char *q = strchr(p, ';');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		if (len && *p == '/') {
			if (!first)
				luaL_addchar(&b, ';');
			luaL_addlstring(&b, p, len);
			first = 0;
		}
		p += len + (q != NULL);
	}
	luaL_pushresult(&b);
	lua_setfield(L, -3, field);
	lua_pop(L, 2);
}

/* The standard libraries and hmem's metatables, for a state that will run rule files.
 * [-0, +0, e] */
void hm_sandbox_open_libs(lua_State *L, const hm_sandbox *o)
{
	hm_lctx *x = hm_lctx_of(L);
	luaL_openlibs(L);
	hm_lua_bound_libs(L, x->mem_limit, &x->killed);
	hm_lua_row_register(L);
	hm_lua_series_register(L);
	seal_metatables(L);
	if (o->allow_io) {
		drop_relative(L, "path");
		drop_relative(L, "cpath");
	}
}

/* What was loaded goes into the digest that partials compare (README "Many machines"):
 * the text of the rule file and of every module, never their paths. */
static void digest_add(const hm_sandbox *o, const char *path, const char *source)
{
	if (!o->digest)
		return;
	if (source) {
		*o->digest = hm_fnv(*o->digest, source, strlen(source));
	} else {
		FILE *f = fopen(path, "rb");
		char buf[16384];
		size_t n;
		while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
			*o->digest = hm_fnv(*o->digest, buf, n);
		if (f)
			fclose(f);
	}
	*o->digest = hm_fnv(*o->digest, "", 1);
}

/* Load path as text with chunk name @path in a fresh sandbox. [-0, +1, e] */
void hm_sandbox_load(lua_State *L, const hm_sandbox *o, const char *path, const char *source)
{
	int rc;
	digest_add(o, path, source);
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

int hm_sandbox_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The i-th directory searched for packs and modules: -I directories, then the entries
 * of HMEM_PATH (colon-separated, empty ones skipped). Returns 0 past the last. */
int hm_sandbox_search_dir(const hm_sandbox *o, int i, char *dir, size_t cap)
{
	if (i < o->ninc) {
		snprintf(dir, cap, "%s", o->inc[i]);
		return 1;
	}
	int k = i - o->ninc;
	for (const char *p = getenv("HMEM_PATH"); p && *p;) {
		const char *q = strchr(p, ':');
		size_t len = q ? (size_t)(q - p) : strlen(p);
		if (len && k-- == 0) {
			snprintf(dir, cap, "%.*s", (int)len, p);
			return 1;
		}
		p = q ? q + 1 : p + len;
	}
	return 0;
}

/* hmem, hmem.* and cjson are always hmem's own: a file of that name next to the rule
 * file, in the working directory, on -I or HMEM_PATH is never loaded in their place. */
int hm_sandbox_reserved(const char *name)
{
	return !strcmp(name, "hmem") || !strncmp(name, "hmem.", 5) || !strcmp(name, "cjson") || !strcmp(name, "cjson.safe");
}

/* Where require and pack names look, in order: rule_dir (for require: the directory of the
 * rule file or pack file loaded, none for a shipped pack, never the working directory as
 * such),
 * -I directories, HMEM_PATH, then the modules built into hmem; a reserved name only
 * among the built-in modules. Pushes the path of the file found (for a built-in module,
 * its path in lua/ and the module is returned), or nil. [-0, +1, m] */
const hm_embedded *hm_sandbox_find(lua_State *L, const hm_sandbox *o, const char *name, const char *rule_dir)
{
	char rel[512], path[5000], dir[4096];
	snprintf(rel, sizeof rel, "%s", name);
	for (char *p = rel; *p; p++)
		if (*p == '.')
			*p = '/';
	for (int i = rule_dir ? -1 : 0; !hm_sandbox_reserved(name); i++) {
		if (i == -1) {
			snprintf(dir, sizeof dir, "%s", rule_dir);
		} else if (!hm_sandbox_search_dir(o, i, dir, sizeof dir)) {
			break;
		}
		for (int init = 0; init < 2; init++) {
			snprintf(path, sizeof path, init ? "%s/%s/init.lua" : "%s/%s.lua", dir, rel);
			if (hm_sandbox_is_file(path)) {
				lua_pushstring(L, path);
				return NULL;
			}
		}
	}
	for (const hm_embedded *m = hm_embedded_modules; m->name; m++)
		if (strcmp(m->name, name) == 0) {
			lua_pushstring(L, m->path);
			return m;
		}
	lua_pushnil(L);
	return NULL;
}

static int l_write(lua_State *L);
static int l_budget(lua_State *L);
static int l_fail(lua_State *L);
static int l_note(lua_State *L);

/* hmem.args: a fresh table of this instance, from --set key=value (strings). [-0, +1, m] */
static void push_args(lua_State *L, const hm_sandbox *o)
{
	lua_createtable(L, 0, o->nset);
	for (int i = 0; i < o->nset; i++) {
		const char *eq = strchr(o->set[i], '=');
		lua_pushlstring(L, o->set[i], eq ? (size_t)(eq - o->set[i]) : strlen(o->set[i]));
		lua_pushstring(L, eq ? eq + 1 : "");
		lua_rawset(L, -3);
	}
}

/* The host's functions in a fresh instance of the hmem module (at -1). [-0, +0, m] */
static void add_host_functions(lua_State *L, const hm_sandbox *o)
{
	if (!lua_istable(L, -1))
		return;
	lua_pushcfunction(L, hm_lua_aggregate_declare);
	lua_setfield(L, -2, "aggregate");
	hm_lua_push_cache_by(L, o->cls);
	lua_setfield(L, -2, "cache_by");
	hm_lua_push_cache_clear(L, o->cls);
	lua_setfield(L, -2, "cache_clear");
	if (o->out_dir) {
		lua_pushlightuserdata(L, (void *)o);
		lua_pushcclosure(L, l_write, 1);
		lua_setfield(L, -2, "write");
	}
	lua_pushnil(L);
	lua_setfield(L, -2, "_aggregations");
	lua_pushlightuserdata(L, (void *)o);
	lua_pushcclosure(L, l_budget, 1);
	lua_setfield(L, -2, "budget");
	lua_pushlightuserdata(L, (void *)o);
	lua_pushcclosure(L, l_fail, 1);
	lua_setfield(L, -2, "fail");
	lua_pushlightuserdata(L, (void *)o);
	lua_pushcclosure(L, l_note, 1);
	lua_setfield(L, -2, "note");
	push_args(L, o);
	lua_setfield(L, -2, "args");
	lua_pushnil(L);
	lua_setfield(L, -2, "_budgets");
	lua_pushstring(L, HM_VERSION); /* the binary's, defined once in the Makefile (issue 17) */
	lua_setfield(L, -2, "version");
}

/* require for sandboxed chunks: cjson is lua-cjson's C library (a fresh, capped instance,
 * lcjson.c); other modules come from the places of find_module and run in their own
 * sandbox, once per requiring chunk (upvalue 2 holds what it loaded). With --allow-io,
 * names found nowhere there go to Lua's require. [-1, +1, e] */
static int sandbox_require(lua_State *L)
{
	const hm_sandbox *o = lua_touserdata(L, lua_upvalueindex(1));
	const char *name = luaL_checkstring(L, 1);
	int loaded = lua_upvalueindex(2);
	if (lua_getfield(L, loaded, name) != LUA_TNIL)
		return 1;
	lua_pop(L, 1);
	if (strcmp(name, "cjson") == 0 || strcmp(name, "cjson.safe") == 0) {
		hm_lua_push_cjson(L, name[5] != 0);
	} else {
		const hm_embedded *m = hm_sandbox_find(L, o, name, o->rule_dir);
		if (lua_isnil(L, -1) && o->allow_io && !hm_sandbox_reserved(name)) {
			lua_getglobal(L, "require");
			lua_pushstring(L, name);
			lua_call(L, 1, 1);
		} else if (lua_isnil(L, -1)) {
			const char *places = "the rule file's directory, -I directories, HMEM_PATH and the modules built into hmem";
			return luaL_error(L, "module '%s' not found (looked in %s)", name, places);
		} else {
			const char *path = lua_tostring(L, -1);
			hm_sandbox_load(L, o, path, m ? m->source : NULL);
			lua_pushstring(L, name);
			lua_pushstring(L, path);
			lua_call(L, 2, 1);
			if (m && strcmp(name, "hmem") == 0)
				add_host_functions(L, o);
		}
	}
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		lua_pushboolean(L, 1);
	}
	lua_pushvalue(L, -1);
	lua_setfield(L, loaded, name);
	return 1;
}

/* hmem.write(name, text): a file in --out DIR, written whole or not at all (issue 24).
 * The directory is opened once, at the first write (a link given as --out itself is
 * followed: the user named it); every file is then made relative to that descriptor
 * (hm_out_write_at): a link planted in the directory, at the name or anywhere, is never
 * followed. A name is one plain component: no '/', no NUL byte, not "." or "..".
 * [-2, +0, e] */
static int l_write(lua_State *L)
{
	hm_sandbox *o = lua_touserdata(L, lua_upvalueindex(1));
	size_t len, nlen;
	const char *name = luaL_checklstring(L, 1, &nlen);
	const char *text = luaL_checklstring(L, 2, &len);
	if (strlen(name) != nlen) /* the name C would see is cut at the NUL: refused, not cut */
		return luaL_error(L, "hmem.write: '%s\\0...' holds a NUL byte: a file name cannot", name);
	if (!*name || strchr(name, '/') || strcmp(name, "..") == 0 || strcmp(name, ".") == 0)
		return luaL_error(L, "hmem.write: '%s' must be a plain file name (it goes into %s)", name, o->out_dir);
	char err[512];
	if (!o->out_fd) {
		int fd = open(o->out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return luaL_error(L, "hmem.write: --out %s: %s", o->out_dir, strerror(errno));
		o->out_fd = fd + 1;
	}
	if (hm_out_write_at(o->out_fd - 1, o->out_dir, name, text, len, err, sizeof err) == 0)
		return 0;
	return luaL_error(L, "hmem.write: %s", err);
}

/* A field of hmem.budget's table: a string without NUL bytes, or nil. [-0, +0, e] */
static const char *budget_str(lua_State *L, const char *key)
{
	int t = lua_getfield(L, 1, key);
	if (t != LUA_TNIL && t != LUA_TSTRING)
		luaL_error(L, "hmem.budget: %s must be a string (a %s), not a %s", key,
			   key[0] == 'd' ? "device such as \"cuda:*\"" : "category name", lua_typename(L, t));
	size_t n = 0;
	const char *v = lua_tolstring(L, -1, &n);
	if (v && strlen(v) != n)
		luaL_error(L, "hmem.budget: %s holds a NUL byte", key);
	lua_pop(L, 1); /* the table keeps the string alive */
	return v;
}

/* hmem.budget{device=, category=, max=}: a limit checked after the run, like
 * --fail-above (budget.h): max in bytes (a number, or a size such as "12GiB"). Checked in
 * full here; kept in C with its place in the rule file. [-1, +0, e] */
static int l_budget(lua_State *L)
{
	const hm_sandbox *o = lua_touserdata(L, lua_upvalueindex(1));
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_pushnil(L);
	while (lua_next(L, 1)) {
		const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
		if (strcmp(k, "device") && strcmp(k, "category") && strcmp(k, "max"))
			return luaL_error(L, "hmem.budget: unknown key '%s' (keys: device, category, max)",
					  luaL_tolstring(L, -2, NULL));
		lua_pop(L, 1);
	}
	const char *device = budget_str(L, "device"), *category = budget_str(L, "category");
	int64_t max = -1;
	lua_getfield(L, 1, "max");
	if (lua_type(L, -1) == LUA_TSTRING) {
		if (hm_size_parse(lua_tostring(L, -1), &max) != 0)
			max = -1;
	} else if (lua_type(L, -1) == LUA_TNUMBER) {
		lua_Number v = lua_tonumber(L, -1);
		max = v >= 0 && v <= 4611686018427387904.0 ? (int64_t)v : -1; /* at most 2^62 */
	}
	if (max < 0)
		return luaL_error(L, "hmem.budget: max must be bytes, a number from 0 to 2^62 or a size such as \"12GiB\"");
	luaL_where(L, 1);
	size_t n;
	const char *where = lua_tolstring(L, -1, &n);
	char from[600];
	snprintf(from, sizeof from, "hmem.budget at %.*s", n > 2 ? (int)n - 2 : (int)n, where); /* "f.lua:3: " */
	if (o->verdict) {
		hm_lua_charge(L, sizeof(hm_budget) + strlen(from) + (device ? strlen(device) : 0) +
					 (category ? strlen(category) : 0) + 3);
		hm_budget_add(o->verdict, device, category, max, from);
	}
	return 0;
}

static const char fail_sentinel = 0;

int hm_sandbox_is_fail(lua_State *L, int idx)
{
	return lua_touserdata(L, idx) == &fail_sentinel;
}

/* hmem.fail(message) in done: the run fails (exit 6) once its outputs are written, with
 * message and no traceback. Stops done by raising a value only the host recognises; the
 * failure is recorded first, so a pcall around it cannot undo it. [-1, +0, e] */
static int l_fail(lua_State *L)
{
	const hm_sandbox *o = lua_touserdata(L, lua_upvalueindex(1));
	size_t n;
	const char *msg = luaL_checklstring(L, 1, &n);
	if (!o->in_done)
		return luaL_error(L, "hmem.fail works in done(report) (classify and init cannot fail the run)");
	if (strlen(msg) != n)
		return luaL_error(L, "hmem.fail: the message holds a NUL byte");
	if (o->verdict) {
		hm_lua_charge(L, n + 1 + sizeof(char *));
		hm_budget_fail(o->verdict, msg);
	}
	lua_pushlightuserdata(L, (void *)&fail_sentinel);
	return lua_error(L);
}

/* hmem.note(text): a line for the user on standard error ("hmem: note: text"), never on
 * standard output where an output may be going; -q silences it. Terminal escapes in text
 * are shown, not obeyed. */
static int l_note(lua_State *L)
{
	const hm_sandbox *o = lua_touserdata(L, lua_upvalueindex(1));
	size_t n;
	const char *msg = luaL_checklstring(L, 1, &n);
	if (!o->quiet)
		hm_eprintf("hmem: note: %.*s\n", (int)n, msg);
	return 0;
}
