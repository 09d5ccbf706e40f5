/* helper: one piece of work run on a second thread while the calling thread does another,
 * then joined (fork and join; no queue, no locks). Plain C, no Lua. Its users, analyze.c and
 * run.c (the timeline's walk beside classify), would otherwise leave the machine's other
 * core idle on a single file after reading.
 *
 * Ownership: the hm_helper is the caller's (on its stack), valid from hm_helper_start to
 * hm_helper_join; what fn reads and writes is for the caller to keep apart from its own
 * work until the join. HMEM_TEST_SCHEDULE=helper-first (for tests) runs fn whole before
 * hm_helper_start returns, =helper-last only in hm_helper_join: the two schedules farthest
 * from the usual overlap, whose results must be the same. */
#ifndef HM_HELPER_H
#define HM_HELPER_H

#include <pthread.h>

typedef struct hm_helper {
	pthread_t thread;
	void (*fn)(void *);
	void *arg;
	int running; /* fn runs on thread, to be joined; else it has run, or runs at the join */
	int later;   /* helper-last: the join starts the thread */
	int steal;   /* the join runs fn itself if the thread has not begun it */
	int claimed; /* fn begun, by either (atomic) */
} hm_helper;

/* Whether hm_helper_start may start a thread (yes until told otherwise): no when the run's
 * threads are taken already, one a file (-j 1, or as many files at once as -j), where a
 * helper would only take turns with them. Set before the threads that start helpers. */
void hm_helper_allow(int yes);

/* Start fn(arg) on another thread; where none may or can start, it runs in hm_helper_join. */
void hm_helper_start(hm_helper *h, void (*fn)(void *), void *arg);
/* Wait until fn(arg) has returned (running it here if it has not started). */
void hm_helper_join(hm_helper *h);

#endif
