/* libFuzzer target over the whole path a trace file takes (issue 6, "Fuzzing"): the
 * input is a file's bytes (plain JSON or gzip) read by hm_trace_read, then hm_analyze,
 * classification, hm_timeline, the field getters and every writer. No Lua: categories
 * are assigned here as hm_script_classify does with a rule that returns one name
 * (category 1 for every allocation and unpaired free, inherited by matched frees).
 *
 * Besides "no sanitizer report", it checks:
 * - reads split anywhere give the same result: hm_src_read is wrapped (-Wl,--wrap) to
 *   return at most a few bytes at a time (1 to 3 for a quarter of the inputs), and the
 *   outcome (the columns, or the error message) must equal hm_trace_parse over the whole
 *   text in memory (for gzip, the text zlib gets from all members; when zlib finds the gzip
 *   damaged, hmem must fail too);
 * - errors read "path:offset: what";
 * - the timeline adds up (device total = sum of categories at the end and at the peak);
 * - --json output is valid JSON in valid UTF-8, and the CSV writers write one record
 *   per memory event with a fixed number of fields (RFC 4180 quoting).
 *
 * Linked with tests/fuzz/replay.c instead of libFuzzer, it runs files given on the
 * command line (the regression replay of tests/run). */
#define _GNU_SOURCE
#include "analyze.h"
#include "fields.h"
#include "fuzz_report.h"
#include "input.h"
#include "output.h"
#include "timeline.h"
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
long __wrap_hm_src_read(hm_src *s, char *buf, size_t cap);
long __real_hm_src_read(hm_src *s, char *buf, size_t cap);

static int g_fd = -1;
static char g_path[64];
static size_t g_chunk = SIZE_MAX;

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_pipeline: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

/* The reader must not depend on where reads end: hand it g_chunk bytes at a time. */
long __wrap_hm_src_read(hm_src *s, char *buf, size_t cap)
{
	return __real_hm_src_read(s, buf, cap < g_chunk ? cap : g_chunk);
}

/* The input lives in a memory file, so the real open/read path runs without disk I/O. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	g_fd = memfd_create("hmem-fuzz", 0);
	if (g_fd < 0)
		die("memfd_create failed", NULL);
	snprintf(g_path, sizeof g_path, "/proc/self/fd/%d", g_fd);
	return 0;
}

/* ---- oracles ---- */

/* "path:offset: what" with offset at most the decompressed size when it is known. */
static void check_error(const char *err, const char *path, size_t limit)
{
	size_t n = strlen(path);
	if (strncmp(err, path, n) != 0 || err[n] != ':')
		die("error without the path", err);
	/* I/O errors ("path: cannot open: ...") carry no offset; the fuzzer never makes those. */
	char *end;
	unsigned long long off = strtoull(err + n + 1, &end, 10);
	if (end == err + n + 1 || strncmp(end, ": ", 2) != 0 || end[2] == 0 || off > limit)
		die("error without a valid offset", err);
}

static int same_trace(const hm_trace *a, const hm_trace *b)
{
	const hm_mem *x = &a->mem, *y = &b->mem;
	if (a->events != b->events || a->oom_events != b->oom_events || a->first_ts != b->first_ts ||
	    a->has_trace_events != b->has_trace_events || a->events_at != b->events_at || a->rank != b->rank ||
	    x->n != y->n || a->sl.n != b->sl.n || a->names.n != b->names.n || a->threads.n != b->threads.n)
		return 0;
	for (size_t i = 0; i < x->n; i++)
		if (hm_mem_ts(x, i) != hm_mem_ts(y, i) || hm_mem_bytes(x, i) != hm_mem_bytes(y, i) ||
		    hm_mem_has_addr(x, i) != hm_mem_has_addr(y, i) || (hm_mem_has_addr(x, i) && x->addr[i] != y->addr[i]) || hm_mem_total_alloc(x, i) != hm_mem_total_alloc(y, i) ||
		    hm_mem_total_res(x, i) != hm_mem_total_res(y, i) || hm_mem_ev_idx(x, i) != hm_mem_ev_idx(y, i) || x->dev_type[i] != y->dev_type[i] ||
		    x->dev_id[i] != y->dev_id[i] || hm_mem_thread(x, i) != hm_mem_thread(y, i))
			return 0;
	const hm_slices *o = &a->sl, *p = &b->sl;
	for (size_t i = 0; i < o->n; i++)
		if (o->ts[i] != p->ts[i] || o->dur[i] != p->dur[i] || o->name[i] != p->name[i] || o->cat[i] != p->cat[i] ||
		    o->thread[i] != p->thread[i] || o->kind[i] != p->kind[i])
			return 0;
	/* Interning is in file order, so equal ids mean equal strings only if the tables agree. */
	const hm_strtab *s[2][2] = {{&a->names, &b->names}, {&a->threads, &b->threads}};
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < s[k][0]->n; i++)
			if (s[k][0]->len[i] != s[k][1]->len[i] || memcmp(s[k][0]->str[i], s[k][1]->str[i], s[k][0]->len[i]) != 0)
				return 0;
	return 1;
}

/* The text of a gzip file, its members in turn as hmem reads them; NULL when zlib finds it
 * damaged (or it inflates past 64 MiB, which is not worth comparing). */
static char *gunzip(const uint8_t *data, size_t size, size_t *len)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		die("inflateInit2 failed", NULL);
	size_t cap = 1 << 16, n = 0;
	char *out = malloc(cap);
	z.next_in = (Bytef *)(uintptr_t)data;
	z.avail_in = (uInt)size;
	for (;;) {
		if (n == cap) {
			if (cap >= (64u << 20))
				break;
			out = realloc(out, cap *= 2);
		}
		z.next_out = (Bytef *)out + n;
		z.avail_out = (uInt)(cap - n);
		int rc = inflate(&z, Z_NO_FLUSH);
		n = cap - z.avail_out;
		if (rc == Z_STREAM_END) {
			if (z.avail_in == 0) {
				inflateEnd(&z);
				*len = n;
				return out;
			}
			if (z.avail_in < 2 || z.next_in[0] != 0x1f || z.next_in[1] != 0x8b)
				break;
			inflateReset(&z);
		} else if (rc != Z_OK && !(rc == Z_BUF_ERROR && z.avail_out == 0)) {
			break;
		}
	}
	inflateEnd(&z);
	free(out);
	return NULL;
}

/* A strict JSON (RFC 8259) and UTF-8 checker: returns the end of the value at p, or NULL. */
static const char *jv(const char *p, const char *e, int depth);

static const char *jws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++;
	return p;
}

static const char *jstr(const char *p, const char *e)
{
	if (p >= e || *p++ != '"')
		return NULL;
	while (p < e) {
		unsigned char c = (unsigned char)*p;
		if (c == '"')
			return p + 1;
		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			if (++p >= e)
				return NULL;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (p + i >= e || !strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
						return NULL;
				p += 5;
			} else if (strchr("\"\\/bfnrt", *p) && *p) {
				p++;
			} else {
				return NULL;
			}
			continue;
		}
		if (c < 0x80) {
			p++;
			continue;
		}
		/* Well-formed UTF-8 (Unicode table 3-7): no overlongs, no surrogates, <= U+10FFFF. */
		const unsigned char *u = (const unsigned char *)p;
		int len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		if (!len || e - p < len)
			return NULL;
		unsigned lo = 0x80, hi = 0xbf;
		if (c == 0xe0) lo = 0xa0;
		if (c == 0xed) hi = 0x9f;
		if (c == 0xf0) lo = 0x90;
		if (c == 0xf4) hi = 0x8f;
		if (u[1] < lo || u[1] > hi)
			return NULL;
		for (int i = 2; i < len; i++)
			if ((u[i] & 0xc0) != 0x80)
				return NULL;
		p += len;
	}
	return NULL;
}

static const char *jnum(const char *p, const char *e)
{
	const char *s = p;
	if (p < e && *p == '-')
		p++;
	if (p < e && *p == '0')
		p++;
	else if (p < e && *p >= '1' && *p <= '9')
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	else
		return NULL;
	if (p < e && *p == '.') {
		const char *d = ++p;
		while (p < e && *p >= '0' && *p <= '9')
			p++;
		if (p == d)
			return NULL;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			p++;
		const char *d = p;
		while (p < e && *p >= '0' && *p <= '9')
			p++;
		if (p == d)
			return NULL;
	}
	return p > s ? p : NULL;
}

static const char *jv(const char *p, const char *e, int depth)
{
	p = jws(p, e);
	if (p >= e || depth > 64)
		return NULL;
	if (*p == '"')
		return jstr(p, e);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		p = jws(p + 1, e);
		if (p < e && *p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				p = jstr(jws(p, e), e);
				if (!p || (p = jws(p, e)) >= e || *p++ != ':')
					return NULL;
			}
			p = jv(p, e, depth + 1);
			if (!p || (p = jws(p, e)) >= e)
				return NULL;
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	static const char *const lit[] = {"true", "false", "null"};
	for (int i = 0; i < 3; i++) {
		size_t n = strlen(lit[i]);
		if ((size_t)(e - p) >= n && memcmp(p, lit[i], n) == 0)
			return p + n;
	}
	return jnum(p, e);
}

static void check_json(const char *s, size_t n)
{
	const char *p = jv(s, s + n, 0);
	if (!p || jws(p, s + n) != s + n)
		die("--json output is not valid JSON", s);
}

/* RFC 4180 records: every record has nfields fields; returns the number of records. */
static size_t csv_records(const char *s, size_t n, size_t nfields, const char *what)
{
	size_t recs = 0, fields = 1;
	const char *p = s, *e = s + n;
	while (p < e) {
		if (*p == '"') {
			for (p++;; p++) {
				if (p >= e)
					die(what, "unterminated quoted field");
				if (*p == '"') {
					if (p + 1 < e && p[1] == '"')
						p++;
					else
						break;
				}
			}
			p++;
			if (p < e && *p != ',' && *p != '\n')
				die(what, "a quoted field followed by text");
			continue;
		}
		if (*p == ',') {
			fields++;
		} else if (*p == '\n') {
			if (fields != nfields)
				die(what, "a record with the wrong number of fields");
			recs++, fields = 1;
		} else if (*p == '\r') {
			die(what, "a bare CR outside quotes");
		}
		p++;
	}
	if (n && e[-1] != '\n')
		die(what, "the last record is not ended");
	return recs;
}

/* ---- the pipeline ---- */

static void classify(hm_file *f)
{
	const hm_mem *m = &f->t->mem;
	for (size_t si = 0; si < f->nseries; si++) {
		hm_series *x = &f->series[si];
		hm_stage_enter(x, HM_STAGE_CLASSIFIED);
		for (size_t k = 0; k < x->n; k++) {
			int64_t b = hm_mem_bytes(m, x->ev[k]);
			x->cat[k] = b == 0 ? -1 : b < 0 && x->partner[k] >= 0 ? x->cat[x->partner[k]] : 1;
		}
	}
}

static void check_timeline(const hm_series *s, size_t ncats)
{
	int64_t end = 0, at_peak = 0;
	for (size_t c = 0; c < ncats; c++)
		end += s->cats[c].end, at_peak += s->cats[c].at_peak;
	if (end != s->end_bytes || at_peak != s->peak)
		die("categories do not add up to the device total", s->device);
	if (s->allocs + s->frees + s->zero_events != s->n || s->matched_frees > s->frees)
		die("event counts do not add up", s->device);
}

static void fields_of_every_row(const hm_file *f, const hm_strtab *cats)
{
	int32_t ctx[64];
	for (size_t si = 0; si < f->nseries; si++) {
		const hm_series *s = &f->series[si];
		for (size_t k = 0; k < s->n; k++) {
			hm_rowref r = {f, s, (uint32_t)k};
			for (int fld = 1; fld < HM_F_COUNT; fld++) {
				hm_value v;
				hm_field_get(&r, fld, cats, &v);
				if (v.type == HM_V_LIST) {
					size_t n = hm_field_list(&r, fld, ctx, 64);
					for (size_t i = 0; i < n && i < 64; i++)
						if (ctx[i] < 0 || (size_t)ctx[i] >= f->t->sl.n)
							die("a context slice out of range", hm_field_name(fld));
				} else if (v.type == HM_V_STR && v.len && !v.s) {
					die("a string field without text", hm_field_name(fld));
				}
			}
		}
	}
}

static void write_all(hm_file *f, const hm_strtab *cats)
{
	hm_report rep = fuzz_report(&f, cats, "fuzz");
	size_t nmem = 0;
	for (size_t si = 0; si < f->nseries; si++)
		nmem += f->series[si].n;

	char *buf;
	size_t n;
	FILE *out = open_memstream(&buf, &n);
	hm_write_json(out, &rep);
	fclose(out);
	check_json(buf, n);
	free(buf);

	out = open_memstream(&buf, &n);
	hm_write_events(out, &rep);
	fclose(out);
	if (csv_records(buf, n, 15, "events CSV") != nmem + 1)
		die("events CSV", "not one record per memory event");
	free(buf);

	out = open_memstream(&buf, &n);
	hm_write_timeline(out, &rep);
	fclose(out);
	if (csv_records(buf, n, 8 + cats->n, "timeline CSV") != nmem + 1)
		die("timeline CSV", "not one record per memory event");
	free(buf);

	out = open_memstream(&buf, &n);
	hm_write_summary(out, &rep);
	fclose(out);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (g_fd < 0)
		LLVMFuzzerInitialize(NULL, NULL);
	if (ftruncate(g_fd, 0) != 0 || (size && pwrite(g_fd, data, size, 0) != (ssize_t)size))
		die("cannot write the memory file", NULL);
	/* Read sizes from 1 to 509 bytes, varying with the input; 1 to 3 for a quarter of them
	 * (where a read ends inside a BOM, an escape or a number). */
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < size && i < 64; i++)
		h = (h ^ data[i]) * 16777619u;
	h ^= (uint32_t)size;
	g_chunk = h % 4 == 0 ? 1 + (h >> 2) % 3 : 1 + (h >> 2) % 509;

	char err[2048] = "", ref_err[2048] = "";
	int code = 0;
	hm_trace *t = hm_trace_read(g_path, err, sizeof err, &code);
	int gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
	if (!t) {
		if (code != HM_EXIT_INPUT)
			die("a bad trace did not exit with 4", err);
		check_error(err, g_path, gzip ? SIZE_MAX : size);
	}
	size_t tlen = size;
	char *text = gzip ? gunzip(data, size, &tlen) : (char *)(uintptr_t)data;
	if (gzip && !text && t)
		die("zlib finds this gzip damaged, but hmem loaded it", NULL);
	if (text) {
		hm_trace *ref = hm_trace_parse(g_path, text, tlen, ref_err, sizeof ref_err);
		if (!t != !ref || (!t && strcmp(err, ref_err) != 0) || (t && !same_trace(t, ref))) {
			fprintf(stderr, "read in %zu-byte pieces: %s\nin memory: %s\n", g_chunk, t ? "loaded" : err,
				ref ? "loaded" : ref_err);
			die("the result depends on how the input is split", NULL);
		}
		hm_trace_free(ref);
		if (gzip)
			free(text);
	}
	if (!t)
		return 0;

	hm_file *f = hm_analyze(t);
	hm_strtab cats = {0};
	hm_strtab_intern(&cats, "(before trace)", 14);
	hm_strtab_intern(&cats, "c, \"1\"", 6); /* a name CSV must quote */
	classify(f);
	for (size_t si = 0; si < f->nseries; si++) {
		hm_timeline(&f->series[si], &t->mem, cats.n);
		check_timeline(&f->series[si], cats.n);
		uint32_t pos[8];
		hm_live_at_peak(&f->series[si], &t->mem, pos, 8);
		if (f->series[si].n)
			hm_live_at(&f->series[si], &t->mem, hm_mem_ts(&t->mem, f->series[si].ev[0]), pos, 8);
	}
	fields_of_every_row(f, &cats);
	write_all(f, &cats);
	hm_strtab_free(&cats);
	hm_file_free(f);
	return 0;
}
