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

enum hm_segop_kind { HM_SEGOP_ALLOC, HM_SEGOP_FREE, HM_SEGOP_SEG_NEW, HM_SEGOP_SEG_GONE, HM_SEGOP_OOM };

/* One trace entry of a device that changes its segments or live blocks, in file order;
 * for HM_SEGOP_OOM, oom is its index in hm_snap.ooms. */
typedef struct hm_segop {
	uint8_t kind;
	uint64_t addr;
	int64_t size;
	uint32_t oom;
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

/* Sorts s->segs by device, keeping each device's in file order (the reader does, once its
 * segments are read), so that hm_snapseg_of finds a device's segments without a walk of all. */
void hm_snapseg_sort(hm_snap *s);

/* A device's segments in s->segs (sorted by hm_snapseg_sort): how many, from *first. */
size_t hm_snapseg_of(const hm_snap *s, int32_t dev, size_t *first);

/* The segments of device dev as the snapshot ends. */
hm_segstate hm_snapseg_end(const hm_snap *s, int32_t dev);

#endif
