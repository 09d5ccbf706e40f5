/* Windows of a trace (see window.h). */
#include "window.h"
#include "timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hm_window_steps(hm_window *w, const char *s, char *err, size_t n)
{
	const char *dash = strchr(s, '-');
	int64_t a, b;
	size_t la = dash ? (size_t)(dash - s) : strlen(s);
	if (!la || hm_num_i64(s, la, 0, 0, &a) || a < 0 || a > INT32_MAX ||
	    (dash && (hm_num_i64(dash + 1, strlen(dash + 1), 0, 0, &b) || b < a || b > INT32_MAX))) {
		snprintf(err, n, "--steps needs A-B, step numbers with A <= B (or one step A), not '%s'", s);
		return -1;
	}
	w->on = w->by_steps = 1;
	w->step_a = (int32_t)a, w->step_b = dash ? (int32_t)b : (int32_t)a;
	return 0;
}

int hm_window_time(hm_window *w, const char *s, int to, char *err, size_t n)
{
	int abs = strncmp(s, "ts:", 3) == 0;
	const char *v = abs ? s + 3 : s;
	int64_t ns;
	/* ms -> ns is 10^6, µs -> ns 10^3; finer digits are rounded */
	if (!*v || hm_num_i64(v, strlen(v), abs ? 3 : 6, 1, &ns) || ns <= -HM_STORE_TS_LIMIT || ns >= HM_STORE_TS_LIMIT) {
		snprintf(err, n, "%s needs a time: ms since the trace's start, or ts:T in the trace's µs, not '%s'",
			 to ? "--to" : "--from", s);
		return -1;
	}
	w->on = 1;
	if (to)
		w->to = ns, w->to_abs = abs;
	else
		w->from = ns, w->from_abs = abs;
	return 0;
}

static int32_t step_of(const hm_trace *t, uint32_t name)
{
	const char *s = t->names.str[name];
	int64_t v;
	if (strncmp(s, "ProfilerStep#", 13) || hm_num_i64(s + 13, t->names.len[name] - 13, 0, 0, &v) || v < 0 || v > INT32_MAX)
		return -1;
	return (int32_t)v;
}

/* "5-10", "0, 0, 1-3" or "none": the step numbers of t, ascending, runs joined. */
void hm_window_steps_of(const hm_trace *t, char *buf, size_t n)
{
	int32_t *v = hm_xrealloc(NULL, (t->sl.n ? t->sl.n : 1) * sizeof *v);
	size_t c = 0, len = 0;
	for (size_t i = 0; i < t->sl.n; i++)
		if ((v[c] = step_of(t, t->sl.name[i])) >= 0)
			c++;
	for (size_t i = 1; i < c; i++) /* insertion sort: steps are few and mostly in order */
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			int32_t x = v[j];
			v[j] = v[j - 1], v[j - 1] = x;
		}
	size_t u = 0; /* each number once: 1.13 writes ProfilerStep#0 twice */
	for (size_t i = 0; i < c; i++)
		if (!u || v[u - 1] != v[i])
			v[u++] = v[i];
	c = u;
	snprintf(buf, n, "none");
	for (size_t i = 0; i < c && len + 1 < n;) {
		size_t j = i;
		while (j + 1 < c && v[j + 1] == v[j] + 1)
			j++;
		int w = j > i ? snprintf(buf + len, n - len, "%s%d-%d", i ? ", " : "", (int)v[i], (int)v[j])
			      : snprintf(buf + len, n - len, "%s%d", i ? ", " : "", (int)v[i]);
		len += w > 0 ? (size_t)w : 0;
		i = j + 1;
	}
	free(v);
}

int hm_window_bounds(const hm_window *w, const hm_trace *t, int64_t *from, int64_t *to)
{
	int64_t base = t->first_ts == HM_NONE ? 0 : t->first_ts;
	*from = w->from == HM_NONE ? INT64_MIN : w->from_abs ? w->from : base + w->from;
	*to = w->to == HM_NONE ? INT64_MAX : w->to_abs ? w->to : base + w->to;
	if (!w->by_steps)
		return 0;
	/* from the start of the first ProfilerStep#A slice to the end of the last #B (1.13
	 * writes #0 twice: both are in), or of those of A to B the trace has */
	int64_t a = INT64_MAX, b = INT64_MIN;
	for (size_t i = 0; i < t->sl.n; i++) {
		int32_t n = step_of(t, t->sl.name[i]);
		if (n < w->step_a || n > w->step_b)
			continue;
		if (t->sl.ts[i] < a)
			a = t->sl.ts[i];
		if (t->sl.ts[i] + t->sl.dur[i] > b)
			b = t->sl.ts[i] + t->sl.dur[i];
	}
	*from = a, *to = b;
	return a == INT64_MAX ? -1 : 0;
}

/* Events outside the window go. What was live at the opening (the whole series' replay up
 * to it, by rule 5) is carried in as the base; a free inside the window of memory
 * allocated before it (or before the trace) becomes a free of category 0, never
 * classified, so that "(before window)" gives it back as it is freed; an allocation freed
 * after the window is marked so, with where its free went (analyze.h hm_free_ev). */
static void cut(hm_series *s, const hm_mem *m, int64_t from, int64_t to, int64_t base_ts)
{
	size_t ks = 0, ke = s->n; /* [ks, ke) */
	if (from > to) { /* an empty window (steps the trace does not have): nothing */
		s->nall = s->n;
		s->n = 0;
		s->based = 1, s->base = 0, s->base_ts = base_ts;
		return;
	}
	int64_t base = hm_timeline_start_bytes(s, m);
	while (ks < s->n && hm_mem_ts(m, s->ev[ks]) < from)
		base += hm_mem_delta(s, m, ks++);
	while (ke > ks && hm_mem_ts(m, s->ev[ke - 1]) > to)
		ke--;
	/* the events outside go after the window's, in ev only: a partial still writes
	 * each event's device from its series */
	size_t nout = s->n - (ke - ks);
	uint32_t *out = hm_xrealloc(NULL, (nout ? nout : 1) * sizeof *out);
	memcpy(out, s->ev, ks * sizeof *out);
	memcpy(out + ks, s->ev + ke, (s->n - ke) * sizeof *out);
	for (size_t k = ks; k < ke; k++) {
		size_t j = k - ks;
		int32_t p = s->partner[k];
		int carried = hm_mem_bytes(m, s->ev[k]) < 0 && (s->before[k] || (p >= 0 && (size_t)p < ks));
		s->ev[j] = s->ev[k];
		s->partner[j] = p >= (int32_t)ks && (size_t)p < ke ? p - (int32_t)ks
				: p >= 0 && (size_t)p >= ke ? HM_FREED_AFTER - (int32_t)(ks + (size_t)p - ke) : -1;
		s->before[j] = (uint8_t)(carried ? HM_BEFORE_WINDOW : s->before[k] == 2 ? 2 : 0);
	}
	s->nall = s->n;
	s->n = ke - ks;
	memcpy(s->ev + s->n, out, nout * sizeof *out);
	free(out);
	s->based = 1, s->base = base, s->base_ts = base_ts;
}

void hm_window_apply(hm_file *f, int64_t from, int64_t to)
{
	int64_t first = f->t->first_ts == HM_NONE ? 0 : f->t->first_ts;
	f->windowed = 1;
	f->win_from = from, f->win_to = to;
	for (size_t i = 0; i < f->nseries; i++)
		hm_stage_enter(&f->series[i], HM_STAGE_WINDOWED);
	for (size_t i = 0; i < f->nseries; i++)
		cut(&f->series[i], &f->t->mem, from, to, from > first && from <= to ? from : first);
}
