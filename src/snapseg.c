/* The segments of a device at its oom entries, by backward replay (see snapseg.h). */
#include "snapseg.h"
#include "unpickle.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* A segment address the replay may meet: every segment of the end and every segment
 * event's address, sorted once; a segment comes and goes at its fixed place here. */
typedef struct seg {
	uint64_t addr;
	int64_t size, req, live; /* requested bytes and count of its live blocks */
	int present;
} seg;

/* The replay's state. Segments: the sorted universe of their addresses, with a Fenwick tree
 * counting those present, so the segment before or after an address is a logarithmic
 * search. Live blocks: an open-addressed hash by address (a block is only ever looked up by
 * its own address), never rehashed: it is sized for every block that can become live. A
 * sorted array would move memory at each insertion, quadratic over a hostile file's
 * thousands of frees at ascending addresses. */
typedef struct st {
	seg *g;
	size_t ng;
	int64_t *fen; /* fen[1..ng] */
	size_t present;
	uint64_t *baddr; /* address + 1, 0 for an empty slot */
	int64_t *breq;   /* requested bytes, -1 once no longer live */
	size_t bmask;
	hm_segstate sum;
	uint64_t work;
} st;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The first index in the universe whose addr >= a. */
static size_t lower(st *x, uint64_t a)
{
	size_t lo = 0, hi = x->ng;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		x->work++;
		if (x->g[mid].addr < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void fen_add(st *x, size_t i, int64_t d)
{
	for (i++; i <= x->ng; i += i & -i)
		x->fen[i] += d, x->work++;
	x->present = (size_t)((int64_t)x->present + d);
}

/* Segments present among the first i of the universe. */
static size_t fen_count(st *x, size_t i)
{
	int64_t c = 0;
	for (; i > 0; i -= i & -i)
		c += x->fen[i], x->work++;
	return (size_t)c;
}

/* The index of the k-th present segment (k >= 1, k <= present). */
static size_t fen_kth(st *x, size_t k)
{
	size_t at = 0, step = 1;
	while (step * 2 <= x->ng)
		step *= 2;
	for (; step; step /= 2) {
		x->work++;
		if (at + step <= x->ng && (size_t)x->fen[at + step] < k)
			at += step, k -= (size_t)x->fen[at];
	}
	return at;
}

/* The present segment holding address a, or -1. */
static long holding(st *x, uint64_t a)
{
	size_t i = lower(x, a);
	if (i < x->ng && x->g[i].addr == a)
		i++;
	size_t c = fen_count(x, i); /* present among those at or below a */
	if (!c)
		return -1;
	size_t p = fen_kth(x, c);
	return a - x->g[p].addr < (uint64_t)x->g[p].size ? (long)p : -1;
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

/* The slot of block address a: its own, or the empty one where it goes. */
static size_t bslot(st *x, uint64_t a)
{
	size_t i = (size_t)hm_pk_hash(a) & x->bmask;
	for (;; i = (i + 1) & x->bmask) {
		x->work++;
		if (!x->baddr[i] || x->baddr[i] == a + 1)
			return i;
	}
}

static int add_block(st *x, uint64_t a, int64_t req)
{
	size_t i = bslot(x, a);
	if ((x->baddr[i] && x->breq[i] >= 0) || req < 0 || x->sum.requested + req > HM_STORE_MEM_LIMIT ||
	    live(x, a, req, 1) < 0)
		return -1;
	x->baddr[i] = a + 1, x->breq[i] = req;
	return 0;
}

static int drop_block(st *x, uint64_t a)
{
	size_t i = bslot(x, a);
	if (!x->baddr[i] || x->breq[i] < 0 || live(x, a, x->breq[i], -1) < 0)
		return -1;
	x->breq[i] = -1;
	return 0;
}

/* A segment restored: it must not overlap its neighbours. */
static int add_seg(st *x, uint64_t a, int64_t size)
{
	size_t i = lower(x, a);
	if (i == x->ng || x->g[i].addr != a || x->g[i].present || size <= 0 || x->sum.reserved + size > HM_STORE_MEM_LIMIT)
		return -1; /* (the sums stay far from overflow) */
	size_t c = fen_count(x, i);
	if (c) {
		size_t p = fen_kth(x, c);
		if (a - x->g[p].addr < (uint64_t)x->g[p].size)
			return -1;
	}
	if (c < x->present) {
		size_t q = fen_kth(x, c + 1);
		if (x->g[q].addr - a < (uint64_t)size)
			return -1;
	}
	x->g[i] = (seg){a, size, 0, 0, 1};
	fen_add(x, i, 1);
	count(x, &x->g[i], 1);
	return 0;
}

/* A segment removed: exactly this one, and nothing live in it. */
static int drop_seg(st *x, uint64_t a, int64_t size)
{
	size_t i = lower(x, a);
	if (i == x->ng || x->g[i].addr != a || !x->g[i].present || x->g[i].size != size || x->g[i].live)
		return -1;
	count(x, &x->g[i], -1);
	x->g[i].present = 0;
	fen_add(x, i, -1);
	return 0;
}

uint64_t hm_snapseg_replay(hm_snap *s, int32_t dev, const hm_segop *ops, size_t n, const hm_liveblk *lb, size_t nlive)
{
	st x = {0};
	size_t first, nseg = hm_snapseg_of(s, dev, &first), nu = 0, nfree = 0;
	uint64_t *u = hm_xcalloc(nseg + n + 1, sizeof *u);
	for (size_t i = 0; i < nseg; i++)
		u[nu++] = s->segs[first + i].addr;
	for (size_t i = 0; i < n; i++) {
		if (ops[i].kind == HM_SEGOP_SEG_NEW || ops[i].kind == HM_SEGOP_SEG_GONE)
			u[nu++] = ops[i].addr;
		nfree += ops[i].kind == HM_SEGOP_FREE;
	}
	qsort(u, nu, sizeof *u, cmp_u64);
	x.g = hm_xcalloc(nu + 1, sizeof *x.g);
	for (size_t i = 0; i < nu; i++)
		if (!x.ng || u[i] != x.g[x.ng - 1].addr)
			x.g[x.ng++].addr = u[i];
	free(u);
	x.fen = hm_xcalloc(x.ng + 1, sizeof *x.fen);
	size_t cap = 64;
	while (cap < 2 * (nlive + nfree))
		cap *= 2;
	x.baddr = hm_xcalloc(cap, sizeof *x.baddr);
	x.breq = hm_xcalloc(cap, sizeof *x.breq);
	x.bmask = cap - 1;
	x.work = nu + n;
	int ok = 1;
	for (size_t i = 0; i < nseg && ok; i++)
		ok = add_seg(&x, s->segs[first + i].addr, s->segs[first + i].total) == 0;
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
	free(x.g), free(x.fen), free(x.baddr), free(x.breq);
	return x.work;
}

/* The lives' open-addressed map, address -> index + 1 of the life present there in the
 * backward walk (0: empty, TOMB: one that was there). Sized once for every life the device
 * can have, so it is never rehashed and at most half full. */
#define TOMB UINT32_MAX
typedef struct lmap {
	uint64_t *key;
	uint32_t *val;
	size_t mask;
} lmap;

static uint32_t *lslot(lmap *m, uint64_t a, int add)
{
	for (size_t i = (size_t)hm_pk_hash(a) & m->mask;; i = (i + 1) & m->mask) {
		if (!m->val[i])
			return add ? (m->key[i] = a, &m->val[i]) : NULL;
		if (m->val[i] != TOMB && m->key[i] == a)
			return &m->val[i];
	}
}

static int cmp_life(const void *a, const void *b)
{
	const hm_seglife *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* at one address, the earlier life first: born before recording, then by its entry */
	uint64_t bx = x->born_at == UINT32_MAX ? 0 : (uint64_t)x->born_at + 1, by = y->born_at == UINT32_MAX ? 0 : (uint64_t)y->born_at + 1;
	return bx < by ? -1 : bx > by;
}

static hm_seglife *new_life(hm_snap *s, int32_t dev, uint64_t addr, int64_t size, int64_t stream)
{
	hm_seglife *l = &s->lives[s->nlives++];
	memset(l, 0, sizeof *l); /* padding too: a partial stores the records as they are */
	l->dev = dev, l->addr = addr, l->size = size, l->stream = stream;
	l->pool[0] = l->pool[1] = HM_NONE;
	l->born_ts = l->died_ts = HM_NONE, l->born_at = l->died_at = UINT32_MAX;
	return l;
}

void hm_snapseg_lives(hm_snap *s, int32_t dev, const hm_segop *ops, size_t n)
{
	size_t first, nseg = hm_snapseg_of(s, dev, &first), nops = 0;
	if (!nseg)
		return;
	for (size_t i = 0; i < n; i++)
		nops += ops[i].kind == HM_SEGOP_SEG_NEW || ops[i].kind == HM_SEGOP_SEG_GONE;
	size_t start = s->nlives, cap = 64;
	hm_grow(&s->lives, &s->caplives, start + nseg + nops + 1, sizeof *s->lives);
	while (cap < 2 * (nseg + nops + 1))
		cap *= 2;
	lmap m = {hm_xcalloc(cap, sizeof *m.key), hm_xcalloc(cap, sizeof *m.val), cap - 1};
	int ok = 1;
	for (size_t i = first; i < first + nseg && ok; i++) {
		const hm_snapseg *g = &s->segs[i];
		hm_seglife *l = new_life(s, dev, g->addr, g->total, g->stream);
		l->pool[0] = g->pool[0], l->pool[1] = g->pool[1];
		uint32_t *v = lslot(&m, g->addr, 1);
		ok = !*v;
		*v = (uint32_t)(s->nlives - start);
	}
	size_t ends = s->nlives;
	for (size_t i = n; i-- > 0 && ok;) {
		const hm_segop *o = &ops[i];
		if (o->kind != HM_SEGOP_SEG_NEW && o->kind != HM_SEGOP_SEG_GONE)
			continue;
		uint32_t *v = lslot(&m, o->addr, o->kind == HM_SEGOP_SEG_GONE);
		if (o->kind == HM_SEGOP_SEG_NEW) { /* undone: the segment it made is no longer there */
			hm_seglife *l = v ? &s->lives[start + *v - 1] : NULL;
			if (!l || l->size != o->size) {
				ok = 0;
				break;
			}
			l->born_ts = o->ts, l->born_at = o->mem_at, l->flags |= o->mapped ? HM_SEGLIFE_MAPPED : 0;
			*v = TOMB;
		} else { /* undone: the segment it gave back is there again, until its making */
			if (*v && *v != TOMB) {
				ok = 0;
				break;
			}
			hm_seglife *l = new_life(s, dev, o->addr, o->size, o->stream);
			l->died_ts = o->ts, l->died_at = o->mem_at, l->flags |= o->mapped ? HM_SEGLIFE_MAPPED : 0;
			*v = (uint32_t)(s->nlives - start);
		}
	}
	if (!ok) { /* only the end is known */
		s->nlives = ends;
		for (size_t i = start; i < ends; i++)
			s->lives[i].born_ts = HM_NONE, s->lives[i].born_at = UINT32_MAX, s->lives[i].flags = HM_SEGLIFE_NO_REPLAY;
	}
	qsort(s->lives + start, s->nlives - start, sizeof *s->lives, cmp_life);
	free(m.key), free(m.val);
}

size_t hm_snapseg_lives_of(const hm_snap *s, int32_t dev, size_t *first)
{
	size_t i = 0;
	while (i < s->nlives && s->lives[i].dev != dev)
		i++;
	size_t end = i;
	while (end < s->nlives && s->lives[end].dev == dev)
		end++;
	*first = i;
	return end - i;
}

/* segment_pool_id, a tuple of two integers (2.1+), into pool; HM_NONE each when absent or
 * of another shape. */
void hm_snapseg_pool(const hm_pk *p, hm_pkv v, int64_t pool[2])
{
	pool[0] = pool[1] = HM_NONE;
	if (v == HM_PK_ABSENT || (hm_pk_type(v) != HM_PK_TUPLE && hm_pk_type(v) != HM_PK_LIST) || hm_pk_len(p, v) != 2)
		return;
	int64_t a, b;
	if (hm_pk_int(p, hm_pk_item(p, v, 0), &a) == 0 && hm_pk_int(p, hm_pk_item(p, v, 1), &b) == 0)
		pool[0] = a, pool[1] = b;
}

static int cmp_dev(const void *a, const void *b)
{
	const hm_snapseg *x = a, *y = b;
	return x->dev < y->dev ? -1 : x->dev > y->dev;
}

/* A merge sort, stable: within a device the segments stay in file order. */
static void sort_by_dev(hm_snapseg *v, hm_snapseg *tmp, size_t n)
{
	if (n < 2)
		return;
	size_t h = n / 2;
	sort_by_dev(v, tmp, h);
	sort_by_dev(v + h, tmp, n - h);
	if (cmp_dev(&v[h - 1], &v[h]) <= 0)
		return;
	size_t i = 0, j = h, k = 0;
	while (i < h && j < n)
		tmp[k++] = cmp_dev(&v[j], &v[i]) < 0 ? v[j++] : v[i++];
	while (i < h)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof *v);
}

void hm_snapseg_sort(hm_snap *s)
{
	hm_snapseg *tmp = hm_xcalloc(s->nsegs + 1, sizeof *tmp);
	sort_by_dev(s->segs, tmp, s->nsegs);
	free(tmp);
}

size_t hm_snapseg_of(const hm_snap *s, int32_t dev, size_t *first)
{
	size_t lo = 0, hi = s->nsegs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->segs[mid].dev < dev)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < s->nsegs && s->segs[end].dev == dev)
		end++;
	*first = lo;
	return end - lo;
}

hm_segstate hm_snapseg_end(const hm_snap *s, int32_t dev)
{
	hm_segstate e = {0, 0, 0, 0, 0};
	size_t first, n = hm_snapseg_of(s, dev, &first);
	for (size_t i = first; i < first + n; i++) {
		const hm_snapseg *g = &s->segs[i];
		e.segments++, e.reserved += g->total, e.requested += g->requested;
		if (g->allocated + g->pending)
			e.stranded += g->total - g->requested;
		else
			e.reclaimable += g->total;
	}
	return e;
}
