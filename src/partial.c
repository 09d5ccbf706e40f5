/* The SQLite partial and --db (partial.h). */
#include "partial.h"
#include "explain.h"
#include "explainout.h"
#include "snapout.h"
#include "snapseg.h"
#include "trace.h"

#include <stdarg.h>

#include <errno.h>
#include <sys/stat.h>

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
	"CREATE TABLE steps(idx INTEGER, device TEXT, pos INTEGER, step INTEGER, start_ts_ns INTEGER, end_ts_ns INTEGER,"
	" start_bytes INTEGER, peak_bytes INTEGER, peak_ts_ns INTEGER, end_bytes INTEGER, growth_bytes INTEGER,"
	" survivors_bytes INTEGER, partial INTEGER, open INTEGER, PRIMARY KEY(idx, device, pos));"
	"CREATE TABLE ooms(idx INTEGER, device TEXT, pos INTEGER, ts_ns INTEGER, bytes INTEGER, total_allocated INTEGER,"
	" total_reserved INTEGER, reserved_unallocated INTEGER, capacity INTEGER, allocated INTEGER, freed_after INTEGER,"
	" op TEXT, step INTEGER, step_ts_ns INTEGER, thread TEXT, device_free INTEGER, frame TEXT, frames_total INTEGER,"
	" segments INTEGER, segments_reserved_bytes INTEGER, segments_requested_bytes INTEGER,"
	" segments_reclaimable_bytes INTEGER, segments_stranded_bytes INTEGER, PRIMARY KEY(idx, device, pos));"
	"CREATE TABLE snapshot_segments(idx INTEGER, device TEXT, pos INTEGER, address INTEGER, total_bytes INTEGER,"
	" allocated_bytes INTEGER, pending_free_bytes INTEGER, free_bytes INTEGER, largest_free_bytes INTEGER,"
	" blocks INTEGER, requested_bytes INTEGER, PRIMARY KEY(idx, device, pos));"
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

/* The blobs of one trace, by name. */
typedef struct blobs {
	char **name;
	void **data;
	size_t *len, n, cap, c2, c3, c4;
	size_t total; /* bytes of all blobs */
} blobs;

/* The checksum of a trace (README "Many machines": a store row named "checksum") is a
 * 64-bit hash of every value that makes it up: its row in files, the categories it
 * introduced, the partial's categories (its category ids point there) and its store but
 * the checksum, by name. --partial writes it and the merge computes it again, both through
 * trace_sum, so a flipped byte is named ("the checksum does not match"), not merged. Not a
 * defence against someone who rewrites the partial on purpose: the checks of every id and
 * count while loading are (load_check). Each step of the hash is a bijection of its state,
 * so a change in any one word is always seen. */
static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	h = (h ^ ((uint64_t)n * UINT64_C(0x9e3779b97f4a7c15))) * UINT64_C(0xff51afd7ed558ccd);
	for (; n >= 8; s += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * UINT64_C(0xff51afd7ed558ccd);
		h ^= h >> 32;
	}
	uint64_t w = 0;
	if (n) /* SQLite gives NULL for an empty text or blob */
		memcpy(&w, s, n);
	h = (h ^ w) * UINT64_C(0xc4ceb9fe1a85ec53);
	return h ^ (h >> 29);
}

/* One column of the current row: its type, then its value's bytes. */
static uint64_t mix_value(uint64_t h, sqlite3_stmt *st, int col)
{
	int type = sqlite3_column_type(st, col);
	int64_t v;
	h = mix(h, &type, sizeof type);
	switch (type) {
	case SQLITE_INTEGER: v = sqlite3_column_int64(st, col); return mix(h, &v, sizeof v);
	case SQLITE_FLOAT: { double x = sqlite3_column_double(st, col); return mix(h, &x, sizeof x); }
	case SQLITE_TEXT: { const void *s = sqlite3_column_text(st, col); return mix(h, s, (size_t)sqlite3_column_bytes(st, col)); }
	case SQLITE_BLOB: { const void *s = sqlite3_column_blob(st, col); return mix(h, s, (size_t)sqlite3_column_bytes(st, col)); }
	default: return h;
	}
}

static const char *const sum_sql[] = {
	("SELECT path, canonical, rank, status, events, memory_events, host_slices, oom_events, cut_at, lost_bytes, why,"
	 " first_ts_ns FROM files WHERE idx = ?1"),
	"SELECT pos, category FROM file_categories WHERE idx = ?1 ORDER BY pos",
	"SELECT id, name FROM categories ORDER BY id",
	"SELECT name, data FROM store WHERE idx = ?1 AND name != 'checksum' ORDER BY name",
	"SELECT data FROM store WHERE idx = ?1 AND name = 'checksum'",
};

/* The checksum of trace idx into *sum, and the one stored into *stored (0 with *has 0 when
 * there is none). With b, the store's blobs are copied there too (names are TEXT, data
 * BLOB; else *why says which is not); bound caps their bytes. Returns 0, or -1 with why
 * (a query failed, or a value of the wrong type). */
static int trace_sum(sqlite3 *h, int64_t idx, blobs *b, size_t bound, uint64_t *sum, uint64_t *stored, int *has,
		     char *why, size_t whysz)
{
	uint64_t x = UINT64_C(0x6a09e667f3bcc908);
	int rc = 0;
	*has = 0, *stored = 0;
	for (size_t q = 0; q < sizeof sum_sql / sizeof *sum_sql && !rc; q++) {
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(h, sum_sql[q], -1, &st, NULL) != SQLITE_OK) {
			snprintf(why, whysz, "%s", sqlite3_errmsg(h));
			return -1;
		}
		sqlite3_bind_int64(st, 1, idx);
		int s = SQLITE_DONE;
		while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
			int ncol = sqlite3_column_count(st);
			if (q == 4) {
				size_t len = (size_t)sqlite3_column_bytes(st, 0);
				if (sqlite3_column_type(st, 0) != SQLITE_BLOB || len != sizeof *stored)
					snprintf(why, whysz, "its checksum is not 8 bytes"), rc = -1;
				else
					memcpy(stored, sqlite3_column_blob(st, 0), sizeof *stored), *has = 1;
				continue;
			}
			for (int c = 0; c < ncol; c++)
				x = mix_value(x, st, c);
			if (q != 3 || !b)
				continue;
			size_t len = (size_t)sqlite3_column_bytes(st, 1);
			if (sqlite3_column_type(st, 0) != SQLITE_TEXT || sqlite3_column_type(st, 1) != SQLITE_BLOB) {
				snprintf(why, whysz, "a store row's name is not text or its data not a blob");
				rc = -1;
			} else if ((b->total += len) > bound) {
				snprintf(why, whysz, "its columns add up to more bytes than the file has");
				rc = -1;
			} else {
				hm_grow(&b->name, &b->cap, b->n + 1, sizeof *b->name);
				hm_grow(&b->data, &b->c2, b->n + 1, sizeof *b->data);
				hm_grow(&b->len, &b->c3, b->n + 1, sizeof *b->len);
				b->name[b->n] = hm_xstrdup((const char *)sqlite3_column_text(st, 0));
				b->data[b->n] = hm_xcalloc(len + 1, 1);
				if (len)
					memcpy(b->data[b->n], sqlite3_column_blob(st, 1), len);
				b->len[b->n++] = len;
			}
		}
		if (!rc && s != SQLITE_DONE)
			snprintf(why, whysz, "%s", sqlite3_errmsg(h)), rc = -1;
		sqlite3_finalize(st);
	}
	*sum = x;
	return rc;
}

/* The checksum row of trace idx, written last: the files row and the categories are in
 * already (put_meta, put_files). */
static void put_checksum(db *d, sqlite3_stmt *st, int64_t idx)
{
	uint64_t sum, stored;
	int has;
	char why[256];
	if (d->rc)
		return;
	if (trace_sum(d->h, idx, NULL, SIZE_MAX, &sum, &stored, &has, why, sizeof why) != 0) {
		fail(d, "sqlite");
		return;
	}
	row(d, st, "itb", idx, "checksum", (const void *)&sum, sizeof sum);
}

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

/* A packed column as the plain column it stands for (the partial's format): el bytes a row,
 * int64 values (8), uint32 ids (4) or uint8 flags (1). */
static void put_pack(db *d, sqlite3_stmt *st, int64_t idx, const char *name, const hm_pack *p, size_t el)
{
	uint8_t *v = hm_xrealloc(NULL, (p->n + 1) * el);
	for (size_t i = 0; i < p->n; i++) {
		int64_t x = hm_pack_get(p, i);
		uint32_t id = (uint32_t)x;
		uint8_t flag = (uint8_t)x;
		memcpy(v + i * el, el == 8 ? (const void *)&x : el == 4 ? (const void *)&id : (const void *)&flag, el);
	}
	row(d, st, "itb", idx, name, (const void *)v, p->n * el);
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
	put_pack(d, st, idx, "mem.ts", &m->ts, 8), put_pack(d, st, idx, "mem.bytes", &m->bytes, 8);
	if (m->addr)
		COL("mem.addr", m->addr, n);
	else
		put_pack(d, st, idx, "mem.addr", &m->addrs, 8);
	put_pack(d, st, idx, "mem.total_alloc", &m->total_alloc, 8), put_pack(d, st, idx, "mem.total_res", &m->total_res, 8);
	put_pack(d, st, idx, "mem.ev_idx", &m->ev_idx, 8);
	COL("mem.dev_type", dtype, n), COL("mem.dev_id", did, n);
	free(dtype), free(did);
	put_pack(d, st, idx, "mem.thread", &m->thread, 4), put_pack(d, st, idx, "mem.has_addr", &m->has_addr, 1);
	COL("mem.category", catev, n);
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
		put_pack(d, st, idx, "snap.block_bytes", &sn->block_bytes, 8), put_pack(d, st, idx, "snap.stream", &sn->stream, 8);
		put_pack(d, st, idx, "snap.segment", &sn->segment, 8), COL("snap.origin", sn->origin, n);
		COL("snap.stack", sn->stack, n), put_pack(d, st, idx, "snap.compile_ctx", &sn->compile_ctx, 4);
		put_pack(d, st, idx, "snap.user_meta", &sn->user_meta, 4), COL("snap.stack_frame", sn->stack_frame, sn->stacks.n);
		COL("snap.segs", sn->segs, sn->nsegs), COL("snap.ooms", sn->ooms, sn->nooms);
		COL("snap.lives", sn->lives, sn->nlives);
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

/* The statements of the tables of a series' explain results: steps, ooms and
 * snapshot_segments (README "Many machines"). */
typedef struct explain_st {
	sqlite3_stmt *steps, *ooms, *segs;
} explain_st;

/* A name of t's string table, or NULL (UINT32_MAX: none), as text with its length. */
static const char *name_of(const hm_trace *t, uint32_t id, int *len)
{
	*len = id == UINT32_MAX ? 0 : (int)t->names.len[id];
	return id == UINT32_MAX ? NULL : t->names.str[id];
}

/* The rows of series s of trace idx in steps, ooms and snapshot_segments: the values the
 * --json series[] object has in steps[], the scalars of ooms[] (and the members of an OOM's
 * segments object, segments_*), and snapshot.segments[] (explainout.c, snapout.c), so the
 * two outputs agree; times in ns, not us. */
static void put_explain(db *d, const explain_st *x, int64_t idx, const hm_file *f, const hm_series *s)
{
	const hm_trace *t = f->t;
	for (size_t i = 0; i < s->nsteps; i++) {
		const hm_step *st = &s->steps[i];
		row(d, x->steps, "itiiiiiiiiiiii", idx, s->device, I(i), I(st->step), st->start_ts, st->end_ts, st->start_bytes,
		    st->peak_bytes, st->peak_ts, st->end_bytes, st->growth_bytes, st->survivors_bytes, I(st->partial != 0),
		    I(st->open != 0));
	}
	for (size_t i = 0; i < s->nooms; i++) {
		const hm_oom *o = &s->ooms[i];
		char tb[300];
		const char *th, *op = NULL, *frame = NULL;
		size_t tn;
		int opn = 0, framen = 0;
		int64_t device_free = HM_NONE, frames_total = HM_NONE;
		hm_segstate g = {HM_NONE, HM_NONE, HM_NONE, HM_NONE, HM_NONE};
		hm_explain_thread(t, o->thread, &th, &tn, tb, sizeof tb);
		if (o->nops)
			op = name_of(t, t->sl.name[o->ops[o->nops - 1]], &opn);
		if (t->snap) {
			const hm_snapoom *so = &t->snap->ooms[o->ev];
			const uint32_t *ids;
			device_free = so->device_free;
			frame = name_of(t, so->stack == UINT32_MAX ? UINT32_MAX : t->snap->stack_frame[so->stack], &framen);
			frames_total = so->stack == UINT32_MAX ? 0 : I(hm_snap_stack(t->snap, so->stack, &ids));
			if (so->segs.segments != HM_NONE) /* else unknown, null in --json */
				g = so->segs;
		}
		row(d, x->ooms, "itiiiiiiiiiTiiTiTiiiiii", idx, s->device, I(i), o->ts, o->bytes, o->total_allocated,
		    o->total_reserved, o->reserved_unallocated, o->capacity, o->allocated, o->freed_after, op, opn,
		    I(o->step < 0 ? HM_NONE : o->step), o->step_ts, th, (int)tn, device_free, frame, framen, frames_total,
		    g.segments, g.reserved, g.requested, g.reclaimable, g.stranded);
	}
	if (!hm_snap_has_segments(f, s))
		return;
	size_t from, n = hm_snapseg_of(t->snap, s->dev_id, &from);
	for (size_t i = from; i < from + n; i++) {
		const hm_snapseg *g = &t->snap->segs[i];
		row(d, x->segs, "itiiiiiiiii", idx, s->device, I(i - from), I(g->addr), g->total, g->allocated, g->pending,
		    g->inactive, g->largest_free, g->blocks, g->sized ? g->requested : HM_NONE);
	}
}

static void put_files(db *d, const hm_report *r)
{
	const hm_runinfo *in = r->info;
	sqlite3_stmt *fs = prep(d, "INSERT INTO files VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
	sqlite3_stmt *fc = prep(d, "INSERT INTO file_categories VALUES(?, ?, ?)");
	sqlite3_stmt *ss = prep(d, "INSERT INTO series VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
	sqlite3_stmt *sc = prep(d, "INSERT INTO series_categories VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)");
	sqlite3_stmt *bl = prep(d, "INSERT INTO store VALUES(?, ?, ?)");
	explain_st x = {prep(d, "INSERT INTO steps VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
			prep(d, "INSERT INTO ooms VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
			prep(d, "INSERT INTO snapshot_segments VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")};
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
			put_explain(d, &x, idx, f, s);
		}
		put_store(d, bl, idx, f, in->catev[i]);
		put_checksum(d, bl, idx);
	}
	for (size_t i = 0; i < r->nskipped; i++)
		row(d, fs, "ittitiiiiiiti", I(in->skip_idx[i]), r->skipped[i].path, in->plan->canon[in->skip_idx[i]], HM_NONE,
		    "skipped", I(r->skipped[i].events), HM_NONE, HM_NONE, HM_NONE, HM_NONE, HM_NONE, r->skipped[i].why, HM_NONE);
	sqlite3_finalize(fs), sqlite3_finalize(fc), sqlite3_finalize(ss), sqlite3_finalize(sc), sqlite3_finalize(bl);
	sqlite3_finalize(x.steps), sqlite3_finalize(x.ooms), sqlite3_finalize(x.segs);
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

/* A partial is an input like a trace: it may be damaged or made to harm. It is opened
 * read-only and defensively (no writable schema, no untrusted schema functions, triggers
 * or views), its schema must be hmem's tables and nothing else, SQLite's work on it is
 * bounded by its size (a progress handler), and every value loaded is checked against the
 * table it points into or the blob it counts before it is used (load_check). */
struct hm_partial {
	db d;
	char *path;
	char value[4096];
	char errbuf[1024];
	size_t size;         /* the file's bytes: no value read from it is longer */
	uint64_t steps, max_steps; /* progress handler calls (every 1000 VM steps) since the
				    * last call of a function below began, and the cap */
	char *damaged;       /* why none of its traces can be loaded (its store or categories are
			      * not hmem's), NULL when they can */
	size_t ncats;        /* rows of categories (ids 0..ncats-1, each name once) */
	int no_checksum;     /* hm_partial_skip_checksum */
};

static int progress(void *ctx)
{
	hm_partial *p = ctx;
	return ++p->steps > p->max_steps;
}

/* The name a CREATE statement of schema gives (its table or index), into out. */
static void created_name(const char *sql, char *out, size_t outsz)
{
	const char *s = strchr(sql, ' ');
	s = s ? strchr(s + 1, ' ') : NULL;
	size_t n = s ? strcspn(s + 1, "( ") : 0;
	snprintf(out, outsz, "%.*s", (int)n, s ? s + 1 : "");
}

/* sqlite_master must hold hmem's schema and nothing else: each table as hmem creates it
 * (the same statement), the indexes SQLite makes for their keys, no view, trigger or other
 * object. Returns 0; or 1 when only the store is not hmem's (its traces are damaged, the
 * rest is read), with why; or -1 with why. */
static int check_schema(hm_partial *p, char *why, size_t whysz)
{
	char *want = hm_xstrdup(schema);
	const char *stmt[32];
	int seen[32] = {0}, n = 0, bad = 0, bad_store = 0;
	for (char *c = want, *e; *c && n < 32; c = e + 1) {
		if (!(e = strchr(c, ';')))
			break;
		*e = 0, stmt[n++] = c;
	}
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(p->d.h, "SELECT type, name, tbl_name, sql FROM sqlite_master", -1, &st, NULL) != SQLITE_OK) {
		snprintf(why, whysz, "SQLite says: %s", sqlite3_errmsg(p->d.h));
		free(want);
		return -1;
	}
	int s;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 0), *name = (const char *)sqlite3_column_text(st, 1);
		const char *tbl = (const char *)sqlite3_column_text(st, 2), *sql = (const char *)sqlite3_column_text(st, 3);
		int ok = 0;
		if (!type || !name || !tbl) {
			bad++;
			continue;
		}
		for (int i = 0; i < n && !ok; i++) {
			char nm[64], auto_index[96];
			created_name(stmt[i], nm, sizeof nm);
			snprintf(auto_index, sizeof auto_index, "sqlite_autoindex_%s_1", nm);
			if (!strcmp(name, nm) && !strcmp(tbl, nm) && sql && !strcmp(sql, stmt[i]) &&
			    !strcmp(type, strncmp(stmt[i], "CREATE INDEX", 12) ? "table" : "index"))
				ok = 1, seen[i] = 1;
			else if (!strcmp(type, "index") && !strcmp(name, auto_index) && !strcmp(tbl, nm) && !sql)
				ok = 1;
		}
		if (!ok && (!strcmp(name, "store") || !strcmp(tbl, "store")))
			bad_store++;
		else if (!ok && !bad)
			bad++, snprintf(why, whysz, "the %s %s is not hmem's", type, name);
	}
	if (s != SQLITE_DONE && !bad)
		bad++, snprintf(why, whysz, "SQLite says: %s", sqlite3_errmsg(p->d.h));
	sqlite3_finalize(st);
	for (int i = 0; i < n && !bad; i++) {
		char nm[64];
		created_name(stmt[i], nm, sizeof nm);
		if (!seen[i] && !strcmp(nm, "store"))
			bad_store++;
		else if (!seen[i])
			bad++, snprintf(why, whysz, "no table %s as hmem writes it", nm);
	}
	free(want);
	if (bad)
		return -1;
	if (bad_store)
		snprintf(why, whysz, "its store is not hmem's table (a view, trigger or table of other columns)");
	return bad_store ? 1 : 0;
}

/* The categories must be ids 0..n-1, each a name, each name once (the traces' category
 * ids point there). Returns 0, or -1 with why. */
static int check_categories(hm_partial *p, char *why, size_t whysz)
{
	sqlite3_stmt *st = NULL;
	hm_strtab t = {0};
	int rc = 0, s = SQLITE_DONE;
	if (sqlite3_prepare_v2(p->d.h, "SELECT id, name FROM categories ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		rc = -1, snprintf(why, whysz, "its categories cannot be read: %s", sqlite3_errmsg(p->d.h));
	while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 1);
		size_t len = (size_t)sqlite3_column_bytes(st, 1);
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER || sqlite3_column_int64(st, 0) != (int64_t)t.n ||
		    sqlite3_column_type(st, 1) != SQLITE_TEXT || !name)
			rc = -1, snprintf(why, whysz, "its categories are not the ids 0 to n-1 each with a name");
		else if ((void)hm_strtab_intern(&t, name, len), t.n != (size_t)sqlite3_column_int64(st, 0) + 1)
			rc = -1, snprintf(why, whysz, "the category %.200s is stored twice", name);
	}
	if (!rc && s != SQLITE_DONE)
		rc = -1, snprintf(why, whysz, "its categories cannot be read: %s", sqlite3_errmsg(p->d.h));
	sqlite3_finalize(st);
	p->ncats = t.n;
	hm_strtab_free(&t);
	return rc;
}

int hm_partial_open(const char *path, hm_partial **out, char *err, size_t errsz)
{
	hm_partial *p = hm_xcalloc(1, sizeof *p);
	p->d.err = p->errbuf, p->d.errsz = sizeof p->errbuf;
	p->path = hm_xstrdup(path);
	*out = NULL;
	struct stat sb;
	int st = stat(path, &sb);
	if (st == 0 && !S_ISREG(sb.st_mode)) { /* a FIFO would block the open */
		snprintf(err, errsz, "%s: not a partial of hmem's: not a regular file", path);
		hm_partial_close(p);
		return HM_EXIT_INPUT;
	}
	if (st != 0 || sqlite3_open_v2(path, &p->d.h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		snprintf(err, errsz, "%s: cannot open: %s", path, p->d.h ? sqlite3_errmsg(p->d.h) : strerror(errno));
		hm_partial_close(p);
		return HM_EXIT_IO;
	}
	/* No value is longer than the file, and each call below stops SQLite after a number of
	 * steps in proportion to it: about 4 per byte, and at least a million, where reading
	 * every row of the file takes some 20 per row. So no schema or damage can hang it. */
	p->size = (size_t)sb.st_size;
	p->max_steps = 1000 + p->size / 256;
	sqlite3_limit(p->d.h, SQLITE_LIMIT_LENGTH, p->size < INT32_MAX ? (int)p->size + 1 : INT32_MAX);
	sqlite3_progress_handler(p->d.h, 1000, progress, p);
	sqlite3_db_config(p->d.h, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(p->d.h, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(p->d.h, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
	sqlite3_db_config(p->d.h, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
	/* A merge holds thousands open: each reads its blobs once, so little page cache each. */
	sqlite3_exec(p->d.h, "PRAGMA cache_size = -64", NULL, NULL, NULL);
	/* A partial of another format (an older hmem) is told as such before its tables are
	 * compared with this hmem's, which it would fail for that reason alone. */
	const char *format = hm_partial_meta(p, "format");
	if (*format && strcmp(format, HM_PARTIAL_FORMAT)) {
		snprintf(err, errsz, "%s: not a partial of this hmem (format %s, %s): give the files that 'hmem run ... "
			 "--partial FILE' of this hmem wrote", path, HM_PARTIAL_FORMAT, abi());
		hm_partial_close(p);
		return HM_EXIT_INPUT;
	}
	char why[512] = "";
	int schema_rc = check_schema(p, why, sizeof why);
	if (schema_rc < 0) {
		snprintf(err, errsz, "%s: not a partial of hmem's: %s: give the files that 'hmem run ... --partial FILE' "
			 "wrote", path, why);
		hm_partial_close(p);
		return HM_EXIT_INPUT;
	}
	if (schema_rc > 0)
		p->damaged = hm_xstrdup(why);
	if (strcmp(hm_partial_meta(p, "format"), HM_PARTIAL_FORMAT) || strcmp(hm_partial_meta(p, "abi"), abi())) {
		snprintf(err, errsz, "%s: not a partial of this hmem (format %s, %s): give the files that 'hmem run ... "
			 "--partial FILE' of this hmem wrote", path, HM_PARTIAL_FORMAT, abi());
		hm_partial_close(p);
		return HM_EXIT_INPUT;
	}
	if (!p->damaged && check_categories(p, why, sizeof why) != 0)
		p->damaged = hm_xstrdup(why);
	*out = p;
	return 0;
}

void hm_partial_skip_checksum(hm_partial *p)
{
	p->no_checksum = 1;
}

void hm_partial_close(hm_partial *p)
{
	if (!p)
		return;
	sqlite3_close(p->d.h);
	free(p->path);
	free(p->damaged);
	free(p);
}

const char *hm_partial_meta(hm_partial *p, const char *key)
{
	sqlite3_stmt *st = NULL;
	p->steps = 0;
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
	p->steps = 0; /* the read is bounded in SQLite's work like every other */
	if (sqlite3_prepare_v2(p->d.h, "SELECT name, value FROM options ORDER BY pos", -1, &st, NULL) != SQLITE_OK)
		return -1;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		/* an option's name and value are text, as the writer stores them: anything else
		 * (NULL, a number, a blob) is damage, not an empty option */
		if (sqlite3_column_type(st, 0) != SQLITE_TEXT || sqlite3_column_type(st, 1) != SQLITE_TEXT) {
			rc = SQLITE_CORRUPT;
			break;
		}
		fn(ctx, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

void hm_partial_plan(hm_partial *p, hm_plan *plan)
{
	sqlite3_stmt *st = NULL;
	p->steps = 0;
	*plan = (hm_plan){0};
	snprintf(plan->hash, sizeof plan->hash, "%s", hm_partial_meta(p, "plan_hash"));
	if (sqlite3_prepare_v2(p->d.h, "SELECT path, canonical, bytes FROM plan ORDER BY idx", -1, &st, NULL) != SQLITE_OK)
		return;
	size_t cap = 0, c2 = 0, c3 = 0;
	while (sqlite3_step(st) == SQLITE_ROW && plan->n < INT32_MAX - 1) {
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
	p->steps = 0;
	if (sqlite3_prepare_v2(p->d.h, "SELECT idx, status, why, events FROM files ORDER BY idx", -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *status = (const char *)sqlite3_column_text(st, 1), *why = (const char *)sqlite3_column_text(st, 2);
		int64_t idx = sqlite3_column_int64(st, 0), events = sqlite3_column_int64(st, 3);
		if (idx < 0 || idx > INT32_MAX)
			continue; /* in no plan */
		fn(ctx, (int)idx, status && !strcmp(status, "skipped"), why ? why : "", events < 0 ? 0 : events);
	}
	sqlite3_finalize(st);
}

void hm_partial_new_categories(hm_partial *p, int idx, void (*fn)(void *ctx, const char *name, size_t len), void *ctx)
{
	sqlite3_stmt *st = NULL;
	p->steps = 0;
	if (sqlite3_prepare_v2(p->d.h, "SELECT category FROM file_categories WHERE idx = ? ORDER BY pos", -1, &st, NULL) !=
	    SQLITE_OK)
		return;
	sqlite3_bind_int(st, 1, idx);
	while (sqlite3_step(st) == SQLITE_ROW)
		if (sqlite3_column_text(st, 0))
			fn(ctx, (const char *)sqlite3_column_text(st, 0), (size_t)sqlite3_column_bytes(st, 0));
	sqlite3_finalize(st);
}

void hm_partial_categories(hm_partial *p, hm_strtab *out)
{
	sqlite3_stmt *st = NULL;
	p->steps = 0;
	*out = (hm_strtab){0};
	if (sqlite3_prepare_v2(p->d.h, "SELECT name FROM categories ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW)
		if (sqlite3_column_text(st, 0))
			hm_strtab_intern(out, (const char *)sqlite3_column_text(st, 0), (size_t)sqlite3_column_bytes(st, 0));
	sqlite3_finalize(st);
}

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

/* The elements of el bytes blob name holds, or (size_t)-1 when its length is not a multiple. */
static size_t count_of(const blobs *b, const char *name, size_t el)
{
	size_t len;
	blob(b, name, &len);
	return len % el ? (size_t)-1 : len / el;
}

/* A column of count elements of size el, copied into a new array (count may be 0). The
 * caller has checked that the blob has count elements (sizes_check); a shorter or missing
 * one is damage, and gives zeros. */
static void *column(const blobs *b, const char *name, size_t count, size_t el, int *bad)
{
	size_t len;
	const void *p = blob(b, name, &len);
	if (len / el != count || len % el || (count && !p)) {
		*bad = 1;
		return hm_xcalloc(1, el);
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
		size_t before = t->n;
		hm_strtab_intern(t, p + 4, n);
		if (t->n == before)
			*bad = 1; /* a name twice: ids would shift */
		p += 4 + n;
	}
	if (p != end)
		*bad = 1;
}

static void get_pack(const blobs *b, const char *name, size_t n, size_t el, hm_pack *p, int *bad);

static void get_snap(const blobs *b, hm_trace *t, int *bad)
{
	size_t n = t->mem.n;
	hm_snap *s = t->snap = hm_xcalloc(1, sizeof *s);
	s->cap = n;
	get_pack(b, "snap.block_bytes", n, 8, &s->block_bytes, bad);
	get_pack(b, "snap.stream", n, 8, &s->stream, bad);
	get_pack(b, "snap.segment", n, 8, &s->segment, bad);
	s->origin = column(b, "snap.origin", n, sizeof *s->origin, bad);
	s->stack = column(b, "snap.stack", n, sizeof *s->stack, bad);
	get_pack(b, "snap.compile_ctx", n, 4, &s->compile_ctx, bad);
	get_pack(b, "snap.user_meta", n, 4, &s->user_meta, bad);
	get_strtab(b, "snap.frames", &s->frames, bad);
	get_strtab(b, "snap.stacks", &s->stacks, bad);
	s->stack_frame = column(b, "snap.stack_frame", s->stacks.n, sizeof *s->stack_frame, bad);
	s->nsegs = s->capsegs = count_of(b, "snap.segs", sizeof *s->segs);
	s->segs = column(b, "snap.segs", s->nsegs, sizeof *s->segs, bad);
	s->nooms = s->capooms = count_of(b, "snap.ooms", sizeof *s->ooms);
	s->ooms = column(b, "snap.ooms", s->nooms, sizeof *s->ooms, bad);
	s->nlives = s->caplives = count_of(b, "snap.lives", sizeof *s->lives);
	s->lives = column(b, "snap.lives", s->nlives, sizeof *s->lives, bad);
	if (*bad)
		s->nsegs = s->capsegs = s->nooms = s->capooms = s->nlives = s->caplives = 0;
	int64_t *sc = column(b, "snap.counts", 6, sizeof *sc, bad);
	if (!*bad)
		s->entries = (uint64_t)sc[0], s->skipped = (uint64_t)sc[1], s->protocol = (int)sc[2],
		s->overflowed = (int)sc[3], s->max_entries = sc[4], s->untimed = (uint64_t)sc[5];
	free(sc);
}

/* A plain column into a packed one: el bytes a row, as put_pack wrote it. */
static void get_pack(const blobs *b, const char *name, size_t n, size_t el, hm_pack *p, int *bad)
{
	uint8_t *v = column(b, name, n, el, bad);
	for (size_t i = 0; i < n && !*bad; i++) {
		int64_t x;
		uint32_t id;
		if (el == 8)
			memcpy(&x, v + 8 * i, 8);
		else if (el == 4)
			memcpy(&id, v + 4 * i, 4), x = id;
		else
			x = v[i];
		hm_pack_add(p, x);
	}
	free(v);
}

/* The columns a store has, with their element sizes; the counts they must hold are
 * checked by sizes_check. */
static const struct { const char *name; size_t el; } store_cols[] = {
	{"mem.ts", 8}, {"mem.bytes", 8}, {"mem.addr", 8}, {"mem.total_alloc", 8}, {"mem.total_res", 8}, {"mem.ev_idx", 8},
	{"mem.dev_type", 4}, {"mem.dev_id", 4}, {"mem.thread", 4}, {"mem.has_addr", 1}, {"mem.category", 4},
	{"sl.ts", 8}, {"sl.dur", 8}, {"sl.name", 4}, {"sl.thread", 4}, {"sl.cat", 4}, {"sl.kind", 1},
	{"oom.ts", 8}, {"oom.bytes", 8}, {"oom.total_alloc", 8}, {"oom.total_res", 8}, {"oom.dev_type", 4},
	{"oom.dev_id", 4}, {"oom.thread", 4}, {"oom.mem_at", 8}, {"capacity", 8}, {"thread_name", 4}, {"count", 8}, {"flags", 8},
	{"names", 1}, {"threads", 1},
	{"snap.block_bytes", 8}, {"snap.segment", 8}, {"snap.stream", 8}, {"snap.origin", 1}, {"snap.stack", 4}, {"snap.compile_ctx", 4}, {"snap.user_meta", 4},
	{"snap.stack_frame", 4}, {"snap.segs", sizeof(hm_snapseg)}, {"snap.ooms", sizeof(hm_snapoom)}, {"snap.counts", 8},
	{"snap.frames", 1}, {"snap.stacks", 1}, {"snap.lives", sizeof(hm_seglife)},
};

/* Before anything is allocated from them: every blob is a known column, each name once,
 * each the counts of the files row long (memory_events, host_slices, oom_events), or a
 * whole number of elements. The snapshot's columns come all or none. Returns 0, or -1
 * with why. */
static int sizes_check(const blobs *b, size_t n, size_t ns, size_t no, char *why, size_t whysz)
{
	int snap = 0;
	for (size_t i = 0; i < b->n; i++) {
		size_t k = 0, nk = sizeof store_cols / sizeof *store_cols;
		while (k < nk && strcmp(store_cols[k].name, b->name[i]))
			k++;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(b->name[j], b->name[i])) {
				snprintf(why, whysz, "the column %.100s is stored twice", b->name[i]);
				return -1;
			}
		if (k == nk) {
			snprintf(why, whysz, "a column %.100s that hmem does not write", b->name[i]);
			return -1;
		}
		snap += !strncmp(b->name[i], "snap.", 5);
	}
	size_t ncols = sizeof store_cols / sizeof *store_cols, nsnap = 14;
	if (b->n != ncols - nsnap + (snap ? nsnap : 0)) {
		snprintf(why, whysz, "%zu columns, not the %zu hmem writes", b->n, ncols - nsnap + (snap ? nsnap : 0));
		return -1;
	}
	for (size_t k = 0; k < ncols; k++) {
		const char *nm = store_cols[k].name;
		size_t want = !strncmp(nm, "mem.", 4) || (!strncmp(nm, "snap.", 5) && k < ncols - 7) ? n
			: !strncmp(nm, "sl.", 3) ? ns : !strncmp(nm, "oom.", 4) ? no
			: !strcmp(nm, "count") ? HM_EV_KINDS : !strcmp(nm, "flags") ? 3 : !strcmp(nm, "snap.counts") ? 6
			: (size_t)-2;
		size_t got = count_of(b, nm, store_cols[k].el);
		if (!snap && !strncmp(nm, "snap.", 5))
			continue;
		if (got == (size_t)-1 || (want != (size_t)-2 && got != want)) {
			snprintf(why, whysz, "the column %s does not hold the %s its trace's row says", nm,
				 !strncmp(nm, "sl.", 3) ? "host slices" : !strncmp(nm, "oom.", 4) ? "OOM events"
				 : want == n ? "memory events" : "values");
			return -1;
		}
	}
	return 0;
}

#define IN_TS(v) ((v) > -HM_STORE_TS_LIMIT && (v) < HM_STORE_TS_LIMIT)
#define IN_MEM(v) ((v) >= -HM_STORE_MEM_LIMIT && (v) <= HM_STORE_MEM_LIMIT)
#define NONE_OR(v, ok) ((v) == HM_NONE || (ok))

/* Every id within its table and every value within the store's limits (store.h), as a
 * reader would have left them: the analysis and the writers index by these without
 * looking. Returns 0, or -1 with the first problem in why. */
static int load_check(const hm_trace *t, const int32_t *catev, size_t ncats, char *why, size_t whysz)
{
#define BAD(...) do { snprintf(why, whysz, __VA_ARGS__); return -1; } while (0)
	const hm_mem *m = &t->mem;
	size_t nnames = t->names.n, nthreads = t->threads.n;
	uint64_t traffic = 0;
	for (size_t i = 0; i < m->n; i++) {
		int64_t b = hm_mem_bytes(m, i), ta = hm_mem_total_alloc(m, i);
		if (!IN_TS(hm_mem_ts(m, i)))
			BAD("memory event %zu: its time is beyond 2^62 ns", i);
		if (!IN_MEM(b) || (traffic += (uint64_t)(b < 0 ? -b : b)) > HM_STORE_MEM_LIMIT)
			BAD("memory event %zu: sizes beyond 2^60 bytes", i);
		if (!NONE_OR(ta, IN_MEM(ta)))
			BAD("memory event %zu: Total Allocated beyond 2^60 bytes", i);
		if (m->dev_type[i] < -32768 || m->dev_type[i] > 32767)
			BAD("memory event %zu: device type %d out of range", i, (int)m->dev_type[i]);
		if (hm_mem_thread(m, i) >= nthreads)
			BAD("memory event %zu: thread id %u of %zu threads", i, (unsigned)hm_mem_thread(m, i), nthreads);
		if ((uint64_t)hm_pack_get(&m->has_addr, i) > 1) /* as the partial gave it */
			BAD("memory event %zu: has_addr %u", i, (unsigned)hm_pack_get(&m->has_addr, i));
		if (catev[i] < -1 || catev[i] >= (int64_t)ncats)
			BAD("memory event %zu: category id %d of %zu categories", i, (int)catev[i], ncats);
	}
	const hm_slices *s = &t->sl;
	for (size_t i = 0; i < s->n; i++) {
		if (!IN_TS(s->ts[i]) || s->dur[i] < 0 || s->dur[i] >= HM_STORE_TS_LIMIT)
			BAD("host slice %zu: its time or duration is beyond 2^62 ns", i);
		if (s->name[i] >= nnames || s->cat[i] >= nnames)
			BAD("host slice %zu: name id %u, category id %u of %zu names", i, (unsigned)s->name[i],
			    (unsigned)s->cat[i], nnames);
		if (s->thread[i] >= nthreads)
			BAD("host slice %zu: thread id %u of %zu threads", i, (unsigned)s->thread[i], nthreads);
		if (s->kind[i] > HM_SL_PYTHON)
			BAD("host slice %zu: kind %u", i, (unsigned)s->kind[i]);
	}
	const hm_ooms *o = &t->oom;
	if (t->oom_events != o->n)
		BAD("%zu OOM events stored, %llu counted", o->n, (unsigned long long)t->oom_events);
	for (size_t i = 0; i < o->n; i++) {
		if (!IN_TS(o->ts[i]) || !IN_MEM(o->bytes[i]) || !NONE_OR(o->total_alloc[i], IN_MEM(o->total_alloc[i])))
			BAD("OOM event %zu: its time or size is beyond the store's limits", i);
		if (o->dev_type[i] < -32768 || o->dev_type[i] > 32767)
			BAD("OOM event %zu: device type %d out of range", i, (int)o->dev_type[i]);
		if (o->thread[i] >= nthreads)
			BAD("OOM event %zu: thread id %u of %zu threads", i, (unsigned)o->thread[i], nthreads);
		if (o->mem_at[i] > m->n)
			BAD("OOM event %zu: %llu memory events before it, of %zu", i, (unsigned long long)o->mem_at[i], m->n);
	}
	if (t->ncapacity > 65536)
		BAD("%zu device capacities", t->ncapacity);
	for (size_t i = 0; i < t->thread_name_cap; i++)
		if (t->thread_name[i] != UINT32_MAX && t->thread_name[i] >= nnames)
			BAD("thread %zu: name id %u of %zu names", i, (unsigned)t->thread_name[i], nnames);
	/* a thread is "pid\x1ftid" as the reader keys it: every reader of the key splits there */
	for (size_t i = 0; i < nthreads; i++)
		if (!memchr(t->threads.str[i], 0x1f, t->threads.len[i]))
			BAD("thread %zu: its key has no pid and tid", i);
	uint64_t sum = 0;
	for (int k = 0; k < HM_EV_KINDS; k++)
		if ((sum += t->count[k]) < t->count[k])
			BAD("its event counts overflow");
	if (sum != t->events)
		BAD("its event counts do not add up to its %llu events", (unsigned long long)t->events);
	if ((unsigned)t->has_trace_events > 1 || (unsigned)t->top_array > 1 || t->events_at > INT64_MAX)
		BAD("its flags are not hmem's");
	if (!NONE_OR(t->first_ts, IN_TS(t->first_ts)))
		BAD("its first time is beyond 2^62 ns");
	const hm_snap *sn = t->snap;
	if (!sn)
		return 0;
	for (size_t i = 0; i < m->n; i++) {
		if (sn->stack[i] != UINT32_MAX && sn->stack[i] >= sn->stacks.n)
			BAD("snapshot entry %zu: stack id %u of %zu stacks", i, (unsigned)sn->stack[i], sn->stacks.n);
		uint32_t cc = (uint32_t)hm_pack_get(&sn->compile_ctx, i), um = (uint32_t)hm_pack_get(&sn->user_meta, i);
		if ((cc != UINT32_MAX && cc >= nnames) || (um != UINT32_MAX && um >= nnames))
			BAD("snapshot entry %zu: a name id beyond its %zu names", i, nnames);
		int64_t bb = hm_pack_get(&sn->block_bytes, i);
		if (!NONE_OR(bb, bb >= 0 && bb <= HM_STORE_MEM_LIMIT))
			BAD("snapshot entry %zu: block size beyond 2^60 bytes", i);
		if (sn->origin[i] > HM_SNAP_BLOCK)
			BAD("snapshot entry %zu: origin %u is not hmem's", i, (unsigned)sn->origin[i]);
	}
	for (size_t f = 0; f < sn->frames.n; f++) {
		hm_frame fr;
		if (sn->frames.len[f] != sizeof fr)
			BAD("snapshot frame %zu: %u bytes", f, (unsigned)sn->frames.len[f]);
		fr = hm_snap_frame(sn, (uint32_t)f);
		if (fr.file >= nnames || fr.name >= nnames)
			BAD("snapshot frame %zu: a name id beyond its %zu names", f, nnames);
	}
	for (size_t k = 0; k < sn->stacks.n; k++) {
		const uint32_t *ids;
		if (sn->stacks.len[k] % sizeof *ids)
			BAD("snapshot stack %zu: %u bytes", k, (unsigned)sn->stacks.len[k]);
		size_t nf = hm_snap_stack(sn, (uint32_t)k, &ids);
		for (size_t j = 0; j < nf; j++) {
			uint32_t id;
			memcpy(&id, &ids[j], sizeof id);
			if (id >= sn->frames.n)
				BAD("snapshot stack %zu: frame id %u of %zu frames", k, (unsigned)id, sn->frames.n);
		}
		if (sn->stack_frame[k] != UINT32_MAX && sn->stack_frame[k] >= nnames)
			BAD("snapshot stack %zu: a name id beyond its %zu names", k, nnames);
	}
	int64_t reserved = 0;
	for (size_t i = 0; i < sn->nsegs; i++) {
		const hm_snapseg *g = &sn->segs[i];
		int64_t v[] = {g->total, g->allocated, g->requested, g->pending, g->inactive, g->blocks, g->largest_free};
		for (size_t j = 0; j < sizeof v / sizeof *v; j++)
			if (v[j] < 0 || v[j] > HM_STORE_MEM_LIMIT)
				BAD("snapshot segment %zu: a size beyond 0..2^60 bytes", i);
		if ((reserved += g->total) > HM_STORE_MEM_LIMIT || (unsigned)g->sized > 1)
			BAD("snapshot segment %zu: the segments add up to more than 2^60 bytes", i);
	}
	for (size_t i = 0; i < sn->nlives; i++) {
		const hm_seglife *l = &sn->lives[i];
		if (l->size <= 0 || l->size > HM_STORE_MEM_LIMIT || !NONE_OR(l->born_ts, IN_TS(l->born_ts)) ||
		    !NONE_OR(l->died_ts, IN_TS(l->died_ts)) || (l->born_at != UINT32_MAX && l->born_at >= m->n) ||
		    (l->died_at != UINT32_MAX && l->died_at >= m->n) || l->flags > (HM_SEGLIFE_MAPPED | HM_SEGLIFE_NO_REPLAY))
			BAD("snapshot segment life %zu: a size, time, event index or flag out of range", i);
	}
	if (sn->nooms > o->n)
		BAD("%zu snapshot OOMs for %zu OOM events", sn->nooms, o->n);
	for (size_t i = 0; i < sn->nooms; i++) {
		const hm_snapoom *q = &sn->ooms[i];
		const hm_segstate *g = &q->segs;
		int64_t v[] = {q->bytes, q->device_free, g->segments, g->reserved, g->requested, g->reclaimable, g->stranded};
		for (size_t j = 0; j < sizeof v / sizeof *v; j++)
			if (!NONE_OR(v[j], v[j] >= 0 && v[j] <= HM_STORE_MEM_LIMIT))
				BAD("snapshot OOM %zu: a size beyond 0..2^60 bytes", i);
		if (!NONE_OR(q->ts, IN_TS(q->ts)) || (q->stack != UINT32_MAX && q->stack >= sn->stacks.n) || q->mem_at > m->n)
			BAD("snapshot OOM %zu: its time, stack id or event index is out of range", i);
	}
	return 0;
#undef BAD
}

/* The trace from its row in files and its blobs (sizes_check passed). */
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
	hm_store_grow_mem(m, n + 1);
	m->n = n;
#define GET(dst, name, count)                                       \
	do {                                                        \
		void *col_ = column(b, name, count, sizeof *(dst), bad); \
		free(dst);                                          \
		(dst) = col_;                                       \
	} while (0)
	get_pack(b, "mem.ts", n, 8, &m->ts, bad);
	get_pack(b, "mem.bytes", n, 8, &m->bytes, bad);
	GET(m->addr, "mem.addr", n);
	get_pack(b, "mem.total_alloc", n, 8, &m->total_alloc, bad);
	get_pack(b, "mem.total_res", n, 8, &m->total_res, bad);
	get_pack(b, "mem.ev_idx", n, 8, &m->ev_idx, bad);
	GET(m->dev_type, "mem.dev_type", n);
	GET(m->dev_id, "mem.dev_id", n);
	get_pack(b, "mem.thread", n, 4, &m->thread, bad);
	get_pack(b, "mem.has_addr", n, 1, &m->has_addr, bad);
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
	o->n = o->cap = t->oom_events;
	GET(o->ts, "oom.ts", o->n);
	GET(o->bytes, "oom.bytes", o->n);
	GET(o->total_alloc, "oom.total_alloc", o->n);
	GET(o->total_res, "oom.total_res", o->n);
	GET(o->dev_type, "oom.dev_type", o->n);
	GET(o->dev_id, "oom.dev_id", o->n);
	GET(o->thread, "oom.thread", o->n);
	GET(o->mem_at, "oom.mem_at", o->n);
	t->ncapacity = count_of(b, "capacity", sizeof *t->capacity);
	GET(t->capacity, "capacity", t->ncapacity);
	t->thread_name_cap = count_of(b, "thread_name", sizeof *t->thread_name);
	GET(t->thread_name, "thread_name", t->thread_name_cap);
	uint64_t *count = column(b, "count", HM_EV_KINDS, sizeof *count, bad);
	if (!*bad)
		memcpy(t->count, count, sizeof t->count);
	free(count);
	int64_t *fl = column(b, "flags", 3, sizeof *fl, bad);
	if (!*bad)
		t->has_trace_events = (int)fl[0], t->top_array = (int)fl[1], t->events_at = (uint64_t)fl[2];
	free(fl);
#undef GET
	get_strtab(b, "names", &t->names, bad);
	get_strtab(b, "threads", &t->threads, bad);
	size_t len;
	if (blob(b, "snap.counts", &len))
		get_snap(b, t, bad);
	return t;
}

/* The files row of a trace read: its path text, its counts integers >= 0 (NULL is
 * damage), rank and first time integers or NULL, why text or NULL. */
static int row_check(sqlite3_stmt *fr, char *why, size_t whysz)
{
	static const char *const col[] = {"path", "rank", "events", "memory_events", "host_slices", "oom_events",
					  "cut_at", "lost_bytes", "why", "first_ts_ns"};
	for (int c = 0; c < 10; c++) {
		int type = sqlite3_column_type(fr, c), text = c == 0 || c == 8, may_null = c == 1 || c == 8 || c == 9;
		if (type == SQLITE_NULL ? !may_null : type != (text ? SQLITE_TEXT : SQLITE_INTEGER)) {
			snprintf(why, whysz, "its row in files has %s %s", col[c], type == SQLITE_NULL ? "NULL" : "of another type");
			return -1;
		}
		if (!text && c != 1 && c != 9 && sqlite3_column_int64(fr, c) < 0) {
			snprintf(why, whysz, "its row in files has %s negative", col[c]);
			return -1;
		}
	}
	return 0;
}

hm_trace *hm_partial_trace(hm_partial *p, int idx, int32_t **catev, char *err, size_t errsz)
{
	sqlite3_stmt *fr = NULL;
	blobs b = {0};
	hm_trace *t = NULL;
	int bad = 0;
	char why[512] = "";
	char name[64];
	*catev = NULL;
	p->steps = 0;
	snprintf(name, sizeof name, "trace %d", idx);
	if (p->damaged) {
		snprintf(err, errsz, "%s: the store of %s is damaged: %s", p->path, name, p->damaged);
		return NULL;
	}
	if (sqlite3_prepare_v2(p->d.h, "SELECT path, rank, events, memory_events, host_slices, oom_events, cut_at,"
				       " lost_bytes, why, first_ts_ns FROM files WHERE idx = ? AND status != 'skipped'",
			       -1, &fr, NULL) != SQLITE_OK) {
		snprintf(err, errsz, "%s: %s", p->path, sqlite3_errmsg(p->d.h));
		goto done;
	}
	sqlite3_bind_int(fr, 1, idx);
	if (sqlite3_step(fr) != SQLITE_ROW) {
		snprintf(err, errsz, "%s: no trace %d in it", p->path, idx);
		goto done;
	}
	if (sqlite3_column_type(fr, 0) == SQLITE_TEXT)
		snprintf(name, sizeof name, "%.60s", (const char *)sqlite3_column_text(fr, 0));
	uint64_t sum, stored;
	int has;
	if (row_check(fr, why, sizeof why) || trace_sum(p->d.h, idx, &b, p->size, &sum, &stored, &has, why, sizeof why))
		bad = 1;
	else if (!p->no_checksum && !has)
		bad = 1, snprintf(why, sizeof why, "it has no checksum");
	else if (!p->no_checksum && sum != stored)
		bad = 1, snprintf(why, sizeof why, "the checksum does not match: a byte of it changed since it was written");
	else if (sizes_check(&b, (size_t)sqlite3_column_int64(fr, 3), (size_t)sqlite3_column_int64(fr, 4),
			     (size_t)sqlite3_column_int64(fr, 5), why, sizeof why))
		bad = 1;
	if (!bad) {
		t = get_trace(fr, &b, catev, &bad);
		if (bad)
			snprintf(why, sizeof why, "a column is cut short, or a table of names has a name twice");
		else if (load_check(t, *catev, p->ncats, why, sizeof why))
			bad = 1;
	}
	if (bad) {
		snprintf(err, errsz, "%s: the store of %s is damaged: %s", p->path, name, why);
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
