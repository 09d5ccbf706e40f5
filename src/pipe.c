#define _GNU_SOURCE
/* Two threads per file: the scanner finds events, a handler thread parses them.
 *
 * Finding where events start and end (the block scan) and parsing their members cost
 * about the same, so a file is read by two threads (three with gzip's inflating thread):
 * the scanner fills a buffer, records each complete event and its depth-1 containers,
 * and hands the buffer and the containers over when it needs more input; the handler
 * parses those events in file order into the store. The two share the work by batch:
 * while the handler lags behind (two batches waiting), the scanner also walks each event's
 * members and hands over the members instead (ops.walk). Buffers of inflated bytes come
 * from the inflating thread and go back to it once parsed (hm_src_take, hm_src_give). Only
 * the handler touches the store; the scanner keeps to the buffers, the top level and the
 * cut-off fields. Errors stay in file order: every event the handler sees comes before
 * anything the scanner fails on, so the handler's error wins.
 *
 * Who owns a batch (every function below keeps this; batch.owner asserts it):
 * - A batch belongs to one party at a time: the free list, the scanner (p->cur only), the
 *   queue of full batches, or the handler. Only its owner touches its buffer, containers
 *   and event records; owner changes under the mutex.
 * - While the scanner holds p->cur, the scanner's hm_jbuf buf/cap and tok/tokcap ARE that
 *   batch's buffer and containers (the scanner may reallocate them); the batch's own fields
 *   are written when it leaves the scanner (publish, hm_pipe_finish), never read before.
 * - The scanner takes its next batch before it publishes the full one, and copies what it
 *   still needs (the unfinished event's containers, and on the plain-read path its bytes)
 *   while both are its own. After publishing, it never reads or writes that batch again,
 *   however soon the handler gives it back. (Publishing first let the scanner be handed
 *   the batch it had just published and copy the unfinished event out of freed memory:
 *   issue 11.)
 * HMEM_TEST_SCHEDULE=lockstep (for tests) forces the tightest schedule: two batches only,
 * and the handler gives each one back before the scanner goes on. */
#include "pipe.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NBATCH 4

enum batch_owner { B_FREE, B_SCANNER, B_QUEUED, B_HANDLER };

/* Each batch on cache lines of its own, and the handler's and the scanner's fields of the
 * pipe apart: the scanner counts events into its batch as the handler reads another, and a
 * line both touch moves between the cores at every event (a third of the handler's loop
 * and half of the scanner's recording were such waits, perf annotate). */
#define LINE 64

typedef struct batch {
	_Alignas(LINE) char *buf;
	size_t cap;
	int give; /* buf goes back to the source when parsed (hm_src_give) */
	int walk; /* the scanner walked the members of these events (see publish) */
	int owner; /* enum batch_owner; written under the mutex */
	uint64_t base;
	uint32_t *ev; /* rec(batch) numbers per event */
	size_t nev, evcap;
	hm_jtok *tok; /* the scanner's container array while the batch is queued */
	size_t tokcap;
} batch;

struct hm_pipe {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	batch b[NBATCH];
	int full[NBATCH], nfull, headf; /* FIFO of batches to parse */
	int freel[NBATCH], nfree;       /* batches the scanner may fill */
	int cur;                        /* the batch the scanner fills (its buf is the hm_jbuf's) */
	int end, stop;                  /* no more batches; the handler failed */
	int walk;                       /* -1: the scanner walks members while the handler lags; 0, 1: never, always */
	int lockstep, busy;             /* HMEM_TEST_SCHEDULE=lockstep; the handler holds a batch */
	hm_src *src;
	hm_pipe_ops ops;                /* read by both, written once before the handler starts */
	_Alignas(LINE) int failed;      /* the handler's: ops.handle failed (set once per batch) */
};

/* Per event in a batch: start and end in buf, then its first container and how many; or,
 * when the scanner walked it, ops.words numbers. */
static size_t rec(const hm_pipe *p, const batch *b)
{
	return b->walk ? 2 + p->ops.words : 4;
}

static void fifo_put(int *q, int *n, int head, int v)
{
	q[(head + *n) % NBATCH] = v;
	(*n)++;
}

static void *handler(void *arg)
{
	hm_pipe *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (!p->nfull && !p->end)
			pthread_cond_wait(&p->cv, &p->mu);
		if (!p->nfull) {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		int k = p->full[p->headf];
		p->headf = (p->headf + 1) % NBATCH, p->nfull--;
		batch *b = &p->b[k];
		assert(b->owner == B_QUEUED);
		b->owner = B_HANDLER, p->busy = 1;
		pthread_mutex_unlock(&p->mu);
		/* the batch is the handler's now: read once, never per event (see LINE) */
		size_t r = rec(p, b), nev = b->nev;
		const uint32_t *ev = b->ev;
		const char *buf = b->buf;
		const hm_jtok *tok = b->tok;
		uint64_t base = b->base;
		int walked = b->walk;
		hm_pipe_ops ops = p->ops;
		int failed = p->failed;
		for (size_t i = 0; i < nev && !failed; i++) {
			const uint32_t *e = ev + r * i;
			if (walked)
				failed = ops.handle(ops.handle_ud, buf, base, e[0], e[1], NULL, 0, e + 2) != 0;
			else
				failed = ops.handle(ops.handle_ud, buf, base, e[0], e[1], hm_jscan_tok_at(tok, e[2]), e[3], NULL) != 0;
		}
		p->failed = failed;
		b->nev = 0;
		if (b->give)
			hm_src_give(p->src, b->buf, b->cap), b->buf = NULL, b->cap = 0, b->give = 0;
		pthread_mutex_lock(&p->mu);
		if (p->failed)
			p->stop = 1;
		b->owner = B_FREE, p->busy = 0;
		p->freel[p->nfree++] = k;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
}

int hm_pipe_event(hm_pipe *p, hm_jbuf *jb, size_t s, size_t e)
{
	batch *b = &p->b[p->cur];
	size_t r = rec(p, b);
	if ((b->nev + 1) * r > b->evcap)
		hm_grow(&b->ev, &b->evcap, (b->nev + 1) * r, sizeof *b->ev);
	uint32_t *v = b->ev + r * b->nev;
	if (b->walk) { /* the members; the containers are done with */
		if (p->ops.walk(p->ops.walk_ud, jb->buf, jb->base, s, e, hm_jscan_tok_at(jb->tok, jb->tok0),
				jb->ntok - jb->tok0, v + 2) != 0)
			return -1;
		v[0] = (uint32_t)s, v[1] = (uint32_t)e;
		b->nev++;
		jb->ntok = jb->tok0;
		return 0;
	}
	/* the containers stay where the scanner put them: jb->tok goes to the handler with the batch */
	v[0] = (uint32_t)s, v[1] = (uint32_t)e;
	v[2] = (uint32_t)jb->tok0, v[3] = (uint32_t)(jb->ntok - jb->tok0);
	b->nev++;
	jb->tok0 = jb->ntok;
	return 0;
}

int hm_pipe_pending(const hm_pipe *p)
{
	return p->b[p->cur].nev != 0;
}

/* Pass the current batch (its events are in jb->buf, which goes with it; give: back to the
 * source when parsed) to the handler and make a free one current, with the containers of the
 * event in progress and, unless keep is SIZE_MAX, the bytes of jb->buf from keep on (in the
 * new batch's buffer, which becomes jb->buf). The order is the ownership rule above: take,
 * copy, then publish. *stop: the handler has failed. */
static batch *publish(hm_pipe *p, hm_jbuf *jb, int give, size_t keep, int *stop)
{
	int k = p->cur;
	batch *b = &p->b[k];
	pthread_mutex_lock(&p->mu);
	while (!p->nfree)
		pthread_cond_wait(&p->cv, &p->mu);
	int nk = p->freel[--p->nfree];
	batch *n = &p->b[nk];
	assert(nk != k && b->owner == B_SCANNER && n->owner == B_FREE);
	n->owner = B_SCANNER;
	pthread_mutex_unlock(&p->mu);
	size_t part = jb->ntok - jb->tok0;
	hm_grow(&n->tok, &n->tokcap, part + 64, sizeof *n->tok);
	if (part)
		memcpy(n->tok, jb->tok + jb->tok0, part * sizeof *n->tok);
	if (keep != SIZE_MAX) {
		if (n->cap < jb->cap) {
			free(n->buf);
			n->buf = hm_xrealloc(NULL, jb->cap);
			n->cap = jb->cap;
		}
		memcpy(n->buf, jb->buf + keep, jb->len - keep);
	}
	b->buf = jb->buf, b->cap = jb->cap, b->base = jb->base, b->give = give;
	b->tok = jb->tok, b->tokcap = jb->tokcap;
	jb->tok = n->tok, jb->tokcap = n->tokcap, jb->ntok = part, jb->tok0 = 0;
	if (keep != SIZE_MAX)
		jb->buf = n->buf, jb->cap = n->cap;
	pthread_mutex_lock(&p->mu);
	b->owner = B_QUEUED;
	fifo_put(p->full, &p->nfull, p->headf, k);
	p->cur = nk;
	pthread_cond_broadcast(&p->cv);
	while (p->lockstep && (p->nfull || p->busy))
		pthread_cond_wait(&p->cv, &p->mu);
	int behind = p->nfull >= 2; /* the handler has a batch waiting after this one */
	*stop = p->stop;
	pthread_mutex_unlock(&p->mu);
	n->walk = p->walk < 0 ? behind : p->walk;
	return n;
}

int hm_pipe_publish(hm_pipe *p, hm_jbuf *jb, size_t keep)
{
	int stop;
	publish(p, jb, 0, keep, &stop);
	return stop;
}

/* A spare buffer of the batch the scanner goes on in goes to the source (nb is used instead). */
int hm_pipe_pass_on(hm_pipe *p, hm_jbuf *jb, char *nb, size_t ncap)
{
	int stop;
	batch *n = publish(p, jb, 1, SIZE_MAX, &stop);
	if (n->buf)
		hm_src_give(p->src, n->buf, n->cap), n->buf = NULL, n->cap = 0;
	jb->buf = nb, jb->cap = ncap;
	return stop;
}

hm_pipe *hm_pipe_start(hm_src *src, const hm_pipe_ops *ops)
{
	hm_pipe *p = aligned_alloc(LINE, sizeof *p); /* its lines are the ones LINE says */
	if (!p)
		return NULL;
	memset(p, 0, sizeof *p);
	p->src = src;
	p->ops = *ops;
	const char *sched = getenv("HMEM_TEST_SCHEDULE");
	p->lockstep = sched && strcmp(sched, "lockstep") == 0;
	for (int i = 1; i < (p->lockstep ? 2 : NBATCH); i++)
		p->freel[p->nfree++] = i;
	/* HMEM_WALK=handler or =scanner fixes which thread walks members, to compare them */
	const char *w = getenv("HMEM_WALK");
	p->walk = w && strcmp(w, "handler") == 0 ? 0 : w && strcmp(w, "scanner") == 0 ? 1 : -1;
	if (!ops->walk)
		p->walk = 0;
	p->b[0].walk = p->walk > 0;
	p->b[0].owner = B_SCANNER; /* its buffer and containers are the scanner's hm_jbuf */
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pthread_create(&p->thread, NULL, handler, p) != 0) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
		free(p);
		return NULL; /* events are parsed in place */
	}
	pthread_setname_np(p->thread, "hmem-events"); /* for perf and top */
	return p;
}

void hm_pipe_finish(hm_pipe *p, hm_jbuf *jb)
{
	batch *b = &p->b[p->cur];
	b->buf = jb->buf, b->cap = jb->cap, b->base = jb->base, b->give = 0;
	b->tok = jb->tok, b->tokcap = jb->tokcap;
	jb->buf = NULL, jb->tok = NULL; /* freed below with the batches */
	jb->cap = jb->tokcap = jb->ntok = jb->tok0 = 0;
	pthread_mutex_lock(&p->mu);
	assert(b->owner == B_SCANNER);
	if (b->nev)
		b->owner = B_QUEUED, fifo_put(p->full, &p->nfull, p->headf, p->cur);
	p->end = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	for (int i = 0; i < NBATCH; i++)
		free(p->b[i].buf), free(p->b[i].ev), free(p->b[i].tok);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
}
