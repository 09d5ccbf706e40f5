/* merge: `hmem merge PARTIAL...`: the partials of one plan checked against each other and
 * against the plan (the merge is the judge: every planned trace exactly once, one hmem,
 * one rule file, one option set), then each planned trace handed to hmem run's pipeline
 * in plan order, as read and classified by its shard. Plain C, no Lua.
 *
 * Ownership: an hm_merge owns its partials, their plan and every string it returns, until
 * hm_merge_close; the files it returns are the caller's (hm_file_free). */
#ifndef HM_MERGE_H
#define HM_MERGE_H

#include "analyze.h"
#include "args.h"
#include "plan.h"

typedef struct hm_merge hm_merge;

/* Open the partials at paths and check that they belong together (same format, hmem
 * version, rule file hash, options and plan): 0 with *out, or HM_EXIT_INPUT / HM_EXIT_IO
 * with err (nothing to merge). Coverage problems (a planned trace in no partial, or in
 * two) are said on standard error and counted (hm_merge_problems); the rest is merged. */
int hm_merge_open(char **paths, int n, hm_merge **out, char *err, size_t errsz);
void hm_merge_close(hm_merge *m);

const hm_plan *hm_merge_plan(const hm_merge *m);
/* Missing or duplicated traces (each said on standard error), and damaged ones. */
int hm_merge_problems(const hm_merge *m);
/* The shards' rule file, its hash, and summed classify calls and cache hits. */
const char *hm_merge_rules(const hm_merge *m);
const char *hm_merge_rules_hash(const hm_merge *m);
uint64_t hm_merge_calls(const hm_merge *m);
uint64_t hm_merge_cache_hits(const hm_merge *m);

/* The options that change results (those a merge takes from its partials), as one
 * string: each argument followed by a newline, in a fixed order. The caller frees it. */
char *hm_merge_options_of(const hm_opts *o);
/* Set those options of o from the partials' string (parsed as hmem run parses them).
 * 0, or HM_EXIT_INPUT with err. */
int hm_merge_apply_options(hm_merge *m, hm_opts *o, char *err, size_t errsz);

/* Planned trace i: 0 with *f analysed and its categories set (the categories it
 * introduced are interned into cats first, in its order) and *catev its categories per
 * memory event (the caller frees it); 1 when its shard skipped it or no partial holds it
 * (*why, *events read before the error); -1 with err when its store cannot be read. */
int hm_merge_file(hm_merge *m, int i, hm_strtab *cats, hm_file **f, int32_t **catev, const char **why,
		  uint64_t *events, char *err, size_t errsz);

#endif
