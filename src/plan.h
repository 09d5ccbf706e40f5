/* plan: the sorted list of trace files one run reads (input.c expands the paths), with
 * their sizes and a hash that shards agree on, and the part of it one shard of N reads.
 * Plain C, no Lua.
 *
 * Ownership: hm_plan_make fills a plan that owns its paths; hm_plan_free frees them. */
#ifndef HM_PLAN_H
#define HM_PLAN_H

#include <stdint.h>
#include <stdio.h>

typedef struct hm_plan {
	char **path;      /* as given (or as found below a directory given), in reading order */
	char **canon;     /* realpath, or the path when it has none */
	int64_t *bytes;   /* file size, -1 when it cannot be looked at */
	int n;
	char hash[17];    /* 16 hex digits over every (path, size), in order */
} hm_plan;

/* Expand paths into p (input.c's order). Returns 0, or an exit code with err. */
int hm_plan_make(char **paths, int npaths, hm_plan *p, char *err, size_t errsz);
void hm_plan_free(hm_plan *p);

/* The shard (0..nshards-1) of every file, into out[p->n]: the largest files first (ties:
 * the earlier in the plan), each to the shard with the fewest bytes so far (ties: the
 * lowest shard), so shards are balanced by size and the same on every machine. */
void hm_plan_assign(const hm_plan *p, int nshards, int *out);

/* "I/N" with 0 <= I < N <= 100000 into *i, *n: 0, or -1. */
int hm_plan_parse_shard(const char *s, int *i, int *n);

/* FNV-1a 64 of len bytes, continuing from h (start with HM_FNV_START). */
#define HM_FNV_START UINT64_C(0xcbf29ce484222325)
uint64_t hm_fnv(uint64_t h, const void *data, size_t len);

/* `hmem plan PATH... [--shard I/N]`: a header line, then "INDEX SHARD BYTES PATH" per file
 * (tab-separated; SHARD only with --shard, of the files that shard reads). */
int hm_plan_main(int argc, char **argv);

#endif
