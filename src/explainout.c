/* The explain results in the summary and in --json (see explainout.h). */
#include "explainout.h"
#include "explain.h"
#include "jsonw.h"
#include "snapout.h"
#include "timeline.h"
#include "util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* One line for what no trace holds, wherever an OOM or the cache is reported. */
#define HM_SNAPSHOT_HINT                                                                         \
	"a trace cannot tell segments, fragmentation inside blocks or the failing allocation's " \
	"stack: record a memory snapshot (torch.cuda.memory._record_memory_history, _dump_snapshot)"

static void put_str(FILE *f, const char *s, size_t n)
{
	hm_json_str(f, s, n, 0);
}

/* Appends s[0, n) to buf (length *len, capacity cap), cut to fit. */
static void add(char *buf, size_t cap, size_t *len, const char *s, size_t n)
{
	if (*len + 1 >= cap)
		return;
	if (n > cap - 1 - *len)
		n = cap - 1 - *len;
	memcpy(buf + *len, s, n);
	*len += n;
	buf[*len] = 0;
}

/* The names of a list field joined by " > " into buf. Returns how many there were. */
static size_t path_of(const hm_rowref *r, int field, char *buf, size_t cap, size_t *len)
{
	int32_t sl[64];
	size_t n = hm_field_list(r, field, sl, 64);
	for (size_t i = 0; i < n && i < 64; i++) {
		size_t nl;
		const char *s = hm_field_item(r->f->t, field, sl[i], &nl);
		if (i)
			add(buf, cap, len, " > ", 3);
		add(buf, cap, len, s, nl);
	}
	return n;
}

/* Who made a row: its module path and user frame, else its ops. A snapshot's free of memory
 * allocated before recording began shows where it was freed, which is not who made it:
 * "made before recording", then ", freed at FRAME"; a live block no entry made, without a
 * stack, was made before recording too. */
void hm_explain_who(const hm_rowref *r, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = 0;
	hm_value fr, before;
	hm_field_get(r, HM_F_FRAME, NULL, &fr);
	hm_field_get(r, HM_F_BEFORE, NULL, &before);
	const hm_snap *sn = r->f->t->snap;
	const uint32_t *ids;
	if (sn && ((before.type == HM_V_BOOL && before.i) ||
		   (sn->origin[r->s->ev[r->k]] == HM_SNAP_BLOCK && !hm_field_frames(r, HM_F_FRAMES, &ids)))) {
		add(buf, n, &len, "made before recording", 21);
		if (fr.type == HM_V_STR) {
			add(buf, n, &len, ", freed at ", 11);
			add(buf, n, &len, fr.s, fr.len);
		}
		return;
	}
	size_t nm = path_of(r, HM_F_MODULES, buf, n, &len);
	if (fr.type == HM_V_STR) {
		if (nm)
			add(buf, n, &len, " @ ", 3);
		add(buf, n, &len, fr.s, fr.len);
	}
	if (!nm && fr.type != HM_V_STR)
		path_of(r, HM_F_OPS, buf, n, &len);
	if (!len)
		add(buf, n, &len, "-", 1);
}

static void json_list(FILE *f, const hm_rowref *r, int field)
{
	int32_t buf[64];
	size_t n = hm_field_list(r, field, buf, 64);
	int32_t *sl = n <= 64 ? buf : hm_xcalloc(n, sizeof *sl);
	if (sl != buf)
		n = hm_field_list(r, field, sl, n);
	putc('[', f);
	for (size_t i = 0; i < n; i++) {
		size_t nl;
		const char *s = hm_field_item(r->f->t, field, sl[i], &nl);
		if (i)
			fputs(", ", f);
		put_str(f, s, nl);
	}
	putc(']', f);
	if (sl != buf)
		free(sl);
}

void hm_json_who(FILE *f, const hm_rowref *r)
{
	fputs(", \"modules\": ", f);
	json_list(f, r, HM_F_MODULES);
	hm_value fr;
	hm_field_get(r, HM_F_FRAME, NULL, &fr);
	fputs(", \"frame\": ", f);
	if (fr.type == HM_V_STR)
		put_str(f, fr.s, fr.len);
	else
		fputs("null", f);
	fputs(", \"ops\": ", f);
	json_list(f, r, HM_F_OPS);
	char who[512];
	hm_explain_who(r, who, sizeof who);
	fputs(", \"who\": ", f);
	put_str(f, who, strlen(who));
}

/* Each used category's bytes from val, as [{name, <key>}], "(before trace)" included. */
static void json_cats(FILE *f, const hm_report *r, const hm_series *s, const int64_t *val, const char *key)
{
	putc('[', f);
	int first = 1;
	for (size_t c = 0; c < s->ncats && c < r->cats->n; c++) {
		if (!s->cats[c].used)
			continue;
		fputs(first ? "{\"name\": " : ", {\"name\": ", f);
		first = 0;
		put_str(f, r->cats->str[c], r->cats->len[c]);
		fprintf(f, ", \"%s\": %" PRId64 "}", key, val[c]);
	}
	putc(']', f);
}

static void json_slice_name(FILE *f, const hm_trace *t, int32_t sl)
{
	if (sl < 0) {
		fputs("null", f);
		return;
	}
	uint32_t nm = t->sl.name[sl];
	put_str(f, t->names.str[nm], t->names.len[nm]);
}

void hm_explain_thread(const hm_trace *t, uint32_t th, const char **s, size_t *n, char *buf, size_t cap)
{
	if (th < t->thread_name_cap && t->thread_name[th] != UINT32_MAX) {
		*s = t->names.str[t->thread_name[th]], *n = t->names.len[t->thread_name[th]];
		return;
	}
	const char *key = t->threads.str[th], *tid;
	size_t tl, pl = hm_thread_split(key, t->threads.len[th], &tid, &tl);
	size_t kn = t->threads.len[th] < cap - 1 ? t->threads.len[th] : cap - 1;
	memcpy(buf, key, pl < kn ? pl : kn);
	if (pl < kn) /* "pid/tid" */
		buf[pl] = '/', memcpy(buf + pl + 1, tid, kn - pl - 1);
	buf[kn] = 0;
	*s = buf, *n = kn;
}

/* The allocations live at time ts, largest first, --top of them, as live_at_peak. */
static void json_live_at(FILE *f, const hm_report *r, const hm_file *hf, const hm_series *s, int64_t ts)
{
	size_t top = r->top;
	uint32_t *pos = hm_xcalloc(top + 1, sizeof *pos);
	size_t n = hm_live_at(s, &hf->t->mem, ts, pos, top);
	putc('[', f);
	for (size_t i = 0; i < n && i < top; i++) {
		hm_rowref ref = {hf, s, pos[i]};
		hm_value v;
		int64_t b = hm_mem_bytes(&hf->t->mem, s->ev[pos[i]]);
		fprintf(f, "%s{\"bytes\": %" PRId64 ", \"category\": ", i ? ",\n     " : "\n     ", b < 0 ? -b : b);
		hm_field_get(&ref, HM_F_CATEGORY, r->cats, &v);
		if (v.type == HM_V_STR)
			put_str(f, v.s, v.len);
		else
			fputs("null", f);
		fputs(", \"ts\": ", f);
		hm_json_us(f, hm_mem_ts(&hf->t->mem, s->ev[pos[i]]));
		hm_json_who(f, &ref);
		putc('}', f);
	}
	putc(']', f);
	free(pos);
}

static void json_ooms(FILE *f, const hm_report *r, const hm_file *hf, const hm_series *s)
{
	const hm_trace *t = hf->t;
	fputs(",\n   \"ooms\": [", f);
	for (size_t i = 0; i < s->nooms; i++) {
		const hm_oom *o = &s->ooms[i];
		fputs(i ? ",\n    {\"ts\": " : "\n    {\"ts\": ", f);
		hm_json_us(f, o->ts);
		fputs(", \"device\": ", f);
		put_str(f, s->device, strlen(s->device));
		fprintf(f, ", \"bytes\": %" PRId64 ", \"total_allocated\": ", o->bytes);
		hm_json_opt(f, o->total_allocated);
		fputs(", \"total_reserved\": ", f);
		hm_json_opt(f, o->total_reserved);
		fputs(", \"reserved_unallocated\": ", f);
		hm_json_opt(f, o->reserved_unallocated);
		fputs(", \"capacity\": ", f);
		hm_json_opt(f, o->capacity);
		fprintf(f, ", \"allocated\": %" PRId64 ", \"freed_after\": %" PRId64 ",\n     \"op\": ", o->allocated, o->freed_after);
		json_slice_name(f, t, o->nops ? o->ops[o->nops - 1] : -1);
		fputs(", \"ops\": [", f);
		for (size_t j = 0; j < o->nops; j++) {
			if (j)
				fputs(", ", f);
			json_slice_name(f, t, o->ops[j]);
		}
		fputs("], \"step\": ", f);
		hm_json_opt(f, o->step < 0 ? HM_NONE : o->step);
		fputs(", \"step_ts\": ", f);
		hm_json_us(f, o->step_ts);
		char tb[300];
		const char *th;
		size_t tn;
		hm_explain_thread(t, o->thread, &th, &tn, tb, sizeof tb);
		fputs(", \"thread\": ", f);
		put_str(f, th, tn);
		fputs(",\n     \"categories\": ", f);
		json_cats(f, r, s, o->cat_at, "bytes");
		fputs(",\n     \"live\": ", f);
		json_live_at(f, r, hf, s, o->ts);
		hm_snap_json_oom(f, hf, o);
		putc('}', f);
	}
	putc(']', f);
}

static void json_steps(FILE *f, const hm_report *r, const hm_series *s)
{
	fputs(",\n   \"steps\": [", f);
	for (size_t i = 0; i < s->nsteps; i++) {
		const hm_step *st = &s->steps[i];
		fprintf(f, "%s{\"step\": %" PRId32 ", \"start_ts\": ", i ? ",\n    " : "\n    ", st->step);
		hm_json_us(f, st->start_ts);
		fputs(", \"end_ts\": ", f);
		hm_json_us(f, st->end_ts);
		fprintf(f, ", \"start_bytes\": %" PRId64 ", \"peak_bytes\": %" PRId64 ", \"peak_ts\": ", st->start_bytes, st->peak_bytes);
		hm_json_us(f, st->peak_ts);
		fprintf(f, ", \"end_bytes\": %" PRId64 ", \"growth_bytes\": %" PRId64 ", \"survivors_bytes\": ", st->end_bytes,
			st->growth_bytes);
		hm_json_opt(f, st->survivors_bytes);
		fprintf(f, ", \"partial\": %s, \"open\": %s", st->partial ? "true" : "false", st->open ? "true" : "false");
		fputs(",\n     \"categories\": ", f);
		json_cats(f, r, s, st->cat_end, "end_bytes");
		putc('}', f);
	}
	putc(']', f);
}

void hm_json_explain(FILE *f, const hm_report *r, const hm_file *hf, const hm_series *s)
{
	fputs(",\n   \"reserved_unallocated_at_peak\": ", f);
	hm_json_opt(f, s->reserved_unallocated_at_peak);
	fputs(", \"max_reserved_unallocated\": ", f);
	hm_json_opt(f, s->max_reserved_unallocated);
	fputs(", \"max_reserved_unallocated_ts\": ", f);
	hm_json_us(f, s->max_reserved_unallocated_ts);
	fprintf(f, ",\n   \"leak\": {\"verdict\": \"%s\", \"steps\": %zu, \"per_step_bytes\": ", hm_leak_name(s->leak), s->leak_steps);
	hm_json_opt(f, s->leak == HM_LEAK_GROWTH || s->leak == HM_LEAK_SURVIVORS ? s->leak_per_step : HM_NONE);
	fputs(", \"made_by\": [", f);
	for (size_t i = 0; i < s->nmakers; i++) {
		fputs(i ? ", {\"name\": " : "{\"name\": ", f);
		put_str(f, s->makers[i].name, strlen(s->makers[i].name));
		fprintf(f, ", \"bytes\": %" PRId64 "}", s->makers[i].bytes);
	}
	fputs("]}", f);
	json_steps(f, r, s);
	char note[512];
	fputs(",\n   \"steps_note\": ", f);
	if (hm_explain_steps_note(hf, s, note, sizeof note))
		put_str(f, note, strlen(note));
	else
		fputs("null", f);
	json_ooms(f, r, hf, s);
	hm_snap_json_series(f, hf, s);
}

static double ms_since(const hm_trace *t, int64_t ts)
{
	return (double)(ts - t->first_ts) / 1e6;
}

static void summary_steps(FILE *f, const hm_file *hf, const hm_series *s)
{
	char b[5][32], note[512];
	if (hf->t->snap && hm_explain_steps_note(hf, s, note, sizeof note)) { /* a trace's is in --json */
		fputs("    no steps: ", f);
		hm_fput_esc(f, note, strlen(note));
		putc('\n', f);
	}
	if (!s->nsteps)
		return;
	fprintf(f, "    steps (%zu):\n    %6s %12s %12s %12s %12s %12s %12s\n", s->nsteps, "step", "start ms", "start", "peak",
		"end", "growth", "survivors");
	for (size_t i = 0; i < s->nsteps; i++) {
		const hm_step *st = &s->steps[i];
		int64_t v[5] = {st->start_bytes, st->peak_bytes, st->end_bytes, st->growth_bytes, st->survivors_bytes};
		for (int j = 0; j < 5; j++)
			if (v[j] == HM_NONE)
				snprintf(b[j], sizeof b[j], "-"); /* survivors without Addr */
			else
				hm_fmt_bytes(b[j], sizeof b[j], v[j]);
		fprintf(f, "    %6" PRId32 " %12.3f %12s %12s %12s %12s %12s%s\n", st->step, ms_since(hf->t, st->start_ts), b[0],
			b[1], b[2], b[3], b[4],
			st->open ? "  open (the snapshot ends in it)" : st->partial ? "  partial (cut by the window)" : "");
	}
}

/* The step a snapshot ends in, left out of the verdict like one a window cuts. */
static void open_left_out(FILE *f, const hm_series *s)
{
	for (size_t i = 0; i < s->nsteps; i++)
		if (s->steps[i].open)
			fprintf(f, "    (step %" PRId32 ", which the snapshot ends in, left out of the verdict)\n", s->steps[i].step);
}

static void summary_leak(FILE *f, const hm_series *s)
{
	char b[32], why[96];
	size_t open = 0;
	for (size_t i = 0; i < s->nsteps; i++)
		open += s->steps[i].open != 0;
	size_t partial = s->nsteps - s->leak_steps - open; /* cut by the window */
	if (s->leak == HM_LEAK_UNKNOWN) {
		if (partial || open) {
			snprintf(why, sizeof why, partial && open ? "%zu cut by the window and the one the snapshot ends in"
								 : partial ? "%zu cut by the window" : "the one the snapshot ends in",
				 partial);
			fprintf(f, "    leak: no verdict on fewer than %d whole steps (%zu here; %s left out)\n", HM_LEAK_MIN_STEPS,
				s->leak_steps, why);
		}
		else if (s->nsteps)
			fprintf(f, "    leak: no verdict on fewer than %d steps (%zu here)\n", HM_LEAK_MIN_STEPS, s->nsteps);
		return;
	}
	if (s->leak == HM_LEAK_NONE) {
		fprintf(f, "    leak: none (end of step does not grow every step, nor do allocations survive every step)\n");
		if (partial)
			fprintf(f, "    (%zu step%s cut by the window left out of the verdict)\n", partial, partial > 1 ? "s" : "");
		open_left_out(f, s);
		return;
	}
	hm_fmt_bytes(b, sizeof b, s->leak_per_step);
	fprintf(f, "    LEAK: %s per step over %zu steps (%s)", b, s->leak_steps,
		s->leak == HM_LEAK_GROWTH ? "allocated at each step's end grows every step"
					  : "allocations of every step but the last are never freed");
	for (size_t i = 0; i < s->nmakers; i++) {
		hm_fmt_bytes(b, sizeof b, s->makers[i].bytes);
		fputs(i ? ", " : "; made by ", f);
		hm_fput_esc(f, s->makers[i].name, strlen(s->makers[i].name));
		fprintf(f, " %s", b);
	}
	fputc('\n', f);
	if (partial)
		fprintf(f, "    (%zu step%s cut by the window left out of the verdict)\n", partial, partial > 1 ? "s" : "");
	open_left_out(f, s);
}

static void summary_oom(FILE *f, const hm_report *r, const hm_file *hf, const hm_series *s, const hm_oom *o)
{
	const hm_trace *t = hf->t;
	char b1[32], b2[32], tsb[40];
	hm_fmt_bytes(b1, sizeof b1, o->bytes);
	hm_fmt_us(tsb, o->ts);
	fprintf(f, "    OUT OF MEMORY at +%.3f ms (ts %s): asked for %s", ms_since(t, o->ts), tsb, b1);
	if (o->nops) {
		uint32_t nm = t->sl.name[o->ops[o->nops - 1]];
		fputs(" in ", f);
		hm_fput_esc(f, t->names.str[nm], t->names.len[nm]);
	}
	if (o->step >= 0)
		fprintf(f, ", step %" PRId32, o->step);
	fputc('\n', f);
	hm_fmt_bytes(b1, sizeof b1, o->total_allocated != HM_NONE ? o->total_allocated : o->allocated);
	fprintf(f, "      allocated %s", b1);
	if (o->total_reserved != HM_NONE) {
		hm_fmt_bytes(b1, sizeof b1, o->total_reserved);
		fprintf(f, ", reserved %s", b1);
	}
	if (o->reserved_unallocated != HM_NONE) {
		hm_fmt_bytes(b1, sizeof b1, o->reserved_unallocated);
		fprintf(f, " (%s reserved but unallocated: cached by the allocator, which it could not release)", b1);
	}
	if (o->capacity != HM_NONE) {
		hm_fmt_bytes(b1, sizeof b1, o->capacity);
		fprintf(f, ", capacity %s", b1);
	}
	hm_fmt_bytes(b2, sizeof b2, o->freed_after);
	fprintf(f, "; %s freed after it\n", b2);
	size_t *order = hm_xcalloc(s->ncats + 1, sizeof *order);
	size_t n = hm_categories_by_peak(s, order);
	fputs("      at the OOM:", f);
	for (size_t j = 0, shown = 0; j < n && shown < 6; j++) {
		if (!o->cat_at[order[j]])
			continue;
		hm_fmt_bytes(b1, sizeof b1, o->cat_at[order[j]]);
		fputs(shown++ ? ", " : " ", f);
		hm_fput_esc(f, r->cats->str[order[j]], r->cats->len[order[j]]);
		fprintf(f, " %s", b1);
	}
	fputc('\n', f);
	free(order);
	uint32_t pos[3];
	size_t nl = hm_live_at(s, &t->mem, o->ts, pos, 3);
	for (size_t j = 0; j < nl && j < 3; j++) {
		hm_rowref ref = {hf, s, pos[j]};
		char who[256];
		int64_t by = hm_mem_bytes(&t->mem, s->ev[pos[j]]);
		hm_fmt_bytes(b1, sizeof b1, by < 0 ? -by : by);
		hm_explain_who(&ref, who, sizeof who);
		fprintf(f, "      live %12s  ", b1);
		hm_fput_esc(f, who, strlen(who));
		fputc('\n', f);
	}
	hm_snap_summary_oom(f, hf, o);
}

void hm_summary_explain(FILE *f, const hm_report *r, const hm_file *hf, const hm_series *s)
{
	char b1[32], b2[32];
	if (s->max_reserved_unallocated != HM_NONE) {
		hm_fmt_bytes(b2, sizeof b2, s->max_reserved_unallocated);
		if (s->reserved_unallocated_at_peak != HM_NONE) {
			hm_fmt_bytes(b1, sizeof b1, s->reserved_unallocated_at_peak);
			fprintf(f, "    reserved but unallocated (cached by the allocator): %s at the peak, at most %s (+%.3f ms)\n", b1,
				b2, ms_since(hf->t, s->max_reserved_unallocated_ts));
		} else {
			fprintf(f, "    reserved but unallocated (cached by the allocator): at most %s (+%.3f ms)\n", b2,
				ms_since(hf->t, s->max_reserved_unallocated_ts));
		}
		if (hf->t->snap) /* README "Snapshots": allocated is what the blocks asked for */
			fputs("    (a snapshot's allocated bytes are requested bytes, so this includes the blocks' rounding: "
			      "memory_viz's internal + external free)\n",
			      f);
	}
	hm_snap_summary_series(f, hf, s);
	summary_steps(f, hf, s);
	summary_leak(f, s);
	for (size_t i = 0; i < s->nooms; i++)
		summary_oom(f, r, hf, s, &s->ooms[i]);
	if (s->nooms && !hf->t->snap)
		fprintf(f, "    (%s)\n", HM_SNAPSHOT_HINT);
}
