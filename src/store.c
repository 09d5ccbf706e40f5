/* The column store's growth and lifetime (see store.h). */
#include "store.h"

#include <stdlib.h>

const char *const hm_ev_kind_names[HM_EV_KINDS] = {
	[HM_EV_MEMORY] = "memory", [HM_EV_HOST_SLICE] = "host_slices", [HM_EV_THREAD_NAME] = "thread_names",
	[HM_EV_OOM] = "oom", [HM_EV_DEVICE_SLICE] = "device_slices", [HM_EV_FLOW] = "flows",
	[HM_EV_METADATA] = "metadata", [HM_EV_OTHER] = "other",
};

hm_trace *hm_store_new(const char *path)
{
	hm_trace *t = hm_xcalloc(1, sizeof *t);
	t->path = hm_xstrdup(path);
	t->rank = HM_NONE;
	t->first_ts = HM_NONE;
	return t;
}

/* Columns grow together: every array of a struct of arrays gets the same new capacity. */
#define GROW(arr, c) ((arr) = hm_xrealloc((arr), (c) * sizeof *(arr)))

void hm_store_grow_mem(hm_mem *mm, size_t c)
{
	GROW(mm->addr, c), GROW(mm->dev_type, c), GROW(mm->dev_id, c);
	mm->cap = c;
}

void hm_store_grow_slices(hm_slices *o, size_t c)
{
	GROW(o->ts, c), GROW(o->dur, c), GROW(o->name, c), GROW(o->thread, c), GROW(o->cat, c), GROW(o->kind, c);
	o->cap = c;
}

/* Columns sized at the start: growing copies a column into fresh memory, and on a virtual
 * machine fresh memory is what costs (1 GiB trace: 1.41 s of CPU -> 1.14 s). Room that
 * stays unused is address space only (never touched, it takes no memory); columns grow as
 * before past it. */
void hm_store_reserve(hm_trace *t, uint64_t n)
{
	if (n > HM_STORE_RESERVE_MAX)
		n = HM_STORE_RESERVE_MAX;
	if (n > 1024) {
		hm_store_grow_mem(&t->mem, (size_t)n);
		hm_pack_reserve(&t->mem.ts, (size_t)n);
		hm_pack_reserve(&t->mem.bytes, (size_t)n);
		hm_pack_reserve(&t->mem.thread, (size_t)n);
		hm_pack_reserve(&t->mem.has_addr, (size_t)n);
		hm_pack_reserve(&t->mem.total_alloc, (size_t)n);
		hm_pack_reserve(&t->mem.total_res, (size_t)n);
		hm_pack_reserve(&t->mem.ev_idx, (size_t)n);
		hm_store_grow_slices(&t->sl, (size_t)n);
	}
}

void hm_store_add_oom(hm_trace *t, const hm_mem_event *e)
{
	hm_ooms *o = &t->oom;
	if (o->n == o->cap) {
		size_t c = o->cap ? o->cap * 2 : 16;
		GROW(o->ts, c), GROW(o->bytes, c), GROW(o->total_alloc, c), GROW(o->total_res, c);
		GROW(o->dev_type, c), GROW(o->dev_id, c), GROW(o->thread, c), GROW(o->mem_at, c);
		o->cap = c;
	}
	size_t i = o->n++;
	o->ts[i] = e->ts, o->bytes[i] = e->bytes, o->total_alloc[i] = e->total_alloc, o->total_res[i] = e->total_res;
	o->dev_type[i] = e->dev_type, o->dev_id[i] = e->dev_id, o->thread[i] = e->thread;
	o->mem_at[i] = t->mem.n;
}

void hm_store_set_capacity(hm_trace *t, int64_t id, int64_t bytes)
{
	if (id < 0 || id > 65535)
		return;
	size_t old = t->ncapacity;
	if ((size_t)id >= old) {
		t->capacity = hm_xrealloc(t->capacity, ((size_t)id + 1) * sizeof *t->capacity);
		for (size_t i = old; i <= (size_t)id; i++)
			t->capacity[i] = HM_NONE;
		t->ncapacity = (size_t)id + 1;
	}
	t->capacity[id] = bytes;
}

/* deviceProperties lists GPUs only: a CPU (type 0) has no capacity there. */
int64_t hm_store_capacity(const hm_trace *t, int32_t dev_type, int32_t dev_id)
{
	if (dev_type == 0 || dev_id < 0 || (size_t)dev_id >= t->ncapacity)
		return HM_NONE;
	return t->capacity[dev_id];
}

void hm_store_name_thread(hm_trace *t, uint32_t th, uint32_t id)
{
	size_t old = t->thread_name_cap;
	hm_grow(&t->thread_name, &t->thread_name_cap, th + 1, sizeof *t->thread_name);
	for (size_t i = old; i < t->thread_name_cap; i++)
		t->thread_name[i] = UINT32_MAX;
	t->thread_name[th] = id;
}

void hm_store_free(hm_trace *t)
{
	if (!t)
		return;
	hm_mem *m = &t->mem;
	free(m->addr), free(m->dev_type), free(m->dev_id);
	hm_pack_free(&m->ts), hm_pack_free(&m->bytes), hm_pack_free(&m->thread), hm_pack_free(&m->has_addr);
	hm_pack_free(&m->addrs), hm_pack_free(&m->total_alloc), hm_pack_free(&m->total_res), hm_pack_free(&m->ev_idx);
	hm_slices *o = &t->sl;
	free(o->ts), free(o->dur), free(o->name), free(o->thread), free(o->cat), free(o->kind);
	hm_ooms *oo = &t->oom;
	free(oo->ts), free(oo->bytes), free(oo->total_alloc), free(oo->total_res);
	free(oo->dev_type), free(oo->dev_id), free(oo->thread), free(oo->mem_at);
	free(t->capacity);
	hm_store_free_snap(t->snap);
	free(t->thread_name);
	free(t->cut_why);
	hm_strtab_free(&t->names);
	hm_strtab_free(&t->threads);
	free(t->path);
	free(t);
}

void hm_store_free_snap(hm_snap *s)
{
	if (!s)
		return;
	hm_pack_free(&s->block_bytes), hm_pack_free(&s->segment), hm_pack_free(&s->stream);
	hm_pack_free(&s->compile_ctx), hm_pack_free(&s->user_meta);
	free(s->origin), free(s->stack);
	hm_strtab_free(&s->frames);
	hm_strtab_free(&s->stacks);
	free(s->stack_frame);
	free(s->segs);
	free(s->lives);
	free(s->ooms);
	free(s);
}
