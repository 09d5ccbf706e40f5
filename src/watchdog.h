/* watchdog: the --timeout of calls into the rule file. Plain C, no Lua: a thread that
 * looks at the running call every tenth of the limit (at least once a second). Its user
 * is lctx.c, which owns the watchdog it starts (hm_watchdog_stop frees it); the watched
 * call lives inside the watchdog, written by the thread running Lua, read by the
 * watchdog's thread. */
#ifndef HM_WATCHDOG_H
#define HM_WATCHDOG_H

#include <stdint.h>

typedef struct hm_watchdog hm_watchdog;

/* Watch the calls the calling thread makes between hm_watchdog_arm and
 * hm_watchdog_done. A call running longer than limit_s gets stop(ud) called on the
 * calling thread, from a signal handler (so stop may only do what is safe there, such as
 * lua_sethook). A call still running a grace period later (the limit, at most a second)
 * could not be stopped (a C loop, a finalizer, an error handler): the watchdog thread
 * writes a message naming who and the limit, runs the hm_watchdog_at_kill functions and
 * ends the process with exit 3, outputs not written. who is copied. NULL when the thread
 * cannot start (then there is no limit). */
hm_watchdog *hm_watchdog_start(double limit_s, const char *who, void (*stop)(void *), void *ud);

/* The watched call, which the watchdog thread reads: classify arms it once per row, so
 * arming is inline. */
typedef struct hm_watch_call {
	uint64_t call;    /* the running call's number, 0 between calls */
	uint64_t ncalls;  /* calls so far */
	const char *what; /* the running call's kind ("classify", a static string) */
} hm_watch_call;

/* w's call, or one that nobody watches when w is NULL (so arming needs no test). */
hm_watch_call *hm_watchdog_call(hm_watchdog *w);

/* A call begins, and ends. */
static inline void hm_watchdog_arm(hm_watch_call *c, const char *what)
{
	__atomic_store_n(&c->what, what, __ATOMIC_RELAXED);
	__atomic_store_n(&c->call, ++c->ncalls, __ATOMIC_RELEASE);
}

static inline void hm_watchdog_done(hm_watch_call *c)
{
	__atomic_store_n(&c->call, 0, __ATOMIC_RELAXED);
}

/* Joins the thread and frees w (NULL is fine). */
void hm_watchdog_stop(hm_watchdog *w);

/* fn runs on the watchdog thread just before it ends the process, while other threads
 * still run: it may only do what is safe then (unlink temporary files, no locks, no
 * malloc). At most 8 functions; returns -1 when full. */
int hm_watchdog_at_kill(void (*fn)(void));

#endif
