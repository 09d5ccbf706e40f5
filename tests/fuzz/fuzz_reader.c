/* libFuzzer target over the JSON reader alone: hm_trace_parse on in-memory text (issue 6,
 * "Fuzzing"). The reader must load the input or fail with "name:offset: what"; anything
 * else (a sanitizer report, a crash, a hang) is a bug.
 *
 * Built by `make fuzz` with -fsanitize=fuzzer,address,undefined. Linked with
 * tests/fuzz/replay.c instead of libFuzzer, it runs files given on the command line (the
 * regression replay of tests/run). */
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A failure must say where: the message starts with the name, a colon, an offset within
 * the text (or at its end) and ": ". */
static void check_error(const char *err, size_t size)
{
	const char *name = "fuzz:";
	if (strncmp(err, name, strlen(name)) != 0)
		goto bad;
	char *end;
	unsigned long long off = strtoull(err + strlen(name), &end, 10);
	if (end == err + strlen(name) || strncmp(end, ": ", 2) != 0 || end[2] == 0 || off > size)
		goto bad;
	return;
bad:
	fprintf(stderr, "fuzz_reader: error without a valid position: %s\n", err);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[1024] = "";
	hm_trace *t = hm_trace_parse("fuzz", (const char *)data, size, err, sizeof err);
	if (!t) {
		check_error(err, size);
		return 0;
	}
	/* What a successful load promises its users (analyze, the writers). */
	const hm_mem *m = &t->mem;
	for (size_t i = 0; i < m->n; i++)
		if (m->thread[i] >= t->threads.n)
			abort();
	const hm_slices *o = &t->sl;
	for (size_t i = 0; i < o->n; i++)
		if (o->name[i] >= t->names.n || o->cat[i] >= t->names.n || o->thread[i] >= t->threads.n || o->dur[i] < 0)
			abort();
	if (m->n + o->n > t->events)
		abort();
	hm_trace_free(t);
	return 0;
}
