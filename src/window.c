/* Windows of a trace (see window.h). */
#include "window.h"

#include <stdio.h>
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

int hm_window_bounds(const hm_window *w, const hm_trace *t, int64_t *from, int64_t *to)
{
	int64_t base = t->first_ts == HM_NONE ? 0 : t->first_ts;
	*from = w->from == HM_NONE ? INT64_MIN : w->from_abs ? w->from : base + w->from;
	*to = w->to == HM_NONE ? INT64_MAX : w->to_abs ? w->to : base + w->to;
	if (!w->by_steps)
		return 0;
	/* from the start of the first ProfilerStep#A slice to the end of the last #B (1.13
	 * writes #0 twice: both are in) */
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

/* Events outside the window go; a free inside it of memory allocated before it (or before
 * the trace) becomes a rule-3 free of category 0, so that "(before window)" starts with
 * what was live at the opening and gives it back as it is freed. The series remembers when
 * the window opens (not before the trace's first event) and the Total Allocated of the last
 * event before it, for a window with no event that says (an empty one). */
static void cut(hm_series *s, const hm_mem *m, int64_t first_ts, int64_t from, int64_t to)
{
	size_t ks = 0, ke = s->n; /* [ks, ke) */
	while (ks < s->n && m->ts[s->ev[ks]] < from)
		ks++;
	s->open_ts = from > first_ts ? from : first_ts;
	s->open_bytes = ks ? hm_mem_total_alloc(m, s->ev[ks - 1]) : HM_NONE;
	while (ke > ks && m->ts[s->ev[ke - 1]] > to)
		ke--;
	for (size_t k = ks; k < ke; k++) {
		size_t j = k - ks;
		int32_t p = s->partner[k];
		int carried = m->bytes[s->ev[k]] < 0 && (s->before[k] || (p >= 0 && (size_t)p < ks));
		s->ev[j] = s->ev[k];
		s->partner[j] = p >= (int32_t)ks && (size_t)p < ke ? p - (int32_t)ks : -1;
		s->before[j] = (uint8_t)(carried ? 1 : s->before[k] == 2 ? 2 : 0);
		s->cat[j] = carried ? 0 : s->cat[k];
	}
	s->n = ke - ks;
}

void hm_window_apply(hm_file *f, int64_t from, int64_t to)
{
	f->win_from = from, f->win_to = to;
	for (size_t i = 0; i < f->nseries; i++)
		cut(&f->series[i], &f->t->mem, f->t->first_ts == HM_NONE ? 0 : f->t->first_ts, from, to);
}
