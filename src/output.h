/* output: the summary table, --json, --timeline and events CSV writers, and output
 * files that appear only when complete. Plain C, no Lua. */
#ifndef HM_OUTPUT_H
#define HM_OUTPUT_H

#include "analyze.h"

#include <stdio.h>
#include <sys/stat.h>

/* A file that could not be read and was skipped (--keep-going). */
typedef struct hm_skip {
	char *path, *why;
	uint64_t events; /* events read before the error */
} hm_skip;

/* One cell of an aggregation result; s is owned by the result. */
typedef struct hm_cell {
	int type; /* hm_vtype of fields.h: nil, int, num, str, bool */
	int64_t i;
	double d;
	char *s;
} hm_cell;

/* A group-by declared with hmem.aggregate: the first nkeys columns are the keys. */
typedef struct hm_agg {
	char *name;
	char **cols;
	size_t ncols, nkeys, nrows;
	hm_cell *cells; /* nrows x ncols */
} hm_agg;

/* Everything the writers report; owned by the caller. */
typedef struct hm_report {
	const char *rules;     /* the rule file, NULL for `hmem events` */
	hm_file **files;
	size_t nfiles;
	const hm_strtab *cats; /* global category names, id 0 "(before trace)" */
	hm_skip *skipped;
	size_t nskipped;
	uint64_t classify_calls, cache_hits;
	hm_agg *aggs;
	size_t naggs;
	size_t top;            /* allocations listed in live_at_peak */
	const char (*colors)[8]; /* category id -> the pack's "#rrggbb" or "" (ncolors of them) */
	size_t ncolors;
	int color;             /* summary: ANSI colour (a terminal that wants it) */
} hm_report;

void hm_agg_free(hm_agg *a);

/* An output file (README "Outputs"). A regular file or a new name (through symlinks, to
 * the file they name) is written under a temporary name in its directory and renamed
 * over it by hm_out_commit, keeping the mode and owner of the file it replaces, so a
 * failed run never leaves a half-written file; a fatal signal removes the temporary
 * file. Anything else (a device, a FIFO, a socket, /dev/stdout, /proc/self/fd/N) is
 * opened and written in place, never replaced. "-" is stdout. */
typedef struct hm_out {
	FILE *f;
	char *path, *tmp; /* tmp NULL: written in place */
	int slot;         /* where the signal handler finds tmp (+ 1; 0: nowhere) */
} hm_out;

int hm_out_open(hm_out *o, const char *path, char *err, size_t errsz);
int hm_out_commit(hm_out *o, char *err, size_t errsz); /* also closes */
void hm_out_abort(hm_out *o);                          /* removes the temporary file */
/* Removes every temporary file being written, from any thread or a signal handler (only
 * unlink: no lock, no allocation); for a run that ends at once (the watchdog's kill). */
void hm_out_remove_tmp(void);

/* Whether writing path would replace (or create) a regular file: 1 with its canonical
 * name in *canon (malloc'd, the caller frees) and *st filled when it exists (st_nlink 0
 * when not); 0 for "-" and for what is written in place. Two outputs, or an output and an
 * input, are the same file when both exist with the same st_dev and st_ino, or their
 * canonical names are equal. */
int hm_out_file_id(const char *path, struct stat *st, char **canon);

/* A JSON string of s[0, n): bytes that are not UTF-8 become U+FFFD; with in_html, '<',
 * '>' and '&' are escaped too, so the text is safe inside an HTML <script> element. */
void hm_json_str(FILE *f, const char *s, size_t n, int in_html);

void hm_write_summary(FILE *f, const hm_report *r);
/* The summary as CSV: one row per series and category (README "Outputs"). */
void hm_write_summary_csv(FILE *f, const hm_report *r);
void hm_write_json(FILE *f, const hm_report *r);
void hm_write_timeline(FILE *f, const hm_report *r);
void hm_write_events(FILE *f, const hm_report *r);

#endif
