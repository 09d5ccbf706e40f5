/* The Lua state of a run: a sandbox per loaded chunk, packs found by name, hooks held
 * by reference, classify called once per allocation (or answered from the cache_by memo). */
#include "script.h"
#include "lbind.h"
#include "lbounds.h"
#include "watchdog.h"

#include <dirent.h>
#include <lauxlib.h>
#include <lualib.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

struct hm_script {
	lua_State *L;
	hm_rows rows; /* the series rows point into (lbind.h) */
	char *name;     /* as reported */
	char *path;     /* the file loaded (for shipped packs, its path in lua/) */
	int classify_ref, init_ref, done_ref; /* LUA_NOREF when absent */
	int cats_ref;   /* name -> category id */
	const char *cat_addr[16]; /* recent category names (interned strings cats_ref keeps) */
	int32_t cat_id[16];
	uint64_t calls, cache_hits;
	int cache_fields[16];
	int ncache;
	hm_strtab cache_keys; /* cache_by key bytes -> id */
	int32_t *cache_cat;   /* id -> category */
	size_t cache_cap;
	char *keybuf;
	size_t keycap;
	const hm_script_opts *o;
	int pack;        /* loaded by pack name */
	/* limits: a runaway or greedy rule file is stopped, whatever its own pcall does */
	size_t mem_used, mem_limit;
	int mem_hit;     /* an allocation was refused (the limit then allows headroom to report) */
	hm_watchdog *wd; /* --timeout (watchdog.h), NULL for none */
	hm_watch_call *wcall; /* the call it watches */
	volatile sig_atomic_t killed;  /* timed out: every instruction raises until C has control */
	volatile sig_atomic_t closing; /* in lua_close: no hook to set (the state is going away) */
	char kill_where[256];
	char *pack_name; /* the pack table's name field */
	char (*colors)[8]; /* category id -> declared "#rrggbb", "" if none */
	size_t ncolors;
	hm_decls decls;  /* hmem.aggregate declarations, copied when made (lbind.h) */
	char *rule_dir;  /* where require looks first: the loaded file's directory (NULL: none) */
	void *pool;      /* freed blocks of POOL_BLOCK bytes, linked through their first word */
	size_t npool;
};

/* The directory of a rule file or pack file, for require ("." for a bare file name). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d = hm_xstrdup(slash ? path : ".");
	if (slash)
		d[slash == path ? 1 : slash - path] = 0;
	return d;
}

/* Rows (userdata of 64 bytes with Lua's header) and tables are made and collected by the
 * hundred thousand: blocks of 49 to 64 bytes are all POOL_BLOCK bytes long, and freed ones
 * are kept for the next (malloc and free were a sixth of the instructions of a classify
 * call that reads one field). */
#define POOL_BLOCK 64
#define POOLED(n) ((n) > 48 && (n) <= POOL_BLOCK)
#define POOL_MAX (1u << 16)

/* Lua's allocator with a count: past the limit, allocations fail (Lua raises "not enough
 * memory"); the first refusal leaves 16 MB of headroom so the error can be reported. */
static void *limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	hm_script *s = ud;
	size_t old = ptr ? osize : 0;
	if (nsize == 0) {
		if (POOLED(old) && s->npool < POOL_MAX) {
			*(void **)ptr = s->pool;
			s->pool = ptr, s->npool++;
		} else {
			free(ptr);
		}
		s->mem_used -= old;
		return NULL;
	}
	if (s->mem_limit && nsize > old && s->mem_used + (nsize - old) > s->mem_limit + (s->mem_hit ? 16u << 20 : 0)) {
		s->mem_hit = 1;
		return NULL;
	}
	void *q;
	if (!ptr && POOLED(nsize) && s->pool) {
		q = s->pool;
		s->pool = *(void **)q, s->npool--;
	} else {
		q = ptr ? realloc(ptr, POOLED(nsize) ? POOL_BLOCK : nsize) : malloc(POOLED(nsize) ? POOL_BLOCK : nsize);
	}
	if (q)
		s->mem_used = s->mem_used - old + nsize;
	return q;
}

/* ---- the timeout (watchdog.c watches the calls) ---- */

/* Raises at every instruction, so a pcall in the rule file cannot swallow it for long. */
static void time_hook(lua_State *L, lua_Debug *ar)
{
	hm_script *s = *(hm_script **)lua_getextraspace(L);
	if (!s->kill_where[0] && lua_getinfo(L, "Sl", ar))
		snprintf(s->kill_where, sizeof s->kill_where, "%s:%d", ar->short_src, ar->currentline);
	luaL_error(L, "stopped: ran longer than the --timeout of %g s", s->o->timeout_s);
}

/* The watchdog's first expiry, in a signal handler on the thread running Lua
 * (lua_sethook may be called there). */
static void stop_lua(void *ud)
{
	hm_script *s = ud;
	if (s->closing)
		return;
	s->killed = 1;
	lua_sethook(s->L, time_hook, LUA_MASKCOUNT, 1);
}

/* Before each call into the rules, and after it. */
static void limits_arm(hm_script *s, const char *what)
{
	hm_watchdog_arm(s->wcall, what);
}

static void limits_done(hm_script *s)
{
	hm_watchdog_done(s->wcall);
}

/* After a failed call: a message for the limit that stopped it, or NULL. */
static const char *limits_report(hm_script *s, char *buf, size_t n)
{
	if (s->killed) {
		snprintf(buf, n, "%s: stopped at %s: a call into the rule file ran longer than %g s (--timeout SEC "
			 "raises the limit)", s->path ? s->path : s->o->rules, s->kill_where[0] ? s->kill_where : "?", s->o->timeout_s);
		return buf;
	}
	if (s->mem_hit) {
		snprintf(buf, n, "%s: the rule file used more than %zu MB of Lua memory (--lua-mem MB raises the limit)",
			 s->path ? s->path : s->o->rules, s->mem_limit >> 20);
		return buf;
	}
	return NULL;
}

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

/* ---- the sandbox ----
 * Every chunk (the rule file, each module it requires, each pack) gets its own
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
static void push_env(lua_State *L, const hm_script_opts *o)
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
static void open_libs(lua_State *L, hm_script *s)
{
	const hm_script_opts *o = s->o;
	luaL_openlibs(L);
	hm_lua_bound_libs(L, s->mem_limit, &s->killed);
	hm_lua_row_register(L);
	hm_lua_series_register(L);
	seal_metatables(L);
	if (o->allow_io) {
		drop_relative(L, "path");
		drop_relative(L, "cpath");
	}
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

/* The i-th directory searched for packs and modules: -I directories, then the entries
 * of HMEM_PATH (colon-separated, empty ones skipped). Returns 0 past the last. */
static int search_dir(const hm_script_opts *o, int i, char *dir, size_t cap)
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
static int reserved(const char *name)
{
	return !strcmp(name, "hmem") || !strncmp(name, "hmem.", 5) || !strcmp(name, "cjson") || !strcmp(name, "cjson.safe");
}

/* Where require and pack names look, in order: rule_dir (for require: the directory of the
 * rule file or pack file loaded, none for a shipped pack, never the working directory as
 * such),
 * -I directories, HMEM_PATH, then the modules built into hmem; a reserved name only
 * among the built-in modules. Pushes the path of the file found (for a built-in module,
 * its path in lua/ and the module is returned), or nil. [-0, +1, m] */
static const hm_embedded *find_module(lua_State *L, const hm_script_opts *o, const char *name, const char *rule_dir)
{
	char rel[512], path[5000], dir[4096];
	snprintf(rel, sizeof rel, "%s", name);
	for (char *p = rel; *p; p++)
		if (*p == '.')
			*p = '/';
	for (int i = rule_dir ? -1 : 0; !reserved(name); i++) {
		if (i == -1) {
			snprintf(dir, sizeof dir, "%s", rule_dir);
		} else if (!search_dir(o, i, dir, sizeof dir)) {
			break;
		}
		for (int init = 0; init < 2; init++) {
			snprintf(path, sizeof path, init ? "%s/%s/init.lua" : "%s/%s.lua", dir, rel);
			if (file_exists(path)) {
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
static int l_cache_by(lua_State *L);

/* The host's functions in a fresh instance of the hmem module (at -1). [-0, +0, m] */
static void add_host_functions(lua_State *L, const hm_script_opts *o)
{
	if (!lua_istable(L, -1))
		return;
	lua_pushcfunction(L, hm_lua_aggregate_declare);
	lua_setfield(L, -2, "aggregate");
	lua_pushcfunction(L, l_cache_by);
	lua_setfield(L, -2, "cache_by");
	if (o->out_dir) {
		lua_pushstring(L, o->out_dir);
		lua_pushcclosure(L, l_write, 1);
		lua_setfield(L, -2, "write");
	}
	lua_pushnil(L);
	lua_setfield(L, -2, "_aggregations");
}

/* require for sandboxed chunks: cjson is lua-cjson's C library (a fresh, capped instance,
 * lcjson.c); other modules come from the places of find_module and run in their own
 * sandbox, once per requiring chunk (upvalue 2 holds what it loaded). With --allow-io,
 * names found nowhere there go to Lua's require. [-1, +1, e] */
static int sandbox_require(lua_State *L)
{
	const hm_script_opts *o = lua_touserdata(L, lua_upvalueindex(1));
	const char *name = luaL_checkstring(L, 1);
	int loaded = lua_upvalueindex(2);
	if (lua_getfield(L, loaded, name) != LUA_TNIL)
		return 1;
	lua_pop(L, 1);
	if (strcmp(name, "cjson") == 0 || strcmp(name, "cjson.safe") == 0) {
		hm_lua_push_cjson(L, name[5] != 0);
	} else {
		const hm_embedded *m = find_module(L, o, name, (*(hm_script **)lua_getextraspace(L))->rule_dir);
		if (lua_isnil(L, -1) && o->allow_io && !reserved(name)) {
			lua_getglobal(L, "require");
			lua_pushstring(L, name);
			lua_call(L, 1, 1);
		} else if (lua_isnil(L, -1)) {
			const char *places = "the rule file's directory, -I directories, HMEM_PATH and the modules built into hmem";
			return luaL_error(L, "module '%s' not found (looked in %s)", name, places);
		} else {
			const char *path = lua_tostring(L, -1);
			load_chunk(L, o, path, m ? m->source : NULL);
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

/* hmem.cache_by{field, ...} inside hmem run: checked, and kept as field ids in C (the
 * list is not read again). Only while the rules load. [-1, +0, e] */
static int l_cache_by(lua_State *L)
{
	hm_script *s = *(hm_script **)lua_getextraspace(L);
	int ids[sizeof s->cache_fields / sizeof *s->cache_fields], n = 0;
	if (s->decls.closed)
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
		if (id == HM_F_OPS || id == HM_F_ANNOTATIONS || id == HM_F_PYTHON || id == HM_F_FREE_OPS || id == HM_F_STACK)
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

/* ---- loading the rules ---- */

typedef struct open_ctx {
	hm_script *s;
	hm_strtab *cats;
} open_ctx;

/* A declared category's colour: "#rrggbb" (as hmem.testing checks), kept for --html.
 * [-0, +0, e] */
static void declare_color(lua_State *L, hm_script *s, lua_Integer i, uint32_t id)
{
	lua_getfield(L, -2, "color");
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		return;
	}
	size_t n = 0;
	const char *c = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &n) : NULL;
	int ok = c && n == 7 && c[0] == '#';
	for (size_t k = 1; ok && k < 7; k++)
		ok = strchr("0123456789abcdefABCDEF", c[k]) != NULL;
	if (!ok)
		luaL_error(L, "categories[%d]: color must be \"#rrggbb\"", (int)i);
	if (id >= s->ncolors) {
		size_t cap = s->ncolors;
		hm_grow(&s->colors, &cap, (size_t)id + 1, sizeof *s->colors);
		memset(s->colors + s->ncolors, 0, (cap - s->ncolors) * sizeof *s->colors);
		s->ncolors = cap;
	}
	memcpy(s->colors[id], c, 8);
	lua_pop(L, 1);
}

/* A declared category list: names or {name=, color=}. [-0, +0, e] */
static void declare_categories(lua_State *L, int idx, hm_script *s, hm_strtab *cats)
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
		uint32_t id = hm_strtab_intern(cats, name, n);
		if (lua_istable(L, -2))
			declare_color(L, s, i, id);
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
	open_libs(L, s);

	/* The rules: a file, or a pack by name. */
	const hm_embedded *m = NULL;
	if (file_exists(o->rules)) {
		lua_pushstring(L, o->rules);
	} else if (strchr(o->rules, '/') || strstr(o->rules, ".lua")) {
		return luaL_error(L, "%s: no such rule file", o->rules);
	} else {
		lua_pushfstring(L, "hmem.rules.%s", o->rules);
		m = find_module(L, o, lua_tostring(L, -1), NULL);
		if (lua_isnil(L, -1)) {
			lua_pop(L, 2);
			m = find_module(L, o, o->rules, NULL); /* a plain NAME.lua on -I / HMEM_PATH */
			if (lua_isnil(L, -1) || m)
				return luaL_error(L, "%s: no such rule file or pack (shipped packs: size, op, phase, lifetime, "
						     "pytorch; 'hmem packs' lists all)", o->rules);
		}
		s->pack = 1;
	}
	s->path = hm_xstrdup(lua_tostring(L, -1));
	s->name = hm_xstrdup(s->pack ? o->rules : s->path);
	s->rule_dir = m ? NULL : dir_of(s->path);
	load_chunk(L, o, s->path, m ? m->source : NULL);
	lua_getupvalue(L, -1, 1);
	int env = lua_gettop(L);
	lua_pushvalue(L, env - 1);
	lua_call(L, 0, 1);
	int ret = lua_gettop(L);
	const char *where = s->path;
	int src = ret;
	if (!lua_istable(L, ret)) {
		src = env; /* hooks are globals of the rule file */
		lua_pushliteral(L, "classify");
		if (lua_rawget(L, env) != LUA_TFUNCTION)
			return luaL_error(L, "%s: defines no function classify(row) (it must return a category name for one "
					     "allocation), and returns no pack table", where);
		lua_pop(L, 1);
	}
	const char *hooks[] = {"classify", "init", "done"};
	int *refs[] = {&s->classify_ref, &s->init_ref, &s->done_ref};
	for (int i = 0; i < 3; i++) {
		lua_pushstring(L, hooks[i]);
		lua_rawget(L, src);
		if (i == 0 && !lua_isfunction(L, -1))
			return luaL_error(L, "%s: the returned pack has no classify function", where);
		*refs[i] = ref_function(L, -1, hooks[i], where);
		lua_pop(L, 1);
	}
	lua_pushliteral(L, "categories");
	lua_rawget(L, src);
	declare_categories(L, lua_gettop(L), s, c->cats);
	lua_pop(L, 1);
	lua_pushliteral(L, "cache_by");
	if (lua_rawget(L, src) != LUA_TNIL) {
		lua_pushcfunction(L, l_cache_by);
		lua_insert(L, -2);
		lua_call(L, 1, 0);
	} else {
		lua_pop(L, 1);
	}
	if (src == ret) {
		lua_getfield(L, ret, "name");
		if (lua_isstring(L, -1)) {
			free(s->pack_name);
			s->pack_name = hm_xstrdup(lua_tostring(L, -1));
		}
		lua_pop(L, 1);
	}

	if (s->init_ref != LUA_NOREF) {
		lua_rawgeti(L, LUA_REGISTRYINDEX, s->init_ref);
		lua_call(L, 0, 0);
	}
	return 0;
}

/* A traceback through no Lua file (a syntax error, a missing file) says nothing. */
static void error_text(lua_State *L, char *err, size_t errsz)
{
	const char *msg = lua_tostring(L, -1), *tb = strstr(msg, "\nstack traceback:");
	int useful = tb && strstr(tb, ".lua:");
	snprintf(err, errsz, "%.*s", useful || !tb ? (int)strlen(msg) : (int)(tb - msg), msg);
}

/* A Lua state under the limits of o (memory counted, the watchdog started): what runs
 * rule files, for hmem run and hmem packs alike. NULL with err if it cannot be made. */
static hm_script *state_new(const hm_script_opts *o, char *err, size_t errsz)
{
	hm_script *s = hm_xcalloc(1, sizeof *s);
	s->o = o;
	s->mem_limit = o->mem_limit;
	lua_State *L = lua_newstate(limited_alloc, s);
	if (!L) {
		snprintf(err, errsz, "cannot create a Lua state (out of memory)");
		free(s);
		return NULL;
	}
	s->L = L;
	*(hm_script **)lua_getextraspace(L) = s;
	if (o->timeout_s > 0)
		s->wd = hm_watchdog_start(o->timeout_s, o->rules, stop_lua, s);
	s->wcall = hm_watchdog_call(s->wd);
	s->classify_ref = s->init_ref = s->done_ref = LUA_NOREF;
	return s;
}

hm_script *hm_script_open(const hm_script_opts *o, hm_strtab *cats, char *err, size_t errsz)
{
	hm_script *s = state_new(o, err, errsz);
	if (!s)
		return NULL;
	lua_State *L = s->L;
	open_ctx c = {s, cats};
	lua_pushcfunction(L, open_protected);
	lua_pushlightuserdata(L, &c);
	limits_arm(s, "loading the rule file");
	int status = hm_lua_docall(L, 1, 0);
	limits_done(s);
	if (status != LUA_OK) {
		if (!limits_report(s, err, errsz))
			error_text(L, err, errsz);
		hm_script_close(s);
		return NULL;
	}
	s->decls.closed = 1; /* hmem.aggregate and cache_by declare while the rules load */
	lua_newtable(L);
	s->cats_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	return s;
}

const char *hm_script_name(const hm_script *s)
{
	return s->name;
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
static int32_t category_id(hm_script *s, lua_State *L, int cache, hm_strtab *cats)
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
static uint32_t cache_slot(hm_script *s, const hm_rowref *r)
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
	hm_script *s;
	hm_file *f;
	hm_strtab *cats;
	size_t si, k; /* the row being classified (for error messages) */
	int bad_type; /* classify returned this type (neither a string nor nil): stopped */
} classify_ctx;

/* Whether anything after classify pushes rows: done (the report's rows) or an
 * aggregation's function. If not, no event's row is ever pushed twice. */
static int rows_seen_later(const hm_script *s)
{
	int later = s->done_ref != LUA_NOREF;
	for (size_t i = 0; i < s->decls.n && !later; i++) {
		const hm_aggdecl *d = &s->decls.v[i];
		later = d->where_ref != LUA_NOREF;
		for (int j = 0; j < d->nby; j++)
			later |= d->by_ref[j] != LUA_NOREF;
	}
	return later;
}

/* Every row of a file in one protected call (a pcall per row would cost a setjmp each);
 * c->si and c->k tell which row an error came from. [-1, +0, e] */
static int classify_protected(lua_State *L)
{
	classify_ctx *c = lua_touserdata(L, 1);
	hm_script *s = c->s;
	hm_file *f = c->f;
	const hm_mem *m = &f->t->mem;
	lua_rawgeti(L, LUA_REGISTRYINDEX, s->cats_ref);
	lua_rawgeti(L, LUA_REGISTRYINDEX, s->classify_ref);
	int keep = rows_seen_later(s);
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
			limits_arm(s, "classify");
			lua_call(L, 1, 1);
			limits_done(s);
			int type = lua_type(L, -1);
			if (type == LUA_TNIL) {
				lua_pop(L, 1);
				lua_pushliteral(L, "unclassified");
			} else if (type != LUA_TSTRING) {
				c->bad_type = type;
				return 0;
			}
			x->cat[k] = category_id(s, L, cache, c->cats);
			if (s->ncache)
				s->cache_cat[slot] = x->cat[k];
		}
	}
	return 0;
}

/* msghandler for classify_protected: its own frame ends the traceback; leave it out. */
static int classify_msghandler(lua_State *L)
{
	msghandler(L);
	size_t n;
	const char *tb = lua_tolstring(L, -1, &n);
	static const char tail[] = "\n\t[C]: in ?";
	if (tb && n >= sizeof tail - 1 && memcmp(tb + n - (sizeof tail - 1), tail, sizeof tail - 1) == 0)
		lua_pushlstring(L, tb, n - (sizeof tail - 1));
	return 1;
}

int hm_script_classify(hm_script *s, hm_file *f, hm_strtab *cats, char *err, size_t errsz)
{
	lua_State *L = s->L;
	classify_ctx c = {s, f, cats, 0, 0, LUA_TNIL};
	int top = lua_gettop(L);
	lua_pushcfunction(L, classify_msghandler);
	lua_pushcfunction(L, classify_protected);
	lua_pushlightuserdata(L, &c);
	int status = lua_pcall(L, 1, 1, top + 1);
	limits_done(s);
	char where[512], limit[512];
	if (status != LUA_OK) {
		describe(f, &f->series[c.si], c.k, where, sizeof where);
		const char *msg = limits_report(s, limit, sizeof limit) ? limit : lua_tostring(L, -1);
		const char *tb = strstr(msg, "\nstack traceback:");
		snprintf(err, errsz, "%.*s\n  %s%s", tb ? (int)(tb - msg) : (int)strlen(msg), msg, where, tb ? tb : "");
	} else if (c.bad_type != LUA_TNIL) {
		lua_rawgeti(L, LUA_REGISTRYINDEX, s->classify_ref);
		lua_Debug ar;
		lua_getinfo(L, ">S", &ar);
		describe(f, &f->series[c.si], c.k, where, sizeof where);
		snprintf(err, errsz, "%s:%d: classify returned a %s; it must return a category name (a string) or nil\n  %s",
			 ar.short_src, ar.linedefined, lua_typename(L, c.bad_type), where);
	}
	lua_settop(L, top);
	return status != LUA_OK || c.bad_type != LUA_TNIL ? -1 : 0;
}

/* lua_close runs the finalizers the rule file set (__gc), so it is a call into the rule
 * file too: under the watchdog. Only its second expiry can end it (hooks do not run in
 * finalizers). */
static void close_lua(hm_script *s)
{
	if (!s->L)
		return;
	s->closing = 1;
	limits_arm(s, "closing its Lua state (running its __gc finalizers)");
	lua_close(s->L);
	limits_done(s);
	s->L = NULL;
	while (s->pool) {
		void *next = *(void **)s->pool;
		free(s->pool);
		s->pool = next;
	}
	s->npool = 0;
}

typedef struct finish_ctx {
	hm_script *s;
	hm_report *rep;
} finish_ctx;

/* [-1, +0, e] */
static int finish_protected(lua_State *L)
{
	finish_ctx *c = lua_touserdata(L, 1);
	hm_lua_aggregate_all(L, c->rep);
	if (c->s->done_ref != LUA_NOREF) {
		lua_rawgeti(L, LUA_REGISTRYINDEX, c->s->done_ref);
		hm_lua_report_push(L, c->rep);
		lua_call(L, 1, 0);
	}
	return 0;
}

int hm_script_finish(hm_script *s, hm_report *rep, char *err, size_t errsz)
{
	finish_ctx c = {s, rep};
	rep->colors = (const char(*)[8])s->colors;
	rep->ncolors = s->ncolors;
	lua_pushcfunction(s->L, finish_protected);
	lua_pushlightuserdata(s->L, &c);
	limits_arm(s, "done");
	int status = hm_lua_docall(s->L, 1, 0);
	limits_done(s);
	if (status != LUA_OK) {
		if (!limits_report(s, err, errsz))
			error_text(s->L, err, errsz);
		lua_pop(s->L, 1);
		return -1;
	}
	close_lua(s);
	return 0;
}

/* The description of the rule file at path (arg 1, a built-in module's source at 2), or
 * nil if it is not a rule file (a module it requires, say). Raises if it fails to load.
 * [-2, +1, e] */
static int describe_pack(lua_State *L)
{
	hm_script *s = *(hm_script **)lua_getextraspace(L);
	const hm_script_opts *o = s->o;
	const char *path = luaL_checkstring(L, 1);
	const char *source = lua_touserdata(L, 2);
	open_libs(L, s);
	load_chunk(L, o, path, source);
	lua_getupvalue(L, -1, 1);
	int env = lua_gettop(L);
	lua_pushvalue(L, env - 1);
	lua_call(L, 0, 1);
	if (lua_istable(L, -1)) {
		lua_pushliteral(L, "classify");
		lua_rawget(L, -2);
		lua_pushliteral(L, "description");
		lua_rawget(L, -3);
		if (!lua_isfunction(L, -2))
			lua_pushnil(L);
		else if (lua_type(L, -1) != LUA_TSTRING)
			lua_pushliteral(L, "(no description)");
		return 1;
	}
	lua_pushliteral(L, "classify");
	if (lua_rawget(L, env) == LUA_TFUNCTION)
		lua_pushliteral(L, "(a rule file with global hooks)");
	else
		lua_pushnil(L);
	return 1;
}

/* One pack loaded as hmem run would (its own state, the sandbox, --timeout and
 * --lua-mem), then printed with its description or the first line of its error; a file
 * that is not a rule file is left out. */
static void list_pack(const hm_script_opts *o, FILE *out, const char *name, const char *path, const char *source)
{
	char err[1024] = "", desc[1024] = "";
	hm_script *s = state_new(o, err, sizeof err);
	int listed = 1;
	if (s) {
		lua_State *L = s->L;
		s->path = hm_xstrdup(path);
		s->rule_dir = source ? NULL : dir_of(path);
		lua_pushcfunction(L, describe_pack);
		lua_pushstring(L, path);
		lua_pushlightuserdata(L, (void *)source);
		limits_arm(s, "loading the pack");
		int status = hm_lua_docall(L, 2, 1);
		limits_done(s);
		if (status != LUA_OK) {
			if (!limits_report(s, err, sizeof err))
				error_text(L, err, sizeof err);
		} else if (lua_isnil(L, -1)) {
			listed = 0;
		} else {
			snprintf(desc, sizeof desc, "%s", lua_tostring(L, -1));
		}
		hm_script_close(s);
	}
	if (!listed)
		return;
	if (err[0]) {
		size_t n = strlen(path);
		const char *e = !strncmp(err, path, n) && !strncmp(err + n, ": ", 2) ? err + n + 2 : err; /* a limit */
		snprintf(desc, sizeof desc, "(fails to load: %.*s)", (int)strcspn(e, "\n"), e);
	}
	/* A pack's description and file name are terminal text (hm_esc): never control bytes. */
	char *ename = hm_esc(name, strlen(name), 0, NULL), *edesc = hm_esc(desc, strlen(desc), 0, NULL);
	char *epath = hm_esc(path, strlen(path), 0, NULL);
	fprintf(out, "  %-12s %s\n  %-12s (%s)\n", ename, edesc, "", source ? "shipped with hmem" : epath);
	free(ename), free(edesc), free(epath);
}

static int shipped(const char *name)
{
	for (const hm_embedded *m = hm_embedded_modules; m->name; m++)
		if (!strncmp(m->name, "hmem.rules.", 11) && !strcmp(m->name + 11, name))
			return 1;
	return 0;
}

/* Lists each pack name once, as hmem run would find it: NAME.lua on -I and HMEM_PATH
 * (the first of a name), then the shipped packs, whose names always mean them. */
int hm_script_list_packs(const hm_script_opts *o, FILE *out)
{
	fprintf(out, "rule packs (use a name in place of a rule file: hmem run NAME PATH...):\n");
	char dir[4096], (*seen)[256] = NULL;
	size_t nseen = 0, cap = 0;
	for (int i = 0; search_dir(o, i, dir, sizeof dir); i++) {
		struct dirent **names;
		int n = scandir(dir, &names, NULL, alphasort);
		for (int j = 0; j < n; j++) {
			const char *f = names[j]->d_name;
			size_t len = strlen(f);
			char name[256] = "";
			if (len > 4 && len - 4 < sizeof name && !strcmp(f + len - 4, ".lua") && f[0] != '.')
				memcpy(name, f, len - 4);
			int dup = !name[0] || shipped(name) || reserved(name);
			for (size_t k = 0; k < nseen && !dup; k++)
				dup = !strcmp(seen[k], name);
			if (!dup) {
				char path[5000];
				snprintf(path, sizeof path, "%s/%s", dir, f);
				hm_grow(&seen, &cap, nseen + 1, sizeof *seen);
				memcpy(seen[nseen++], name, sizeof name);
				list_pack(o, out, name, path, NULL);
			}
			free(names[j]);
		}
		if (n >= 0)
			free(names);
	}
	free(seen);
	for (const hm_embedded *m = hm_embedded_modules; m->name; m++)
		if (!strncmp(m->name, "hmem.rules.", 11))
			list_pack(o, out, m->name + 11, m->path, m->source);
	return HM_EXIT_OK;
}

uint64_t hm_script_calls(const hm_script *s)
{
	return s->calls;
}

uint64_t hm_script_cache_hits(const hm_script *s)
{
	return s->cache_hits;
}

hm_rows *hm_lua_rows(lua_State *L)
{
	return &(*(hm_script **)lua_getextraspace(L))->rows;
}

hm_decls *hm_lua_decls(lua_State *L)
{
	return &(*(hm_script **)lua_getextraspace(L))->decls;
}

void hm_lua_charge(lua_State *L, size_t bytes)
{
	hm_script *s = *(hm_script **)lua_getextraspace(L);
	if (s->mem_limit && s->mem_used + bytes > s->mem_limit + (s->mem_hit ? 16u << 20 : 0)) {
		s->mem_hit = 1;
		luaL_error(L, "not enough memory (what the rule file made hmem keep in C counts against --lua-mem)");
	}
	s->mem_used += bytes;
}

size_t hm_lua_mem_left(lua_State *L)
{
	hm_script *s = *(hm_script **)lua_getextraspace(L);
	return !s->mem_limit ? SIZE_MAX : s->mem_used < s->mem_limit ? s->mem_limit - s->mem_used : 0;
}

void hm_lua_uncharge(lua_State *L, size_t bytes)
{
	(*(hm_script **)lua_getextraspace(L))->mem_used -= bytes;
}

void hm_script_close(hm_script *s)
{
	if (!s)
		return;
	close_lua(s);
	hm_watchdog_stop(s->wd);
	free(s->path);
	free(s->name);
	free(s->pack_name);
	free(s->rule_dir);
	free(s->colors);
	hm_lua_decls_free(&s->decls);
	hm_strtab_free(&s->cache_keys);
	free(s->cache_cat);
	free(s->keybuf);
	free(s);
}
