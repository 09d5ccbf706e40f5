/* partial: the SQLite file --partial and --db write (README "Many machines" documents it
 * table by table): the report's tables for users (files, series, categories per series,
 * aggregations, ranks), and per trace its store (store.h's columns as blobs) with the
 * category of each memory event, which is all hmem merge needs to finish the report as one
 * run would. Plain C, no Lua.
 *
 * Ownership: hm_runinfo belongs to the run that fills it; the writer only reads it. An
 * hm_partial owns its database handle until hm_partial_close; traces it returns are the
 * caller's (hm_trace_free). */
#ifndef HM_PARTIAL_H
#define HM_PARTIAL_H

#include "output.h"
#include "plan.h"

/* 2: the options that shape results are rows of the options table, not one string (issue 24).
 * 3: a snapshot's rows carry their segment and origin, its counts the untimed entries (issue 25).
 * 4: the tables steps, ooms and snapshot_segments (issue 28).
 * 5: an OOM carries how many memory events come before it in its file (issue 26).
 * 6: the steps table says which steps are partial or open (issue 25).
 * 7: a snapshot's segments carry their stream and pool, and its segment lives are stored
 *    (snap.lives, issue 27). */
#define HM_PARTIAL_FORMAT "7"

/* One option of a run that shapes its results (--set, --top, --steps, --from, --to): a row
 * of the options table, its name and its value exactly as given (a --set value may hold
 * any byte but NUL, newlines included). */
typedef struct hm_runopt {
	const char *name, *value;
} hm_runopt;

/* What a partial records besides the report. */
typedef struct hm_runinfo {
	const hm_plan *plan;
	int shard, nshards;       /* 0 and 1 for a run over the whole plan */
	int *file_idx, *skip_idx; /* per report file and per skipped trace: its index in the plan */
	int32_t **catev;          /* per report file: the category id of each memory event, before
				   * any window (-1: zero bytes) */
	size_t *cat_from;         /* nfiles + 1: file i introduced the categories [cat_from[i],
				   * cat_from[i + 1]) (those not seen in earlier files) */
	const hm_runopt *opts;    /* the options that shape results, in a fixed order (each --set
				   * in its command-line order) */
	size_t nopts;
	const char *rules_hash;   /* of the rule file and every module it required */
	int complete;             /* aggregations and done(report) ran: a whole report */
} hm_runinfo;

/* --db and --partial: the report as an SQLite database (serialized, written to f).
 * Returns 0, or HM_EXIT_IO / HM_EXIT_INTERNAL with err. */
int hm_write_db(FILE *f, const hm_report *r, const char *path, char *err, size_t errsz);

/* The category of each memory event of a classified file (before any window cuts its
 * series), -1 for none; the caller frees it. */
int32_t *hm_partial_capture(const hm_file *f);

typedef struct hm_partial hm_partial;

/* Open a partial read-only and defensively, and check that it is one: hmem's tables and
 * nothing else (0 with *out, or an exit code and err). A partial whose store or categories
 * are not hmem's is opened, and each of its traces is then refused as damaged. */
int hm_partial_open(const char *path, hm_partial **out, char *err, size_t errsz);
void hm_partial_close(hm_partial *p);
/* For the fuzz target only: load traces whatever their checksum says, so that the checks
 * behind it (every id and count) are what a changed byte meets. */
void hm_partial_skip_checksum(hm_partial *p);
/* meta's value for key ("" when absent); valid until the next call or close. */
const char *hm_partial_meta(hm_partial *p, const char *key);
/* Its options table (hm_runopt), in order: calls fn for each row (a NULL value is "");
 * -1 when it has no such table or it cannot be read whole. */
int hm_partial_options(hm_partial *p, void (*fn)(void *ctx, const char *name, const char *value), void *ctx);
/* The plan it was made from: fills p (paths, canonical names, sizes, hash from meta). */
void hm_partial_plan(hm_partial *p, hm_plan *plan);
/* Its traces: plan index, and status 0 read, 1 skipped (why, events read before it). Calls
 * fn for each in plan order. */
void hm_partial_each_file(hm_partial *p, void (*fn)(void *ctx, int idx, int skipped, const char *why, int64_t events),
			  void *ctx);
/* The categories file idx introduced, in order: calls fn for each name. */
void hm_partial_new_categories(hm_partial *p, int idx, void (*fn)(void *ctx, const char *name, size_t len), void *ctx);
/* The category names of the partial, by id, as a strtab (the caller frees it). */
void hm_partial_categories(hm_partial *p, hm_strtab *out);
/* The trace of file idx as it was read, and its categories per memory event (ids of
 * hm_partial_categories, malloc'd, the caller frees). NULL with err when it is not
 * there or damaged: its checksum does not match, a count is NULL, negative or not what
 * its column holds, an id is outside its table, a value beyond the store's limits
 * (err: "PARTIAL: the store of TRACE is damaged: what"). Memory and SQLite's work are
 * bounded by the file's size. */
hm_trace *hm_partial_trace(hm_partial *p, int idx, int32_t **catev, char *err, size_t errsz);

#endif
