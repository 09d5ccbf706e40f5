/* The segments of a device at its oom entries, by backward replay (see snapseg.h). */
#include "snapseg.h"

#include <stdlib.h>
#include <string.h>

typedef struct seg {
	uint64_t addr;
	int64_t size, req, live; /* requested bytes and count of its live blocks */
} seg;

typedef struct blk {
	uint64_t addr;
	int64_t req;
} blk;

/* The replay's state: segments by address, live blocks by address (both sorted arrays:
 * an insertion moves memory, but a device holds thousands of segments, not millions, and
 * live blocks change one at a time), and the figures kept up to date as they change. */
typedef struct st {
	seg *g;
	size_t ng, capg;
	blk *b;
	size_t nb, capb;
	hm_segstate sum;
} st;

/* The first index in v (sorted by addr, elements of size sz) whose addr >= a. */
static size_t lower(const void *v, size_t n, size_t sz, uint64_t a)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t m;
		memcpy(&m, (const char *)v + mid * sz, sizeof m);
		if (m < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The segment holding address a, or -1. */
static long holding(const st *x, uint64_t a)
{
	size_t i = lower(x->g, x->ng, sizeof *x->g, a);
	if (i < x->ng && x->g[i].addr == a)
		return (long)i;
	if (i == 0 || a - x->g[i - 1].addr >= (uint64_t)x->g[i - 1].size)
		return -1;
	return (long)i - 1;
}

/* A segment's part of the figures, added (sign 1) or taken away (-1). */
static void count(st *x, const seg *g, int sign)
{
	x->sum.segments += sign, x->sum.reserved += sign * g->size, x->sum.requested += sign * g->req;
	if (g->live)
		x->sum.stranded += sign * (g->size - g->req);
	else
		x->sum.reclaimable += sign * g->size;
}

/* A block made live (sign 1) or no longer live (-1) in its segment; -1 when there is none. */
static int live(st *x, uint64_t a, int64_t req, int sign)
{
	long i = holding(x, a);
	if (i < 0)
		return -1;
	count(x, &x->g[i], -1);
	x->g[i].req += sign * req, x->g[i].live += sign;
	count(x, &x->g[i], 1);
	return 0;
}

static int add_block(st *x, uint64_t a, int64_t req)
{
	size_t i = lower(x->b, x->nb, sizeof *x->b, a);
	if ((i < x->nb && x->b[i].addr == a) || req < 0 || x->sum.requested + req > HM_STORE_MEM_LIMIT ||
	    live(x, a, req, 1) < 0)
		return -1;
	hm_grow(&x->b, &x->capb, x->nb + 1, sizeof *x->b);
	memmove(x->b + i + 1, x->b + i, (x->nb - i) * sizeof *x->b);
	x->b[i] = (blk){a, req};
	x->nb++;
	return 0;
}

static int drop_block(st *x, uint64_t a)
{
	size_t i = lower(x->b, x->nb, sizeof *x->b, a);
	if (i == x->nb || x->b[i].addr != a || live(x, a, x->b[i].req, -1) < 0)
		return -1;
	memmove(x->b + i, x->b + i + 1, (x->nb - i - 1) * sizeof *x->b);
	x->nb--;
	return 0;
}

/* A segment restored: it must not overlap its neighbours. */
static int add_seg(st *x, uint64_t a, int64_t size)
{
	size_t i = lower(x->g, x->ng, sizeof *x->g, a);
	if ((i < x->ng && x->g[i].addr - a < (uint64_t)size) ||
	    (i > 0 && a - x->g[i - 1].addr < (uint64_t)x->g[i - 1].size) || size <= 0 ||
	    x->sum.reserved + size > HM_STORE_MEM_LIMIT) /* the sums stay far from overflow */
		return -1;
	hm_grow(&x->g, &x->capg, x->ng + 1, sizeof *x->g);
	memmove(x->g + i + 1, x->g + i, (x->ng - i) * sizeof *x->g);
	x->g[i] = (seg){a, size, 0, 0};
	count(x, &x->g[i], 1);
	x->ng++;
	return 0;
}

/* A segment removed: exactly this one, and nothing live in it. */
static int drop_seg(st *x, uint64_t a, int64_t size)
{
	size_t i = lower(x->g, x->ng, sizeof *x->g, a);
	if (i == x->ng || x->g[i].addr != a || x->g[i].size != size || x->g[i].live)
		return -1;
	count(x, &x->g[i], -1);
	memmove(x->g + i, x->g + i + 1, (x->ng - i - 1) * sizeof *x->g);
	x->ng--;
	return 0;
}

void hm_snapseg_replay(hm_snap *s, int32_t dev, const hm_segop *ops, size_t n, const hm_liveblk *lb, size_t nlive)
{
	st x = {0};
	int ok = 1;
	for (size_t i = 0; i < s->nsegs && ok; i++)
		if (s->segs[i].dev == dev)
			ok = add_seg(&x, s->segs[i].addr, s->segs[i].total) == 0;
	for (size_t i = 0; i < nlive && ok; i++)
		ok = add_block(&x, lb[i].addr, lb[i].requested) == 0;
	for (size_t i = n; i-- > 0;) {
		const hm_segop *o = &ops[i];
		if (o->kind == HM_SEGOP_OOM) {
			s->ooms[o->oom].segs = x.sum;
			if (!ok)
				s->ooms[o->oom].segs.segments = HM_NONE;
			continue;
		}
		if (!ok)
			continue;
		switch (o->kind) {
		case HM_SEGOP_ALLOC: ok = drop_block(&x, o->addr) == 0; break;
		case HM_SEGOP_FREE: ok = add_block(&x, o->addr, o->size) == 0; break;
		case HM_SEGOP_SEG_NEW: ok = drop_seg(&x, o->addr, o->size) == 0; break;
		default: ok = add_seg(&x, o->addr, o->size) == 0; break;
		}
	}
	free(x.g), free(x.b);
}

hm_segstate hm_snapseg_end(const hm_snap *s, int32_t dev)
{
	hm_segstate e = {0, 0, 0, 0, 0};
	for (size_t i = 0; i < s->nsegs; i++) {
		const hm_snapseg *g = &s->segs[i];
		if (g->dev != dev)
			continue;
		e.segments++, e.reserved += g->total, e.requested += g->requested;
		if (g->allocated + g->pending)
			e.stranded += g->total - g->requested;
		else
			e.reclaimable += g->total;
	}
	return e;
}
