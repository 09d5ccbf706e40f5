#define _GNU_SOURCE
#include "timeline.h"

#include <stdlib.h>
#include <string.h>

/* Rule 5: "(before trace)" is fixed by the first Total Allocated the series reports, so
 * that the sum of categories equals it there; without any, it is the least amount that
 * keeps the total non-negative. Rule 3 frees hold their size from the start (*held), and so
 * do allocations live from the start (before 2: a snapshot's live blocks no entry made). */
static int64_t rule5(const hm_series *s, const hm_mem *m, int64_t *held)
{
	int64_t run = 0, min_run = 0, first_ta = HM_NONE, run_at_ta = 0;
	*held = 0;
	hm_packrd rb, rta;
	hm_packrd_init(&rb, &m->bytes), hm_packrd_init(&rta, &m->total_alloc);
	for (size_t k = 0; k < s->n; k++) {
		uint32_t e = s->ev[k];
		int64_t b = hm_packrd_get(&rb, e);
		if (s->before[k])
			*held += b < 0 ? -b : b;
		run += hm_delta_of(s, k, b);
		if (run < min_run)
			min_run = run;
		if (first_ta == HM_NONE && (first_ta = hm_packrd_get(&rta, e)) != HM_NONE)
			run_at_ta = run;
	}
	if (first_ta != HM_NONE)
		return first_ta - run_at_ta - *held;
	return *held + min_run < 0 ? -(*held + min_run) : 0;
}

int64_t hm_timeline_start_bytes(const hm_series *s, const hm_mem *m)
{
	int64_t held, b0 = rule5(s, m, &held);
	return b0 + held;
}

/* The start state: rule 5's, or in a window what was live at its opening (window.c), all
 * of it in category 0 but what its carried-in frees and live blocks hold. */
static void start_values(hm_series *s, const hm_mem *m)
{
	int64_t held, b0 = rule5(s, m, &held);
	for (size_t k = 0; k < s->n; k++)
		if (s->before[k]) {
			int64_t b = hm_mem_bytes(m, s->ev[k]);
			s->cats[s->cat[k]].start += b < 0 ? -b : b;
		}
	if (s->based)
		b0 = s->base - held;
	s->cats[HM_CAT_BEFORE].start += b0;
	s->start_bytes = b0 + held;
}

void hm_timeline_start(const hm_series *s, int64_t *val, size_t ncats)
{
	for (size_t c = 0; c < ncats; c++)
		val[c] = c < s->ncats ? s->cats[c].start : 0;
}

void hm_timeline(hm_series *s, const hm_mem *m, size_t ncats)
{
	hm_stage_enter(s, HM_STAGE_TIMELINE);
	free(s->cats);
	s->cats = hm_xcalloc(ncats, sizeof *s->cats);
	s->ncats = ncats;
	s->allocs = s->frees = s->matched_frees = s->zero_events = s->mismatches = 0;
	s->first_mismatch = -1;
	s->max_reserved = HM_NONE;
	start_values(s, m);

	int64_t *val = hm_xcalloc(ncats, sizeof *val);
	hm_replay it;
	hm_replay_init(&it, s, m, val, ncats);
	s->peak = it.total;
	s->peak_k = -1;
	for (size_t c = 0; c < ncats; c++) {
		s->cats[c].peak = val[c];
		s->cats[c].used = val[c] != 0 || c == HM_CAT_BEFORE;
	}
	hm_packrd rta;
	hm_packrd_init(&rta, &m->total_alloc);
	while (hm_replay_next(&it)) {
		int64_t b = it.bytes;
		if (it.kind == HM_ALLOC)
			s->allocs++;
		else if (it.kind == HM_FREE)
			s->frees++, s->matched_frees += s->partner[it.k] >= 0;
		else
			s->zero_events++;
		if (it.cat >= 0) {
			hm_catstat *cs = &s->cats[it.cat];
			cs->used = 1;
			if (val[it.cat] > cs->peak)
				cs->peak = val[it.cat];
			if (b > 0)
				cs->allocs++, cs->alloc_bytes += (uint64_t)b;
		}
		if (it.total > s->peak)
			s->peak = it.total, s->peak_k = it.k;
		int64_t ta = hm_packrd_get(&rta, it.e);
		if (ta != HM_NONE && ta != it.total && s->mismatches++ == 0)
			s->first_mismatch = it.k;
		if (it.reserved != HM_NONE && (s->max_reserved == HM_NONE || it.reserved > s->max_reserved))
			s->max_reserved = it.reserved;
	}
	for (size_t c = 0; c < ncats; c++)
		s->cats[c].end = val[c];
	s->end_bytes = it.total;
	s->peak_ts = s->n ? hm_mem_ts(m, s->ev[s->peak_k < 0 ? 0 : (size_t)s->peak_k]) : s->base_ts;

	/* Category values at the device's peak: replay up to it rather than copying every
	 * category at every new peak (a growing trace sets a new peak at most events). */
	hm_replay_init(&it, s, m, val, ncats);
	while (it.k < s->peak_k && hm_replay_next(&it))
		;
	for (size_t c = 0; c < ncats; c++)
		s->cats[c].at_peak = val[c];
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
