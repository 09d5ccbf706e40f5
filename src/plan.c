/* The plan shards agree on (plan.h). */
#define _GNU_SOURCE /* qsort_r */
#include "plan.h"
#include "input.h"
#include "util.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

uint64_t hm_fnv(uint64_t h, const void *data, size_t len)
{
	const unsigned char *b = data;
	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * UINT64_C(0x100000001b3);
	return h;
}

int hm_plan_make(char **paths, int npaths, hm_plan *p, char *err, size_t errsz)
{
	*p = (hm_plan){0};
	int rc = hm_input_expand(paths, npaths, &p->path, &p->n, err, errsz);
	if (rc != 0)
		return rc == -2 ? HM_EXIT_INPUT : HM_EXIT_IO;
	p->canon = hm_xcalloc((size_t)p->n + 1, sizeof *p->canon);
	p->bytes = hm_xcalloc((size_t)p->n + 1, sizeof *p->bytes);
	uint64_t h = HM_FNV_START;
	for (int i = 0; i < p->n; i++) {
		struct stat st;
		char *c = realpath(p->path[i], NULL);
		p->canon[i] = c ? c : hm_xstrdup(p->path[i]);
		p->bytes[i] = stat(p->path[i], &st) == 0 ? (int64_t)st.st_size : -1;
		h = hm_fnv(h, p->path[i], strlen(p->path[i]) + 1);
		h = hm_fnv(h, &p->bytes[i], sizeof p->bytes[i]);
	}
	snprintf(p->hash, sizeof p->hash, "%016" PRIx64, h);
	return 0;
}

void hm_plan_free(hm_plan *p)
{
	for (int i = 0; i < p->n; i++)
		free(p->path[i]), free(p->canon[i]);
	free(p->path), free(p->canon), free(p->bytes);
	*p = (hm_plan){0};
}

static int by_size(const void *a, const void *b, void *ctx)
{
	const hm_plan *p = ctx;
	int i = *(const int *)a, j = *(const int *)b;
	int64_t x = p->bytes[i], y = p->bytes[j];
	return x != y ? (x < y ? 1 : -1) : (i > j) - (i < j);
}

void hm_plan_assign(const hm_plan *p, int nshards, int *out)
{
	int *order = hm_xcalloc((size_t)p->n + 1, sizeof *order);
	int64_t *load = hm_xcalloc((size_t)nshards, sizeof *load);
	for (int i = 0; i < p->n; i++)
		order[i] = i;
	qsort_r(order, (size_t)p->n, sizeof *order, by_size, (void *)p);
	for (int k = 0; k < p->n; k++) {
		int best = 0;
		for (int s = 1; s < nshards; s++)
			if (load[s] < load[best])
				best = s;
		out[order[k]] = best;
		load[best] += p->bytes[order[k]] > 0 ? p->bytes[order[k]] : 0;
	}
	free(order);
	free(load);
}

int hm_plan_parse_shard(const char *s, int *i, int *n)
{
	char *end;
	if (!s || strspn(s, "0123456789/") != strlen(s))
		return -1;
	long a = strtol(s, &end, 10);
	if (end == s || *end != '/' || !end[1])
		return -1;
	long b = strtol(end + 1, &end, 10);
	if (*end || b < 1 || b > 100000 || a < 0 || a >= b)
		return -1;
	*i = (int)a, *n = (int)b;
	return 0;
}

/* A path in a plan line, whose fields are tab-separated and one line per file: a tab, a
 * line break and the backslash itself written \t, \n and \\, other control characters
 * \xNN (hm_esc, as on the terminal), so no file name forges a line or a field (issue 24). */
static void put_path(FILE *f, const char *s)
{
	while (*s) {
		size_t n = strcspn(s, "\\\t\n"), len;
		char *t = hm_esc(s, n, 0, &len);
		fwrite(t, 1, len, f);
		free(t);
		s += n;
		if (*s)
			fputs(*s == '\t' ? "\\t" : *s == '\n' ? "\\n" : "\\\\", f), s++;
	}
}

int hm_plan_main(int argc, char **argv)
{
	char err[8192], **paths = hm_xcalloc((size_t)argc, sizeof *paths);
	const char *shard = NULL;
	int npaths = 0, si = 0, sn = 0;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--shard") && i + 1 < argc)
			shard = argv[++i];
		else if (argv[i][0] == '-' && argv[i][1]) {
			free(paths);
			hm_eprintf("hmem: plan takes PATH... and --shard I/N, not '%s'\nTry 'hmem --help'.\n", argv[i]);
			return HM_EXIT_USAGE;
		} else
			paths[npaths++] = argv[i];
	}
	if (!npaths || (shard && hm_plan_parse_shard(shard, &si, &sn))) {
		free(paths);
		hm_eprintf("hmem: %s\nTry 'hmem --help'.\n", npaths ? "--shard needs I/N with 0 <= I < N"
								     : "plan: no trace file or directory given");
		return HM_EXIT_USAGE;
	}
	hm_plan p;
	int rc = hm_plan_make(paths, npaths, &p, err, sizeof err);
	free(paths);
	if (rc != 0) {
		hm_eprintf("hmem: %s\n", err);
		return rc;
	}
	int *of = hm_xcalloc((size_t)p.n + 1, sizeof *of);
	if (sn)
		hm_plan_assign(&p, sn, of);
	int64_t total = 0;
	for (int i = 0; i < p.n; i++)
		total += p.bytes[i] > 0 ? p.bytes[i] : 0;
	printf("# hmem plan %s: %d files, %" PRId64 " bytes\n", p.hash, p.n, total);
	for (int i = 0; i < p.n; i++)
		if (!sn || of[i] == si) {
			printf("%d\t", i);
			if (sn)
				printf("%d/%d\t", of[i], sn);
			printf("%" PRId64 "\t", p.bytes[i]);
			put_path(stdout, p.path[i]);
			putchar('\n');
		}
	free(of);
	hm_plan_free(&p);
	return fflush(stdout) == 0 ? HM_EXIT_OK : HM_EXIT_IO;
}
