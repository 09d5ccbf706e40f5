/* fields: the fields of a row (one memory event of a series), computed on demand.
 * Plain C: the Lua row reads them through here, and so do C-side aggregations. */
#ifndef HM_FIELDS_H
#define HM_FIELDS_H

#include "analyze.h"

typedef struct hm_rowref {
	const hm_file *f;
	const hm_series *s;
	uint32_t k; /* position in the series */
} hm_rowref;

enum hm_field {
	HM_F_NONE,
	HM_F_TS, HM_F_TS_NS, HM_F_BYTES, HM_F_KIND, HM_F_BEFORE, HM_F_ADDR, HM_F_DEVICE,
	HM_F_DEVICE_TYPE, HM_F_DEVICE_ID, HM_F_RANK, HM_F_FILE, HM_F_PID, HM_F_TID, HM_F_EV_IDX,
	HM_F_TOTAL_ALLOC, HM_F_TOTAL_RES, HM_F_FREE_TS, HM_F_LIFETIME, HM_F_OP, HM_F_OPS,
	HM_F_ANNOTATIONS, HM_F_STEP, HM_F_MODULE, HM_F_PYTHON, HM_F_THREAD, HM_F_FREE_OP,
	HM_F_FREE_OPS, HM_F_FREE_STEP, HM_F_STACK, HM_F_CATEGORY, HM_F_MODULES, HM_F_FRAME, HM_F_STEP_TS,
	/* context facts, cheap to compare and to memoise on (cache_by) */
	HM_F_CONTEXT, HM_F_FREE_CONTEXT, HM_F_OPS_OPEN_AT_FREE, HM_F_SAME_STEP, HM_F_HAS_ADDR,
	HM_F_SERIES_ID, /* the row's series (file and device) as one integer */
	/* memory snapshots (README "Snapshots"); nil on traces */
	HM_F_FRAMES, HM_F_BLOCK_BYTES, HM_F_STREAM, HM_F_COMPILE_CONTEXT, HM_F_USER_METADATA, HM_F_SEGMENT,
	HM_F_FREE_FRAMES, /* the stack of the allocation's free */
	HM_F_COUNT
};

typedef enum hm_vtype { HM_V_NIL, HM_V_INT, HM_V_NUM, HM_V_STR, HM_V_BOOL, HM_V_LIST } hm_vtype;

/* A scalar field value; strings point into the trace (valid while the file lives). */
typedef struct hm_value {
	hm_vtype type;
	int64_t i; /* HM_V_INT, HM_V_BOOL */
	double d;  /* HM_V_NUM */
	const char *s;
	size_t len;
} hm_value;

/* The field id of a name, or HM_F_NONE. */
int hm_field_id(const char *name, size_t len);
/* The name of a field id (static storage). */
const char *hm_field_name(int field);
/* Room for hm_field_names' whole list (the unit tests check that it is enough). */
#define HM_FIELD_NAMES_CAP 1024
/* Every field's name, comma-separated, for error messages, written into buf[cap] (cut to
 * fit, always terminated when cap > 0); returns the whole list's length, as snprintf. */
size_t hm_field_names(char *buf, size_t cap);

/* Context ids (the context and free_context fields) remembered by slice: rows of one
 * file share the slices that enclose them, so a row costs one or two look-ups here
 * instead of a walk of its enclosing slices. Any number of rows and files may be read
 * through one memo (it starts afresh when the file changes); the files must outlive it.
 * Zero it (or hm_ctxmemo_reset) before use; it owns nothing. */
#define HM_CTXMEMO_SLOTS 4096
typedef struct hm_ctxmemo {
	const hm_file *f;
	uint32_t gen;        /* entries of another generation are empty */
	uint64_t path_hash;
	struct hm_ctxslot {
		uint32_t gen;
		int32_t slice;
		int64_t minend;  /* the earliest end of the slices the hash covers */
		uint64_t hash;   /* of the slice's enclosing chain, outermost first */
	} slot[HM_CTXMEMO_SLOTS];
} hm_ctxmemo;

/* Forget every entry (the next file's slices are other slices). */
void hm_ctxmemo_reset(hm_ctxmemo *m);

/* Whether hm_field_context answers a field: context, free_context, series_id. */
static inline int hm_field_memoised(int field)
{
	return field == HM_F_CONTEXT || field == HM_F_FREE_CONTEXT || field == HM_F_SERIES_ID;
}

/* A field of hm_field_memoised (integers) of a row, HM_NONE when nil; m may be NULL (then
 * the walk is done every time). Equal to what hm_field_get gives. */
int64_t hm_field_context(const hm_rowref *r, int field, hm_ctxmemo *m);

/* The value of a field. List fields (ops, annotations, python, free_ops, stack, modules) give
 * HM_V_LIST: read them with hm_field_list. HM_F_CATEGORY needs the category names. */
void hm_field_get(const hm_rowref *r, int field, const hm_strtab *cats, hm_value *v);

/* Whether a field is a list (the one place that says which are). */
int hm_field_is_list(int field);

/* frames (field HM_F_FRAMES) or free_frames (HM_F_FREE_FRAMES): the stack of the row's
 * event or of the allocation's free (frame ids for hm_snap_frame, innermost first) and how
 * many; 0 on traces. */
size_t hm_field_frames(const hm_rowref *r, int field, const uint32_t **ids);

/* The same stack as one integer (equal stacks, equal numbers: they are interned), or
 * HM_NONE when there is none (traces): what cache_by keys frames and free_frames on. */
int64_t hm_field_stack_id(const hm_rowref *r, int field);

/* For a list field: the slices it names (outermost first) into out, at most cap; returns
 * how many there are. */
size_t hm_field_list(const hm_rowref *r, int field, int32_t *out, size_t cap);

/* The text a list field shows for one of its slices: the slice's name, without
 * "nn.Module: " for modules. Points into the trace. */
const char *hm_field_item(const hm_trace *t, int field, int32_t slice, size_t *len);

/* Whether a python_function slice name is a user frame: "file(line): name" outside torch/
 * (not "<built-in ...>", not "nn.Module: ..."). */
int hm_field_user_frame(const char *name, size_t len);

/* The items (hm_field_item) of list field `field`'s slices sl[0, n) joined by " > " (outermost first) into *buf (grown, owned by
 * the caller); returns the length. The one way a list of names becomes one text. */
size_t hm_names_join(const hm_trace *t, int field, const int32_t *sl, size_t n, char **buf, size_t *cap);

#endif
