/* The Lua state of a run: a sandbox per loaded chunk, packs found by name, hooks held
 * by reference, classify called once per allocation (or answered from the cache_by memo). */
#include "script.h"
#include "lbind.h"

#include <dirent.h>
#include <lauxlib.h>
#include <lualib.h>
#include <pthread.h>
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
	uint64_t ncalls; /* calls into the rule file so far */
	uint64_t call;   /* the running call's number, 0 between calls (the watchdog reads it) */
	uint64_t kill_call; /* the call the watchdog stopped (the signal handler reads it) */
	volatile sig_atomic_t killed; /* timed out: every instruction raises until C has control */
	pthread_t lua_thread, watchdog;
	pthread_mutex_t wd_mu;
	pthread_cond_t wd_cv;
	int watching, wd_stop;
	char kill_where[256];
	char *pack_name; /* the pack table's name field */
	char (*colors)[8]; /* category id -> declared "#rrggbb", "" if none */
	size_t ncolors;
};

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Lua's allocator with a count: past the limit, allocations fail (Lua raises "not enough
 * memory"); the first refusal leaves 16 MB of headroom so the error can be reported. */
static void *limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	hm_script *s = ud;
	size_t old = ptr ? osize : 0;
	if (nsize == 0) {
		free(ptr);
		s->mem_used -= old;
		return NULL;
	}
	if (s->mem_limit && nsize > old && s->mem_used + (nsize - old) > s->mem_limit + (s->mem_hit ? 16u << 20 : 0)) {
		s->mem_hit = 1;
		return NULL;
	}
	void *q = realloc(ptr, nsize);
	if (q)
		s->mem_used = s->mem_used - old + nsize;
	return q;
}

/* ---- the timeout ----
 * Each call into the rule file gets a number (limits_arm). A watchdog thread looks at the
 * running call a few times per limit; when one has lasted longer, it signals the thread
 * running Lua, whose handler sets a hook on every instruction that raises (lua.c stops a
 * script on Ctrl-C the same way). Until then Lua runs without hooks: a count hook would
 * cost every instruction of every rule (about 300 instructions per classify call).
 * (ThreadSanitizer holds signals back until the thread calls into libc: under it, a loop
 * that never does is not stopped.) */
static hm_script *timed_out; /* for the signal handler (atomic) */

/* Raises at every instruction, so a pcall in the rule file cannot swallow it for long. */
static void time_hook(lua_State *L, lua_Debug *ar)
{
	hm_script *s = *(hm_script **)lua_getextraspace(L);
	if (!s->kill_where[0] && lua_getinfo(L, "Sl", ar))
		snprintf(s->kill_where, sizeof s->kill_where, "%s:%d", ar->short_src, ar->currentline);
	luaL_error(L, "stopped: ran longer than the --timeout of %g s", s->o->timeout_s);
}

/* SIGALRM on the thread running Lua: stop the call, if it is still the one that ran long. */
static void on_timeout(int sig)
{
	(void)sig;
	hm_script *s = __atomic_load_n(&timed_out, __ATOMIC_ACQUIRE);
	if (s && __atomic_load_n(&s->call, __ATOMIC_RELAXED) == __atomic_load_n(&s->kill_call, __ATOMIC_RELAXED)) {
		s->killed = 1;
		lua_sethook(s->L, time_hook, LUA_MASKCOUNT, 1);
	}
}

static void *watchdog(void *arg)
{
	hm_script *s = arg;
	double limit = s->o->timeout_s, tick = limit / 10 < 0.01 ? 0.01 : limit / 10 > 1 ? 1 : limit / 10;
	uint64_t seen = 0;
	double since = mono();
	pthread_mutex_lock(&s->wd_mu);
	while (!s->wd_stop) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		long long ns = ts.tv_nsec + (long long)(tick * 1e9);
		ts.tv_sec += (time_t)(ns / 1000000000), ts.tv_nsec = (long)(ns % 1000000000);
		pthread_cond_timedwait(&s->wd_cv, &s->wd_mu, &ts);
		uint64_t c = __atomic_load_n(&s->call, __ATOMIC_RELAXED);
		double now = mono();
		if (c != seen) {
			seen = c, since = now;
		} else if (c && now - since > limit) {
			__atomic_store_n(&s->kill_call, c, __ATOMIC_RELAXED);
			__atomic_store_n(&timed_out, s, __ATOMIC_RELEASE);
			pthread_kill(s->lua_thread, SIGALRM);
			since = now; /* again a limit later, should it still run (blocked in C code) */
		}
	}
	pthread_mutex_unlock(&s->wd_mu);
	return NULL;
}

static void watchdog_start(hm_script *s)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_timeout;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	sigset_t set; /* a parent may have blocked it */
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wd_cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&s->wd_mu, NULL);
	s->lua_thread = pthread_self();
	s->watching = pthread_create(&s->watchdog, NULL, watchdog, s) == 0;
}

static void watchdog_stop(hm_script *s)
{
	if (!s->watching)
		return;
	pthread_mutex_lock(&s->wd_mu);
	s->wd_stop = 1;
	pthread_cond_signal(&s->wd_cv);
	pthread_mutex_unlock(&s->wd_mu);
	pthread_join(s->watchdog, NULL);
	pthread_mutex_destroy(&s->wd_mu);
	pthread_cond_destroy(&s->wd_cv);
	hm_script *was = s;
	__atomic_compare_exchange_n(&timed_out, &was, NULL, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* Before each call into the rules, and after it. */
static void limits_arm(hm_script *s)
{
	__atomic_store_n(&s->call, ++s->ncalls, __ATOMIC_RELAXED);
}

static void limits_done(hm_script *s)
{
	__atomic_store_n(&s->call, 0, __ATOMIC_RELAXED);
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

/* Where require and pack names look, in order: the rule file's directory (for require),
 * -I directories, HMEM_PATH, then the modules built into hmem. Pushes the path of the
 * file found (for a built-in module, its path in lua/ and the module is returned), or
 * nil. [-0, +1, m] */
static const hm_embedded *find_module(lua_State *L, const hm_script_opts *o, const char *name, int rule_dir)
{
	char rel[512], path[5000], dir[4096];
	snprintf(rel, sizeof rel, "%s", name);
	for (char *p = rel; *p; p++)
		if (*p == '.')
			*p = '/';
	for (int i = rule_dir ? -1 : 0; ; i++) {
		if (i == -1) {
			const char *slash = o->rules ? strrchr(o->rules, '/') : NULL;
			snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - o->rules) : 1, slash ? o->rules : ".");
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
	const hm_embedded *m = find_module(L, o, name, 1);
	if (lua_isnil(L, -1)) {
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
	luaL_openlibs(L);
	hm_lua_row_register(L);
	hm_lua_series_register(L);
	lua_newtable(L);
	lua_setfield(L, LUA_REGISTRYINDEX, "hmem.loaded");

	/* The hmem module, with the host's own functions added. */
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
	lua_pushvalue(L, hmem);
	lua_setfield(L, LUA_REGISTRYINDEX, "hmem.module");

	/* The rules: a file, or a pack by name. */
	const hm_embedded *m = NULL;
	if (file_exists(o->rules)) {
		lua_pushstring(L, o->rules);
	} else if (strchr(o->rules, '/') || strstr(o->rules, ".lua")) {
		return luaL_error(L, "%s: no such rule file", o->rules);
	} else {
		lua_pushfstring(L, "hmem.rules.%s", o->rules);
		m = find_module(L, o, lua_tostring(L, -1), 0);
		if (lua_isnil(L, -1)) {
			lua_pop(L, 2);
			m = find_module(L, o, o->rules, 0); /* a plain NAME.lua on -I / HMEM_PATH */
			if (lua_isnil(L, -1) || m)
				return luaL_error(L, "%s: no such rule file or pack (shipped packs: size, op, phase, lifetime, "
						     "pytorch; 'hmem packs' lists all)", o->rules);
		}
		s->pack = 1;
	}
	s->path = hm_xstrdup(lua_tostring(L, -1));
	s->name = hm_xstrdup(s->pack ? o->rules : s->path);
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
		lua_getfield(L, hmem, "cache_by");
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

	/* cache_by: field names become ids; lists cannot be keys. */
	lua_getfield(L, hmem, "_cache_by");
	for (lua_Integer i = 1; lua_istable(L, -1) && lua_rawgeti(L, -1, i) == LUA_TSTRING; i++) {
		size_t n;
		const char *f = lua_tolstring(L, -1, &n);
		int id = hm_field_id(f, n);
		if (id == HM_F_NONE || id == HM_F_CATEGORY)
			return luaL_error(L, "cache_by: '%s' is not a row field (fields: %s)", f, hm_field_names());
		hm_value v = {0};
		if (id == HM_F_OPS || id == HM_F_ANNOTATIONS || id == HM_F_PYTHON || id == HM_F_FREE_OPS || id == HM_F_STACK)
			return luaL_error(L, "cache_by: '%s' is a list; use a single-valued field such as op", f);
		(void)v;
		if (s->ncache == (int)(sizeof s->cache_fields / sizeof *s->cache_fields))
			return luaL_error(L, "cache_by: at most 16 fields");
		s->cache_fields[s->ncache++] = id;
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

hm_script *hm_script_open(const hm_script_opts *o, hm_strtab *cats, char *err, size_t errsz)
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
		watchdog_start(s);
	s->classify_ref = s->init_ref = s->done_ref = LUA_NOREF;
	open_ctx c = {s, cats};
	lua_pushcfunction(L, open_protected);
	lua_pushlightuserdata(L, &c);
	limits_arm(s);
	int status = hm_lua_docall(L, 1, 0);
	limits_done(s);
	if (status != LUA_OK) {
		if (!limits_report(s, err, errsz))
			error_text(L, err, errsz);
		hm_script_close(s);
		return NULL;
	}
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
		id = (int32_t)hm_strtab_intern(cats, p, len);
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
	int cache = 2, fn = 3;
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
			hm_lua_row_push(L, f, x, (uint32_t)k, NULL);
			s->calls++;
			limits_arm(s);
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
	limits_arm(s);
	int status = hm_lua_docall(s->L, 1, 0);
	limits_done(s);
	if (status != LUA_OK) {
		if (!limits_report(s, err, errsz))
			error_text(s->L, err, errsz);
		lua_pop(s->L, 1);
		return -1;
	}
	return 0;
}

/* The description of the rule file at path (arg 1), or nil if it is not a rule file
 * (a module it requires, say). Raises if it fails to load. [-1, +1, e] */
static int describe_pack(lua_State *L)
{
	const hm_script_opts *o = lua_touserdata(L, lua_upvalueindex(1));
	const char *path = luaL_checkstring(L, 1);
	const hm_embedded *m = lua_touserdata(L, 2);
	load_chunk(L, o, path, m ? m->source : NULL);
	lua_getupvalue(L, -1, 1);
	int env = lua_gettop(L);
	lua_pushvalue(L, env - 1);
	lua_call(L, 0, 1);
	if (lua_istable(L, -1)) {
		lua_getfield(L, -1, "classify");
		lua_getfield(L, -2, "description");
		if (!lua_isfunction(L, -2))
			lua_pushnil(L);
		else if (!lua_isstring(L, -1))
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

/* Lists each pack name once, the first found (as the loader would find it). [-2, +0, e] */
static int packs_protected(lua_State *L)
{
	const hm_script_opts *o = lua_touserdata(L, 1);
	FILE *out = lua_touserdata(L, 2);
	luaL_openlibs(L);
	hm_lua_row_register(L);
	lua_newtable(L);
	lua_setfield(L, LUA_REGISTRYINDEX, "hmem.loaded");
	lua_newtable(L);
	int seen = lua_gettop(L);
	lua_pushlightuserdata(L, (void *)o);
	lua_pushcclosure(L, describe_pack, 1);
	int describe = lua_gettop(L);
	lua_newtable(L); /* candidates: {name, path, module} in search order */
	int cand = lua_gettop(L);
	lua_Integer nc = 0;
	char dir[4096];
	for (int i = 0; search_dir(o, i, dir, sizeof dir); i++) {
		struct dirent **names;
		int n = scandir(dir, &names, NULL, alphasort);
		for (int j = 0; j < n; j++) {
			const char *f = names[j]->d_name;
			size_t len = strlen(f);
			if (len > 4 && !strcmp(f + len - 4, ".lua") && f[0] != '.') {
				lua_createtable(L, 2, 0);
				lua_pushlstring(L, f, len - 4);
				lua_rawseti(L, -2, 1);
				lua_pushfstring(L, "%s/%s", dir, f);
				lua_rawseti(L, -2, 2);
				lua_rawseti(L, cand, ++nc);
			}
			free(names[j]);
		}
		if (n >= 0)
			free(names);
	}
	for (const hm_embedded *m = hm_embedded_modules; m->name; m++)
		if (!strncmp(m->name, "hmem.rules.", 11)) {
			lua_createtable(L, 3, 0);
			lua_pushstring(L, m->name + 11);
			lua_rawseti(L, -2, 1);
			lua_pushstring(L, m->path);
			lua_rawseti(L, -2, 2);
			lua_pushlightuserdata(L, (void *)m);
			lua_rawseti(L, -2, 3);
			lua_rawseti(L, cand, ++nc);
		}
	for (lua_Integer i = 1; i <= nc; i++) {
		lua_rawgeti(L, cand, i);
		int c = lua_gettop(L);
		lua_rawgeti(L, c, 1);
		const char *name = lua_tostring(L, -1);
		if (lua_getfield(L, seen, name) == LUA_TNIL) {
			lua_pushvalue(L, describe);
			lua_rawgeti(L, c, 2);
			lua_rawgeti(L, c, 3);
			int shipped = !lua_isnil(L, -1);
			lua_pushcfunction(L, msghandler);
			lua_insert(L, -4);
			int ok = lua_pcall(L, 2, 1, -4) == LUA_OK;
			if (!ok || !lua_isnil(L, -1)) {
				lua_pushboolean(L, 1);
				lua_setfield(L, seen, name);
				lua_rawgeti(L, c, 2);
				const char *desc = ok ? lua_tostring(L, -2) : "(fails to load; run it to see why)";
				fprintf(out, "  %-12s %s\n  %-12s (%s)\n", name, desc, "", shipped ? "shipped with hmem" : lua_tostring(L, -1));
			}
		}
		lua_settop(L, cand);
	}
	return 0;
}

int hm_script_list_packs(const hm_script_opts *o, FILE *out)
{
	lua_State *L = luaL_newstate();
	if (!L)
		return HM_EXIT_INTERNAL;
	fprintf(out, "rule packs (use a name in place of a rule file: hmem run NAME PATH...):\n");
	lua_pushcfunction(L, packs_protected);
	lua_pushlightuserdata(L, (void *)o);
	lua_pushlightuserdata(L, out);
	int rc = HM_EXIT_OK;
	if (hm_lua_docall(L, 2, 0) != LUA_OK) {
		fprintf(stderr, "hmem: %s\n", lua_tostring(L, -1));
		rc = HM_EXIT_SCRIPT;
	}
	lua_close(L);
	return rc;
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

void hm_script_close(hm_script *s)
{
	if (!s)
		return;
	watchdog_stop(s);
	lua_close(s->L);
	free(s->path);
	free(s->name);
	free(s->pack_name);
	free(s->colors);
	hm_strtab_free(&s->cache_keys);
	free(s->cache_cat);
	free(s->keybuf);
	free(s);
}
