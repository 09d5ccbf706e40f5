/* timeline: exact per-category accumulation over one series, its peaks and checks against
 * the trace's own Total Allocated, and the one replay of a series (hm_replay) that every
 * writer showing a timeline reads. Plain C, no Lua.
 *
 * Ownership: hm_timeline fills the timeline fields of a series (analyze.h) and owns
 * s->cats through the series (hm_file_free frees it); everything else here only reads
 * the series and its trace, and writes into buffers its caller owns. */
#ifndef HM_TIMELINE_H
#define HM_TIMELINE_H

#include "analyze.h"

#define HM_CAT_BEFORE 0 /* category id of "(before trace)" */

/* Fill s's counts, peak, mismatches, what the allocator holds back and s->cats[0..ncats)
 * from s->cat (every non-zero-byte event must be classified). Replaces any earlier s->cats. */
void hm_timeline(hm_series *s, const hm_mem *m, size_t ncats);

/* What hm_timeline finds of a series without its categories, in its first pass. */
typedef struct hm_walk {
	int64_t run;       /* the sum of the changes (hm_delta_of) */
	int64_t held;      /* what rule 3 frees and live blocks hold from the start */
	int64_t first_ta, run_at_ta; /* the first Total Allocated (HM_NONE: none), run after its event */
	int64_t min_run, max_run; /* of 0 (the start) and run after each event */
	long peak_k;       /* the first position where run is max_run, -1 when that is 0 */
	uint64_t allocs, frees, matched_frees, zero_events, mismatches;
	long first_mismatch;
	int64_t max_reserved, gap_at_peak, max_gap, max_gap_ts; /* as the series' (analyze.h) */
} hm_walk;

/* That pass alone, into *w (the caller's). It reads only what the analysis and the window
 * wrote (groups 1 and 2 of the series) and writes nothing else, so a run has it done on
 * another thread while classification writes s->cat (src/run.c). */
void hm_timeline_walk(const hm_series *s, const hm_mem *m, hm_walk *w);

/* hm_timeline taking the first pass from w, hm_timeline_walk's on s as it is now (NULL:
 * hm_timeline walks s itself). */
void hm_timeline_with(hm_series *s, const hm_mem *m, size_t ncats, const hm_walk *w);

/* The device total before the first event of s by rule 5 (Semantics), ignoring any window
 * base: what a window reads to carry in what was live at its opening. */
int64_t hm_timeline_start_bytes(const hm_series *s, const hm_mem *m);

/* Total Reserved minus Total Allocated; HM_NONE without both, past int64 (Total Reserved
 * is not bounded by the store), or below zero: the CPU allocator reports 0 reserved, so
 * there is no cache to speak of. */
static inline int64_t hm_gap(int64_t reserved, int64_t allocated)
{
	int64_t g;
	if (reserved == HM_NONE || allocated == HM_NONE || __builtin_sub_overflow(reserved, allocated, &g) || g < 0)
		return HM_NONE;
	return g;
}

/* The category values before the first event: val[c] = s->cats[c].start (0 past s->ncats). */
void hm_timeline_start(const hm_series *s, int64_t *val, size_t ncats);

/* The replay of one series (after hm_timeline): the state before its first event, then the
 * state after each event, in time order. Every output that shows a timeline reads its
 * states from here:
 *
 *     hm_replay it;
 *     hm_replay_init(&it, s, m, val, ncats); // it holds the start state (it.k == -1)
 *     while (hm_replay_next(&it))            // it holds the state after event it.k
 *             use(it.ts, it.total, it.reserved, it.cat_values);
 *
 * val is the caller's room for ncats category values (on the stack, malloc'd, or a Lua
 * userdata so that nothing malloc'd is held across a Lua call that can raise); the replay
 * writes there and allocates nothing. The series and its trace outlive the replay. */
typedef struct hm_replay {
	long k;             /* position in the series of the event just applied; -1: the start */
	uint32_t e;         /* that event's index in the trace's memory columns (k >= 0) */
	enum hm_kind kind;  /* that event's kind (HM_ZERO at the start) */
	int64_t ts;         /* ns: that event's time; at the start, the first event's (none: the
			     * window's opening, else 0) */
	int64_t bytes;      /* that event's signed bytes (0 at the start) */
	int32_t cat;        /* the category it changed, -1 for none (and at the start) */
	int64_t total;      /* bytes allocated on the device after it (s->start_bytes at the start) */
	int64_t reserved;   /* the trace's Total Reserved at that event; HM_NONE without one and at the start */
	const int64_t *cat_values; /* [ncats]: each category's bytes after it (= val) */
	const hm_series *s; /* private from here */
	const hm_mem *m;
	int64_t *val;
} hm_replay;

static inline void hm_replay_init(hm_replay *it, const hm_series *s, const hm_mem *m, int64_t *val, size_t ncats)
{
	hm_timeline_start(s, val, ncats);
	*it = (hm_replay){.k = -1, .kind = HM_ZERO, .ts = s->n ? hm_mem_ts(m, s->ev[0]) : s->base_ts, .cat = -1,
			  .total = s->start_bytes, .reserved = HM_NONE, .cat_values = val, .s = s, .m = m, .val = val};
}

/* Applies the next event: 1 with it holding the state after it, 0 past the last. Inline:
 * writers call it once per memory event. */
static inline int hm_replay_next(hm_replay *it)
{
	if ((size_t)(it->k + 1) >= it->s->n)
		return 0;
	size_t k = (size_t)++it->k;
	uint32_t e = it->s->ev[k];
	int64_t b = hm_mem_bytes(it->m, e);
	int32_t c = it->s->cat[k];
	it->e = e;
	it->kind = hm_kind_of(b);
	it->ts = hm_mem_ts(it->m, e);
	it->bytes = b;
	it->cat = c;
	int64_t d = hm_delta_of(it->s, k, b); /* live from the start: in the start state */
	it->total += d;
	it->reserved = hm_mem_total_res(it->m, e);
	if (c >= 0)
		it->val[c] += d;
	return 1;
}

/* One category's timeline for a plot: (ts, bytes) at the start and after every event;
 * with points > 0 and more than 2 * points states, the minimum and the maximum of each of
 * points equal time buckets (in time order), so no peak is lost. Writes to ts and bytes
 * (room for s->n + 1 each, or 2 * points when fewer) and returns how many; val is room for
 * ncats values, for the replay. */
size_t hm_timeline_points(const hm_series *s, const hm_mem *m, size_t cat, size_t ncats, uint64_t points,
			  int64_t *val, int64_t *ts, int64_t *bytes);

/* The categories that take part in s, for tables: "(before trace)" first, then the largest
 * at the device's peak (then by own peak, then by id). Writes them to order (room for
 * s->ncats) and returns how many. */
size_t hm_categories_by_peak(const hm_series *s, size_t *order);

/* The allocations live at the device's peak, largest first (ties: earlier first), as
 * positions in s: allocations made before the peak and freed after it (or never), and
 * frees of memory from before the trace that happen after it. Writes at most cap
 * positions to out; returns how many there are in all. */
size_t hm_live_at_peak(const hm_series *s, const hm_mem *m, uint32_t *out, size_t cap);

/* The same for any time (ns): live at ts means allocated at or before it and not freed
 * at or before it. */
size_t hm_live_at(const hm_series *s, const hm_mem *m, int64_t ts, uint32_t *out, size_t cap);

#endif
