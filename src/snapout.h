/* snapout: what only a memory snapshot tells (store.h, hm_snap), in the summary and in
 * --json: at each OOM the free device memory, the failing allocation's stack and the
 * segments then; per series the allocator's segments at the end and the waste inside the
 * live blocks. explainout.c calls these at their place; each writes nothing for a trace.
 * Plain C, no Lua.
 *
 * Ownership: everything here only reads the file and its series and writes to f. */
#ifndef HM_SNAPOUT_H
#define HM_SNAPOUT_H

#include "analyze.h"

#include <stdio.h>

/* The members ", "device_free": ..., "frame": ..., "frames": [...], "segments": {...}" of
 * an OOM's JSON object (README "Snapshots"). */
void hm_snap_json_oom(FILE *f, const hm_file *hf, const hm_oom *o);

/* The snapshot's lines under an OOM in the summary. */
void hm_snap_summary_oom(FILE *f, const hm_file *hf, const hm_oom *o);

/* The member ", "snapshot": {...}" of a series' JSON object: the segments at the end. */
void hm_snap_json_series(FILE *f, const hm_file *hf, const hm_series *s);

/* Whether s has segments: a snapshot's CUDA device or its pinned host memory. The --json
 * member "snapshot" and the --db table snapshot_segments are written for these only. */
int hm_snap_has_segments(const hm_file *hf, const hm_series *s);

/* The segment lines of a series in the summary. */
void hm_snap_summary_series(FILE *f, const hm_file *hf, const hm_series *s);

/* The members ", "trace_alloc_overflowed": ..., "trace_alloc_max_entries": ..." of a
 * snapshot's object in --json inputs[]; nothing for a trace. */
void hm_snap_json_input(FILE *f, const hm_trace *t);

/* On standard error (unless quiet), for each snapshot whose ring buffer dropped entries,
 * a warning naming the file. */
void hm_snap_warn(hm_file *const *files, size_t n, int quiet);

/* What the times of t mean when they are not time_us (static text, one sentence), or NULL:
 * a trace, or a snapshot whose entries all have time_us. */
const char *hm_snap_time_note(const hm_trace *t);

/* Whether s is a series of a snapshot that recorded no trace entry for its device (only
 * segments: the ring buffer was empty, history not recorded, include_traces=False); never
 * said of a window. */
int hm_snap_no_entries(const hm_file *hf, const hm_series *s);

/* The sentence that says so, and how to record entries. */
#define HM_SNAP_NO_ENTRIES_NOTE                                                                                        	"the snapshot recorded no trace entries for this device, only its segments (its live blocks are the rows, "  	"at the start): record entries with torch.cuda.memory._record_memory_history() before the work"

#endif
