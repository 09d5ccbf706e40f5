/* allocations: `hmem allocations RULES PATH... --csv FILE`, one CSV row per allocation with
 * its category and context, for a data frame (README "From hmem to a DataFrame"). Plain C,
 * no Lua; it only reads the report (output.h says who owns it). */
#ifndef HM_ALLOCATIONS_H
#define HM_ALLOCATIONS_H

#include "output.h"

#include <stdio.h>

/* The header, then per series in report order one row per allocation made during the
 * trace and per free hmem classified by itself (memory allocated before the trace, or a
 * trace without addresses): path, rank, device, alloc_ts, free_ts, lifetime, bytes,
 * category, op, module, frame, step, context. Quoted as RFC 4180 asks (hm_csv_str). */
void hm_write_allocations(FILE *f, const hm_report *r);

#endif
