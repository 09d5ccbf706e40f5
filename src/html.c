#define _GNU_SOURCE /* open_memstream */
#include "html.h"
#include "budget.h"
#include "explain.h"
#include "explainout.h"
#include "jsonw.h"
#include "fields.h"
#include "ranks.h"
#include "snapseg.h"
#include "snapout.h"
#include "timeline.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#ifndef HM_VERSION
#define HM_VERSION "0.0.0"
#endif

/* Categories with a colour of their own in a report: past this many, the smallest share
 * one, "other", and the chart stacks them as one area. More are not told apart at a glance. */
#define HM_HTML_LEGIBLE 10

/* Okabe & Ito's colour-blind-safe palette (https://jfly.uni-koeln.de/color/), then three of
 * Paul Tol's that none of them resembles; black is left for the reserved line and text.
 * "(before trace)" is a light grey the page hatches, "other" a sand no palette entry is. */
static const char *const palette[HM_HTML_LEGIBLE] = {
	"#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7", "#8c564b", "#332288", "#999933",
};
#define HM_HTML_BEFORE_COLOR "#d9d9d9"
#define HM_HTML_OTHER_COLOR "#d8c9a8"

/* Two colours a reader tells apart: at least this far (CIE76 delta E) in normal vision and
 * as protanopes and deuteranopes see them (the palette's closest pair is 13.5 apart), and
 * no colour this close to black, which is the Total Reserved line's. tests/html.lua
 * computes the same. */
#define HM_HTML_MIN_DELTA 12.0
#define HM_HTML_MIN_BLACK 25.0

static double srgb_linear(int c)
{
	double v = c / 255.0;
	return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

static double lab_f(double t)
{
	return t > 0.008856 ? cbrt(t) : 7.787 * t + 16.0 / 116.0;
}

/* "#rrggbb" as CIE L*a*b* (D65), seen by vision v: 0 normal, 1 protanopia, 2 deuteranopia
 * (Machado, Oliveira and Fernandes 2009, severity 1, in linear RGB). */
static void to_lab(const char *hex, int v, double lab[3])
{
	static const double cvd[3][3][3] = {
		{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
		{{0.152286, 1.052583, -0.204868}, {0.114503, 0.786281, 0.099216}, {-0.003882, -0.048116, 1.051998}},
		{{0.367322, 0.860646, -0.227968}, {0.280085, 0.672501, 0.047413}, {-0.011820, 0.042940, 0.968881}},
	};
	unsigned r = 0, g = 0, b = 0;
	sscanf(hex, "#%2x%2x%2x", &r, &g, &b);
	double in[3] = {srgb_linear((int)r), srgb_linear((int)g), srgb_linear((int)b)}, c[3];
	for (int i = 0; i < 3; i++) {
		c[i] = cvd[v][i][0] * in[0] + cvd[v][i][1] * in[1] + cvd[v][i][2] * in[2];
		c[i] = c[i] < 0 ? 0 : c[i] > 1 ? 1 : c[i];
	}
	double x = (0.4124 * c[0] + 0.3576 * c[1] + 0.1805 * c[2]) / 0.95047;
	double y = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
	double z = (0.0193 * c[0] + 0.1192 * c[1] + 0.9505 * c[2]) / 1.08883;
	lab[0] = 116 * lab_f(y) - 16, lab[1] = 500 * (lab_f(x) - lab_f(y)), lab[2] = 200 * (lab_f(y) - lab_f(z));
}

/* How far apart two colours are for the reader who tells them apart least. */
static double color_distance(const char *a, const char *b)
{
	double best = INFINITY;
	for (int v = 0; v < 3; v++) {
		double p[3], q[3];
		to_lab(a, v, p);
		to_lab(b, v, q);
		double d = sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2]));
		if (d < best)
			best = d;
	}
	return best;
}

/* Whether c can join the colours taken so far: not near black, apart from each of them. */
static int color_fits(const char *c, char (*taken)[8], size_t ntaken)
{
	if (color_distance(c, "#000000") < HM_HTML_MIN_BLACK)
		return 0;
	for (size_t i = 0; i < ntaken; i++)
		if (color_distance(c, taken[i]) < HM_HTML_MIN_DELTA)
			return 0;
	return 1;
}

/* Each category's colour and whether it goes to "other". The categories are ranked by their
 * largest peak on any series (then by id): the first HM_HTML_LEGIBLE - 1 keep their colour
 * (the pack's declared one, else the next palette entry in rank order), and so do all when
 * there are no more than HM_HTML_LEGIBLE. A declared colour that is near black (it would
 * read as the Total Reserved line) or too like one a higher-ranked category has is replaced
 * by the next palette entry that is unlike them all (the pytorch pack's "input" is black,
 * its "parameter" green and "activation" red are one colour to a deuteranope). */
typedef struct colors {
	char (*color)[8];
	uint8_t *other;
} colors;

typedef struct ranked {
	int64_t score;
	size_t c;
} ranked;

/* A category's rank score: its largest peak on any series, plus one when used at all (so
 * a category used at 0 bytes still ranks above one never used). */
static int64_t largest_peak(const hm_report *r, size_t c)
{
	int64_t best = 0;
	for (size_t i = 0; i < r->nfiles; i++)
		for (size_t si = 0; si < r->files[i]->nseries; si++) {
			const hm_series *s = &r->files[i]->series[si];
			if (c < s->ncats && s->cats[c].used && s->cats[c].peak >= best)
				best = s->cats[c].peak + 1;
		}
	return best;
}

static int by_rank(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	return x->score != y->score ? (x->score < y->score ? 1 : -1) : (x->c > y->c) - (x->c < y->c);
}

/* The next palette entry, from *next on, that fits among taken (the least bad when none
 * does: more categories than the palette tells apart). */
static const char *next_palette(size_t *next, char (*taken)[8], size_t ntaken)
{
	for (size_t i = 0; i < HM_HTML_LEGIBLE; i++) {
		const char *c = palette[(*next + i) % HM_HTML_LEGIBLE];
		if (color_fits(c, taken, ntaken)) {
			*next += i + 1;
			return c;
		}
	}
	return palette[(*next)++ % HM_HTML_LEGIBLE];
}

static void colors_init(colors *k, const hm_report *r)
{
	size_t n = r->cats->n, used = 0, next = 0, ntaken = 0;
	ranked *order = hm_xcalloc(n + 1, sizeof *order);
	char(*taken)[8] = hm_xcalloc(n + 1, sizeof *taken);
	k->color = hm_xcalloc(n + 1, sizeof *k->color);
	k->other = hm_xcalloc(n + 1, 1);
	for (size_t c = 1; c < n; c++) {
		int64_t score = largest_peak(r, c);
		if (score > 0)
			order[used++] = (ranked){score, c};
	}
	qsort(order, used, sizeof *order, by_rank);
	if (n)
		memcpy(k->color[HM_CAT_BEFORE], HM_HTML_BEFORE_COLOR, 8);
	for (size_t j = 0; j < used; j++) {
		size_t c = order[j].c;
		if (used > HM_HTML_LEGIBLE && j >= HM_HTML_LEGIBLE - 1) {
			k->other[c] = 1;
			memcpy(k->color[c], HM_HTML_OTHER_COLOR, 8);
			continue;
		}
		if (c < r->ncolors && r->colors[c][0] && color_fits(r->colors[c], taken, ntaken))
			memcpy(k->color[c], r->colors[c], 8);
		else
			memcpy(k->color[c], next_palette(&next, taken, ntaken), 8);
		memcpy(taken[ntaken++], k->color[c], 8);
	}
	for (size_t c = 1; c < n; c++) /* never used: shown nowhere, but the data names one */
		if (!k->color[c][0])
			memcpy(k->color[c], c < r->ncolors && r->colors[c][0] ? r->colors[c] : HM_HTML_OTHER_COLOR, 8);
	free(taken);
	free(order);
}

static void colors_free(colors *k)
{
	free(k->color);
	free(k->other);
}

/* Text for HTML content and attribute values: markup characters as references, bytes
 * that are not UTF-8 (and control characters) as U+FFFD, as the JSON data has them. */
static void html_str(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + n;
	while (p < e) {
		unsigned c = *p;
		if (c == '&')
			fputs("&amp;", f), p++;
		else if (c == '<')
			fputs("&lt;", f), p++;
		else if (c == '>')
			fputs("&gt;", f), p++;
		else if (c == '"')
			fputs("&quot;", f), p++;
		else if (c == '\'')
			fputs("&#39;", f), p++;
		else if (c == '\t' || c == '\n')
			putc((int)c, f), p++;
		else if (c < 0x20 || c == 0x7f)
			fputs("\xef\xbf\xbd", f), p++;
		else if (c < 0x80)
			putc((int)c, f), p++;
		else {
			int len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
			int ok = len && e - p >= len;
			for (int i = 1; ok && i < len; i++)
				ok = (p[i] & 0xc0) == 0x80;
			if (ok)
				fwrite(p, 1, (size_t)len, f), p += len;
			else
				fputs("\xef\xbf\xbd", f), p++;
		}
	}
}

static void html_cstr(FILE *f, const char *s)
{
	html_str(f, s, strlen(s));
}

static void json_cstr(FILE *f, const char *s)
{
	hm_json_str(f, s, strlen(s), 1);
}

/* A byte count in a table cell: binary units, the exact count on hover. */
static void bytes_cell(FILE *f, int64_t b)
{
	char t[32];
	hm_fmt_bytes(t, sizeof t, b);
	fprintf(f, "<td class=num title=\"%" PRId64 " bytes\">%s</td>", b, t);
}

/* A figure of --json's top level in a table cell: its path there (data-k) and value (data-v)
 * for whoever checks the page against --json, bytes in binary units with the exact count
 * on hover. */
static void json_cell(FILE *f, const char *path, size_t i, const char *key, int64_t v, int bytes)
{
	char t[32];
	if (bytes)
		hm_fmt_bytes(t, sizeof t, v);
	else
		snprintf(t, sizeof t, "%" PRId64, v);
	fprintf(f, "<td class=num data-k=\"%s.%zu.%s\" data-v=%" PRId64, path, i, key, v);
	if (bytes)
		fprintf(f, " title=\"%" PRId64 " bytes\"", v);
	fprintf(f, ">%s</td>", t);
}

/* "path  rank N  device": how the page names a series. */
static void series_label(char *buf, size_t n, const hm_file *hf, const hm_series *s)
{
	if (hf->t->rank != HM_NONE)
		snprintf(buf, n, "%s  rank %" PRId64 "  %s", hf->t->path, hf->t->rank, s->device);
	else
		snprintf(buf, n, "%s  %s", hf->t->path, s->device);
}

/* A file's path as the page shows it: past HM_HTML_PATH bytes only its last components, after
 * "…/" (the caller gives the whole on hover); a line may break after each '/', never inside
 * a name. */
#define HM_HTML_PATH 60

static void html_path(FILE *f, const char *p)
{
	size_t n = strlen(p), from = 0;
	if (n > HM_HTML_PATH) {
		const char *cut = strchr(p + n - HM_HTML_PATH, '/');
		if (cut && cut[1]) {
			fputs("\xe2\x80\xa6", f);
			from = (size_t)(cut - p);
		}
	}
	for (const char *q = p + from, *e = p + n; q < e;) {
		const char *sl = memchr(q, '/', (size_t)(e - q));
		size_t len = sl ? (size_t)(sl - q) + 1 : (size_t)(e - q);
		html_str(f, q, len);
		if (sl && sl + 1 < e)
			fputs("<wbr>", f);
		q += len;
	}
}

/* A series named in a table or heading: its path (shortened, html_path), rank and device,
 * the whole label on hover. */
static void series_name(FILE *f, const hm_file *hf, const hm_series *s)
{
	char label[1200];
	series_label(label, sizeof label, hf, s);
	fputs("<span class=series-name title=\"", f);
	html_cstr(f, label);
	fputs("\">", f);
	html_path(f, hf->t->path);
	if (hf->t->rank != HM_NONE)
		fprintf(f, "  rank %" PRId64, hf->t->rank);
	fputs(" ", f);
	html_cstr(f, s->device);
	fputs("</span>", f);
}

/* The position of s among the report's series (the page's series index). */
static size_t series_index(const hm_report *r, const hm_series *s)
{
	size_t idx = 0;
	for (size_t i = 0; i < r->nfiles; i++)
		for (size_t si = 0; si < r->files[i]->nseries; si++, idx++)
			if (&r->files[i]->series[si] == s)
				return idx;
	return 0;
}

/* Per category of a series, its (position, value) pairs where the value changes. */
typedef struct changes {
	int64_t *v; /* pairs */
	size_t n, cap;
	int64_t last;
} changes;

static void change_add(changes *c, size_t i, int64_t v)
{
	if (c->n && v == c->last)
		return;
	hm_grow(&c->v, &c->cap, c->n + 2, sizeof *c->v);
	c->v[c->n++] = (int64_t)i;
	c->v[c->n++] = v;
	c->last = v;
}

static void put_changes(FILE *f, const changes *c)
{
	putc('[', f);
	for (size_t i = 0; i < c->n; i++)
		fprintf(f, i ? ",%" PRId64 : "%" PRId64, c->v[i]);
	putc(']', f);
}

/* Which events of a series the chart keeps (keep[k]). All of them when they fit in a
 * few points per column; else per pixel column the events where the device total is
 * lowest and highest, where reserved is highest, and the column's last, so the shape of
 * every column, and so every peak, survives. val: room for ncats values, for the replay.
 * Returns how many are kept. */
static size_t choose_points(const hm_series *s, const hm_mem *m, uint8_t *keep, int64_t *val, size_t ncats)
{
	if (s->n <= 3 * HM_HTML_COLUMNS) {
		memset(keep, 1, s->n);
		return s->n;
	}
	memset(keep, 0, s->n);
	hm_replay it;
	hm_replay_init(&it, s, m, val, ncats);
	int64_t t_lo = it.ts, span = hm_mem_ts(m, s->ev[s->n - 1]) - t_lo + 1;
	int64_t lo = 0, hi = 0, res = 0;
	long col = -1, k_lo = -1, k_hi = -1, k_res = -1, k_last = -1;
	size_t kept = 0;
	for (;;) {
		int more = hm_replay_next(&it);
		long c = more ? (long)((double)(it.ts - t_lo) / (double)span * HM_HTML_COLUMNS) : -1;
		if (c != col && col >= 0) {
			long picks[] = {k_lo, k_hi, k_res, k_last};
			for (int i = 0; i < 4; i++)
				if (picks[i] >= 0 && !keep[picks[i]])
					keep[picks[i]] = 1, kept++;
		}
		if (!more)
			break;
		k_last = it.k;
		if (c != col) {
			col = c, k_lo = k_hi = it.k, lo = hi = it.total;
			k_res = it.reserved != HM_NONE ? it.k : -1, res = it.reserved;
			continue;
		}
		if (it.total < lo)
			lo = it.total, k_lo = it.k;
		if (it.total > hi)
			hi = it.total, k_hi = it.k;
		if (it.reserved != HM_NONE && (k_res < 0 || it.reserved > res))
			res = it.reserved, k_res = it.k;
	}
	return kept;
}

/* What is live at a moment, for clicks on the chart: per series the HM_HTML_LIVE largest
 * allocations that are live at some kept point, and the HM_HTML_PEAK_LIVE largest live at the
 * peak (so a page stays small whatever the trace),
 * each as [first point live, first point not (-1: never freed), bytes, category, context,
 * time allocated (ns from the start; -1 before the trace)]; the page says what is left out
 * (the bytes live at a point minus those listed). The context is the enclosing slices (ops,
 * annotations, Python frames and modules), innermost HM_HTML_STACK of them, outermost first,
 * one per line, interned in ctx. */
#define HM_HTML_LIVE 1000
#define HM_HTML_STACK 16
#define HM_HTML_PEAK_LIVE 200

typedef struct sized {
	int64_t bytes;
	uint32_t k;
} sized;

static int by_size(const void *a, const void *b)
{
	const sized *x = a, *y = b;
	return x->bytes != y->bytes ? (x->bytes < y->bytes ? 1 : -1) : (x->k > y->k) - (x->k < y->k);
}

typedef struct text {
	char *p;
	size_t n, cap;
} text;

static void text_add(text *t, const char *s, size_t n)
{
	hm_grow(&t->p, &t->cap, t->n + n + 1, 1);
	memcpy(t->p + t->n, s, n);
	t->n += n;
}

/* The page's contexts, each distinct one once: a trace's as text (id 2i: tab's i), a
 * snapshot's stack as the ids of its frame lines (id 2j + 1: stacks' j, uint32 ids in
 * lines), so a frame many stacks share is in the page once. For the snapshot being
 * written, the context of each of its stacks, made once however many rows share it. */
typedef struct contexts {
	hm_strtab tab, stacks, lines;
	const hm_trace *t; /* whose stacks of[] holds */
	uint32_t *of;      /* stack id -> context id + 1; 0: not made yet */
} contexts;

/* A snapshot's stack as a context: its frames, innermost first, "file(line): name" one a
 * line, the innermost HM_HTML_FRAMES of them (the page says how many it leaves out). */
#define HM_HTML_FRAMES 32

static uint32_t frames_of(contexts *ctx, const hm_trace *t, uint32_t stack, text *b)
{
	const hm_snap *sn = t->snap;
	if (stack == UINT32_MAX || stack >= sn->stacks.n)
		return 2 * hm_strtab_intern(&ctx->tab, "", 0);
	if (ctx->t != t) {
		free(ctx->of);
		ctx->of = hm_xcalloc(sn->stacks.n + 1, sizeof *ctx->of);
		ctx->t = t;
	}
	if (ctx->of[stack])
		return ctx->of[stack] - 1;
	const uint32_t *ids;
	size_t n = hm_snap_stack(sn, stack, &ids), m = 0;
	uint32_t lid[HM_HTML_FRAMES + 1];
	char line[64];
	for (size_t i = 0; i <= n && i <= HM_HTML_FRAMES; i++) {
		b->n = 0;
		if (i == n || i == HM_HTML_FRAMES) {
			if (n <= HM_HTML_FRAMES)
				break;
			text_add(b, line, (size_t)snprintf(line, sizeof line, "(%zu outer frames left out)", n - HM_HTML_FRAMES));
		} else {
			hm_frame fr = hm_snap_frame(sn, ids[i]);
			if (fr.file < t->names.n)
				text_add(b, t->names.str[fr.file], t->names.len[fr.file]);
			text_add(b, line, (size_t)snprintf(line, sizeof line, "(%" PRId64 "): ", fr.line));
			if (fr.name < t->names.n)
				text_add(b, t->names.str[fr.name], t->names.len[fr.name]);
		}
		lid[m++] = hm_strtab_intern(&ctx->lines, b->p, b->n);
	}
	uint32_t id = 2 * hm_strtab_intern(&ctx->stacks, (const char *)lid, m * sizeof *lid) + 1;
	ctx->of[stack] = id + 1;
	return id;
}

/* A row's context: a snapshot's its frames (above), a trace's the slices around it. */
static uint32_t context_of(contexts *ctx, const hm_file *hf, const hm_series *s, uint32_t k, text *b)
{
	if (hf->t->snap)
		return frames_of(ctx, hf->t, hf->t->snap->stack[s->ev[k]], b);
	int32_t sl[256];
	hm_rowref ref = {hf, s, k};
	size_t n = hm_field_list(&ref, HM_F_STACK, sl, 256), have = n < 256 ? n : 256;
	size_t from = have > HM_HTML_STACK ? have - HM_HTML_STACK : 0;
	char head[64];
	b->n = 0;
	if (from)
		text_add(b, head, (size_t)snprintf(head, sizeof head, "(%zu outer frames left out)\n", from));
	const hm_strtab *names = &hf->t->names;
	for (size_t i = from; i < have; i++) {
		uint32_t id = hf->t->sl.name[sl[i]];
		text_add(b, names->str[id], names->len[id]);
		text_add(b, "\n", 1);
	}
	return 2 * hm_strtab_intern(&ctx->tab, b->n ? b->p : "", b->n ? b->n - 1 : 0);
}

static void live_json(FILE *f, contexts *ctx, const hm_file *hf, const hm_series *s, const uint8_t *keep)
{
	const hm_mem *m = &hf->t->mem;
	if (!s->has_addr) {
		fputs(",\n \"live\":null", f);
		return;
	}
	uint32_t *pt = hm_xcalloc(s->n + 1, sizeof *pt); /* k -> the first point whose state has event k */
	for (size_t k = 0, kept = 0; k < s->n; k++) {
		pt[k] = (uint32_t)kept + 1;
		kept += keep[k];
	}
	sized *c = hm_xcalloc(s->n + 1, sizeof *c);
	size_t n = 0;
	for (size_t k = 0; k < s->n; k++) {
		int64_t b = hm_mem_bytes(m, s->ev[k]);
		uint32_t from = b > 0 && s->before[k] != 2 ? pt[k] : 0, to = b > 0 ? (s->partner[k] >= 0 ? pt[s->partner[k]] : UINT32_MAX) : pt[k];
		if ((b > 0 || s->before[k]) && from < to)
			c[n++] = (sized){b < 0 ? -b : b, (uint32_t)k};
	}
	qsort(c, n, sizeof *c, by_size);
	size_t show = n < HM_HTML_LIVE ? n : HM_HTML_LIVE;
	/* and the HM_HTML_PEAK_LIVE largest live at the peak, whatever their size */
	uint8_t *in = hm_xcalloc(s->n + 1, 1);
	uint32_t at_peak[HM_HTML_PEAK_LIVE];
	size_t np = hm_live_at_peak(s, m, at_peak, HM_HTML_PEAK_LIVE);
	for (size_t i = 0; i < show; i++)
		in[c[i].k] = 1;
	for (size_t i = 0; i < np && i < HM_HTML_PEAK_LIVE; i++)
		if (!in[at_peak[i]]) {
			int64_t b = hm_mem_bytes(m, s->ev[at_peak[i]]);
			c[show++] = (sized){b < 0 ? -b : b, at_peak[i]};
		}
	free(in);
	fprintf(f, ",\n \"live\":{\"allocs\":%zu,\"largest\":%zu,\"at_peak\":%d,\"listed\":%zu,\"a\":[", n,
		n < HM_HTML_LIVE ? n : HM_HTML_LIVE, HM_HTML_PEAK_LIVE, show);
	text b = {0};
	int64_t t0 = hf->t->first_ts != HM_NONE ? hf->t->first_ts : (s->n ? hm_mem_ts(m, s->ev[0]) : 0);
	for (size_t i = 0; i < show; i++) {
		uint32_t k = c[i].k;
		int before = hm_mem_bytes(m, s->ev[k]) < 0;
		long to = before ? (long)pt[k] : s->partner[k] >= 0 ? (long)pt[s->partner[k]] : -1;
		fprintf(f, "%s[%" PRIu32 ",%ld,%" PRId64 ",%" PRId32 ",%" PRIu32 ",%" PRId64 "]", i ? "," : "",
			before ? 0 : pt[k], to, c[i].bytes, s->cat[k], context_of(ctx, hf, s, k, &b),
			before ? -1 : hm_mem_ts(m, s->ev[k]) - t0);
	}
	fputs("]}", f);
	free(b.p);
	free(c);
	free(pt);
}

/* Every allocation of a series, for a click anywhere on its chart (issue 27): one row per
 * allocation made in the trace (and per free of memory allocated before it), as columns of
 * little-endian numbers, deflated (the page inflates them with DecompressionStream) and in
 * base64, in a script element of its own. The columns, each n long, in this order:
 *   bytes, alloc_t, free_t: float64 (ns since the trace's start; -1: before the trace, never freed)
 *   and for a snapshot (its "all" says "blocks":true), for the allocator's view:
 *   addr: float64, the block's address (exact below 2^53; CUDA's are below 2^48)
 *   block: float64, the block's rounded size where the segments tell it (live at the end), -1
 *   from, to: uint32, the event positions + 1 between which it is live (the state after event
 *     k is live[k + 1]; the start is 0; to = 2^32 - 1: never freed)
 *   ctx, who: uint32, its stack (a context id: 2i, contexts[i], the enclosing slices one a
 *     line; 2j + 1, stacks[j], a snapshot's frames as ids in frame_lines) and who allocated
 *     it (an id in whos, as the summary says)
 *   step: int32 (-1: none), cat: uint16 (its category id).
 * A row is live at the state after event k when from <= k + 1 < to. */
typedef struct all_block {
	char *b64; /* NULL: the series has no Addr */
	size_t n, raw;
} all_block;

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static char *base64(const unsigned char *p, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = hm_xcalloc((n + 2) / 3 * 4 + 1, 1), *o = out;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? tab[v & 63] : '=';
	}
	return out;
}

static all_block all_allocations(contexts *ctx, hm_strtab *whos, const hm_report *r, const hm_file *hf, const hm_series *s)
{
	all_block blk = {0};
	const hm_mem *m = &hf->t->mem;
	if (!s->has_addr)
		return blk;
	size_t n = 0;
	for (size_t k = 0; k < s->n; k++)
		n += hm_mem_bytes(m, s->ev[k]) > 0 || (hm_mem_bytes(m, s->ev[k]) < 0 && s->before[k]);
	const hm_snap *sn = hf->t->snap;
	size_t width = 3 * 8 + 5 * 4 + 2 + (sn ? 16 : 0), raw = n * width;
	unsigned char *col = hm_xcalloc(raw + 1, 1);
	unsigned char *c_bytes = col, *c_at = c_bytes + 8 * n, *c_ft = c_at + 8 * n, *c_addr = c_ft + 8 * n;
	unsigned char *c_blk = c_addr + (sn ? 8 * n : 0), *c_from = c_blk + (sn ? 8 * n : 0);
	unsigned char *c_to = c_from + 4 * n, *c_ctx = c_to + 4 * n, *c_who = c_ctx + 4 * n, *c_step = c_who + 4 * n;
	unsigned char *c_cat = c_step + 4 * n;
	int64_t t0 = hf->t->first_ts != HM_NONE ? hf->t->first_ts : (s->n ? hm_mem_ts(m, s->ev[0]) : 0);
	text b = {0};
	char who[1024];
	size_t i = 0;
	for (size_t k = 0; k < s->n; k++) {
		int64_t by = hm_mem_bytes(m, s->ev[k]);
		int before = by < 0 && s->before[k];
		if (by <= 0 && !before)
			continue;
		hm_rowref ref = {hf, s, (uint32_t)k};
		hm_value step;
		hm_field_get(&ref, HM_F_STEP, r->cats, &step);
		hm_explain_who(&ref, who, sizeof who);
		double at = before ? -1 : (double)(hm_mem_ts(m, s->ev[k]) - t0);
		double ft = before ? (double)(hm_mem_ts(m, s->ev[k]) - t0) : s->partner[k] >= 0 ? (double)(hm_mem_ts(m, s->ev[s->partner[k]]) - t0) : -1;
		double bd = (double)(by < 0 ? -by : by);
		uint64_t u;
		memcpy(&u, &bd, 8), put_le(c_bytes + 8 * i, u, 8);
		memcpy(&u, &at, 8), put_le(c_at + 8 * i, u, 8);
		memcpy(&u, &ft, 8), put_le(c_ft + 8 * i, u, 8);
		if (sn) {
			int64_t bsz = hm_pack_get(&sn->block_bytes, s->ev[k]);
			double ad = (double)hm_mem_addr(m, s->ev[k]), bb = (double)bsz;
			if (bsz == HM_NONE || by < 0)
				bb = -1;
			memcpy(&u, &ad, 8), put_le(c_addr + 8 * i, u, 8);
			memcpy(&u, &bb, 8), put_le(c_blk + 8 * i, u, 8);
		}
		/* a snapshot's live block no entry made is live from the start (analyze.h, before 2) */
		put_le(c_from + 4 * i, before || s->before[k] == 2 ? 0 : k + 1, 4);
		put_le(c_to + 4 * i, before ? k + 1 : s->partner[k] >= 0 ? (uint64_t)s->partner[k] + 1 : UINT32_MAX, 4);
		put_le(c_ctx + 4 * i, context_of(ctx, hf, s, (uint32_t)k, &b), 4);
		put_le(c_who + 4 * i, hm_strtab_intern(whos, who, strlen(who)), 4);
		put_le(c_step + 4 * i, (uint32_t)(step.type == HM_V_INT ? (int32_t)step.i : -1), 4);
		put_le(c_cat + 2 * i, (uint16_t)(s->cat[k] >= 0 ? s->cat[k] : 0), 2);
		i++;
	}
	free(b.p);
	/* Level 3: for a million allocations level 6 took 1.9 s more CPU to save 4% of the page. */
	uLongf zn = compressBound((uLong)raw);
	unsigned char *z = hm_xcalloc(zn + 1, 1);
	if (compress2(z, &zn, col, (uLong)raw, 3) == Z_OK) {
		blk.b64 = base64(z, zn);
		blk.n = n, blk.raw = raw;
	}
	free(z);
	free(col);
	return blk;
}

/* A snapshot's segments over time, for the allocator's view (issue 27): the lives of the
 * series' device (snapseg.h) as columns, in address order, each present at the state after
 * event position kp when b <= kp < d (positions as the every-allocation columns' from and
 * to; b 0: made before recording; d -1: live at the end):
 *   "a" address, "z" size, "st" stream (null: unknown), "pl" segment_pool_id as "x,y" (null:
 *   unknown), "b", "d", "bt"/"dt" the times of the entries that made and gave it back (ns
 *   since the start; null: before recording, live at the end), "m" 1 where made by
 *   segment_map (an expandable segment's part);
 * "replay": false when the segment entries do not replay from the end (only the end is
 * known); "oom_k": the position of each OOM (the series' order), "end_k": the end's. A
 * device whose entries made no lives (no trace list, 1.13) has its end's segments. */
static void put_pk(FILE *f, uint32_t at, const uint32_t *pos, const uint32_t *cnt, size_t nmem, int none)
{
	if (at == UINT32_MAX)
		fputs(none ? "-1" : "0", f);
	else if (at < nmem && pos[at])
		fprintf(f, "%" PRIu32, pos[at]);
	else
		fprintf(f, "%" PRIu32, cnt[at < nmem ? at + 1 : nmem]);
}

static void segview_json(FILE *f, const hm_file *hf, const hm_series *s, int64_t t0)
{
	const hm_snap *sn = hf->t->snap;
	const hm_mem *m = &hf->t->mem;
	size_t first, n = hm_snapseg_lives_of(sn, s->dev_id, &first), gfirst, ng = hm_snapseg_of(sn, s->dev_id, &gfirst);
	hm_seglife *own = NULL;
	const hm_seglife *lv = sn->lives + first;
	if (!n && ng) { /* the end's segments, each made before recording */
		own = hm_xcalloc(ng, sizeof *own);
		for (size_t i = 0; i < ng; i++) {
			const hm_snapseg *g = &sn->segs[gfirst + i];
			own[i] = (hm_seglife){g->dev, 0, g->addr, g->total, g->stream, {g->pool[0], g->pool[1]}, HM_NONE, HM_NONE,
					      UINT32_MAX, UINT32_MAX};
		}
		lv = own, n = ng;
	}
	/* pos[i]: the series position + 1 of memory event i, 0 when not in it; cnt[i]: the
	 * series' events among the memory events before i */
	size_t nmem = m->n;
	uint32_t *pos = hm_xcalloc(nmem + 1, sizeof *pos), *cnt = hm_xcalloc(nmem + 2, sizeof *cnt);
	for (size_t k = 0; k < s->n; k++)
		pos[s->ev[k]] = (uint32_t)k + 1;
	for (size_t i = 0; i < nmem; i++)
		cnt[i + 1] = cnt[i] + (pos[i] != 0);
	int replay = !(n && (lv[0].flags & HM_SEGLIFE_NO_REPLAY));
	fprintf(f, ",\n \"segview\":{\"replay\":%s,\"end_k\":%zu,\"oom_k\":[", replay ? "true" : "false", s->n);
	for (size_t i = 0; i < s->nooms; i++)
		fprintf(f, "%s%ld", i ? "," : "", s->ooms[i].k + 1);
	static const char *const cols[] = {"a", "z", "st", "pl", "b", "d", "bt", "dt", "m"};
	for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) {
		fprintf(f, "],\n  \"%s\":[", cols[c]);
		for (size_t i = 0; i < n; i++) {
			const hm_seglife *l = &lv[i];
			if (i)
				putc(',', f);
			switch (c) {
			case 0: fprintf(f, "%" PRIu64, l->addr); break;
			case 1: fprintf(f, "%" PRId64, l->size); break;
			case 2: l->stream == HM_NONE ? fputs("null", f) : fprintf(f, "%" PRId64, l->stream); break;
			case 3:
				if (l->pool[0] == HM_NONE)
					fputs("null", f);
				else
					fprintf(f, "\"%" PRId64 ",%" PRId64 "\"", l->pool[0], l->pool[1]);
				break;
			case 4: put_pk(f, l->born_at, pos, cnt, nmem, 0); break;
			case 5: put_pk(f, l->died_at, pos, cnt, nmem, 1); break;
			case 6: l->born_ts == HM_NONE ? fputs("null", f) : fprintf(f, "%" PRId64, l->born_ts - t0); break;
			case 7: l->died_ts == HM_NONE ? fputs("null", f) : fprintf(f, "%" PRId64, l->died_ts - t0); break;
			default: putc(l->flags & HM_SEGLIFE_MAPPED ? '1' : '0', f); break;
			}
		}
	}
	fputs("]}", f);
	free(pos), free(cnt), free(own);
}

/* One series as the page's script reads it: point 0 is the state at the trace's first
 * timestamp (before the first memory event), then the kept events; times are ns from the
 * trace's start, values exact bytes, categories and reserved as their changes. */
/* Step bands and OOM markers for the chart: "steps":[[start,end,N(,1 when partial; 2 when a
 * snapshot ends in it)],...] and
 * "ooms":[[t,bytes],...], times in ns since t0 as "t". */
static void explain_json(FILE *f, const hm_series *s, int64_t t0)
{
	fputs(",\"steps\":[", f);
	for (size_t i = 0; i < s->nsteps; i++)
		fprintf(f, "%s[%" PRId64 ",%" PRId64 ",%" PRId32 "%s]", i ? "," : "", s->steps[i].start_ts - t0,
			s->steps[i].end_ts - t0, s->steps[i].step, s->steps[i].open ? ",2" : s->steps[i].partial ? ",1" : "");
	fputs("],\"ooms\":[", f);
	for (size_t i = 0; i < s->nooms; i++)
		fprintf(f, "%s[%" PRId64 ",%" PRId64 "]", i ? "," : "", s->ooms[i].ts - t0, s->ooms[i].bytes);
	putc(']', f);
	fputs(",\"gap_t\":", f);
	if (s->max_reserved_unallocated != HM_NONE && s->max_reserved_unallocated_ts != HM_NONE)
		fprintf(f, "%" PRId64, s->max_reserved_unallocated_ts - t0);
	else
		fputs("null", f);
}

/* The OOMs the page tells in full (a snapshot may hold thousands, each with its live
 * allocations and stack); the chart marks every one, and the rest are a table of times. */
#define HM_HTML_OOMS 20

/* The end of the JSON value that starts at p (hm_json_explain's own output: well formed),
 * or e. */
static const char *json_skip(const char *p, const char *e)
{
	int depth = 0;
	for (; p < e; p++) {
		if (*p == '"') {
			for (p++; p < e && *p != '"'; p++)
				if (*p == '\\')
					p++;
			if (!depth)
				return p + 1;
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			if (--depth <= 0)
				return p + 1;
		} else if (!depth && (*p == ',' || *p == '}' || *p == ']')) {
			return p;
		} else if (!depth && *p != ' ' && *p != '\n') {
			const char *q = p;
			while (q < e && *q != ',' && *q != '}' && *q != ']')
				q++;
			return q;
		}
	}
	return e;
}

/* Writes buf[from, to) as JSON inside the page's script: '<', '>' and '&' occur only inside
 * its strings, and as \u escapes no name can end the script. */
static void script_json(FILE *f, const char *from, const char *to)
{
	for (; from < to; from++) {
		if (*from == '<' || *from == '>' || *from == '&')
			fprintf(f, "\\u%04x", (unsigned)(unsigned char)*from);
		else
			putc(*from, f);
	}
}

/* The series' explain members exactly as --json writes them (hm_json_explain: the gap, the
 * leak verdict, the steps, the OOMs, a snapshot's segments), as the object "explain" of the
 * page's data, so its sections show the figures of --json and of the summary; past
 * HM_HTML_OOMS OOMs, the first of them and "ooms_total". */
static void explain_blob(FILE *f, const hm_report *r, const hm_file *hf, const hm_series *s)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	if (!m) {
		fputs(",\n \"explain\":null", f);
		return;
	}
	fputs("{\"device\":", m);
	hm_json_str(m, s->device, strlen(s->device), 0);
	hm_json_explain(m, r, hf, s);
	putc('}', m);
	fclose(m);
	fputs(",\n \"explain\":", f);
	const char *p = buf, *e = buf + n, *key = strstr(buf, "\"ooms\": [");
	/* the member "ooms" of the top object: its key at depth 1 */
	while (key && s->nooms > HM_HTML_OOMS) {
		int depth = 0;
		for (const char *q = buf; q < key; q = *q == '"' ? json_skip(q, key) : q + 1)
			depth += *q == '{' || *q == '[' ? 1 : *q == '}' || *q == ']' ? -1 : 0;
		if (depth == 1)
			break;
		key = strstr(key + 1, "\"ooms\": [");
	}
	if (key && s->nooms > HM_HTML_OOMS) {
		const char *q = strchr(key, '[') + 1;
		for (int i = 0; i < HM_HTML_OOMS; i++) {
			while (q < e && (*q == ' ' || *q == '\n' || *q == ','))
				q++;
			q = json_skip(q, e);
		}
		script_json(f, p, q);
		p = json_skip(strchr(key, '['), e);
		fputc(']', f);
		fprintf(f, ", \"ooms_total\": %zu", s->nooms);
	}
	script_json(f, p, e);
	free(buf);
}

static void series_json(FILE *f, contexts *ctx, hm_strtab *whos, all_block *all, const hm_report *r, const hm_file *hf,
			const hm_series *s)
{
	const hm_mem *m = &hf->t->mem;
	int64_t t0 = hf->t->first_ts != HM_NONE ? hf->t->first_ts : (s->n ? hm_mem_ts(m, s->ev[0]) : 0);
	char label[1200], us[40];
	series_label(label, sizeof label, hf, s);
	fputs("{\"label\":", f);
	json_cstr(f, label);
	fputs(",\"path\":", f);
	json_cstr(f, hf->t->path);
	fputs(",\"rank\":", f);
	if (hf->t->rank != HM_NONE)
		fprintf(f, "%" PRId64, hf->t->rank);
	else
		fputs("null", f);
	fputs(",\"device\":", f);
	json_cstr(f, s->device);
	hm_fmt_us(us, t0);
	fprintf(f, ",\"t0\":\"%s\",\"peak\":%" PRId64 ",\"peak_t\":%" PRId64 ",\"end\":%" PRId64 ",\"events\":%zu", us,
		s->peak, s->n ? s->peak_ts - t0 : 0, s->end_bytes, s->n);
	explain_json(f, s, t0);

	size_t ncats = r->cats->n;
	int64_t *val = hm_xcalloc(ncats + 1, sizeof *val);
	uint8_t *keep = hm_xcalloc(s->n + 1, 1);
	size_t kept = choose_points(s, m, keep, val, ncats);
	fprintf(f, ",\"reduced\":%s,\n \"t\":[0", kept < s->n ? "true" : "false");
	for (size_t k = 0; k < s->n; k++)
		if (keep[k])
			fprintf(f, ",%" PRId64, hm_mem_ts(m, s->ev[k]) - t0);
	fputs("],\n \"pk\":[0", f); /* each point's event position + 1, for the every-allocation columns */
	for (size_t k = 0; k < s->n; k++)
		if (keep[k])
			fprintf(f, ",%zu", k + 1);
	fputs("],\n \"res\":", f);

	changes *ch = hm_xcalloc(ncats + 1, sizeof *ch), res = {0};
	hm_replay it;
	hm_replay_init(&it, s, m, val, ncats);
	for (size_t c = 0; c < ncats; c++)
		if (c < s->ncats && s->cats[c].used)
			change_add(&ch[c], 0, val[c]);
	int64_t reserved = HM_NONE; /* the last known: the chart holds it between events */
	size_t p = 0, peak_i = 0;
	while (hm_replay_next(&it)) {
		if (it.reserved != HM_NONE)
			reserved = it.reserved;
		if (!keep[it.k])
			continue;
		p++;
		if (it.k == s->peak_k)
			peak_i = p;
		for (size_t c = 0; c < ncats; c++)
			if (c < s->ncats && s->cats[c].used)
				change_add(&ch[c], p, val[c]);
		if (reserved != HM_NONE)
			change_add(&res, p, reserved);
	}
	put_changes(f, &res);
	fputs(",\n \"cats\":[", f);
	int first = 1;
	for (size_t c = 0; c < ncats; c++) {
		if (c < s->ncats && s->cats[c].used) {
			fprintf(f, "%s[%zu,", first ? "" : ",\n  ", c);
			put_changes(f, &ch[c]);
			putc(']', f);
			first = 0;
		}
		free(ch[c].v);
	}
	fprintf(f, "],\n \"peak_i\":%zu", peak_i);
	live_json(f, ctx, hf, s, keep);
	*all = all_allocations(ctx, whos, r, hf, s);
	if (all->b64)
		fprintf(f, ",\n \"all\":{\"n\":%zu,\"raw\":%zu%s}", all->n, all->raw, hf->t->snap ? ",\"blocks\":true" : "");
	else
		fputs(",\n \"all\":null", f);
	if (hf->t->snap)
		segview_json(f, hf, s, t0);
	explain_blob(f, r, hf, s);
	putc('}', f);
	free(res.v);
	free(ch);
	free(val);
	free(keep);
}

/* The page's data; each series' every-allocation block into all[] (the caller writes and
 * frees them: they follow the data, in script elements of their own). */
static void data_json(FILE *f, const hm_report *r, const colors *k, all_block *all)
{
	fputs("{\"version\":\"" HM_VERSION "\",\"rules\":", f);
	if (r->rules)
		json_cstr(f, r->rules);
	else
		fputs("null", f);
	fprintf(f, ",\"columns\":%d,\"leak_min_steps\":%d,\n\"categories\":[", HM_HTML_COLUMNS, HM_LEAK_MIN_STEPS);
	for (size_t c = 0; c < r->cats->n; c++) {
		fputs(c ? ",\n {\"name\":" : "\n {\"name\":", f);
		hm_json_str(f, r->cats->str[c], r->cats->len[c], 1);
		fprintf(f, ",\"color\":\"%s\"%s}", k->color[c], k->other[c] ? ",\"other\":true" : "");
	}
	fputs("],\n\"series\":[", f);
	contexts ctx = {0};
	hm_strtab whos = {0};
	size_t n = 0;
	for (size_t i = 0; i < r->nfiles; i++)
		for (size_t si = 0; si < r->files[i]->nseries; si++, n++) {
			fputs(n ? ",\n" : "\n", f);
			series_json(f, &ctx, &whos, &all[n], r, r->files[i], &r->files[i]->series[si]);
		}
	const hm_strtab *lists[] = {&ctx.tab, &whos, &ctx.lines};
	static const char *const names[] = {"contexts", "whos", "frame_lines"};
	for (int l = 0; l < 3; l++) {
		fprintf(f, "],\n\"%s\":[", names[l]);
		for (size_t i = 0; i < lists[l]->n; i++) {
			fputs(i ? ",\n" : "\n", f);
			hm_json_str(f, lists[l]->str[i], lists[l]->len[i], 1);
		}
	}
	fputs("],\n\"stacks\":[", f);
	for (size_t i = 0; i < ctx.stacks.n; i++) {
		const uint32_t *lid = (const uint32_t *)(const void *)ctx.stacks.str[i];
		fputs(i ? ",[" : "[", f);
		for (size_t j = 0; j < ctx.stacks.len[i] / sizeof *lid; j++)
			fprintf(f, "%s%" PRIu32, j ? "," : "", lid[j]);
		putc(']', f);
	}
	fputs("]}", f);
	hm_strtab_free(&ctx.tab);
	hm_strtab_free(&ctx.stacks);
	hm_strtab_free(&ctx.lines);
	free(ctx.of);
	hm_strtab_free(&whos);
}


/* A category's colour in a table; "(before trace)" hatched as on the chart. */
static void swatch(FILE *f, const colors *k, size_t c)
{
	if (c == HM_CAT_BEFORE)
		fputs("<span class=\"sw before\"></span>", f);
	else
		fprintf(f, "<span class=sw style=\"background:%s\"></span>", k->color[c]);
}

static void summary_table(FILE *f, const hm_report *r, const colors *k, const hm_series *s)
{
	size_t *order = hm_xcalloc(s->ncats + 1, sizeof *order);
	size_t n = hm_categories_by_peak(s, order);
	fputs("<table class=summary><thead><tr><th>category</th><th>peak</th><th>at peak</th><th>allocs</th>"
	      "<th>live at end</th></tr></thead><tbody>\n", f);
	for (size_t j = 0; j < n; j++) {
		const hm_catstat *cs = &s->cats[order[j]];
		fputs("<tr><td>", f);
		swatch(f, k, order[j]);
		html_str(f, r->cats->str[order[j]], r->cats->len[order[j]]);
		fputs("</td>", f);
		bytes_cell(f, cs->peak);
		bytes_cell(f, cs->at_peak);
		fprintf(f, "<td class=num>%" PRIu64 "</td>", cs->allocs);
		bytes_cell(f, cs->end);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	free(order);
}

static void live_table(FILE *f, const hm_report *r, const colors *k, const hm_file *hf, const hm_series *s)
{
	size_t top = r->top;
	uint32_t *pos = hm_xcalloc(top + 1, sizeof *pos);
	size_t n = hm_live_at_peak(s, &hf->t->mem, pos, top);
	if (n == 0) {
		fputs(hf->t->snap    ? "<p>No allocation is live at the peak.</p>\n"
		      : s->has_addr ? "<p>Nothing allocated during the trace is live at the peak.</p>\n"
				    : "<p>This trace has no Addr: the allocations live at the peak cannot be known.</p>\n",
		      f);
		free(pos);
		return;
	}
	fprintf(f, "<h3>Largest allocations live at the peak (%zu of %zu)</h3>\n", n < top ? n : top, n);
	fputs("<table class=live><thead><tr><th>bytes</th><th>category</th><th>step</th><th>lifetime</th>"
	      "<th>allocated at</th><th>who</th></tr></thead><tbody>\n", f);
	for (size_t i = 0; i < n && i < top; i++) {
		hm_rowref ref = {hf, s, pos[i]};
		hm_value cat, step, life;
		hm_field_get(&ref, HM_F_STEP, r->cats, &step);
		hm_field_get(&ref, HM_F_LIFETIME, r->cats, &life);
		hm_field_get(&ref, HM_F_CATEGORY, r->cats, &cat);
		int64_t b = hm_mem_bytes(&hf->t->mem, s->ev[pos[i]]), at = hm_mem_ts(&hf->t->mem, s->ev[pos[i]]) - hf->t->first_ts;
		fprintf(f, "<tr data-bytes=%" PRId64 " data-t=%" PRId64 " title=\"click: what is live at the peak\">", b < 0 ? -b : b,
			s->before[pos[i]] == HM_BEFORE_TRACE || s->before[pos[i]] == HM_BEFORE_WINDOW ? -1 : at);
		bytes_cell(f, b < 0 ? -b : b);
		fputs("<td>", f);
		if (s->cat[pos[i]] >= 0)
			swatch(f, k, (size_t)s->cat[pos[i]]);
		if (cat.type == HM_V_STR)
			html_str(f, cat.s, cat.len);
		fputs("</td><td class=num>", f);
		if (step.type == HM_V_INT)
			fprintf(f, "%" PRId64, step.i);
		else
			fputs("-", f);
		fputs("</td><td class=num>", f);
		if (s->before[pos[i]])
			fputs(s->before[pos[i]] == HM_BEFORE_WINDOW ? "before window" : "before trace", f);
		else if (s->partner[pos[i]] <= HM_FREED_AFTER)
			fputs("freed after the window", f);
		else if (life.type == HM_V_NUM)
			fprintf(f, "%.3f ms", life.d / 1000.0);
		else
			fputs("never freed", f);
		int64_t ts = hm_mem_ts(&hf->t->mem, s->ev[pos[i]]);
		int held = s->before[pos[i]] == HM_BEFORE_TRACE || s->before[pos[i]] == HM_BEFORE_WINDOW;
		fprintf(f, "</td><td class=num>%s%.3f ms</td><td class=who>", held ? "freed +" : "+",
			(double)(ts - hf->t->first_ts) / 1e6);
		char who[1024];
		hm_explain_who(&ref, who, sizeof who);
		html_cstr(f, who);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	free(pos);
}

static void series_tables(FILE *f, const hm_report *r, const colors *k, const hm_file *hf, const hm_series *s, size_t idx)
{
	char b1[32], b2[32], b3[32], us[40];
	fprintf(f, "<section class=series-tables data-series=\"%zu\"%s>\n<h2>", idx, idx ? " hidden" : "");
	series_name(f, hf, s);
	hm_fmt_bytes(b1, sizeof b1, s->peak);
	hm_fmt_bytes(b2, sizeof b2, s->end_bytes);
	hm_fmt_us(us, s->peak_ts);
	fprintf(f, "</h2>\n<p class=facts>peak <b>%s</b> at +%.3f ms (ts %s), end %s", b1,
		(double)(s->peak_ts - hf->t->first_ts) / 1e6, us, b2);
	if (s->max_reserved != HM_NONE) {
		hm_fmt_bytes(b3, sizeof b3, s->max_reserved);
		fprintf(f, ", max reserved %s", b3);
	}
	fprintf(f, "; %zu memory events, %" PRIu64 " allocs, %" PRIu64 " frees (%" PRIu64 " matched)", s->n, s->allocs,
		s->frees, s->matched_frees);
	if (s->mismatches)
		fprintf(f, ", <b>%" PRIu64 " mismatches</b> with Total Allocated", s->mismatches);
	fputs("</p>\n", f);
	if (hm_snap_time_note(hf->t))
		fprintf(f, "<p class=note>Times: %s.</p>\n", hm_snap_time_note(hf->t));
	if (hm_snap_no_entries(hf, s))
		fputs("<p class=note>Note: " HM_SNAP_NO_ENTRIES_NOTE ".</p>\n", f);
	summary_table(f, r, k, s);
	live_table(f, r, k, hf, s);
	fputs("</section>\n", f);
}

static void agg_tables(FILE *f, const hm_report *r)
{
	if (!r->naggs)
		return;
	fputs("<section id=aggregations>\n<h2>Aggregations</h2>\n", f);
	for (size_t a = 0; a < r->naggs; a++) {
		const hm_agg *g = &r->aggs[a];
		fputs("<h3>", f);
		html_cstr(f, g->name);
		fprintf(f, " <small>(%zu rows)</small></h3>\n<table class=agg><thead><tr>", g->nrows);
		for (size_t c = 0; c < g->ncols; c++) {
			fputs("<th>", f);
			html_cstr(f, g->cols[c]);
			fputs("</th>", f);
		}
		fputs("</tr></thead><tbody>\n", f);
		for (size_t i = 0; i < g->nrows; i++) {
			fputs("<tr>", f);
			for (size_t c = 0; c < g->ncols; c++) {
				const hm_cell *cell = &g->cells[i * g->ncols + c];
				int bytes = !strcmp(g->cols[c], "bytes") || !strcmp(g->cols[c], "max_bytes");
				switch (cell->type) {
				case HM_V_INT:
					if (bytes)
						bytes_cell(f, cell->i);
					else
						fprintf(f, "<td class=num>%" PRId64 "</td>", cell->i);
					break;
				case HM_V_NUM: fprintf(f, "<td class=num>%.3f</td>", cell->d); break;
				case HM_V_STR:
					fputs("<td>", f);
					html_cstr(f, cell->s);
					fputs("</td>", f);
					break;
				case HM_V_BOOL: fprintf(f, "<td>%s</td>", cell->i ? "true" : "false"); break;
				default: fputs("<td>-</td>", f); break;
				}
			}
			fputs("</tr>\n", f);
		}
		fputs("</tbody></table>\n", f);
	}
	fputs("</section>\n", f);
}

/* Several series: all of them, largest peak first (ties in report order), then the
 * cross-rank rows (ranks.h) of each device kind with two series or more. */
typedef struct series_ref {
	const hm_file *f;
	const hm_series *s;
	size_t pos;
} series_ref;

static int by_peak(const void *a, const void *b)
{
	const series_ref *x = a, *y = b;
	if (x->s->peak != y->s->peak)
		return x->s->peak < y->s->peak ? 1 : -1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static void ranks_tables(FILE *f, const hm_report *r, size_t nseries)
{
	if (nseries < 2)
		return;
	series_ref *all = hm_xcalloc(nseries, sizeof *all);
	size_t n = 0;
	for (size_t i = 0; i < r->nfiles; i++)
		for (size_t si = 0; si < r->files[i]->nseries; si++, n++)
			all[n] = (series_ref){r->files[i], &r->files[i]->series[si], n};
	qsort(all, n, sizeof *all, by_peak);
	fputs("<section id=ranks>\n<h2>All series, largest peak first</h2>\n<table class=agg><thead><tr><th>peak</th>"
	      "<th>rank</th><th>device</th><th>trace</th></tr></thead><tbody>\n", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "<tr class=open data-series=%zu title=\"click: show this series\">", all[i].pos);
		bytes_cell(f, all[i].s->peak);
		if (all[i].f->t->rank != HM_NONE)
			fprintf(f, "<td class=num>%" PRId64 "</td><td>", all[i].f->t->rank);
		else
			fputs("<td>-</td><td>", f);
		html_cstr(f, all[i].s->device);
		fputs("</td><td>", f);
		fputs("<span title=\"", f);
		html_cstr(f, all[i].f->t->path);
		fputs("\">", f);
		html_path(f, all[i].f->t->path);
		fputs("</span></td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	free(all);
	hm_ranks k;
	hm_ranks_compute(r, &k);
	if (k.n)
		fputs("<h2>Across ranks</h2>\n<table class=agg><thead><tr><th>device</th><th>category</th><th>series</th>"
		      "<th>max</th><th>min</th><th>median</th><th>mean</th><th>max/mean</th><th>max at</th></tr></thead>"
		      "<tbody>\n", f);
	for (size_t i = 0; i < k.n; i++) {
		const hm_rankrow *w = &k.rows[i];
		char ratio[32];
		fprintf(f, "<tr data-rank-row=%zu><td>", i);
		html_cstr(f, w->kind);
		fputs("</td><td>", f);
		if (w->cat == HM_RANKS_DEVICE)
			fputs("<b>(device peak)</b>", f);
		else
			html_str(f, r->cats->str[w->cat], r->cats->len[w->cat]);
		fputs("</td>", f);
		json_cell(f, "ranks", i, "series", (int64_t)w->n, 0);
		json_cell(f, "ranks", i, "max_bytes", w->max, 1);
		json_cell(f, "ranks", i, "min_bytes", w->min, 1);
		json_cell(f, "ranks", i, "median_bytes", w->median, 1);
		json_cell(f, "ranks", i, "mean_bytes", w->mean, 1);
		hm_ranks_fmt_milli(ratio, sizeof ratio, w->imbalance);
		fprintf(f, "<td class=num data-k=\"ranks.%zu.imbalance\" data-v=\"%s\">%s</td>", i, *ratio ? ratio : "null",
			*ratio ? ratio : "-");
		fprintf(f, "<td class=open data-series=%zu>", series_index(r, w->max_s));
		series_name(f, w->max_f, w->max_s);
		fputs("</td></tr>\n", f);
	}
	if (k.n)
		fputs("</tbody></table>\n", f);
	fputs("</section>\n", f);
	hm_ranks_free(&k);
}

/* The budgets, first thing under the title: a line per limit, broken ones marked, then
 * each failure the rule file asked for (README "Budgets"). Nothing when there are none. */
static void budget_lines(FILE *f, const hm_report *r)
{
	const hm_verdict *v = r->verdict;
	if (!v || (!v->b->n && !v->b->nfails))
		return;
	fprintf(f, "<section id=budgets>\n<h2>Budgets: %zu of %zu passed%s</h2>\n<ul>\n", v->passed, v->b->n,
		v->b->nfails ? ", the rule file failed the run" : "");
	for (size_t i = 0; i < v->b->n; i++) {
		const hm_budget_result *res = &v->res[i];
		char *line = hm_budget_line(r, i);
		fprintf(f, "<li class=%s>%s: ", res->nbreaks ? "broken" : "passed",
			res->nbreaks ? "over" : res->checked ? "passed" : "passed, but");
		html_cstr(f, line);
		fputs("</li>\n", f);
		free(line);
	}
	for (size_t i = 0; i < v->b->nfails; i++) {
		fputs("<li class=broken>failed by the rule file: ", f);
		html_cstr(f, v->b->fails[i]);
		fputs("</li>\n", f);
	}
	fputs("</ul>\n</section>\n", f);
}

void hm_write_html(FILE *f, const hm_report *r)
{
	colors k;
	colors_init(&k, r);
	size_t nseries = 0;
	for (size_t i = 0; i < r->nfiles; i++)
		nseries += r->files[i]->nseries;
	fputs("<!doctype html>\n<html lang=en>\n<head>\n<meta charset=utf-8>\n"
	      "<meta name=viewport content=\"width=device-width, initial-scale=1\">\n"
	      /* Nothing may come from the network: the report must open the same offline. */
	      "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; style-src 'unsafe-inline'; "
	      "script-src 'unsafe-inline'; img-src data:\">\n"
	      "<link rel=icon href=\"data:,\">\n<title>hmem: ", f);
	html_cstr(f, r->nfiles == 1 ? r->files[0]->t->path : "memory report");
	fputs("</title>\n<style>\n", f);
	fputs(hm_html_style, f);
	fputs("</style>\n</head>\n<body>\n<header>\n<h1>Where did the memory go?</h1>\n<p class=meta>", f);
	fprintf(f, "%zu trace%s, %zu series", r->nfiles, r->nfiles == 1 ? "" : "s", nseries);
	if (r->rules) {
		fputs(", rules <code>", f);
		html_cstr(f, r->rules);
		fputs("</code>", f);
	}
	fputs(", hmem " HM_VERSION "</p>\n</header>\n", f);
	budget_lines(f, r);
	if (nseries == 0) {
		fputs("<main><p>No memory events in these traces: record them with "
		      "<code>torch.profiler.profile(profile_memory=True)</code>.</p></main>\n", f);
	} else {
		fputs("<nav id=controls>\n<label>Series <select id=series></select></label>\n"
		      "<button type=button id=view>Compare all series</button>\n"
		      "<label id=shared-label hidden><input type=checkbox id=shared> same memory scale</label>\n"
		      "<label title=\"start the memory axis at the lowest visible stack instead of 0\">"
		      "<input type=checkbox id=baseline> from baseline</label>\n"
		      "<button type=button id=reset hidden>Reset zoom</button>\n"
		      "</nav>\n<main>\n<section id=single>\n<div id=plotrow><div id=chart></div><aside id=side></aside></div>\n"
		      "<ul id=legend></ul>\n<section id=live-at hidden></section>\n"
		      "<p class=hint id=hint>Hover for the bytes of every category; click for what is live; drag to zoom into a time range, "
		      "double-click to reset; click a legend entry to hide or show a category.</p>\n"
		      "</section>\n<section id=multiples hidden></section>\n<section id=findings hidden></section>\n", f);
		size_t idx = 0;
		for (size_t i = 0; i < r->nfiles; i++)
			for (size_t si = 0; si < r->files[i]->nseries; si++)
				series_tables(f, r, &k, r->files[i], &r->files[i]->series[si], idx++);
		ranks_tables(f, r, nseries);
		agg_tables(f, r);
		fputs("</main>\n", f);
	}
	for (size_t i = 0; i < r->nskipped; i++) {
		fputs("<p class=skipped>Skipped: ", f);
		html_cstr(f, r->skipped[i].why);
		fputs("</p>\n", f);
	}
	fputs("<script id=hmem-data type=\"application/json\">\n", f);
	all_block *all = hm_xcalloc(nseries + 1, sizeof *all);
	data_json(f, r, &k, all);
	fputs("\n</script>\n", f);
	for (size_t i = 0; i < nseries; i++) {
		if (all[i].b64)
			fprintf(f, "<script type=application/octet-stream id=hmem-all-%zu>%s</script>\n", i, all[i].b64);
		free(all[i].b64);
	}
	free(all);
	fputs("<script>\n", f);
	fputs(hm_html_script, f);
	fputs("</script>\n</body>\n</html>\n", f);
	colors_free(&k);
}
