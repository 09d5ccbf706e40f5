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

#endif
