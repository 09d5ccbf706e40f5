/* libFuzzer target over the JSON reader alone: hm_trace_parse on in-memory text (issue 6,
 * "Fuzzing"). The reader must load the input or fail with "name:offset: what"; anything
 * else (a sanitizer report, a crash, a hang) is a bug. The scanning helpers are checked on
 * the same bytes without threads (issue 13): the block classifier the CPU picks agrees with
 * the baseline one, and so does its scan of strings and brackets (issue 29), the fast
 * number paths agree with the general parser, and a member walk stays inside its object.
 *
 * Built by `make fuzz` with -fsanitize=fuzzer,address,undefined. Linked with
 * tests/fuzz/replay.c instead of libFuzzer, it runs files given on the command line (the
 * regression replay of tests/run). */
#include "jscan.h"
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

static void count_member(void *ud, const char *key, size_t klen, hm_slice v)
{
	(void)ud;
	if (!key || v.q < v.p || (klen && !key))
		abort();
}

static void check_jscan(const uint8_t *data, size_t size)
{
	char *buf = calloc(1, size + HM_JSCAN_PAD);
	if (!buf)
		abort();
	memcpy(buf, data, size);
	hm_jscan_blk blk[4];
	size_t nb = size / 64 < 4 ? size / 64 : 4;
	hm_jscan_pick_classify()((const unsigned char *)buf, nb, blk);
	for (size_t k = 0; k < nb; k++) {
		hm_jscan_blk b = hm_jscan_classify64((const unsigned char *)buf + 64 * k);
		if (b.quote != blk[k].quote || b.bslash != blk[k].bslash || b.bracket != blk[k].bracket || b.open != blk[k].open)
			abort();
	}
	/* the block scan with strings followed (issue 29): the picked one and the baseline give
	 * the same brackets, the string state carried the same way through every block */
	hm_jscan_brk pb[4], bb[4];
	hm_jscan_carry pc = {0, 0}, bc = {0, 0};
	uint64_t busy = nb ? hm_jscan_pick_brackets()((const unsigned char *)buf, nb, pb, &pc) : 0;
	for (size_t k = 0; k < nb; k++) /* one block a call: the carry between calls */
		if (hm_jscan_brackets_named("base")((const unsigned char *)buf + 64 * k, 1, bb + k, &bc) != (bb[k].bracket != 0))
			abort();
	for (size_t k = 0; k < nb; k++)
		if (pb[k].bracket != bb[k].bracket || pb[k].open != bb[k].open || (busy >> k & 1) != (bb[k].bracket != 0))
			abort();
	if (nb && busy >> nb)
		abort();
	if (pc.esc != bc.esc || pc.str != bc.str)
		abort();
	if (size && size < 40) {
		int64_t fast = 0, gen = 0;
		const char *ef = hm_jscan_ns(buf, buf + size, &fast), *eg = hm_num_i64(buf, size, 3, 1, &gen);
		if (!ef != !eg || (!ef && fast != gen))
			abort();
		ef = hm_jscan_int(buf, buf + size, &fast), eg = hm_num_i64(buf, size, 0, 0, &gen);
		if (!ef != !eg || (!ef && fast != gen))
			abort();
	}
	/* a complete object (its last byte a '}' no string hides: the object the scanner would
	 * hand over is checked by the reader; here only that the walk stays inside) */
	if (size >= 2 && buf[0] == '{' && buf[size - 1] == '}') {
		const char *bad = hm_jscan_members(buf, buf + size, count_member, NULL);
		if (bad && (bad < buf || bad > buf + size))
			abort();
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_jscan(data, size);
	char err[1024] = "";
	hm_trace *t = hm_trace_parse("fuzz", (const char *)data, size, err, sizeof err);
	if (!t) {
		check_error(err, size);
		return 0;
	}
	/* What a successful load promises its users (analyze, the writers). */
	const hm_mem *m = &t->mem;
	for (size_t i = 0; i < m->n; i++)
		if (hm_mem_thread(m, i) >= t->threads.n)
			abort();
	const hm_slices *o = &t->sl;
	for (size_t i = 0; i < o->n; i++)
		if (o->name[i] >= t->names.n || o->cat[i] >= t->names.n || o->thread[i] >= t->threads.n || o->dur[i] < 0)
			abort();
	/* A trace's memory events and slices are events of the file. A snapshot adds, to its
	 * entries, rows of its own: a zero-byte start per device and a row per live block (each
	 * at least one byte of the pickle), which no count of the file's events holds. */
	if (t->snap ? m->n > t->snap->entries + size : m->n + o->n > t->events)
		abort();
	hm_trace_free(t);
	return 0;
}
