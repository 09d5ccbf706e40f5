/* libFuzzer target over the partial reader (issue 24): a partial is an input format too.
 * The input is the bytes of an SQLite file, written to a temporary file and opened as hmem
 * merge opens a partial (hm_partial_open); then what the merge reads of it (meta, plan,
 * files, categories) and each of its traces, twice: as the merge loads them (checksum
 * verified), and with the checksum skipped (hm_partial_skip_checksum), so that a changed
 * byte meets the checks behind it. A partial must be refused with a message, or each trace
 * refused with one, or loaded with every id inside its table; a loaded trace then goes
 * through hm_analyze, its categories, hm_timeline and the --json and summary writers, as in
 * a merge. No Lua.
 *
 * Built by `make fuzz` (seeds: partials of the real traces and snapshots, made by hmem run
 * --partial); linked with tests/fuzz/replay.c it runs the files it is given (tests/run
 * replays tests/fuzz/regressions-partial/ with it). */
#define _GNU_SOURCE
#include "analyze.h"
#include "fuzz_report.h"
#include "output.h"
#include "partial.h"
#include "timeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char g_path[64];

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_partial: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

static void remove_file(void)
{
	unlink(g_path);
}

/* The input is written to a temporary file of this process (SQLite opens a file by its
 * name, and does not follow /proc/self/fd to a memory file), removed at exit. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	const char *dir = getenv("TMPDIR");
	snprintf(g_path, sizeof g_path, "%.40s/hmem-fuzz-XXXXXX", dir && *dir && strlen(dir) < 40 ? dir : "/tmp");
	int fd = mkstemp(g_path);
	if (fd < 0)
		die("mkstemp failed", g_path);
	close(fd);
	atexit(remove_file);
	return 0;
}

/* Every id of a loaded trace inside its table (what the analysis and writers index by). */
static void check_ids(const hm_trace *t, const int32_t *catev, size_t ncats)
{
	const hm_mem *m = &t->mem;
	for (size_t i = 0; i < m->n; i++)
		if (hm_mem_thread(m, i) >= t->threads.n || catev[i] < -1 || catev[i] >= (int64_t)ncats)
			die("a memory event's thread or category out of range", t->path);
	for (size_t i = 0; i < t->sl.n; i++)
		if (t->sl.name[i] >= t->names.n || t->sl.cat[i] >= t->names.n || t->sl.thread[i] >= t->threads.n)
			die("a host slice's id out of range", t->path);
	for (size_t i = 0; i < t->oom.n; i++)
		if (t->oom.thread[i] >= t->threads.n)
			die("an OOM's thread out of range", t->path);
	for (size_t i = 0; i < t->thread_name_cap; i++)
		if (t->thread_name[i] != UINT32_MAX && t->thread_name[i] >= t->names.n)
			die("a thread's name out of range", t->path);
	const hm_snap *s = t->snap;
	if (!s)
		return;
	for (size_t i = 0; i < m->n; i++)
		if (s->stack[i] != UINT32_MAX && s->stack[i] >= s->stacks.n)
			die("a snapshot entry's stack out of range", t->path);
	for (size_t k = 0; k < s->stacks.n; k++) {
		const uint32_t *ids;
		size_t n = hm_snap_stack(s, (uint32_t)k, &ids);
		for (size_t j = 0; j < n; j++) {
			uint32_t id;
			memcpy(&id, &ids[j], sizeof id);
			if (id >= s->frames.n)
				die("a stack's frame out of range", t->path);
		}
	}
	for (size_t f = 0; f < s->frames.n; f++)
		if (s->frames.len[f] != sizeof(hm_frame) || hm_snap_frame(s, (uint32_t)f).file >= t->names.n ||
		    hm_snap_frame(s, (uint32_t)f).name >= t->names.n)
			die("a frame out of range", t->path);
	for (size_t i = 0; i < s->nooms; i++)
		if ((s->ooms[i].stack != UINT32_MAX && s->ooms[i].stack >= s->stacks.n) || s->ooms[i].mem_at > m->n)
			die("a snapshot OOM out of range", t->path);
}

/* "PARTIAL: ..." with a reason after it. */
static void check_error(const char *err)
{
	size_t n = strlen(g_path);
	if (strncmp(err, g_path, n) || strncmp(err + n, ": ", 2) || !err[n + 2])
		die("a refusal without the partial's name and a reason", err);
}

/* A trace as hm_merge_file hands it on: analysed, each series' categories from catev,
 * timelines, then the writers. */
static void merge_one(hm_trace *t, int32_t *catev, const hm_strtab *cats)
{
	hm_file *f = hm_analyze(t);
	hm_file_given_cats(f, catev);
	for (size_t s = 0; s < f->nseries; s++)
		hm_timeline(&f->series[s], &t->mem, cats->n);
	hm_report rep = fuzz_report(&f, cats, "fuzz");
	fuzz_write_json_summary(&rep);
	hm_file_free(f);
}

typedef struct seen {
	int idx[64];
	int n;
} seen;

static void each(void *ctx, int idx, int skipped, const char *why, int64_t events)
{
	seen *s = ctx;
	if (!why || events < 0)
		die("a file row without its reason or with negative events", NULL);
	if (!skipped && s->n < 64)
		s->idx[s->n++] = idx;
}

static void new_category(void *ctx, const char *name, size_t len)
{
	(void)ctx;
	if (!name || strlen(name) > len)
		die("a category without its text", NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!g_path[0])
		LLVMFuzzerInitialize(NULL, NULL);
	FILE *f = fopen(g_path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		die("cannot write the temporary file", g_path);
	char err[4096] = "";
	hm_partial *p = NULL;
	if (hm_partial_open(g_path, &p, err, sizeof err) != 0) {
		if (getenv("FUZZ_PARTIAL_PRINT"))
			fprintf(stderr, "%s\n", err);
		check_error(err);
		return 0;
	}
	static const char *const keys[] = {"format", "hmem_version", "rules", "rules_hash", "options", "plan_hash",
					   "shard", "classify_calls", "cache_hits", "complete"};
	for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
		if (strlen(hm_partial_meta(p, keys[k])) >= 4096)
			die("a meta value longer than its buffer", keys[k]);
	hm_plan plan;
	hm_partial_plan(p, &plan);
	hm_plan_free(&plan);
	seen s = {{0}, 0};
	hm_partial_each_file(p, each, &s);
	hm_strtab cats;
	hm_partial_categories(p, &cats);
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			hm_partial_skip_checksum(p);
		for (int i = 0; i < s.n; i++) {
			int32_t *catev = NULL;
			hm_partial_new_categories(p, s.idx[i], new_category, NULL);
			hm_trace *t = hm_partial_trace(p, s.idx[i], &catev, err, sizeof err);
			if (!t) {
				if (getenv("FUZZ_PARTIAL_PRINT"))
					fprintf(stderr, "%s\n", err);
				check_error(err);
				if (catev)
					die("a refused trace with categories", err);
				continue;
			}
			check_ids(t, catev, cats.n);
			merge_one(t, catev, &cats);
			free(catev);
		}
	}
	hm_strtab_free(&cats);
	hm_partial_close(p);
	return 0;
}
