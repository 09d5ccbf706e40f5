/* Reading a file: open it, choose the reader by the first decoded bytes, run it, and name
 * the rank (see trace.h). */
#include "trace.h"
#include "kineto.h"
#include "snapshot.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The input formats, by the first bytes of their decoded text; the first whose magic
 * starts the text reads it. The last one, with no magic, takes anything else (and says
 * what it expected). A new format: its magic and reader above it. */
static const struct reader {
	const char *name;
	const char *magic;
	size_t nmagic;
	hm_reader_fn read;
	int threads; /* the threads it reads on at most; gzip inflates on one more if there is one */
} readers[] = {
	{"PyTorch memory snapshot (pickle)", "\x80", 1, hm_snapshot_read, 1},
	{"pickle of protocol 0 or 1", "(", 1, hm_snapshot_read, 1}, /* (refused there by name) */
	{"pickle of protocol 1", "}", 1, hm_snapshot_read, 1},
	{"pickle of protocol 1", "]", 1, hm_snapshot_read, 1},
	{"Kineto JSON trace", "", 0, hm_kineto_read, 2},
};

/* Whether any reader has magic bytes (else the source is not peeked: what is read, and
 * where reads end, stay as the one reader makes them). */
static int any_magic(void)
{
	for (size_t i = 0; i < sizeof readers / sizeof *readers; i++)
		if (readers[i].nmagic)
			return 1;
	return 0;
}

static const struct reader *pick(const unsigned char *head, size_t n)
{
	size_t i = 0;
	while (i + 1 < sizeof readers / sizeof *readers &&
	       !(readers[i].nmagic <= n && memcmp(head, readers[i].magic, readers[i].nmagic) == 0))
		i++;
	return &readers[i];
}

int64_t hm_trace_rank_from_name(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	int64_t rank = HM_NONE;
	for (const char *p = base; (p = strstr(p, "rank")); p += 4) {
		if ((p[4] == '-' || p[4] == '_') && isdigit((unsigned char)p[5])) {
			int64_t v = 0;
			for (const char *q = p + 5; isdigit((unsigned char)*q) && v < 100000000; q++)
				v = v * 10 + (*q - '0');
			rank = v;
		}
	}
	return rank;
}

static hm_trace *run(const hm_read_in *in, const unsigned char *head, size_t nhead, char *err, size_t errsz, int *code,
		     uint64_t *lost)
{
	hm_trace *t = hm_store_new(in->path);
	int rc = 0;
	const struct reader *r = pick(head, nhead);
	/* A thread of its own for inflating only where it has a core: on two, a third busy
	 * thread took turns with the other two and made the read slower (README "Performance") */
	if (in->src && in->threads > r->threads)
		hm_src_inflate_on_thread(in->src);
	int failed = r->read(t, in, err, errsz, code ? code : &rc) != 0;
	if (lost)
		*lost = failed ? t->events : 0;
	if (failed) {
		hm_store_free(t);
		return NULL;
	}
	if (t->rank == HM_NONE)
		t->rank = hm_trace_rank_from_name(in->path);
	return t;
}

hm_trace *hm_trace_read(const char *path, char *err, size_t errsz, int *code)
{
	return hm_trace_read_counted(path, err, errsz, code, NULL, NULL);
}

hm_trace *hm_trace_read_counted(const char *path, char *err, size_t errsz, int *code, uint64_t *lost, uint64_t *progress)
{
	hm_read_opts o = {0, progress, 2};
	return hm_trace_read_opts(path, &o, err, errsz, code, lost);
}

hm_trace *hm_trace_read_opts(const char *path, const hm_read_opts *o, char *err, size_t errsz, int *code, uint64_t *lost)
{
	if (lost)
		*lost = 0;
	hm_src *src = hm_src_open_threads(path, 0, err, errsz); /* inflating on a thread: run() */
	if (!src) {
		*code = HM_EXIT_IO;
		return NULL;
	}
	const unsigned char *head = NULL;
	size_t nhead = any_magic() ? hm_src_peek(src, &head) : 0;
	hm_read_in in = {path, src, NULL, 0, o->keep_partial, o->threads, o->progress};
	hm_trace *t = run(&in, head, nhead, err, errsz, code, lost);
	hm_src_close(src);
	return t;
}

hm_trace *hm_trace_parse(const char *name, const char *text, size_t len, char *err, size_t errsz)
{
	hm_read_in in = {name, NULL, text, len, 0, 1, NULL};
	return run(&in, (const unsigned char *)text, len, err, errsz, NULL, NULL);
}

void hm_trace_free(hm_trace *t)
{
	hm_store_free(t);
}
