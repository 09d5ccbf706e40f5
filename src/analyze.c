#define _GNU_SOURCE
#include "analyze.h"

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

/* Traces are mostly written in order: a pass that finds the indices already sorted
 * saves the sort. */
static void sort_indices(uint32_t *v, size_t n, cmp_fn cmp, void *ctx)
{
	size_t i = 1;
	while (i < n && cmp(&v[i - 1], &v[i], ctx) <= 0)
		i++;
	if (i < n)
		qsort_r(v, n, sizeof *v, cmp, ctx);
}

/* Memory events: by time, ties in file order (rule 1). */
static int cmp_mem_time(const void *a, const void *b, void *ctx)
{
	const int64_t *ts = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (ts[x] != ts[y])
		return ts[x] < ts[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Slices: by thread, start, longer first, then file order: a later element never
 * encloses an earlier one that starts at the same time with a longer duration. */
static int cmp_slice(const void *a, const void *b, void *ctx)
{
	const hm_slices *o = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (o->thread[x] != o->thread[y])
		return o->thread[x] < o->thread[y] ? -1 : 1;
	if (o->ts[x] != o->ts[y])
		return o->ts[x] < o->ts[y] ? -1 : 1;
	if (o->dur[x] != o->dur[y])
		return o->dur[x] > o->dur[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int cmp_mem_thread(const void *a, const void *b, void *ctx)
{
	const hm_mem *m = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (m->thread[x] != m->thread[y])
		return m->thread[x] < m->thread[y] ? -1 : 1;
	return cmp_mem_time(a, b, m->ts);
}

#define END(o, i) ((o)->ts[i] + (o)->dur[i])

/* One sweep per thread over slices and memory events in time order with a stack of open
 * slices. A slice whose end is before the current time can enclose nothing later, so it
 * is popped; the top of the stack is then the innermost slice containing the time
 * (closed interval; slices starting at the event's ts enclose it). Each slice records
 * the top as its parent: following parents from the innermost slice and keeping those
 * that still run at the event's time gives exactly the enclosing slices, even when
 * slices overlap without nesting. */
static void sweep(hm_file *f)
{
	hm_trace *t = f->t;
	hm_slices *o = &t->sl;
	hm_mem *m = &t->mem;
	f->inner_of = hm_xcalloc(m->n, sizeof *f->inner_of);
	f->parent = hm_xcalloc(o->n, sizeof *f->parent);
	uint32_t *oi = hm_xcalloc(o->n, sizeof *oi), *mi = hm_xcalloc(m->n, sizeof *mi);
	int32_t *stack = hm_xcalloc(o->n + 1, sizeof *stack);
	for (size_t i = 0; i < o->n; i++)
		oi[i] = (uint32_t)i, f->parent[i] = -1;
	for (size_t i = 0; i < m->n; i++)
		mi[i] = (uint32_t)i;
	if (o->n)
		sort_indices(oi, o->n, cmp_slice, o);
	if (m->n)
		sort_indices(mi, m->n, cmp_mem_thread, m);
	size_t a = 0, b = 0, sp = 0;
	uint64_t thread = UINT64_MAX;
	while (b < m->n) {
		uint32_t e = mi[b];
		if (m->thread[e] != thread) {
			thread = m->thread[e];
			sp = 0;
			while (a < o->n && o->thread[oi[a]] < thread)
				a++;
		}
		if (a < o->n && o->thread[oi[a]] == thread && o->ts[oi[a]] <= m->ts[e]) {
			uint32_t op = oi[a++];
			while (sp && END(o, stack[sp - 1]) < o->ts[op])
				sp--;
			f->parent[op] = sp ? stack[sp - 1] : -1;
			stack[sp++] = (int32_t)op;
			continue;
		}
		while (sp && END(o, stack[sp - 1]) < m->ts[e])
			sp--;
		f->inner_of[e] = sp ? stack[sp - 1] : -1;
		b++;
	}
	free(oi);
	free(mi);
	free(stack);
}

int32_t hm_innermost(const hm_file *f, uint32_t i, unsigned kinds)
{
	const hm_slices *o = &f->t->sl;
	int64_t ts = f->t->mem.ts[i];
	for (int32_t s = f->inner_of[i]; s >= 0; s = f->parent[s])
		if ((kinds & HM_KIND(o->kind[s])) && END(o, s) >= ts)
			return s;
	return -1;
}

size_t hm_context(const hm_file *f, uint32_t i, unsigned kinds, int32_t *out, size_t cap)
{
	const hm_slices *o = &f->t->sl;
	int64_t ts = f->t->mem.ts[i];
	size_t n = 0;
	for (int32_t s = f->inner_of[i]; s >= 0; s = f->parent[s])
		if ((kinds & HM_KIND(o->kind[s])) && END(o, s) >= ts) {
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

static uint32_t pid_of(hm_strtab *pids, const hm_trace *t, uint32_t thread)
{
	const char *key = t->threads.str[thread];
	const char *sep = memchr(key, 0x1f, t->threads.len[thread]);
	return hm_strtab_intern(pids, key, (size_t)(sep - key));
}

static void steps(hm_file *f)
{
	const hm_trace *t = f->t;
	const hm_slices *o = &t->sl;
	const hm_mem *m = &t->mem;
	f->step_of = hm_xcalloc(m->n, sizeof *f->step_of);
	for (size_t i = 0; i < m->n; i++)
		f->step_of[i] = -1;
	int32_t *name_step = hm_xcalloc(t->names.n, sizeof *name_step);
	for (size_t i = 0; i < t->names.n; i++) {
		const char *s = t->names.str[i];
		int64_t v;
		name_step[i] = strncmp(s, "ProfilerStep#", 13) == 0 && !hm_num_i64(s + 13, strlen(s + 13), 0, 0, &v) &&
				       v >= 0 && v <= INT32_MAX ? (int32_t)v : -1;
	}
	hm_strtab pids = {0};
	step *st = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < o->n; i++)
		if (name_step[o->name[i]] >= 0) {
			hm_grow(&st, &cap, n + 1, sizeof *st);
			st[n++] = (step){pid_of(&pids, t, o->thread[i]), name_step[o->name[i]], o->ts[i], END(o, i)};
		}
	if (n)
		qsort(st, n, sizeof *st, cmp_step);
	for (size_t i = 0; i < m->n && n; i++) {
		step key = {pid_of(&pids, t, m->thread[i]), 0, m->ts[i], 0};
		size_t lo = 0, hi = n; /* first step after key */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (cmp_step(&st[mid], &key) <= 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && st[lo - 1].pid == key.pid && st[lo - 1].end >= key.ts)
			f->step_of[i] = st[lo - 1].n;
	}
	free(st);
	free(name_step);
	hm_strtab_free(&pids);
}

/* Open addressing map Addr -> position of the latest live allocation there; several
 * live allocations at one Addr (should not happen) are chained through prev. */
typedef struct addrmap {
	uint64_t *key;
	int32_t *val;
	size_t nslot, n;
} addrmap;

static size_t am_find(addrmap *m, uint64_t key)
{
	size_t i = (size_t)((key >> 4) * 0x9e3779b97f4a7c15ull) & (m->nslot - 1);
	while (m->val[i] != -2 && m->key[i] != key)
		i = (i + 1) & (m->nslot - 1);
	return i;
}

/* Rules 2-4: a free pairs with the latest live allocation at the same Addr and size. */
static void pair(hm_series *s, const hm_mem *m)
{
	addrmap am = {0};
	am.nslot = 64;
	while (am.nslot < s->n * 2)
		am.nslot *= 2;
	am.key = hm_xcalloc(am.nslot, sizeof *am.key);
	am.val = hm_xcalloc(am.nslot, sizeof *am.val);
	for (size_t i = 0; i < am.nslot; i++)
		am.val[i] = -2; /* empty; -1 = no live allocation */
	int32_t *prev = hm_xcalloc(s->n, sizeof *prev);
	for (size_t k = 0; k < s->n; k++) {
		uint32_t e = s->ev[k];
		s->partner[k] = -1;
		if (!m->has_addr[e] || m->bytes[e] == 0)
			continue;
		s->has_addr = 1;
		size_t slot = am_find(&am, m->addr[e]);
		if (am.val[slot] == -2) {
			am.key[slot] = m->addr[e];
			am.val[slot] = -1;
		}
		if (m->bytes[e] > 0) {
			prev[k] = am.val[slot];
			am.val[slot] = (int32_t)k;
			continue;
		}
		int32_t *link = &am.val[slot];
		while (*link >= 0 && m->bytes[s->ev[*link]] != -m->bytes[e])
			link = &prev[*link];
		if (*link < 0) {
			s->before[k] = 1;
			continue;
		}
		int32_t a = *link;
		*link = prev[a];
		s->partner[k] = a;
		s->partner[a] = (int32_t)k;
	}
	free(prev);
	free(am.key);
	free(am.val);
}

static int cmp_dev(const void *a, const void *b)
{
	const hm_series *x = a, *y = b;
	if (x->dev_type != y->dev_type)
		return x->dev_type < y->dev_type ? -1 : 1;
	return (x->dev_id > y->dev_id) - (x->dev_id < y->dev_id);
}

hm_file *hm_analyze(hm_trace *t)
{
	hm_file *f = hm_xcalloc(1, sizeof *f);
	f->t = t;
	hm_mem *m = &t->mem;
	uint32_t *order = hm_xcalloc(m->n, sizeof *order);
	for (size_t i = 0; i < m->n; i++)
		order[i] = (uint32_t)i;
	if (m->n)
		sort_indices(order, m->n, cmp_mem_time, m->ts);

	size_t cap = 0;
	for (size_t i = 0; i < m->n; i++) {
		uint32_t e = order[i];
		size_t s = 0;
		while (s < f->nseries && (f->series[s].dev_type != m->dev_type[e] || f->series[s].dev_id != m->dev_id[e]))
			s++;
		if (s == f->nseries) {
			hm_grow(&f->series, &cap, s + 1, sizeof *f->series);
			memset(&f->series[s], 0, sizeof *f->series);
			f->series[s].dev_type = m->dev_type[e];
			f->series[s].dev_id = m->dev_id[e];
			f->nseries++;
		}
		f->series[s].n++;
	}
	if (f->nseries)
		qsort(f->series, f->nseries, sizeof *f->series, cmp_dev);
	for (size_t s = 0; s < f->nseries; s++) {
		hm_series *x = &f->series[s];
		hm_device_name(x->device, sizeof x->device, x->dev_type, x->dev_id);
		x->ev = hm_xcalloc(x->n, sizeof *x->ev);
		x->partner = hm_xcalloc(x->n, sizeof *x->partner);
		x->before = hm_xcalloc(x->n, 1);
		x->cat = hm_xcalloc(x->n, sizeof *x->cat);
		x->n = 0;
	}
	for (size_t i = 0; i < m->n; i++) {
		uint32_t e = order[i];
		size_t s = 0;
		while (f->series[s].dev_type != m->dev_type[e] || f->series[s].dev_id != m->dev_id[e])
			s++;
		f->series[s].ev[f->series[s].n++] = e;
	}
	free(order);
	for (size_t s = 0; s < f->nseries; s++)
		pair(&f->series[s], m);
	sweep(f);
	f->op_of = hm_xcalloc(m->n, sizeof *f->op_of);
	for (size_t i = 0; i < m->n; i++)
		f->op_of[i] = hm_innermost(f, (uint32_t)i, HM_KIND(HM_SL_OP));
	steps(f);
	return f;
}

void hm_file_free(hm_file *f)
{
	if (!f)
		return;
	for (size_t s = 0; s < f->nseries; s++) {
		hm_series *x = &f->series[s];
		free(x->ev), free(x->partner), free(x->before), free(x->cat), free(x->cats);
	}
	free(f->series);
	free(f->inner_of);
	free(f->parent);
	free(f->op_of);
	free(f->step_of);
	hm_trace_free(f->t);
	free(f);
}
