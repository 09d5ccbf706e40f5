#define _GNU_SOURCE
#include "timeline.h"

#include <stdlib.h>
#include <string.h>

/* Rule 5: "(before trace)" is fixed by the first Total Allocated the series reports, so
 * that the sum of categories equals it there; without any, it is the least amount that
 * keeps the total non-negative. Rule 3 frees hold their size from the start (held), and so
 * do allocations live from the start (before 2: a snapshot's live blocks no entry made).
 * Returns "(before trace)"'s start: the start state is it plus held. */
static int64_t rule5(const hm_walk *w)
{
	if (w->first_ta != HM_NONE)
		return w->first_ta - w->run_at_ta - w->held;
	return w->held + w->min_run < 0 ? -(w->held + w->min_run) : 0;
}

/* The device's peak is the first state above every earlier one: its position in run is
 * the same whatever the start state. Total Allocated is checked against the start state,
 * which the first one fixes (rule 5) unless a window's base does. */
void hm_timeline_walk(const hm_series *s, const hm_mem *m, hm_walk *out)
{
	hm_walk v = {.first_ta = HM_NONE, .peak_k = -1, .first_mismatch = -1, .max_reserved = HM_NONE,
		    .gap_at_peak = HM_NONE, .max_gap = HM_NONE, .max_gap_ts = HM_NONE}, *w = &v; /* in registers */
	int64_t start = s->based ? s->base : HM_NONE; /* once known */
	int64_t gap_start = HM_NONE; /* at the first event with a gap while every change was 0 */
	int unchanged = 1, cpu = s->dev_type == 0;
	hm_packrd rb, rta, rtr;
	hm_packrd_init(&rb, &m->bytes), hm_packrd_init(&rta, &m->total_alloc), hm_packrd_init(&rtr, &m->total_res);
	for (size_t k = 0; k < s->n; k++) {
		uint32_t e = s->ev[k];
		int64_t b = hm_packrd_get(&rb, e), d = hm_delta_of(s, k, b), ta = hm_packrd_get(&rta, e);
		if (s->before[k])
			w->held += b < 0 ? -b : b;
		if (b > 0)
			w->allocs++;
		else if (b < 0)
			w->frees++, w->matched_frees += s->partner[k] >= 0;
		else
			w->zero_events++;
		w->run += d;
		if (w->run < w->min_run)
			w->min_run = w->run;
		int peak = w->run > w->max_run;
		if (peak)
			w->max_run = w->run, w->peak_k = (long)k;
		if (w->first_ta == HM_NONE && ta != HM_NONE) {
			w->first_ta = ta, w->run_at_ta = w->run;
			if (start == HM_NONE)
				start = ta - w->run;
		}
		if (ta != HM_NONE && ta != start + w->run && w->mismatches++ == 0)
			w->first_mismatch = (long)k;
		int64_t tr = hm_packrd_get(&rtr, e);
		if (tr != HM_NONE && (w->max_reserved == HM_NONE || tr > w->max_reserved))
			w->max_reserved = tr;
		unchanged = unchanged && d == 0;
		if (cpu) /* the CPU allocator caches nothing: its Total Reserved is 0 */
			continue;
		int64_t g = hm_gap(tr, ta);
		if (peak)
			w->gap_at_peak = g;
		if (g == HM_NONE)
			continue;
		if (w->max_gap == HM_NONE || g > w->max_gap)
			w->max_gap = g, w->max_gap_ts = hm_mem_ts(m, e);
		if (unchanged && gap_start == HM_NONE)
			gap_start = g;
	}
	if (w->peak_k < 0) /* the start state's totals: those of the events that left it as it was */
		w->gap_at_peak = gap_start;
	*out = v;
}

int64_t hm_timeline_start_bytes(const hm_series *s, const hm_mem *m)
{
	hm_walk w;
	hm_timeline_walk(s, m, &w);
	return rule5(&w) + w.held;
}

void hm_timeline_start(const hm_series *s, int64_t *val, size_t ncats)
{
	for (size_t c = 0; c < ncats; c++)
		val[c] = c < s->ncats ? s->cats[c].start : 0;
}

/* The categories over positions [from, to): val (from 0 at the start) and each category's
 * peak of it go up by the events' deltas, and the start gets what rule 3 frees and live
 * blocks hold. */
static void cat_span(hm_series *s, hm_packrd *rb, int64_t *val, size_t from, size_t to)
{
	for (size_t k = from; k < to; k++) {
		int32_t c = s->cat[k];
		if (c < 0)
			continue;
		int64_t b = hm_packrd_get(rb, s->ev[k]);
		hm_catstat *cs = &s->cats[c];
		cs->used = 1;
		if (s->before[k])
			cs->start += b < 0 ? -b : b;
		if ((val[c] += hm_delta_of(s, k, b)) > cs->peak)
			cs->peak = val[c];
		if (b > 0)
			cs->allocs++, cs->alloc_bytes += (uint64_t)b;
	}
}

void hm_timeline(hm_series *s, const hm_mem *m, size_t ncats)
{
	hm_timeline_with(s, m, ncats, NULL);
}

/* Two passes: the walk, then the categories', which reads the peak's position from the
 * walk to keep each category's value there. The categories' pass counts from 0 and adds
 * the start state last: a category's peak is its start plus the highest its changes add
 * up to (0 at least). */
void hm_timeline_with(hm_series *s, const hm_mem *m, size_t ncats, const hm_walk *walked)
{
	hm_stage_enter(s, HM_STAGE_TIMELINE);
	free(s->cats);
	s->cats = hm_xcalloc(ncats, sizeof *s->cats);
	s->ncats = ncats;
	hm_walk w;
	if (walked)
		w = *walked;
	else
		hm_timeline_walk(s, m, &w);
	s->allocs = w.allocs, s->frees = w.frees, s->matched_frees = w.matched_frees, s->zero_events = w.zero_events;
	s->mismatches = w.mismatches, s->first_mismatch = w.first_mismatch, s->max_reserved = w.max_reserved;
	s->reserved_unallocated_at_peak = w.gap_at_peak;
	s->max_reserved_unallocated = w.max_gap, s->max_reserved_unallocated_ts = w.max_gap_ts;
	int64_t b0 = s->based ? s->base - w.held : rule5(&w); /* a window's: what was live at its opening */
	s->start_bytes = b0 + w.held;
	s->peak = s->start_bytes + w.max_run, s->peak_k = w.peak_k;
	s->end_bytes = s->start_bytes + w.run;
	s->peak_ts = s->n ? hm_mem_ts(m, s->ev[s->peak_k < 0 ? 0 : (size_t)s->peak_k]) : s->base_ts;

	int64_t *val = hm_xcalloc(ncats ? ncats : 1, sizeof *val);
	hm_packrd rb;
	hm_packrd_init(&rb, &m->bytes);
	cat_span(s, &rb, val, 0, (size_t)(s->peak_k + 1));
	for (size_t c = 0; c < ncats; c++)
		s->cats[c].at_peak = val[c];
	cat_span(s, &rb, val, (size_t)(s->peak_k + 1), s->n);
	s->cats[HM_CAT_BEFORE].start += b0;
	for (size_t c = 0; c < ncats; c++) {
		hm_catstat *cs = &s->cats[c];
		cs->used = cs->used || cs->start != 0 || c == HM_CAT_BEFORE;
		cs->peak += cs->start, cs->at_peak += cs->start, cs->end = val[c] + cs->start;
	}
	free(val);
}

/* A bucket's minimum and maximum, in time order. */
static size_t put_bucket(int64_t *ts, int64_t *bytes, size_t out, int64_t mn, int64_t tmn, int64_t mx, int64_t tmx)
{
	int min_first = tmn <= tmx;
	ts[out] = min_first ? tmn : tmx, bytes[out++] = min_first ? mn : mx;
	ts[out] = min_first ? tmx : tmn, bytes[out++] = min_first ? mx : mn;
	return out;
}

size_t hm_timeline_points(const hm_series *s, const hm_mem *m, size_t cat, size_t ncats, uint64_t points,
			  int64_t *val, int64_t *ts, int64_t *bytes)
{
	int64_t t0 = s->n ? hm_mem_ts(m, s->ev[0]) : 0, t1 = s->n ? hm_mem_ts(m, s->ev[s->n - 1]) : 0;
	int all = !points || points >= (s->n + 2) / 2; /* n + 1 states fit in 2 * points */
	size_t out = 0;
	long bucket = -1; /* its minimum and maximum seen, with their times */
	int64_t mn = 0, mx = 0, tmn = 0, tmx = 0;
	hm_replay it;
	hm_replay_init(&it, s, m, val, ncats);
	do {
		int64_t t = it.ts, v = it.cat_values[cat];
		if (all) {
			ts[out] = t, bytes[out++] = v;
			continue;
		}
		long b = t1 > t0 ? (long)((double)(t - t0) / (double)(t1 - t0) * (double)points) : 0;
		if (b >= (long)points)
			b = (long)points - 1;
		if (b == bucket) {
			if (v < mn)
				mn = v, tmn = t;
			if (v > mx)
				mx = v, tmx = t;
			continue;
		}
		if (bucket >= 0)
			out = put_bucket(ts, bytes, out, mn, tmn, mx, tmx);
		bucket = b, mn = mx = v, tmn = tmx = t;
	} while (hm_replay_next(&it));
	if (!all && bucket >= 0)
		out = put_bucket(ts, bytes, out, mn, tmn, mx, tmx);
	return out;
}

static int cmp_at_peak(const void *a, const void *b, void *ctx)
{
	const hm_series *s = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	if ((x == HM_CAT_BEFORE) != (y == HM_CAT_BEFORE))
		return x == HM_CAT_BEFORE ? -1 : 1;
	const hm_catstat *cx = &s->cats[x], *cy = &s->cats[y];
	if (cx->at_peak != cy->at_peak)
		return cx->at_peak > cy->at_peak ? -1 : 1;
	if (cx->peak != cy->peak)
		return cx->peak > cy->peak ? -1 : 1;
	return x < y ? -1 : 1;
}

size_t hm_categories_by_peak(const hm_series *s, size_t *order)
{
	size_t n = 0;
	for (size_t c = 0; c < s->ncats; c++)
		if (s->cats[c].used)
			order[n++] = c;
	if (n)
		qsort_r(order, n, sizeof *order, cmp_at_peak, (void *)s);
	return n;
}

/* Positions in a series (sorted_by's) by the size of their event, largest first. */
typedef struct sorted_by {
	const hm_series *s;
	const hm_mem *m;
} sorted_by;

static int cmp_size(const void *a, const void *b, void *ctx)
{
	const sorted_by *o = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int64_t bx = hm_mem_bytes(o->m, o->s->ev[x]), by = hm_mem_bytes(o->m, o->s->ev[y]);
	bx = bx < 0 ? -bx : bx;
	by = by < 0 ? -by : by;
	if (bx != by)
		return bx > by ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Live at position p (after applying event p; p = -1 is the state before the first). */
static size_t live_after(const hm_series *s, const hm_mem *m, long p, uint32_t *out, size_t cap)
{
	size_t n = 0;
	if (!s->has_addr)
		return 0; /* without Addr, frees cannot be matched: nothing is known to be live */
	uint32_t *all = hm_xcalloc(s->n + 1, sizeof *all);
	for (size_t k = 0; k < s->n; k++) {
		int64_t b = hm_mem_bytes(m, s->ev[k]);
		int live = b > 0 ? (s->before[k] == 2 || (long)k <= p) && (s->partner[k] < 0 || s->partner[k] > p)
				 : s->before[k] && (long)k > p;
		if (live)
			all[n++] = (uint32_t)k;
	}
	sorted_by o = {s, m};
	if (n)
		qsort_r(all, n, sizeof *all, cmp_size, &o);
	memcpy(out, all, (n < cap ? n : cap) * sizeof *out);
	free(all);
	return n;
}

size_t hm_live_at_peak(const hm_series *s, const hm_mem *m, uint32_t *out, size_t cap)
{
	return live_after(s, m, s->peak_k, out, cap);
}

size_t hm_live_at(const hm_series *s, const hm_mem *m, int64_t ts, uint32_t *out, size_t cap)
{
	long p = -1; /* the last event at or before ts */
	while (p + 1 < (long)s->n && hm_mem_ts(m, s->ev[p + 1]) <= ts)
		p++;
	return live_after(s, m, p, out, cap);
}
