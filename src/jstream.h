/* jstream: one JSON text as a stream, never a DOM: its buffer refilled from the source,
 * the top level walked value by value, and an array of events delimited in one pass over
 * 64-byte blocks (jscan), each complete event given to the reader in place or through the
 * pipe to a second thread. What the keys and events mean is the reader's (kineto.c,
 * kevent.c). Plain C, no Lua.
 *
 * Ownership: the stream owns its buffer and containers (s->b) and frees them in
 * hm_jstream_close; while a pipe runs, they belong to the batch the scanner fills (pipe.h).
 * The source, the path and the error buffer are the caller's and outlive the stream. */
#ifndef HM_JSTREAM_H
#define HM_JSTREAM_H

#include "pipe.h"

/* Where a reader's first error goes: "path:offset: what" in msg; later errors are dropped
 * (the first one in file order is the one reported). */
typedef struct hm_jerr {
	const char *path;
	char *msg;
	size_t cap;
	int code, failed; /* code: HM_EXIT_INPUT */
} hm_jerr;

/* Record the error at offset off (fmt has up to two %s, from a and b). */
void hm_jerr_at(hm_jerr *e, uint64_t off, const char *fmt, const char *a, const char *b);

typedef struct hm_jstream hm_jstream;

/* What the reader does with each complete event [s, e) of st->b.buf when no pipe runs (its
 * containers from st->b.tok0 on). */
typedef void (*hm_jstream_event_fn)(void *ud, hm_jstream *st, size_t s, size_t e);

struct hm_jstream {
	hm_src *src;        /* NULL: all the text is in b.buf already */
	uint64_t *progress; /* file bytes consumed, for a progress line (may be NULL; atomic) */
	hm_jbuf b;
	int eof;
	hm_jerr err;
	int top_array;      /* the text is a bare array of events (for the messages) */
	int keep_partial;   /* a cut-off text keeps its complete events (see hm_jstream_events) */
	int truncated;      /* it was cut off: cut_at, lost_bytes, cut_why */
	uint64_t cut_at, lost_bytes, events_at;
	char *cut_why;      /* malloc'd; the caller takes it */
	hm_pipe *pipe;      /* events go to the handler thread; NULL: to event, in place */
	hm_jstream_event_fn event;
	void *ud;
};

/* Read more input; bytes before keep are no longer needed and may be dropped. Returns the
 * shift applied to buffer indices (subtract it from saved indices); sets eof at the end. */
size_t hm_jstream_fill(hm_jstream *st, size_t keep);

/* Skip white space; the next byte without consuming it, or -1 at the end. */
int hm_jstream_peek(hm_jstream *st);

/* Delimit the value starting at b.pos and move past it. With keep, the whole value is in
 * the buffer afterwards at [*start, b.pos). Returns -1 (reported) if the input ends inside. */
int hm_jstream_value(hm_jstream *st, int keep, size_t *start);

/* The array of events at b.pos, from its '[' to past its ']': each element must be an
 * object; each complete one goes to the reader (see event, pipe). events_at is set to the
 * offset after the '['. A text cut inside the array with keep_partial ends it quietly with
 * truncated set. */
void hm_jstream_events(hm_jstream *st);

/* The error for a value at p that is not an event object. */
void hm_jstream_not_an_event(hm_jstream *st, const char *p);

/* The offset of p (in b.buf) in the decompressed JSON. */
static inline uint64_t hm_jstream_off(const hm_jstream *st, const char *p)
{
	return st->b.base + (uint64_t)(p - st->b.buf);
}

/* Free the buffer and containers (the pipe, if any, is finished already). */
void hm_jstream_close(hm_jstream *st);

#endif
