/* The Kineto reader (see kineto.h): the top level of the file, its metadata, and the threads
 * its events are parsed on; one event is kevent.c's. */
#include "kineto.h"
#include "kevent.h"
#include "kmeta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY(lit) (klen == sizeof lit - 1 && memcmp(key, lit, klen) == 0)

/* The top level's state: the trace, and the scratch its escaped keys are decoded in. */
typedef struct top {
	hm_trace *t;
	hm_jscan_scratch scratch;
} top;

/* The events array at b.pos, into the store. */
static void events(top *k, hm_jstream *st)
{
	hm_trace *t = k->t;
	t->has_trace_events = 1;
	hm_jstream_events(st);
	t->events_at = st->events_at;
	if (st->truncated)
		t->cut_at = st->cut_at, t->lost_bytes = st->lost_bytes, t->cut_why = st->cut_why, st->cut_why = NULL;
}

/* One member of the top-level object, at its key. Returns -1 when the walk stops. */
static int top_member(top *k, hm_jstream *st)
{
	hm_jbuf *r = &st->b;
	size_t ks, vs;
	if (hm_jstream_value(st, 1, &ks) < 0)
		return -1;
	size_t klen = r->pos - ks - 2;
	const char *key = r->buf + ks + 1;
	int is_events = KEY("traceEvents"), is_dist = KEY("distributedInfo"), is_props = KEY("deviceProperties");
	if (!is_events && !is_dist && !is_props && hm_kevent_key(&k->scratch, &key, &klen))
		is_events = KEY("traceEvents"), is_dist = KEY("distributedInfo"), is_props = KEY("deviceProperties");
	if (hm_jstream_peek(st) != ':') {
		hm_jerr_at(&st->err, r->base + r->pos, "expected ':' after a key", 0, 0);
		return -1;
	}
	r->pos++;
	int c = hm_jstream_peek(st);
	if (c < 0) {
		hm_jerr_at(&st->err, r->base + r->pos, "the file ends after a key (cut-off JSON)", 0, 0);
		return -1;
	}
	if (is_events && c == '[' && k->t->has_trace_events) {
		/* JSON parsers keep the last of duplicate keys, but the events of the first
		 * array are streamed into the columns already: refuse rather than mix both. */
		hm_jerr_at(&st->err, r->base + r->pos, "a second traceEvents array (the events of the first are read already)", 0, 0);
		return -1;
	} else if (is_events && c == '[') {
		events(k, st);
		if (st->truncated)
			return -1;
	} else if ((is_dist && c == '{') || (is_props && c == '[')) {
		if (hm_jstream_value(st, 1, &vs) == 0) {
			char why[128];
			const char *bad = (is_dist ? hm_kmeta_rank : hm_kmeta_devices)(k->t, &k->scratch, r->buf + vs, r->buf + r->pos,
										   why, sizeof why);
			if (bad)
				hm_jerr_at(&st->err, r->base + (uint64_t)(bad - r->buf), "%s", why, 0);
		}
	} else if (is_events && c != 'n') {
		hm_jerr_at(&st->err, r->base + r->pos, "traceEvents is not an array", 0, 0);
	} else if (is_events) {
		/* null is no events; "nope" is no null (issue 11) */
		if (hm_jstream_value(st, 1, &vs) == 0 && (r->pos - vs != 4 || memcmp(r->buf + vs, "null", 4) != 0))
			hm_jerr_at(&st->err, r->base + vs, "traceEvents is not valid JSON (expected an array or null)", 0, 0);
	} else {
		hm_jstream_value(st, 0, &vs);
	}
	return st->err.failed ? -1 : 0;
}

/* The top level: an object with traceEvents (and distributedInfo), or a bare array of
 * events (2021 traces and some tools). */
static void parse_top(top *k, hm_jstream *st)
{
	hm_jbuf *r = &st->b;
	/* The first read may be short (a gzip member of two bytes): a BOM is only seen whole. */
	while (r->len - r->pos < 3 && !st->eof && !st->err.failed)
		hm_jstream_fill(st, r->pos);
	if (r->len - r->pos >= 3 && memcmp(r->buf + r->pos, "\xef\xbb\xbf", 3) == 0)
		r->pos += 3;
	int c = hm_jstream_peek(st);
	if (c < 0) {
		if (!st->err.failed)
			hm_jerr_at(&st->err, 0, "the file is empty (no JSON in it)", 0, 0);
		return;
	}
	if (c == '[') {
		st->top_array = 1;
		k->t->top_array = 1;
		events(k, st);
		if (st->truncated)
			return;
	} else if (c == '{') {
		r->pos++;
		c = hm_jstream_peek(st);
		if (c == '}')
			r->pos++;
		while (c != '}') {
			if (c != '"') {
				hm_jerr_at(&st->err, r->base + r->pos, c < 0 ? "the file ends inside the top-level object (cut-off JSON)"
									    : "expected a key string in the top-level object", 0, 0);
				return;
			}
			if (top_member(k, st) < 0)
				return;
			c = hm_jstream_peek(st);
			if (c == ',') {
				r->pos++;
				c = hm_jstream_peek(st);
			} else if (c == '}') {
				r->pos++;
			} else {
				hm_jerr_at(&st->err, r->base + r->pos, c < 0 ? "the file ends inside the top-level object (cut-off JSON)"
									    : "expected ',' or '}' in the top-level object", 0, 0);
				return;
			}
		}
	} else {
		hm_jerr_at(&st->err, r->base + r->pos, "not a JSON trace: expected '{' or '[' at the start", 0, 0);
		return;
	}
	if (!st->err.failed && hm_jstream_peek(st) >= 0)
		hm_jerr_at(&st->err, r->base + r->pos, "unexpected data after the end of the JSON value", 0, 0);
}

int hm_kineto_read(hm_trace *t, const hm_read_in *in, char *err, size_t errsz, int *code)
{
	hm_jstream st = {0};
	st.err = (hm_jerr){in->path, err, errsz, 0, 0};
	st.progress = in->progress;
	st.keep_partial = in->keep_partial;
	top k = {t, {0}};
	hm_kevent *ev = hm_kevent_new(t, &st.err), *hev = NULL; /* the caller's thread; the handler's */
	hm_jerr herr = {in->path, NULL, errsz, 0, 0};
	st.event = hm_kevent_on_event, st.ud = ev;
	if (in->src) {
		/* an event takes 256 bytes or more in the profiler's layout */
		st.src = in->src;
		hm_store_reserve(t, hm_src_text_size(in->src) / 256);
		hm_jstream_fill(&st, 0);
	} else {
		st.eof = 1;
		st.b.cap = in->len + HM_JSCAN_PAD;
		st.b.buf = hm_xcalloc(st.b.cap, 1);
		memcpy(st.b.buf, in->text, in->len);
		st.b.len = in->len;
	}
	if (in->src && in->threads > 1 && !st.err.failed && !st.eof) {
		hev = hm_kevent_new(t, &herr);
		herr.msg = hm_xcalloc(1, errsz);
		hm_pipe_ops ops = {hm_kevent_walk, HM_KEVENT_WORDS, ev, hm_kevent_handle, hev};
		st.pipe = hm_pipe_start(in->src, &ops);
		if (!st.pipe)
			free(herr.msg);
	}
	parse_top(&k, &st);
	if (st.pipe) {
		hm_pipe_finish(st.pipe, &st.b);
		if (herr.failed) { /* its error comes first in file order */
			st.err.failed = 1, st.err.code = herr.code;
			snprintf(err, errsz, "%s", herr.msg);
		}
		free(herr.msg);
	}
	hm_kevent_free(hev);
	hm_kevent_free(ev);
	free(k.scratch.buf);
	free(st.cut_why);
	hm_jstream_close(&st);
	if (st.err.failed) {
		*code = st.err.code;
		return -1;
	}
	return 0;
}
