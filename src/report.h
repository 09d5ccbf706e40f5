/* report: what every writer reads (hm_report): the files and their series, the category
 * names, skipped traces, aggregations, the budgets' verdict. The writers' headers (output.h,
 * explainout.h, ranks.h, ranksout.h, budget.h) include this, never each other, so that the
 * summary's writer (output.c) calls its parts one way. Types only: no function is defined
 * for this header (hm_agg_free is output.h's). Plain C, no Lua.
 *
 * Ownership: the caller owns the hm_report and everything it points to; the writers only
 * read it. */
#ifndef HM_REPORT_H
#define HM_REPORT_H

#include "analyze.h"

#include <stddef.h>
#include <stdint.h>

/* A file that could not be read and was skipped (--keep-going). */
typedef struct hm_skip {
	char *path, *why;
	uint64_t events; /* events read before the error */
} hm_skip;

/* One cell of an aggregation result; s is owned by the result. */
typedef struct hm_cell {
	int type; /* hm_vtype of fields.h: nil, int, num, str, bool */
	int64_t i;
	double d;
	char *s;
} hm_cell;

/* A group-by declared with hmem.aggregate: the first nkeys columns are the keys. */
typedef struct hm_agg {
	char *name;
	char **cols;
	size_t ncols, nkeys, nrows;
	hm_cell *cells; /* nrows x ncols */
	int per_series; /* grouped per series (file and device are its first keys), not across them */
} hm_agg;

/* Everything the writers report. */
typedef struct hm_report {
	const char *rules;     /* the rule file, NULL for `hmem events` */
	hm_file **files;
	size_t nfiles;
	const hm_strtab *cats; /* global category names, id 0 "(before trace)" */
	hm_skip *skipped;
	size_t nskipped;
	uint64_t classify_calls, cache_hits;
	hm_agg *aggs;
	size_t naggs;
	size_t top;            /* allocations listed in live_at_peak */
	const char (*colors)[8]; /* category id -> the pack's "#rrggbb" or "" (ncolors of them) */
	size_t ncolors;
	int color;             /* summary: ANSI colour (a terminal that wants it) */
	const struct hm_runinfo *info; /* what --db and --partial record besides (partial.h), or NULL */
	const struct hm_verdict *verdict; /* the budgets checked and the failures (budget.h), or NULL */
} hm_report;

#endif
