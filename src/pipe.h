/* pipe: the hand-off of events from the thread that finds them (the scanner, the caller's
 * thread) to a thread that parses them (the handler), in batches, in file order. Knows
 * buffers and event boundaries only; what an event means is the reader's, through
 * hm_pipe_ops. Plain C, no Lua.
 *
 * Ownership: a batch (a buffer, the containers found in it, and its event records) belongs
 * to one party at a time: the free list, the scanner, the queue of full batches, or the
 * handler; only its owner touches it (pipe.c states the rule in full and asserts it in
 * debug builds). While the scanner fills a batch, that batch's buffer and containers are
 * the scanner's hm_jbuf: hm_pipe_publish and hm_pipe_pass_on swap them for a free batch's.
 * Buffers taken from the source (hm_src_take) go back to it once parsed (hm_src_give). */
#ifndef HM_PIPE_H
#define HM_PIPE_H

#include "input.h"
#include "jscan.h"

#include <stddef.h>
#include <stdint.h>

/* The scanner's buffer: the JSON bytes [0, len) at offset base of the decompressed text,
 * read up to pos, with HM_JSCAN_PAD readable bytes after len; and the depth-1 containers of
 * the events in it, tok[0, ntok), the current event's from tok0 on. */
typedef struct hm_jbuf {
	char *buf;
	size_t cap, len, pos;
	uint64_t base;
	hm_jtok *tok;
	size_t ntok, tokcap, tok0;
} hm_jbuf;

/* What the reader does with an event. The event is [s, e) of buf (buf[0] at offset base of
 * the JSON), complete, with its depth-1 containers tok[0, ntok). */
typedef struct hm_pipe_ops {
	/* On the scanner's thread, while the handler lags (see pipe.c): check and walk the
	 * event's members into out[0, words); -1 when it is invalid (the walk reported it). */
	int (*walk)(void *ud, const char *buf, uint64_t base, size_t s, size_t e, const hm_jtok *tok, size_t ntok,
		    uint32_t *out);
	unsigned words;
	void *walk_ud;
	/* On the handler's thread, in file order: parse the event, or take walk's out (walked;
	 * NULL when it was not walked). Returns -1 when the reader failed: later events are
	 * dropped and the scanner stops at its next hand-off. */
	int (*handle)(void *ud, const char *buf, uint64_t base, size_t s, size_t e, const hm_jtok *tok, size_t ntok,
		      const uint32_t *walked);
	void *handle_ud;
} hm_pipe_ops;

typedef struct hm_pipe hm_pipe;

/* Start the handler thread over src (whose buffers it gives back). The scanner's hm_jbuf
 * becomes the first batch. NULL when no thread could start: the reader parses in place.
 * ops is copied. */
hm_pipe *hm_pipe_start(hm_src *src, const hm_pipe_ops *ops);

/* The event [s, e) of b->buf is complete, its containers from b->tok0 on: record it in the
 * current batch. Returns -1 when the scanner walked it and it is invalid. */
int hm_pipe_event(hm_pipe *p, hm_jbuf *b, size_t s, size_t e);

/* The current batch holds events (and so must be published before its buffer is reused). */
int hm_pipe_pending(const hm_pipe *p);

/* The scanner needs more room: publish the current batch (b->buf with its events) and go on
 * in a free one, holding the bytes of b->buf from keep on (moved to the start of the new
 * buffer: the caller shifts its indices by keep) and the current event's containers.
 * Returns 1 when the handler has failed (the scanner stops; the handler's error is the one
 * reported). */
int hm_pipe_publish(hm_pipe *p, hm_jbuf *b, size_t keep);

/* b->buf is done with, its last bytes copied into nb (a buffer taken from the source, of
 * ncap bytes), which becomes b->buf: publish the current batch with b->buf (given back to
 * the source once parsed). Returns as hm_pipe_publish. */
int hm_pipe_pass_on(hm_pipe *p, hm_jbuf *b, char *nb, size_t ncap);

/* The last events (those in b), then wait for the handler and free every batch, b's buffer
 * and containers included (b is left empty). */
void hm_pipe_finish(hm_pipe *p, hm_jbuf *b);

#endif
