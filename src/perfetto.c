#define _GNU_SOURCE /* fopencookie: a FILE that deflates, so every writer can print into gzip */
#include "perfetto.h"
#include "input.h"
#include "timeline.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <zlib.h>

#ifndef HM_VERSION
#define HM_VERSION "0.0.0"
#endif

/* The pid of a series (of its first memory event; a series has at least one), as its
 * thread key holds it: "pid\x1ftid", split by its length since a pid written
 * "a\u0000b" holds a NUL (issue 11). */
static const char *pid_of(const hm_file *hf, const hm_series *s, size_t *n)
{
	uint32_t id = hm_mem_thread(&hf->t->mem, s->ev[0]);
	const char *key = hf->t->threads.str[id];
	*n = hm_thread_split(key, hf->t->threads.len[id], NULL, NULL);
	return key;
}

/* The pid as the trace wrote it (a canonical integer, else a string), so the counter
 * tracks land in the process that made the allocations. */
static void put_pid(FILE *f, const hm_file *hf, const hm_series *s)
{
	size_t n;
	const char *key = pid_of(hf, s, &n);
	int num = n > 0 && n < 20;
	for (size_t i = key[0] == '-'; num && i < n; i++)
		num = key[i] >= '0' && key[i] <= '9';
	if (num && (key[0] != '-' || n > 1))
		fwrite(key, 1, n, f);
	else
		hm_json_str(f, key, n, 0);
}

/* What each counter event of a series starts with, up to its "ts", and the category keys
 * of its args: JSON-escaped once per series, not once per event (a 1 GB trace has millions
 * of events). Counter names are "hmem cuda:0", with " (FILE)" when several traces share
 * one output and might share a pid. */
typedef struct series_text {
	char *cats, *alloc, *res;
	char **keys; /* category id -> "\"name\":", NULL when the series does not use it */
	size_t ncats;
} series_text;

/* A FILE writing into a growing string; like the hm_x* allocators, it cannot fail. */
static FILE *memstream(char **buf, size_t *len)
{
	FILE *m = open_memstream(buf, len);
	if (!m) {
		fprintf(stderr, "hmem: out of memory\n");
		exit(HM_EXIT_INTERNAL);
	}
	return m;
}

static char *event_prefix(const hm_file *hf, const hm_series *s, const char *name, const char *suffix)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = memstream(&buf, &len);
	fprintf(m, "{\"ph\":\"C\",\"cat\":\"hmem\",\"name\":");
	char full[1200];
	snprintf(full, sizeof full, "hmem %s%s%s", s->device, suffix, name);
	hm_json_str(m, full, strlen(full), 0);
	fputs(",\"pid\":", m);
	put_pid(m, hf, s);
	fputs(",\"ts\":", m);
	fclose(m);
	return buf;
}

static void series_text_init(series_text *x, const hm_report *r, const hm_file *hf, const hm_series *s)
{
	char suffix[520] = "";
	if (r->nfiles > 1) {
		const char *base = strrchr(hf->t->path, '/');
		snprintf(suffix, sizeof suffix, " (%.500s)", base ? base + 1 : hf->t->path);
	}
	x->cats = event_prefix(hf, s, "", suffix);
	x->alloc = event_prefix(hf, s, " allocated", suffix);
	x->res = event_prefix(hf, s, " reserved", suffix);
	x->ncats = s->ncats;
	x->keys = hm_xcalloc(s->ncats + 1, sizeof *x->keys);
	for (size_t c = 0; c < s->ncats; c++) {
		if (!s->cats[c].used)
			continue;
		size_t len = 0;
		FILE *m = memstream(&x->keys[c], &len);
		hm_json_str(m, r->cats->str[c], r->cats->len[c], 0);
		putc(':', m);
		fclose(m);
	}
}

static void series_text_free(series_text *x)
{
	for (size_t c = 0; c < x->ncats; c++)
		free(x->keys[c]);
	free(x->keys);
	free(x->cats), free(x->alloc), free(x->res);
}

static void put_i64(FILE *f, int64_t v)
{
	char b[24], *p = b + sizeof b;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	*--p = 0;
	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	fputs(p, f);
}

static void event_head(FILE *f, const char *prefix, const char *ts, int *first)
{
	fputs(*first ? "\n" : ",\n", f);
	*first = 0;
	fputs(prefix, f);
	fputs(ts, f);
	fputs(",\"args\":{", f);
}

/* The state after one event (or before the first): one event per counter. */
static void emit_state(FILE *f, const series_text *x, int64_t ts, const int64_t *val, int64_t total,
		       int64_t reserved, int *first)
{
	char b[40];
	hm_fmt_us(b, ts);
	event_head(f, x->cats, b, first);
	int sep = 0;
	for (size_t c = 0; c < x->ncats; c++) {
		if (!x->keys[c])
			continue;
		if (sep++)
			putc(',', f);
		fputs(x->keys[c], f);
		put_i64(f, val[c]);
	}
	fputs("}}", f);
	event_head(f, x->alloc, b, first);
	fputs("\"bytes\":", f);
	put_i64(f, total);
	fputs("}}", f);
	if (reserved != HM_NONE) {
		event_head(f, x->res, b, first);
		fputs("\"bytes\":", f);
		put_i64(f, reserved);
		fputs("}}", f);
	}
}

/* Every series of one file: the state at the trace's first event (when it comes before the
 * first memory event), then after each memory event, as the --timeline rows. */
static void file_counters(FILE *f, const hm_report *r, const hm_file *hf, int *first)
{
	int64_t *val = hm_xcalloc(r->cats->n + 1, sizeof *val);
	for (size_t si = 0; si < hf->nseries; si++) {
		const hm_series *s = &hf->series[si];
		if (s->n == 0)
			continue;
		series_text x;
		series_text_init(&x, r, hf, s);
		hm_replay it;
		hm_replay_init(&it, s, &hf->t->mem, val, r->cats->n);
		if (hf->t->first_ts != HM_NONE && hf->t->first_ts < it.ts)
			emit_state(f, &x, hf->t->first_ts, it.cat_values, it.total, HM_NONE, first);
		while (hm_replay_next(&it))
			emit_state(f, &x, it.ts, it.cat_values, it.total, it.reserved, first);
		series_text_free(&x);
	}
	free(val);
}

void hm_write_perfetto(FILE *f, const hm_report *r)
{
	fputs("{\"traceEvents\":[", f);
	int first = 1;
	for (size_t i = 0; i < r->nfiles; i++) {
		const hm_file *hf = r->files[i];
		/* Name each process once, so the tracks read "hmem: trace.json" in the UI. */
		for (size_t si = 0; si < hf->nseries; si++) {
			const hm_series *s = &hf->series[si];
			if (s->n == 0)
				continue;
			size_t n, m;
			const char *pid = pid_of(hf, s, &n);
			int seen = 0;
			for (size_t sj = 0; sj < si && !seen; sj++)
				if (hf->series[sj].n) {
					const char *other = pid_of(hf, &hf->series[sj], &m);
					seen = m == n && memcmp(other, pid, n) == 0;
				}
			if (seen)
				continue;
			fputs(first ? "\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" : ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":", f);
			first = 0;
			put_pid(f, hf, s);
			fputs(",\"args\":{\"name\":", f);
			char label[600];
			snprintf(label, sizeof label, "hmem: %.590s", hf->t->path);
			hm_json_str(f, label, strlen(label), 0);
			fputs("}}", f);
		}
		file_counters(f, r, hf, &first);
	}
	fputs("\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"generator\":\"hmem " HM_VERSION "\",\"rules\":", f);
	if (r->rules)
		hm_json_str(f, r->rules, strlen(r->rules), 0);
	else
		fputs("null", f);
	fputs("}}\n", f);
}

/* gzip output through a FILE: deflate into the real output as the writer prints. */
typedef struct gz_sink {
	FILE *out;
	z_stream z;
	int failed;
} gz_sink;

static int gz_pump(gz_sink *g, int flush)
{
	unsigned char buf[1 << 16];
	int rc;
	do {
		g->z.next_out = buf;
		g->z.avail_out = sizeof buf;
		rc = deflate(&g->z, flush);
		if (rc == Z_STREAM_ERROR)
			return -1;
		size_t n = sizeof buf - g->z.avail_out;
		if (n && fwrite(buf, 1, n, g->out) != n)
			return -1;
	} while (g->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
	return 0;
}

static ssize_t gz_write(void *cookie, const char *p, size_t n)
{
	gz_sink *g = cookie;
	g->z.next_in = (unsigned char *)(uintptr_t)p;
	g->z.avail_in = (uInt)n;
	if (g->failed || gz_pump(g, Z_NO_FLUSH) != 0)
		return g->failed = 1, -1;
	return (ssize_t)n;
}

static int gz_close(void *cookie)
{
	gz_sink *g = cookie;
	g->z.next_in = NULL;
	g->z.avail_in = 0;
	if (!g->failed && gz_pump(g, Z_FINISH) != 0)
		g->failed = 1;
	deflateEnd(&g->z);
	return g->failed ? -1 : 0;
}

static FILE *gz_open(gz_sink *g, FILE *out)
{
	memset(g, 0, sizeof *g);
	g->out = out;
	/* Level 1: compressing dominates the copy of a big trace; it halves the time of the
	 * default level for about 1.4 times the size (1 GB trace: 13 s, 121 MB vs 27 s, 88 MB). */
	if (deflateInit2(&g->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	cookie_io_functions_t io = {NULL, gz_write, NULL, gz_close};
	FILE *f = fopencookie(g, "w", io);
	if (!f)
		deflateEnd(&g->z);
	return f;
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

/* Copy the trace from src to f, inserting the counters just after the '[' of its events
 * array (at decompressed offset t->events_at) and a comma after them when the array
 * already held events; every original byte is written, in order. */
static int copy_annotated(FILE *f, hm_src *src, const hm_report *r, char *err, size_t errsz)
{
	const hm_file *hf = r->files[0];
	const char *path = hf->t->path;
	uint64_t at = hf->t->events_at, off = 0;
	size_t cap = 1 << 20, wsn = 0, wscap = 0;
	char *buf = hm_xrealloc(NULL, cap), *ws = NULL, last = 0;
	enum { BEFORE, AFTER_INSERT, REST } state = at ? BEFORE : REST; /* no array: no memory events either */
	int wrote = 0, rc = 0;
	long n;
	while ((n = hm_src_read(src, buf, cap)) > 0) {
		size_t i = 0, len = (size_t)n;
		if (state == BEFORE) {
			size_t take = at - off < len ? (size_t)(at - off) : len;
			fwrite(buf, 1, take, f);
			if (take)
				last = buf[take - 1];
			off += take;
			i = take;
			if (off == at) {
				if (last != '[') {
					snprintf(err, errsz, "%s: cannot annotate: the byte at offset %" PRIu64 " is no longer the '[' "
							     "of the events array (did the file change since it was read?)", path, at - 1);
					rc = HM_EXIT_IO;
					break;
				}
				int first = 1;
				file_counters(f, r, hf, &first);
				wrote = !first;
				state = AFTER_INSERT;
			}
		}
		if (state == AFTER_INSERT) {
			size_t j = i;
			while (j < len && (buf[j] == ' ' || buf[j] == '\t' || buf[j] == '\n' || buf[j] == '\r'))
				j++;
			hm_grow(&ws, &wscap, wsn + (j - i) + 1, 1);
			memcpy(ws + wsn, buf + i, j - i);
			wsn += j - i;
			i = j;
			if (j < len) {
				if (wrote && buf[j] != ']')
					putc(',', f);
				fwrite(ws, 1, wsn, f);
				state = REST;
			}
		}
		if (state == REST)
			fwrite(buf + i, 1, len - i, f);
	}
	if (rc == 0 && n < 0) {
		snprintf(err, errsz, "%s: cannot annotate: re-reading the trace failed: %s", path, hm_src_error(src));
		rc = HM_EXIT_IO;
	} else if (rc == 0 && state != REST) {
		snprintf(err, errsz, "%s: cannot annotate: the trace ended at byte %" PRIu64 ", before the events array it had "
				     "when it was read (a pipe cannot be read twice; did the file change?)", path, off);
		rc = HM_EXIT_IO;
	}
	free(buf);
	free(ws);
	return rc;
}

int hm_write_annotated(FILE *f, const hm_report *r, const char *name, char *err, size_t errsz)
{
	if (r->nfiles != 1) {
		snprintf(err, errsz, "--annotate: %s", r->nfiles ? "needs exactly one trace" : "the trace was not read: nothing to annotate");
		return r->nfiles ? HM_EXIT_USAGE : HM_EXIT_INPUT;
	}
	const char *path = r->files[0]->t->path;
	if (r->files[0]->t->cut_at) {
		/* A copy of a cut-off trace would be cut off too: no valid JSON to open. */
		snprintf(err, errsz, "--annotate: %s is cut off at byte %llu; an annotated copy would be cut off too "
			 "(--perfetto writes the counters alone)", path, (unsigned long long)r->files[0]->t->cut_at);
		return HM_EXIT_INPUT;
	}
	hm_src *src = hm_src_open(path, err, errsz);
	if (!src)
		return HM_EXIT_IO;
	gz_sink g;
	FILE *out = f;
	if (ends_with(name, ".gz") && !(out = gz_open(&g, f))) {
		snprintf(err, errsz, "%s: cannot start gzip compression", name);
		hm_src_close(src);
		return HM_EXIT_INTERNAL;
	}
	int rc = copy_annotated(out, src, r, err, errsz);
	hm_src_close(src);
	if (out != f && fclose(out) != 0 && rc == 0) {
		snprintf(err, errsz, "%s: write failed while compressing", name);
		rc = HM_EXIT_IO;
	}
	return rc;
}
