/* watchdog: the --timeout of calls into the rule file. Plain C, no Lua: a thread that
 * looks at the running call every tenth of the limit (at least once a second). */
#ifndef HM_WATCHDOG_H
#define HM_WATCHDOG_H

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

/* A call begins; what ("classify", ...) is a static string for the message. */
void hm_watchdog_arm(hm_watchdog *w, const char *what);
void hm_watchdog_done(hm_watchdog *w);

/* Joins the thread and frees w (NULL is fine). */
void hm_watchdog_stop(hm_watchdog *w);

/* fn runs on the watchdog thread just before it ends the process, while other threads
 * still run: it may only do what is safe then (unlink temporary files, no locks, no
 * malloc). At most 8 functions; returns -1 when full. */
int hm_watchdog_at_kill(void (*fn)(void));

#endif
