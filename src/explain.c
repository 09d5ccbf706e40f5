#define _GNU_SOURCE
/* Steps, OOMs and the leak verdict (see explain.h). */
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

/* hm_explain_at searching out from near (a position found for a time close to ts) in
 * growing strides, then between the last two: steps come by start, each close to the
 * last, and a search from the whole series' middle would miss the cache at every probe. */
static long at_near(const hm_series *s, const hm_mem *m, int64_t ts, long near)
{
#define TS(k) hm_mem_ts(m, s->ev[k])
	size_t n = s->n, h = near < 0 ? 0 : (size_t)near + 1 < n ? (size_t)near + 1 : n, lo, hi, step = 1;
	if (h < n && TS(h) <= ts) { /* the first later time is past h */
		for (lo = h + 1; lo + step - 1 < n && TS(lo + step - 1) <= ts; step *= 2)
			lo += step;
		hi = lo + step - 1 < n ? lo + step - 1 : n;
	} else { /* at h or before */
		for (hi = h; hi >= step && TS(hi - step) > ts; step *= 2)
			hi -= step;
		lo = hi >= step ? hi - step + 1 : 0;
	}
	while (lo < hi) { /* times before lo are at or before ts, from hi on later */
		size_t mid = lo + (hi - lo) / 2;
		if (TS(mid) <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
#undef TS
	return (long)lo - 1;
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

/* Where the sweep (below) writes the state down: after position k (-1: the start state),
 * for the start or the end of step i, or OOM i. A step's start mark also holds where it
 * ends (to): the step is open over the events (k, to]. */
enum { AT_START, AT_END, AT_OOM };

typedef struct mark {
	long k, to;
	int what;
	size_t i;
} mark;

typedef struct marks {
	mark *v;
	size_t n, cap;
} marks;

static void add_mark(marks *ms, long k, long to, int what, size_t i)
{
	hm_grow(&ms->v, &ms->cap, ms->n + 1, sizeof *ms->v);
	ms->v[ms->n++] = (mark){k, to, what, i};
}

static int cmp_mark(const void *a, const void *b)
{
	const mark *x = a, *y = b;
	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	if (x->what != y->what) /* at one position a step opens before one closes */
		return x->what < y->what ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* Steps of a window (window.h) are the slices it overlaps, each cut to it: a step the
 * window cuts is partial, from the window's edge on the cut side. Their totals and
 * category values are the sweep's, at the marks this adds. */
static void explain_steps(const hm_file *f, hm_series *s, const stepslice *ss, size_t nss, size_t ncats, marks *ms)
{
	const hm_mem *m = &f->t->mem;
	s->nsteps = nss;
	s->steps = nss ? hm_xcalloc(nss, sizeof *s->steps) : NULL;
	long ks = -1;
	for (size_t i = 0; i < nss; i++) {
		hm_step *st = &s->steps[i];
		st->step = ss[i].n, st->start_ts = ss[i].ts, st->end_ts = ss[i].end;
		st->partial = st->open = ss[i].open; /* the snapshot ends in it: no step's end */
		if (f->windowed && (st->start_ts < f->win_from || st->end_ts > f->win_to)) {
			st->partial = 1;
			st->start_ts = st->start_ts < f->win_from ? f->win_from : st->start_ts;
			st->end_ts = st->end_ts > f->win_to ? f->win_to : st->end_ts;
		}
		ks = st->start_ts == INT64_MIN ? -1 : at_near(s, m, st->start_ts - 1, ks); /* before(start_ts) */
		long ke = at_near(s, m, st->end_ts, ks);
		add_mark(ms, ks, ke, AT_START, i);
		add_mark(ms, ke, ke, AT_END, i);
		st->cat_end = hm_xcalloc(ncats ? ncats : 1, sizeof *st->cat_end);
	}
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

static int cmp_oom(const void *a, const void *b)
{
	const hm_oom *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->ev > y->ev) - (x->ev < y->ev);
}

static void explain_ooms(hm_file *f, hm_series *s, const stepslice *ss, size_t nss, size_t ncats, marks *ms)
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
		o->reserved_unallocated = hm_gap(o->total_reserved, o->total_allocated);
		o->capacity = hm_store_capacity(t, s->dev_type, s->dev_id);
	}
	if (!s->nooms)
		return;
	/* time order; file order for ties (ev is the OOM's place in the file) */
	qsort(s->ooms, s->nooms, sizeof *s->ooms, cmp_oom);
	/* what the whole series frees: the sweep takes off what was freed up to each OOM */
	int64_t freed = 0;
	hm_packrd rb;
	hm_packrd_init(&rb, &m->bytes);
	for (size_t k = 0; k < s->n; k++) {
		int64_t b = hm_packrd_get(&rb, s->ev[k]);
		freed -= b < 0 ? b : 0;
	}
	for (size_t i = 0; i < s->nooms; i++) {
		hm_oom *o = &s->ooms[i];
		o->k = before(s, m, o->ts); /* then the events at its time that the file has before it */
		while ((size_t)(o->k + 1) < s->n && hm_mem_ts(m, s->ev[o->k + 1]) == o->ts && s->ev[o->k + 1] < oc->mem_at[o->ev])
			o->k++;
		o->freed_after = freed;
		oom_context(t, o, ss, nss);
		o->cat_at = hm_xcalloc(ncats ? ncats : 1, sizeof *o->cat_at);
		add_mark(ms, o->k, o->k, AT_OOM, i);
	}
}

/* One pass over the series up to its last mark, the device total and the category values
 * from the start state on, written down at each mark; and each step's peak and survivors
 * over its events while it is open. Steps rarely overlap (a 1.13 trace writes
 * ProfilerStep#0 twice), so an event updates one open step or none. */
static void sweep(hm_series *s, const hm_mem *m, size_t ncats, marks *ms)
{
	if (ms->n)
		qsort(ms->v, ms->n, sizeof *ms->v, cmp_mark);
	int64_t *val = hm_xcalloc(ncats ? ncats : 1, sizeof *val), run = s->start_bytes;
	hm_timeline_start(s, val, ncats);
	size_t *open = hm_xrealloc(NULL, (s->nsteps ? s->nsteps : 1) * sizeof *open), nopen = 0, j = 0;
	long *peak_at = hm_xrealloc(NULL, (s->nsteps ? s->nsteps : 1) * sizeof *peak_at); /* its time read once, last */
	hm_packrd rb;
	hm_packrd_init(&rb, &m->bytes);
	int64_t freed = 0; /* by the events so far (an OOM's freed_after holds the series' until its mark) */
	for (long k = -1; j < ms->n; k++) {
		if (k >= 0) {
			uint32_t e = s->ev[k];
			int64_t b = hm_packrd_get(&rb, e), d = hm_delta_of(s, (size_t)k, b);
			run += d;
			freed -= b < 0 ? b : 0;
			if (s->cat[k] >= 0)
				val[s->cat[k]] += d;
			int survives = nopen && b > 0 && s->partner[k] < 0 && !s->before[k];
			for (size_t o = 0; o < nopen; o++) {
				hm_step *st = &s->steps[open[o]];
				if (run > st->peak_bytes)
					st->peak_bytes = run, peak_at[open[o]] = k;
				if (survives)
					st->survivors_bytes += b;
			}
		}
		for (; j < ms->n && ms->v[j].k == k; j++) {
			const mark *x = &ms->v[j];
			if (x->what == AT_OOM) {
				s->ooms[x->i].allocated = run;
				s->ooms[x->i].freed_after -= freed;
				memcpy(s->ooms[x->i].cat_at, val, ncats * sizeof *val);
				continue;
			}
			hm_step *st = &s->steps[x->i];
			if (x->what == AT_START) {
				st->start_bytes = st->peak_bytes = run, peak_at[x->i] = -1;
				if (x->to > k)
					open[nopen++] = x->i;
			} else {
				st->end_bytes = run;
				memcpy(st->cat_end, val, ncats * sizeof *val);
				for (size_t o = 0; o < nopen; o++)
					if (open[o] == x->i) {
						open[o] = open[--nopen];
						break;
					}
			}
		}
	}
	for (size_t i = 0; i < s->nsteps; i++) {
		hm_step *st = &s->steps[i];
		st->growth_bytes = st->end_bytes - st->start_bytes;
		st->peak_ts = peak_at[i] < 0 ? st->start_ts : hm_mem_ts(m, s->ev[peak_at[i]]);
		if (!s->has_addr) /* no Addr: nothing is paired, so what survives is unknown */
			st->survivors_bytes = HM_NONE;
	}
	free(val), free(open), free(peak_at);
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
		marks ms = {0};
		explain_steps(f, s, ss, nss, ncats, &ms);
		explain_ooms(f, s, ss, nss, ncats, &ms);
		sweep(s, m, ncats, &ms);
		free(ms.v);
		leak(f, s);
		matched += s->nooms;
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
