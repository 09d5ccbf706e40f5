/* snaphost: what 2026 snapshots add beyond the devices: pinned host memory (host_segments
 * and host_traces, recorded with _record_memory_history(record_pinned_host_memory=True))
 * read as one more series, and the ring buffer's overflow flag (allocator_settings'
 * trace_alloc_overflowed and trace_alloc_max_entries). snapshot.c reads them through these
 * helpers; snapout.c reports them. Plain C, no Lua.
 *
 * Ownership: nothing is allocated; values point into the caller's pickle. */
#ifndef HM_SNAPHOST_H
#define HM_SNAPHOST_H

#include "store.h"
#include "unpickle.h"

/* The pinned host series is device type 0 (PyTorch calls a pinned tensor's device "cpu")
 * with this id; its segments in hm_snap.segs carry it as their dev. */
#define HM_SNAPHOST_ID (-1)

/* Whether a series (device type and id) of a snapshot is its pinned host memory. */
int hm_snaphost_is(int32_t dev_type, int32_t dev_id);

/* The list of host entries in host_traces (HM_PK_ABSENT when there is none): a list of entry
 * dicts, or a list holding lists of them of which at most one is not empty (the host
 * allocator is one). Returns 0, or -1 with what is wrong in why. */
int hm_snaphost_entries(const hm_pk *p, hm_pkv traces, hm_pkv *list, const char **why);

/* From the root dict's allocator_settings: trace_alloc_overflowed (*overflowed: 1 true, 0
 * false, -1 absent or not a bool) and trace_alloc_max_entries (*max_entries, HM_NONE when
 * absent or not an integer). */
void hm_snaphost_settings(const hm_pk *p, hm_pkv root, int *overflowed, int64_t *max_entries);

#endif
