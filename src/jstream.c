/* The JSON stream (see jstream.h): each element of the events array is first delimited (its
 * bytes kept in one buffer, however the input was split) and then parsed in place by the
 * reader, on a second thread when there is one (pipe.c). Values the reader does not need
 * are skipped. */
#include "jstream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAD HM_JSCAN_PAD

void hm_jerr_at(hm_jerr *e, uint64_t off, const char *fmt, const char *a, const char *b)
{
	if (e->failed)
		return;
	e->failed = 1;
	e->code = HM_EXIT_INPUT;
	char what[256];
	snprintf(what, sizeof what, fmt, a ? a : "", b ? b : "");
	snprintf(e->msg, e->cap, "%s:%llu: %s", e->path, (unsigned long long)off, what);
}

/* The handler failed: its error is the one reported, the scanner stops. */
static void stopped(hm_jstream *st)
{
	st->err.failed = 1;
	st->eof = 1;
}

size_t hm_jstream_fill(hm_jstream *st, size_t keep)
{
	hm_jbuf *r = &st->b;
	if (!st->src || st->eof) {
		st->eof = 1;
		return 0;
	}
	char *nb;
	size_t ncap, at, tail = r->len - keep;
	long got;
	if (r->len >= HM_SRC_HEADROOM && tail <= HM_SRC_HEADROOM && (got = hm_src_take(st->src, &nb, &ncap, &at)) > 0) {
		/* Inflated bytes arrive in a buffer of their own: the kept bytes go in front of
		 * them, and nothing else is copied. The full buffer goes to the handler with its
		 * events, or back to the source. */
		size_t to = at - tail, shift = keep - to;
		memcpy(nb + to, r->buf + keep, tail);
		if (st->pipe && hm_pipe_pending(st->pipe)) {
			if (hm_pipe_pass_on(st->pipe, r, nb, ncap))
				stopped(st);
		} else {
			hm_src_give(st->src, r->buf, r->cap);
			r->buf = nb, r->cap = ncap;
		}
		r->len = at + (size_t)got;
		r->pos -= shift;
		r->base += shift;
		if (st->progress)
			__atomic_store_n(st->progress, hm_src_file_pos(st->src), __ATOMIC_RELAXED);
		return shift;
	}
	size_t shift = keep;
	if (st->pipe && hm_pipe_pending(st->pipe)) {
		/* the buffer goes to the handler with its events; the kept bytes come along */
		if (hm_pipe_publish(st->pipe, r, keep))
			stopped(st);
		r->len -= shift;
		r->pos -= shift;
		r->base += shift;
	} else if (shift) {
		memmove(r->buf, r->buf + shift, r->len - shift);
		r->len -= shift;
		r->pos -= shift;
		r->base += shift;
	}
	if (r->len + 65536 + PAD > r->cap) {
		r->cap = r->cap ? r->cap * 2 : 1 << 19; /* 512 KiB: measured best of 256 KiB to 4 MiB (the handler reads it while warm) */
		r->buf = hm_xrealloc(r->buf, r->cap);
	}
	long n = hm_src_read(st->src, r->buf + r->len, r->cap - r->len - PAD);
	if (n < 0) {
		if (!st->err.failed) {
			st->err.failed = 1;
			st->err.code = HM_EXIT_INPUT;
			snprintf(st->err.msg, st->err.cap, "%s:%llu: %s", st->err.path,
				 (unsigned long long)(r->base + r->len), hm_src_error(st->src));
		}
		st->eof = 1;
	} else if (n == 0) {
		st->eof = 1;
	}
	if (n > 0)
		r->len += (size_t)n;
	if (st->progress)
		__atomic_store_n(st->progress, hm_src_file_pos(st->src), __ATOMIC_RELAXED);
	return shift;
}

int hm_jstream_peek(hm_jstream *st)
{
	hm_jbuf *r = &st->b;
	for (;;) {
		while (r->pos < r->len) {
			char c = r->buf[r->pos];
			if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
				return (unsigned char)c;
			r->pos++;
		}
		if (st->eof || st->err.failed)
			return -1;
		hm_jstream_fill(st, r->pos);
	}
}

/* Strings are skipped with memchr; only structure outside strings is looked at bytewise. */
int hm_jstream_value(hm_jstream *st, int keep, size_t *start)
{
	hm_jbuf *r = &st->b;
	size_t s = r->pos, i = r->pos;
	long depth = 0;
	int scalar = 0;
	size_t str_from = SIZE_MAX; /* inside a string whose body starts here (SIZE_MAX: not in one) */
	char c0 = r->buf[i];
	if (c0 != '{' && c0 != '[' && c0 != '"')
		scalar = 1;
	for (;;) {
		if (i >= r->len) {
		refill:
			if (st->eof || st->err.failed)
				break;
			size_t shift = hm_jstream_fill(st, keep ? s : (str_from != SIZE_MAX ? str_from : i));
			s -= shift;
			i -= shift;
			if (str_from != SIZE_MAX)
				str_from -= shift;
			continue;
		}
		if (str_from != SIZE_MAX) {
			/* Resume from the string's start so escapes split by a refill are seen whole. */
			const char *q = hm_jscan_string_end(r->buf + str_from, r->buf + r->len);
			if (!q) {
				i = r->len;
				goto refill;
			}
			i = (size_t)(q - r->buf) + 1;
			str_from = SIZE_MAX;
			if (depth == 0)
				goto done;
			continue;
		}
		char c = r->buf[i];
		if (scalar) {
			if (c == ',' || c == ']' || c == '}' || c == ' ' || c == '\n' || c == '\r' || c == '\t')
				goto done;
			i++;
			continue;
		}
		i++;
		if (c == '"')
			str_from = i;
		else if (c == '{' || c == '[')
			depth++;
		else if ((c == '}' || c == ']') && --depth == 0)
			goto done;
	}
	r->pos = i;
	if (!st->err.failed)
		hm_jerr_at(&st->err, r->base + s, "the file ends inside the value that starts here (cut-off JSON: was the job killed while writing the trace?)", 0, 0);
	return -1;
done:
	r->pos = i;
	*start = s;
	return 0;
}

void hm_jstream_not_an_event(hm_jstream *st, const char *p)
{
	hm_jerr_at(&st->err, hm_jstream_off(st, p),
		   st->top_array ? "not a Chrome trace: the top-level array holds %s, not event objects "
				   "(export_memory_timeline output is not a trace)"
				 : "an element of traceEvents is %s, not an event object",
		   hm_jscan_kind_at(*p), 0);
}

/* The bytes [from, to) between two events: white space, and one comma unless first. A gap
 * is checked in parts as the buffer refills (end 0), so a long run of white space is never
 * held whole (issue 11); *comma carries the offset of the comma seen (UINT64_MAX: none yet).
 * The last part (end 1) stops at the next event's '{' or, closing, at the ']'. */
static int gap_ok(hm_jstream *st, size_t from, size_t to, int first, int closing, int end, uint64_t *comma)
{
	hm_jbuf *r = &st->b;
	if (end && *comma == UINT64_MAX && !first && !closing && from < to && r->buf[from] == ',') { /* the usual ",\n  " */
		size_t k = from + 1;
		while (k < to && hm_jscan_is_ws(r->buf[k]))
			k++;
		if (k == to)
			return 1;
	}
	for (size_t k = from; k < to; k++) {
		char c = r->buf[k];
		if (hm_jscan_is_ws(c))
			continue;
		if (c == ',' && *comma == UINT64_MAX && !first) {
			*comma = r->base + k;
			continue;
		}
		if (c == ',')
			hm_jerr_at(&st->err, r->base + k, first ? "a comma before the first event" : "two commas between events", 0, 0);
		else
			hm_jstream_not_an_event(st, r->buf + k);
		return 0;
	}
	if (!end)
		return 1;
	if (closing && *comma != UINT64_MAX) {
		hm_jerr_at(&st->err, *comma, "a comma after the last event (not valid JSON)", 0, 0);
		return 0;
	}
	if (!closing && !first && *comma == UINT64_MAX) {
		hm_jerr_at(&st->err, r->base + to, "expected ',' or ']' between events", 0, 0);
		return 0;
	}
	return 1;
}

/* The gaps between events profilers write, ",\n  " (Kineto's indent) or ",", told in one
 * compare (the bytes past a short gap are readable: the next event's and the buffer's
 * padding); and a comma and up to sixteen bytes of white space (the indent of a trace
 * written again by a tool, or ", " between events on one line) in one look at sixteen. */
static inline int usual_gap(const char *g, size_t n)
{
	uint32_t w;
	memcpy(&w, g, 4);
	if ((n == 4 && w == (',' | '\n' << 8 | ' ' << 16 | (uint32_t)' ' << 24)) || (n == 1 && *g == ','))
		return 1;
#ifdef __SSE2__
	if (n - 2 <= 15 && g[0] == ',') {
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)(g + 1));
		__m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(b, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(b, _mm_set1_epi8('\n'))),
					  _mm_or_si128(_mm_cmpeq_epi8(b, _mm_set1_epi8('\r')), _mm_cmpeq_epi8(b, _mm_set1_epi8('\t'))));
		unsigned m = (unsigned)_mm_movemask_epi8(ws);
		return (m | ~0u << (n - 1)) == ~0u;
	}
#endif
	return 0;
}

static inline void add_tok(hm_jbuf *r, size_t start, size_t end)
{
	if (r->ntok == r->tokcap) {
		r->tokcap = r->tokcap ? r->tokcap * 2 : 64;
		r->tok = hm_xrealloc(r->tok, r->tokcap * sizeof *r->tok);
	}
	r->tok[r->ntok++] = (hm_jtok){(uint32_t)start, (uint32_t)end};
}

/* A complete event [s, e): in place, or recorded for the handler. */
static inline void event_done(hm_jstream *st, size_t s, size_t e)
{
	if (!st->pipe)
		st->event(st->ud, st, s, e);
	else
		hm_pipe_event(st->pipe, &st->b, s, e);
}

/* The end of the input inside the array (or an error before it). */
static void ended(hm_jstream *st, int depth, size_t ev_start, uint64_t gap_at, size_t i)
{
	hm_jbuf *r = &st->b;
	if (st->keep_partial) {
		/* A job killed while writing: keep every complete event before the cut. */
		st->cut_at = depth ? r->base + ev_start : gap_at;
		st->lost_bytes = r->base + r->len - st->cut_at;
		if (!st->err.failed)
			snprintf(st->err.msg, st->err.cap, "%s:%llu: the file ends inside %s (cut-off JSON: was the job killed "
				 "while writing the trace?)", st->err.path, (unsigned long long)st->cut_at,
				 depth ? "the event that starts here" : "traceEvents");
		st->cut_why = hm_xstrdup(st->err.msg);
		st->err.failed = 0;
		st->truncated = 1;
		return;
	}
	if (!st->err.failed)
		hm_jerr_at(&st->err, r->base + (depth ? ev_start : i),
			   depth ? "the file ends inside the value that starts here (cut-off JSON: was the job killed while writing the trace?)"
				 : "the file ends inside traceEvents (cut-off JSON: was the job killed while writing the trace?)", 0, 0);
}

/* One pass over 64-byte blocks: depth 0 is between events, an event is the bytes from a
 * '{' at depth 0 to its matching '}'. The quotes of each block give the bytes inside
 * strings (escapes carried from block to block), so brackets in strings are never seen.
 * Only brackets are visited: each event's depth-1 containers are recorded, and the reader
 * crosses the rest of its members. */
void hm_jstream_events(hm_jstream *st)
{
	hm_jbuf *r = &st->b;
	r->pos++; /* '[' */
	st->events_at = r->base + r->pos;
	size_t i = r->pos, ev_start = 0, gap = r->pos, cont_start = 0;
	uint64_t gap_at = r->base + gap, comma = UINT64_MAX; /* where the gap started; its comma (see gap_ok) */
	int depth = 0, first = 1;
	hm_jscan_carry carry = {0, 0}; /* the string state at i (see hm_jscan_brackets_fn) */
	hm_jscan_brackets_fn brackets_of = hm_jscan_pick_brackets();
	hm_jscan_brk cb[HM_JSCAN_CHUNK]; /* the brackets of the blocks from i on */
	for (;;) {
		if (i >= r->len && (st->eof || st->err.failed)) {
			/* the gap so far first: an error in it comes before the end of the input */
			if (!depth && !st->err.failed && !gap_ok(st, gap, i, first, 0, 0, &comma))
				return;
			ended(st, depth, ev_start, gap_at, i);
			return;
		}
		if (r->len - i < 64 && !st->eof && !st->err.failed) {
			/* Whole blocks only until the end: the carries are right at a block's end. The gap
			 * read so far is checked and let go. */
			if (!depth) {
				if (!gap_ok(st, gap, i, first, 0, 0, &comma))
					return;
				gap = i;
			}
			size_t shift = hm_jstream_fill(st, depth ? ev_start : gap);
			i -= shift, ev_start -= shift, gap -= shift, cont_start -= shift;
			continue;
		}
		/* The next whole blocks (up to a chunk), their strings followed (the carry goes to
		 * their end: each is read whole before the next call); the last part of the text,
		 * shorter than a block, alone. The buffer stays as it is until they are read. */
		size_t nb = (r->len - i) / 64 > HM_JSCAN_CHUNK ? HM_JSCAN_CHUNK : (r->len - i) / 64, span;
		uint64_t busy; /* the blocks with a bracket outside strings */
		if (nb) {
			busy = brackets_of((const unsigned char *)r->buf + i, nb, cb, &carry);
			span = 64 * nb;
		} else {
			span = r->len - i;
			hm_jscan_blk b = hm_jscan_classify64((const unsigned char *)r->buf + i);
			uint64_t keep = (UINT64_C(1) << span) - 1;
			b.quote &= keep, b.bslash &= keep;
			uint64_t out_str = ~hm_jscan_in_string(b, &carry) & keep;
			cb[0] = (hm_jscan_brk){b.bracket & out_str, b.open & out_str};
			busy = cb[0].bracket != 0;
		}
		const char *buf = r->buf;
		/* Only blocks with a bracket outside strings are visited: about half hold none
		 * (names, numbers), crossed with no look at them. */
		for (; busy; busy &= busy - 1) {
			unsigned blk = (unsigned)__builtin_ctzll(busy);
			size_t at0 = i + 64 * (size_t)blk;
			hm_jscan_brk b = cb[blk];
			uint64_t brackets = b.bracket;
			while (brackets) {
				unsigned at = (unsigned)__builtin_ctzll(brackets);
				int open = (int)(b.open >> at & 1);
				if (depth > 2 || (depth == 2 && open)) {
					/* inside a container of the event: only counted (no byte looked at, no
					 * branch on which bracket it is) */
					depth += 2 * open - 1;
					brackets &= brackets - 1;
					continue;
				}
				brackets &= brackets - 1;
				size_t j = at0 + at;
				char c = buf[j];
				if (c == '{' || c == '[') {
					if (depth == 0) {
						if (!(usual_gap(buf + gap, j - gap) && !first && comma == UINT64_MAX) &&
						    !gap_ok(st, gap, j, first, 0, 1, &comma))
							return;
						if (c == '[') {
							hm_jstream_not_an_event(st, r->buf + j);
							return;
						}
						ev_start = j;
						r->ntok = r->tok0;
					} else if (depth == 1) {
						cont_start = j;
					}
					depth++;
				} else if (depth == 0) { /* '}' or ']' between events */
					/* the gap before it first, as it would have been checked in parts */
					if (!gap_ok(st, gap, j, first, 1, c == ']', &comma))
						return;
					if (c == '}') {
						hm_jerr_at(&st->err, r->base + j, "unbalanced '}' in traceEvents", 0, 0);
						return;
					}
					r->pos = j + 1;
					return;
				} else if (--depth == 1) {
					add_tok(r, cont_start - ev_start, j - ev_start);
				} else if (depth == 0) {
					event_done(st, ev_start, j + 1);
					if (st->err.failed)
						return;
					gap = j + 1;
					gap_at = r->base + gap, comma = UINT64_MAX;
					first = 0;
				}
			}
		}
		i += span;
	}
}

void hm_jstream_close(hm_jstream *st)
{
	free(st->b.buf);
	free(st->b.tok);
	st->b.buf = NULL, st->b.tok = NULL;
}
