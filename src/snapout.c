/* A snapshot's own figures in the summary and in --json (see snapout.h). */
#include "snapout.h"
#include "jsonw.h"
#include "snaphost.h"
#include "snapseg.h"
#include "util.h"

#include <inttypes.h>
#include <string.h>

static void put_name(FILE *f, const hm_trace *t, uint32_t id)
{
	if (id == UINT32_MAX)
		fputs("null", f);
	else
		hm_json_str(f, t->names.str[id], t->names.len[id], 0);
}

/* At most this many frames of an OOM's stack are written in --json (the summary writes
 * HM_OOM_FRAMES): a stack of 20,000 frames shared by 1,000 oom entries would otherwise
 * make a file of 209 bytes into a gigabyte of output. */
#define HM_OOM_JSON_FRAMES 64

/* A stack as [{file, line, name}], innermost first (as the row field frames), its first
 * HM_OOM_JSON_FRAMES frames; then the member "frames_total" (how many the stack has). */
static void json_frames(FILE *f, const hm_trace *t, uint32_t stack)
{
	const uint32_t *ids = NULL;
	size_t all = stack == UINT32_MAX ? 0 : hm_snap_stack(t->snap, stack, &ids);
	size_t n = all < HM_OOM_JSON_FRAMES ? all : HM_OOM_JSON_FRAMES;
	putc('[', f);
	for (size_t i = 0; i < n; i++) {
		hm_frame fr = hm_snap_frame(t->snap, ids[i]);
		fputs(i ? ", {\"file\": " : "{\"file\": ", f);
		put_name(f, t, fr.file);
		fprintf(f, ", \"line\": %" PRId64 ", \"name\": ", fr.line);
		put_name(f, t, fr.name);
		putc('}', f);
	}
	fprintf(f, "], \"frames_total\": %zu", all);
}

/* The figures of hm_segstate as members of an open object (no braces). */
static void state_members(FILE *f, const hm_segstate *g)
{
	fprintf(f, "\"segments\": %" PRId64 ", \"reserved_bytes\": %" PRId64 ", \"requested_bytes\": %" PRId64
		   ", \"reclaimable_bytes\": %" PRId64 ", \"stranded_bytes\": %" PRId64,
		g->segments, g->reserved, g->requested, g->reclaimable, g->stranded);
}

static void json_state(FILE *f, const hm_segstate *g)
{
	if (g->segments == HM_NONE) {
		fputs("null", f);
		return;
	}
	putc('{', f);
	state_members(f, g);
	putc('}', f);
}

void hm_snap_json_oom(FILE *f, const hm_file *hf, const hm_oom *o)
{
	const hm_trace *t = hf->t;
	if (!t->snap)
		return;
	const hm_snapoom *so = &t->snap->ooms[o->ev];
	fputs(",\n     \"device_free\": ", f);
	hm_json_opt(f, so->device_free);
	fputs(", \"frame\": ", f);
	put_name(f, t, so->stack == UINT32_MAX ? UINT32_MAX : t->snap->stack_frame[so->stack]);
	fputs(", \"frames\": ", f);
	json_frames(f, t, so->stack);
	fputs(",\n     \"segments\": ", f);
	json_state(f, &so->segs);
}

/* One line of segment figures, or why there are none. The reserved bytes are split in
 * parts that add up: requested by live blocks, free inside segments that hold a live block
 * (internal and external free together: at an OOM the entries record no block sizes; at
 * the end the caller splits it, hm_snap_summary_series), reclaimable (segments with none). */
static void summary_state(FILE *f, const char *in, const char *when, const hm_segstate *g)
{
	char b[4][32];
	if (g->segments == HM_NONE) {
		fprintf(f, "%ssegments %s: unknown (the trace's entries do not replay from the end's segments)\n", in, when);
		return;
	}
	hm_fmt_bytes(b[0], sizeof b[0], g->reserved);
	hm_fmt_bytes(b[1], sizeof b[1], g->requested);
	hm_fmt_bytes(b[2], sizeof b[2], g->stranded);
	hm_fmt_bytes(b[3], sizeof b[3], g->reclaimable);
	fprintf(f, "%ssegments %s: %" PRId64 " holding %s = %s requested by live blocks + %s free in segments holding one "
		   "(their rounding and free blocks) + %s reclaimable (segments holding none)\n",
		in, when, g->segments, b[0], b[1], b[2], b[3]);
}

#define HM_STR_(x) #x
#define HM_STR(x) HM_STR_(x)

/* How many frames of the failing allocation's stack the summary shows. */
#define HM_OOM_FRAMES 4

void hm_snap_summary_oom(FILE *f, const hm_file *hf, const hm_oom *o)
{
	const hm_trace *t = hf->t;
	if (!t->snap)
		return;
	const hm_snapoom *so = &t->snap->ooms[o->ev];
	char b[32];
	if (so->device_free != HM_NONE) {
		hm_fmt_bytes(b, sizeof b, so->device_free);
		fprintf(f, "      device free (cudaMemGetInfo) %s\n", b);
	}
	summary_state(f, "      ", "at the OOM", &so->segs);
	const uint32_t *ids = NULL;
	size_t n = so->stack == UINT32_MAX ? 0 : hm_snap_stack(t->snap, so->stack, &ids);
	uint32_t user = so->stack == UINT32_MAX ? UINT32_MAX : t->snap->stack_frame[so->stack];
	if (user != UINT32_MAX) {
		fputs("      asked by ", f);
		hm_fput_esc(f, t->names.str[user], t->names.len[user]);
		fputc('\n', f);
	} else
		fprintf(f, "      asked by: %s\n", so->stack == UINT32_MAX ? "no stack recorded" : "no user frame in the stack");
	for (size_t i = 0; i < n && i < HM_OOM_FRAMES; i++) {
		hm_frame fr = hm_snap_frame(t->snap, ids[i]);
		fprintf(f, "      %s ", i ? "     " : "stack");
		hm_fput_esc(f, t->names.str[fr.file], t->names.len[fr.file]);
		fprintf(f, "(%" PRId64 "): ", fr.line);
		hm_fput_esc(f, t->names.str[fr.name], t->names.len[fr.name]);
		fputc('\n', f);
	}
	if (n > HM_OOM_FRAMES)
		fprintf(f, "            (%zu more frames%s)\n", n - HM_OOM_FRAMES,
			n > HM_OOM_JSON_FRAMES ? "; --json has the first " HM_STR(HM_OOM_JSON_FRAMES) : " in --json");
}

/* The device's segments as the snapshot ends, summed: what hm_segstate has, plus the
 * blocks by state, the largest free block, the live blocks' rounding (waste), the free
 * blocks of segments that hold a live block (gaps), and memory_viz's two kinds of free
 * memory. Those are computed as torch/cuda/_memory_viz.py's segsum() (`python -m
 * torch.cuda._memory_viz stats`) does: a block is allocated only in state
 * active_allocated; internal free is, over those, size - requested_size ("free because we
 * rounded the size of the allocation"); external free is the size of every other block,
 * free or pending a free, in any segment ("the gaps between allocations in a segment");
 * and total_allocated + internal + external = total_reserved. external_used is the part of
 * external free in segments holding an allocated block (the gaps its stats call "external
 * free in partly used segments"; the rest is whole segments holding no allocated block,
 * which the allocator could release). waste and internal are HM_NONE when a live block
 * does not say what it asked for. */
typedef struct endsum {
	hm_segstate g;
	int64_t allocated, pending, free, largest_free, waste, gaps, internal, external, external_used;
} endsum;

static endsum end_of(const hm_snap *sn, int32_t dev)
{
	endsum e = {hm_snapseg_end(sn, dev), 0, 0, 0, 0, 0, 0, 0, 0, 0};
	size_t first, n = hm_snapseg_of(sn, dev, &first);
	for (size_t i = first; i < first + n; i++) {
		const hm_snapseg *g = &sn->segs[i];
		e.allocated += g->allocated, e.pending += g->pending, e.free += g->inactive;
		e.external += g->pending + g->inactive;
		if (g->allocated)
			e.external_used += g->pending + g->inactive;
		if (g->allocated + g->pending)
			e.gaps += g->inactive;
		if (g->largest_free > e.largest_free)
			e.largest_free = g->largest_free;
		if (e.waste != HM_NONE)
			e.waste = g->sized ? e.waste + g->allocated + g->pending - g->requested : HM_NONE;
		if (e.internal != HM_NONE)
			e.internal = g->sized ? e.internal + g->allocated - g->allocated_requested : HM_NONE;
	}
	return e;
}

/* A snapshot's device is CUDA (type 1), or its pinned host memory; a series of another
 * type has no segments. */
int hm_snap_has_segments(const hm_file *hf, const hm_series *s)
{
	return hf->t->snap && (s->dev_type == 1 || hm_snaphost_is(s->dev_type, s->dev_id));
}

void hm_snap_json_series(FILE *f, const hm_file *hf, const hm_series *s)
{
	if (!hm_snap_has_segments(hf, s))
		return;
	const hm_snap *sn = hf->t->snap;
	endsum e = end_of(sn, s->dev_id);
	fprintf(f, ",\n   \"snapshot\": {\"pinned_host\": %s, \"at_end\": {", hm_snaphost_is(s->dev_type, s->dev_id) ? "true" : "false");
	state_members(f, &e.g);
	fprintf(f, ", \"allocated_bytes\": %" PRId64 ", \"pending_free_bytes\": %" PRId64 ", \"free_bytes\": %" PRId64
		   ", \"largest_free_bytes\": %" PRId64 ", \"internal_waste_bytes\": ",
		e.allocated, e.pending, e.free, e.largest_free);
	hm_json_opt(f, e.waste);
	fputs(", \"internal_free_bytes\": ", f);
	hm_json_opt(f, e.internal);
	fprintf(f, ", \"external_free_bytes\": %" PRId64 ", \"external_free_in_used_segments_bytes\": %" PRId64, e.external,
		e.external_used);
	fputs("},\n    \"segments\": [", f);
	size_t from, n = hm_snapseg_of(sn, s->dev_id, &from);
	for (size_t i = from; i < from + n; i++) {
		const hm_snapseg *g = &sn->segs[i];
		fprintf(f, "%s{\"address\": %" PRIu64 ", \"total_bytes\": %" PRId64 ", \"allocated_bytes\": %" PRId64
			   ", \"pending_free_bytes\": %" PRId64 ", \"free_bytes\": %" PRId64 ", \"largest_free_bytes\": %" PRId64
			   ", \"blocks\": %" PRId64 ", \"requested_bytes\": ",
			i == from ? "\n     " : ",\n     ", g->addr, g->total, g->allocated, g->pending, g->inactive, g->largest_free,
			g->blocks);
		hm_json_opt(f, g->sized ? g->requested : HM_NONE);
		putc('}', f);
	}
	fputs("]}", f);
}

void hm_snap_summary_series(FILE *f, const hm_file *hf, const hm_series *s)
{
	if (!hm_snap_has_segments(hf, s))
		return;
	endsum e = end_of(hf->t->snap, s->dev_id);
	if (hm_snaphost_is(s->dev_type, s->dev_id))
		fputs("    pinned host memory (host_segments, host_traces), not the CPU allocator's\n", f);
	char b[6][32];
	if (e.waste == HM_NONE || e.g.segments == HM_NONE) {
		summary_state(f, "    ", "at the end", &e.g);
	} else { /* the free memory of partly used segments split: rounding, then free blocks */
		hm_fmt_bytes(b[0], sizeof b[0], e.g.reserved);
		hm_fmt_bytes(b[1], sizeof b[1], e.g.requested);
		hm_fmt_bytes(b[2], sizeof b[2], e.waste);
		hm_fmt_bytes(b[3], sizeof b[3], e.gaps);
		hm_fmt_bytes(b[4], sizeof b[4], e.g.reclaimable);
		fprintf(f, "    segments at the end: %" PRId64 " holding %s = %s requested by live blocks + %s their rounding + %s "
			   "free blocks in segments holding one + %s reclaimable (segments holding none)\n",
			e.g.segments, b[0], b[1], b[2], b[3], b[4]);
	}
	hm_fmt_bytes(b[0], sizeof b[0], e.allocated);
	hm_fmt_bytes(b[1], sizeof b[1], e.pending);
	hm_fmt_bytes(b[2], sizeof b[2], e.free);
	hm_fmt_bytes(b[3], sizeof b[3], e.largest_free);
	hm_fmt_bytes(b[5], sizeof b[5], e.external);
	fprintf(f, "    blocks at the end: %s allocated, %s pending a free, %s free (the largest %s); memory_viz stats: ", b[0], b[1],
		b[2], b[3]);
	if (e.internal != HM_NONE) {
		hm_fmt_bytes(b[4], sizeof b[4], e.internal);
		fprintf(f, "internal free %s, ", b[4]);
	}
	hm_fmt_bytes(b[4], sizeof b[4], e.external_used);
	fprintf(f, "external free %s (%s of it in segments holding an allocated block)\n", b[5], b[4]);
}

/* Where the times of a snapshot's entries come from: "time_us" (each has it), "entry_number"
 * (none has: before PyTorch 2.2), "mixed", or NULL without entries. */
static const char *time_source(const hm_snap *sn)
{
	if (!sn->entries)
		return NULL;
	return !sn->untimed ? "time_us" : sn->untimed == sn->entries ? "entry_number" : "mixed";
}

void hm_snap_json_input(FILE *f, const hm_trace *t)
{
	if (!t->snap)
		return;
	fprintf(f, ", \"trace_alloc_overflowed\": %s, \"trace_alloc_max_entries\": ",
		t->snap->overflowed < 0 ? "null" : t->snap->overflowed ? "true" : "false");
	hm_json_opt(f, t->snap->max_entries);
	const char *src = time_source(t->snap);
	fprintf(f, ", \"entries\": %" PRIu64 ", \"time_source\": ", t->snap->entries);
	if (src)
		fprintf(f, "\"%s\"", src);
	else
		fputs("null", f);
}

/* The ring buffer's flag is the only sign that entries are missing: without it a free whose
 * alloc was dropped looks like memory allocated before recording began. */
void hm_snap_warn(hm_file *const *files, size_t n, int quiet)
{
	for (size_t i = 0; i < n && !quiet; i++) {
		const hm_snap *sn = files[i]->t->snap;
		if (!sn || sn->overflowed != 1)
			continue;
		char max[48] = "";
		if (sn->max_entries != HM_NONE)
			snprintf(max, sizeof max, " (trace_alloc_max_entries %" PRId64 ")", sn->max_entries);
		hm_eprintf("hmem: warning: %s: the snapshot's ring buffer overflowed%s: its earliest entries were dropped, "
			   "so frees of what they allocated count as (before trace)\n",
			   files[i]->t->path, max);
	}
}

const char *hm_snap_time_note(const hm_trace *t)
{
	const char *src = t->snap ? time_source(t->snap) : NULL;
	if (!src || !strcmp(src, "time_us"))
		return NULL;
	if (!strcmp(src, "entry_number"))
		return "this snapshot's entries have no time_us (PyTorch before 2.2): times are entry numbers, entry N at +N "
		       "us (+0.001 ms each), not milliseconds";
	return "some of this snapshot's entries have no time_us: each of those is placed 1 us after the entry before it";
}

int hm_snap_no_entries(const hm_file *hf, const hm_series *s)
{
	const hm_snap *sn = hf->t->snap;
	if (!sn || s->nooms || hf->win_from != HM_NONE) /* a window may have cut the entries away */
		return 0;
	for (size_t k = 0; k < s->n; k++)
		if (sn->origin[s->ev[k]] == HM_SNAP_ENTRY)
			return 0;
	return 1;
}
