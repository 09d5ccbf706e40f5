#define _GNU_SOURCE
/* Steps, OOMs, the allocator's cache and the leak verdict (see explain.h). */
#include "explain.h"
#include "snapout.h"
#include "snapshot.h"
#include "fields.h"
#include "timeline.h"

#include <stdlib.h>
#include <string.h>

#define END(o, i) ((o)->ts[i] + (o)->dur[i])

const char *hm_leak_name(int leak)
{
	switch (leak) {
	case HM_LEAK_NONE: return "none";
	case HM_LEAK_GROWTH: return "growth";
	case HM_LEAK_SURVIVORS: return "survivors";
	default: return "unknown";
	}
}

long hm_explain_at(const hm_series *s, const hm_mem *m, int64_t ts)
{
	size_t lo = 0, hi = s->n; /* first position with a later time */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (hm_mem_ts(m, s->ev[mid]) <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* Position of the last event before ts (strictly), -1 when none. */
static long before(const hm_series *s, const hm_mem *m, int64_t ts)
{
	return ts == INT64_MIN ? -1 : hm_explain_at(s, m, ts - 1);
}

/* The ProfilerStep#N slices of the trace, by start (then the longer first). */
typedef struct stepslice {
	int32_t n;
	uint32_t slice;
	int64_t ts, end;
	int open; /* a snapshot's range with no END (snapshot.h) */
} stepslice;

static int cmp_stepslice(const void *a, const void *b)
{
	const stepslice *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->end < y->end) - (x->end > y->end);
}

static int32_t step_number(const hm_trace *t, uint32_t name)
{
	const char *s = t->names.str[name];
	int64_t v;
	if (strncmp(s, "ProfilerStep#", 13) != 0 || hm_num_i64(s + 13, t->names.len[name] - 13, 0, 0, &v) || v < 0 ||
	    v > INT32_MAX)
		return -1;
	return (int32_t)v;
}

static stepslice *step_slices(const hm_trace *t, size_t *count)
{
	const hm_slices *o = &t->sl;
	int32_t *num = hm_xrealloc(NULL, (t->names.n ? t->names.n : 1) * sizeof *num);
	for (size_t i = 0; i < t->names.n; i++)
		num[i] = step_number(t, (uint32_t)i);
	stepslice *v = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < o->n; i++)
		if (num[o->name[i]] >= 0) {
			hm_grow(&v, &cap, n + 1, sizeof *v);
			v[n++] = (stepslice){num[o->name[i]], (uint32_t)i, o->ts[i], END(o, i),
					     t->snap && !strcmp(t->names.str[o->cat[i]], HM_SNAP_OPEN_RANGE)};
		}
	free(num);
	if (n)
		qsort(v, n, sizeof *v, cmp_stepslice);
	*count = n;
	return v;
}

/* Category values at ascending positions at[0..n) (-1: the start state), one replay. */
static void values_at(const hm_series *s, const hm_mem *m, size_t ncats, const long *at, int64_t **out, size_t n)
{
	int64_t *val = hm_xcalloc(ncats ? ncats : 1, sizeof *val);
	hm_replay it;
	hm_replay_init(&it, s, m, val, ncats);
	size_t j = 0;
	do {
		for (; j < n && at[j] <= it.k; j++)
			memcpy(out[j], val, ncats * sizeof *val);
	} while (j < n && hm_replay_next(&it));
	free(val);
}

/* The device's allocated total before every TOT_EVERY-th position: tot[j] before position
 * j * TOT_EVERY. Kept sparse: a total per event would be 8 bytes an event for the few
 * positions that steps and OOMs ask about (total_after). */
#define TOT_EVERY 64

static int64_t *totals(const hm_series *s, const hm_mem *m)
{
	int64_t *tot = hm_xrealloc(NULL, (s->n / TOT_EVERY + 1) * sizeof *tot), run = s->start_bytes;
	for (size_t k = 0; k < s->n; k++) {
		if (k % TOT_EVERY == 0)
			tot[k / TOT_EVERY] = run;
		run += hm_mem_delta(s, m, k);
	}
	if (s->n % TOT_EVERY == 0)
		tot[s->n / TOT_EVERY] = run;
	return tot;
}

/* The allocated total after position k (before the first event for k = -1). */
static int64_t total_after(const hm_series *s, const hm_mem *m, const int64_t *tot, long k)
{
	size_t to = (size_t)(k + 1), i = to / TOT_EVERY * TOT_EVERY;
	int64_t run = tot[to / TOT_EVERY];
	for (; i < to; i++)
		run += hm_mem_delta(s, m, i);
	return run;
}

/* Steps of a window (window.h) are the slices it overlaps, each cut to it: a step the
 * window cuts is partial, from the window's edge on the cut side. */
static void explain_steps(const hm_file *f, hm_series *s, const stepslice *ss, size_t nss, const int64_t *tot,
			  size_t ncats)
{
	const hm_mem *m = &f->t->mem;
	s->nsteps = nss;
	s->steps = nss ? hm_xcalloc(nss, sizeof *s->steps) : NULL;
	long *at = hm_xrealloc(NULL, (nss ? nss : 1) * sizeof *at);
	int64_t **out = hm_xrealloc(NULL, (nss ? nss : 1) * sizeof *out);
	size_t *ord = hm_xrealloc(NULL, (nss ? nss : 1) * sizeof *ord);
	for (size_t i = 0; i < nss; i++) {
		hm_step *st = &s->steps[i];
		st->step = ss[i].n, st->start_ts = ss[i].ts, st->end_ts = ss[i].end;
		st->partial = st->open = ss[i].open; /* the snapshot ends in it: no step's end */
		if (f->windowed && (st->start_ts < f->win_from || st->end_ts > f->win_to)) {
			st->partial = 1;
			st->start_ts = st->start_ts < f->win_from ? f->win_from : st->start_ts;
			st->end_ts = st->end_ts > f->win_to ? f->win_to : st->end_ts;
		}
		long ks = before(s, m, st->start_ts), ke = hm_explain_at(s, m, st->end_ts);
		st->start_bytes = total_after(s, m, tot, ks), st->end_bytes = total_after(s, m, tot, ke);
		st->growth_bytes = st->end_bytes - st->start_bytes;
		st->peak_bytes = st->start_bytes, st->peak_ts = st->start_ts;
		int64_t run = st->start_bytes;
		for (long k = ks + 1; k <= ke; k++) {
			int64_t b = hm_mem_bytes(m, s->ev[k]); /* packed: read once */
			run += hm_delta_of(s, (size_t)k, b);
			if (run > st->peak_bytes)
				st->peak_bytes = run, st->peak_ts = hm_mem_ts(m, s->ev[k]);
			if (b > 0 && s->partner[k] < 0 && !s->before[k])
				st->survivors_bytes += b;
		}
		if (!s->has_addr) /* no Addr: nothing is paired, so what survives is unknown */
			st->survivors_bytes = HM_NONE;
		st->cat_end = hm_xcalloc(ncats ? ncats : 1, sizeof *st->cat_end);
		at[i] = ke;
		ord[i] = i;
	}
	/* positions ascending for the one replay: steps by start are mostly by end too */
	for (size_t i = 1; i < nss; i++)
		for (size_t j = i; j > 0 && at[ord[j - 1]] > at[ord[j]]; j--) {
			size_t x = ord[j];
			ord[j] = ord[j - 1], ord[j - 1] = x;
		}
	long *sat = hm_xrealloc(NULL, (nss ? nss : 1) * sizeof *sat);
	for (size_t i = 0; i < nss; i++)
		sat[i] = at[ord[i]], out[i] = s->steps[ord[i]].cat_end;
	values_at(s, m, ncats, sat, out, nss);
	free(sat), free(at), free(out), free(ord);
}

static int cmp_outer_first(const void *a, const void *b, void *ctx)
{
	const hm_slices *o = ctx;
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	if (o->ts[x] != o->ts[y])
		return o->ts[x] < o->ts[y] ? -1 : 1;
	if (END(o, x) != END(o, y))
		return END(o, x) > END(o, y) ? -1 : 1;
	return (x > y) - (x < y);
}

/* An OOM's context, as a [memory] event's: the op slices on its thread that enclose it
 * (closed interval), outermost first, and the step its process runs. OOMs are few: a scan
 * of the slices each. */
static void oom_context(const hm_trace *t, hm_oom *o, const stepslice *ss, size_t nss)
{
	const hm_slices *sl = &t->sl;
	size_t cap = 0;
	for (size_t i = 0; i < sl->n; i++)
		if (sl->thread[i] == o->thread && sl->kind[i] == HM_SL_OP && sl->ts[i] <= o->ts && END(sl, i) >= o->ts) {
			hm_grow(&o->ops, &cap, o->nops + 1, sizeof *o->ops);
			o->ops[o->nops++] = (int32_t)i;
		}
	if (o->nops)
		qsort_r(o->ops, o->nops, sizeof *o->ops, cmp_outer_first, (void *)sl);
	o->step = -1, o->step_ts = HM_NONE;
	for (size_t i = 0; i < nss && ss[i].ts <= o->ts; i++)
		if (hm_thread_same_pid(&t->threads, sl->thread[ss[i].slice], o->thread) && ss[i].end >= o->ts)
			o->step = ss[i].n, o->step_ts = ss[i].ts;
}

/* Total Reserved minus Total Allocated; HM_NONE without both, past int64 (Total Reserved
 * is not bounded by the store), or below zero: the CPU allocator reports 0 reserved, so
 * there is no cache to speak of. */
static int64_t gap(int64_t reserved, int64_t allocated)
{
	int64_t g;
	if (reserved == HM_NONE || allocated == HM_NONE || __builtin_sub_overflow(reserved, allocated, &g) || g < 0)
		return HM_NONE;
	return g;
}

static void explain_ooms(hm_file *f, hm_series *s, const stepslice *ss, size_t nss, const int64_t *tot, size_t ncats)
{
	const hm_trace *t = f->t;
	const hm_ooms *oc = &t->oom;
	const hm_mem *m = &t->mem;
	size_t cap = 0;
	for (size_t i = 0; i < oc->n; i++) {
		if (oc->dev_type[i] != s->dev_type || oc->dev_id[i] != s->dev_id ||
		    (f->windowed && (oc->ts[i] < f->win_from || oc->ts[i] > f->win_to)))
			continue;
		hm_grow(&s->ooms, &cap, s->nooms + 1, sizeof *s->ooms);
		hm_oom *o = &s->ooms[s->nooms++];
		memset(o, 0, sizeof *o);
		o->ev = (uint32_t)i, o->ts = oc->ts[i], o->bytes = oc->bytes[i], o->thread = oc->thread[i];
		o->total_allocated = oc->total_alloc[i], o->total_reserved = oc->total_res[i];
		o->reserved_unallocated = gap(o->total_reserved, o->total_allocated);
		o->capacity = hm_store_capacity(t, s->dev_type, s->dev_id);
	}
	/* time order; file order for ties (an insertion sort: OOMs are few) */
	for (size_t i = 1; i < s->nooms; i++)
		for (size_t j = i; j > 0 && s->ooms[j - 1].ts > s->ooms[j].ts; j--) {
			hm_oom x = s->ooms[j];
			s->ooms[j] = s->ooms[j - 1], s->ooms[j - 1] = x;
		}
	long *at = hm_xrealloc(NULL, (s->nooms ? s->nooms : 1) * sizeof *at);
	int64_t **out = hm_xrealloc(NULL, (s->nooms ? s->nooms : 1) * sizeof *out);
	for (size_t i = 0; i < s->nooms; i++) {
		hm_oom *o = &s->ooms[i];
		o->k = before(s, m, o->ts); /* then the events at its time that the file has before it */
		while ((size_t)(o->k + 1) < s->n && hm_mem_ts(m, s->ev[o->k + 1]) == o->ts && s->ev[o->k + 1] < oc->mem_at[o->ev])
			o->k++;
		o->allocated = total_after(s, m, tot, o->k);
		for (size_t k = (size_t)(o->k + 1); k < s->n; k++) {
			int64_t b = hm_mem_bytes(m, s->ev[k]);
			if (b < 0)
				o->freed_after -= b;
		}
		oom_context(t, o, ss, nss);
		o->cat_at = hm_xcalloc(ncats ? ncats : 1, sizeof *o->cat_at);
		at[i] = o->k, out[i] = o->cat_at;
	}
	values_at(s, m, ncats, at, out, s->nooms);
	free(at), free(out);
}

/* Total Reserved minus Total Allocated, both from the trace (a snapshot's events carry
 * both, from its replay): at the peak, and its maximum (the first time it is reached).
 * When the peak is the start state, the events that change no total before the first that
 * does (a snapshot's baseline and live blocks) tell the totals there. */
static void explain_reserved(hm_series *s, const hm_mem *m)
{
	s->reserved_unallocated_at_peak = s->max_reserved_unallocated = s->max_reserved_unallocated_ts = HM_NONE;
	if (s->dev_type == 0) /* the CPU allocator caches nothing: its Total Reserved is 0 */
		return;
	int unchanged = 1; /* every event so far left the start state as it was */
	for (size_t k = 0; k < s->n; k++) {
		uint32_t e = s->ev[k];
		unchanged = unchanged && hm_mem_delta(s, m, k) == 0;
		int64_t g = gap(hm_mem_total_res(m, e), hm_mem_total_alloc(m, e));
		if (g == HM_NONE)
			continue;
		if (s->max_reserved_unallocated == HM_NONE || g > s->max_reserved_unallocated)
			s->max_reserved_unallocated = g, s->max_reserved_unallocated_ts = hm_mem_ts(m, e);
		if ((long)k == s->peak_k || (s->peak_k < 0 && unchanged && s->reserved_unallocated_at_peak == HM_NONE))
			s->reserved_unallocated_at_peak = g;
	}
}

static int cmp_maker(const void *a, const void *b)
{
	const hm_maker *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp(x->name, y->name);
}

#define HM_MAKERS_MAX 5

/* Who made the surviving bytes of the whole steps the verdict read, but the first (its
 * survivors are one-time state: weights, optimizer state) and the last (its survivors may
 * be its results): the innermost module when the trace has them, else the op, else (a
 * snapshot) the first user frame. */
static void makers(const hm_file *f, hm_series *s, const size_t *whole, size_t nwhole)
{
	const hm_trace *t = f->t;
	const hm_mem *m = &t->mem;
	hm_strtab names = {0};
	int64_t *sum = NULL;
	size_t cap = 0;
	for (size_t w = 1; w + 1 < nwhole; w++) {
		const hm_step *st = &s->steps[whole[w]];
		long ks = before(s, m, st->start_ts), ke = hm_explain_at(s, m, st->end_ts);
		for (long k = ks + 1; k <= ke; k++) {
			uint32_t e = s->ev[k];
			int64_t b = hm_mem_bytes(m, e);
			if (b <= 0 || s->partner[k] >= 0 || s->before[k])
				continue;
			hm_rowref r = {f, s, (uint32_t)k};
			hm_value v;
			hm_field_get(&r, HM_F_MODULE, NULL, &v);
			if (v.type != HM_V_STR)
				hm_field_get(&r, HM_F_OP, NULL, &v);
			if (v.type != HM_V_STR) /* a snapshot's rows have frames, no op */
				hm_field_get(&r, HM_F_FRAME, NULL, &v);
			if (v.type != HM_V_STR)
				v.s = "(no op)", v.len = 7;
			uint32_t id = hm_strtab_intern(&names, v.s, v.len);
			size_t old = cap;
			hm_grow(&sum, &cap, id + 1, sizeof *sum);
			memset(sum + old, 0, (cap - old) * sizeof *sum);
			sum[id] += b;
		}
	}
	hm_maker *all = hm_xrealloc(NULL, (names.n ? names.n : 1) * sizeof *all);
	for (size_t i = 0; i < names.n; i++)
		all[i] = (hm_maker){names.str[i], sum[i]};
	if (names.n)
		qsort(all, names.n, sizeof *all, cmp_maker);
	s->nmakers = names.n < HM_MAKERS_MAX ? names.n : HM_MAKERS_MAX;
	s->makers = s->nmakers ? hm_xcalloc(s->nmakers, sizeof *s->makers) : NULL;
	for (size_t i = 0; i < s->nmakers; i++)
		s->makers[i] = (hm_maker){hm_xstrdup(all[i].name), all[i].bytes};
	free(all), free(sum);
	hm_strtab_free(&names);
}

/* The verdict (README "Steps and leaks"): steady growth of end_bytes over every whole
 * step (a step the window cuts is left out), or bytes that survive from every whole step
 * but the last; nothing on fewer than three whole steps. */
static void leak(const hm_file *f, hm_series *s)
{
	s->leak = HM_LEAK_UNKNOWN, s->leak_per_step = 0;
	size_t *whole = hm_xrealloc(NULL, (s->nsteps ? s->nsteps : 1) * sizeof *whole), n = 0;
	for (size_t i = 0; i < s->nsteps; i++)
		if (!s->steps[i].partial)
			whole[n++] = i;
	s->leak_steps = n;
	if (n < HM_LEAK_MIN_STEPS) {
		free(whole);
		return;
	}
	int grows = 1, survives = 1;
	int64_t surv = 0;
	for (size_t w = 0; w < n; w++) {
		const hm_step *st = &s->steps[whole[w]];
		if (w && st->end_bytes <= s->steps[whole[w - 1]].end_bytes)
			grows = 0;
		if (w + 1 < n) {
			if (st->survivors_bytes == HM_NONE || st->survivors_bytes <= 0)
				survives = 0;
			else
				surv += st->survivors_bytes;
		}
	}
	size_t d = n - 1;
	if (grows)
		s->leak = HM_LEAK_GROWTH,
		s->leak_per_step = (s->steps[whole[d]].end_bytes - s->steps[whole[0]].end_bytes) / (int64_t)d;
	else if (survives)
		s->leak = HM_LEAK_SURVIVORS, s->leak_per_step = surv / (int64_t)d;
	else
		s->leak = HM_LEAK_NONE;
	if (s->leak != HM_LEAK_NONE && s->has_addr) /* without Addr, what survives is unknown */
		makers(f, s, whole, n);
	free(whole);
}

void hm_explain(hm_file *f, size_t ncats)
{
	for (size_t i = 0; i < f->nseries; i++)
		hm_stage_enter(&f->series[i], HM_STAGE_EXPLAINED);
	const hm_mem *m = &f->t->mem;
	size_t nss, outside = 0;
	stepslice *ss = step_slices(f->t, &nss);
	size_t matched = 0;
	if (f->windowed) { /* a window (window.h): its steps and OOMs only */
		size_t j = 0;
		for (size_t i = 0; i < nss; i++) /* inside it, or overlapping more than its edge */
			if ((ss[i].ts >= f->win_from && ss[i].end <= f->win_to) || (ss[i].end > f->win_from && ss[i].ts < f->win_to))
				ss[j++] = ss[i];
		nss = j;
		for (size_t i = 0; i < f->t->oom.n; i++)
			outside += f->t->oom.ts[i] < f->win_from || f->t->oom.ts[i] > f->win_to;
	}
	for (size_t i = 0; i < f->nseries; i++) {
		hm_series *s = &f->series[i];
		int64_t *tot = totals(s, m);
		explain_steps(f, s, ss, nss, tot, ncats);
		explain_ooms(f, s, ss, nss, tot, ncats);
		explain_reserved(s, m);
		leak(f, s);
		matched += s->nooms;
		free(tot);
	}
	f->oom_elsewhere = (size_t)f->t->oom_events - matched - outside;
	free(ss);
}

void hm_explain_note_mixed(hm_file *const *files, size_t n, int quiet)
{
	size_t snaps = 0;
	hm_snap_warn(files, n, quiet);
	for (size_t i = 0; i < n; i++)
		snaps += files[i]->t->snap != NULL;
	if (quiet || !snaps || snaps == n)
		return;
	hm_eprintf("hmem: note: %zu memory snapshot%s and %zu trace%s are reported side by side, not joined (matching a "
		   "snapshot's entries to a trace's events by address and time is unverified)\n",
		   snaps, snaps > 1 ? "s" : "", n - snaps, n - snaps > 1 ? "s" : "");
}

/* Why a series has no steps (README "Steps on snapshots"): steps come from ProfilerStep#N
 * slices only, which torch.profiler names and numbers one per prof.step(); a snapshot's
 * slices are its record_function ranges. Read from the store, so a merge says the same. */
int hm_explain_steps_note(const hm_file *f, const hm_series *s, char *buf, size_t n)
{
	const hm_trace *t = f->t;
	if (s->nsteps)
		return 0;
	size_t steps = 0, ranges = 0;
	uint32_t other = UINT32_MAX;
	for (size_t i = 0; i < t->sl.n; i++) {
		if (step_number(t, t->sl.name[i]) >= 0)
			steps++;
		else if (t->sl.kind[i] == HM_SL_ANNOTATION && ranges++ == 0)
			other = t->sl.name[i];
	}
	const char *what = t->snap ? "snapshot" : "trace";
	size_t len = other == UINT32_MAX ? 0 : t->names.len[other];
	if (len > 80) /* an example, cut on a character's first byte */
		for (len = 80; len && (t->names.str[other][len] & 0xc0) == 0x80; len--)
			;
	const char *kind = t->snap ? "range" : "slice";
	if (steps > 1)
		snprintf(buf, n, "none of the %s's %zu ProfilerStep#N %ss overlaps the window", what, steps, kind);
	else if (steps)
		snprintf(buf, n, "the %s's one ProfilerStep#N %s is outside the window", what, kind);
	else if (!t->snap)
		snprintf(buf, n, "the trace has no ProfilerStep#N slice (torch.profiler.profile writes one at each "
				 "prof.step() when it has a schedule)");
	else if (!ranges)
		snprintf(buf, n, "the snapshot has no record_function range (external_annotations, PyTorch 2.5 on, is "
				 "absent or empty; ranges of other threads than _record_memory_history's need "
				 "global_record_annotations=True)");
	else if (ranges > 1)
		snprintf(buf, n, "none of the snapshot's %zu record_function ranges (such as '%.*s') is a ProfilerStep#N, "
				 "which torch.profiler.profile opens at each prof.step() when it has a schedule",
			 ranges, (int)len, t->names.str[other]);
	else
		snprintf(buf, n, "the snapshot's one record_function range ('%.*s') is no ProfilerStep#N, which "
				 "torch.profiler.profile opens at each prof.step() when it has a schedule",
			 (int)len, t->names.str[other]);
	return 1;
}
