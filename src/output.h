/* output: the writers of the summary (text, CSV), --json, --timeline and the events CSV,
 * over the report every writer reads (hm_report, report.h, included here for them). Each
 * writer prints the whole of its output to an open FILE and checks nothing: the caller opens
 * and commits it (outfile.h, included here for them). Plain C, no Lua.
 *
 * Ownership: as report.h; hm_agg_free frees one aggregation. The writers only read. */
#ifndef HM_OUTPUT_H
#define HM_OUTPUT_H

#include "cells.h"   /* hm_csv_str and hm_put_col, for the writers */
#include "jsonw.h" /* hm_json_str and the other JSON values, for the writers */
#include "outfile.h"
#include "report.h"

#include <stdio.h>

void hm_agg_free(hm_agg *a);

void hm_write_summary(FILE *f, const hm_report *r);
/* The summary as CSV: one row per series and category (README "Outputs"). */
void hm_write_summary_csv(FILE *f, const hm_report *r);
void hm_write_json(FILE *f, const hm_report *r);

void hm_write_timeline(FILE *f, const hm_report *r);
void hm_write_events(FILE *f, const hm_report *r);

#endif
