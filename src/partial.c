/* The SQLite partial and --db (partial.h). */
#include "partial.h"
#include "explain.h"
#include "trace.h"

#include <stdarg.h>

#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#ifndef HM_VERSION
#define HM_VERSION "0.0.0"
#endif

/* The layout of the blobs: raw columns of this build's structs, so a partial is read only
 * by a build with the same byte order and struct sizes. */
static const char *abi(void)
{
	static char s[64];
	uint16_t one = 1;
	snprintf(s, sizeof s, "%s seg%zu oom%zu frame%zu", *(const uint8_t *)&one ? "le" : "be", sizeof(hm_snapseg),
		 sizeof(hm_snapoom), sizeof(hm_frame));
	return s;
}

static const char schema[] =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
	"CREATE TABLE options(pos INTEGER PRIMARY KEY, name TEXT, value TEXT);"
	"CREATE TABLE plan(idx INTEGER PRIMARY KEY, path TEXT, canonical TEXT, bytes INTEGER, shard INTEGER);"
	"CREATE TABLE files(idx INTEGER PRIMARY KEY, path TEXT, canonical TEXT, rank INTEGER, status TEXT,"
	" events INTEGER, memory_events INTEGER, host_slices INTEGER, oom_events INTEGER, cut_at INTEGER,"
	" lost_bytes INTEGER, why TEXT, first_ts_ns INTEGER);"
	"CREATE TABLE categories(id INTEGER PRIMARY KEY, name TEXT);"
	"CREATE TABLE file_categories(idx INTEGER, pos INTEGER, category TEXT, PRIMARY KEY(idx, pos));"
	"CREATE TABLE series(idx INTEGER, rank INTEGER, device TEXT, events INTEGER, allocs INTEGER, frees INTEGER,"
	" start_bytes INTEGER, peak_bytes INTEGER, peak_ts_ns INTEGER, end_bytes INTEGER, max_reserved INTEGER,"
	" steps INTEGER, ooms INTEGER, leak TEXT, PRIMARY KEY(idx, device));"
	"CREATE TABLE series_categories(idx INTEGER, device TEXT, category TEXT, start_bytes INTEGER,"
	" peak_bytes INTEGER, at_peak_bytes INTEGER, end_bytes INTEGER, allocs INTEGER, alloc_bytes INTEGER,"
	" PRIMARY KEY(idx, device, category));"
	"CREATE TABLE aggregations(name TEXT, row INTEGER, col INTEGER, column TEXT, is_key INTEGER, value,"
	" PRIMARY KEY(name, row, col));"
	"CREATE TABLE store(idx INTEGER, name TEXT, data BLOB, PRIMARY KEY(idx, name));";

typedef struct db {
	sqlite3 *h;
	int rc;
	char *err;
	size_t errsz;
} db;

static int fail(db *d, const char *what)
{
	if (d->rc == 0)
		snprintf(d->err, d->errsz, "%s: %s", what, d->h ? sqlite3_errmsg(d->h) : "out of memory");
	d->rc = HM_EXIT_IO;
	return -1;
}

static void exec(db *d, const char *sql)
{
	if (d->rc == 0 && sqlite3_exec(d->h, sql, NULL, NULL, NULL) != SQLITE_OK)
		fail(d, "sqlite");
}

static sqlite3_stmt *prep(db *d, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (d->rc == 0 && sqlite3_prepare_v2(d->h, sql, -1, &st, NULL) != SQLITE_OK)
		fail(d, "sqlite");
	return st;
}

/* Binds "i" int64 (HM_NONE: NULL), "t" text (NULL: NULL), "b" blob (ptr, len), then steps and resets. */
static void row(db *d, sqlite3_stmt *st, const char *types, ...)
{
	if (d->rc || !st)
		return;
	va_list ap;
	va_start(ap, types);
	for (int i = 1; types[i - 1]; i++) {
		if (types[i - 1] == 'i') {
			int64_t v = va_arg(ap, int64_t);
			if (v == HM_NONE)
				sqlite3_bind_null(st, i);
			else
				sqlite3_bind_int64(st, i, v);
		} else if (types[i - 1] == 't') {
			const char *s = va_arg(ap, const char *);
			sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
		} else if (types[i - 1] == 'T') { /* text with a length */
			const char *s = va_arg(ap, const char *);
			int n = va_arg(ap, int);
			sqlite3_bind_text(st, i, s, n, SQLITE_STATIC);
		} else if (types[i - 1] == 'd') {
			sqlite3_bind_double(st, i, va_arg(ap, double));
		} else {
			const void *p = va_arg(ap, const void *);
			size_t n = va_arg(ap, size_t);
			sqlite3_bind_blob64(st, i, n ? p : "", n, SQLITE_STATIC);
		}
	}
	va_end(ap);
	if (sqlite3_step(st) != SQLITE_DONE)
		fail(d, "sqlite");
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

#define I(x) ((int64_t)(x))

/* A strtab as one blob: each string's length (uint32) then its bytes. */
static void put_strtab(db *d, sqlite3_stmt *st, int64_t idx, const char *name, const hm_strtab *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		n += 4 + t->len[i];
	char *b = hm_xcalloc(n + 1, 1), *p = b;
	for (size_t i = 0; i < t->n; i++) {
		memcpy(p, &t->len[i], 4);
		memcpy(p + 4, t->str[i], t->len[i]);
		p += 4 + t->len[i];
	}
	row(d, st, "itb", idx, name, b, n);
	free(b);
}

/* A packed column as the plain int64 column it stands for (the partial's format). */
static void put_pack(db *d, sqlite3_stmt *st, int64_t idx, const char *name, const hm_pack *p)
{
	int64_t *v = hm_xrealloc(NULL, (p->n + 1) * sizeof *v);
	hm_pack_copy(p, v);
	row(d, st, "itb", idx, name, (const void *)v, p->n * sizeof *v);
	free(v);
}

/* Every column of a trace's store, and the category of each memory event. The analysis
 * has dropped the store's device columns (each event's device is its series'): they are
 * written back from the series, so a merge reads the trace as it was read. */
static void put_store(db *d, sqlite3_stmt *st, int64_t idx, const hm_file *f, const int32_t *catev)
{
	const hm_trace *t = f->t;
	const hm_mem *m = &t->mem;
	size_t n = m->n;
	int32_t *dtype = hm_xcalloc(n + 1, sizeof *dtype), *did = hm_xcalloc(n + 1, sizeof *did);
	for (size_t k = 0; k < f->nseries; k++) /* those a window cut out too (analyze.h nall) */
		for (size_t j = 0; j < (f->series[k].based ? f->series[k].nall : f->series[k].n); j++)
			dtype[f->series[k].ev[j]] = f->series[k].dev_type, did[f->series[k].ev[j]] = f->series[k].dev_id;
#define COL(name, p, count) row(d, st, "itb", idx, name, (const void *)(p), (size_t)(count) * sizeof *(p))
	COL("mem.ts", m->ts, n), COL("mem.bytes", m->bytes, n);
	if (m->addr)
		COL("mem.addr", m->addr, n);
	else
		put_pack(d, st, idx, "mem.addr", &m->addrs);
	put_pack(d, st, idx, "mem.total_alloc", &m->total_alloc), put_pack(d, st, idx, "mem.total_res", &m->total_res);
	put_pack(d, st, idx, "mem.ev_idx", &m->ev_idx);
	COL("mem.dev_type", dtype, n), COL("mem.dev_id", did, n);
	free(dtype), free(did);
	COL("mem.thread", m->thread, n), COL("mem.has_addr", m->has_addr, n), COL("mem.category", catev, n);
	const hm_slices *s = &t->sl;
	COL("sl.ts", s->ts, s->n), COL("sl.dur", s->dur, s->n), COL("sl.name", s->name, s->n);
	COL("sl.thread", s->thread, s->n), COL("sl.cat", s->cat, s->n), COL("sl.kind", s->kind, s->n);
	const hm_ooms *o = &t->oom;
	COL("oom.ts", o->ts, o->n), COL("oom.bytes", o->bytes, o->n), COL("oom.total_alloc", o->total_alloc, o->n);
	COL("oom.total_res", o->total_res, o->n), COL("oom.dev_type", o->dev_type, o->n);
	COL("oom.dev_id", o->dev_id, o->n), COL("oom.thread", o->thread, o->n), COL("oom.mem_at", o->mem_at, o->n);
	COL("capacity", t->capacity, t->ncapacity), COL("thread_name", t->thread_name, t->thread_name_cap);
	COL("count", t->count, HM_EV_KINDS);
	int64_t scal[] = {t->has_trace_events, t->top_array, I(t->events_at)};
	COL("flags", scal, 3);
	put_strtab(d, st, idx, "names", &t->names);
	put_strtab(d, st, idx, "threads", &t->threads);
	const hm_snap *sn = t->snap;
	if (sn) {
		COL("snap.block_bytes", sn->block_bytes, n), COL("snap.stream", sn->stream, n);
		COL("snap.segment", sn->segment, n), COL("snap.origin", sn->origin, n);
		COL("snap.stack", sn->stack, n), COL("snap.compile_ctx", sn->compile_ctx, n);
		COL("snap.user_meta", sn->user_meta, n), COL("snap.stack_frame", sn->stack_frame, sn->stacks.n);
		COL("snap.segs", sn->segs, sn->nsegs), COL("snap.ooms", sn->ooms, sn->nooms);
		int64_t sc[] = {I(sn->entries), I(sn->skipped), sn->protocol, sn->overflowed, sn->max_entries, I(sn->untimed)};
		COL("snap.counts", sc, 6);
		put_strtab(d, st, idx, "snap.frames", &sn->frames);
		put_strtab(d, st, idx, "snap.stacks", &sn->stacks);
	}
#undef COL
}

static void put_meta(db *d, const hm_report *r)
{
	const hm_runinfo *in = r->info;
	sqlite3_stmt *st = prep(d, "INSERT INTO meta VALUES(?, ?)");
	char shard[64], calls[64], hits[64];
	snprintf(shard, sizeof shard, "%d/%d", in->shard, in->nshards);
	snprintf(calls, sizeof calls, "%" PRIu64, r->classify_calls);
	snprintf(hits, sizeof hits, "%" PRIu64, r->cache_hits);
	const char *kv[][2] = {{ "format", HM_PARTIAL_FORMAT}, { "hmem_version", HM_VERSION}, { "abi", abi()},
			       { "rules", r->rules}, { "rules_hash", in->rules_hash},
			       { "plan_hash", in->plan->hash}, { "shard", shard}, { "classify_calls", calls},
			       { "cache_hits", hits}, { "complete", in->complete ? "1" : "0"} };
	for (size_t i = 0; i < sizeof kv / sizeof *kv; i++)
		row(d, st, "tt", kv[i][0], kv[i][1]);
	sqlite3_finalize(st);
	/* One row per option, its value bound as it is: never a string split again (issue 24). */
	st = prep(d, "INSERT INTO options VALUES(?, ?, ?)");
	for (size_t i = 0; i < in->nopts; i++)
		row(d, st, "itt", I(i), in->opts[i].name, in->opts[i].value);
	sqlite3_finalize(st);
	int *of = hm_xcalloc((size_t)in->plan->n + 1, sizeof *of);
	hm_plan_assign(in->plan, in->nshards, of);
	st = prep(d, "INSERT INTO plan VALUES(?, ?, ?, ?, ?)");
	for (int i = 0; i < in->plan->n; i++)
		row(d, st, "ittii", I(i), in->plan->path[i], in->plan->canon[i], in->plan->bytes[i], I(of[i]));
	sqlite3_finalize(st);
	free(of);
	st = prep(d, "INSERT INTO categories VALUES(?, ?)");
	for (size_t c = 0; c < r->cats->n; c++)
		row(d, st, "iT", I(c), r->cats->str[c], (int)r->cats->len[c]);
	sqlite3_finalize(st);
}

static void put_files(db *d, const hm_report *r)
{
	const hm_runinfo *in = r->info;
	sqlite3_stmt *fs = prep(d, "INSERT INTO files VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
	sqlite3_stmt *fc = prep(d, "INSERT INTO file_categories VALUES(?, ?, ?)");
	sqlite3_stmt *ss = prep(d, "INSERT INTO series VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
	sqlite3_stmt *sc = prep(d, "INSERT INTO series_categories VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)");
	sqlite3_stmt *bl = prep(d, "INSERT INTO store VALUES(?, ?, ?)");
	for (size_t i = 0; i < r->nfiles && d->rc == 0; i++) {
		const hm_file *f = r->files[i];
		const hm_trace *t = f->t;
		int64_t idx = in->file_idx[i];
		row(d, fs, "ittitiiiiiiti", idx, t->path, in->plan->canon[idx], t->rank, t->cut_at ? "cut" : "read",
		    I(t->events), I(t->mem.n), I(t->sl.n), I(t->oom_events), I(t->cut_at), I(t->lost_bytes), t->cut_why,
		    t->first_ts);
		for (size_t c = in->cat_from[i]; c < in->cat_from[i + 1]; c++)
			row(d, fc, "iiT", idx, I(c - in->cat_from[i]), r->cats->str[c], (int)r->cats->len[c]);
		for (size_t k = 0; k < f->nseries; k++) {
			const hm_series *s = &f->series[k];
			row(d, ss, "iitiiiiiiiiiit", idx, t->rank, s->device, I(s->n), I(s->allocs), I(s->frees),
			    s->start_bytes, s->peak, s->peak_ts, s->end_bytes, s->max_reserved, I(s->nsteps), I(s->nooms),
			    hm_leak_name(s->leak));
			for (size_t c = 0; c < s->ncats; c++) {
				const hm_catstat *cs = &s->cats[c];
				if (cs->used)
					row(d, sc, "itTiiiiii", idx, s->device, r->cats->str[c], (int)r->cats->len[c], cs->start,
					    cs->peak, cs->at_peak, cs->end, I(cs->allocs), I(cs->alloc_bytes));
			}
		}
		put_store(d, bl, idx, f, in->catev[i]);
	}
	for (size_t i = 0; i < r->nskipped; i++)
		row(d, fs, "ittitiiiiiiti", I(in->skip_idx[i]), r->skipped[i].path, in->plan->canon[in->skip_idx[i]], HM_NONE,
		    "skipped", I(r->skipped[i].events), HM_NONE, HM_NONE, HM_NONE, HM_NONE, HM_NONE, r->skipped[i].why, HM_NONE);
	sqlite3_finalize(fs), sqlite3_finalize(fc), sqlite3_finalize(ss), sqlite3_finalize(sc), sqlite3_finalize(bl);
}

static void put_aggs(db *d, const hm_report *r)
{
	sqlite3_stmt *st = prep(d, "INSERT INTO aggregations VALUES(?, ?, ?, ?, ?, ?)");
	for (size_t a = 0; a < r->naggs && d->rc == 0; a++) {
		const hm_agg *g = &r->aggs[a];
		for (size_t i = 0; i < g->nrows; i++)
			for (size_t c = 0; c < g->ncols; c++) {
				const hm_cell *v = &g->cells[i * g->ncols + c];
				sqlite3_bind_text(st, 1, g->name, -1, SQLITE_STATIC);
				sqlite3_bind_int64(st, 2, (int64_t)i);
				sqlite3_bind_int64(st, 3, (int64_t)c);
				sqlite3_bind_text(st, 4, g->cols[c], -1, SQLITE_STATIC);
				sqlite3_bind_int(st, 5, c < g->nkeys);
				if (v->type == 1 || v->type == 4) /* int, bool */
					sqlite3_bind_int64(st, 6, v->i);
				else if (v->type == 2)
					sqlite3_bind_double(st, 6, v->d);
				else if (v->type == 3)
					sqlite3_bind_text(st, 6, v->s, -1, SQLITE_STATIC);
				if (sqlite3_step(st) != SQLITE_DONE)
					fail(d, "sqlite");
				sqlite3_reset(st);
				sqlite3_clear_bindings(st);
			}
	}
	sqlite3_finalize(st);
}

int hm_write_db(FILE *f, const hm_report *r, const char *path, char *err, size_t errsz)
{
	db d = {NULL, 0, err, errsz};
	if (!r->info) {
		snprintf(err, errsz, "%s: no database from this command", path);
		return HM_EXIT_INTERNAL;
	}
	if (sqlite3_open(":memory:", &d.h) != SQLITE_OK) {
		fail(&d, path);
		sqlite3_close(d.h);
		return d.rc;
	}
	exec(&d, "PRAGMA page_size=65536; BEGIN;");
	exec(&d, schema);
	put_meta(&d, r);
	put_files(&d, r);
	put_aggs(&d, r);
	exec(&d, "COMMIT;");
	sqlite3_int64 size = 0;
	unsigned char *bytes = d.rc ? NULL : sqlite3_serialize(d.h, "main", &size, 0);
	if (!d.rc && !bytes)
		fail(&d, path);
	if (bytes && fwrite(bytes, 1, (size_t)size, f) != (size_t)size)
		d.rc = HM_EXIT_IO, snprintf(err, errsz, "%s: write failed", path);
	sqlite3_free(bytes);
	sqlite3_close(d.h);
	return d.rc;
}

struct hm_partial {
	db d;
	char *path;
	char value[4096];
	char errbuf[1024];
};

int hm_partial_open(const char *path, hm_partial **out, char *err, size_t errsz)
{
	hm_partial *p = hm_xcalloc(1, sizeof *p);
	p->d.err = p->errbuf, p->d.errsz = sizeof p->errbuf;
	p->path = hm_xstrdup(path);
	*out = NULL;
	if (sqlite3_open_v2(path, &p->d.h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		snprintf(err, errsz, "%s: cannot open: %s", path, sqlite3_errmsg(p->d.h));
		hm_partial_close(p);
		return HM_EXIT_IO;
	}
	/* A merge holds thousands open: each reads its blobs once, so little page cache each. */
	sqlite3_exec(p->d.h, "PRAGMA cache_size = -64", NULL, NULL, NULL);
	if (strcmp(hm_partial_meta(p, "format"), HM_PARTIAL_FORMAT) || strcmp(hm_partial_meta(p, "abi"), abi())) {
		snprintf(err, errsz, "%s: not a partial of this hmem (format %s, %s): give the files that 'hmem run ... "
			 "--partial FILE' of this hmem wrote", path, HM_PARTIAL_FORMAT, abi());
		hm_partial_close(p);
		return HM_EXIT_INPUT;
	}
	*out = p;
	return 0;
}

void hm_partial_close(hm_partial *p)
{
	if (!p)
		return;
	sqlite3_close(p->d.h);
	free(p->path);
	free(p);
}

const char *hm_partial_meta(hm_partial *p, const char *key)
{
	sqlite3_stmt *st = NULL;
	p->value[0] = 0;
	if (sqlite3_prepare_v2(p->d.h, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
			snprintf(p->value, sizeof p->value, "%s", (const char *)sqlite3_column_text(st, 0));
	}
	sqlite3_finalize(st);
	return p->value;
}

int hm_partial_options(hm_partial *p, void (*fn)(void *ctx, const char *name, const char *value), void *ctx)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(p->d.h, "SELECT name, value FROM options ORDER BY pos", -1, &st, NULL) != SQLITE_OK)
		return -1;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0), *value = (const char *)sqlite3_column_text(st, 1);
		fn(ctx, name ? name : "", value ? value : "");
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

void hm_partial_plan(hm_partial *p, hm_plan *plan)
{
	sqlite3_stmt *st = NULL;
	*plan = (hm_plan){0};
	snprintf(plan->hash, sizeof plan->hash, "%s", hm_partial_meta(p, "plan_hash"));
	if (sqlite3_prepare_v2(p->d.h, "SELECT path, canonical, bytes FROM plan ORDER BY idx", -1, &st, NULL) != SQLITE_OK)
		return;
	size_t cap = 0, c2 = 0, c3 = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		hm_grow(&plan->path, &cap, (size_t)plan->n + 1, sizeof *plan->path);
		hm_grow(&plan->canon, &c2, (size_t)plan->n + 1, sizeof *plan->canon);
		hm_grow(&plan->bytes, &c3, (size_t)plan->n + 1, sizeof *plan->bytes);
		const char *a = (const char *)sqlite3_column_text(st, 0), *b = (const char *)sqlite3_column_text(st, 1);
		plan->path[plan->n] = hm_xstrdup(a ? a : "");
		plan->canon[plan->n] = hm_xstrdup(b ? b : "");
		plan->bytes[plan->n++] = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
}

void hm_partial_each_file(hm_partial *p, void (*fn)(void *ctx, int idx, int skipped, const char *why, int64_t events),
			  void *ctx)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(p->d.h, "SELECT idx, status, why, events FROM files ORDER BY idx", -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *status = (const char *)sqlite3_column_text(st, 1), *why = (const char *)sqlite3_column_text(st, 2);
		fn(ctx, sqlite3_column_int(st, 0), status && !strcmp(status, "skipped"), why ? why : "",
		   sqlite3_column_int64(st, 3));
	}
	sqlite3_finalize(st);
}

void hm_partial_new_categories(hm_partial *p, int idx, void (*fn)(void *ctx, const char *name, size_t len), void *ctx)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(p->d.h, "SELECT category FROM file_categories WHERE idx = ? ORDER BY pos", -1, &st, NULL) !=
	    SQLITE_OK)
		return;
	sqlite3_bind_int(st, 1, idx);
	while (sqlite3_step(st) == SQLITE_ROW)
		fn(ctx, (const char *)sqlite3_column_text(st, 0), (size_t)sqlite3_column_bytes(st, 0));
	sqlite3_finalize(st);
}

void hm_partial_categories(hm_partial *p, hm_strtab *out)
{
	sqlite3_stmt *st = NULL;
	*out = (hm_strtab){0};
	if (sqlite3_prepare_v2(p->d.h, "SELECT name FROM categories ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW)
		hm_strtab_intern(out, (const char *)sqlite3_column_text(st, 0), (size_t)sqlite3_column_bytes(st, 0));
	sqlite3_finalize(st);
}

/* The blobs of one trace, by name. */
typedef struct blobs {
	char **name;
	void **data;
	size_t *len, n, cap, c2, c3, c4;
} blobs;

static const void *blob(const blobs *b, const char *name, size_t *len)
{
	for (size_t i = 0; i < b->n; i++)
		if (!strcmp(b->name[i], name)) {
			*len = b->len[i];
			return b->data[i];
		}
	*len = 0;
	return NULL;
}

/* A column of count elements of size el, copied into a new array (count may be 0). */
static void *column(const blobs *b, const char *name, size_t count, size_t el, int *bad)
{
	size_t len;
	const void *p = blob(b, name, &len);
	if (len != count * el || (count && !p)) {
		*bad = 1;
		return hm_xcalloc(count + 1, el);
	}
	void *out = hm_xcalloc(count + 1, el);
	if (count)
		memcpy(out, p, len);
	return out;
}

static void get_strtab(const blobs *b, const char *name, hm_strtab *t, int *bad)
{
	size_t len;
	const char *p = blob(b, name, &len), *end = p + len;
	while (p && p + 4 <= end) {
		uint32_t n;
		memcpy(&n, p, 4);
		if ((size_t)(end - p - 4) < n)
			break;
		if (hm_strtab_intern(t, p + 4, n) != t->n - 1)
			*bad = 1; /* a name twice: ids would shift */
		p += 4 + n;
	}
	if (p != end)
		*bad = 1;
}

static void get_snap(const blobs *b, hm_trace *t, int *bad)
{
	size_t n = t->mem.n, len;
	hm_snap *s = t->snap = hm_xcalloc(1, sizeof *s);
	s->cap = n;
	s->block_bytes = column(b, "snap.block_bytes", n, sizeof *s->block_bytes, bad);
	s->stream = column(b, "snap.stream", n, sizeof *s->stream, bad);
	s->segment = column(b, "snap.segment", n, sizeof *s->segment, bad);
	s->origin = column(b, "snap.origin", n, sizeof *s->origin, bad);
	s->stack = column(b, "snap.stack", n, sizeof *s->stack, bad);
	s->compile_ctx = column(b, "snap.compile_ctx", n, sizeof *s->compile_ctx, bad);
	s->user_meta = column(b, "snap.user_meta", n, sizeof *s->user_meta, bad);
	get_strtab(b, "snap.frames", &s->frames, bad);
	get_strtab(b, "snap.stacks", &s->stacks, bad);
	s->stack_frame = column(b, "snap.stack_frame", s->stacks.n, sizeof *s->stack_frame, bad);
	blob(b, "snap.segs", &len);
	s->nsegs = s->capsegs = len / sizeof *s->segs;
	s->segs = column(b, "snap.segs", s->nsegs, sizeof *s->segs, bad);
	blob(b, "snap.ooms", &len);
	s->nooms = s->capooms = len / sizeof *s->ooms;
	s->ooms = column(b, "snap.ooms", s->nooms, sizeof *s->ooms, bad);
	int64_t *sc = column(b, "snap.counts", 6, sizeof *sc, bad);
	s->entries = (uint64_t)sc[0], s->skipped = (uint64_t)sc[1], s->protocol = (int)sc[2];
	s->overflowed = (int)sc[3], s->max_entries = sc[4], s->untimed = (uint64_t)sc[5];
	free(sc);
}

/* A plain int64 column into a packed one. */
static void get_pack(const blobs *b, const char *name, size_t n, hm_pack *p, int *bad)
{
	int64_t *v = column(b, name, n, sizeof *v, bad);
	for (size_t i = 0; i < n; i++)
		hm_pack_add(p, v[i]);
	free(v);
}

/* The trace from its row in files and its blobs. */
static hm_trace *get_trace(sqlite3_stmt *fr, const blobs *b, int32_t **catev, int *bad)
{
	hm_trace *t = hm_store_new((const char *)sqlite3_column_text(fr, 0));
	t->rank = sqlite3_column_type(fr, 1) == SQLITE_NULL ? HM_NONE : sqlite3_column_int64(fr, 1);
	t->events = (uint64_t)sqlite3_column_int64(fr, 2);
	size_t n = (size_t)sqlite3_column_int64(fr, 3), ns = (size_t)sqlite3_column_int64(fr, 4);
	t->oom_events = (uint64_t)sqlite3_column_int64(fr, 5);
	t->cut_at = (uint64_t)sqlite3_column_int64(fr, 6);
	t->lost_bytes = (uint64_t)sqlite3_column_int64(fr, 7);
	if (sqlite3_column_type(fr, 8) != SQLITE_NULL)
		t->cut_why = hm_xstrdup((const char *)sqlite3_column_text(fr, 8));
	t->first_ts = sqlite3_column_type(fr, 9) == SQLITE_NULL ? HM_NONE : sqlite3_column_int64(fr, 9);
	hm_mem *m = &t->mem;
	size_t len;
	hm_store_grow_mem(m, n + 1);
	m->n = n;
#define GET(dst, name, count)                                       \
	do {                                                        \
		void *col_ = column(b, name, count, sizeof *(dst), bad); \
		free(dst);                                          \
		(dst) = col_;                                       \
	} while (0)
	GET(m->ts, "mem.ts", n);
	GET(m->bytes, "mem.bytes", n);
	GET(m->addr, "mem.addr", n);
	get_pack(b, "mem.total_alloc", n, &m->total_alloc, bad);
	get_pack(b, "mem.total_res", n, &m->total_res, bad);
	get_pack(b, "mem.ev_idx", n, &m->ev_idx, bad);
	GET(m->dev_type, "mem.dev_type", n);
	GET(m->dev_id, "mem.dev_id", n);
	GET(m->thread, "mem.thread", n);
	GET(m->has_addr, "mem.has_addr", n);
	m->cap = n + 1;
	*catev = column(b, "mem.category", n, sizeof **catev, bad);
	hm_slices *s = &t->sl;
	hm_store_grow_slices(s, ns + 1);
	s->n = ns;
	GET(s->ts, "sl.ts", ns);
	GET(s->dur, "sl.dur", ns);
	GET(s->name, "sl.name", ns);
	GET(s->thread, "sl.thread", ns);
	GET(s->cat, "sl.cat", ns);
	GET(s->kind, "sl.kind", ns);
	s->cap = ns + 1;
	hm_ooms *o = &t->oom;
	blob(b, "oom.ts", &len);
	o->n = o->cap = len / sizeof *o->ts;
	GET(o->ts, "oom.ts", o->n);
	GET(o->bytes, "oom.bytes", o->n);
	GET(o->total_alloc, "oom.total_alloc", o->n);
	GET(o->total_res, "oom.total_res", o->n);
	GET(o->dev_type, "oom.dev_type", o->n);
	GET(o->dev_id, "oom.dev_id", o->n);
	GET(o->thread, "oom.thread", o->n);
	GET(o->mem_at, "oom.mem_at", o->n);
	blob(b, "capacity", &len);
	t->ncapacity = len / sizeof *t->capacity;
	GET(t->capacity, "capacity", t->ncapacity);
	blob(b, "thread_name", &len);
	t->thread_name_cap = len / sizeof *t->thread_name;
	GET(t->thread_name, "thread_name", t->thread_name_cap);
	uint64_t *count = column(b, "count", HM_EV_KINDS, sizeof *count, bad);
	memcpy(t->count, count, sizeof t->count);
	free(count);
	int64_t *fl = column(b, "flags", 3, sizeof *fl, bad);
	t->has_trace_events = (int)fl[0], t->top_array = (int)fl[1], t->events_at = (uint64_t)fl[2];
	free(fl);
#undef GET
	get_strtab(b, "names", &t->names, bad);
	get_strtab(b, "threads", &t->threads, bad);
	if (blob(b, "snap.counts", &len))
		get_snap(b, t, bad);
	return t;
}

hm_trace *hm_partial_trace(hm_partial *p, int idx, int32_t **catev, char *err, size_t errsz)
{
	sqlite3_stmt *fr = NULL, *st = NULL;
	blobs b = {0};
	hm_trace *t = NULL;
	int bad = 0;
	*catev = NULL;
	if (sqlite3_prepare_v2(p->d.h, "SELECT path, rank, events, memory_events, host_slices, oom_events, cut_at,"
				       " lost_bytes, why, first_ts_ns FROM files WHERE idx = ? AND status != 'skipped'",
			       -1, &fr, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(p->d.h, "SELECT name, data FROM store WHERE idx = ?", -1, &st, NULL) != SQLITE_OK) {
		snprintf(err, errsz, "%s: %s", p->path, sqlite3_errmsg(p->d.h));
		goto done;
	}
	sqlite3_bind_int(fr, 1, idx);
	sqlite3_bind_int(st, 1, idx);
	if (sqlite3_step(fr) != SQLITE_ROW) {
		snprintf(err, errsz, "%s: no trace %d in it", p->path, idx);
		goto done;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		hm_grow(&b.name, &b.cap, b.n + 1, sizeof *b.name);
		hm_grow(&b.data, &b.c2, b.n + 1, sizeof *b.data);
		hm_grow(&b.len, &b.c3, b.n + 1, sizeof *b.len);
		size_t len = (size_t)sqlite3_column_bytes(st, 1);
		b.name[b.n] = hm_xstrdup((const char *)sqlite3_column_text(st, 0));
		b.data[b.n] = hm_xcalloc(len + 1, 1);
		if (len)
			memcpy(b.data[b.n], sqlite3_column_blob(st, 1), len);
		b.len[b.n++] = len;
	}
	t = get_trace(fr, &b, catev, &bad);
	if (bad) {
		snprintf(err, errsz, "%s: the store of %s is damaged", p->path, t->path);
		hm_trace_free(t);
		free(*catev);
		*catev = NULL;
		t = NULL;
	}
done:
	for (size_t i = 0; i < b.n; i++)
		free(b.name[i]), free(b.data[i]);
	free(b.name), free(b.data), free(b.len);
	sqlite3_finalize(fr);
	sqlite3_finalize(st);
	return t;
}

int32_t *hm_partial_capture(const hm_file *f)
{
	int32_t *c = hm_xcalloc(f->t->mem.n + 1, sizeof *c);
	for (size_t e = 0; e < f->t->mem.n; e++)
		c[e] = -1;
	for (size_t s = 0; s < f->nseries; s++)
		for (size_t k = 0; k < f->series[s].n; k++)
			c[f->series[s].ev[k]] = f->series[s].cat[k];
	return c;
}
