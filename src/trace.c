#define _GNU_SOURCE
/* The reader never builds a DOM: the top level is walked as a stream, each element of
 * traceEvents is first delimited (its bytes kept in one buffer, however the input was
 * split) and then parsed in place, on a second thread when there is one (see "two
 * threads per file"). Values the analysis does not need are skipped. */
#include "trace.h"
#include "input.h"

#include <assert.h>
#include <ctype.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define HAVE_AVX512_CLONE 1
#endif
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAD 64

struct pipe;

typedef struct rd {
	hm_src *src;    /* NULL: all the text is in buf already (hm_trace_parse) */
	uint64_t *progress; /* file bytes consumed, for a progress line (may be NULL) */
	char *buf;      /* always has PAD readable bytes after len (the scanner reads 64 at a time) */
	size_t cap, len, pos;
	uint64_t base; /* offset of buf[0] in the decompressed JSON */
	int eof;
	const char *path;
	char *err;
	size_t errsz;
	int code, failed;
	int top_array; /* the file is a bare array of events */
	int keep_partial, truncated; /* --keep-going: a cut-off file keeps its complete events */
	struct tok *tok; /* depth-1 containers of the event being scanned */
	struct tcache { /* recent threads by the raw text of their pid and tid */
		uint32_t id; /* UINT32_MAX: empty */
		uint8_t pl, tl;
		char raw[58];
	} tcache[16];
	const char *last_cat; /* raw text of the last slice's cat (in last_cat_raw) and its id */
	char last_cat_raw[64];
	size_t last_cat_len;
	uint32_t last_cat_id;
	size_t ntok, tokcap;
	size_t tok0; /* the current event's first container (earlier ones belong to events waiting for the handler) */
	uint64_t traffic; /* sum of |Bytes| of the memory events so far (see add_memory) */
	char *scratch; /* unescaped strings */
	size_t scratch_cap;
	hm_trace *t;
	int threaded;      /* may parse events on a second thread (hm_read_opts) */
	struct pipe *pipe; /* events go to that thread (see below); NULL: handled in place */
} rd;

static void fail_at(rd *r, uint64_t off, const char *fmt, const char *a, const char *b)
{
	if (r->failed)
		return;
	r->failed = 1;
	r->code = HM_EXIT_INPUT;
	char what[256];
	snprintf(what, sizeof what, fmt, a ? a : "", b ? b : "");
	snprintf(r->err, r->errsz, "%s:%llu: %s", r->path, (unsigned long long)off, what);
}

static int pipe_handover(rd *r, size_t keep);
static void pass_on(rd *r, char *nb, size_t ncap);

/* Read more input; bytes before keep are no longer needed and may be dropped.
 * Returns the shift applied to buffer indices (subtract it from saved indices),
 * and sets r->eof at the end. */
static size_t fill(rd *r, size_t keep)
{
	if (!r->src || r->eof) {
		r->eof = 1;
		return 0;
	}
	char *nb;
	size_t ncap, at, tail = r->len - keep;
	long got;
	if (r->len >= HM_SRC_HEADROOM && tail <= HM_SRC_HEADROOM && (got = hm_src_take(r->src, &nb, &ncap, &at)) > 0) {
		/* Inflated bytes arrive in a buffer of their own: the kept bytes go in front of
		 * them, and nothing else is copied. */
		size_t to = at - tail, shift = keep - to;
		memcpy(nb + to, r->buf + keep, tail);
		pass_on(r, nb, ncap);
		r->len = at + (size_t)got;
		r->pos -= shift;
		r->base += shift;
		if (r->progress)
			__atomic_store_n(r->progress, hm_src_file_pos(r->src), __ATOMIC_RELAXED);
		return shift;
	}
	size_t shift = keep;
	if (r->pipe && pipe_handover(r, keep)) {
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
	long n = hm_src_read(r->src, r->buf + r->len, r->cap - r->len - PAD);
	if (n < 0) {
		if (!r->failed) {
			r->failed = 1;
			r->code = HM_EXIT_INPUT;
			snprintf(r->err, r->errsz, "%s:%llu: %s", r->path,
				 (unsigned long long)(r->base + r->len), hm_src_error(r->src));
		}
		r->eof = 1;
	} else if (n == 0) {
		r->eof = 1;
	}
	if (n > 0)
		r->len += (size_t)n;
	if (r->progress)
		__atomic_store_n(r->progress, hm_src_file_pos(r->src), __ATOMIC_RELAXED);
	return shift;
}

/* Skip white space; return the next byte without consuming it, or -1 at the end. */
static int peek(rd *r)
{
	for (;;) {
		while (r->pos < r->len) {
			char c = r->buf[r->pos];
			if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
				return (unsigned char)c;
			r->pos++;
		}
		if (r->eof || r->failed)
			return -1;
		fill(r, r->pos);
	}
}

/* The closing quote of a string whose body starts at p, or NULL if [p, e) ends first.
 * memchr finds candidate quotes; a quote preceded by an odd run of backslashes is escaped. */
static const char *string_end(const char *p, const char *e)
{
	for (;;) {
		const char *q = memchr(p, '"', (size_t)(e - p));
		if (!q)
			return NULL;
		const char *b = q;
		while (b > p && b[-1] == '\\')
			b--;
		if ((q - b) % 2 == 0)
			return q;
		p = q + 1;
	}
}

/* Delimit the value starting at r->pos and move past it. With keep, the whole value is
 * in the buffer afterwards at [*start, r->pos). Returns -1 if the input ends inside it.
 * Strings are skipped with memchr; only structure outside strings is looked at bytewise. */
static int scan_value(rd *r, int keep, size_t *start)
{
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
			if (r->eof || r->failed)
				break;
			size_t shift = fill(r, keep ? s : (str_from != SIZE_MAX ? str_from : i));
			s -= shift;
			i -= shift;
			if (str_from != SIZE_MAX)
				str_from -= shift;
			continue;
		}
		if (str_from != SIZE_MAX) {
			/* Resume from the string's start so escapes split by a refill are seen whole. */
			const char *q = string_end(r->buf + str_from, r->buf + r->len);
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
	if (!r->failed)
		fail_at(r, r->base + s, "the file ends inside the value that starts here (cut-off JSON: was the job killed while writing the trace?)", 0, 0);
	return -1;
done:
	r->pos = i;
	*start = s;
	return 0;
}

/* ---- in-place parsing of one delimited value ---- */

/* Bytes that end a number or literal: ',', '}', ']', white space (and NUL, a stop). */
static const unsigned char ends_scalar[256] = {
	[0] = 1, [','] = 1, ['}'] = 1, [']'] = 1, [' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\t'] = 1,
};

/* End of the value starting at p (which is complete in [p, e)). */
static const char *skip(const char *p, const char *e)
{
	if (p >= e)
		return p;
	if (*p != '{' && *p != '[' && *p != '"') {
		while (p < e && !ends_scalar[(unsigned char)*p])
			p++;
		return p;
	}
	long depth = 0;
	while (p < e) {
		char c = *p++;
		if (c == '"') {
			const char *q = string_end(p, e);
			if (!q)
				return e;
			p = q + 1;
			if (depth == 0)
				return p;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if ((c == '}' || c == ']') && --depth == 0) {
			return p;
		}
	}
	return e;
}

static void put_utf8(char *o, size_t *n, unsigned cp)
{
	if (cp < 0x80)
		o[(*n)++] = (char)cp;
	else if (cp < 0x800)
		o[(*n)++] = (char)(0xc0 | cp >> 6), o[(*n)++] = (char)(0x80 | (cp & 0x3f));
	else if (cp < 0x10000)
		o[(*n)++] = (char)(0xe0 | cp >> 12), o[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f)),
		o[(*n)++] = (char)(0x80 | (cp & 0x3f));
	else
		o[(*n)++] = (char)(0xf0 | cp >> 18), o[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f)),
		o[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f)), o[(*n)++] = (char)(0x80 | (cp & 0x3f));
}

static int hex4(const char *p, const char *e, unsigned *v)
{
	if (e - p < 4)
		return -1;
	*v = 0;
	for (int i = 0; i < 4; i++) {
		int c = p[i], d = isdigit(c) ? c - '0' : (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10 : -1;
		if (d < 0)
			return -1;
		*v = *v * 16 + (unsigned)d;
	}
	return 0;
}

/* The string value [p, q) including quotes, decoded. Points into the buffer when it has
 * no escapes, else into r->scratch. Returns NULL on a bad escape. */
static const char *str_value(rd *r, const char *p, const char *q, size_t *len)
{
	p++, q--;
	if (!memchr(p, '\\', (size_t)(q - p))) {
		*len = (size_t)(q - p);
		return p;
	}
	hm_grow(&r->scratch, &r->scratch_cap, (size_t)(q - p) + 4, 1);
	size_t n = 0;
	for (; p < q; p++) {
		if (*p != '\\') {
			r->scratch[n++] = *p;
			continue;
		}
		if (++p >= q)
			return NULL;
		unsigned cp;
		switch (*p) {
		case '"': case '\\': case '/': r->scratch[n++] = *p; break;
		case 'b': r->scratch[n++] = '\b'; break;
		case 'f': r->scratch[n++] = '\f'; break;
		case 'n': r->scratch[n++] = '\n'; break;
		case 'r': r->scratch[n++] = '\r'; break;
		case 't': r->scratch[n++] = '\t'; break;
		case 'u':
			if (hex4(p + 1, q, &cp))
				return NULL;
			p += 4;
			if (cp >= 0xd800 && cp < 0xdc00) {
				unsigned lo;
				if (q - p > 6 && p[1] == '\\' && p[2] == 'u' && !hex4(p + 3, q, &lo) && lo >= 0xdc00 && lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					p += 6;
				} else {
					cp = 0xfffd;
				}
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				cp = 0xfffd;
			}
			put_utf8(r->scratch, &n, cp);
			break;
		default:
			return NULL;
		}
	}
	*len = n;
	return r->scratch;
}

static const unsigned char ws_byte[256] = {[' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\t'] = 1};

static inline int is_ws(char c)
{
	return ws_byte[(unsigned char)c];
}

/* Past the white space at p (which stops before the end of the buffer: an event ends with
 * '}' and the buffer has PAD bytes more). Mostly there is none or one space; a new line
 * and its indent are crossed sixteen bytes at a time. */
static inline const char *past_ws(const char *p)
{
	if (!is_ws(*p))
		return p;
	if (!is_ws(*++p))
		return p;
#ifdef __SSE2__
	for (;;) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i w = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
					 _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
		unsigned m = (unsigned)_mm_movemask_epi8(w) ^ 0xffffu;
		if (m)
			return p + __builtin_ctz(m);
		p += 16;
	}
#else
	while (is_ws(*p))
		p++;
	return p;
#endif
}

/* Past the closing quote of the string whose opening quote is at p, within [p, e): keys
 * and short values sixteen bytes at a time; a backslash hands over to string_end. */
static inline const char *quote_end(const char *p, const char *e)
{
#ifdef __SSE2__
	for (const char *s = p + 1; e - s >= 16; s += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
		unsigned q = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
		unsigned b = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
		if (b && (!q || __builtin_ctz(b) < __builtin_ctz(q)))
			break;
		if (q)
			return s + __builtin_ctz(q) + 1;
	}
#endif
	const char *q = string_end(p + 1, e);
	return q ? q + 1 : e;
}

/* The end of the number or literal at p: the first byte of ends_scalar. */
static inline const char *scalar_end(const char *p)
{
#ifdef __SSE2__
	for (;;) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		__m128i a = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(',')), _mm_cmpeq_epi8(v, _mm_set1_epi8('}'))),
					 _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(']')), _mm_cmpeq_epi8(v, _mm_setzero_si128())));
		__m128i b = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
					 _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(a, b));
		if (m)
			return p + __builtin_ctz(m);
		p += 16;
	}
#else
	while (!ends_scalar[(unsigned char)*p])
		p++;
	return p;
#endif
}

typedef struct slice {
	const char *p, *q; /* [p, q); p == NULL when absent */
} slice;

/* s is the string literal lit (a length known at compile time: the compare is inlined) */
#define slice_is(s, lit) \
	((s).p && (size_t)((s).q - (s).p) == sizeof lit + 1 && *(s).p == '"' && memcmp((s).p + 1, lit, sizeof lit - 1) == 0)

/* What a JSON value is, from its first byte. */
static const char *kind_at(char c)
{
	switch (c) {
	case '"': return "a string";
	case '{': return "an object";
	case '[': return "an array";
	case 't': case 'f': return "a boolean";
	case 'n': return "null";
	default: return "a number";
	}
}

/* What the whole value s is: true, false and null only as those exact words ("nan" is
 * no null: issue 11). */
static const char *kind_of(slice s)
{
	size_t n = (size_t)(s.q - s.p);
	if ((*s.p == 't' && (n != 4 || memcmp(s.p, "true", 4) != 0)) || (*s.p == 'f' && (n != 5 || memcmp(s.p, "false", 5) != 0)) ||
	    (*s.p == 'n' && (n != 4 || memcmp(s.p, "null", 4) != 0)))
		return "not valid JSON";
	return kind_at(*s.p);
}

/* Walk the members of the object [p, e); calls fn for each key/value. Returns NULL, or
 * the position of a syntax error. */
typedef void (*member_fn)(rd *r, const char *key, size_t klen, slice val, void *ud);

static const char *members(rd *r, const char *p, const char *e, member_fn fn, void *ud)
{
	/* [p, e) ends with its '}', where the white space and number scans stop at the latest */
	p = past_ws(p + 1);
	if (p < e && *p == '}')
		return NULL;
	for (;;) {
		if (p >= e || *p != '"')
			return p;
		const char *kq = quote_end(p, e);
		if (kq > e || kq[-1] != '"')
			return p;
		const char *v = past_ws(kq);
		if (v >= e || *v != ':')
			return v;
		v = past_ws(v + 1);
		const char *ve = *v == '"' ? quote_end(v, e) : *v == '{' || *v == '[' ? skip(v, e) : scalar_end(v);
		if (v >= e || ve == v)
			return v;
		fn(r, p + 1, (size_t)(kq - p - 2), (slice){v, ve}, ud);
		p = past_ws(ve);
		if (p < e && *p == ',') {
			p = past_ws(p + 1);
			continue;
		}
		if (p < e && *p == '}')
			return NULL;
		return p;
	}
}

#define KEY(lit) (klen == sizeof lit - 1 && memcmp(key, lit, klen) == 0)

typedef struct ev {
	slice ph, name, cat, pid, tid, ts, dur, args;
} ev;

/* The members of ev in order, for passing them between threads (see REC). */
static const size_t ev_at[8] = {offsetof(ev, ph), offsetof(ev, name), offsetof(ev, cat), offsetof(ev, pid),
				offsetof(ev, tid), offsetof(ev, ts), offsetof(ev, dur), offsetof(ev, args)};
#define EV_MEMBER(x, i) ((slice *)(void *)((char *)(x) + ev_at[i]))

/* Keys are matched as written; a key with escapes is matched again decoded ("B\u0079tes"
 * is "Bytes" in JSON, though no profiler writes it so: issue 11). The decoded key is in
 * r->scratch. Returns 0 for a key without escapes (or a bad one). */
static __attribute__((noinline)) int unescaped_key(rd *r, const char **key, size_t *klen)
{
	if (!memchr(*key, '\\', *klen))
		return 0;
	size_t n;
	const char *d = str_value(r, *key - 1, *key + *klen + 1, &n);
	if (!d)
		return 0;
	*key = d, *klen = n;
	return 1;
}

/* The keys of an event: the member goes to its field, and the caller returns. */
#define EV_KEYS(x, v)                                                                   \
	switch (klen) { /* every event has these keys: the length decides before any compare */ \
	case 2:                                                                         \
		if (KEY("ph")) { x->ph = v; return; }                                   \
		if (KEY("ts")) { x->ts = v; return; }                                   \
		break;                                                                  \
	case 3:                                                                         \
		if (KEY("cat")) { x->cat = v; return; }                                 \
		if (KEY("pid")) { x->pid = v; return; }                                 \
		if (KEY("tid")) { x->tid = v; return; }                                 \
		if (KEY("dur")) { x->dur = v; return; }                                 \
		break;                                                                  \
	case 4:                                                                         \
		if (KEY("name")) { x->name = v; return; }                               \
		if (KEY("args")) { x->args = v; return; }                               \
		break;                                                                  \
	}

/* A key that matched nothing as written, decoded. An escape that spells a letter takes six
 * bytes, so only a key of seven bytes or more can spell one of those with escapes. */
static __attribute__((noinline)) void ev_member_escaped(rd *r, const char *key, size_t klen, slice v, ev *x)
{
	if (klen < 7 || !unescaped_key(r, &key, &klen))
		return;
	EV_KEYS(x, v)
}

static void ev_member(rd *r, const char *key, size_t klen, slice v, void *ud)
{
	ev *x = ud;
	EV_KEYS(x, v)
	ev_member_escaped(r, key, klen, v, x);
}

/* Columns grow together: every array of a struct of arrays gets the same new capacity. */
#define GROW(arr, c) ((arr) = hm_xrealloc((arr), (c) * sizeof *(arr)))

static void grow_mem(hm_mem *mm, size_t c)
{
	GROW(mm->ts, c), GROW(mm->bytes, c), GROW(mm->addr, c), GROW(mm->total_alloc, c);
	GROW(mm->total_res, c), GROW(mm->ev_idx, c), GROW(mm->dev_type, c), GROW(mm->dev_id, c);
	GROW(mm->thread, c), GROW(mm->has_addr, c);
	mm->cap = c;
}

static void grow_slices(hm_slices *o, size_t c)
{
	GROW(o->ts, c), GROW(o->dur, c), GROW(o->name, c), GROW(o->thread, c), GROW(o->cat, c), GROW(o->kind, c);
	o->cap = c;
}

/* Columns sized from the file at the start: growing copies a column into fresh memory,
 * and on a virtual machine fresh memory is what costs (1 GiB trace: 1.41 s of CPU -> 1.14 s).
 * Room that stays unused is address space only (never touched, it takes no memory). JSON
 * bytes are guessed at 10 per gzip byte; an event takes 256 bytes or more in the
 * profiler's layout; at most 32 M events (3 GB of address space) are reserved, columns
 * grow as before past that. */
static void reserve(rd *r)
{
	uint64_t json = hm_src_file_size(r->src) * (hm_src_is_gzip(r->src) ? 10 : 1), n = json / 256;
	if (n > (UINT64_C(32) << 20))
		n = UINT64_C(32) << 20;
	if (n > 1024) {
		grow_mem(&r->t->mem, (size_t)n);
		grow_slices(&r->t->sl, (size_t)n);
	}
}

typedef struct memargs {
	slice bytes, addr, talloc, tres, evidx, dtype, did;
} memargs;

/* The keys of a [memory] event's args: the member goes to its field, and the caller returns. */
#define MEM_KEYS(m, v)                                                                       \
	switch (klen) { /* the keys have different lengths */                               \
	case 5: if (KEY("Bytes")) { m->bytes = v; return; } break;                          \
	case 4: if (KEY("Addr")) { m->addr = v; return; } break;                            \
	case 15: if (KEY("Total Allocated")) { m->talloc = v; return; } break;              \
	case 14: if (KEY("Total Reserved")) { m->tres = v; return; } break;                 \
	case 6: if (KEY("Ev Idx")) { m->evidx = v; return; } break;                         \
	case 11: if (KEY("Device Type")) { m->dtype = v; return; } break;                   \
	case 9: if (KEY("Device Id")) { m->did = v; return; } break;                        \
	}

/* A key that matched nothing as written, decoded (see ev_member). */
static __attribute__((noinline)) void mem_member_escaped(rd *r, const char *key, size_t klen, slice v, memargs *m)
{
	if (klen < 9 || !unescaped_key(r, &key, &klen))
		return;
	MEM_KEYS(m, v)
}

static void mem_member(rd *r, const char *key, size_t klen, slice v, void *ud)
{
	memargs *m = ud;
	MEM_KEYS(m, v)
	mem_member_escaped(r, key, klen, v, m);
}

static uint64_t off_of(rd *r, const char *p)
{
	return r->base + (uint64_t)(p - r->buf);
}

/* Eight digits at a time while they last (SWAR: all eight are '0'..'9'), at most max
 * digits in all (fewer when the text ends); *v accumulates them. */
static inline int swar8_digits(uint64_t w)
{
	return ((w & 0xf0f0f0f0f0f0f0f0ull) | (((w + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull) >> 4)) ==
	       0x3333333333333333ull;
}

static inline uint64_t swar8_value(uint64_t w)
{
	w -= 0x3030303030303030ull;
	w = (w * 10) + (w >> 8);
	return (((w & 0x000000ff000000ffull) * (100 + (1000000ull << 32))) +
		(((w >> 16) & 0x000000ff000000ffull) * (1 + (10000ull << 32)))) >> 32;
}

static inline const char *digits8(const char *p, const char *e, long max, int64_t *v)
{
	const char *s = p;
	uint64_t w;
	while (e - p >= 8 && (p - s) + 8 <= max) {
		memcpy(&w, p, 8);
		if (!swar8_digits(w))
			break;
		*v = *v * 100000000 + (int64_t)swar8_value(w);
		p += 8;
	}
	return p;
}

/* Exact µs text to ns for the common form (digits, up to three decimals); anything else
 * goes through the general parser. */
static const char *fast_ns(const char *p, const char *e, int64_t *out)
{
	/* The form profilers write, up to 15 digits then '.' and three (ns): the digits
	 * without the point, right-aligned in 24 zeros, are the ns, eight at a time. */
	size_t len = (size_t)(e - p), ip = len - 4;
	if (len >= 5 && len <= 19 && p[ip] == '.' && (p[0] != '0' || ip == 1)) {
		char d[24];
		memset(d, '0', sizeof d);
		memcpy(d + 21 - ip, p, ip);
		memcpy(d + 21, p + ip + 1, 3);
		uint64_t a, b, c;
		memcpy(&a, d, 8), memcpy(&b, d + 8, 8), memcpy(&c, d + 16, 8);
		if (swar8_digits(a) && swar8_digits(b) && swar8_digits(c)) {
			*out = (int64_t)((swar8_value(a) * 100000000 + swar8_value(b)) * 100000000 + swar8_value(c));
			return NULL;
		}
	}
	int64_t v = 0;
	const char *s = p;
	p = digits8(p, e, 16, &v);
	while (p < e && *p >= '0' && *p <= '9' && p - s < 16)
		v = v * 10 + (*p++ - '0');
	/* Sixteen digits of µs can pass INT64_MAX / 1000, and v * 1000 (or the decimals
	 * below) would overflow: the general parser gives the exact value or the range error. */
	if (v >= INT64_MAX / 1000)
		return hm_num_i64(s, (size_t)(e - s), 3, 1, out);
	int frac = 0;
	if (p > s && p < e && *p == '.' && (s[0] != '0' || p - s == 1)) {
		p++;
		while (p < e && *p >= '0' && *p <= '9' && frac < 3)
			v = v * 10 + (*p++ - '0'), frac++;
		if (frac == 0)
			return hm_num_i64(s, (size_t)(e - s), 3, 1, out);
	} else if (p > s && s[0] == '0' && p - s > 1) {
		return hm_num_i64(s, (size_t)(e - s), 3, 1, out);
	}
	if (p != e || p == s)
		return hm_num_i64(s, (size_t)(e - s), 3, 1, out);
	static const int64_t scale[] = {1000, 100, 10, 1};
	*out = v * scale[frac];
	return NULL;
}

/* Integer text (a plain optional '-' and up to 18 digits); anything else goes through
 * the general parser, which knows exponents and 64-bit limits. */
static const char *fast_int(const char *p, const char *e, int64_t *out)
{
	const char *s = p;
	int neg = p < e && *p == '-';
	p += neg;
	int64_t v = 0;
	const char *d = p;
	p = digits8(p, e, 18, &v);
	while (p < e && *p >= '0' && *p <= '9' && p - d < 18)
		v = v * 10 + (*p++ - '0');
	if (p != e || p == d || (*d == '0' && p - d > 1))
		return hm_num_i64(s, (size_t)(e - s), 0, 0, out);
	*out = neg ? -v : v;
	return NULL;
}

static int number_field(rd *r, slice v, const char *ctx, const char *what, const char *expected, const char *err);

/* An integer member; absent gives HM_NONE (or an error when required). */
static int int_field(rd *r, slice v, const char *what, int required, int64_t *out)
{
	if (!v.p) {
		if (required)
			return -1;
		*out = HM_NONE;
		return 0;
	}
	return number_field(r, v, "[memory] event", what, "an integer", fast_int(v.p, v.q, out));
}

/* Report a member that is not a number, or whose number did not parse (err). */
static int number_field(rd *r, slice v, const char *ctx, const char *what, const char *expected, const char *err)
{
	char w[128];
	if (*v.p == '"' || *v.p == '{' || *v.p == '[' || *v.p == 't' || *v.p == 'f' || *v.p == 'n') {
		snprintf(w, sizeof w, "%s: \"%s\" is %s, expected %s", ctx, what, kind_of(v), expected);
		fail_at(r, off_of(r, v.p), "%s", w, 0);
		return -1;
	}
	if (err) {
		snprintf(w, sizeof w, "%s: \"%s\": %s", ctx, what, err);
		fail_at(r, off_of(r, v.p), "%s", w, 0);
		return -1;
	}
	return 0;
}

/* Times are int64 ns that the analysis adds (ts + dur) and subtracts (lifetimes, time
 * since the first event): within ±2^62 ns (146 years either side of the trace's zero, far
 * beyond any real trace) none of that can overflow. */
#define TS_LIMIT (INT64_C(1) << 62)

static int ts_field(rd *r, slice v, const char *what, const char *ctx, int64_t *out)
{
	int bad = *v.p == '"' || *v.p == '{' || *v.p == '[' || *v.p == 't' || *v.p == 'f' || *v.p == 'n';
	const char *e = bad ? NULL : fast_ns(v.p, v.q, out);
	if (!bad && !e && (*out <= -TS_LIMIT || *out >= TS_LIMIT))
		e = "out of range (beyond 2^62 ns, 146 years, from zero)";
	return number_field(r, v, ctx, what, "a number of microseconds", e);
}

/* pid/tid as canonical text: integers (numbers or numeric strings) in decimal, other
 * strings as they are, so 25738 and "25738" name the same thread. */
static size_t id_text(rd *r, slice v, char *out, size_t cap)
{
	if (!v.p)
		return 0;
	const char *s = v.p;
	size_t n = (size_t)(v.q - v.p);
	if (*v.p == '"') {
		s = str_value(r, v.p, v.q, &n);
		if (!s)
			return 0;
	}
	int64_t x;
	if (n && !fast_int(s, s + n, &x))
		return (size_t)snprintf(out, cap, "%lld", (long long)x);
	/* 0x1f separates pid from tid in thread keys; inside a string it becomes U+FFFD, or
	 * ("a\x1fb", "c") and ("a", "b\x1fc") would be one thread, split in the wrong place. */
	size_t k = 0;
	for (size_t i = 0; i < n && k + (s[i] == 0x1f ? 3 : 1) < cap; i++) {
		if (s[i] == 0x1f)
			memcpy(out + k, "\xef\xbf\xbd", 3), k += 3;
		else
			out[k++] = s[i];
	}
	return k;
}

/* A trace has few threads and events name them the same way each time: a small cache of
 * the raw pid and tid text answers most lookups without formatting or hashing. */
static uint32_t thread_key(rd *r, ev *x);

static uint32_t thread_of(rd *r, ev *x)
{
	size_t pl = x->pid.p ? (size_t)(x->pid.q - x->pid.p) : 0, tl = x->tid.p ? (size_t)(x->tid.q - x->tid.p) : 0;
	const char *pp = x->pid.p ? x->pid.p : "", *tp = x->tid.p ? x->tid.p : "";
	unsigned h = (unsigned)(pl * 7 + tl * 3 + (pl ? (unsigned char)pp[pl - 1] : 0) * 5 + (tl ? (unsigned char)tp[tl - 1] : 0) +
				(tl > 1 ? (unsigned char)tp[tl - 2] * 11 : 0)) % 16;
	struct tcache *c = &r->tcache[h];
	if (c->id != UINT32_MAX && pl == c->pl && tl == c->tl && memcmp(c->raw, pp, pl) == 0 && memcmp(c->raw + pl, tp, tl) == 0)
		return c->id;
	uint32_t id = thread_key(r, x);
	if (pl + tl <= sizeof c->raw) {
		memcpy(c->raw, pp, pl);
		memcpy(c->raw + pl, tp, tl);
		c->pl = (uint8_t)pl, c->tl = (uint8_t)tl, c->id = id;
	}
	return id;
}

static uint32_t thread_key(rd *r, ev *x)
{
	char key[520];
	size_t n = id_text(r, x->pid, key, 256);
	key[n++] = 0x1f;
	n += id_text(r, x->tid, key + n, 256);
	return hm_strtab_intern(&r->t->threads, key, n);
}

#define MEM_LIMIT (INT64_C(1) << 60)

static void add_memory(rd *r, ev *x, const char *evp, const int64_t *tsp)
{
	memargs m = {0};
	if (!x->args.p || *x->args.p != '{') {
		fail_at(r, off_of(r, evp), "[memory] event without an args object", 0, 0);
		return;
	}
	const char *bad = members(r, x->args.p, x->args.q, mem_member, &m);
	if (bad) {
		fail_at(r, off_of(r, bad), "invalid JSON in the args of a [memory] event", 0, 0);
		return;
	}
	int64_t ts, bytes, ta, tr, ei, dt, di;
	if (!x->ts.p) {
		fail_at(r, off_of(r, evp), "[memory] event without \"ts\"", 0, 0);
		return;
	}
	if (tsp)
		ts = *tsp;
	else if (ts_field(r, x->ts, "ts", "[memory] event", &ts))
		return;
	const char *req[] = {"Bytes", "Device Type", "Device Id"};
	slice reqv[] = {m.bytes, m.dtype, m.did};
	for (int i = 0; i < 3; i++)
		if (!reqv[i].p) {
			fail_at(r, off_of(r, evp), "[memory] event without \"%s\" in its args", req[i], 0);
			return;
		}
	if (int_field(r, m.bytes, "Bytes", 1, &bytes) || int_field(r, m.dtype, "Device Type", 1, &dt) ||
	    int_field(r, m.did, "Device Id", 1, &di) || int_field(r, m.talloc, "Total Allocated", 0, &ta) ||
	    int_field(r, m.tres, "Total Reserved", 0, &tr) || int_field(r, m.evidx, "Ev Idx", 0, &ei))
		return;
	/* The analysis sums sizes in int64 (device totals, category values, the memory from
	 * before the trace, which starts from Total Allocated): with all sizes together and
	 * every Total Allocated within 2^60 bytes (1 EiB; no real trace comes near) no sum can
	 * overflow, whichever way the events are classified. */
	uint64_t size = bytes < 0 ? 0 - (uint64_t)bytes : (uint64_t)bytes;
	if (size > MEM_LIMIT || (r->traffic += size) > MEM_LIMIT) {
		fail_at(r, off_of(r, m.bytes.p), "[memory] event: \"Bytes\": the sizes of the memory events add up to more than 2^60 bytes (1 EiB)", 0, 0);
		return;
	}
	if (ta != HM_NONE && (ta > MEM_LIMIT || ta < -MEM_LIMIT)) {
		fail_at(r, off_of(r, m.talloc.p), "[memory] event: \"Total Allocated\": beyond 2^60 bytes (1 EiB)", 0, 0);
		return;
	}
	uint64_t uaddr = 0;
	if (m.addr.p) {
		int neg;
		int64_t small;
		const char *a = m.addr.p, *e = NULL;
		/* Named by type as for the other fields ("is a string"), not "invalid number". */
		if (*a == '"' || *a == '{' || *a == '[' || *a == 't' || *a == 'f' || *a == 'n') {
			fail_at(r, off_of(r, a), "[memory] event: \"Addr\" is %s, expected an integer", kind_of(m.addr), 0);
			return;
		}
		if (!fast_int(m.addr.p, m.addr.q, &small))
			neg = small < 0, uaddr = neg ? 0 - (uint64_t)small : (uint64_t)small;
		else
			e = hm_num_parse(m.addr.p, (size_t)(m.addr.q - m.addr.p), 0, 0, &neg, &uaddr);
		if (e) {
			fail_at(r, off_of(r, m.addr.p), "[memory] event: \"Addr\": %s", e, 0);
			return;
		}
		if (neg && uaddr) { /* an address is never negative: no wrapping to 2^64 - 1 (issue 11) */
			fail_at(r, off_of(r, m.addr.p), "[memory] event: \"Addr\": negative (an address is 0 or more)", 0, 0);
			return;
		}
	}
	if (dt < -32768 || dt > 32767 || di < INT32_MIN || di > INT32_MAX) {
		fail_at(r, off_of(r, m.dtype.p), "[memory] event: device type or id out of range", 0, 0);
		return;
	}
	hm_mem *mm = &r->t->mem;
	if (mm->n == mm->cap)
		grow_mem(mm, mm->cap ? mm->cap * 2 : 1024);
	size_t i = mm->n++;
	mm->ts[i] = ts;
	mm->bytes[i] = bytes;
	mm->addr[i] = uaddr;
	mm->has_addr[i] = m.addr.p != NULL;
	mm->total_alloc[i] = ta;
	mm->total_res[i] = tr;
	mm->ev_idx[i] = ei;
	mm->dev_type[i] = (int32_t)dt;
	mm->dev_id[i] = (int32_t)di;
	mm->thread[i] = thread_of(r, x);
}

/* Device-side categories: their pid/tid are a device and a stream, never a host thread. */
static int device_side(slice cat)
{
	/* gpu_memcpy, gpu_memset, gpu_user_annotation: all start with gpu_ */
	return slice_is(cat, "kernel") || slice_is(cat, "Kernel") || slice_is(cat, "Memcpy") || slice_is(cat, "Memset") ||
	       slice_is(cat, "Trace") || (cat.p && cat.q - cat.p > 5 && memcmp(cat.p, "\"gpu_", 5) == 0);
}

static uint32_t intern_str(rd *r, slice v)
{
	size_t n = 0;
	const char *s = "";
	if (v.p && *v.p == '"') {
		s = str_value(r, v.p, v.q, &n);
		if (!s) {
			fail_at(r, off_of(r, v.p), "invalid escape in a string", 0, 0);
			return 0;
		}
	}
	return hm_strtab_intern(&r->t->names, s, n);
}

/* Slices share a handful of categories, mostly the same as the slice before. */
static uint32_t intern_cat(rd *r, slice v)
{
	size_t n = v.p ? (size_t)(v.q - v.p) : 0;
	if (r->last_cat && n == r->last_cat_len && memcmp(r->last_cat, v.p, n) == 0)
		return r->last_cat_id;
	uint32_t id = intern_str(r, v);
	if (n && n < sizeof r->last_cat_raw) {
		memcpy(r->last_cat_raw, v.p, n);
		r->last_cat = r->last_cat_raw, r->last_cat_len = n, r->last_cat_id = id;
	}
	return id;
}

/* What a slice is, from its category (cat: compared as JSON means it, see plain). */
static uint8_t slice_kind(slice cat)
{
	return slice_is(cat, "cpu_op") || slice_is(cat, "Operator") ? HM_SL_OP
		: slice_is(cat, "user_annotation") ? HM_SL_ANNOTATION
		: slice_is(cat, "python_function") ? HM_SL_PYTHON : HM_SL_OTHER;
}

static void add_slice(rd *r, ev *x, const char *evp, const int64_t *tsp, uint8_t kind)
{
	int64_t ts, dur = 0;
	if (!x->ts.p) {
		fail_at(r, off_of(r, evp), "slice (ph X) without \"ts\"", 0, 0);
		return;
	}
	if (tsp)
		ts = *tsp;
	else if (ts_field(r, x->ts, "ts", "slice (ph X)", &ts))
		return;
	if (x->dur.p && ts_field(r, x->dur, "dur", "slice (ph X)", &dur))
		return;
	uint32_t name = intern_str(r, x->name), cat = intern_cat(r, x->cat);
	if (r->failed)
		return;
	hm_slices *o = &r->t->sl;
	if (o->n == o->cap)
		grow_slices(o, o->cap ? o->cap * 2 : 1024);
	size_t i = o->n++;
	o->ts[i] = ts;
	o->dur[i] = dur < 0 ? 0 : dur;
	o->name[i] = name;
	o->cat[i] = cat;
	o->kind[i] = kind;
	o->thread[i] = thread_of(r, x);
}

static void name_member(rd *r, const char *key, size_t klen, slice v, void *ud)
{
	if (KEY("name") || (unescaped_key(r, &key, &klen) && KEY("name")))
		*(slice *)ud = v;
}

/* M thread_name metadata: the name of a (pid, tid). */
static void add_thread_name(rd *r, ev *x)
{
	slice name = {0};
	if (!x->args.p || *x->args.p != '{' || members(r, x->args.p, x->args.q, name_member, &name) || !name.p)
		return;
	uint32_t th = thread_of(r, x), id = intern_str(r, name);
	hm_trace *t = r->t;
	size_t old = t->thread_name_cap;
	hm_grow(&t->thread_name, &t->thread_name_cap, th + 1, sizeof *t->thread_name);
	for (size_t i = old; i < t->thread_name_cap; i++)
		t->thread_name[i] = UINT32_MAX;
	t->thread_name[th] = id;
}

static void not_an_event(rd *r, const char *p)
{
	fail_at(r, off_of(r, p), r->top_array ? "not a Chrome trace: the top-level array holds %s, not event objects "
						 "(export_memory_timeline output is not a trace)"
					       : "an element of traceEvents is %s, not an event object", kind_at(*p), 0);
}

/* The string s (quotes included) for comparing with literals: s itself, or when it has
 * escapes (profilers write none, but "[m\u0065mory]" is "[memory]" in JSON: issue 11) its
 * decoded text, quoted, in buf (cut to cap bytes: longer text equals no literal compared,
 * and a prefix stays a prefix). */
static slice plain(rd *r, slice s, char *buf, size_t cap)
{
	size_t n;
	const char *d;
	if (!s.p || !memchr(s.p + 1, '\\', (size_t)(s.q - s.p - 1)) || !(d = str_value(r, s.p, s.q, &n)))
		return s;
	if (n > cap - 2)
		n = cap - 2;
	buf[0] = '"';
	memcpy(buf + 1, d, n);
	buf[n + 1] = '"';
	return (slice){buf, buf + n + 2};
}

/* What the event's fields say it is, and what is kept of it. */
static void handle_event(rd *r, ev *xp, const char *p)
{
	ev x = *xp;
	slice strs[] = {x.ph, x.name, x.cat};
	const char *keys[] = {"ph", "name", "cat"};
	for (int i = 0; i < 3; i++)
		if (strs[i].p && *strs[i].p != '"') {
			fail_at(r, off_of(r, strs[i].p), "event \"%s\" is %s, expected a string", keys[i], kind_of(strs[i]));
			return;
		}
	int64_t ts;
	const int64_t *tsp = NULL; /* the parsed ts, when it is a valid time */
	if (x.ts.p && *x.ts.p != '"' && !fast_ns(x.ts.p, x.ts.q, &ts) && ts > -TS_LIMIT && ts < TS_LIMIT) {
		tsp = &ts;
		if (r->t->first_ts == HM_NONE || ts < r->t->first_ts)
			r->t->first_ts = ts;
	}
	/* ph is one letter in every event a profiler writes */
	char ph = x.ph.p && x.ph.q - x.ph.p == 3 ? x.ph.p[1] : 0;
	char pb[8], nb[32], cb[64];
	if (!ph && x.ph.p) {
		slice d = plain(r, x.ph, pb, sizeof pb);
		ph = d.q - d.p == 3 ? d.p[1] : 0;
	}
	/* The name decides only for these, the category only for slices; either is decoded only
	 * where its text as written matches nothing. */
	uint64_t *n = r->t->count;
	if (ph == 'i' || ph == 'I') {
		slice name = x.name;
		int mem = slice_is(name, "[memory]"), oom = !mem && slice_is(name, "[OutOfMemory]");
		if (!mem && !oom && (name = plain(r, x.name, nb, sizeof nb)).p != x.name.p)
			mem = slice_is(name, "[memory]"), oom = slice_is(name, "[OutOfMemory]");
		if (mem)
			add_memory(r, &x, p, tsp), n[HM_EV_MEMORY]++;
		else if (oom)
			r->t->oom_events++, n[HM_EV_OOM]++;
		else
			n[HM_EV_OTHER]++;
	} else if (ph == 'X') {
		slice cat = x.cat;
		int dev = device_side(cat);
		uint8_t kind = dev ? HM_SL_OTHER : slice_kind(cat);
		if (!dev && kind == HM_SL_OTHER && (cat = plain(r, x.cat, cb, sizeof cb)).p != x.cat.p)
			dev = device_side(cat), kind = dev ? HM_SL_OTHER : slice_kind(cat);
		if (dev)
			n[HM_EV_DEVICE_SLICE]++;
		else
			add_slice(r, &x, p, tsp, kind), n[HM_EV_HOST_SLICE]++;
	} else if (ph == 'M') {
		slice name = x.name;
		int tn = slice_is(name, "thread_name");
		if (!tn && (name = plain(r, x.name, nb, sizeof nb)).p != x.name.p)
			tn = slice_is(name, "thread_name");
		if (tn)
			add_thread_name(r, &x), n[HM_EV_THREAD_NAME]++;
		else
			n[HM_EV_METADATA]++;
	} else if (ph == 's' || ph == 'f' || ph == 't') {
		n[HM_EV_FLOW]++;
	} else {
		n[HM_EV_OTHER]++;
	}
}

const char *const hm_ev_kind_names[HM_EV_KINDS] = {
	[HM_EV_MEMORY] = "memory", [HM_EV_HOST_SLICE] = "host_slices", [HM_EV_THREAD_NAME] = "thread_names",
	[HM_EV_OOM] = "oom", [HM_EV_DEVICE_SLICE] = "device_slices", [HM_EV_FLOW] = "flows",
	[HM_EV_METADATA] = "metadata", [HM_EV_OTHER] = "other",
};

/* A depth-1 container of an event (args, mostly): its brackets, as offsets from the
 * event's start, so they survive refills. */
typedef struct tok {
	uint32_t start, end;
} tok;

/* Sixty-four bytes at a time, the masks of their quotes, backslashes and brackets ('{',
 * '}', '[', ']': '[' and ']' are '{' and '}' with bit 0x20 clear). */
typedef struct blk {
	uint64_t quote, bslash, bracket;
} blk;

static inline blk classify64(const unsigned char *p)
{
	blk b = {0, 0, 0};
#ifdef __SSE2__
	const __m128i q = _mm_set1_epi8('"'), s = _mm_set1_epi8('\\'), o = _mm_set1_epi8('{'), c = _mm_set1_epi8('}'),
		      x = _mm_set1_epi8(0x20);
	for (int k = 0; k < 4; k++) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
		__m128i w = _mm_or_si128(v, x);
		b.quote |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, q)) << (16 * k);
		b.bslash |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, s)) << (16 * k);
		b.bracket |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(w, o), _mm_cmpeq_epi8(w, c)))
			     << (16 * k);
	}
#else
	for (int k = 0; k < 64; k++) {
		unsigned char ch = p[k] | 0x20;
		b.quote |= (uint64_t)(p[k] == '"') << k;
		b.bslash |= (uint64_t)(p[k] == '\\') << k;
		b.bracket |= (uint64_t)(ch == '{' || ch == '}') << k;
	}
#endif
	return b;
}

/* A run of whole blocks classified at once (a call per CHUNK blocks, so the choice
 * between instruction sets costs nothing per block). */
#define CHUNK 64

static void classify_chunk_base(const unsigned char *p, size_t n, blk *out)
{
	for (size_t k = 0; k < n; k++)
		out[k] = classify64(p + 64 * k);
}

#ifdef HAVE_AVX512_CLONE
/* AVX-512BW (where the CPU has it): one load and four compares into masks per block. */
__attribute__((target("avx512bw"))) static void classify_chunk_avx512(const unsigned char *p, size_t n, blk *out)
{
	const __m512i q = _mm512_set1_epi8('"'), s = _mm512_set1_epi8('\\'), o = _mm512_set1_epi8('{'),
		      c = _mm512_set1_epi8('}'), x = _mm512_set1_epi8(0x20);
	for (size_t k = 0; k < n; k++) {
		__m512i v = _mm512_loadu_si512((const void *)(p + 64 * k)), w = _mm512_or_si512(v, x);
		out[k].quote = _mm512_cmpeq_epi8_mask(v, q);
		out[k].bslash = _mm512_cmpeq_epi8_mask(v, s);
		out[k].bracket = _mm512_cmpeq_epi8_mask(w, o) | _mm512_cmpeq_epi8_mask(w, c);
	}
}
#endif

typedef void (*classify_fn)(const unsigned char *p, size_t n, blk *out);

/* HMEM_SIMD=base keeps to the baseline code (SSE2 on x86-64), to compare the two. */
static classify_fn pick_classify(void)
{
	static classify_fn picked;
	classify_fn f = __atomic_load_n(&picked, __ATOMIC_RELAXED);
	if (f)
		return f;
	f = classify_chunk_base;
#ifdef HAVE_AVX512_CLONE
	const char *want = getenv("HMEM_SIMD");
	if (__builtin_cpu_supports("avx512bw") && !(want && strcmp(want, "base") == 0))
		f = classify_chunk_avx512;
#endif
	__atomic_store_n(&picked, f, __ATOMIC_RELAXED);
	return f;
}

/* The bytes escaped by a backslash (the byte after an odd run of them), carried across
 * blocks in *carry (simdjson's method: runs starting on even and odd bits are told apart
 * with one addition). */
static inline uint64_t escaped64(uint64_t bs, uint64_t *carry)
{
	if (!bs && !*carry)
		return 0;
	const uint64_t even = 0x5555555555555555ull;
	uint64_t esc = *carry;
	bs &= ~esc; /* a backslash that is itself escaped starts no run */
	uint64_t follows = bs << 1 | esc;
	uint64_t odd_starts = bs & ~even & ~follows, seq_even;
	*carry = __builtin_add_overflow(odd_starts, bs, &seq_even);
	return ((even ^ (seq_even << 1)) & follows);
}

/* Bit i set from an opening quote up to (not including) its closing quote. */
static inline uint64_t prefix_xor(uint64_t x)
{
	x ^= x << 1, x ^= x << 2, x ^= x << 4;
	x ^= x << 8, x ^= x << 16, x ^= x << 32;
	return x;
}

/* The containers from i on; NULL while there are none (NULL + 0 is undefined behaviour). */
static inline const tok *tok_at(const tok *v, size_t i)
{
	return v ? v + i : NULL;
}

static inline void add_tok(rd *r, size_t start, size_t end)
{
	if (r->ntok == r->tokcap) {
		r->tokcap = r->tokcap ? r->tokcap * 2 : 64;
		r->tok = hm_xrealloc(r->tok, r->tokcap * sizeof *r->tok);
	}
	r->tok[r->ntok++] = (tok){(uint32_t)start, (uint32_t)end};
}

/* The event [p, e) is complete and its depth-1 containers are known. Match keys to
 * values and check the member syntax (key ':' value, separated by ','): strings and
 * numbers are crossed here, containers by their recorded ends, never rescanned. */
static int walk_event(rd *r, const char *p, const char *e, const tok *t, size_t ntok, ev *xp)
{
	/* e[-1] is the closing '}', outside any string: the scans below stop inside the event.
	 * t is NULL when no event so far had a container at depth 1 (see tok_at). */
	ev x = {0};
	const tok *end = ntok ? t + ntok : t;
	const char *c = past_ws(p + 1);
	if (c == e - 1) { /* {} */
		*xp = x;
		return 0;
	}
	for (;;) {
		if (*c != '"')
			goto bad;
		/* A string that runs to e is not closed before the event's '}': the scanner saw the
		 * quotes otherwise (a stray quote in a number, say), and the scans past it would leave
		 * the event. */
		const char *ks = c, *ke = quote_end(c, e);
		if (ke >= e)
			goto bad;
		c = past_ws(ke);
		if (*c != ':')
			goto bad;
		c = past_ws(c + 1);
		slice v = {c, c};
		if (*c == '"') {
			v.q = quote_end(c, e);
			if (v.q >= e)
				goto bad;
		} else if (*c == '{' || *c == '[') {
			if (t == end || p + t->start != c)
				goto bad;
			v.q = p + t->end + 1;
			t++;
		} else {
			v.q = scalar_end(c);
			if (v.q == c)
				goto bad;
		}
		ev_member(r, ks + 1, (size_t)(ke - ks - 2), v, &x);
		c = past_ws(v.q);
		if (*c == '}' && c == e - 1) {
			if (t != end)
				goto bad;
			*xp = x;
			return 0;
		}
		if (*c != ',')
			goto bad;
		c = past_ws(c + 1);
	}
bad:
	fail_at(r, off_of(r, c), "invalid JSON in an event", 0, 0);
	return -1;
}

static void slice_event(rd *r, const char *p, const char *e, const tok *t, size_t ntok)
{
	ev x;
	if (walk_event(r, p, e, t, ntok, &x) == 0)
		handle_event(r, &x, p);
}

/* ---- two threads per file: this one finds events, a handler thread parses them ----
 *
 * Finding where events start and end (the block scan) and parsing their members cost
 * about the same, so a file is read by two threads (three with gzip's inflating thread):
 * the scanner fills a buffer, records each complete event and its depth-1 containers,
 * and hands the buffer and the containers over when it needs more input; the handler
 * parses those events in file order into the trace. The two share the work by batch:
 * while the handler lags behind (two batches waiting), the scanner also walks each event's
 * members and hands over the members instead (REC). Buffers of inflated bytes come from the
 * inflating thread and go back to it once parsed (hm_src_take, hm_src_give). Only the handler
 * touches the columns and tables; the scanner keeps to the buffers, the top level and
 * the cut-off fields. Errors stay in file order: every event the handler sees comes
 * before anything the scanner fails on, so the handler's error wins.
 *
 * Who owns a batch (every function below keeps this; batch.owner asserts it):
 * - A batch belongs to one party at a time: the free list, the scanner (p->cur only), the
 *   queue of full batches, or the handler. Only its owner touches its buffer, containers
 *   and event records; owner changes under the mutex.
 * - While the scanner holds p->cur, r->buf/r->cap and r->tok/r->tokcap ARE that batch's
 *   buffer and containers (the scanner may reallocate them); the batch's own fields are
 *   written when it leaves the scanner (pipe_publish, pipe_finish), never read before.
 * - The scanner takes its next batch before it publishes the full one, and copies what it
 *   still needs (the unfinished event's containers, and on the plain-read path its bytes)
 *   while both are its own. After publishing, it never reads or writes that batch again,
 *   however soon the handler gives it back. (Publishing first let the scanner be handed
 *   the batch it had just published and copy the unfinished event out of freed memory:
 *   issue 11.)
 * HMEM_TEST_SCHEDULE=lockstep (for tests) forces the tightest schedule: two batches only,
 * and the handler gives each one back before the scanner goes on. */
#define NBATCH 4

enum batch_owner { B_FREE, B_SCANNER, B_QUEUED, B_HANDLER };

typedef struct batch {
	char *buf;
	size_t cap;
	int give; /* buf goes back to the source when parsed (hm_src_give) */
	int walk; /* the scanner walked the members of these events (see pipe_publish) */
	int owner; /* enum batch_owner; written under the mutex */
	uint64_t base;
	uint32_t *ev; /* REC(batch) numbers per event */
	size_t nev, evcap;
	tok *tok; /* the scanner's container array while the batch is queued (see REC) */
	size_t tokcap;
} batch;

typedef struct pipe {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	batch b[NBATCH];
	int full[NBATCH], nfull, headf; /* FIFO of batches to parse */
	int freel[NBATCH], nfree;       /* batches the scanner may fill */
	int cur;                        /* the batch the scanner fills (its buf is r->buf) */
	int end, stop;                  /* no more batches; the handler failed */
	int walk;                       /* -1: the scanner walks members while the handler lags; 0, 1: never, always */
	int lockstep, busy;             /* HMEM_TEST_SCHEDULE=lockstep; the handler holds a batch */
	rd h;                           /* the handler's reader state */
} pipe;

/* Per event in a batch: start and end in buf, then its first container and how many; or,
 * when the scanner walked the members, the eight members of ev as start and end (UINT32_MAX:
 * absent). */
#define REC(b) ((b)->walk ? 18u : 4u)

static void fifo_put(int *q, int *n, int head, int v)
{
	q[(head + *n) % NBATCH] = v;
	(*n)++;
}

static void *handler(void *arg)
{
	pipe *p = arg;
	rd *h = &p->h;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (!p->nfull && !p->end)
			pthread_cond_wait(&p->cv, &p->mu);
		if (!p->nfull) {
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		int k = p->full[p->headf];
		p->headf = (p->headf + 1) % NBATCH, p->nfull--;
		batch *b = &p->b[k];
		assert(b->owner == B_QUEUED);
		b->owner = B_HANDLER, p->busy = 1;
		pthread_mutex_unlock(&p->mu);
		h->buf = b->buf, h->base = b->base;
		for (size_t i = 0; i < b->nev && !h->failed; i++) {
			uint32_t *e = b->ev + REC(b) * i;
			if (b->walk) {
				ev x;
				for (int j = 0; j < 8; j++)
					*EV_MEMBER(&x, j) = e[2 + 2 * j] == UINT32_MAX ? (slice){0}
						: (slice){b->buf + e[2 + 2 * j], b->buf + e[3 + 2 * j]};
				handle_event(h, &x, b->buf + e[0]);
			} else {
				slice_event(h, b->buf + e[0], b->buf + e[1], tok_at(b->tok, e[2]), e[3]);
			}
			if (!h->failed)
				h->t->events++;
		}
		b->nev = 0;
		if (b->give)
			hm_src_give(h->src, b->buf, b->cap), b->buf = NULL, b->cap = 0, b->give = 0;
		pthread_mutex_lock(&p->mu);
		if (h->failed)
			p->stop = 1;
		b->owner = B_FREE, p->busy = 0;
		p->freel[p->nfree++] = k;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
}

/* A complete event [s, e) of r->buf: parsed here, or recorded for the handler. */
static void event_done(rd *r, size_t s, size_t e)
{
	if (!r->pipe) {
		slice_event(r, r->buf + s, r->buf + e, tok_at(r->tok, r->tok0), r->ntok - r->tok0);
		if (!r->failed)
			r->t->events++;
		return;
	}
	pipe *p = r->pipe;
	batch *b = &p->b[p->cur];
	ev x;
	if (b->walk && walk_event(r, r->buf + s, r->buf + e, tok_at(r->tok, r->tok0), r->ntok - r->tok0, &x) != 0)
		return;
	size_t rec = REC(b);
	if ((b->nev + 1) * rec > b->evcap)
		hm_grow(&b->ev, &b->evcap, (b->nev + 1) * rec, sizeof *b->ev);
	uint32_t *v = b->ev + rec * b->nev++;
	v[0] = (uint32_t)s, v[1] = (uint32_t)e;
	if (b->walk) { /* the members; the containers are done with */
		for (int j = 0; j < 8; j++) {
			const slice *m = EV_MEMBER(&x, j);
			v[2 + 2 * j] = m->p ? (uint32_t)(m->p - r->buf) : UINT32_MAX;
			v[3 + 2 * j] = m->p ? (uint32_t)(m->q - r->buf) : 0;
		}
		r->ntok = r->tok0;
		return;
	}
	/* the containers stay where the scanner put them: r->tok goes to the handler with the batch */
	v[2] = (uint32_t)r->tok0, v[3] = (uint32_t)(r->ntok - r->tok0);
	r->tok0 = r->ntok;
}

/* Pass the current batch (its events are in r->buf, which goes with it; give: back to the
 * source when parsed) to the handler and make a free one current, with the containers of the
 * event in progress and, unless keep is SIZE_MAX, the bytes of r->buf from keep on (in the
 * new batch's buffer, which becomes r->buf). The order is the ownership rule above: take,
 * copy, then publish. A failed handler stops the scanner through r->failed (its error is
 * the one reported). */
static batch *pipe_publish(rd *r, int give, size_t keep)
{
	pipe *p = r->pipe;
	int k = p->cur;
	batch *b = &p->b[k];
	pthread_mutex_lock(&p->mu);
	while (!p->nfree)
		pthread_cond_wait(&p->cv, &p->mu);
	int nk = p->freel[--p->nfree];
	batch *n = &p->b[nk];
	assert(nk != k && b->owner == B_SCANNER && n->owner == B_FREE);
	n->owner = B_SCANNER;
	pthread_mutex_unlock(&p->mu);
	size_t part = r->ntok - r->tok0;
	hm_grow(&n->tok, &n->tokcap, part + 64, sizeof *n->tok);
	if (part)
		memcpy(n->tok, r->tok + r->tok0, part * sizeof *n->tok);
	if (keep != SIZE_MAX) {
		if (n->cap < r->cap) {
			free(n->buf);
			n->buf = hm_xrealloc(NULL, r->cap);
			n->cap = r->cap;
		}
		memcpy(n->buf, r->buf + keep, r->len - keep);
	}
	b->buf = r->buf, b->cap = r->cap, b->base = r->base, b->give = give;
	b->tok = r->tok, b->tokcap = r->tokcap;
	r->tok = n->tok, r->tokcap = n->tokcap, r->ntok = part, r->tok0 = 0;
	if (keep != SIZE_MAX)
		r->buf = n->buf, r->cap = n->cap;
	pthread_mutex_lock(&p->mu);
	b->owner = B_QUEUED;
	fifo_put(p->full, &p->nfull, p->headf, k);
	p->cur = nk;
	pthread_cond_broadcast(&p->cv);
	while (p->lockstep && (p->nfull || p->busy))
		pthread_cond_wait(&p->cv, &p->mu);
	int stop = p->stop, behind = p->nfull >= 2; /* the handler has a batch waiting after this one */
	pthread_mutex_unlock(&p->mu);
	n->walk = p->walk < 0 ? behind : p->walk;
	if (stop) {
		r->failed = 1;
		r->eof = 1;
	}
	return n;
}

/* The scanner needs more input: pass the buffer with its events to the handler and go
 * on in a free one, starting with the bytes from keep. Returns 0 when there is nothing to
 * pass (the buffer is kept and compacted as without a handler). */
static int pipe_handover(rd *r, size_t keep)
{
	if (!r->pipe->b[r->pipe->cur].nev)
		return 0;
	pipe_publish(r, 0, keep);
	return 1;
}

/* r->buf is done with (its last bytes are copied to nb, which becomes r->buf): to the
 * handler with its events, or back to the source. A spare buffer of the batch the scanner
 * goes on in goes to the source too (nb is used instead). */
static void pass_on(rd *r, char *nb, size_t ncap)
{
	pipe *p = r->pipe;
	if (p && p->b[p->cur].nev) {
		batch *n = pipe_publish(r, 1, SIZE_MAX);
		if (n->buf)
			hm_src_give(r->src, n->buf, n->cap), n->buf = NULL, n->cap = 0;
	} else {
		hm_src_give(r->src, r->buf, r->cap);
	}
	r->buf = nb, r->cap = ncap;
}

static void pipe_start(rd *r)
{
	pipe *p = hm_xcalloc(1, sizeof *p);
	p->h = *r;
	p->h.buf = NULL, p->h.tok = NULL, p->h.scratch = NULL, p->h.scratch_cap = 0;
	p->h.err = hm_xcalloc(1, r->errsz);
	p->h.failed = 0, p->h.code = 0;
	const char *sched = getenv("HMEM_TEST_SCHEDULE");
	p->lockstep = sched && strcmp(sched, "lockstep") == 0;
	for (int i = 1; i < (p->lockstep ? 2 : NBATCH); i++)
		p->freel[p->nfree++] = i;
	/* HMEM_WALK=handler or =scanner fixes which thread walks members, to compare them */
	const char *w = getenv("HMEM_WALK");
	p->walk = w && strcmp(w, "handler") == 0 ? 0 : w && strcmp(w, "scanner") == 0 ? 1 : -1;
	p->b[0].walk = p->walk > 0;
	p->b[0].owner = B_SCANNER; /* its buffer and containers are r->buf and r->tok */
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pthread_create(&p->thread, NULL, handler, p) != 0) {
		free(p->h.err);
		free(p);
		return; /* events are parsed in place */
	}
	pthread_setname_np(p->thread, "hmem-events"); /* for perf and top */
	r->pipe = p;
}

/* The last events, then wait for the handler; its error, if any, becomes the reader's. */
static void pipe_finish(rd *r)
{
	pipe *p = r->pipe;
	if (!p)
		return;
	batch *b = &p->b[p->cur];
	b->buf = r->buf, b->cap = r->cap, b->base = r->base, b->give = 0;
	b->tok = r->tok, b->tokcap = r->tokcap;
	r->buf = NULL, r->tok = NULL; /* freed below with the batches */
	pthread_mutex_lock(&p->mu);
	assert(b->owner == B_SCANNER);
	if (b->nev)
		b->owner = B_QUEUED, fifo_put(p->full, &p->nfull, p->headf, p->cur);
	p->end = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	rd *h = &p->h;
	if (h->failed) {
		r->failed = 1, r->code = h->code;
		snprintf(r->err, r->errsz, "%s", h->err);
	}
	for (int i = 0; i < NBATCH; i++)
		free(p->b[i].buf), free(p->b[i].ev), free(p->b[i].tok);
	free(h->scratch);
	free(h->err);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
	r->pipe = NULL;
}

/* The bytes [from, to) between two events: white space, and one comma unless first. A gap
 * is checked in parts as the buffer refills (end 0), so a long run of white space is never
 * held whole (issue 11); *comma carries the offset of the comma seen (UINT64_MAX: none yet).
 * The last part (end 1) stops at the next event's '{' or, closing, at the ']'. */
static int gap_ok(rd *r, size_t from, size_t to, int first, int closing, int end, uint64_t *comma)
{
	if (end && *comma == UINT64_MAX && !first && !closing && from < to && r->buf[from] == ',') { /* the usual ",\n  " */
		size_t k = from + 1;
		while (k < to && is_ws(r->buf[k]))
			k++;
		if (k == to)
			return 1;
	}
	for (size_t k = from; k < to; k++) {
		char c = r->buf[k];
		if (is_ws(c))
			continue;
		if (c == ',' && *comma == UINT64_MAX && !first) {
			*comma = r->base + k;
			continue;
		}
		if (c == ',')
			fail_at(r, r->base + k, first ? "a comma before the first event" : "two commas between events", 0, 0);
		else
			not_an_event(r, r->buf + k);
		return 0;
	}
	if (!end)
		return 1;
	if (closing && *comma != UINT64_MAX) {
		fail_at(r, *comma, "a comma after the last event (not valid JSON)", 0, 0);
		return 0;
	}
	if (!closing && !first && *comma == UINT64_MAX) {
		fail_at(r, r->base + to, "expected ',' or ']' between events", 0, 0);
		return 0;
	}
	return 1;
}

/* The events array, from its '[' to its ']', in one pass over 64-byte blocks: depth 0 is
 * between events, an event is the bytes from a '{' at depth 0 to its matching '}'. The
 * quotes of each block give the bytes inside strings (escapes carried from block to
 * block), so brackets in strings are never seen. Only brackets are visited: each event's
 * depth-1 containers are recorded, and walk_event crosses the rest of its members. */
static void parse_events(rd *r)
{
	r->t->has_trace_events = 1;
	r->pos++; /* '[' */
	r->t->events_at = r->base + r->pos;
	size_t i = r->pos, ev_start = 0, gap = r->pos, cont_start = 0;
	uint64_t gap_at = r->base + gap, comma = UINT64_MAX; /* where the gap started; its comma (see gap_ok) */
	int depth = 0, first = 1;
	uint64_t esc_carry = 0, str_carry = 0; /* from the block before: next byte escaped; inside a string */
	classify_fn classify = pick_classify();
	blk cb[CHUNK]; /* the blocks from cb_at to cb_end, classified */
	size_t cb_at = 1, cb_end = 0;
	for (;;) {
		if (i >= r->len) {
			/* the gap so far first: an error in it comes before the end of the input */
			if ((r->eof || r->failed) && !depth && !r->failed && !gap_ok(r, gap, i, first, 0, 0, &comma))
				return;
			if ((r->eof || r->failed) && r->keep_partial) {
				/* A job killed while writing: keep every complete event before the cut. */
				hm_trace *t = r->t;
				t->cut_at = depth ? r->base + ev_start : gap_at;
				t->lost_bytes = r->base + r->len - t->cut_at;
				if (!r->failed)
					snprintf(r->err, r->errsz, "%s:%llu: the file ends inside %s (cut-off JSON: was the job killed "
						 "while writing the trace?)", r->path, (unsigned long long)t->cut_at,
						 depth ? "the event that starts here" : "traceEvents");
				t->cut_why = hm_xstrdup(r->err);
				r->failed = 0;
				r->truncated = 1;
				return;
			}
			if (r->eof || r->failed) {
				if (!r->failed)
					fail_at(r, r->base + (depth ? ev_start : i),
						depth ? "the file ends inside the value that starts here (cut-off JSON: was the job killed while writing the trace?)"
						      : "the file ends inside traceEvents (cut-off JSON: was the job killed while writing the trace?)", 0, 0);
				return;
			}
		}
		if (r->len - i < 64 && !r->eof && !r->failed) {
			/* Whole blocks only until the end: the carries are right at a block's end. The gap
			 * read so far is checked and let go. */
			if (!depth) {
				if (!gap_ok(r, gap, i, first, 0, 0, &comma))
					return;
				gap = i;
			}
			size_t shift = fill(r, depth ? ev_start : gap);
			i -= shift, ev_start -= shift, gap -= shift, cont_start -= shift;
			cb_at = 1, cb_end = 0; /* the bytes have moved */
			continue;
		}
		size_t n = r->len - i < 64 ? r->len - i : 64;
		if (i < cb_at || i >= cb_end) { /* classify the next whole blocks (a partial one alone) */
			size_t nb = (r->len - i) / 64 > CHUNK ? CHUNK : (r->len - i) / 64;
			if (nb)
				classify((const unsigned char *)r->buf + i, nb, cb);
			else
				cb[0] = classify64((const unsigned char *)r->buf + i), nb = 1;
			cb_at = i, cb_end = i + 64 * nb;
		}
		blk b = cb[(i - cb_at) / 64];
		if (n < 64) {
			uint64_t keep = (UINT64_C(1) << n) - 1;
			b.quote &= keep, b.bslash &= keep, b.bracket &= keep;
		}
		uint64_t quotes = b.quote & ~escaped64(b.bslash, &esc_carry);
		uint64_t in_str = prefix_xor(quotes) ^ str_carry; /* opening quote and body */
		str_carry = (uint64_t)((int64_t)in_str >> 63);
		uint64_t brackets = b.bracket & ~in_str;
		const char *buf = r->buf;
		while (brackets) {
			unsigned at = (unsigned)__builtin_ctzll(brackets);
			brackets &= brackets - 1;
			size_t j = i + at;
			char c = buf[j];
			if (c == '{' || c == '[') {
				if (depth == 0) {
					if (!gap_ok(r, gap, j, first, 0, 1, &comma))
						return;
					if (c == '[') {
						not_an_event(r, r->buf + j);
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
				if (!gap_ok(r, gap, j, first, 1, c == ']', &comma))
					return;
				if (c == '}') {
					fail_at(r, r->base + j, "unbalanced '}' in traceEvents", 0, 0);
					return;
				}
				r->pos = j + 1;
				return;
			} else if (--depth == 1) {
				add_tok(r, cont_start - ev_start, j - ev_start);
			} else if (depth == 0) {
				event_done(r, ev_start, j + 1);
				if (r->failed)
					return;
				gap = j + 1;
				gap_at = r->base + gap, comma = UINT64_MAX;
				first = 0;
			}
		}
		i += n;
	}
}

static void dist_member(rd *r, const char *key, size_t klen, slice v, void *ud)
{
	int64_t *rank = ud, x;
	if (!KEY("rank") && !(unescaped_key(r, &key, &klen) && KEY("rank")))
		return;
	const char *s = v.p;
	size_t n = (size_t)(v.q - v.p);
	if (*s == '"')
		s = str_value(r, v.p, v.q, &n);
	if (s && !hm_num_i64(s, n, 0, 0, &x))
		*rank = x;
	else
		fail_at(r, off_of(r, v.p), "distributedInfo.rank is %s, expected an integer", kind_of(v), 0);
}

static void parse_top(rd *r)
{
	/* The first read may be short (a gzip member of two bytes): a BOM is only seen whole. */
	while (r->len - r->pos < 3 && !r->eof && !r->failed)
		fill(r, r->pos);
	if (r->len - r->pos >= 3 && memcmp(r->buf + r->pos, "\xef\xbb\xbf", 3) == 0)
		r->pos += 3;
	int c = peek(r);
	if (c < 0) {
		if (!r->failed)
			fail_at(r, 0, "the file is empty (no JSON in it)", 0, 0);
		return;
	}
	if (c == '[') {
		r->top_array = 1;
		parse_events(r);
		if (r->truncated)
			return;
	} else if (c == '{') {
		r->pos++;
		c = peek(r);
		if (c == '}')
			r->pos++;
		while (c != '}') {
			size_t ks;
			if (c != '"') {
				fail_at(r, r->base + r->pos, c < 0 ? "the file ends inside the top-level object (cut-off JSON)"
								   : "expected a key string in the top-level object", 0, 0);
				return;
			}
			if (scan_value(r, 1, &ks) < 0)
				return;
			size_t klen = r->pos - ks - 2;
			const char *key = r->buf + ks + 1;
			int is_events = KEY("traceEvents"), is_dist = KEY("distributedInfo");
			if (!is_events && !is_dist && unescaped_key(r, &key, &klen))
				is_events = KEY("traceEvents"), is_dist = KEY("distributedInfo");
			if (peek(r) != ':') {
				fail_at(r, r->base + r->pos, "expected ':' after a key", 0, 0);
				return;
			}
			r->pos++;
			c = peek(r);
			if (c < 0) {
				fail_at(r, r->base + r->pos, "the file ends after a key (cut-off JSON)", 0, 0);
				return;
			}
			size_t vs;
			if (is_events && c == '[' && r->t->has_trace_events) {
				/* JSON parsers keep the last of duplicate keys, but the events of the first
				 * array are streamed into the columns already: refuse rather than mix both. */
				fail_at(r, r->base + r->pos, "a second traceEvents array (the events of the first are read already)", 0, 0);
				return;
			} else if (is_events && c == '[') {
				parse_events(r);
				if (r->truncated)
					return;
			} else if (is_dist && c == '{') {
				if (scan_value(r, 1, &vs) == 0) {
					const char *bad = members(r, r->buf + vs, r->buf + r->pos, dist_member, &r->t->rank);
					if (bad)
						fail_at(r, off_of(r, bad), "invalid JSON in distributedInfo", 0, 0);
				}
			} else if (is_events && c != 'n') {
				fail_at(r, r->base + r->pos, "traceEvents is not an array", 0, 0);
			} else if (is_events) {
				/* null is no events; "nope" is no null (issue 11) */
				if (scan_value(r, 1, &vs) == 0 && (r->pos - vs != 4 || memcmp(r->buf + vs, "null", 4) != 0))
					fail_at(r, r->base + vs, "traceEvents is not valid JSON (expected an array or null)", 0, 0);
			} else {
				scan_value(r, 0, &vs);
			}
			if (r->failed)
				return;
			c = peek(r);
			if (c == ',') {
				r->pos++;
				c = peek(r);
			} else if (c == '}') {
				r->pos++;
			} else {
				fail_at(r, r->base + r->pos, c < 0 ? "the file ends inside the top-level object (cut-off JSON)"
								   : "expected ',' or '}' in the top-level object", 0, 0);
				return;
			}
		}
	} else {
		fail_at(r, r->base + r->pos, "not a JSON trace: expected '{' or '[' at the start", 0, 0);
		return;
	}
	if (!r->failed && peek(r) >= 0)
		fail_at(r, r->base + r->pos, "unexpected data after the end of the JSON value", 0, 0);
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

static hm_trace *run(rd *r, const char *path, char *err, size_t errsz, int *code, uint64_t *lost)
{
	hm_trace *t = hm_xcalloc(1, sizeof *t);
	t->path = hm_xstrdup(path);
	t->rank = HM_NONE;
	t->first_ts = HM_NONE;
	r->t = t;
	for (int i = 0; i < 16; i++)
		r->tcache[i].id = UINT32_MAX;
	r->path = path;
	r->err = err;
	r->errsz = errsz;
	if (r->src) {
		reserve(r);
		fill(r, 0);
	}
	if (r->src && r->threaded && !r->failed && !r->eof)
		pipe_start(r);
	parse_top(r);
	pipe_finish(r);
	free(r->scratch);
	free(r->tok);
	free(r->buf);
	if (lost)
		*lost = r->failed ? t->events : 0;
	if (r->failed) {
		if (code)
			*code = r->code;
		hm_trace_free(t);
		return NULL;
	}
	if (t->rank == HM_NONE)
		t->rank = hm_trace_rank_from_name(path);
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
	uint64_t *progress = o->progress;
	if (lost)
		*lost = 0;
	hm_src *src = hm_src_open_threads(path, o->threads > 1, err, errsz);
	if (!src) {
		*code = HM_EXIT_IO;
		return NULL;
	}
	rd r = {0};
	r.src = src;
	r.progress = progress;
	r.keep_partial = o->keep_partial;
	r.threaded = o->threads > 1;
	hm_trace *t = run(&r, path, err, errsz, code, lost);
	hm_src_close(src);
	return t;
}

hm_trace *hm_trace_parse(const char *name, const char *text, size_t len, char *err, size_t errsz)
{
	rd r = {0};
	r.eof = 1;
	r.cap = len + PAD;
	r.buf = hm_xcalloc(r.cap, 1);
	memcpy(r.buf, text, len);
	r.len = len;
	return run(&r, name, err, errsz, NULL, NULL);
}

void hm_trace_free(hm_trace *t)
{
	if (!t)
		return;
	hm_mem *m = &t->mem;
	free(m->ts), free(m->bytes), free(m->addr), free(m->total_alloc), free(m->total_res);
	free(m->ev_idx), free(m->dev_type), free(m->dev_id), free(m->thread), free(m->has_addr);
	hm_slices *o = &t->sl;
	free(o->ts), free(o->dur), free(o->name), free(o->thread), free(o->cat), free(o->kind);
	free(t->thread_name);
	free(t->cut_why);
	hm_strtab_free(&t->names);
	hm_strtab_free(&t->threads);
	free(t->path);
	free(t);
}
