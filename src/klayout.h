/* klayout: the layouts PyTorch's profiler writes an event and a [memory] event's args in,
 * matched literally: each separator, key and ": " one compare of a constant string, each value
 * crossed by the scan of its kind, with no scan for where a key ends and no lookup; where that
 * fails, the same keys in the same order with any white space between members (older traces,
 * and traces a tool wrote again: indented, one line, compact). A fast path for kevent.c, which
 * walks an event or args from their start as always when neither matches (README
 * "Performance", issue 29), so what an event holds and every error and its offset do not
 * depend on it. Plain C, no Lua. */
#ifndef HM_KLAYOUT_H
#define HM_KLAYOUT_H

#include "jscan.h"

#include <stdint.h>

/* An event's eight members as text (p NULL: absent). */
typedef struct hm_kev {
	hm_slice ph, name, cat, pid, tid, ts, dur, args;
} hm_kev;

/* A [memory] event's args as text, and their values as integers. */
typedef struct hm_kmem {
	hm_slice bytes, addr, talloc, tres, evidx, dtype, did;
} hm_kmem;
typedef struct hm_kmemvals {
	int64_t bytes, addr, talloc, tres, evidx, dtype, did;
} hm_kmemvals;

/* The event [p, e) (its depth-1 containers [t, end)) in Kineto's layout: 1 with its members
 * in *x (cleared by the caller), 0 where it differs. */
int hm_klayout_event(const char *p, const char *e, const hm_jtok *t, const hm_jtok *end, hm_kev *x);
/* The args object [p, e) of a [memory] event in a layout of a PyTorch generation: 1 with its
 * members in *m and their integers in *v (INT64_MIN where absent, as the caller sets them
 * first: store.h's HM_NONE), 0 where it differs. */
int hm_klayout_mem(const char *p, const char *e, hm_kmem *m, hm_kmemvals *v);

#endif
