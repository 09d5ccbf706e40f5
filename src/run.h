/* run: hmem run (and events, allocations, merge, and a trace side of diff) as one list of
 * stages, each a function of run.c, in this order:
 *
 *   source (traces | partials) -> window -> classify -> timeline -> explain
 *     -> finish (aggregations, done) -> sink (outputs | db | partial | diff side)
 *     -> verdict (budgets)
 *
 * The source hands over one trace at a time (the next is read meanwhile); window and
 * classify take each as it comes, the later stages the whole report. What differs between
 * commands is only which source and which sink: no stage asks which command it serves.
 * Each stage that writes a series asserts the stage it expects (analyze.h, hm_stage_enter).
 *
 * Ownership: the options, and the merge for hm_run_merge, are the caller's and only read;
 * everything a run makes is freed before it returns, but for the diff side's text. */
#ifndef HM_RUN_H
#define HM_RUN_H

#include "args.h"
#include "merge.h"

/* hmem run, events and allocations: the traces of o's paths (its part with --shard) into
 * o's outputs, its --db or its --partial. Returns the exit code (messages said). */
int hm_run(const hm_opts *o);

/* hmem merge: the traces of m's partials, as their shards read and classified them, into
 * o's outputs. Returns the exit code. */
int hm_run_merge(const hm_opts *o, hm_merge *m);

/* A trace side of hmem diff: o's traces as diffside.h's text into *text (malloc'd, the
 * caller's; NULL on failure). Returns the exit code; no budgets are checked. */
int hm_run_diff_side(const hm_opts *o, char **text, size_t *len);

#endif
