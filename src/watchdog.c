/* The --timeout: each call into the rule file gets a number (hm_watchdog_arm). A thread
 * looks at the running call a few times per limit; when one has lasted longer, it signals
 * the thread running Lua, whose handler asks Lua to stop (lctx.c sets a hook on every
 * instruction that raises; lua.c stops a script on Ctrl-C the same way). Until then Lua
 * runs without hooks: a count hook would cost every instruction of every rule.
 * Hooks do not run everywhere: not inside C library loops (a backtracking pattern), nor in
 * finalizers, error handlers entered from the hook, coroutines, or lua_close. A call that
 * has not stopped a grace period after it was asked cannot be stopped from inside, so the
 * watchdog ends the process (exit 3): the limit holds whatever the rule file does.
 * (ThreadSanitizer holds signals back until the thread calls into libc: under it, a loop
 * that never does is only ended by the second expiry.) */
#include "watchdog.h"
#include "util.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct hm_watchdog {
	double limit, tick, grace;
	char who[512], limit_text[32];
	void (*stop)(void *);
	void *ud;
	hm_watch_call c;    /* the running call (watchdog.h) */
	uint64_t kill_call; /* the call asked to stop (the signal handler reads it) */
	pthread_t lua_thread, thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int quit;
};

static hm_watchdog *expired; /* for the signal handler (atomic) */
static void (*at_kill[8])(void);
static int nat_kill;

int hm_watchdog_at_kill(void (*fn)(void))
{
	if (nat_kill == (int)(sizeof at_kill / sizeof *at_kill))
		return -1;
	at_kill[nat_kill++] = fn;
	return 0;
}

/* SIGALRM on the thread running Lua: ask the call to stop, if it is still the one that ran
 * long. */
static void on_alarm(int sig)
{
	(void)sig;
	hm_watchdog *w = __atomic_load_n(&expired, __ATOMIC_ACQUIRE);
	if (w && __atomic_load_n(&w->c.call, __ATOMIC_RELAXED) == __atomic_load_n(&w->kill_call, __ATOMIC_RELAXED))
		w->stop(w->ud);
}

/* The second expiry: the call was asked to stop and did not. Runs on the watchdog thread
 * while the Lua thread is still busy, so only write, the at_kill functions and _exit. */
static void kill_run(hm_watchdog *w)
{
	char msg[1024];
	const char *what = __atomic_load_n(&w->c.what, __ATOMIC_RELAXED);
	int n = snprintf(msg, sizeof msg,
			 "hmem: %s: stopped: %s ran longer than %s s and did not stop when asked (--timeout SEC "
			 "raises the limit)\n  the run is ended, no output written (hooks cannot stop a loop in a __gc "
			 "finalizer, a coroutine or a C library function such as a backtracking string.find)\n",
			 w->who, what ? what : "a call into the rule file", w->limit_text);
	if (n > 0 && write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1) < 0)
		n = 0;
	for (int i = 0; i < nat_kill; i++)
		at_kill[i]();
	_exit(HM_EXIT_SCRIPT);
}

static void *watch(void *arg)
{
	hm_watchdog *w = arg;
	uint64_t seen = 0;
	double since = hm_now();
	int asked = 0;
	pthread_mutex_lock(&w->mu);
	while (!w->quit) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		long long ns = ts.tv_nsec + (long long)(w->tick * 1e9);
		ts.tv_sec += (time_t)(ns / 1000000000), ts.tv_nsec = (long)(ns % 1000000000);
		pthread_cond_timedwait(&w->cv, &w->mu, &ts);
		if (w->quit)
			break;
		uint64_t c = __atomic_load_n(&w->c.call, __ATOMIC_RELAXED);
		double now = hm_now();
		if (c != seen) {
			seen = c, since = now, asked = 0;
		} else if (c && !asked && now - since > w->limit) {
			__atomic_store_n(&w->kill_call, c, __ATOMIC_RELAXED);
			__atomic_store_n(&expired, w, __ATOMIC_RELEASE);
			pthread_kill(w->lua_thread, SIGALRM);
			since = now, asked = 1;
		} else if (c && asked && now - since > w->grace) {
			kill_run(w);
		}
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

hm_watchdog *hm_watchdog_start(double limit_s, const char *who, void (*stop)(void *), void *ud)
{
	hm_watchdog *w = hm_xcalloc(1, sizeof *w);
	w->limit = limit_s;
	w->tick = limit_s / 10 < 0.01 ? 0.01 : limit_s / 10 > 1 ? 1 : limit_s / 10;
	w->grace = limit_s < 1 ? limit_s : 1;
	snprintf(w->who, sizeof w->who, "%s", who);
	snprintf(w->limit_text, sizeof w->limit_text, "%g", limit_s);
	w->stop = stop, w->ud = ud;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
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
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&w->mu, NULL);
	w->lua_thread = pthread_self();
	if (pthread_create(&w->thread, NULL, watch, w) != 0) {
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
		free(w);
		return NULL;
	}
	return w;
}

hm_watch_call *hm_watchdog_call(hm_watchdog *w)
{
	static hm_watch_call unwatched; /* only ever written (by the thread running Lua) */
	return w ? &w->c : &unwatched;
}

void hm_watchdog_stop(hm_watchdog *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->quit = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	hm_watchdog *was = w;
	__atomic_compare_exchange_n(&expired, &was, NULL, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	free(w);
}
