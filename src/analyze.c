#define _GNU_SOURCE
#include "analyze.h"
#include "helper.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hm_device_name(char *buf, size_t n, int32_t type, int32_t id)
{
	static const struct { int type; const char *name; } names[] = {
		{1, "cuda"}, {6, "hip"}, {12, "xpu"}, {13, "mps"}, {20, "privateuseone"},
	};
	if (type == 0) {
		snprintf(buf, n, "cpu");
		return;
	}
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (names[i].type == type) {
			snprintf(buf, n, "%s:%d", names[i].name, (int)id);
			return;
		}
	snprintf(buf, n, "type%d:%d", (int)type, (int)id);
}

typedef int (*cmp_fn)(const void *, const void *, void *);

/* Traces are mostly written in order, with a few elements out of place (a ProfilerStep
 * slice written after the ops it encloses). One pass keeps, in place, each element not
 * below the last one kept and moves the others to tmp (room for n); only those are
 * sorted, then merged back from the end. The comparators are total orders, so the result
 * is the one sorted order whatever the input. sort_rest is that end: the r elements moved
 * to tmp are sorted and merged back into v, whose first a elements are in order. */
static void sort_rest(uint32_t *v, size_t n, size_t a, uint32_t *tmp, size_t r, cmp_fn cmp, void *ctx)
{
	if (r > 1)
		qsort_r(tmp, r, sizeof *tmp, cmp, ctx);
	for (size_t k = n; r;)
		v[--k] = a && cmp(&v[a - 1], &tmp[r - 1], ctx) > 0 ? v[--a] : tmp[--r];
}

/* Stable counting sort of 0..n-1 by thread into out; thread th's run is
 * out[start[th]..start[th + 1]). Thread ids are small and dense, and events of several
 * threads are interleaved in the file, but in runs: the count and the position of the
 * current run's thread are kept in registers (a counter in memory, added to at every
 * element, waits for its own last store). */
static void by_thread(size_t n, const uint32_t *thread, size_t nthreads, uint32_t *out, size_t *start)
{
	memset(start, 0, (nthreads + 1) * sizeof *start);
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		if (thread[i] != thread[run]) {
			start[thread[run] + 1] += i - run;
			run = i;
		}
	}
	if (n)
		start[thread[run] + 1] += n - run;
	for (size_t th = 0; th < nthreads; th++)
		start[th + 1] += start[th];
	uint32_t cur = 0;
	size_t at = start[0];
	for (size_t i = 0; i < n; i++) {
		if (thread[i] != cur) {
			start[cur] = at;
			cur = thread[i];
			at = start[cur];
		}
		out[at++] = (uint32_t)i;
	}
	start[cur] = at;
	memmove(start + 1, start, nthreads * sizeof *start); /* each start was moved to the next run's */
	start[0] = 0;
}

/* Memory events: by time, ties in file order (rule 1). */
static int cmp_mem_time(const void *a, const void *b, void *ctx)
{
	const hm_mem *m = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int64_t tx = hm_mem_ts(m, x), ty = hm_mem_ts(m, y);
	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* sort_rest's sort for the memory events 0..n-1 into order, by cmp_mem_time. They start in
 * file order, so the first pass reads the time column in order, a block at a time, and an
 * event is kept when its time is not below the last kept one's (a tie keeps file order). */
static void sort_mem(const hm_mem *m, uint32_t *order, uint32_t *tmp)
{
	hm_packrd ts;
	hm_packrd_init(&ts, &m->ts);
	size_t a = 0, r = 0;
	int64_t last = INT64_MIN; /* HM_NONE, the least time */
	for (size_t i = 0; i < m->n; i++) {
		int64_t t = hm_packrd_get(&ts, i);
		if (t >= last)
			order[a++] = (uint32_t)i, last = t;
		else
			tmp[r++] = (uint32_t)i;
	}
	sort_rest(order, m->n, a, tmp, r, cmp_mem_time, (void *)m);
}

/* Slices of one thread: by start, longer first, then file order: a later element never
 * encloses an earlier one that starts at the same time with a longer duration. A total
 * order, so there is one sorted order whatever the input. */
static inline int slice_le(const hm_slices *o, uint32_t x, uint32_t y)
{
	if (o->ts[x] != o->ts[y])
		return o->ts[x] < o->ts[y];
	if (o->dur[x] != o->dur[y])
		return o->dur[x] > o->dur[y];
	return x <= y;
}

/* The sorted a (na) and b (nb) merged into out. */
static void merge_slices(const hm_slices *o, const uint32_t *a, size_t na, const uint32_t *b, size_t nb, uint32_t *out)
{
	size_t i = 0, j = 0, k = 0;
	while (i < na && j < nb)
		out[k++] = slice_le(o, a[i], b[j]) ? a[i++] : b[j++];
	memcpy(out + k, a + i, (na - i) * sizeof *a);
	memcpy(out + k + (na - i), b + j, (nb - j) * sizeof *b);
}

/* The n slices v into slice_le's order by merging the runs already in order in pairs,
 * pass after pass, between v and scratch (room for n): a natural merge sort, log2 of the
 * runs passes. */
static void merge_runs(const hm_slices *o, uint32_t *v, size_t n, uint32_t *scratch)
{
	uint32_t *end = NULL; /* where each run ends */
	size_t nr = 0, cap = 0;
	for (size_t i = 1; i <= n; i++)
		if (i == n || !slice_le(o, v[i - 1], v[i])) {
			hm_grow(&end, &cap, nr + 1, sizeof *end);
			end[nr++] = (uint32_t)i;
		}
	uint32_t *src = v, *dst = scratch;
	while (nr > 1) {
		size_t w = 0, from = 0;
		for (size_t k = 0; k < nr; k += 2) {
			size_t mid = end[k], to = k + 1 < nr ? end[k + 1] : mid;
			merge_slices(o, src + from, mid - from, src + mid, to - mid, dst + from);
			end[w++] = (uint32_t)to;
			from = to;
		}
		nr = w;
		uint32_t *t = src;
		src = dst, dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof *v);
	free(end);
}

/* The n slices v of one thread into slice_le's order; tmp has room for n. As sort_rest
 * above, a pass keeps each slice not below the last one kept and moves the others to tmp,
 * which are sorted and merged back. Traces written by a generator have few slices out of
 * place (a ProfilerStep slice after the ops it encloses); real traces have many, in a few
 * long runs: Kineto writes a thread's python_function slices apart from its cpu_ops, and
 * older traces write ops as they end (in the real traces of tests/data, 42-97% of the
 * slices are below one written before them). So the moved ones are sorted by merge_runs,
 * with the free end of v as its scratch, and every comparison is inlined. */
static void sort_slices(const hm_slices *o, uint32_t *v, size_t n, uint32_t *tmp)
{
	size_t a = 0, r = 0;
	for (size_t i = 0; i < n; i++)
		if (a == 0 || slice_le(o, v[a - 1], v[i]))
			v[a++] = v[i];
		else
			tmp[r++] = v[i];
	if (!r)
		return;
	merge_runs(o, tmp, r, v + a);
	for (size_t k = n; r;)
		v[--k] = a && !slice_le(o, v[a - 1], tmp[r - 1]) ? v[--a] : tmp[--r];
}

#define END(o, i) ((o)->ts[i] + (o)->dur[i])

/* hm_innermost for memory event i whose time ts the caller has read already (the sweep
 * reads it once an event: the column is packed). */
static int32_t innermost_at(const hm_file *f, uint32_t i, int64_t ts, unsigned kinds)
{
	const hm_slices *o = &f->t->sl;
	for (int32_t s = f->inner_of[i]; s >= 0; s = f->parent[s])
		if ((kinds & HM_KIND(o->kind[s])) && END(o, s) >= ts)
			return s;
	return -1;
}

/* The op of memory event e at its time ts: the innermost enclosing op, except at a tie. Where times are
 * whole µs (2022-format traces), an event at the very µs where one op ends and a sibling
 * begins lies in both; the allocation is then far more often the finishing op's (its
 * output) than the next one's, so the op that ends then is preferred over ops that start
 * then. Needs parent links up to e's time (called during the sweep). */
static int32_t op_at(const hm_file *f, uint32_t e, int64_t ts)
{
	const hm_slices *o = &f->t->sl;
	int32_t s = innermost_at(f, e, ts, HM_KIND(HM_SL_OP));
	if (s < 0 || o->ts[s] != ts)
		return s;
	for (int32_t p = f->parent[s]; p >= 0; p = f->parent[p])
		if (o->kind[p] == HM_SL_OP && END(o, p) >= ts && o->ts[p] < ts)
			return END(o, p) == ts ? p : s;
	return s;
}

/* The slices by thread for the sweep: thread th's are oi[os[th]..os[th + 1]), and
 * f->parent room for every slice's (the caller's to free: hm_analyze; oi with hm_xunmap,
 * as it is taken before the packed Addr column and freed after it). Pages touched for the
 * first time are costly: allocated without zeroing. The column arrays already hold n
 * 8-byte values, so the sizes do not overflow. */
static void group_slices(hm_file *f, uint32_t **oip, size_t **osp)
{
	const hm_slices *o = &f->t->sl;
	size_t nth = f->t->threads.n;
	f->parent = hm_xrealloc(NULL, o->n * sizeof *f->parent);
	*oip = hm_xmap(o->n * sizeof **oip);
	*osp = hm_xrealloc(NULL, (nth + 1) * sizeof **osp);
	by_thread(o->n, o->thread, nth, *oip, *osp);
}

/* Sort group_slices' runs into slice_le's order where the thread has memory events (the sweep
 * reads no other), has_mem room for a flag a thread, zeroed; then every slice's parent is
 * -1 until the sweep. f->parent is first the sort's scratch (a run is no longer than it). */
static void sort_slices_of(hm_file *f, uint32_t *oi, const size_t *os, uint8_t *has_mem)
{
	const hm_trace *t = f->t;
	const hm_slices *o = &t->sl;
	hm_packrd rth;
	hm_packrd_init(&rth, &t->mem.thread);
	for (size_t i = 0; i < t->mem.n; i++)
		has_mem[hm_packrd_get(&rth, i)] = 1;
	for (size_t th = 0; th < t->threads.n; th++)
		if (has_mem[th])
			sort_slices(o, oi + os[th], os[th + 1] - os[th], (uint32_t *)f->parent);
	for (size_t i = 0; i < o->n; i++)
		f->parent[i] = -1;
}

/* One sweep per thread over slices and memory events in time order with a stack of open
 * slices. A slice whose end is before the current time can enclose nothing later, so it
 * is popped; the top of the stack is then the innermost slice containing the time
 * (closed interval; slices starting at the event's ts enclose it). Each slice records
 * the top as its parent: following parents from the innermost slice and keeping those
 * that still run at the event's time gives exactly the enclosing slices, even when
 * slices overlap without nesting. oi and os: group_slices'. */
static void sweep(hm_file *f, const uint32_t *order, const uint32_t *oi, const size_t *os)
{
	hm_trace *t = f->t;
	hm_slices *o = &t->sl;
	hm_mem *m = &t->mem;
	size_t nth = t->threads.n;
	/* f->inner_of and f->op_of are the caller's (room for m->n, see reuse), written once
	 * each. The threads are swept together, in the time order of the memory events: next[th]
	 * is thread th's next slice to push; its stack is stack[os[th] + th..], sp[th] deep. */
	size_t *next = hm_xrealloc(NULL, nth * sizeof *next), *sp = hm_xcalloc(nth ? nth : 1, sizeof *sp);
	int32_t *stack = hm_xrealloc(NULL, (o->n + nth) * sizeof *stack); /* only the used depth is touched */
	for (size_t th = 0; th < nth; th++)
		next[th] = os[th];
	hm_packrd rth, rts;
	hm_packrd_init(&rth, &m->thread), hm_packrd_init(&rts, &m->ts);
	for (size_t b = 0; b < m->n; b++) {
		uint32_t e = order[b], th = (uint32_t)hm_packrd_get(&rth, e);
		int32_t *st = stack + os[th] + th;
		size_t a = next[th], n = sp[th];
		int64_t ts = hm_packrd_get(&rts, e);
		for (; a < os[th + 1] && o->ts[oi[a]] <= ts; a++) {
			uint32_t op = oi[a];
			while (n && END(o, st[n - 1]) < o->ts[op])
				n--;
			f->parent[op] = n ? st[n - 1] : -1;
			st[n++] = (int32_t)op;
		}
		while (n && END(o, st[n - 1]) < ts)
			n--;
		f->inner_of[e] = n ? st[n - 1] : -1;
		f->op_of[e] = op_at(f, e, ts);
		next[th] = a, sp[th] = n;
	}
	free(next);
	free(sp);
	free(stack);
}

int32_t hm_innermost(const hm_file *f, uint32_t i, unsigned kinds)
{
	return innermost_at(f, i, hm_mem_ts(&f->t->mem, i), kinds);
}

size_t hm_context(const hm_file *f, uint32_t i, unsigned kinds, int32_t *out, size_t cap)
{
	return hm_context_where(f, i, kinds, NULL, out, cap);
}

size_t hm_context_where(const hm_file *f, uint32_t i, unsigned kinds, int (*keep)(const hm_trace *, int32_t), int32_t *out,
			size_t cap)
{
	const hm_slices *o = &f->t->sl;
	int64_t ts = hm_mem_ts(&f->t->mem, i);
	size_t n = 0;
	for (int32_t s = f->inner_of[i]; s >= 0; s = f->parent[s])
		if ((kinds & HM_KIND(o->kind[s])) && END(o, s) >= ts && (!keep || keep(f->t, s))) {
			if (n < cap)
				out[n] = s;
			n++;
		}
	size_t k = n < cap ? n : cap;
	for (size_t j = 0; j < k / 2; j++) {
		int32_t x = out[j];
		out[j] = out[k - 1 - j];
		out[k - 1 - j] = x;
	}
	return n;
}

/* Steps are time windows of a process: an allocation on the autograd thread belongs to
 * the step that the main thread is running. The step of an event is the ProfilerStep#N
 * slice of its process that started last at or before it, if that one still runs. */
typedef struct step {
	uint32_t pid;
	int32_t n;
	int64_t ts, end;
} step;

static int cmp_step(const void *a, const void *b)
{
	const step *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* The pid part of a thread as a dense id, interned once per thread (cache[thread],
 * UINT32_MAX until then). */
static uint32_t pid_of(hm_strtab *pids, uint32_t *cache, const hm_trace *t, uint32_t thread)
{
	if (cache[thread] == UINT32_MAX) {
		const char *key = t->threads.str[thread];
		cache[thread] = hm_strtab_intern(pids, key, hm_thread_split(key, t->threads.len[thread], NULL, NULL));
	}
	return cache[thread];
}

static void steps(hm_file *f, const uint32_t *order)
{
	const hm_trace *t = f->t;
	const hm_slices *o = &t->sl;
	const hm_mem *m = &t->mem; /* f->step_of: the caller's, room for m->n (see reuse) */
	int32_t *name_step = hm_xcalloc(t->names.n, sizeof *name_step);
	for (size_t i = 0; i < t->names.n; i++) {
		const char *s = t->names.str[i];
		int64_t v;
		name_step[i] = strncmp(s, "ProfilerStep#", 13) == 0 && !hm_num_i64(s + 13, strlen(s + 13), 0, 0, &v) &&
				       v >= 0 && v <= INT32_MAX ? (int32_t)v : -1;
	}
	hm_strtab pids = {0};
	uint32_t *pid = hm_xrealloc(NULL, t->threads.n * sizeof *pid);
	memset(pid, 0xff, t->threads.n * sizeof *pid);
	step *st = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < o->n; i++)
		if (name_step[o->name[i]] >= 0) {
			hm_grow(&st, &cap, n + 1, sizeof *st);
			st[n++] = (step){pid_of(&pids, pid, t, o->thread[i]), name_step[o->name[i]], o->ts[i], END(o, i)};
		}
	if (n)
		qsort(st, n, sizeof *st, cmp_step);
	f->step_n = hm_xrealloc(NULL, (n ? n : 1) * sizeof *f->step_n);
	f->step_ts = hm_xrealloc(NULL, (n ? n : 1) * sizeof *f->step_ts);
	for (size_t k = 0; k < n; k++)
		f->step_n[k] = st[k].n, f->step_ts[k] = st[k].ts;
	/* The events come in time order, so each process's first step after the event
	 * (in st's order) only moves forward: at[p], from its first step. Processes seen
	 * only now (ids from np on) have no steps. */
	size_t np = pids.n, *at = hm_xrealloc(NULL, np * sizeof *at);
	for (size_t k = n; k--;)
		at[st[k].pid] = k;
	hm_packrd rth, rts;
	hm_packrd_init(&rth, &m->thread), hm_packrd_init(&rts, &m->ts);
	uint32_t last_th = UINT32_MAX, p = 0; /* a thread's events come in runs */
	for (size_t b = 0; b < m->n; b++) {
		uint32_t i = order[b], th = (uint32_t)hm_packrd_get(&rth, i);
		if (th != last_th)
			last_th = th, p = pid_of(&pids, pid, t, th);
		f->step_of[i] = -1;
		if (p >= np)
			continue;
		size_t k = at[p];
		int64_t ts = hm_packrd_get(&rts, i);
		while (k < n && st[k].pid == p && st[k].ts <= ts)
			k++;
		at[p] = k;
		if (k && st[k - 1].pid == p && st[k - 1].end >= ts)
			f->step_of[i] = (int32_t)(k - 1);
	}
	free(at);
	free(st);
	free(name_step);
	free(pid);
	hm_strtab_free(&pids);
}

/* Open addressing map (linear probing) Addr -> position of the latest live allocation
 * there; several live allocations at one Addr (should not happen) are chained through
 * prev. An Addr leaves the map when its last live allocation is freed, so the map holds
 * the live allocations only: small, and in cache. */
typedef struct amslot {
	uint64_t key;
	int32_t val; /* -1: empty */
} amslot;

typedef struct addrmap {
	amslot *slot;
	size_t mask, n; /* mask + 1 = 2^bits slots, n used: at most half */
	unsigned bits;
} addrmap;

/* The high bits of a multiplicative hash: addresses are aligned to 512 bytes or more,
 * so the low bits of the product would all be zero. */
static size_t am_home(const addrmap *m, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - m->bits));
}

/* The slot of key, or the empty slot where it would go. */
static size_t am_find(const addrmap *m, uint64_t key)
{
	size_t i = am_home(m, key);
	while (m->slot[i].val >= 0 && m->slot[i].key != key)
		i = (i + 1) & m->mask;
	return i;
}

static void am_init(addrmap *m, unsigned bits)
{
	m->bits = bits;
	m->mask = ((size_t)1 << bits) - 1;
	m->n = 0;
	m->slot = hm_xrealloc(NULL, (m->mask + 1) * sizeof *m->slot);
	for (size_t i = 0; i <= m->mask; i++)
		m->slot[i].val = -1;
}

/* Add key, absent, whose empty slot is i. */
static void am_add(addrmap *m, size_t i, uint64_t key, int32_t val)
{
	if (2 * (m->n + 1) > m->mask + 1) {
		addrmap old = *m;
		am_init(m, old.bits + 1);
		for (size_t j = 0; j <= old.mask; j++)
			if (old.slot[j].val >= 0)
				am_add(m, am_find(m, old.slot[j].key), old.slot[j].key, old.slot[j].val);
		free(old.slot);
		i = am_find(m, key);
	}
	m->slot[i] = (amslot){key, val};
	m->n++;
}

/* Empty slot i, moving back the later entries of its cluster that may use it, so that
 * every entry stays reachable from its home slot. */
static void am_del(addrmap *m, size_t i)
{
	for (size_t j = (i + 1) & m->mask; m->slot[j].val >= 0; j = (j + 1) & m->mask)
		if (((j - am_home(m, m->slot[j].key)) & m->mask) >= ((j - i) & m->mask)) {
			m->slot[i] = m->slot[j];
			i = j;
		}
	m->slot[i].val = -1;
	m->n--;
}

/* Rules 2-4: a free pairs with the latest live allocation at the same Addr and size.
 * A snapshot's live blocks that no entry allocated (origin, store.h) are allocations live
 * from the start: before 2. prev has room for s->n; it is read only where written. */
static void pair(hm_series *s, const hm_mem *m, const uint8_t *origin, int32_t *prev)
{
	addrmap am;
	unsigned bits = 4; /* room for the live allocations: few, or up to all of a short series */
	while (bits < 10 && ((size_t)1 << bits) < 2 * s->n)
		bits++;
	am_init(&am, bits);
	hm_packrd rb, ra;
	hm_packrd_init(&rb, &m->bytes), hm_packrd_init(&ra, &m->has_addr);
	for (size_t k = 0; k < s->n; k++) {
		uint32_t e = s->ev[k];
		s->partner[k] = -1;
		int64_t bytes = hm_packrd_get(&rb, e);
		if (bytes == 0 || !hm_packrd_get(&ra, e))
			continue;
		s->has_addr = 1;
		size_t slot = am_find(&am, m->addr[e]);
		if (bytes > 0) {
			if (origin && origin[e] == HM_SNAP_BLOCK)
				s->before[k] = 2;
			prev[k] = am.slot[slot].val;
			if (prev[k] < 0)
				am_add(&am, slot, m->addr[e], (int32_t)k);
			else
				am.slot[slot].val = (int32_t)k;
			continue;
		}
		int32_t *link = &am.slot[slot].val;
		while (*link >= 0 && hm_mem_bytes(m, s->ev[*link]) != -bytes)
			link = &prev[*link];
		if (*link < 0) {
			s->before[k] = 1;
			continue;
		}
		int32_t a = *link;
		*link = prev[a];
		s->partner[k] = a;
		s->partner[a] = (int32_t)k;
		if (am.slot[slot].val < 0)
			am_del(&am, slot);
	}
	free(am.slot);
}

/* A device as one integer that sorts like (type, id). */
static uint64_t dev_key(int32_t type, int32_t id)
{
	return (uint64_t)((uint32_t)type ^ 0x80000000u) << 32 | ((uint32_t)id ^ 0x80000000u);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The devices of the events, sorted, into *keys; sidx (room for m->n) gets the series of
 * each event in time order. The devices are found through a hash map (a trace may have
 * many thousands: a search per event was quadratic). */
static size_t find_devices(const hm_mem *m, const uint32_t *order, uint32_t *sidx, uint64_t **keysp)
{
	addrmap am;
	am_init(&am, 4);
	uint64_t *keys = NULL; /* by first appearance */
	size_t nkeys = 0, cap = 0;
	uint64_t prev = 0;
	for (size_t i = 0; i < m->n; i++) {
		uint64_t key = dev_key(m->dev_type[order[i]], m->dev_id[order[i]]);
		if (i && key == prev) {
			sidx[i] = sidx[i - 1]; /* a device's events come in runs: no lookup */
			continue;
		}
		prev = key;
		size_t slot = am_find(&am, key);
		if (am.slot[slot].val < 0) {
			hm_grow(&keys, &cap, nkeys + 1, sizeof *keys);
			keys[nkeys] = key;
			am_add(&am, slot, key, (int32_t)nkeys++);
			slot = am_find(&am, key);
		}
		sidx[i] = (uint32_t)am.slot[slot].val;
	}
	/* rank: from the order of first appearance to the order of devices (one device, the
	 * usual case, is its own) */
	if (nkeys > 1) {
		qsort(keys, nkeys, sizeof *keys, cmp_u64);
		uint32_t *rank = hm_xrealloc(NULL, nkeys * sizeof *rank);
		for (size_t s = 0; s < nkeys; s++)
			rank[am.slot[am_find(&am, keys[s])].val] = (uint32_t)s;
		for (size_t i = 0; i < m->n; i++)
			sidx[i] = rank[sidx[i]];
		free(rank);
	}
	free(am.slot);
	*keysp = keys;
	return nkeys;
}

/* Series, one per device, ordered by device; their events in time order. sidx has room
 * for m->n. */
static void split(hm_file *f, uint32_t *order, uint32_t *sidx)
{
	const hm_mem *m = &f->t->mem;
	uint64_t *keys;
	size_t nkeys = find_devices(m, order, sidx, &keys);
	f->nseries = nkeys;
	f->series = nkeys ? hm_xcalloc(nkeys, sizeof *f->series) : NULL;
	if (nkeys == 1)
		f->series[0].n = m->n;
	else
		for (size_t i = 0; i < m->n; i++)
			f->series[sidx[i]].n++;
	for (size_t s = 0; s < nkeys; s++) {
		hm_series *x = &f->series[s];
		x->dev_type = (int32_t)((uint32_t)(keys[s] >> 32) ^ 0x80000000u);
		x->dev_id = (int32_t)((uint32_t)keys[s] ^ 0x80000000u);
		hm_device_name(x->device, sizeof x->device, x->dev_type, x->dev_id);
		x->partner = hm_xrealloc(NULL, x->n * sizeof *x->partner); /* all set by pair */
		x->before = hm_xcalloc(x->n, 1);
		x->cat = hm_xcalloc(x->n, sizeof *x->cat);
		if (nkeys > 1) {
			x->ev = hm_xrealloc(NULL, x->n * sizeof *x->ev);
			x->n = 0;
		}
	}
	if (nkeys == 1) /* one device, the usual case: its events are all of them */
		f->series[0].ev = order;
	else
		for (size_t i = 0; i < m->n; i++) {
			hm_series *x = &f->series[sidx[i]];
			x->ev[x->n++] = order[i];
		}
	free(keys);
}

/* Shrink a column to its n elements: columns are sized ahead while a file is read (from
 * its size, or doubling), and what is kept for the report should hold what the file held.
 * A block mapped on its own (util.c maps those of 1 MiB and more) shrinks in place, its
 * tail going back to the system without a copy. A smaller one moves to a block of its
 * size, so that its old block is freed whole for the next file's columns: shrunk in place,
 * it would leave a hole just too small for them, and thousands of small files would
 * spread over fresh memory. */
static void *fit(void *p, size_t n, size_t elsz)
{
	size_t size = (n ? n : 1) * elsz;
	if (malloc_usable_size(p) < (1u << 20)) {
		void *q = malloc(size);
		if (!q)
			return p;
		memcpy(q, p, size);
		free(p);
		return q;
	}
	void *q = realloc(p, size);
	return q ? q : p;
}

#define FIT(arr, n) ((arr) = fit((arr), (n), sizeof *(arr)))

static void fit_columns(hm_trace *t)
{
	hm_mem *m = &t->mem;
	if (m->cap > m->n) {
		FIT(m->addr, m->n);
		m->cap = m->n;
	}
	hm_pack_fit(&m->ts), hm_pack_fit(&m->bytes), hm_pack_fit(&m->thread), hm_pack_fit(&m->has_addr);
	hm_pack_fit(&m->total_alloc), hm_pack_fit(&m->total_res), hm_pack_fit(&m->ev_idx);
	hm_slices *o = &t->sl;
	if (o->cap > o->n) {
		FIT(o->ts, o->n), FIT(o->dur, o->n), FIT(o->name, o->n), FIT(o->thread, o->n);
		FIT(o->cat, o->n), FIT(o->kind, o->n);
		o->cap = o->n;
	}
}

/* Once split has run, each event's device is its series': the two device columns (8 bytes
 * an event, read by nothing later) go back before the analysis adds its own columns
 * (store.h). */
static void drop_devices(hm_mem *m)
{
	free(m->dev_type), free(m->dev_id);
	m->dev_type = m->dev_id = NULL;
}

/* Once the events are paired, Addr is read only to be shown (row.addr, the events CSV):
 * packed, it takes 4 bytes an event or less where neighbouring events are within 4 GiB of
 * each other. The raw column is the caller's to reuse (see reuse). */
static uint64_t *pack_addrs(hm_mem *m)
{
	hm_pack_reserve(&m->addrs, m->n);
	for (size_t i = 0; i < m->n; i++)
		hm_pack_add(&m->addrs, (int64_t)m->addr[i]);
	uint64_t *raw = m->addr;
	m->addr = NULL;
	return raw;
}

/* A column of 4 bytes an event for the analysis in the pages of one it is done with (c, of
 * n elements or more, cut to n; the caller lets go of it), or in fresh ones (c NULL). On a
 * virtual machine the first touch of a page costs more than what is written to it (README
 * "Performance"): the raw addresses become sweep's enclosing slice, the sort's scratch the
 * step column. Each was given back before the column was made, so the peak is as before. */
static int32_t *reuse(void *c, size_t n)
{
	if (c && n) /* no events: c may be a block of one byte, which fit cannot cut to one element */
		return fit(c, n, sizeof(int32_t));
	free(c);
	return hm_xrealloc(NULL, n * sizeof(int32_t));
}

/* hm_analyze's steps on two threads (helper.h), twice: the slices' sort beside the memory
 * events' sort, steps beside the sweep. (Pairing beside packing Addr did not pay: each ran
 * half as fast again beside the other.) The larger of the two sorts stays on the calling
 * thread, which has a core: on a busy machine the helper may share one, and the slices'
 * sort took twice as long there. What the helper allocates is freed before it ends, or
 * small (steps' step_n and step_ts): a thread's first allocation opens a malloc arena of
 * its own, whose fresh pages would add to the peak while the caller's arena has room left
 * by the reading. So the caller allocates the arrays the helper fills. Each part owns what
 * it writes until the join, and neither reads what the other writes before it. */
typedef struct side {
	hm_file *f;
	uint32_t *order, *tmp;
	uint32_t *oi;
	size_t *os;
	uint8_t *has_mem;
} side;

static void side_mem(void *arg)
{
	side *sd = arg;
	sort_mem(&sd->f->t->mem, sd->order, sd->tmp);
}

static void side_sort(void *arg)
{
	side *sd = arg;
	sort_slices_of(sd->f, sd->oi, sd->os, sd->has_mem);
}

static void side_steps(void *arg)
{
	side *sd = arg;
	steps(sd->f, sd->order);
}

hm_file *hm_analyze(hm_trace *t)
{
	fit_columns(t);
	hm_file *f = hm_xcalloc(1, sizeof *f);
	f->t = t;
	f->win_from = f->win_to = HM_NONE;
	hm_mem *m = &t->mem;
	uint32_t *order = hm_xrealloc(NULL, m->n * sizeof *order);
	uint32_t *tmp = hm_xrealloc(NULL, m->n * sizeof *tmp); /* for sort_mem, split and pair */
	side sd = {f, order, tmp, NULL, NULL, hm_xcalloc(t->threads.n ? t->threads.n : 1, 1)};
	group_slices(f, &sd.oi, &sd.os);
	int slices_here = t->sl.n > m->n;
	hm_helper h;
	hm_helper_start(&h, slices_here ? side_mem : side_sort, &sd);
	(slices_here ? side_sort : side_mem)(&sd);
	hm_helper_join(&h);
	split(f, order, tmp);
	drop_devices(m);
	for (size_t s = 0; s < f->nseries; s++)
		pair(&f->series[s], m, t->snap ? t->snap->origin : NULL, (int32_t *)tmp);
	f->inner_of = reuse(pack_addrs(m), m->n);
	f->op_of = reuse(NULL, m->n);
	f->step_of = reuse(tmp, m->n); /* pair is done with it */
	hm_helper_start(&h, side_steps, &sd);
	sweep(f, order, sd.oi, sd.os);
	hm_helper_join(&h);
	hm_xunmap(sd.oi, t->sl.n * sizeof *sd.oi);
	free(sd.os);
	free(sd.has_mem);
	if (f->nseries != 1)
		free(order);
	for (size_t s = 0; s < f->nseries; s++)
		hm_stage_enter(&f->series[s], HM_STAGE_ANALYZED);
	return f;
}

void hm_file_given_cats(hm_file *f, const int32_t *catev)
{
	for (size_t s = 0; s < f->nseries; s++) {
		hm_series *x = &f->series[s];
		hm_stage_enter(x, HM_STAGE_CLASSIFIED);
		for (size_t k = 0; catev && k < x->n; k++) /* "(before window)" gives back what it carried in */
			x->cat[k] = x->before[k] == HM_BEFORE_WINDOW ? 0 : catev[x->ev[k]];
	}
}

void hm_file_free(hm_file *f)
{
	if (!f)
		return;
	for (size_t s = 0; s < f->nseries; s++) {
		hm_series *x = &f->series[s];
		free(x->ev), free(x->partner), free(x->before), free(x->cat), free(x->cats);
		for (size_t i = 0; i < x->nsteps; i++)
			free(x->steps[i].cat_end);
		for (size_t i = 0; i < x->nooms; i++)
			free(x->ooms[i].ops), free(x->ooms[i].cat_at);
		for (size_t i = 0; i < x->nmakers; i++)
			free(x->makers[i].name);
		free(x->steps), free(x->ooms), free(x->makers);
	}
	free(f->series);
	free(f->inner_of);
	free(f->parent);
	free(f->op_of);
	free(f->step_of);
	free(f->step_n);
	free(f->step_ts);
	hm_trace_free(f->t);
	free(f);
}
