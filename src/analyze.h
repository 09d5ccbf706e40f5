/* analyze: sort a trace's memory events, split them into series (one per device),
 * pair frees with allocations, and find each event's enclosing ops. Plain C, no Lua. */
#ifndef HM_ANALYZE_H
#define HM_ANALYZE_H

#include "trace.h"

#include <assert.h>

enum hm_kind { HM_ALLOC, HM_FREE, HM_ZERO };

enum { HM_BEFORE_TRACE = 1, HM_BEFORE_WINDOW = 3 }; /* hm_series.before (2: a snapshot's) */
/* hm_series.partner of an allocation a window cuts from its free: HM_FREED_AFTER - t, the
 * free being ev[n + t] (window.c keeps the events it cuts after the window's) */
#define HM_FREED_AFTER (-2)

/* Per-category results of one series (index = global category id). */
typedef struct hm_catstat {
	int64_t peak, at_peak, end, start;
	uint64_t allocs, alloc_bytes;
	int used;
} hm_catstat;

/* One ProfilerStep#N slice as seen by one series (explain.c). Times in ns, as hm_mem ts;
 * bytes are the device's allocated total (hmem's replay, equal to the trace's Total
 * Allocated wherever it has one). */
typedef struct hm_step {
	int32_t step;       /* N of the slice's name: 1.13 writes ProfilerStep#0 twice, so N alone is no key */
	int64_t start_ts, end_ts;
	int64_t start_bytes; /* allocated just before start_ts */
	int64_t peak_bytes, peak_ts; /* the largest state in [start_ts, end_ts], its time (start_ts if the start) */
	int64_t end_bytes;  /* allocated after the last event at or before end_ts */
	int64_t growth_bytes; /* end_bytes - start_bytes */
	int64_t survivors_bytes; /* allocated in the step and never freed in the trace */
	int64_t *cat_end;   /* by category id, ncats: each category's bytes at end_ts */
	int partial;        /* the window cuts the slice: start_ts and end_ts are the window's
			     * edges on the cut sides, and the step is left out of the leak verdict */
	int open;           /* a snapshot's step it ends in (no END): partial too, to the last event */
} hm_step;

/* One [OutOfMemory] event of a series' device (explain.c), in time order. */
typedef struct hm_oom {
	int64_t ts, bytes;  /* ns; the request (the allocator's rounded size) */
	int64_t total_allocated, total_reserved; /* from the event, HM_NONE when absent */
	int64_t reserved_unallocated; /* total_reserved - total_allocated, HM_NONE without both */
	int64_t capacity;   /* deviceProperties totalGlobalMem, HM_NONE when absent */
	long k;             /* position in series of the last event before it (earlier, or at its
			     * time and earlier in the file), -1 */
	uint32_t ev;        /* index in the trace's oom columns */
	uint32_t thread;    /* the thread that asked (id in hm_trace.threads) */
	int64_t allocated;  /* hmem's allocated total at the OOM (the state after k) */
	int64_t freed_after; /* bytes freed after it, to the trace's end */
	int32_t step;       /* N of the ProfilerStep slice running in its process, -1 */
	int64_t step_ts;    /* that slice's start, HM_NONE */
	int32_t *ops;       /* enclosing op slices, outermost first (nops of them) */
	size_t nops;
	int64_t *cat_at;    /* by category id, ncats: each category's bytes at the OOM */
} hm_oom;

/* Who made the bytes a leak verdict names: a module path or an op, and how many bytes. */
typedef struct hm_maker {
	char *name;
	int64_t bytes;
} hm_maker;

enum hm_leak { HM_LEAK_UNKNOWN = -1, HM_LEAK_NONE, HM_LEAK_GROWTH, HM_LEAK_SURVIVORS };

/* The stages a series goes through, in the order src/run.c runs them; hm_series.stage is
 * the last one that wrote it. Each writer writes its own group of fields (below) and enters
 * its stage with hm_stage_enter, which asserts (debug builds, as pipe.c asserts owners) that
 * the series is at the stage just before: a writer run out of order, or twice, stops the
 * run. Only the window may be left out (a run without one): classification then follows the
 * analysis. Each group is read-only once its writer is done.
 *   1. HM_STAGE_ANALYZED (analyze.c, hm_analyze): the events, their pairing and device;
 *      allocates the arrays of groups 1 and 3 (cat zeroed); hm_file_free frees every array
 *      here.
 *   2. HM_STAGE_WINDOWED (window.c, hm_window_apply): --steps or --from/--to cut group 1
 *      to the window and set group 2, before classification: events outside it are never
 *      classified, and no row can point at a moved position.
 *   3. HM_STAGE_CLASSIFIED (lclassify.c through hm_script_classify, or hm_file_given_cats
 *      for the categories a partial gives or a run without a rule file): cat, one
 *      category per event, and nothing else.
 *   4. HM_STAGE_TIMELINE (timeline.c, hm_timeline): the totals, the peak, what the
 *      allocator holds back and the per-category results, derived from groups 1 to 3.
 *   5. HM_STAGE_EXPLAINED (explain.c, hm_explain): steps, OOMs and the leak verdict,
 *      derived from groups 1 to 4 (hm_file_free frees them too). */
enum hm_stage {
	HM_STAGE_NONE,
	HM_STAGE_ANALYZED,
	HM_STAGE_WINDOWED,
	HM_STAGE_CLASSIFIED,
	HM_STAGE_TIMELINE,
	HM_STAGE_EXPLAINED
};

/* One (file, device). Positions k = 0..n-1 are the series' events in time order; its
 * fields are in groups, one per stage (enum hm_stage). */
typedef struct hm_series {
	int stage;         /* enum hm_stage: the last writer that ran (hm_stage_enter) */
	/* 1. analysis */
	int32_t dev_type, dev_id;
	char device[40];
	size_t n;
	uint32_t *ev;      /* k -> index in trace mem columns */
	int32_t *partner;  /* k -> position of the matching free/alloc, or -1; HM_FREED_AFTER or
			    * less for an allocation a window cuts from its free (hm_free_ev) */
	uint8_t *before;   /* k: 1 (HM_BEFORE_TRACE), a free of memory allocated before the trace
			    * (rule 3); 2, an allocation live from the start (a snapshot's live
			    * block that no entry allocated): its bytes are in the start state, and
			    * applying it changes no total (hm_mem_delta); 3 (HM_BEFORE_WINDOW), in a
			    * window, a free of memory allocated before it (category 0 already,
			    * never classified). 1 and 3 hold their size from the start. */
	int has_addr;      /* some non-zero event carries an address (pairing used them) */
	/* 2. the window */
	int based;         /* a window cut the series (window.c): base is what was live at its
			    * opening (the whole series' replay), base_ts the opening's time, and
			    * ev[n, nall) the events outside it (read only for their device) */
	int64_t base, base_ts;
	size_t nall;
	/* 3. classification */
	int32_t *cat;      /* k -> category id, -1 for zero-byte events */
	/* 4. the timeline */
	uint64_t allocs, frees, matched_frees, zero_events, mismatches;
	int64_t start_bytes, peak, peak_ts, end_bytes, max_reserved; /* max_reserved HM_NONE if absent */
	long peak_k;        /* -1: the peak is the state before the first event */
	long first_mismatch; /* position of the first mismatch, or -1 */
	hm_catstat *cats;    /* ncats of them, by category id */
	size_t ncats;
	/* what the allocator holds back (Total Reserved minus Total Allocated, both from the
	 * trace; a snapshot's events carry both, from its replay): at the peak, and its maximum
	 * (the first time it is reached). When the peak is the start state, the events that
	 * change no total before the first that does (a snapshot's baseline and live blocks)
	 * tell the totals there. HM_NONE when the trace has no Total Reserved, and on the CPU
	 * (its allocator caches nothing) */
	int64_t reserved_unallocated_at_peak, max_reserved_unallocated, max_reserved_unallocated_ts;
	/* 5. explain */
	hm_step *steps;      /* by start time */
	size_t nsteps;
	hm_oom *ooms;        /* by time */
	size_t nooms;
	int leak;            /* enum hm_leak: UNKNOWN on fewer than three whole steps */
	size_t leak_steps;   /* the whole steps (not partial) the verdict reads */
	int64_t leak_per_step; /* bytes, for a verdict of GROWTH or SURVIVORS */
	hm_maker *makers;    /* who made the surviving bytes, largest first */
	size_t nmakers;
} hm_series;

typedef struct hm_file {
	hm_trace *t;
	int32_t *inner_of;  /* mem index -> innermost enclosing host slice of any kind, or -1 */
	int32_t *parent;    /* slice -> innermost slice containing its start (earlier in sweep order), or -1 */
	int32_t *op_of;     /* mem index -> innermost enclosing op slice, or -1 */
	int32_t *step_of;   /* mem index -> the ProfilerStep#N slice running then in its process (an
			     * index in step_n and step_ts), or -1: read with hm_step_of */
	int32_t *step_n;    /* by step slice: its N */
	int64_t *step_ts;   /* by step slice: its start */
	int windowed;       /* --steps / --from --to cut the series (window.c) */
	int64_t win_from, win_to; /* the window's ns (INT64_MIN, INT64_MAX: open on that
				   * side); both HM_NONE without one */
	size_t oom_elsewhere; /* [OutOfMemory] events in no series: on a device without memory
			       * events, or without a device (explain.c) */
	hm_series *series;
	size_t nseries;
} hm_file;

/* Analyse t (the file takes ownership of t). Series are ordered by device type, then id.
 * Every series is at HM_STAGE_ANALYZED. */
hm_file *hm_analyze(hm_trace *t);
/* The classification stage without a rule file: cat from catev, the category of each
 * memory event as a partial gives it (hm_partial_capture; a free a window carries in stays
 * category 0), or, when catev is NULL (no rule file), left at 0 as the analysis made it. */
void hm_file_given_cats(hm_file *f, const int32_t *catev);
void hm_file_free(hm_file *f);

/* N of the ProfilerStep#N slice running in memory event i's process, or -1; its start
 * (HM_NONE without one). */
static inline int32_t hm_step_of(const hm_file *f, uint32_t i)
{
	return f->step_of[i] < 0 ? -1 : f->step_n[f->step_of[i]];
}

static inline int64_t hm_step_ts_of(const hm_file *f, uint32_t i)
{
	return f->step_of[i] < 0 ? HM_NONE : f->step_ts[f->step_of[i]];
}

static inline enum hm_kind hm_kind_of(int64_t bytes)
{
	return bytes > 0 ? HM_ALLOC : bytes < 0 ? HM_FREE : HM_ZERO;
}

/* The memory event that frees allocation k: its partner's, past a window's end the free
 * the window cut (its rows still tell when they are freed), else UINT32_MAX. */
static inline uint32_t hm_free_ev(const hm_series *s, size_t k)
{
	int32_t p = s->partner[k];
	return p >= 0 ? s->ev[p] : p <= HM_FREED_AFTER ? s->ev[s->n + (size_t)(HM_FREED_AFTER - p)] : UINT32_MAX;
}

/* What position k changes the device total by: its signed bytes, or 0 for an allocation
 * live from the start (before 2), whose bytes the start state holds already. hm_delta_of
 * is the same for a caller that has read the bytes (b) already. */
static inline int64_t hm_delta_of(const hm_series *s, size_t k, int64_t b)
{
	return s->before[k] == 2 ? 0 : b;
}

static inline int64_t hm_mem_delta(const hm_series *s, const hm_mem *m, size_t k)
{
	return hm_delta_of(s, k, hm_mem_bytes(m, s->ev[k]));
}

/* A writer of s enters stage st (see enum hm_stage): asserts, unless NDEBUG, that s is at
 * the stage before it (or, for classification, at the analysis: no window). */
static inline void hm_stage_enter(hm_series *s, enum hm_stage st)
{
	assert(s->stage == (int)st - 1 || (st == HM_STAGE_CLASSIFIED && s->stage == HM_STAGE_ANALYZED));
	s->stage = (int)st;
}

#define HM_KIND(k) (1u << (k)) /* a set of enum hm_slice_kind */
#define HM_KINDS_ALL 0xfu

/* The slices of the given kinds that enclose memory event i (same pid and tid, closed
 * interval), outermost first, into out (at most cap); returns how many there are (may
 * exceed cap). */
size_t hm_context(const hm_file *f, uint32_t i, unsigned kinds, int32_t *out, size_t cap);

/* The same, keeping only the slices keep (when not NULL) says yes to. */
size_t hm_context_where(const hm_file *f, uint32_t i, unsigned kinds, int (*keep)(const hm_trace *, int32_t), int32_t *out,
			size_t cap);

/* The innermost slice of the given kinds enclosing memory event i, or -1. */
int32_t hm_innermost(const hm_file *f, uint32_t i, unsigned kinds);

/* Device name from c10's DeviceType enum: "cuda:0", "cpu", "type9:0". */
void hm_device_name(char *buf, size_t n, int32_t type, int32_t id);

#endif
