#define _GNU_SOURCE /* pthread_setname_np */
#include "helper.h"

#include <stdlib.h>
#include <string.h>

static int allowed = 1; /* written before the threads that read it start */

void hm_helper_allow(int yes)
{
	__atomic_store_n(&allowed, yes, __ATOMIC_RELAXED);
}

/* fn runs once, on whichever thread claims it first: the helper, or the caller at the
 * join when the helper has not begun (on a busy machine it may wait for a core that long). */
static int claim(hm_helper *h)
{
	return !__atomic_exchange_n(&h->claimed, 1, __ATOMIC_ACQ_REL);
}

static void *trampoline(void *arg)
{
	hm_helper *h = arg;
	if (claim(h))
		h->fn(h->arg);
	return NULL;
}

/* The test schedule, read at each start: 1 helper-first, 2 helper-last, 0 the usual one. */
static int schedule(void)
{
	const char *s = getenv("HMEM_TEST_SCHEDULE");
	return !s ? 0 : strcmp(s, "helper-first") == 0 ? 1 : strcmp(s, "helper-last") == 0 ? 2 : 0;
}

static void launch(hm_helper *h)
{
	h->claimed = 0;
	h->running = pthread_create(&h->thread, NULL, trampoline, h) == 0;
	if (h->running)
		pthread_setname_np(h->thread, "hmem-helper"); /* for perf and top */
}

void hm_helper_start(hm_helper *h, void (*fn)(void *), void *arg)
{
	h->fn = fn, h->arg = arg, h->running = h->later = h->steal = 0;
	if (!__atomic_load_n(&allowed, __ATOMIC_RELAXED))
		return; /* run by the join, on the caller's thread */
	int sched = schedule();
	if (sched == 2) {
		h->later = 1;
		return;
	}
	launch(h);
	if (sched == 1)
		hm_helper_join(h);
	h->steal = !sched; /* the test schedules keep fn on the helper's thread */
}

void hm_helper_join(hm_helper *h)
{
	if (h->later)
		launch(h);
	if (h->running) {
		if (h->steal && claim(h))
			h->fn(h->arg);
		pthread_join(h->thread, NULL);
	} else if (h->fn)
		h->fn(h->arg); /* none may or could start */
	h->fn = NULL, h->running = h->later = h->steal = 0;
}
