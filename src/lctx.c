/* The Lua state of a run and its limits: memory counted by the allocator (with a pool of
 * small blocks), the timeout's hook, the protected call helper and the charge for what
 * hmem keeps in C on a rule file's behalf. */
#include "lctx.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Rows (userdata of 64 bytes with Lua's header) and tables are made and collected by the
 * hundred thousand: blocks of 49 to 64 bytes are all POOL_BLOCK bytes long, and freed ones
 * are kept for the next (malloc and free were a sixth of the instructions of a classify
 * call that reads one field). */
#define POOL_BLOCK 64
#define POOLED(n) ((n) > 48 && (n) <= POOL_BLOCK)
#define POOL_MAX (1u << 16)

/* An allocation outside an armed call, once the rule file has run (its first call): a GC
 * step there could run a finalizer that nobody watches (issue 24). With HMEM_CHECK_ARMED
 * set, the tests make this a crash with a core to read; without it, nothing is checked. */
static void unarmed_alloc(void)
{
	static const char msg[] = "hmem: internal error: the Lua state allocated outside an armed call "
				  "(a finalizer there would escape --timeout)\n";
	ssize_t n = write(2, msg, sizeof msg - 1);
	(void)n;
	abort();
}

/* Lua's allocator with a count: past the limit, allocations fail (Lua raises "not enough
 * memory"); the first refusal leaves 16 MB of headroom so the error can be reported. */
static void *limited_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	hm_lctx *s = ud;
	size_t old = ptr ? osize : 0;
	if (s->check_armed && nsize > old && s->wcall && s->wcall->ncalls != s->ncalls0 && !s->wcall->call && !s->closing)
		unarmed_alloc();
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

/* Raises at every instruction, so a pcall in the rule file cannot swallow it for long. */
static void time_hook(lua_State *L, lua_Debug *ar)
{
	hm_lctx *s = hm_lctx_of(L);
	if (!s->kill_where[0] && lua_getinfo(L, "Sl", ar))
		snprintf(s->kill_where, sizeof s->kill_where, "%s:%d", ar->short_src, ar->currentline);
	luaL_error(L, "stopped: ran longer than the --timeout of %g s", s->timeout_s);
}

/* The watchdog's first expiry, in a signal handler on the thread running Lua
 * (lua_sethook may be called there). */
static void stop_lua(void *ud)
{
	hm_lctx *s = ud;
	if (s->closing)
		return;
	s->killed = 1;
	lua_sethook(s->L, time_hook, LUA_MASKCOUNT, 1);
}

hm_lctx *hm_lctx_new(size_t mem_limit, double timeout_s, const char *who, void *host, char *err, size_t errsz)
{
	hm_lctx *s = hm_xcalloc(1, sizeof *s);
	s->mem_limit = mem_limit;
	s->timeout_s = timeout_s;
	s->host = host;
	lua_State *L = lua_newstate(limited_alloc, s);
	if (!L) {
		snprintf(err, errsz, "cannot create a Lua state (out of memory)");
		free(s);
		return NULL;
	}
	s->L = L;
	*(hm_lctx **)lua_getextraspace(L) = s;
	if (timeout_s > 0)
		s->wd = hm_watchdog_start(timeout_s, who, stop_lua, s);
	s->wcall = hm_watchdog_call(s->wd);
	s->ncalls0 = s->wcall->ncalls;
	const char *check = getenv("HMEM_CHECK_ARMED");
	s->check_armed = check && *check && strcmp(check, "0");
	return s;
}

/* lua_close runs the finalizers the rule file set (__gc), so it is a call into the rule
 * file too: under the watchdog. Only its second expiry can end it (hooks do not run in
 * finalizers). */
void hm_lctx_close_lua(hm_lctx *s)
{
	if (!s->L)
		return;
	s->closing = 1;
	hm_lctx_arm(s, "closing its Lua state (running its __gc finalizers)");
	lua_close(s->L);
	hm_lctx_done(s);
	s->L = NULL;
	while (s->pool) {
		void *next = *(void **)s->pool;
		free(s->pool);
		s->pool = next;
	}
	s->npool = 0;
}

/* The names and the array; the references died with the state. */
static void decls_free(hm_decls *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].name);
	free(d->v);
	memset(d, 0, sizeof *d);
}

void hm_lctx_free(hm_lctx *s)
{
	if (!s)
		return;
	hm_lctx_close_lua(s);
	hm_watchdog_stop(s->wd);
	decls_free(&s->decls);
	free(s);
}

const char *hm_lctx_limit_report(const hm_lctx *s, const char *path, char *buf, size_t n)
{
	if (s->killed) {
		snprintf(buf, n, "%s: stopped at %s: a call into the rule file ran longer than %g s (--timeout SEC "
			 "raises the limit)", path, s->kill_where[0] ? s->kill_where : "?", s->timeout_s);
		return buf;
	}
	if (s->mem_hit) {
		snprintf(buf, n, "%s: the rule file used more than %zu MB of Lua memory (--lua-mem MB raises the limit)",
			 path, s->mem_limit >> 20);
		return buf;
	}
	return NULL;
}

int hm_lua_msghandler(lua_State *L)
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
	lua_pushcfunction(L, hm_lua_msghandler);
	lua_insert(L, base);
	int status = lua_pcall(L, nargs, nres, base);
	lua_remove(L, base);
	return status;
}

void hm_lua_charge(lua_State *L, size_t bytes)
{
	hm_lctx *s = hm_lctx_of(L);
	if (s->mem_limit && s->mem_used + bytes > s->mem_limit + (s->mem_hit ? 16u << 20 : 0)) {
		s->mem_hit = 1;
		luaL_error(L, "not enough memory (what the rule file made hmem keep in C counts against --lua-mem)");
	}
	s->mem_used += bytes;
}

size_t hm_lua_mem_left(lua_State *L)
{
	hm_lctx *s = hm_lctx_of(L);
	return !s->mem_limit ? SIZE_MAX : s->mem_used < s->mem_limit ? s->mem_limit - s->mem_used : 0;
}

void hm_lua_uncharge(lua_State *L, size_t bytes)
{
	hm_lctx_of(L)->mem_used -= bytes;
}
