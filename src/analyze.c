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

/* Memory events: by time, ties in file order (rule 1). */
static int cmp_mem_time(const void *a, const void *b, void *ctx)
{
	const int64_t *ts = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (ts[x] != ts[y])
		return ts[x] < ts[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Ops: by thread, start, longer first, then file order: a later element never
 * encloses an earlier one that starts at the same time with a longer duration. */
static int cmp_op(const void *a, const void *b, void *ctx)
{
	const hm_ops *o = ctx;
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

/* One sweep per thread over ops and memory events in time order with a stack of open
 * ops. An op whose end is before the current time can enclose nothing later, so it is
 * popped; the top of the stack is then the innermost op containing the time (closed
 * interval; ops starting at the event's ts enclose it). */
static void op_context(hm_file *f)
{
	hm_trace *t = f->t;
	hm_ops *o = &t->ops;
	hm_mem *m = &t->mem;
	f->op_of = hm_xcalloc(m->n, sizeof *f->op_of);
	f->op_parent = hm_xcalloc(o->n, sizeof *f->op_parent);
	uint32_t *oi = hm_xcalloc(o->n, sizeof *oi), *mi = hm_xcalloc(m->n, sizeof *mi);
	int32_t *stack = hm_xcalloc(o->n + 1, sizeof *stack);
	for (size_t i = 0; i < o->n; i++)
		oi[i] = (uint32_t)i, f->op_parent[i] = -1;
	for (size_t i = 0; i < m->n; i++)
		mi[i] = (uint32_t)i;
	if (o->n)
		qsort_r(oi, o->n, sizeof *oi, cmp_op, o);
	if (m->n)
		qsort_r(mi, m->n, sizeof *mi, cmp_mem_thread, m);
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
			while (sp && o->ts[stack[sp - 1]] + o->dur[stack[sp - 1]] < o->ts[op])
				sp--;
			f->op_parent[op] = sp ? stack[sp - 1] : -1;
			stack[sp++] = (int32_t)op;
			continue;
		}
		while (sp && o->ts[stack[sp - 1]] + o->dur[stack[sp - 1]] < m->ts[e])
			sp--;
		f->op_of[e] = sp ? stack[sp - 1] : -1;
		b++;
	}
	free(oi);
	free(mi);
	free(stack);
}

size_t hm_ops_of(const hm_file *f, uint32_t i, int32_t *out, size_t cap)
{
	const hm_ops *o = &f->t->ops;
	int64_t ts = f->t->mem.ts[i];
	size_t n = 0;
	for (int32_t op = f->op_of[i]; op >= 0; op = f->op_parent[op])
		if (o->ts[op] + o->dur[op] >= ts) {
			if (n < cap)
				out[n] = op;
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
		qsort_r(order, m->n, sizeof *order, cmp_mem_time, m->ts);

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
	op_context(f);
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
	free(f->op_of);
	free(f->op_parent);
	hm_trace_free(f->t);
	free(f);
}
