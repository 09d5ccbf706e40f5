#define _GNU_SOURCE /* pthread_setname_np */
#include "helper.h"

#include <stdlib.h>
#include <string.h>

static void *trampoline(void *arg)
{
	hm_helper *h = arg;
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
	h->running = pthread_create(&h->thread, NULL, trampoline, h) == 0;
	if (h->running)
		pthread_setname_np(h->thread, "hmem-helper"); /* for perf and top */
}

void hm_helper_start(hm_helper *h, void (*fn)(void *), void *arg)
{
	h->fn = fn, h->arg = arg, h->running = 0;
	int sched = schedule();
	if (sched == 2)
		return; /* launched by the join */
	launch(h);
	if (sched == 1)
		hm_helper_join(h);
}

void hm_helper_join(hm_helper *h)
{
	if (!h->running && h->fn)
		launch(h);
	if (h->running)
		pthread_join(h->thread, NULL);
	else if (h->fn)
		h->fn(h->arg); /* no thread could start */
	h->fn = NULL, h->running = 0;
}
