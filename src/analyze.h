/* analyze: sort a trace's memory events, split them into series (one per device),
 * pair frees with allocations, and find each event's enclosing ops. Plain C, no Lua. */
#ifndef HM_ANALYZE_H
#define HM_ANALYZE_H

#include "trace.h"

enum hm_kind { HM_ALLOC, HM_FREE, HM_ZERO };

/* Per-category results of one series (index = global category id). */
typedef struct hm_catstat {
	int64_t peak, at_peak, end, start;
	uint64_t allocs, alloc_bytes;
	int used;
} hm_catstat;

/* One (file, device). Positions k = 0..n-1 are the series' events in time order. Three
 * modules write it, each its own group of fields, in the order they run; each group is
 * read-only once its writer is done:
 *   1. analysis (analyze.c, hm_analyze): the events, their pairing and device; allocates
 *      the arrays of groups 1 and 2 (cat zeroed); hm_file_free frees every array here.
 *   2. classification (lclassify.c, through hm_script_classify): cat, one category per
 *      event, and nothing else.
 *   3. the timeline (timeline.c, hm_timeline): the totals, the peak and the per-category
 *      results, derived from groups 1 and 2. */
typedef struct hm_series {
	/* 1. analysis */
	int32_t dev_type, dev_id;
	char device[40];
	size_t n;
	uint32_t *ev;      /* k -> index in trace mem columns */
	int32_t *partner;  /* k -> position of the matching free/alloc, or -1 */
	uint8_t *before;   /* k: a free of memory allocated before the trace (rule 3) */
	int has_addr;      /* some non-zero event carries an address (pairing used them) */
	/* 2. classification */
	int32_t *cat;      /* k -> category id, -1 for zero-byte events */
	/* 3. the timeline */
	uint64_t allocs, frees, matched_frees, zero_events, mismatches;
	int64_t start_bytes, peak, peak_ts, end_bytes, max_reserved; /* max_reserved HM_NONE if absent */
	long peak_k;        /* -1: the peak is the state before the first event */
	long first_mismatch; /* position of the first mismatch, or -1 */
	hm_catstat *cats;    /* ncats of them, by category id */
	size_t ncats;
} hm_series;

typedef struct hm_file {
	hm_trace *t;
	int32_t *inner_of;  /* mem index -> innermost enclosing host slice of any kind, or -1 */
	int32_t *parent;    /* slice -> innermost slice containing its start (earlier in sweep order), or -1 */
	int32_t *op_of;     /* mem index -> innermost enclosing op slice, or -1 */
	int32_t *step_of;   /* mem index -> N of the ProfilerStep#N running then in its process, or -1 */
	hm_series *series;
	size_t nseries;
} hm_file;

/* Analyse t (the file takes ownership of t). Series are ordered by device type, then id. */
hm_file *hm_analyze(hm_trace *t);
void hm_file_free(hm_file *f);

static inline enum hm_kind hm_kind_of(int64_t bytes)
{
	return bytes > 0 ? HM_ALLOC : bytes < 0 ? HM_FREE : HM_ZERO;
}

#define HM_KIND(k) (1u << (k)) /* a set of enum hm_slice_kind */
#define HM_KINDS_ALL 0xfu

/* The slices of the given kinds that enclose memory event i (same pid and tid, closed
 * interval), outermost first, into out (at most cap); returns how many there are (may
 * exceed cap). */
size_t hm_context(const hm_file *f, uint32_t i, unsigned kinds, int32_t *out, size_t cap);

/* The innermost slice of the given kinds enclosing memory event i, or -1. */
int32_t hm_innermost(const hm_file *f, uint32_t i, unsigned kinds);

/* Device name from c10's DeviceType enum: "cuda:0", "cpu", "type9:0". */
void hm_device_name(char *buf, size_t n, int32_t type, int32_t id);

#endif
