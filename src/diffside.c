/* A run read from traces, as one side of `hmem diff`. */
#include "diffside.h"
#include "fields.h"
#include "timeline.h"
#include "util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Bytes and allocations per key (an op's or a module's name) live at the peak. */
typedef struct groups {
	hm_strtab keys;
	int64_t *bytes;
	uint64_t *count;
	size_t cap;
} groups;

static void group_add(groups *g, const char *key, size_t len, int64_t bytes)
{
	uint32_t id = hm_strtab_intern(&g->keys, key, len);
	if (id >= g->cap) {
		size_t cap = g->cap;
		hm_grow(&g->bytes, &cap, (size_t)id + 1, sizeof *g->bytes);
		cap = g->cap;
		hm_grow(&g->count, &cap, (size_t)id + 1, sizeof *g->count);
		memset(g->bytes + g->cap, 0, (cap - g->cap) * sizeof *g->bytes);
		memset(g->count + g->cap, 0, (cap - g->cap) * sizeof *g->count);
		g->cap = cap;
	}
	g->bytes[id] += bytes;
	g->count[id]++;
}

/* [[key, bytes, count], ...] in the order met (diff sorts). */
static void group_write(FILE *f, groups *g)
{
	putc('[', f);
	for (size_t i = 0; i < g->keys.n; i++) {
		fputs(i ? ", [" : "[", f);
		hm_json_str(f, g->keys.str[i], g->keys.len[i], 0);
		fprintf(f, ", %" PRId64 ", %" PRIu64 "]", g->bytes[i], g->count[i]);
	}
	putc(']', f);
	hm_strtab_free(&g->keys);
	free(g->bytes), free(g->count);
	*g = (groups){0};
}

/* The file of a frame "FILE(LINE): NAME": its length up to the last "(" before ": ". */
static size_t frame_file_len(const char *s, size_t len)
{
	size_t i = 0;
	while (i + 3 <= len && memcmp(s + i, "): ", 3) != 0)
		i++;
	while (i + 3 <= len && i > 0)
		if (s[--i] == '(')
			return i;
	return len;
}

/* Every allocation live at the peak, grouped by op and module, or for a snapshot (its rows
 * have frames, no op) by user frame and by that frame's file; memory from before the trace is
 * its own group, "(before trace)", so that the groups add up to the peak. */
static void write_groups(FILE *f, const hm_report *r, const hm_file *hf, const hm_series *s)
{
	uint32_t *pos = hm_xcalloc(s->n + 1, sizeof *pos);
	size_t n = hm_live_at_peak(s, &hf->t->mem, pos, s->n);
	static const int fields[] = {HM_F_OP, HM_F_MODULE, HM_F_FRAME, HM_F_FRAME};
	static const char *const names[] = {"op", "module", "frame", "file"},
			  *const none[] = {"(no op)", "(no module)", "(no frame)", "(no file)"};
	fputs("{", f);
	for (int j = hf->t->snap ? 2 : 0; j < (hf->t->snap ? 4 : 2); j++) {
		groups g = {0};
		if (s->ncats && s->cats[HM_CAT_BEFORE].at_peak)
			group_add(&g, "(before trace)", 14, s->cats[HM_CAT_BEFORE].at_peak);
		for (size_t i = 0; i < n; i++) {
			hm_rowref ref = {hf, s, pos[i]};
			hm_value v;
			hm_field_get(&ref, fields[j], r->cats, &v);
			int64_t b = hm_mem_bytes(&hf->t->mem, s->ev[pos[i]]);
			b = b < 0 ? -b : b;
			if (v.type == HM_V_STR && j == 3)
				v.len = frame_file_len(v.s, v.len);
			if (v.type == HM_V_STR)
				group_add(&g, v.s, v.len, b);
			else
				group_add(&g, none[j], strlen(none[j]), b);
		}
		fprintf(f, "%s\"%s\": ", j % 2 ? ", " : "", names[j]);
		group_write(f, &g);
	}
	fputs("}", f);
	free(pos);
}

/* The timeline in at most HM_DIFF_POINTS columns of equal time: per column, the state
 * where the device total is highest (so the peak is drawn), ms since the first event. */
static void write_points(FILE *f, const hm_report *r, const hm_file *hf, const hm_series *s)
{
	size_t nc = r->cats->n, ncol = HM_DIFF_POINTS;
	int64_t *val = hm_xcalloc(nc + 1, sizeof *val), *best = hm_xcalloc(ncol * (nc + 1), sizeof *best);
	int64_t *bts = hm_xcalloc(ncol, sizeof *bts), *btot = hm_xcalloc(ncol, sizeof *btot);
	char *has = hm_xcalloc(ncol, 1);
	int64_t t0 = s->n ? hm_mem_ts(&hf->t->mem, s->ev[0]) : 0, t1 = s->n ? hm_mem_ts(&hf->t->mem, s->ev[s->n - 1]) : 0;
	hm_replay it;
	hm_replay_init(&it, s, &hf->t->mem, val, nc);
	do {
		size_t c = t1 > t0 ? (size_t)((double)(it.ts - t0) / (double)(t1 - t0) * (double)(ncol - 1)) : 0;
		if (c < ncol && (!has[c] || it.total > btot[c])) {
			has[c] = 1, btot[c] = it.total, bts[c] = it.ts;
			memcpy(best + c * (nc + 1), val, nc * sizeof *val);
		}
	} while (hm_replay_next(&it));
	fputs("{\"ms\": [", f);
	int first = 1;
	for (size_t c = 0; c < ncol; c++)
		if (has[c])
			fprintf(f, "%s%.6g", first ? "" : ",", (double)(bts[c] - t0) / 1e6), first = 0;
	fputs("], \"cats\": [", f);
	first = 1;
	for (size_t k = 0; k < s->ncats && k < nc; k++) {
		if (!s->cats[k].used)
			continue;
		fputs(first ? "[" : ", [", f);
		first = 0;
		int f2 = 1;
		for (size_t c = 0; c < ncol; c++)
			if (has[c])
				fprintf(f, "%s%" PRId64, f2 ? "" : ",", best[c * (nc + 1) + k]), f2 = 0;
		putc(']', f);
	}
	fputs("]}", f);
	free(val), free(best), free(bts), free(btot), free(has);
}

char *hm_diff_side_json(const hm_report *r, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f)
		abort();
	fputs("{\"report\": ", f);
	hm_write_json(f, r);
	fputs(", \"extra\": [", f);
	int first = 1;
	for (size_t i = 0; i < r->nfiles; i++) {
		const hm_file *hf = r->files[i];
		for (size_t si = 0; si < hf->nseries; si++) {
			fputs(first ? "\n {\"groups\": " : ",\n {\"groups\": ", f);
			first = 0;
			write_groups(f, r, hf, &hf->series[si]);
			fputs(", \"points\": ", f);
			write_points(f, r, hf, &hf->series[si]);
			putc('}', f);
		}
	}
	fputs("], \"colors\": {", f);
	first = 1;
	for (size_t c = 1; c < r->ncolors && c < r->cats->n; c++) /* the pack's declared colours */
		if (r->colors[c][0]) {
			fputs(first ? "" : ", ", f);
			first = 0;
			hm_json_str(f, r->cats->str[c], r->cats->len[c], 0);
			fprintf(f, ": \"%s\"", r->colors[c]);
		}
	fputs("}}\n", f);
	if (fclose(f) != 0)
		abort();
	return buf;
}
