/* timeline: exact per-category accumulation over one series, its peaks and checks
 * against the trace's own Total Allocated. Plain C, no Lua. */
#ifndef HM_TIMELINE_H
#define HM_TIMELINE_H

#include "analyze.h"

#define HM_CAT_BEFORE 0 /* category id of "(before trace)" */

/* Fill s's counts, peak, mismatches and s->cats[0..ncats) from s->cat (every
 * non-zero-byte event must be classified). Replaces any earlier s->cats. */
void hm_timeline(hm_series *s, const hm_mem *m, size_t ncats);

/* The category values before the first event, for replaying: val[c] = s->cats[c].start.
 * Then, for each k, val[s->cat[k]] += m->bytes[s->ev[k]] (skip cat -1). */
void hm_timeline_start(const hm_series *s, int64_t *val, size_t ncats);

/* The categories that take part in s, for tables: "(before trace)" first, then the largest
 * at the device's peak (then by own peak, then by id). Writes them to order (room for
 * s->ncats) and returns how many. */
size_t hm_categories_by_peak(const hm_series *s, size_t *order);

/* The allocations live at the device's peak, largest first (ties: earlier first), as
 * positions in s: allocations made before the peak and freed after it (or never), and
 * frees of memory from before the trace that happen after it. Writes at most cap
 * positions to out; returns how many there are in all. */
size_t hm_live_at_peak(const hm_series *s, const hm_mem *m, uint32_t *out, size_t cap);

/* The same for any time (ns): live at ts means allocated at or before it and not freed
 * at or before it. */
size_t hm_live_at(const hm_series *s, const hm_mem *m, int64_t ts, uint32_t *out, size_t cap);

#endif
