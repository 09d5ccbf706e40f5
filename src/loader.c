#include "loader.h"
#include "helper.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

typedef struct slot {
	hm_load load;
	uint64_t size;     /* file bytes */
	uint64_t progress; /* file bytes consumed so far (atomic) */
	int done;
} slot;

struct hm_loader {
	char **paths;
	int n, next, stop, nthreads, keep_partial, threads_per_file;
	slot *slots;
	pthread_t *threads;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void load_one(hm_loader *l, int i)
{
	slot *s = &l->slots[i];
	hm_load *ld = &s->load;
	ld->code = HM_EXIT_INPUT;
	double t0 = hm_now();
	hm_read_opts o = {l->keep_partial, &s->progress, l->threads_per_file};
	char err[2048]; /* each file's outcome is kept to the end of the run: its message only if it failed */
	hm_trace *t = hm_trace_read_opts(l->paths[i], &o, err, sizeof err, &ld->code, &ld->lost);
	double t1 = hm_now();
	ld->read_s = t1 - t0;
	if (!t)
		ld->err = hm_xstrdup(err);
	else {
		ld->f = hm_analyze(t);
		ld->analyze_s = hm_now() - t1;
	}
	pthread_mutex_lock(&l->mu);
	s->done = 1;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
}

static void *worker(void *arg)
{
	hm_loader *l = arg;
	for (;;) {
		pthread_mutex_lock(&l->mu);
		int i = l->stop || l->next >= l->n ? -1 : l->next++;
		pthread_mutex_unlock(&l->mu);
		if (i < 0)
			return NULL;
		load_one(l, i);
	}
}

hm_loader *hm_loader_start(char **paths, int n, int jobs, int keep_partial)
{
	hm_loader *l = hm_xcalloc(1, sizeof *l);
	l->keep_partial = keep_partial;
	l->paths = paths;
	l->n = n;
	l->slots = hm_xcalloc((size_t)n + 1, sizeof *l->slots);
	for (int i = 0; i < n; i++) {
		struct stat st;
		l->slots[i].size = stat(paths[i], &st) == 0 ? (uint64_t)st.st_size : 0;
	}
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, NULL);
	if (jobs < 1)
		jobs = 1;
	/* jobs threads in all: as many files at a time, up to one per thread; threads left
	 * over go to each file's reading (inflating and parsing beside the scan). */
	int files = jobs > n ? (n > 0 ? n : 1) : jobs;
	l->threads_per_file = jobs / files;
	hm_helper_allow(l->threads_per_file > 1); /* a file's analysis takes a second thread where one is left */
	jobs = files;
	l->threads = hm_xcalloc((size_t)jobs, sizeof *l->threads);
	for (int i = 0; i < jobs; i++)
		if (pthread_create(&l->threads[l->nthreads], NULL, worker, l) == 0)
			l->nthreads++;
	return l;
}

hm_load *hm_loader_wait(hm_loader *l, int i, int timeout_ms)
{
	if (!l->nthreads) { /* no thread could start: load it here */
		if (!l->slots[i].done)
			load_one(l, i);
		return &l->slots[i].load;
	}
	pthread_mutex_lock(&l->mu);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L)
		until.tv_sec++, until.tv_nsec -= 1000000000L;
	while (!l->slots[i].done) {
		if (timeout_ms < 0) {
			pthread_cond_wait(&l->cv, &l->mu);
		} else if (pthread_cond_timedwait(&l->cv, &l->mu, &until) == ETIMEDOUT) {
			pthread_mutex_unlock(&l->mu);
			return NULL;
		}
	}
	pthread_mutex_unlock(&l->mu);
	return &l->slots[i].load;
}

void hm_loader_progress(hm_loader *l, uint64_t *done, uint64_t *total, int *files_done)
{
	*done = *total = 0;
	*files_done = 0;
	pthread_mutex_lock(&l->mu);
	for (int i = 0; i < l->n; i++) {
		*total += l->slots[i].size;
		*done += l->slots[i].done ? l->slots[i].size : __atomic_load_n(&l->slots[i].progress, __ATOMIC_RELAXED);
		*files_done += l->slots[i].done;
	}
	pthread_mutex_unlock(&l->mu);
}

void hm_loader_stop(hm_loader *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->stop = 1;
	pthread_mutex_unlock(&l->mu);
	for (int i = 0; i < l->nthreads; i++)
		pthread_join(l->threads[i], NULL);
	for (int i = 0; i < l->n; i++) {
		hm_file_free(l->slots[i].load.f);
		free(l->slots[i].load.err);
	}
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->cv);
	free(l->threads);
	free(l->slots);
	free(l);
}
