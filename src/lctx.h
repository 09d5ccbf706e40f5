/* lctx: the Lua state of a run and what every Lua binding file shares about it: the
 * limits (--lua-mem, counted by the state's allocator and by hm_lua_charge; --timeout,
 * through the watchdog), the protected call with a traceback, and the per-state data of
 * rows (lrow.c) and of hmem.aggregate declarations (lreport.c). The bottom layer of the
 * binding (lbind.h): it calls only the watchdog, never a file above it.
 *
 * Ownership: hm_lctx_new makes the context and its lua_State; the context owns the state,
 * its freed-block pool, the watchdog and the declarations' memory; hm_lctx_free ends all
 * of them. rows and decls are filled by lrow.c and lreport.c, which own their meaning. */
#ifndef HM_LCTX_H
#define HM_LCTX_H

#include "fields.h"
#include "watchdog.h"

#include <lua.h>
#include <signal.h>
#include <stddef.h>

/* lrow.c's per-state data. A row is a full userdata, one per event while Lua holds it
 * anywhere, so that rows of the same event are == and the same table key from classify to
 * done. The rows made so far are in weak-valued tables, one per file, keyed by the event's
 * index in the file's memory columns + 1 and sized for all of them (an insert never
 * rehashes); the registry's "hmem.rows" holds them by file (light userdata). */
typedef struct hm_rows {
	int mt_ref;            /* the row metatable */
	int made_ref;          /* the table of rows made for file last (a registry slot) */
	const hm_file *last;   /* NULL until the first table */
	const hm_strtab *cats; /* names categories once classify is over (row.category) */
	const struct fslot *fslots; /* field ids by name (lrow.c) */
	struct hm_ctxmemo *ctx; /* context ids by slice (fields.h), for row.context and cache_by (lrow.c) */
	struct hm_view *view;   /* the rules' view (lview.h, owned by the classify state) */
} hm_rows;

/* An aggregation declared with hmem.aggregate (lreport.c), checked and copied when
 * declared: C never reads the rule's table again. Functions are held by registry
 * reference (out of reach of Lua code). */
typedef struct hm_aggdecl {
	char *name;                          /* owned; never holds a NUL */
	int nby, by_field[16], by_ref[16];   /* a field id, or 0 and a function's reference */
	int sum, max, count;                 /* field ids (0: none); count 0 or 1 */
	int where, where_ref;                /* 0 all, 1 live at peak, 2 live at end; or a function's reference */
	lua_Integer top;                     /* 0: every group */
	int per_series;                      /* 1 (default): file and device are keys; 0: per = "all" */
	unsigned char by_pos[16];            /* a key's place in the rule's by list (1-based; 0: implied) */
} hm_aggdecl;

/* The declarations of a state; closed (by the host) once the rules have loaded. */
typedef struct hm_decls {
	hm_aggdecl *v;
	size_t n, cap;
	int closed;
} hm_decls;

typedef struct hm_lctx {
	lua_State *L;     /* NULL once closed */
	void *host;       /* the host's own data (script.c), opaque here */
	hm_rows rows;     /* lrow.c */
	hm_decls decls;   /* lreport.c */
	/* limits: a runaway or greedy rule file is stopped, whatever its own pcall does */
	size_t mem_used, mem_limit;
	int mem_hit;      /* an allocation was refused (the limit then allows headroom to report) */
	void *pool;       /* freed blocks of the allocator's block size, linked through their first word */
	size_t npool;
	double timeout_s;
	hm_watchdog *wd;  /* --timeout (watchdog.h), NULL for none */
	hm_watch_call *wcall; /* the call it watches */
	volatile sig_atomic_t killed;  /* timed out: every instruction raises until C has control */
	volatile sig_atomic_t closing; /* in lua_close: no hook to set (the state is going away) */
	int check_armed;  /* HMEM_CHECK_ARMED: an allocation outside an armed call aborts (a test's check) */
	uint64_t ncalls0; /* wcall's count when the state was made: more, and the rule file has run */
	char kill_where[256];
} hm_lctx;

/* A Lua state with its memory counted against mem_limit bytes (0: none) and, with
 * timeout_s > 0, a watchdog over its calls naming who (copied). The context is in the
 * state's extra space. NULL with err when the state cannot be made. */
hm_lctx *hm_lctx_new(size_t mem_limit, double timeout_s, const char *who, void *host, char *err, size_t errsz);

/* Close the state (its finalizers run under the watchdog) and free the pool; c->L is NULL
 * after. Closing twice is fine. */
void hm_lctx_close_lua(hm_lctx *c);

/* Close the state, stop the watchdog, free the declarations and c (NULL is fine). */
void hm_lctx_free(hm_lctx *c);

static inline hm_lctx *hm_lctx_of(lua_State *L)
{
	return *(hm_lctx **)lua_getextraspace(L);
}

/* The state's rows and declarations (inline: a row's field read looks its rows up). */
static inline hm_rows *hm_lua_rows(lua_State *L)
{
	return &hm_lctx_of(L)->rows;
}

static inline hm_decls *hm_lua_decls(lua_State *L)
{
	return &hm_lctx_of(L)->decls;
}

/* Around each call into the rules (what names its kind, a static string). */
static inline void hm_lctx_arm(hm_lctx *c, const char *what)
{
	hm_watchdog_arm(c->wcall, what);
}

static inline void hm_lctx_done(hm_lctx *c)
{
	hm_watchdog_done(c->wcall);
}

/* After a failed call: a message for the limit that stopped it, naming the rule file
 * path, into buf; or NULL when no limit did. */
const char *hm_lctx_limit_report(const hm_lctx *c, const char *path, char *buf, size_t n);

/* Message handler (lua.c's msghandler): any error value becomes a message with a
 * traceback. [-1, +1, m] */
int hm_lua_msghandler(lua_State *L);

/* Call the function below nargs arguments through hm_lua_msghandler (lua.c's docall).
 * [-(nargs+1), +(nres|1), -] */
int hm_lua_docall(lua_State *L, int nargs, int nres);

/* Count bytes hmem keeps in C on a rule file's behalf against its --lua-mem limit:
 * raises (as the allocator does) when they do not fit. uncharge gives them back.
 * [-0, +0, e] */
void hm_lua_charge(lua_State *L, size_t bytes);
void hm_lua_uncharge(lua_State *L, size_t bytes);

/* The bytes --lua-mem still allows (SIZE_MAX without a limit). */
size_t hm_lua_mem_left(lua_State *L);

#endif
