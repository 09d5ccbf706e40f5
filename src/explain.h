/* explain: what the questions people open a memory trace for need, per series, from the
 * analysis and the timeline: the steps (one per ProfilerStep#N slice, so 1.13's duplicated
 * numbers stay apart), the [OutOfMemory] events with their context and a leak verdict
 * (what the allocator held back, Total Reserved minus Total Allocated, is the timeline's:
 * its pass reads both totals). Plain C, no Lua.
 *
 * Ownership: hm_explain fills group 5 of each series (analyze.h); the series owns every
 * array it allocates and hm_file_free frees them. */
#ifndef HM_EXPLAIN_H
#define HM_EXPLAIN_H

#include "analyze.h"

/* Fill the explain fields of every series of f, once. Needs hm_timeline done on each (the
 * categories, ncats of them, and the start state). */
void hm_explain(hm_file *f, size_t ncats);

/* A leak verdict needs this many steps at least. */
#define HM_LEAK_MIN_STEPS 3

/* The name of a leak verdict: "unknown", "none", "growth", "survivors". */
const char *hm_leak_name(int leak);

/* The note on standard error (unless quiet) when files[0, n) mix memory snapshots and
 * traces: they are reported side by side, never joined (README "Snapshots"); before it,
 * the warning of each snapshot whose ring buffer overflowed (snapout.h). */
void hm_explain_note_mixed(hm_file *const *files, size_t n, int quiet);

/* Why series s of f has no steps, as one sentence in buf (n bytes): 1, or 0 (buf left
 * alone) when it has steps. */
int hm_explain_steps_note(const hm_file *f, const hm_series *s, char *buf, size_t n);

/* Position in s of the last event at or before ts (ns), -1 when none. */
long hm_explain_at(const hm_series *s, const hm_mem *m, int64_t ts);

#endif
