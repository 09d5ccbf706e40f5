/* merge: `hmem merge RULES PARTIAL...`: the partials of one plan checked against each
 * other and against the plan (the merge is the judge: every planned trace exactly once, one
 * hmem, one rule file, one option set, one split), then each planned trace handed to hmem
 * run's stages in plan order (the partials are a source of run.h), as read and classified
 * by its shard. A partial is data
 * (issue 24): the rule file is the one the user names, checked against the partials' hash;
 * what a partial gives is only the options that shape results, as rows, never capabilities
 * or limits (-I, --out, --allow-io, --timeout, --lua-mem). Plain C, no Lua.
 *
 * Ownership: an hm_merge owns its partials, their plan and every string it returns, until
 * hm_merge_close; the files it returns are the caller's (hm_file_free). */
#ifndef HM_MERGE_H
#define HM_MERGE_H

#include "analyze.h"
#include "args.h"
#include "partial.h"
#include "plan.h"

typedef struct hm_merge hm_merge;

/* Whether path is a partial by its content: a regular file that begins as an SQLite
 * database does (opened without blocking: a FIFO or a device is never one). */
int hm_merge_is_partial(const char *path);

/* A merge given no rule file (paths all partials): says on standard error which rule file
 * and digest the first partial was made with and the command to run (argv with that file
 * after "merge"). HM_EXIT_USAGE, or the exit code of a partial that cannot be read. */
int hm_merge_no_rules(char **paths, int n, int argc, char **argv);

/* Open the partials at paths and check that they belong together (same format, hmem
 * version, rule file hash, options, plan and number of shards): 0 with *out, or
 * HM_EXIT_USAGE (a path that is not a regular file), HM_EXIT_INPUT or HM_EXIT_IO with err
 * (nothing to merge). Coverage problems (a planned trace in no partial, or in two) are said
 * on standard error and counted (hm_merge_problems); the rest is merged. */
int hm_merge_open(char **paths, int n, hm_merge **out, char *err, size_t errsz);
void hm_merge_close(hm_merge *m);

const hm_plan *hm_merge_plan(const hm_merge *m);
/* Missing or duplicated traces (each said on standard error), and damaged ones. */
int hm_merge_problems(const hm_merge *m);
/* The rule file the shards named (for messages only: the merge runs the one its user
 * names), its hash, and summed classify calls and cache hits. */
const char *hm_merge_rules(const hm_merge *m);
const char *hm_merge_rules_hash(const hm_merge *m);
uint64_t hm_merge_calls(const hm_merge *m);
uint64_t hm_merge_cache_hits(const hm_merge *m);

/* The options of o that shape results (those a merge takes from its partials: --set, --top,
 * --steps, --from, --to), one row each in a fixed order; *n rows. The rows point into o;
 * the caller frees the array. */
hm_runopt *hm_merge_options_of(const hm_opts *o, size_t *n);
/* Set those options of o from the partials' rows (checked by hm_merge_open as hmem run
 * checks them, a row naming any other option refused). o's --set list is m's after. */
void hm_merge_apply_options(hm_merge *m, hm_opts *o);

/* Planned trace i: 0 with *f analysed (HM_STAGE_ANALYZED) and *catev the categories its
 * shard gave each memory event, as ids of cats (the categories it introduced are interned
 * first, in its order; the caller frees catev), for the run's classification stage
 * (hm_file_given_cats); 1 when its shard skipped it or no partial holds it
 * (*why, *events read before the error); -1 with err when its store cannot be read. */
int hm_merge_file(hm_merge *m, int i, hm_strtab *cats, hm_file **f, int32_t **catev, const char **why,
		  uint64_t *events, char *err, size_t errsz);

#endif
