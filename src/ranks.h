/* ranks: the cross-rank report (README "Across ranks"). The series of one device kind
 * ("cuda", "cpu", "hip": the device name before its ':') across every trace, compared: for
 * the device's own peak and for each category, the highest peak and where it is, the
 * lowest, the median, the mean and max/mean (the imbalance). Every writer (summary, CSV,
 * --json, --html, done(report)) reads these rows, so they all say the same. Integer math
 * only, so a merge of partials gives the same bytes as one run. Plain C, no Lua.
 *
 * Ownership: hm_ranks_compute fills out with rows the caller frees with hm_ranks_free;
 * the rows point into the report (max_f, max_s), which must outlive them. */
#ifndef HM_RANKS_H
#define HM_RANKS_H

#include "report.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HM_RANKS_DEVICE ((size_t)-1) /* a row about the device peak, not a category */

typedef struct hm_rankrow {
	char kind[40];     /* the device kind: "cuda", "cpu", "hip", "type9" */
	size_t cat;        /* category id, or HM_RANKS_DEVICE */
	size_t n;          /* the series of the kind compared (a series without the category counts 0) */
	int64_t max, min;
	int64_t median;    /* of an even count: the mean of the two middle values, rounded down */
	int64_t mean;      /* the sum over n, rounded toward zero */
	int64_t imbalance; /* max x n / sum in thousandths, rounded half up; HM_NONE when the sum is <= 0 */
	const hm_file *max_f; /* the first series (in report order) at max */
	const hm_series *max_s;
} hm_rankrow;

typedef struct hm_ranks {
	hm_rankrow *rows;
	size_t n;
} hm_ranks;

/* The rows of every device kind with at least two series: kinds by their highest device
 * peak (largest first, then the order first seen), and in each kind the device peak's row,
 * then its categories by highest peak (largest first, then category id); a category whose
 * peak is 0 on every series of the kind has no row. */
void hm_ranks_compute(const hm_report *r, hm_ranks *out);
void hm_ranks_free(hm_ranks *k);

/* Prints "hmem: warning: rank R ..." for each rank that two traces claim for one device kind
 * (unless quiet); returns how many there are. */
size_t hm_ranks_warn_duplicates(const hm_report *r, int quiet);

/* A thousandths value (imbalance) as "1.600", or "" for HM_NONE. */
void hm_ranks_fmt_milli(char *buf, size_t n, int64_t milli);

#endif
