/* ranksout: how the cross-rank rows (ranks.h) read in the summary, the summary CSV and
 * --json. The writers of output.c call these at their place. Plain C, no Lua.
 *
 * Ownership: everything here only reads the report and writes to f. */
#ifndef HM_RANKSOUT_H
#define HM_RANKSOUT_H

#include "report.h"

#include <stdio.h>

/* The summary's "across ranks" section, one table per device kind with at least two
 * series; nothing when there is none. width: the category column's. */
void hm_ranks_summary(FILE *f, const hm_report *r, size_t width);

/* The columns the summary CSV adds after its own, as a header suffix, and a series row's
 * (empty) values for them. */
#define HM_RANKS_CSV_HEADER ",what,device_kind,series,max_bytes,min_bytes,median_bytes,mean_bytes,imbalance"
#define HM_RANKS_CSV_SERIES ",series,,,,,,,"

/* The summary CSV's cross-rank rows (what = rank_peak or rank_category). */
void hm_ranks_csv(FILE *f, const hm_report *r);

/* The value of --json's "ranks": an array of row objects. */
void hm_ranks_json(FILE *f, const hm_report *r);

#endif
