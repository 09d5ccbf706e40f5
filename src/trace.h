/* trace: read one trace file into a store, whatever its format. The file's first bytes
 * (after gzip, which input.c undoes) choose the reader from a table in trace.c: today the
 * Kineto JSON reader (kineto.c), which takes anything no other reader claims. A new input
 * format is one reader file plus one line in that table. Plain C, no Lua.
 *
 * Ownership: every hm_trace returned is the caller's, freed with hm_trace_free; the reader
 * owns nothing after it returns. What is in a store, and its limits: store.h. */
#ifndef HM_TRACE_H
#define HM_TRACE_H

#include "input.h"
#include "reader.h" /* hm_read_in and hm_reader_fn, the readers' contract */
#include "store.h"

/* Read path into a new trace. On failure returns NULL with "path:offset: what" in err
 * (offset = byte offset in the decompressed JSON) and *code set to HM_EXIT_INPUT or
 * HM_EXIT_IO. The caller owns the result and frees it with hm_trace_free. */
hm_trace *hm_trace_read(const char *path, char *err, size_t errsz, int *code);
/* The same, also telling how many events were read before a failure (0 on success), and
 * storing (atomically) the file bytes consumed so far in *progress while it reads
 * (progress may be NULL). */
hm_trace *hm_trace_read_counted(const char *path, char *err, size_t errsz, int *code, uint64_t *events_before_error,
				uint64_t *progress);

typedef struct hm_read_opts {
	int keep_partial;   /* a file that stops inside its events (cut-off JSON, truncated gzip)
			     * keeps the complete events before the cut: t->cut_at, lost_bytes, cut_why */
	uint64_t *progress; /* as above, may be NULL */
	int threads;        /* how many threads the file is read on: 1, all on the caller's; a
			     * JSON trace 2: events are parsed on another while the caller scans
			     * (and inflates gzip), 3 or more: gzip inflates on a third; a snapshot
			     * 2 or more: gzip inflates on another */
} hm_read_opts;

hm_trace *hm_trace_read_opts(const char *path, const hm_read_opts *o, char *err, size_t errsz, int *code,
			     uint64_t *events_before_error);

/* Parse in-memory text (for tests and fuzzing); same contract as hm_trace_read. */
hm_trace *hm_trace_parse(const char *name, const char *text, size_t len, char *err, size_t errsz);

void hm_trace_free(hm_trace *t);

/* Rank from a file name: the N of the last "rank-N" or "rank_N" in the base name, or HM_NONE. */
int64_t hm_trace_rank_from_name(const char *path);

#endif
