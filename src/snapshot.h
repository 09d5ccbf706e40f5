/* snapshot: a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot, pickle protocol 2
 * to 5, every generation from 1.13's list of segments to 2026's keys) read through the
 * data-only unpickler (unpickle.h) into the same store a trace becomes: alloc entries are
 * allocations, free_completed entries frees, per device; each device series starts with a
 * zero-byte event carrying the totals at the trace's start (so the blocks the ring buffer
 * or the segments show without an alloc form "(before trace)"); record_function
 * annotations become annotation slices; stacks, streams, block sizes, segments and oom
 * entries go to hm_trace.snap (store.h). Plain C, no Lua.
 *
 * Ownership: as every reader (reader.h); the store owns everything afterwards. */
#ifndef HM_SNAPSHOT_H
#define HM_SNAPSHOT_H

#include "reader.h"

/* The category of a record_function range the snapshot has no END of (it was taken during
 * the range), where the others have "user_annotation": a ProfilerStep#N of it is a step the
 * snapshot ends in, partial (explain.c). */
#define HM_SNAP_OPEN_RANGE "user_annotation (open at the snapshot)"

/* An hm_reader_fn for trace.c's readers[] table (magic: the PROTO opcode, 0x80). */
int hm_snapshot_read(hm_trace *t, const hm_read_in *in, char *err, size_t errsz, int *code);

/* Whether a frame is one memory_viz shows (its frameFilter: unwinding, the interpreter's
 * own C frames and dispatcher boxing are left out). */
int hm_snapshot_frame_shown(const char *file, const char *name);

#endif
