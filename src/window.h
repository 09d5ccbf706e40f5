/* window: --steps A-B and --from T --to T restrict every report to a window of each trace.
 * The series are cut to their events inside it right after the analysis, before anything
 * is classified: events outside it are never classified, and every position a rule or a
 * row keeps is one of the window's. What was live when it opened (the whole series'
 * replay, so also in traces without Total Allocated, and on a device with no event inside
 * it) is carried in as category 0, named "(before window)", the way "(before trace)"
 * carries what was live before the trace: the categories still sum to the trace's Total
 * Allocated. Plain C.
 *
 * Ownership: hm_window_apply rewrites the arrays of the series in place (analyze.h, group
 * 1); nothing is allocated that the caller must free. */
#ifndef HM_WINDOW_H
#define HM_WINDOW_H

#include "analyze.h"

typedef struct hm_window {
	int on, by_steps;
	int32_t step_a, step_b;  /* --steps A-B */
	int64_t from, to;        /* ns; HM_NONE: open on that side */
	int from_abs, to_abs;    /* given as ts: (µs, the trace's clock), else ms since its start */
} hm_window;

/* Parse --steps "A-B" (or "A", one step); 0, or -1 with why in err. */
int hm_window_steps(hm_window *w, const char *s, char *err, size_t n);
/* Parse --from or --to: "T" in ms since the trace's start, or "ts:T" in µs. 0 or -1. */
int hm_window_time(hm_window *w, const char *s, int to, char *err, size_t n);

/* The window in trace t as [*from, *to] (ns; INT64_MIN and INT64_MAX on an open side).
 * Returns 0, or -1 when t has none of the steps A to B: the window is then empty (*from >
 * *to) and keeps nothing of t (when no trace of a run has them, the run is a usage error,
 * exit 2, naming the steps each has: hm_window_steps_of). */
int hm_window_bounds(const hm_window *w, const hm_trace *t, int64_t *from, int64_t *to);

/* The step numbers of t's ProfilerStep#N slices as text into buf: "5-10", "0-3, 7",
 * "none". */
void hm_window_steps_of(const hm_trace *t, char *buf, size_t n);

/* Cut every series of f to its events in [from, to] (after the analysis, before
 * classification: analyze.h's stages) and remember the window in f
 * (explain.c keeps its steps and OOMs, marking the steps it cuts partial). */
void hm_window_apply(hm_file *f, int64_t from, int64_t to);

#endif
