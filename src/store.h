/* store: the columns one trace file becomes, whatever its format: [memory] events and host
 * slices as structs of arrays (index = file order), the interned names and threads, and
 * what was counted and skipped. A reader (kineto.c; one file per input format) creates a
 * store, appends to it, and hands it on; nothing else writes it. Plain C, no Lua.
 *
 * Ownership: hm_store_new returns a store its caller owns; every array and string in it
 * belongs to it and is freed by hm_store_free (hm_trace_free, for the store of a file read).
 * After the reader returns it the store is read-only (but for the device columns, which
 * the analysis frees): the analysis and the writers keep pointers into its columns and
 * tables for as long as they keep the store.
 *
 * Limits, checked by the readers before they append (so the sums the analysis makes in
 * int64 cannot overflow): times within +-HM_STORE_TS_LIMIT ns, each size and the sum of
 * all sizes within HM_STORE_MEM_LIMIT bytes, Total Allocated within +-HM_STORE_MEM_LIMIT.
 *
 * Growth: columns grow together, doubling from 1024 rows; hm_store_reserve sizes them once
 * from the file's size (address space only until touched, so a generous guess costs
 * nothing). Nothing is shrunk to fit: untouched room takes no memory, and shrinking copies.
 * The packed columns (pack.h) grow by blocks of 64 rows and never copy. */
#ifndef HM_STORE_H
#define HM_STORE_H

#include "util.h"
#include "pack.h"

#include <stdint.h>

#define HM_NONE INT64_MIN /* an absent optional integer field */

/* Times are int64 ns that the analysis adds (ts + dur) and subtracts (lifetimes, time
 * since the first event): within +-2^62 ns (146 years either side of the trace's zero, far
 * beyond any real trace) none of that can overflow. */
#define HM_STORE_TS_LIMIT (INT64_C(1) << 62)
/* The analysis sums sizes in int64 (device totals, category values, the memory from before
 * the trace, which starts from Total Allocated): with all sizes together and every Total
 * Allocated within 2^60 bytes (1 EiB; no real trace comes near) no sum can overflow,
 * whichever way the events are classified. */
#define HM_STORE_MEM_LIMIT (INT64_C(1) << 60)
/* hm_store_reserve reserves at most this many rows (3 GB of address space). */
#define HM_STORE_RESERVE_MAX (UINT64_C(32) << 20)

/* [memory] events, in file order (struct of arrays; index = file order). Every column
 * but the raw addresses and devices is packed (pack.h): times and sizes of neighbouring
 * events are close, the totals run, Ev Idx counts, and the thread and whether there is an
 * Addr seldom change, so each takes 0 to 4 bytes an event, not 8. Read them with the
 * hm_mem_* accessors below. */
typedef struct hm_mem {
	size_t n, cap;      /* cap: of the plain columns */
	hm_pack ts;         /* ns, exact from the decimal text */
	hm_pack bytes;      /* signed: + allocation, - free */
	uint64_t *addr;     /* valid where has_addr; NULL once hm_analyze has paired the events,
			     * which packs it into addrs: read it with hm_mem_addr */
	hm_pack addrs;
	hm_pack total_alloc, total_res, ev_idx; /* HM_NONE where absent */
	int32_t *dev_type, *dev_id; /* NULL once hm_analyze has split the events by device:
				     * each series holds its own (analyze.h) */
	hm_pack thread;     /* id in hm_trace.threads ("pid\x1ftid") */
	hm_pack has_addr;   /* 1 where the event has an Addr, else 0 */
} hm_mem;

/* [OutOfMemory] events, in file order (struct of arrays). Only Device Type, Device Id and
 * Bytes are always there (PyTorch's own test asks no more); the totals are HM_NONE where
 * absent (1.13 wrote them only when >= 0). */
typedef struct hm_ooms {
	size_t n, cap;
	int64_t *ts, *bytes, *total_alloc, *total_res; /* ns; the request (rounded); totals */
	int32_t *dev_type, *dev_id;
	uint32_t *thread;
	uint64_t *mem_at;   /* how many [memory] events the file has before it: an event at its ts
			     * and later in the file was not made when it failed */
} hm_ooms;

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
	HM_EV_OOM,          /* [OutOfMemory]: kept (hm_trace.oom) */
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
	uint64_t oom_events;    /* [OutOfMemory] instants (= oom.n) */
	uint64_t count[HM_EV_KINDS];
	uint64_t cut_at;        /* keep_partial: offset of the first incomplete event, 0 if whole */
	uint64_t lost_bytes;    /* decompressed bytes from there to where the data stopped */
	char *cut_why;          /* why it stopped ("path:offset: what") */
	int64_t first_ts;       /* ns, smallest ts of any event but metadata (ph M); HM_NONE if none */
	int has_trace_events;   /* the traceEvents key (or a top-level array) was present */
	int top_array;          /* a bare array of events: PyTorch's profiler without Kineto */
	uint64_t events_at;     /* offset in the decompressed JSON just after the '[' of the
				 * events array (where --annotate inserts its events); 0 if none */
	hm_mem mem;
	hm_slices sl;
	hm_ooms oom;
	int64_t *capacity;      /* deviceProperties totalGlobalMem by device id (0..ncapacity),
				 * HM_NONE where not given */
	size_t ncapacity;
	hm_strtab names;        /* slice names and categories, thread names */
	hm_strtab threads;      /* "pid\x1ftid", each part a canonical integer or a string */
	uint32_t *thread_name;  /* thread id -> name id (M thread_name), UINT32_MAX if none */
	size_t thread_name_cap;
	struct hm_snap *snap;   /* what only a memory snapshot has (below); NULL for traces */
} hm_trace;

/* An empty store for the file path (copied), rank and first_ts HM_NONE. */
hm_trace *hm_store_new(const char *path);
/* Room for about rows memory events and as many slices (a guess from the file size;
 * ignored below 1024, capped at HM_STORE_RESERVE_MAX). */
void hm_store_reserve(hm_trace *t, uint64_t rows);
void hm_store_free(hm_trace *t);

/* Give every column of m (or o) the capacity c; used by the appends below. */
void hm_store_grow_mem(hm_mem *m, size_t c);
void hm_store_grow_slices(hm_slices *o, size_t c);

/* One [memory] event, within the limits above (the reader has checked them). */
typedef struct hm_mem_event {
	int64_t ts, bytes, total_alloc, total_res, ev_idx;
	uint64_t addr;
	int has_addr;
	int32_t dev_type, dev_id;
	uint32_t thread;
} hm_mem_event;

static inline void hm_store_add_mem(hm_trace *t, const hm_mem_event *e)
{
	hm_mem *mm = &t->mem;
	if (mm->n == mm->cap)
		hm_store_grow_mem(mm, mm->cap ? mm->cap * 2 : 1024);
	size_t i = mm->n++;
	hm_pack_add(&mm->ts, e->ts);
	hm_pack_add(&mm->bytes, e->bytes);
	mm->addr[i] = e->addr;
	hm_pack_add(&mm->has_addr, e->has_addr != 0);
	hm_pack_add(&mm->total_alloc, e->total_alloc);
	hm_pack_add(&mm->total_res, e->total_res);
	hm_pack_add(&mm->ev_idx, e->ev_idx);
	mm->dev_type[i] = e->dev_type;
	mm->dev_id[i] = e->dev_id;
	hm_pack_add(&mm->thread, e->thread);
}

/* The time (ns) and size (+ allocation, - free) of memory event i. */
static inline int64_t hm_mem_ts(const hm_mem *m, size_t i)
{
	return hm_pack_get(&m->ts, i);
}

static inline int64_t hm_mem_bytes(const hm_mem *m, size_t i)
{
	return hm_pack_get(&m->bytes, i);
}

/* The thread of memory event i (an id in hm_trace.threads). */
static inline uint32_t hm_mem_thread(const hm_mem *m, size_t i)
{
	return (uint32_t)hm_pack_get(&m->thread, i);
}

/* Whether memory event i has an Addr. */
static inline int hm_mem_has_addr(const hm_mem *m, size_t i)
{
	return hm_pack_get(&m->has_addr, i) != 0;
}

/* The Addr of memory event i (valid where hm_mem_has_addr). */
static inline uint64_t hm_mem_addr(const hm_mem *m, size_t i)
{
	return m->addr ? m->addr[i] : (uint64_t)hm_pack_get(&m->addrs, i);
}

/* Total Allocated, Total Reserved and Ev Idx of memory event i (HM_NONE where absent). */
static inline int64_t hm_mem_total_alloc(const hm_mem *m, size_t i)
{
	return hm_pack_get(&m->total_alloc, i);
}

static inline int64_t hm_mem_total_res(const hm_mem *m, size_t i)
{
	return hm_pack_get(&m->total_res, i);
}

static inline int64_t hm_mem_ev_idx(const hm_mem *m, size_t i)
{
	return hm_pack_get(&m->ev_idx, i);
}

/* One [OutOfMemory] event (the reader has checked the store's limits on its sizes). */
void hm_store_add_oom(hm_trace *t, const hm_mem_event *e);

/* totalGlobalMem of device id (deviceProperties); ids outside 0..65535 are ignored. */
void hm_store_set_capacity(hm_trace *t, int64_t id, int64_t bytes);

/* The capacity of a device (bytes), HM_NONE when the trace does not say (and for CPUs). */
int64_t hm_store_capacity(const hm_trace *t, int32_t dev_type, int32_t dev_id);

/* One host slice; a negative duration is stored as 0. */
static inline void hm_store_add_slice(hm_trace *t, int64_t ts, int64_t dur, uint32_t name, uint32_t cat, uint32_t thread,
				      uint8_t kind)
{
	hm_slices *o = &t->sl;
	if (o->n == o->cap)
		hm_store_grow_slices(o, o->cap ? o->cap * 2 : 1024);
	size_t i = o->n++;
	o->ts[i] = ts;
	o->dur[i] = dur < 0 ? 0 : dur;
	o->name[i] = name;
	o->cat[i] = cat;
	o->kind[i] = kind;
	o->thread[i] = thread;
}

/* Ids of a name (slice name, category, thread name) and of a thread key ("pid\x1ftid"). */
static inline uint32_t hm_store_name(hm_trace *t, const char *s, size_t n)
{
	return hm_strtab_intern(&t->names, s, n);
}

static inline uint32_t hm_store_thread(hm_trace *t, const char *key, size_t n)
{
	return hm_strtab_intern(&t->threads, key, n);
}

/* The name (an id from hm_store_name) of a thread; the last one given wins. */
void hm_store_name_thread(hm_trace *t, uint32_t thread, uint32_t name);

/* An event's time, for first_ts. */
static inline void hm_store_saw_ts(hm_trace *t, int64_t ts)
{
	if (t->first_ts == HM_NONE || ts < t->first_ts)
		t->first_ts = ts;
}

/* What only a PyTorch memory snapshot has (snapshot.c fills it; README "Snapshots").
 * Columns by memory event; stacks interned, so memory grows with the entries and the
 * distinct frames, not with the frames of every entry. */
typedef struct hm_frame {
	uint32_t file, name; /* ids in hm_trace.names */
	int64_t line;        /* 2^64-1 in a file (PyTorch's -1 written unsigned) reads -1 */
} hm_frame;

/* A segment (or expandable mapping) as the snapshot ends: its blocks summed by state. */
typedef struct hm_snapseg {
	int32_t dev;
	uint64_t addr;
	int64_t total, allocated, requested, pending, inactive, blocks; /* bytes; requested:
				 * what the allocated and pending blocks asked for */
	int64_t allocated_requested; /* what the allocated blocks (not those pending) asked for */
	int64_t largest_free; /* the largest inactive block */
	int sized;            /* every live block says what it asked for (requested_size, or
			       * real_size in 1.13's history); else requested counts its size */
	int64_t stream;       /* HM_NONE where absent */
	int64_t pool[2];      /* segment_pool_id (2.1+), HM_NONE where absent */
} hm_snapseg;

/* A segment's life (snapseg.c, hm_snapseg_lives): a segment of the end, or one a
 * segment_free or segment_unmap entry gave back, from the segment_alloc or segment_map entry
 * that made it (born) to the one that gave it back (died). Times in ns as the entries';
 * born_at and died_at are the memory events of those entries (their zero-byte events in
 * hm_trace.mem: snapshot.c adds one for each), UINT32_MAX with the time HM_NONE for a
 * segment made before recording began (or before the ring buffer's first entry) and for one
 * live at the end. */
enum { HM_SEGLIFE_MAPPED = 1,   /* made or given back by segment_map/segment_unmap entries */
       HM_SEGLIFE_NO_REPLAY = 2 /* its device's segment entries do not replay from the end's
				 * segments (an expandable segment mapped in parts): only the
				 * end is known, and every life of the device says so */ };
typedef struct hm_seglife {
	int32_t dev;
	uint32_t flags;
	uint64_t addr;
	int64_t size, stream, pool[2]; /* HM_NONE where unknown (a segment given back: no pool) */
	int64_t born_ts, died_ts;
	uint32_t born_at, died_at;
} hm_seglife;

/* The segments of a device at one moment (snapseg.c): live blocks are allocated or pending
 * a free; a segment without one is reclaimable, the rest of a segment with one stranded
 * (its free blocks and the rounding of its live ones). segments is HM_NONE when unknown. */
typedef struct hm_segstate {
	int64_t segments, reserved, requested, reclaimable, stranded;
} hm_segstate;

/* An oom entry: what a snapshot adds to the OOM report (the request and the reserved bytes
 * at it are in hm_trace.oom, at the same index: ooms[i] is t->oom's event i). */
typedef struct hm_snapoom {
	int64_t ts, bytes, device_free; /* ns; bytes; HM_NONE where absent */
	int32_t dev;
	uint32_t stack;   /* UINT32_MAX: none */
	uint32_t mem_at;  /* memory events before it in file order */
	hm_segstate segs; /* the segments at it, by replay from the end (snapseg.h) */
} hm_snapoom;

/* Where a memory event of a snapshot comes from: a trace entry (alloc, free_completed, or a
 * segment event as a zero-byte event carrying the totals), the zero-byte event that starts
 * a device with the totals before its first entry, or a live block of the segments that no
 * entry allocated: a row allocated before the first entry (analyze.c marks it live from
 * the start, hm_series.before 2). */
enum hm_snap_origin { HM_SNAP_ENTRY, HM_SNAP_BASELINE, HM_SNAP_BLOCK };

typedef struct hm_snap {
	size_t cap;                 /* of the columns below, indexed like hm_mem */
	hm_pack block_bytes;        /* the rounded block size, where the segments tell; HM_NONE */
	hm_pack segment;            /* the address of that block's segment; HM_NONE */
	hm_pack stream;             /* HM_NONE where absent (packed, pack.h: the first two are set
				     * only on rows of live blocks, the stream seldom changes) */
	uint8_t *origin;            /* enum hm_snap_origin */
	uint32_t *stack;            /* id in stacks; UINT32_MAX: no frames recorded */
	hm_pack compile_ctx, user_meta; /* ids in hm_trace.names; UINT32_MAX: absent (packed: few
				     * distinct, most rows have none) */
	hm_strtab frames;           /* each the bytes of one hm_frame */
	hm_strtab stacks;           /* each the uint32_t frame ids, innermost first, filtered */
	uint32_t *stack_frame;      /* by stack id: its first user frame as "file(line): name"
				     * (an id in hm_trace.names), UINT32_MAX: none */
	hm_snapseg *segs;
	size_t nsegs, capsegs;
	hm_snapoom *ooms;
	size_t nooms, capooms;
	hm_seglife *lives;          /* by device, each device's by address (snapseg.h) */
	size_t nlives, caplives;
	uint64_t entries, skipped;  /* trace entries read; of them not memory events (segment
				     * events, free_requested, snapshot, annotate, unknown actions) */
	uint64_t untimed;           /* entries without time_us (before 2.2): each is 1 us after
				     * the entry before it, from 0 (entry_ts in snapshot.c) */
	int protocol;
	int overflowed; int64_t max_entries; /* allocator_settings' trace_alloc_* (snaphost.h) */
} hm_snap;

/* Frame id -> the frame; stack id -> its frame ids (innermost first) and how many. */
static inline hm_frame hm_snap_frame(const hm_snap *s, uint32_t id)
{
	hm_frame f;
	__builtin_memcpy(&f, s->frames.str[id], sizeof f);
	return f;
}

static inline size_t hm_snap_stack(const hm_snap *s, uint32_t id, const uint32_t **ids)
{
	*ids = (const uint32_t *)(const void *)s->stacks.str[id];
	return s->stacks.len[id] / sizeof(uint32_t);
}

/* Frees a snapshot's part of a store (hm_store_free calls it). */
void hm_store_free_snap(hm_snap *s);

#endif
