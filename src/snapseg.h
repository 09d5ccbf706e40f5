/* snapseg: a device's segments at each oom entry of a snapshot, by replaying its trace
 * backwards from the segments the snapshot ends with: an alloc undone frees its block, a
 * free_completed undone makes its block live again, a segment event undone removes or
 * restores the segment. The snapshot records no block layout in its entries, so what a
 * moment holds is counted by requested bytes (hm_segstate, store.h). Plain C, no Lua.
 *
 * Ownership: the caller's arrays are only read; the figures go into the caller's hm_snap. */
#ifndef HM_SNAPSEG_H
#define HM_SNAPSEG_H

#include "store.h"
#include "unpickle.h"

enum hm_segop_kind { HM_SEGOP_ALLOC, HM_SEGOP_FREE, HM_SEGOP_SEG_NEW, HM_SEGOP_SEG_GONE, HM_SEGOP_OOM };

/* One trace entry of a device that changes its segments or live blocks, in file order;
 * for HM_SEGOP_OOM, oom is its index in hm_snap.ooms. ts (ns), stream (HM_NONE where
 * absent) and mem_at (the memory events before it in hm_trace.mem) place a segment event
 * for hm_snapseg_lives; mapped: a segment_map or segment_unmap entry. */
typedef struct hm_segop {
	uint8_t kind, mapped;
	uint64_t addr;
	int64_t size;
	uint32_t oom;
	int64_t ts, stream;
	uint32_t mem_at;
} hm_segop;

/* A block live at the end: its address and what it asked for. */
typedef struct hm_liveblk {
	uint64_t addr;
	int64_t requested;
} hm_liveblk;

/* Fills segs of each oom among ops[0, n) of device dev, starting from the end state: the
 * segments of s for dev and the live blocks live[0, nlive). Where the entries do not agree
 * with that state (an expandable segment mapped in parts, a block outside every segment,
 * a ring buffer that kept a segment event without its context), the oom entries before the
 * disagreement get segments = HM_NONE. */
uint64_t hm_snapseg_replay(hm_snap *s, int32_t dev, const hm_segop *ops, size_t n, const hm_liveblk *live, size_t nlive);
/* (It returns the steps it took, for the tests that check they grow as n log n.) */

/* Appends to s->lives the life of every segment device dev had, from its segment events
 * among ops[0, n) (file order) replayed backwards from the end's segments: a segment of the
 * end is live at the end, born at the segment_alloc (or segment_map) entry of its address
 * and size, else before recording; a segment_free (or segment_unmap) entry gives back one
 * born earlier. Where the entries disagree with the end (an expandable segment mapped in
 * parts, a segment given back twice), only the end's segments are kept, each flagged
 * HM_SEGLIFE_NO_REPLAY. Nothing for a device without segments at the end. Linear in n and
 * the device's segments, plus the sort of its lives. */
void hm_snapseg_lives(hm_snap *s, int32_t dev, const hm_segop *ops, size_t n);

/* The lives of device dev in s->lives: how many, from *first (0 when none were made). */
size_t hm_snapseg_lives_of(const hm_snap *s, int32_t dev, size_t *first);

/* A segment's segment_pool_id v (HM_PK_ABSENT when it has none) into pool: its two
 * integers, or HM_NONE each. */
void hm_snapseg_pool(const hm_pk *p, hm_pkv v, int64_t pool[2]);

/* Sorts s->segs by device, keeping each device's in file order (the reader does, once its
 * segments are read), so that hm_snapseg_of finds a device's segments without a walk of all. */
void hm_snapseg_sort(hm_snap *s);

/* A device's segments in s->segs (sorted by hm_snapseg_sort): how many, from *first. */
size_t hm_snapseg_of(const hm_snap *s, int32_t dev, size_t *first);

/* The segments of device dev as the snapshot ends. */
hm_segstate hm_snapseg_end(const hm_snap *s, int32_t dev);

#endif
