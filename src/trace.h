/* trace: stream one Kineto trace file into columns. Keeps the [memory] events and
 * the host-side op slices; everything else is counted and skipped. Plain C, no Lua. */
#ifndef HM_TRACE_H
#define HM_TRACE_H

#include "util.h"

#include <stdint.h>

#define HM_NONE INT64_MIN /* an absent optional integer field */

/* [memory] events, in file order (struct of arrays; index = file order). */
typedef struct hm_mem {
	size_t n, cap;
	int64_t *ts;        /* ns, exact from the decimal text */
	int64_t *bytes;     /* signed: + allocation, - free */
	uint64_t *addr;     /* valid where has_addr */
	int64_t *total_alloc, *total_res, *ev_idx; /* HM_NONE where absent */
	int32_t *dev_type, *dev_id;
	uint32_t *thread;   /* id in hm_trace.threads ("pid\x1ftid") */
	uint8_t *has_addr;
} hm_mem;

/* What a host slice is, from its category. */
enum hm_slice_kind {
	HM_SL_OTHER,      /* cuda_runtime and anything else on a host thread */
	HM_SL_OP,         /* cpu_op (Operator in 2021 traces) */
	HM_SL_ANNOTATION, /* user_annotation: record_function ranges */
	HM_SL_PYTHON,     /* python_function: with_stack / with_modules frames */
};

/* Host-side slices (ph X; device-side categories such as kernels and memcpy are left
 * out), in file order. */
typedef struct hm_slices {
	size_t n, cap;
	int64_t *ts, *dur; /* ns */
	uint32_t *name;    /* id in hm_trace.names */
	uint32_t *thread;
	uint32_t *cat;     /* id in hm_trace.names */
	uint8_t *kind;     /* enum hm_slice_kind */
} hm_slices;

/* What each element of traceEvents was; the counts add up to hm_trace.events. */
enum hm_ev_kind {
	HM_EV_MEMORY,       /* [memory]: used */
	HM_EV_HOST_SLICE,   /* ph X on a host thread: used as context */
	HM_EV_THREAD_NAME,  /* M thread_name: used as context */
	HM_EV_OOM,          /* [OutOfMemory]: counted only */
	HM_EV_DEVICE_SLICE, /* ph X on a device (kernels, memcpy, ...): not needed */
	HM_EV_FLOW,         /* ph s/f/t: not needed */
	HM_EV_METADATA,     /* other M events: not needed */
	HM_EV_OTHER,        /* anything else: not needed */
	HM_EV_KINDS
};
extern const char *const hm_ev_kind_names[HM_EV_KINDS];

typedef struct hm_trace {
	char *path;
	int64_t rank;           /* HM_NONE when unknown */
	uint64_t events;        /* elements of traceEvents */
	uint64_t oom_events;    /* [OutOfMemory] instants (counted, not used) */
	uint64_t count[HM_EV_KINDS];
	uint64_t cut_at;        /* keep_partial: offset of the first incomplete event, 0 if whole */
	uint64_t lost_bytes;    /* decompressed bytes from there to where the data stopped */
	char *cut_why;          /* why it stopped ("path:offset: what") */
	int64_t first_ts;       /* ns, smallest ts of any event; HM_NONE if none */
	int has_trace_events;   /* the traceEvents key (or a top-level array) was present */
	uint64_t events_at;     /* offset in the decompressed JSON just after the '[' of the
				 * events array (where --annotate inserts its events); 0 if none */
	hm_mem mem;
	hm_slices sl;
	hm_strtab names;        /* slice names and categories, thread names */
	hm_strtab threads;      /* "pid\x1ftid", each part a canonical integer or a string */
	uint32_t *thread_name;  /* thread id -> name id (M thread_name), UINT32_MAX if none */
	size_t thread_name_cap;
} hm_trace;

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
	int threads;        /* 1: all on the caller's thread; 2 or more: gzip inflates on a thread of
			     * its own and events are parsed on another while the caller scans */
} hm_read_opts;

hm_trace *hm_trace_read_opts(const char *path, const hm_read_opts *o, char *err, size_t errsz, int *code,
			     uint64_t *events_before_error);

/* Parse in-memory JSON text (for tests and fuzzing); same contract as hm_trace_read. */
hm_trace *hm_trace_parse(const char *name, const char *text, size_t len, char *err, size_t errsz);

void hm_trace_free(hm_trace *t);

/* Rank from a file name: the N of the last "rank-N" or "rank_N" in the base name, or HM_NONE. */
int64_t hm_trace_rank_from_name(const char *path);

#endif
