#include "fields.h"

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
	[HM_F_FRAME] = "frame", [HM_F_FRAMES] = "frames", [HM_F_BLOCK_BYTES] = "block_bytes", [HM_F_STREAM] = "stream",
	[HM_F_COMPILE_CONTEXT] = "compile_context", [HM_F_USER_METADATA] = "user_metadata",
};

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

const char *hm_field_names(void)
{
	static char all[512];
	if (!all[0])
		for (int i = 1; i < HM_F_COUNT; i++) {
			if (i > 1)
				strcat(all, ", ");
			strcat(all, names[i]);
		}
	return all;
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
	const char *key = t->threads.str[th], *sep = memchr(key, 0x1f, t->threads.len[th]);
	const char *s = part ? sep + 1 : key;
	size_t n = part ? t->threads.len[th] - (size_t)(sep + 1 - key) : (size_t)(sep - key);
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
	if (r->f->t->mem.bytes[e] < 0)
		return e;
	int32_t p = r->s->partner[r->k];
	return p >= 0 ? r->s->ev[p] : UINT32_MAX;
}

/* A snapshot's own fields (store.h hm_snap), nil where the snapshot does not say. */
static void snap_field(const hm_trace *t, uint32_t e, int field, hm_value *v)
{
	const hm_snap *s = t->snap;
	uint32_t id = UINT32_MAX;
	switch (field) {
	case HM_F_BLOCK_BYTES: set_int(v, s->block_bytes[e]); return;
	case HM_F_STREAM: set_int(v, s->stream[e]); return;
	case HM_F_FRAME: id = s->stack[e] == UINT32_MAX ? UINT32_MAX : s->stack_frame[s->stack[e]]; break;
	case HM_F_COMPILE_CONTEXT: id = s->compile_ctx[e]; break;
	case HM_F_USER_METADATA: id = s->user_meta[e]; break;
	}
	if (id != UINT32_MAX)
		set_name(v, t, id);
}

size_t hm_field_frames(const hm_rowref *r, const uint32_t **ids)
{
	const hm_snap *s = r->f->t->snap;
	uint32_t e = r->s->ev[r->k];
	if (!s || s->stack[e] == UINT32_MAX)
		return 0;
	return hm_snap_stack(s, s->stack[e], ids);
}

void hm_field_get(const hm_rowref *r, int field, const hm_strtab *cats, hm_value *v)
{
	const hm_file *f = r->f;
	const hm_trace *t = f->t;
	const hm_mem *m = &t->mem;
	uint32_t e = r->s->ev[r->k];
	int64_t b = m->bytes[e];
	memset(v, 0, sizeof *v);
	switch (field) {
	case HM_F_TS: v->type = HM_V_NUM, v->d = (double)m->ts[e] / 1000.0; break;
	case HM_F_TS_NS: set_int(v, m->ts[e]); break;
	case HM_F_BYTES: set_int(v, b < 0 ? -b : b); break;
	case HM_F_KIND: set_str(v, b < 0 ? "free" : "alloc", b < 0 ? 4 : 5); break;
	case HM_F_BEFORE: v->type = HM_V_BOOL, v->i = r->s->before[r->k]; break;
	case HM_F_ADDR: set_int(v, m->has_addr[e] ? (int64_t)m->addr[e] : HM_NONE); break;
	case HM_F_DEVICE: set_str(v, r->s->device, strlen(r->s->device)); break;
	case HM_F_DEVICE_TYPE: set_int(v, r->s->dev_type); break;
	case HM_F_DEVICE_ID: set_int(v, r->s->dev_id); break;
	case HM_F_RANK: set_int(v, t->rank); break;
	case HM_F_FILE: set_str(v, t->path, strlen(t->path)); break;
	case HM_F_PID: thread_part(v, t, m->thread[e], 0); break;
	case HM_F_TID: thread_part(v, t, m->thread[e], 1); break;
	case HM_F_EV_IDX: set_int(v, m->ev_idx[e]); break;
	case HM_F_TOTAL_ALLOC: set_int(v, m->total_alloc[e]); break;
	case HM_F_TOTAL_RES: set_int(v, m->total_res[e]); break;
	case HM_F_FREE_TS: {
		uint32_t fe = free_event(r);
		if (fe != UINT32_MAX)
			v->type = HM_V_NUM, v->d = (double)m->ts[fe] / 1000.0;
		break;
	}
	case HM_F_LIFETIME: {
		int32_t p = r->s->partner[r->k];
		if (p >= 0) {
			int64_t d = m->ts[r->s->ev[p]] - m->ts[e];
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
	case HM_F_STEP: set_int(v, f->step_of[e] < 0 ? HM_NONE : f->step_of[e]); break;
	case HM_F_FREE_STEP: {
		uint32_t fe = free_event(r);
		set_int(v, fe == UINT32_MAX || f->step_of[fe] < 0 ? HM_NONE : f->step_of[fe]);
		break;
	}
	case HM_F_MODULE:
		for (int32_t s = f->inner_of[e]; s >= 0; s = f->parent[s]) {
			const char *n = t->names.str[t->sl.name[s]];
			if (t->sl.kind[s] == HM_SL_PYTHON && t->sl.ts[s] + t->sl.dur[s] >= m->ts[e] &&
			    strncmp(n, "nn.Module: ", 11) == 0) {
				set_str(v, n + 11, t->names.len[t->sl.name[s]] - 11);
				break;
			}
		}
		break;
	case HM_F_THREAD: {
		uint32_t th = m->thread[e];
		if (th < t->thread_name_cap && t->thread_name[th] != UINT32_MAX)
			set_name(v, t, t->thread_name[th]);
		break;
	}
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
	       field == HM_F_STACK || field == HM_F_FRAMES;
}

size_t hm_field_list(const hm_rowref *r, int field, int32_t *out, size_t cap)
{
	uint32_t e = r->s->ev[r->k];
	switch (field) {
	case HM_F_OPS: return hm_context(r->f, e, HM_KIND(HM_SL_OP), out, cap);
	case HM_F_ANNOTATIONS: return hm_context(r->f, e, HM_KIND(HM_SL_ANNOTATION), out, cap);
	case HM_F_PYTHON: return hm_context(r->f, e, HM_KIND(HM_SL_PYTHON), out, cap);
	case HM_F_STACK: return hm_context(r->f, e, HM_KINDS_ALL, out, cap);
	case HM_F_FREE_OPS: {
		uint32_t fe = free_event(r);
		return fe == UINT32_MAX ? 0 : hm_context(r->f, fe, HM_KIND(HM_SL_OP), out, cap);
	}
	default: return 0;
	}
}
