#include "output.h"
#include "budget.h"
#include "snapout.h"
#include "explainout.h"
#include "fields.h"
#include "ranksout.h"
#include "timeline.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#ifndef HM_VERSION
#define HM_VERSION "0.0.0"
#endif

void hm_agg_free(hm_agg *a)
{
	for (size_t i = 0; i < a->nrows * a->ncols; i++)
		free(a->cells[i].s);
	for (size_t i = 0; i < a->ncols; i++)
		free(a->cols[i]);
	free(a->cells);
	free(a->cols);
	free(a->name);
	memset(a, 0, sizeof *a);
}

static void json_str(FILE *f, const char *s, size_t n)
{
	hm_json_str(f, s, n, 0);
}

static void json_cstr(FILE *f, const char *s)
{
	json_str(f, s, strlen(s));
}

static void json_cell(FILE *f, const hm_cell *c)
{
	switch (c->type) {
	case HM_V_INT: fprintf(f, "%" PRId64, c->i); break;
	case HM_V_NUM: fprintf(f, "%.17g", c->d); break;
	case HM_V_STR: json_cstr(f, c->s); break;
	case HM_V_BOOL: fputs(c->i ? "true" : "false", f); break;
	default: fputs("null", f); break;
	}
}

/* A scalar field of a row as JSON. */
static void json_field(FILE *f, const hm_rowref *ref, int field, const hm_strtab *cats)
{
	hm_value v;
	hm_field_get(ref, field, cats, &v);
	switch (v.type) {
	case HM_V_INT: fprintf(f, "%" PRId64, v.i); break;
	case HM_V_NUM: fprintf(f, "%.3f", v.d); break;
	case HM_V_STR: json_str(f, v.s, v.len); break;
	case HM_V_BOOL: fputs(v.i ? "true" : "false", f); break;
	default: fputs("null", f); break;
	}
}

/* The allocations live at the series' peak, largest first (--top of them). */
static void json_live(FILE *f, const hm_report *r, const hm_file *hf, const hm_series *s)
{
	size_t top = r->top;
	uint32_t *pos = hm_xcalloc(top + 1, sizeof *pos);
	size_t n = hm_live_at_peak(s, &hf->t->mem, pos, top);
	if (n > top)
		n = top;
	static const int fields[] = {HM_F_BYTES, HM_F_CATEGORY, HM_F_OP, HM_F_STEP, HM_F_KIND, HM_F_BEFORE, HM_F_TS, HM_F_LIFETIME};
	for (size_t i = 0; i < n; i++) {
		hm_rowref ref = {hf, s, pos[i]};
		fputs(i ? ",\n    {" : "\n    {", f);
		for (size_t j = 0; j < sizeof fields / sizeof *fields; j++) {
			fprintf(f, "%s\"%s\": ", j ? ", " : "", hm_field_name(fields[j]));
			if (fields[j] == HM_F_TS)
				hm_json_us(f, hm_mem_ts(&hf->t->mem, s->ev[pos[i]]));
			else
				json_field(f, &ref, fields[j], r->cats);
		}
		hm_json_who(f, &ref);
		putc('}', f);
	}
	free(pos);
}

void hm_write_json(FILE *f, const hm_report *r)
{
	fputs("{\"version\": ", f);
	json_cstr(f, HM_VERSION);
	fputs(", \"rules\": ", f);
	if (r->rules)
		json_cstr(f, r->rules);
	else
		fputs("null", f);
	fprintf(f, ", \"classify_calls\": %" PRIu64 ", \"cache_hits\": %" PRIu64 ",\n \"inputs\": [",
		r->classify_calls, r->cache_hits);
	for (size_t i = 0; i < r->nfiles; i++) {
		const hm_trace *t = r->files[i]->t;
		fputs(i ? ",\n  {\"path\": " : "\n  {\"path\": ", f);
		json_cstr(f, t->path);
		fputs(", \"rank\": ", f);
		hm_json_opt(f, t->rank);
		size_t ops = 0;
		for (size_t k = 0; k < t->sl.n; k++)
			ops += t->sl.kind[k] == HM_SL_OP;
		fprintf(f, ", \"events\": %" PRIu64 ", \"memory_events\": %zu, \"ops\": %zu, \"host_slices\": %zu, \"oom_events\": %" PRIu64,
			t->events, t->mem.n, ops, t->sl.n, t->oom_events);
		fprintf(f, ", \"ooms_elsewhere\": %zu", r->files[i]->oom_elsewhere);
		hm_snap_json_input(f, t);
		fputs(",\n   \"counts\": {", f);
		for (int k = 0; k < HM_EV_KINDS; k++)
			fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", hm_ev_kind_names[k], t->count[k]);
		fputs("}", f);
		if (t->cut_at) {
			fprintf(f, ", \"cut_at\": %" PRIu64 ", \"lost_bytes\": %" PRIu64 ", \"cut_why\": ", t->cut_at, t->lost_bytes);
			json_cstr(f, t->cut_why);
		}
		fputs("}", f);
	}
	fputs("],\n \"skipped\": [", f);
	for (size_t i = 0; i < r->nskipped; i++) {
		fputs(i ? ",\n  {\"path\": " : "\n  {\"path\": ", f);
		json_cstr(f, r->skipped[i].path);
		fputs(", \"error\": ", f);
		json_cstr(f, r->skipped[i].why);
		fprintf(f, ", \"events_read\": %" PRIu64 "}", r->skipped[i].events);
	}
	fputs("],\n \"series\": [", f);
	int first = 1;
	for (size_t i = 0; i < r->nfiles; i++) {
		const hm_file *hf = r->files[i];
		for (size_t si = 0; si < hf->nseries; si++) {
			const hm_series *s = &hf->series[si];
			fputs(first ? "\n  {\"path\": " : ",\n  {\"path\": ", f);
			first = 0;
			json_cstr(f, hf->t->path);
			fputs(", \"rank\": ", f);
			hm_json_opt(f, hf->t->rank);
			fputs(", \"device\": ", f);
			json_cstr(f, s->device);
			fprintf(f, ",\n   \"memory_events\": %zu, \"allocs\": %" PRIu64 ", \"frees\": %" PRIu64
				", \"matched_frees\": %" PRIu64 ", \"zero_byte_events\": %" PRIu64 ",\n   \"before_trace_bytes\": %" PRId64
				", \"peak_bytes\": %" PRId64 ", \"peak_ts\": ",
				s->n, s->allocs, s->frees, s->matched_frees, s->zero_events, s->start_bytes, s->peak);
			hm_json_us(f, s->peak_ts);
			fprintf(f, ", \"end_bytes\": %" PRId64 ", \"max_reserved_bytes\": ", s->end_bytes);
			hm_json_opt(f, s->max_reserved);
			fprintf(f, ", \"mismatches\": %" PRIu64 ",\n   \"categories\": [", s->mismatches);
			int cfirst = 1;
			for (size_t c = 0; c < s->ncats; c++) {
				const hm_catstat *cs = &s->cats[c];
				if (!cs->used)
					continue;
				fputs(cfirst ? "\n    {\"name\": " : ",\n    {\"name\": ", f);
				cfirst = 0;
				json_str(f, r->cats->str[c], r->cats->len[c]);
				fprintf(f, ", \"peak_bytes\": %" PRId64 ", \"bytes_at_peak\": %" PRId64 ", \"end_bytes\": %" PRId64
					", \"allocs\": %" PRIu64 ", \"alloc_bytes\": %" PRIu64 "}",
					cs->peak, cs->at_peak, cs->end, cs->allocs, cs->alloc_bytes);
			}
			fputs("],\n   \"live_at_peak\": [", f);
			json_live(f, r, hf, s);
			fputs("]", f);
			hm_json_explain(f, r, hf, s);
			fputs("}", f);
		}
	}
	fputs("],\n \"ranks\": ", f);
	hm_ranks_json(f, r);
	fputs(",\n \"aggregations\": {", f);
	for (size_t a = 0; a < r->naggs; a++) {
		const hm_agg *g = &r->aggs[a];
		fputs(a ? ",\n  " : "\n  ", f);
		json_cstr(f, g->name);
		fprintf(f, ": {\"per\": \"%s\", \"columns\": [", g->per_series ? "series" : "all");
		for (size_t c = 0; c < g->ncols; c++) {
			if (c)
				fputs(", ", f);
			json_cstr(f, g->cols[c]);
		}
		fputs("], \"rows\": [", f);
		for (size_t i = 0; i < g->nrows; i++) {
			fputs(i ? ",\n    {" : "\n    {", f);
			for (size_t c = 0; c < g->ncols; c++) {
				if (c)
					fputs(", ", f);
				json_cstr(f, g->cols[c]);
				fputs(": ", f);
				json_cell(f, &g->cells[i * g->ncols + c]);
			}
			putc('}', f);
		}
		fputs("]}", f);
	}
	fputs("}", f);
	hm_budget_json(f, r);
	fputs("}\n", f);
}

/* A text cell as every CSV of hmem writes one (cells.h). */
static void csv_str(FILE *f, const char *s, size_t n)
{
	hm_csv_str(f, s, n);
}

static void csv_cstr(FILE *f, const char *s)
{
	csv_str(f, s, strlen(s));
}

static void csv_opt(FILE *f, int64_t v)
{
	if (v != HM_NONE)
		fprintf(f, "%" PRId64, v);
}

static const char *kind_name(int64_t bytes)
{
	return bytes > 0 ? "alloc" : bytes < 0 ? "free" : "zero";
}

/* Columns every memory-event CSV starts with, for an event at ts of bytes (signed). */
static void csv_event_prefix(FILE *f, const hm_file *hf, const hm_series *s, int64_t ts, int64_t bytes)
{
	csv_cstr(f, hf->t->path);
	putc(',', f);
	csv_opt(f, hf->t->rank);
	putc(',', f);
	csv_cstr(f, s->device);
	putc(',', f);
	hm_json_us(f, ts);
	fprintf(f, ",%s,%" PRId64, kind_name(bytes), bytes < 0 ? -bytes : bytes);
}

void hm_write_timeline(FILE *f, const hm_report *r)
{
	size_t ncats = r->cats->n;
	fputs("path,rank,device,ts,kind,bytes,allocated,reserved", f);
	for (size_t c = 0; c < ncats; c++) {
		putc(',', f);
		csv_str(f, r->cats->str[c], r->cats->len[c]);
	}
	putc('\n', f);
	int64_t *val = hm_xcalloc(ncats, sizeof *val);
	for (size_t i = 0; i < r->nfiles; i++) {
		const hm_file *hf = r->files[i];
		for (size_t si = 0; si < hf->nseries; si++) {
			const hm_series *s = &hf->series[si];
			hm_replay it;
			hm_replay_init(&it, s, &hf->t->mem, val, ncats);
			while (hm_replay_next(&it)) {
				csv_event_prefix(f, hf, s, it.ts, it.bytes);
				fprintf(f, ",%" PRId64 ",", it.total);
				csv_opt(f, it.reserved);
				for (size_t c = 0; c < ncats; c++)
					fprintf(f, ",%" PRId64, it.cat_values[c]);
				putc('\n', f);
			}
		}
	}
	free(val);
}

void hm_write_events(FILE *f, const hm_report *r)
{
	fputs("path,rank,device,ts,kind,bytes,addr,total_allocated,total_reserved,ev_idx,pid,tid,op,paired,lifetime\n", f);
	for (size_t i = 0; i < r->nfiles; i++) {
		const hm_file *hf = r->files[i];
		const hm_trace *t = hf->t;
		const hm_mem *m = &t->mem;
		for (size_t si = 0; si < hf->nseries; si++) {
			const hm_series *s = &hf->series[si];
			for (size_t k = 0; k < s->n; k++) {
				uint32_t e = s->ev[k];
				csv_event_prefix(f, hf, s, hm_mem_ts(m, e), hm_mem_bytes(m, e));
				putc(',', f);
				if (hm_mem_has_addr(m, e))
					fprintf(f, "%" PRIu64, hm_mem_addr(m, e));
				putc(',', f);
				csv_opt(f, hm_mem_total_alloc(m, e));
				putc(',', f);
				csv_opt(f, hm_mem_total_res(m, e));
				putc(',', f);
				csv_opt(f, hm_mem_ev_idx(m, e));
				/* A pid or tid string may hold NUL bytes (\u0000 in the trace): split the
				 * thread key by its length, not as a C string. */
				const char *key = t->threads.str[hm_mem_thread(m, e)], *tid;
				size_t tl, pl = hm_thread_split(key, t->threads.len[hm_mem_thread(m, e)], &tid, &tl);
				putc(',', f);
				csv_str(f, key, pl);
				putc(',', f);
				csv_str(f, tid, tl);
				putc(',', f);
				int32_t op = hf->op_of[e];
				if (op >= 0)
					csv_str(f, t->names.str[t->sl.name[op]], t->names.len[t->sl.name[op]]);
				int32_t p = s->partner[k];
				fputs(p >= 0 ? ",yes," : ",no,", f);
				if (p >= 0) {
					int64_t d = hm_mem_ts(m, s->ev[p]) - hm_mem_ts(m, e);
					hm_json_us(f, d < 0 ? -d : d);
				}
				putc('\n', f);
			}
		}
	}
}


/* Characters (UTF-8 code points) s[0, n) takes on a terminal, escaped as put_col does. */
static size_t width_of(const char *s, size_t n)
{
	size_t w = 0, len;
	char *t = hm_esc(s, n, 0, &len);
	for (size_t i = 0; i < len; i++)
		w += ((unsigned char)t[i] & 0xc0) != 0x80;
	free(t);
	return w;
}

/* A column of the summary's tables (cells.h). */
static void put_col(FILE *f, const char *s, size_t n, size_t width)
{
	hm_put_col(f, s, n, width);
}

/* The width of the category column: the longest name up to 48 characters, wider when two
 * names cut to that width would print the same (issue 17): names are distinct, so some
 * width tells them apart. */
static size_t category_width(const hm_strtab *cats)
{
	size_t width = 14, most = 0, n = cats->n;
	size_t *w = hm_xcalloc(n + 1, sizeof *w);
	char **e = hm_xcalloc(n + 1, sizeof *e);
	size_t *len = hm_xcalloc(n + 1, sizeof *len);
	for (size_t c = 0; c < n; c++) {
		e[c] = hm_esc(cats->str[c], cats->len[c], 0, &len[c]);
		w[c] = width_of(cats->str[c], cats->len[c]);
		most = w[c] > most ? w[c] : most;
		if (w[c] > width)
			width = w[c] > 48 ? 48 : w[c];
	}
	/* Two names print alike at width when both are cut and agree on their first width - 1
	 * characters (the ellipsis takes the last place). */
	for (int clash = 1; clash && width < most; width += clash) {
		clash = 0;
		for (size_t a = 0; a < n && !clash; a++)
			for (size_t b = a + 1; b < n && !clash && w[a] > width; b++) {
				if (w[b] <= width)
					continue;
				size_t ia = 0, ib = 0, k = 0;
				while (k + 1 < width && ia < len[a] && ib < len[b] && e[a][ia] == e[b][ib]) {
					k += ((unsigned char)e[a][ia] & 0xc0) != 0x80 && (ia + 1 >= len[a] ||
					     ((unsigned char)e[a][ia + 1] & 0xc0) != 0x80);
					ia++, ib++;
				}
				clash = k + 1 >= width;
			}
	}
	for (size_t c = 0; c < n; c++)
		free(e[c]);
	free(e), free(w), free(len);
	return width;
}

/* A cell as text for the summary: byte columns in binary units. */
static void cell_text(char *buf, size_t n, const hm_cell *c, const char *col)
{
	int bytes = !strcmp(col, "bytes") || !strcmp(col, "max_bytes");
	switch (c->type) {
	case HM_V_INT:
		if (bytes)
			hm_fmt_bytes(buf, n, c->i);
		else
			snprintf(buf, n, "%" PRId64, c->i);
		break;
	case HM_V_NUM: snprintf(buf, n, "%.3f", c->d); break;
	case HM_V_STR: snprintf(buf, n, "%s", c->s); break;
	case HM_V_BOOL: snprintf(buf, n, "%s", c->i ? "true" : "false"); break;
	default: snprintf(buf, n, "-"); break;
	}
}

static void summary_agg(FILE *f, const hm_agg *g)
{
	char buf[256];
	size_t *w = hm_xcalloc(g->ncols, sizeof *w);
	for (size_t c = 0; c < g->ncols; c++) {
		w[c] = width_of(g->cols[c], strlen(g->cols[c]));
		for (size_t i = 0; i < g->nrows; i++) {
			cell_text(buf, sizeof buf, &g->cells[i * g->ncols + c], g->cols[c]);
			size_t x = width_of(buf, strlen(buf));
			if (x > w[c])
				w[c] = x > 60 ? 60 : x;
		}
	}
	fputs("\naggregation ", f);
	put_col(f, g->name, strlen(g->name), 0);
	fprintf(f, " (%zu rows, %s)\n ", g->nrows, g->per_series ? "per series" : "across series: per = \"all\"");
	for (size_t c = 0; c < g->ncols; c++) {
		putc(' ', f);
		put_col(f, g->cols[c], strlen(g->cols[c]), c + 1 < g->ncols ? w[c] : 0);
	}
	putc('\n', f);
	for (size_t i = 0; i < g->nrows; i++) {
		putc(' ', f);
		for (size_t c = 0; c < g->ncols; c++) {
			const hm_cell *cell = &g->cells[i * g->ncols + c];
			cell_text(buf, sizeof buf, cell, g->cols[c]);
			putc(' ', f);
			size_t len = strlen(buf);
			if (cell->type == HM_V_STR) {
				put_col(f, buf, len, c + 1 < g->ncols ? w[c] : 0);
			} else {
				for (size_t k = width_of(buf, len); k < w[c]; k++)
					putc(' ', f);
				fputs(buf, f);
			}
		}
		putc('\n', f);
	}
	free(w);
}

/* ANSI styles for a terminal (r->color): bold for what the eye looks for first (the
 * trace, the device and its peak), dim for headings; nothing otherwise. */
static const char *sgr(const hm_report *r, const char *code)
{
	return r->color ? code : "";
}
#define SGR_BOLD "\033[1m"
#define SGR_DIM "\033[2m"
#define SGR_OFF "\033[0m"

/* The largest allocations live at the peak, with where they came from. */
static void summary_live(FILE *f, const hm_report *r, const hm_file *hf, const hm_series *s, size_t width)
{
	size_t show = r->top; /* --top, as in --json and --html (issue 17) */
	if (!show)
		return;
	uint32_t *pos = hm_xcalloc(show + 1, sizeof *pos);
	size_t n = hm_live_at_peak(s, &hf->t->mem, pos, show);
	if (n == 0) {
		if (hf->t->snap)
			fprintf(f, "    (no allocation is live at the peak)\n");
		else if (!s->has_addr)
			fprintf(f, "    (this trace has no Addr: allocations live at the peak cannot be known)\n");
		free(pos);
		return;
	}
	int lw = 14; /* the lifetime column, wider where a row is "freed after the window" */
	for (size_t i = 0; i < n && i < show; i++)
		if (s->partner[pos[i]] <= HM_FREED_AFTER && !s->before[pos[i]])
			lw = 22;
	fprintf(f, "    largest allocations live at the peak (%zu of %zu):\n", n < show ? n : show, n);
	fprintf(f, "%s    %12s  ", sgr(r, SGR_DIM), "bytes");
	put_col(f, "category", 8, width);
	fprintf(f, " %6s  %-*s  %s%s\n", "step", lw, "lifetime", "who", sgr(r, SGR_OFF));
	for (size_t i = 0; i < n && i < show; i++) {
		hm_rowref ref = {hf, s, pos[i]};
		hm_value cat, step, life;
		hm_field_get(&ref, HM_F_CATEGORY, r->cats, &cat);
		hm_field_get(&ref, HM_F_STEP, r->cats, &step);
		hm_field_get(&ref, HM_F_LIFETIME, r->cats, &life);
		char b[32], st[24], lt[40];
		int64_t by = hm_mem_bytes(&hf->t->mem, s->ev[pos[i]]);
		hm_fmt_bytes(b, sizeof b, by < 0 ? -by : by);
		snprintf(st, sizeof st, step.type == HM_V_INT ? "%" PRId64 : "-", step.i);
		if (s->before[pos[i]])
			snprintf(lt, sizeof lt, s->before[pos[i]] == HM_BEFORE_WINDOW ? "before window" : "before trace");
		else if (s->partner[pos[i]] <= HM_FREED_AFTER)
			snprintf(lt, sizeof lt, "freed after the window");
		else if (life.type == HM_V_NUM)
			snprintf(lt, sizeof lt, "%.3f ms", life.d / 1000.0);
		else
			snprintf(lt, sizeof lt, "never freed");
		fprintf(f, "    %12s  ", b);
		put_col(f, cat.type == HM_V_STR ? cat.s : "-", cat.type == HM_V_STR ? cat.len : 1, width);
		fprintf(f, " %6s  %-*s  ", st, lw, lt);
		char who[512];
		hm_explain_who(&ref, who, sizeof who);
		put_col(f, who, strlen(who), 0);
		putc('\n', f);
	}
	free(pos);
}

void hm_write_summary(FILE *f, const hm_report *r)
{
	char b1[32], b2[32], b3[32], b4[32];
	size_t *order = hm_xcalloc(r->cats->n + 1, sizeof *order);
	size_t width = category_width(r->cats);
	const hm_file *top_f = NULL; /* the highest peak of all, for the overview */
	const hm_series *top_s = NULL;
	size_t nseries = 0;
	for (size_t i = 0; i < r->nfiles; i++) {
		const hm_file *hf = r->files[i];
		const hm_trace *t = hf->t;
		fputs(sgr(r, SGR_BOLD), f);
		put_col(f, t->path, strlen(t->path), 0);
		if (t->rank != HM_NONE)
			fprintf(f, "  rank %" PRId64, t->rank);
		fprintf(f, "%s  (%" PRIu64 " events, %zu memory events)\n", sgr(r, SGR_OFF), t->events, t->mem.n);
		if (hm_snap_time_note(t))
			fprintf(f, "  (%s)\n", hm_snap_time_note(t));
		if (hf->nseries == 0 && t->top_array) /* issue 17: profile_memory=True cannot help there */
			fprintf(f, "  no [memory] events: a bare array of events, as PyTorch's profiler writes without Kineto;\n"
				   "  it records no memory even with profile_memory=True: use a PyTorch built with Kineto\n");
		else if (hf->nseries == 0)
			fprintf(f, "  no [memory] events: record with torch.profiler.profile(profile_memory=True)\n");
		for (size_t si = 0; si < hf->nseries; si++) {
			const hm_series *s = &hf->series[si];
			nseries++;
			if (!top_s || s->peak > top_s->peak)
				top_f = hf, top_s = s;
			hm_fmt_bytes(b1, sizeof b1, s->peak);
			hm_fmt_bytes(b2, sizeof b2, s->end_bytes);
			char tsb[40];
			hm_fmt_us(tsb, s->peak_ts);
			fprintf(f, "  %s%s%s: peak %s%s%s at +%.3f ms (ts %s), end %s", sgr(r, SGR_BOLD), s->device, sgr(r, SGR_OFF),
				sgr(r, SGR_BOLD), b1, sgr(r, SGR_OFF), (double)(s->peak_ts - t->first_ts) / 1e6, tsb, b2);
			if (s->max_reserved != HM_NONE) {
				hm_fmt_bytes(b3, sizeof b3, s->max_reserved);
				fprintf(f, ", max reserved %s", b3);
			}
			fprintf(f, "\n  %" PRIu64 " allocs, %" PRIu64 " frees (%" PRIu64 " matched)", s->allocs, s->frees, s->matched_frees);
			if (s->mismatches)
				fprintf(f, ", %" PRIu64 " MISMATCHES with Total Allocated", s->mismatches);
			fputc('\n', f);
			if (hm_snap_no_entries(hf, s))
				fprintf(f, "  (%s)\n", HM_SNAP_NO_ENTRIES_NOTE);
			size_t n = hm_categories_by_peak(s, order);
			fprintf(f, "%s    %-*s %12s %12s %9s %12s%s\n", sgr(r, SGR_DIM), (int)width, "category", "peak", "at peak",
				"allocs", "live at end", sgr(r, SGR_OFF));
			for (size_t j = 0; j < n; j++) {
				const hm_catstat *cs = &s->cats[order[j]];
				hm_fmt_bytes(b1, sizeof b1, cs->peak);
				hm_fmt_bytes(b2, sizeof b2, cs->at_peak);
				hm_fmt_bytes(b4, sizeof b4, cs->end);
				fputs("    ", f);
				put_col(f, r->cats->str[order[j]], r->cats->len[order[j]], width);
				fprintf(f, " %12s %12s %9" PRIu64 " %12s\n", b1, b2, cs->allocs, b4);
			}
			summary_live(f, r, hf, s, width);
			hm_summary_explain(f, r, hf, s);
		}
		if (i + 1 < r->nfiles)
			fputc('\n', f);
	}
	/* Several traces: one line to read first (issue 17). */
	if (r->nfiles > 1) {
		fprintf(f, "\n%s%zu traces, %zu devices", sgr(r, SGR_BOLD), r->nfiles, nseries);
		if (top_s) {
			hm_fmt_bytes(b1, sizeof b1, top_s->peak);
			fprintf(f, ", highest peak %s on %s of ", b1, top_s->device);
			put_col(f, top_f->t->path, strlen(top_f->t->path), 0);
			if (top_f->t->rank != HM_NONE)
				fprintf(f, " (rank %" PRId64 ")", top_f->t->rank);
		}
		fprintf(f, "%s\n", sgr(r, SGR_OFF));
	}
	hm_ranks_summary(f, r, width);
	free(order);
	for (size_t a = 0; a < r->naggs; a++)
		summary_agg(f, &r->aggs[a]);
	hm_budget_summary(f, r); /* last: the line a CI log shows */
}

/* One row per series and category, for spreadsheets and scripts that want the summary
 * without parsing the table: the series' own figures repeat on each of its rows. */
void hm_write_summary_csv(FILE *f, const hm_report *r)
{
	fputs("path,rank,device,peak_bytes,peak_ts,max_reserved_bytes,category,category_peak_bytes,bytes_at_peak,"
	      "allocs,alloc_bytes,end_bytes" HM_RANKS_CSV_HEADER "\n", f);
	for (size_t i = 0; i < r->nfiles; i++) {
		const hm_file *hf = r->files[i];
		for (size_t si = 0; si < hf->nseries; si++) {
			const hm_series *s = &hf->series[si];
			for (size_t c = 0; c < s->ncats; c++) {
				const hm_catstat *cs = &s->cats[c];
				if (!cs->used)
					continue;
				csv_cstr(f, hf->t->path);
				putc(',', f);
				csv_opt(f, hf->t->rank);
				putc(',', f);
				csv_cstr(f, s->device);
				fprintf(f, ",%" PRId64 ",", s->peak);
				hm_json_us(f, s->peak_ts);
				putc(',', f);
				csv_opt(f, s->max_reserved);
				putc(',', f);
				csv_str(f, r->cats->str[c], r->cats->len[c]);
				fprintf(f, ",%" PRId64 ",%" PRId64 ",%" PRIu64 ",%" PRIu64 ",%" PRId64 HM_RANKS_CSV_SERIES "\n", cs->peak,
					cs->at_peak, cs->allocs, cs->alloc_bytes, cs->end);
			}
		}
	}
	hm_ranks_csv(f, r);
}
