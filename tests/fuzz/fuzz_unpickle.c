/* libFuzzer target over the data-only unpickler and the snapshot reader (issue 18). The
 * input is a pickle's bytes (a leading PROTO 4 is added when the input has none, so most
 * inputs reach the opcodes). hm_pk_load must give a tree or fail with "fuzz:offset: what"
 * (offset inside the input); a tree's every node must be readable, strings NUL-terminated,
 * nesting within HM_PK_MAX_DEPTH. hm_trace_parse then reads the same bytes as a snapshot: it
 * must fail with a position, or leave columns that point inside their tables.
 *
 * Built by `make fuzz`; linked with tests/fuzz/replay.c it runs the files it is given (the
 * regression replay of tests/run over tests/fuzz/regressions/snap-*). */
#include "trace.h"
#include "unpickle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(const char *err, size_t size)
{
	char *end;
	unsigned long long off = strncmp(err, "fuzz:", 5) ? 0 : strtoull(err + 5, &end, 10);
	if (strncmp(err, "fuzz:", 5) || end == err + 5 || strncmp(end, ": ", 2) || !end[2] || off > size) {
		fprintf(stderr, "fuzz_unpickle: error without a valid position: %s\n", err);
		abort();
	}
}

/* Every node below v, at most *budget visits (shared nodes can make a DAG's paths many). */
static void walk(const hm_pk *p, hm_pkv v, int depth, long *budget)
{
	if (--*budget < 0)
		return;
	if (depth > HM_PK_MAX_DEPTH + 1)
		abort();
	int64_t i;
	double d;
	size_t n;
	const char *s;
	switch (hm_pk_type(v)) {
	case HM_PK_NONE: return;
	case HM_PK_BOOL: case HM_PK_INT: case HM_PK_BIGINT:
		if (hm_pk_int(p, v, &i) < 0 || hm_pk_num(p, v, &d) < 0)
			abort();
		return;
	case HM_PK_FLOAT:
		if (hm_pk_num(p, v, &d) < 0 || hm_pk_int(p, v, &i) != -1)
			abort();
		return;
	case HM_PK_STR:
		s = hm_pk_str(p, v, &n);
		if (!s || s[n] != 0)
			abort();
		return;
	case HM_PK_LIST: case HM_PK_TUPLE:
		for (size_t k = 0; k < hm_pk_len(p, v); k++)
			walk(p, hm_pk_item(p, v, k), depth + 1, budget);
		return;
	case HM_PK_DICT:
		for (size_t k = 0; k < hm_pk_len(p, v); k++) {
			if (hm_pk_type(hm_pk_key(p, v, k)) >= HM_PK_LIST)
				abort();
			walk(p, hm_pk_value(p, v, k), depth + 1, budget);
		}
		return;
	default: abort();
	}
}

static void check_store(const hm_trace *t)
{
	const hm_mem *m = &t->mem;
	const hm_snap *s = t->snap;
	if (!s || s->cap < m->n || m->n > t->events + 65536)
		abort();
	for (size_t i = 0; i < m->n; i++) {
		if (hm_mem_thread(m, i) >= t->threads.n || (s->stack[i] != UINT32_MAX && s->stack[i] >= s->stacks.n) ||
		    ((uint32_t)hm_pack_get(&s->compile_ctx, i) != UINT32_MAX && (uint32_t)hm_pack_get(&s->compile_ctx, i) >= t->names.n) ||
		    ((uint32_t)hm_pack_get(&s->user_meta, i) != UINT32_MAX && (uint32_t)hm_pack_get(&s->user_meta, i) >= t->names.n))
			abort();
		if (s->stack[i] != UINT32_MAX) {
			const uint32_t *ids;
			size_t n = hm_snap_stack(s, s->stack[i], &ids);
			for (size_t k = 0; k < n; k++) {
				if (ids[k] >= s->frames.n)
					abort();
				hm_frame f = hm_snap_frame(s, ids[k]);
				if (f.file >= t->names.n || f.name >= t->names.n)
					abort();
			}
			uint32_t uf = s->stack_frame[s->stack[i]];
			if (uf != UINT32_MAX && uf >= t->names.n)
				abort();
		}
	}
	for (size_t i = 0; i < t->sl.n; i++)
		if (t->sl.name[i] >= t->names.n || t->sl.dur[i] < 0)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size + 2);
	if (!buf)
		return 0;
	size_t n = size;
	if (size && data[0] == 0x80) {
		memcpy(buf, data, size);
	} else {
		buf[0] = 0x80, buf[1] = 4;
		memcpy(buf + 2, data, size);
		n += 2;
	}
	char err[1024] = "";
	hm_pk *p = hm_pk_load("fuzz", NULL, (const char *)buf, n, NULL, err, sizeof err);
	if (!p) {
		check_error(err, n);
	} else {
		long budget = 1 << 20;
		walk(p, hm_pk_root(p), 0, &budget);
		hm_pk_free(p);
	}
	hm_trace *t = hm_trace_parse("fuzz", (const char *)buf, n, err, sizeof err);
	if (!t)
		check_error(err, n);
	else
		check_store(t), hm_trace_free(t);
	free(buf);
	return 0;
}
