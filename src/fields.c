#include "fields.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[HM_F_COUNT] = {
	[HM_F_TS] = "ts", [HM_F_TS_NS] = "ts_ns", [HM_F_BYTES] = "bytes", [HM_F_KIND] = "kind",
	[HM_F_BEFORE] = "before_trace", [HM_F_ADDR] = "addr", [HM_F_DEVICE] = "device",
	[HM_F_DEVICE_TYPE] = "device_type", [HM_F_DEVICE_ID] = "device_id", [HM_F_RANK] = "rank",
	[HM_F_FILE] = "file", [HM_F_PID] = "pid", [HM_F_TID] = "tid", [HM_F_EV_IDX] = "ev_idx",
	[HM_F_TOTAL_ALLOC] = "total_allocated", [HM_F_TOTAL_RES] = "total_reserved",
	[HM_F_FREE_TS] = "free_ts", [HM_F_LIFETIME] = "lifetime", [HM_F_OP] = "op", [HM_F_OPS] = "ops",
	[HM_F_ANNOTATIONS] = "annotations", [HM_F_STEP] = "step", [HM_F_MODULE] = "module",
	[HM_F_PYTHON] = "python", [HM_F_THREAD] = "thread", [HM_F_FREE_OP] = "free_op",
	[HM_F_FREE_OPS] = "free_ops", [HM_F_FREE_STEP] = "free_step", [HM_F_STACK] = "stack", [HM_F_CATEGORY] = "category",
	[HM_F_MODULES] = "modules", [HM_F_FRAME] = "frame", [HM_F_STEP_TS] = "step_ts",
	[HM_F_CONTEXT] = "context", [HM_F_FREE_CONTEXT] = "free_context", [HM_F_OPS_OPEN_AT_FREE] = "ops_open_at_free",
	[HM_F_SAME_STEP] = "same_step", [HM_F_HAS_ADDR] = "has_addr", [HM_F_SERIES_ID] = "series_id",
	[HM_F_FRAMES] = "frames", [HM_F_BLOCK_BYTES] = "block_bytes", [HM_F_STREAM] = "stream",
	[HM_F_COMPILE_CONTEXT] = "compile_context", [HM_F_USER_METADATA] = "user_metadata", [HM_F_SEGMENT] = "segment",
	[HM_F_FREE_FRAMES] = "free_frames",
};

#define MODULE_PREFIX "nn.Module: "
#define MODULE_PREFIX_LEN 11

static int is_module(const char *s, size_t n)
{
	return n > MODULE_PREFIX_LEN && memcmp(s, MODULE_PREFIX, MODULE_PREFIX_LEN) == 0;
}

/* with_stack writes frames as "path(line): name", the path as Python gives it: relative to
 * site-packages ("torch/nn/modules/module.py(1743): _call_impl") or absolute. */
int hm_field_user_frame(const char *s, size_t n)
{
	const char *open = memchr(s, '(', n);
	if (!n || *s == '<' || is_module(s, n) || !open || open == s || !memchr(open, ')', n - (size_t)(open - s)))
		return 0;
	size_t path = (size_t)(open - s);
	if (path >= 6 && memcmp(s, "torch/", 6) == 0)
		return 0;
	for (size_t i = 0; i + 7 <= path; i++)
		if (memcmp(s + i, "/torch/", 7) == 0)
			return 0;
	return 1;
}

const char *hm_field_item(const hm_trace *t, int field, int32_t slice, size_t *len)
{
	uint32_t nm = t->sl.name[slice];
	const char *s = t->names.str[nm];
	*len = t->names.len[nm];
	if (field == HM_F_MODULES && is_module(s, *len))
		s += MODULE_PREFIX_LEN, *len -= MODULE_PREFIX_LEN;
	return s;
}

int hm_field_id(const char *name, size_t len)
{
	for (int i = 1; i < HM_F_COUNT; i++)
		if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0)
			return i;
	return HM_F_NONE;
}

const char *hm_field_name(int field)
{
	return field > 0 && field < HM_F_COUNT ? names[field] : "?";
}

size_t hm_field_names(char *buf, size_t cap)
{
	size_t n = 0;
	for (int i = 1; i < HM_F_COUNT; i++) {
		int w = snprintf(n < cap ? buf + n : NULL, n < cap ? cap - n : 0, "%s%s", i > 1 ? ", " : "", names[i]);
		n += (size_t)w;
	}
	return n;
}

static void set_int(hm_value *v, int64_t x)
{
	v->type = x == HM_NONE ? HM_V_NIL : HM_V_INT;
	v->i = x;
}

static void set_str(hm_value *v, const char *s, size_t len)
{
	v->type = HM_V_STR;
	v->s = s;
	v->len = len;
}

static void set_name(hm_value *v, const hm_trace *t, uint32_t id)
{
	set_str(v, t->names.str[id], t->names.len[id]);
}

/* pid or tid from the thread key "pid\x1ftid": an integer when it is one. */
static void thread_part(hm_value *v, const hm_trace *t, uint32_t th, int part)
{
	const char *key = t->threads.str[th], *tid;
	size_t tl, pl = hm_thread_split(key, t->threads.len[th], &tid, &tl);
	const char *s = part ? tid : key;
	size_t n = part ? tl : pl;
	int64_t x;
	if (n == 0)
		v->type = HM_V_NIL;
	else if (!hm_num_i64(s, n, 0, 0, &x))
		set_int(v, x);
	else
		set_str(v, s, n);
}

/* The memory event whose context a free_* field describes: the allocation's free, or a
 * free row itself; UINT32_MAX when the allocation is not freed in the trace. */
static uint32_t free_event(const hm_rowref *r)
{
	uint32_t e = r->s->ev[r->k];
	if (hm_mem_bytes(&r->f->t->mem, e) < 0)
		return e;
	return hm_free_ev(r->s, r->k);
}

#define END(o, s) ((o)->ts[s] + (o)->dur[s])

/* A row's context as one integer: a hash of the file's path, the thread and the name,
 * category and kind of every enclosing slice (the walk of hm_context) but the
 * ProfilerStep#N markers, so that every step's run of the same code has one context. Rows
 * of equal context have equal thread and equal op, ops, annotations, python, module and
 * stack names up to the step markers: a pack memoises what it derives from those on it.
 * The slices' part is a polynomial hash, outermost first (H = H_outer * B + v(slice)): a
 * slice's hash follows from its parent's, which the memo keeps, and a walk from the
 * innermost slice outwards gives the same number. */
#define CHAIN_B 0x9e3779b97f4a7c15ull
#define CHAIN_SEED 14695981039346656037ull

static uint64_t mix64(uint64_t x) /* splitmix64's finaliser */
{
	x = (x ^ x >> 30) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ x >> 27) * 0x94d049bb133111ebull;
	return x ^ x >> 31;
}

static int is_step_slice(const hm_trace *t, int32_t s)
{
	uint32_t nm = t->sl.name[s];
	return t->names.len[nm] >= 13 && memcmp(t->names.str[nm], "ProfilerStep#", 13) == 0;
}

static uint64_t slice_value(const hm_slices *o, int32_t s)
{
	return mix64((uint64_t)o->name[s] * 0x9fb21c651e98df25ull ^ ((uint64_t)o->cat[s] << 8 | o->kind[s]));
}

static uint64_t path_hash(const char *p)
{
	uint64_t h = 14695981039346656037ull;
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h;
}

static int64_t context_final(uint64_t chain, uint64_t path, uint32_t thread)
{
	return (int64_t)(mix64(chain ^ mix64(path ^ thread)) >> 1); /* never HM_NONE */
}

/* The chain hash of slice s and its enclosing slices still running at ts, walked from s
 * outwards; *minend (when given) gets the earliest end among them. */
static uint64_t chain_from(const hm_file *f, int32_t s, int64_t ts, int64_t *minend)
{
	const hm_slices *o = &f->t->sl;
	uint64_t acc = 0, pw = 1;
	int64_t least = INT64_MAX;
	for (; s >= 0; s = f->parent[s])
		if (END(o, s) >= ts && !is_step_slice(f->t, s)) {
			acc += slice_value(o, s) * pw;
			pw *= CHAIN_B;
			if (END(o, s) < least)
				least = END(o, s);
		}
	if (minend)
		*minend = least;
	return acc + CHAIN_SEED * pw;
}

/* The chain hash of event e's enclosing slices, walked from the innermost. */
static uint64_t chain_walk(const hm_file *f, uint32_t e)
{
	return chain_from(f, f->inner_of[e], hm_mem_ts(&f->t->mem, e), NULL);
}

void hm_ctxmemo_reset(hm_ctxmemo *m)
{
	m->f = NULL;
}

/* Slice s's memo entry (made from its nearest remembered ancestor), or NULL for a chain
 * deeper than the climb keeps. */
static const struct hm_ctxslot *chain_entry(hm_ctxmemo *m, const hm_file *f, int32_t s)
{
	const hm_slices *o = &f->t->sl;
	int32_t path[256];
	int n = 0;
	uint64_t h = CHAIN_SEED;
	int64_t minend = INT64_MAX;
	struct hm_ctxslot *e = NULL;
	for (; s >= 0; s = f->parent[s]) {
		e = &m->slot[(uint32_t)s % HM_CTXMEMO_SLOTS];
		if (e->gen == m->gen && e->slice == s) {
			h = e->hash, minend = e->minend;
			break;
		}
		if (n == (int)(sizeof path / sizeof *path))
			return NULL;
		path[n++] = s;
	}
	while (n--) {
		s = path[n];
		/* An enclosing slice that ended before s began (a python frame whose end came early)
		 * encloses nothing under s: s's chain is worked out afresh without it, once, rather
		 * than every event under s walking its whole chain. */
		if (minend < o->ts[s])
			h = chain_from(f, f->parent[s], o->ts[s], &minend);
		if (!is_step_slice(f->t, s)) { /* a step marker's end does not matter: it is never in the hash */
			h = h * CHAIN_B + slice_value(o, s);
			if (END(o, s) < minend)
				minend = END(o, s);
		}
		e = &m->slot[(uint32_t)s % HM_CTXMEMO_SLOTS];
		*e = (struct hm_ctxslot){m->gen, s, minend, h};
	}
	return e;
}

/* The memo of file f (it starts afresh when the file changes). */
static void memo_for(hm_ctxmemo *m, const hm_file *f)
{
	if (m->f == f)
		return;
	if (++m->gen == 0) {
		memset(m->slot, 0, sizeof m->slot);
		m->gen = 1;
	}
	m->f = f;
	m->path_hash = path_hash(f->t->path);
}

/* The context of event e: from the memo when every slice of its chain still runs at e. */
static int64_t context_of(const hm_file *f, uint32_t e, hm_ctxmemo *m)
{
	const hm_trace *t = f->t;
	if (!m)
		return context_final(chain_walk(f, e), path_hash(t->path), hm_mem_thread(&t->mem, e));
	memo_for(m, f);
	uint64_t chain = CHAIN_SEED;
	int32_t s = f->inner_of[e];
	if (s >= 0) {
		const struct hm_ctxslot *c = chain_entry(m, f, s);
		chain = c && hm_mem_ts(&t->mem, e) <= c->minend ? c->hash : chain_walk(f, e);
	}
	return context_final(chain, m->path_hash, hm_mem_thread(&t->mem, e));
}

int64_t hm_field_context(const hm_rowref *r, int field, hm_ctxmemo *m)
{
	if (field == HM_F_SERIES_ID) { /* the file's path and the device, as a context is made */
		uint64_t path = m ? (memo_for(m, r->f), m->path_hash) : path_hash(r->f->t->path);
		uint64_t dev = (uint64_t)(uint32_t)r->s->dev_type << 32 | (uint32_t)r->s->dev_id;
		return (int64_t)(mix64(path ^ mix64(dev ^ 0x5e1e5ull)) >> 1);
	}
	uint32_t e = field == HM_F_CONTEXT ? r->s->ev[r->k] : free_event(r);
	return e == UINT32_MAX ? HM_NONE : context_of(r->f, e, m);
}

/* How many leading entries of the ops enclosing e (outermost first) still run at free_ts:
 * a nested op ends before its parent, so these are the ops that were running at the free.
 * One walk from the innermost: the answer ends before the outermost op that had ended. */
static size_t ops_open_at(const hm_file *f, uint32_t e, int64_t free_ts)
{
	const hm_slices *o = &f->t->sl;
	int64_t ts = hm_mem_ts(&f->t->mem, e);
	size_t n = 0, ended = SIZE_MAX; /* ended: the position from the innermost of the outermost ended op */
	for (int32_t s = f->inner_of[e]; s >= 0; s = f->parent[s])
		if (o->kind[s] == HM_SL_OP && END(o, s) >= ts) {
			if (END(o, s) < free_ts)
				ended = n;
			n++;
		}
	return ended == SIZE_MAX ? n : n - 1 - ended;
}

/* A snapshot's own fields (store.h hm_snap), nil where the snapshot does not say. */
static void snap_field(const hm_trace *t, uint32_t e, int field, hm_value *v)
{
	const hm_snap *s = t->snap;
	uint32_t id = UINT32_MAX;
	switch (field) {
	case HM_F_BLOCK_BYTES: set_int(v, hm_pack_get(&s->block_bytes, e)); return;
	case HM_F_STREAM: set_int(v, hm_pack_get(&s->stream, e)); return;
	case HM_F_SEGMENT: set_int(v, hm_pack_get(&s->segment, e)); return;
	case HM_F_FRAME: id = s->stack[e] == UINT32_MAX ? UINT32_MAX : s->stack_frame[s->stack[e]]; break;
	case HM_F_COMPILE_CONTEXT: id = (uint32_t)hm_pack_get(&s->compile_ctx, e); break;
	case HM_F_USER_METADATA: id = (uint32_t)hm_pack_get(&s->user_meta, e); break;
	}
	if (id != UINT32_MAX)
		set_name(v, t, id);
}

int64_t hm_field_stack_id(const hm_rowref *r, int field)
{
	const hm_snap *s = r->f->t->snap;
	if (!s) /* a trace: no stacks */
		return HM_NONE;
	uint32_t e = field == HM_F_FREE_FRAMES ? free_event(r) : r->s->ev[r->k];
	if (e == UINT32_MAX || s->stack[e] == UINT32_MAX)
		return HM_NONE;
	return s->stack[e];
}

size_t hm_field_frames(const hm_rowref *r, int field, const uint32_t **ids)
{
	int64_t id = hm_field_stack_id(r, field);
	return id == HM_NONE ? 0 : hm_snap_stack(r->f->t->snap, (uint32_t)id, ids);
}

void hm_field_get(const hm_rowref *r, int field, const hm_strtab *cats, hm_value *v)
{
	const hm_file *f = r->f;
	const hm_trace *t = f->t;
	const hm_mem *m = &t->mem;
	uint32_t e = r->s->ev[r->k];
	/* the size only where a field needs it: a cache_by key reads several fields a row */
	int64_t b = 0;
	memset(v, 0, sizeof *v);
	switch (field) {
	case HM_F_TS: v->type = HM_V_NUM, v->d = (double)hm_mem_ts(m, e) / 1000.0; break;
	case HM_F_TS_NS: set_int(v, hm_mem_ts(m, e)); break;
	case HM_F_BYTES: b = hm_mem_bytes(m, e), set_int(v, b < 0 ? -b : b); break;
	case HM_F_KIND: b = hm_mem_bytes(m, e), set_str(v, b < 0 ? "free" : "alloc", b < 0 ? 4 : 5); break;
	case HM_F_BEFORE: v->type = HM_V_BOOL, v->i = r->s->before[r->k] == 1; break;
	case HM_F_ADDR: set_int(v, hm_mem_has_addr(m, e) ? (int64_t)hm_mem_addr(m, e) : HM_NONE); break;
	case HM_F_DEVICE: set_str(v, r->s->device, strlen(r->s->device)); break;
	case HM_F_DEVICE_TYPE: set_int(v, r->s->dev_type); break;
	case HM_F_DEVICE_ID: set_int(v, r->s->dev_id); break;
	case HM_F_RANK: set_int(v, t->rank); break;
	case HM_F_FILE: set_str(v, t->path, strlen(t->path)); break;
	case HM_F_PID: thread_part(v, t, hm_mem_thread(m, e), 0); break;
	case HM_F_TID: thread_part(v, t, hm_mem_thread(m, e), 1); break;
	case HM_F_EV_IDX: set_int(v, hm_mem_ev_idx(m, e)); break;
	case HM_F_TOTAL_ALLOC: set_int(v, hm_mem_total_alloc(m, e)); break;
	case HM_F_TOTAL_RES: set_int(v, hm_mem_total_res(m, e)); break;
	case HM_F_FREE_TS: {
		uint32_t fe = free_event(r);
		if (fe != UINT32_MAX)
			v->type = HM_V_NUM, v->d = (double)hm_mem_ts(m, fe) / 1000.0;
		break;
	}
	case HM_F_LIFETIME: {
		int32_t p = r->s->partner[r->k];
		b = hm_mem_bytes(m, e);
		uint32_t pe = b > 0 ? hm_free_ev(r->s, r->k) : p >= 0 ? r->s->ev[p] : UINT32_MAX;
		if (pe != UINT32_MAX) {
			int64_t d = hm_mem_ts(m, pe) - hm_mem_ts(m, e);
			v->type = HM_V_NUM, v->d = (double)(d < 0 ? -d : d) / 1000.0;
		}
		break;
	}
	case HM_F_OP:
		if (f->op_of[e] >= 0)
			set_name(v, t, t->sl.name[f->op_of[e]]);
		break;
	case HM_F_FREE_OP: {
		uint32_t fe = free_event(r);
		if (fe != UINT32_MAX && f->op_of[fe] >= 0)
			set_name(v, t, t->sl.name[f->op_of[fe]]);
		break;
	}
	case HM_F_STEP: set_int(v, hm_step_of(f, e) < 0 ? HM_NONE : hm_step_of(f, e)); break;
	case HM_F_FREE_STEP: {
		uint32_t fe = free_event(r);
		set_int(v, fe == UINT32_MAX || hm_step_of(f, fe) < 0 ? HM_NONE : hm_step_of(f, fe));
		break;
	}
	case HM_F_MODULE:
	case HM_F_FRAME:
		if (field == HM_F_FRAME && t->snap) { /* a snapshot's stack, not slices */
			snap_field(t, e, field, v);
			break;
		}
		for (int32_t s = f->inner_of[e]; s >= 0; s = f->parent[s]) {
			const char *n = t->names.str[t->sl.name[s]];
			size_t len = t->names.len[t->sl.name[s]];
			if (t->sl.kind[s] != HM_SL_PYTHON || t->sl.ts[s] + t->sl.dur[s] < hm_mem_ts(m, e))
				continue;
			if (field == HM_F_MODULE && is_module(n, len)) {
				set_str(v, n + MODULE_PREFIX_LEN, len - MODULE_PREFIX_LEN);
				break;
			}
			if (field == HM_F_FRAME && hm_field_user_frame(n, len)) {
				set_str(v, n, len);
				break;
			}
		}
		break;
	case HM_F_STEP_TS:
		if (hm_step_ts_of(f, e) != HM_NONE)
			v->type = HM_V_NUM, v->d = (double)hm_step_ts_of(f, e) / 1000.0;
		break;
	case HM_F_THREAD: {
		uint32_t th = hm_mem_thread(m, e);
		if (th < t->thread_name_cap && t->thread_name[th] != UINT32_MAX)
			set_name(v, t, t->thread_name[th]);
		break;
	}
	case HM_F_CONTEXT:
	case HM_F_FREE_CONTEXT:
	case HM_F_SERIES_ID: set_int(v, hm_field_context(r, field, NULL)); break;
	case HM_F_OPS_OPEN_AT_FREE: {
		uint32_t fe = hm_mem_bytes(m, e) > 0 ? hm_free_ev(r->s, r->k) : UINT32_MAX;
		if (fe != UINT32_MAX)
			set_int(v, (int64_t)ops_open_at(f, e, hm_mem_ts(m, fe)));
		break;
	}
	case HM_F_SAME_STEP:
		if (hm_mem_bytes(m, e) > 0 && hm_step_of(f, e) >= 0) {
			uint32_t fe = hm_free_ev(r->s, r->k);
			v->type = HM_V_BOOL;
			/* the same ProfilerStep slice, not the same N: PyTorch 1.13 writes #0 twice */
			v->i = fe != UINT32_MAX && hm_step_of(f, fe) == hm_step_of(f, e) &&
			       hm_step_ts_of(f, fe) == hm_step_ts_of(f, e) &&
			       hm_thread_same_pid(&t->threads, hm_mem_thread(m, e), hm_mem_thread(m, fe));
		}
		break;
	case HM_F_HAS_ADDR: v->type = HM_V_BOOL, v->i = hm_mem_has_addr(m, e) != 0; break;
	case HM_F_CATEGORY:
		if (cats && r->s->cat[r->k] >= 0)
			set_str(v, cats->str[r->s->cat[r->k]], cats->len[r->s->cat[r->k]]);
		break;
	default:
		if (hm_field_is_list(field))
			v->type = HM_V_LIST;
		else if (t->snap)
			snap_field(t, e, field, v);
		break;
	}
}

int hm_field_is_list(int field)
{
	return field == HM_F_OPS || field == HM_F_ANNOTATIONS || field == HM_F_PYTHON || field == HM_F_FREE_OPS ||
	       field == HM_F_STACK || field == HM_F_MODULES || field == HM_F_FRAMES || field == HM_F_FREE_FRAMES;
}

static int module_slice(const hm_trace *t, int32_t s)
{
	return is_module(t->names.str[t->sl.name[s]], t->names.len[t->sl.name[s]]);
}

size_t hm_field_list(const hm_rowref *r, int field, int32_t *out, size_t cap)
{
	uint32_t e = r->s->ev[r->k];
	switch (field) {
	case HM_F_OPS: return hm_context(r->f, e, HM_KIND(HM_SL_OP), out, cap);
	case HM_F_ANNOTATIONS: return hm_context(r->f, e, HM_KIND(HM_SL_ANNOTATION), out, cap);
	case HM_F_PYTHON: return hm_context(r->f, e, HM_KIND(HM_SL_PYTHON), out, cap);
	case HM_F_STACK: return hm_context(r->f, e, HM_KINDS_ALL, out, cap);
	case HM_F_MODULES: return hm_context_where(r->f, e, HM_KIND(HM_SL_PYTHON), module_slice, out, cap);
	case HM_F_FREE_OPS: {
		uint32_t fe = free_event(r);
		return fe == UINT32_MAX ? 0 : hm_context(r->f, fe, HM_KIND(HM_SL_OP), out, cap);
	}
	default: return 0;
	}
}

size_t hm_names_join(const hm_trace *t, int field, const int32_t *sl, size_t n, char **buf, size_t *cap)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		size_t nl;
		const char *name = hm_field_item(t, field, sl[i], &nl);
		hm_grow(buf, cap, len + nl + 4, 1);
		if (i)
			memcpy(*buf + len, " > ", 3), len += 3;
		memcpy(*buf + len, name, nl);
		len += nl;
	}
	return len;
}
