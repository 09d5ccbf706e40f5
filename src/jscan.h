/* jscan: the JSON reader's pure helpers: 64-byte structural blocks (quotes, backslashes,
 * brackets), string ends and escapes, white space, exact numbers, member walks. No state,
 * no threads, no allocation except the caller's unescape scratch: each can be unit-tested
 * and fuzzed on a buffer alone. Plain C, no Lua.
 *
 * Ownership: every function reads text the caller owns and returns pointers into it, or
 * into the caller's hm_jscan_scratch (valid until the next call with that scratch; the
 * caller frees scratch.buf). Buffers given to the scans below must have HM_JSCAN_PAD
 * readable bytes after their end (the block scan reads 64 bytes at a time, the white
 * space and number scans 16) and hold complete values (an event ends with its '}').
 *
 * The hot helpers are static inline here: they are called per member of every event, and
 * a call across files there costs measurably (README "Performance"). */
#ifndef HM_JSCAN_H
#define HM_JSCAN_H

#include "util.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define HM_JSCAN_PAD 64

/* The value text [p, q); p == NULL when absent. */
typedef struct hm_slice {
	const char *p, *q;
} hm_slice;

/* s is the string literal lit (a length known at compile time: the compare is inlined) */
#define HM_SLICE_IS(s, lit) \
	((s).p && (size_t)((s).q - (s).p) == sizeof lit + 1 && *(s).p == '"' && memcmp((s).p + 1, lit, sizeof lit - 1) == 0)

/* A depth-1 container of an event (args, mostly): its brackets, as offsets from the
 * event's start, so they survive the buffer moving. */
typedef struct hm_jtok {
	uint32_t start, end;
} hm_jtok;

/* The containers from i on; NULL while there are none (NULL + 0 is undefined behaviour). */
static inline const hm_jtok *hm_jscan_tok_at(const hm_jtok *v, size_t i)
{
	return v ? v + i : NULL;
}

/* ---- structural blocks ---- */

/* Sixty-four bytes at a time, the masks of their quotes, backslashes and brackets ('{',
 * '}', '[', ']': '[' and ']' are '{' and '}' with bit 0x20 clear), and of the opening
 * brackets among them ('{', '['), so that brackets deep inside an event are counted without
 * looking at each byte again. */
typedef struct hm_jscan_blk {
	uint64_t quote, bslash, bracket, open;
} hm_jscan_blk;

static inline hm_jscan_blk hm_jscan_classify64(const unsigned char *p)
{
	hm_jscan_blk b = {0, 0, 0, 0};
#ifdef __SSE2__
	const __m128i q = _mm_set1_epi8('"'), s = _mm_set1_epi8('\\'), o = _mm_set1_epi8('{'), c = _mm_set1_epi8('}'),
		      x = _mm_set1_epi8(0x20);
	for (int k = 0; k < 4; k++) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
		__m128i w = _mm_or_si128(v, x);
		b.quote |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, q)) << (16 * k);
		b.bslash |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, s)) << (16 * k);
		__m128i op = _mm_cmpeq_epi8(w, o);
		b.bracket |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_or_si128(op, _mm_cmpeq_epi8(w, c))) << (16 * k);
		b.open |= (uint64_t)(uint16_t)_mm_movemask_epi8(op) << (16 * k);
	}
#else
	for (int k = 0; k < 64; k++) {
		unsigned char ch = p[k] | 0x20;
		b.quote |= (uint64_t)(p[k] == '"') << k;
		b.bslash |= (uint64_t)(p[k] == '\\') << k;
		b.bracket |= (uint64_t)(ch == '{' || ch == '}') << k;
		b.open |= (uint64_t)(ch == '{') << k;
	}
#endif
	return b;
}

/* Classify n whole blocks from p into out[0, n): one call per run of blocks, so the choice
 * between instruction sets costs nothing per block. */
#define HM_JSCAN_CHUNK 64
typedef void (*hm_jscan_classify_fn)(const unsigned char *p, size_t n, hm_jscan_blk *out);

/* The best classifier for this CPU (AVX-512BW, else AVX2, else the baseline: SSE2 on
 * x86-64); HMEM_SIMD=base or =avx2 keeps to that code, to compare them. Thread-safe. */
hm_jscan_classify_fn hm_jscan_pick_classify(void);

/* The classifier of one instruction set by name ("base", "avx2", "avx512"); NULL when this
 * CPU or build has none (for tests: each is compared with the baseline). */
hm_jscan_classify_fn hm_jscan_classify_named(const char *name);

/* The bytes escaped by a backslash (the byte after an odd run of them), carried across
 * blocks in *carry (simdjson's method: runs starting on even and odd bits are told apart
 * with one addition). */
static inline uint64_t hm_jscan_escaped(uint64_t bs, uint64_t *carry)
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
static inline uint64_t hm_jscan_prefix_xor(uint64_t x)
{
	x ^= x << 1, x ^= x << 2, x ^= x << 4;
	x ^= x << 8, x ^= x << 16, x ^= x << 32;
	return x;
}

/* What one block passes to the next: the first byte of the next is escaped (esc); the
 * block ends inside a string (str: all ones). Zero at the start of a text. */
typedef struct hm_jscan_carry {
	uint64_t esc, str;
} hm_jscan_carry;

/* The bytes of the block b inside strings (each string's opening quote and its body), with
 * the state carried from the block before (updated for the next). */
static inline uint64_t hm_jscan_in_string(hm_jscan_blk b, hm_jscan_carry *c)
{
	uint64_t quotes = b.quote & ~hm_jscan_escaped(b.bslash, &c->esc);
	uint64_t in_str = hm_jscan_prefix_xor(quotes) ^ c->str;
	c->str = (uint64_t)((int64_t)in_str >> 63);
	return in_str;
}

/* A block's brackets outside strings, and the opening ones among them. */
typedef struct hm_jscan_brk {
	uint64_t bracket, open;
} hm_jscan_brk;

/* The structure of n (1 to HM_JSCAN_CHUNK) whole blocks from p, one after the other: out[k]
 * is block k's brackets outside strings, c the string state carried in from the block before
 * p and out to the block after the last. Returns the blocks that have a bracket outside
 * strings (bit k: out[k].bracket is not 0), so that a reader goes from one to the next
 * without looking at the others. One call per run of blocks; the vector versions classify
 * and follow strings in one loop (the prefix xor as a carry-less multiply). */
typedef uint64_t (*hm_jscan_brackets_fn)(const unsigned char *p, size_t n, hm_jscan_brk *out, hm_jscan_carry *c);

/* The best for this CPU, as hm_jscan_pick_classify chooses (HMEM_SIMD). Thread-safe. */
hm_jscan_brackets_fn hm_jscan_pick_brackets(void);

/* One instruction set's by name, as hm_jscan_classify_named (for tests). */
hm_jscan_brackets_fn hm_jscan_brackets_named(const char *name);

/* The instruction set those run, for other vector code to follow (pack.c): 0 the baseline,
 * 1 AVX2, 2 AVX-512BW; HMEM_SIMD lowers it. Thread-safe. */
int hm_jscan_simd(void);

/* ---- strings, white space, scalars ---- */

/* The closing quote of a string whose body starts at p, or NULL if [p, e) ends first.
 * memchr finds candidate quotes; a quote preceded by an odd run of backslashes is escaped. */
static inline const char *hm_jscan_string_end(const char *p, const char *e)
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

/* Bytes that end a number or literal: ',', '}', ']', white space (and NUL, a stop). */
static const unsigned char hm_jscan_ends_scalar[256] = {
	[0] = 1, [','] = 1, ['}'] = 1, [']'] = 1, [' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\t'] = 1,
};

static const unsigned char hm_jscan_ws_byte[256] = {[' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\t'] = 1};

static inline int hm_jscan_is_ws(char c)
{
	return hm_jscan_ws_byte[(unsigned char)c];
}

/* Past the white space at p (which stops before the end of the buffer: an event ends with
 * '}' and the buffer has PAD bytes more). Mostly there is none or one space; a new line
 * and its indent are crossed sixteen bytes at a time. */
static inline const char *hm_jscan_past_ws(const char *p)
{
	if (!hm_jscan_is_ws(*p))
		return p;
	if (!hm_jscan_is_ws(*++p))
		return p;
	/* A new line's indent as profilers write it, four spaces before a key and two before an
	 * event's '}', checked as a word: the next scan starts on a predicted branch instead of
	 * waiting for the scan of the white space. */
	uint32_t ind;
	memcpy(&ind, p, 4);
	if (ind == 0x20202020u && !hm_jscan_is_ws(p[4]))
		return p + 4;
	if ((ind & 0xffffu) == 0x2020u && !hm_jscan_is_ws(p[2]))
		return p + 2;
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
	while (hm_jscan_is_ws(*p))
		p++;
	return p;
#endif
}

/* Past the closing quote of the string whose opening quote is at p, within [p, e): keys
 * and short values sixteen bytes at a time; a backslash hands over to string_end. */
static inline const char *hm_jscan_quote_end(const char *p, const char *e)
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
	const char *q = hm_jscan_string_end(p + 1, e);
	return q ? q + 1 : e;
}

/* Whether c holds sep, one space and then no white space: the ": " and ", " profilers
 * write, one compare of two bytes and a look at the third (the general scans cost a chain
 * of them per member). */
static inline __attribute__((always_inline)) int hm_jscan_sep_space(const char *c, char sep)
{
	uint16_t w;
	memcpy(&w, c, 2);
	return w == (uint16_t)((unsigned char)sep | ' ' << 8) && !hm_jscan_is_ws(c[2]);
}

/* From a key's closing quote at p to its value: *p moves past the ':' and the white space
 * after it, and 1 is returned; or 0 with *p at the byte where the ':' should be. p lies
 * inside an object ending with '}'. */
static inline __attribute__((always_inline)) int hm_jscan_colon(const char **p)
{
	const char *c = *p;
	if (hm_jscan_sep_space(c, ':')) {
		*p = c + 2;
		return 1;
	}
	c = hm_jscan_past_ws(c);
	if (*c != ':') {
		*p = c;
		return 0;
	}
	*p = hm_jscan_past_ws(c + 1);
	return 1;
}

/* From a member's value end at p to what follows: the next key past ", " gives 1 with *p
 * at it; else *p moves past the white space and 0 is returned (the caller looks at the ','
 * or '}' there). */
static inline __attribute__((always_inline)) int hm_jscan_comma(const char **p)
{
	const char *c = *p;
	if (hm_jscan_sep_space(c, ',')) {
		*p = c + 2;
		return 1;
	}
	*p = hm_jscan_past_ws(c);
	return 0;
}

/* The end of the number or literal at p: the first byte of ends_scalar. */
static inline const char *hm_jscan_scalar_end(const char *p)
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
	while (!hm_jscan_ends_scalar[(unsigned char)*p])
		p++;
	return p;
#endif
}

/* End of the value starting at p (which is complete in [p, e)); e when it is not. */
const char *hm_jscan_skip(const char *p, const char *e);

/* Where unescaped strings go; the caller owns buf (free it), zero-initialised to start. */
typedef struct hm_jscan_scratch {
	char *buf;
	size_t cap;
} hm_jscan_scratch;

/* The string value [p, q) with its escapes decoded (\uXXXX to UTF-8, lone surrogates to
 * U+FFFD), into s. Returns NULL on a bad escape. */
const char *hm_jscan_unescape(hm_jscan_scratch *s, const char *p, const char *q, size_t *len);

/* The string value [p, q) including quotes, decoded: points into the text when it has no
 * escapes, else into s. Returns NULL on a bad escape. */
static inline const char *hm_jscan_str(hm_jscan_scratch *s, const char *p, const char *q, size_t *len)
{
	if (!memchr(p + 1, '\\', (size_t)(q - p - 2))) {
		*len = (size_t)(q - p - 2);
		return p + 1;
	}
	return hm_jscan_unescape(s, p, q, len);
}

/* What a JSON value is, from its first byte ("a string", "an object", ...). */
const char *hm_jscan_kind_at(char c);
/* What the whole value s is: true, false and null only as those exact words ("nan" is
 * no null: issue 11), else "not valid JSON". */
const char *hm_jscan_kind_of(hm_slice s);

/* The value starts like a string, container or literal, not a number. */
static inline int hm_jscan_not_number(const char *p)
{
	return *p == '"' || *p == '{' || *p == '[' || *p == 't' || *p == 'f' || *p == 'n';
}

/* ---- members ---- */

/* Walk the members of the object [p, e) (complete, ending with its '}'); calls fn for each
 * key (its text as written, without quotes) and value. Returns NULL, or the position of a
 * syntax error. */
typedef void (*hm_jscan_member_fn)(void *ud, const char *key, size_t klen, hm_slice val);

/* The member a key names, known from its bytes at c (its opening quote) without a scan for
 * its closing quote (*ke: past it); NULL for a key to scan and give to fn. */
typedef hm_slice *(*hm_jscan_known_fn)(void *ud, const char *c, const char **ke);

/* hm_jscan_members, with keys that known recognises stored in the member it gives (fn is
 * not called for them). known may be NULL. */
static inline __attribute__((always_inline)) const char *hm_jscan_members_known(const char *p, const char *e,
										  hm_jscan_known_fn known,
										  hm_jscan_member_fn fn, void *ud)
{
	/* [p, e) ends with its '}', where the white space and number scans stop at the latest */
	p = hm_jscan_past_ws(p + 1);
	if (p < e && *p == '}')
		return NULL;
	for (;;) {
		if (p >= e || *p != '"')
			return p;
		const char *kq;
		hm_slice *slot = known ? known(ud, p, &kq) : NULL;
		if (!slot && ((kq = hm_jscan_quote_end(p, e)) > e || kq[-1] != '"'))
			return p;
		const char *v = kq;
		if (!hm_jscan_colon(&v))
			return v;
		const char *ve = *v == '"' ? hm_jscan_quote_end(v, e) : *v == '{' || *v == '[' ? hm_jscan_skip(v, e)
											: hm_jscan_scalar_end(v);
		if (v >= e || ve == v)
			return v;
		if (slot)
			*slot = (hm_slice){v, ve};
		else
			fn(ud, p + 1, (size_t)(kq - p - 2), (hm_slice){v, ve});
		p = ve;
		if (hm_jscan_comma(&p))
			continue;
		if (p < e && *p == ',') {
			p = hm_jscan_past_ws(p + 1);
			continue;
		}
		if (p < e && *p == '}')
			return NULL;
		return p;
	}
}

static inline __attribute__((always_inline)) const char *hm_jscan_members(const char *p, const char *e, hm_jscan_member_fn fn,
									    void *ud)
{
	return hm_jscan_members_known(p, e, NULL, fn, ud);
}

/* ---- numbers ---- */

/* Eight digits at a time (SWAR: all eight are '0'..'9'). */
static inline int hm_jscan_swar8_digits(uint64_t w)
{
	return ((w & 0xf0f0f0f0f0f0f0f0ull) | (((w + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull) >> 4)) ==
	       0x3333333333333333ull;
}

static inline uint64_t hm_jscan_swar8_value(uint64_t w)
{
	w -= 0x3030303030303030ull;
	w = (w * 10) + (w >> 8);
	return (((w & 0x000000ff000000ffull) * (100 + (1000000ull << 32))) +
		(((w >> 16) & 0x000000ff000000ffull) * (1 + (10000ull << 32)))) >> 32;
}

/* Eight digits at a time while they last, at most max digits in all (fewer when the text
 * ends); *v accumulates them. */
static inline const char *hm_jscan_digits8(const char *p, const char *e, long max, int64_t *v)
{
	const char *s = p;
	uint64_t w;
	while (e - p >= 8 && (p - s) + 8 <= max) {
		memcpy(&w, p, 8);
		if (!hm_jscan_swar8_digits(w))
			break;
		*v = *v * 100000000 + (int64_t)hm_jscan_swar8_value(w);
		p += 8;
	}
	return p;
}

/* Eight bytes that are not all digits give a nonzero word (SWAR, as the above). */
static inline uint64_t hm_jscan_swar8_nondigit(uint64_t w)
{
	return ((w & 0xf0f0f0f0f0f0f0f0ull) | (((w + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull) >> 4)) ^
	       0x3333333333333333ull;
}

/* hm_jscan_ns beyond its common forms (jscan.c). */
const char *hm_jscan_ns_general(const char *p, const char *e, int64_t *out);

/* hm_jscan_ns's words (below): the text [p, e) of len bytes, 8 to 19, is digits and, where
 * dec is 3, a point and three decimals (at most 15 digits before it), or where dec is 0 a
 * whole number of µs (at most 16 digits); no leading zero. Words are loaded from the text
 * itself, never from bytes just stored (a store of single bytes read back as a word stalls
 * the load for many cycles). The last eight bytes are four digits, the point and the
 * decimals, whose seven digits close up behind a '0' (dec 3), or eight digits (dec 0). The
 * k digits before them come in a word loaded at p (k <= 8, filled with '0's in front), or in
 * two (k > 8): the last eight from their last eight bytes, the first k - 8 from a word at p,
 * filled so. 1 with the ns in *out; 0 where a byte is no digit, or (dec 0) from INT64_MAX /
 * 1000 µs on, which the general parser gives exactly or refuses. */
static inline __attribute__((always_inline)) int hm_jscan_ns_words(const char *p, const char *e, size_t len, unsigned dec,
								     int64_t *out)
{
	const uint64_t zeros = 0x3030303030303030ull;
	uint64_t t, h = zeros, g = zeros;
	memcpy(&t, e - 8, 8);
	if (dec)
		t = ((t & 0xffffffffull) | (t >> 40) << 32) << 8 | 0x30;
	size_t k = len - 8;
	if (k > 8) {
		memcpy(&g, p, 8);
		g = g << (8 * (16 - k)) | zeros >> (8 * (k - 8));
		memcpy(&h, p + k - 8, 8);
	} else if (k) {
		memcpy(&h, p, 8);
		h = h << (8 * (8 - k)) | (k < 8 ? zeros >> (8 * k) : 0);
	}
	if (hm_jscan_swar8_nondigit(t) | hm_jscan_swar8_nondigit(h) | hm_jscan_swar8_nondigit(g))
		return 0;
	uint64_t units = (hm_jscan_swar8_value(g) * 100000000 + hm_jscan_swar8_value(h)) * (dec ? 10000000 : 100000000) +
			 hm_jscan_swar8_value(t);
	if (!dec && units >= INT64_MAX / 1000)
		return 0;
	*out = (int64_t)units * (dec ? 1 : 1000);
	return 1;
}

/* Exact µs text [p, e) to ns: the common forms here, anything else through hm_num_i64.
 * Returns NULL, or hm_num_i64's message. Inlined where it is called per event: the forms
 * profilers write take a few words and no loop. */
static inline __attribute__((always_inline)) const char *hm_jscan_ns(const char *p, const char *e, int64_t *out)
{
	size_t len = (size_t)(e - p), ip = len - 4;
	if (len >= 8 && len <= 19 && p[ip] == '.' && p[0] != '0') {
		/* The form profilers write, up to 15 digits then '.' and three (ns). */
		if (hm_jscan_ns_words(p, e, len, 3, out))
			return NULL;
	} else if (len >= 5 && len <= 7 && p[ip] == '.' && (p[0] != '0' || ip == 1)) {
		/* Shorter (durations): the one to three digits before the point from a load at p,
		 * the three after it from one at e - 4, closed up behind '0's. */
		uint32_t lo, hi;
		memcpy(&lo, p, 4), memcpy(&hi, e - 4, 4);
		uint64_t w = ((uint64_t)lo & ((UINT64_C(1) << (8 * ip)) - 1)) | (uint64_t)(hi >> 8) << (8 * ip);
		size_t nd = ip + 3;
		w = w << (8 * (8 - nd)) | UINT64_C(0x3030303030303030) >> (8 * nd);
		if (hm_jscan_swar8_digits(w)) {
			*out = (int64_t)hm_jscan_swar8_value(w);
			return NULL;
		}
	} else if (len - 8 <= 8 && p[0] != '0') {
		/* Whole µs, 8 to 16 digits (traces of 2022 and before: "ts": 1669783687464181) */
		if (hm_jscan_ns_words(p, e, len, 0, out))
			return NULL;
	}
	return hm_jscan_ns_general(p, e, out);
}

/* Integer text [p, e): a plain optional '-' and up to 18 digits here; anything else goes
 * through hm_num_i64, which knows exponents and 64-bit limits. Returns NULL or its message. */
static inline const char *hm_jscan_int(const char *p, const char *e, int64_t *out)
{
	const char *s = p;
	int neg = p < e && *p == '-';
	p += neg;
	int64_t v = 0;
	const char *d = p;
	p = hm_jscan_digits8(p, e, 18, &v);
	while (p < e && *p >= '0' && *p <= '9' && p - d < 18)
		v = v * 10 + (*p++ - '0');
	if (p != e || p == d || (*d == '0' && p - d > 1))
		return hm_num_i64(s, (size_t)(e - s), 0, 0, out);
	*out = neg ? -v : v;
	return NULL;
}

/* hm_jscan_int for text inside a buffer of the scans above (HM_JSCAN_PAD readable bytes
 * after it, so a word loaded at the first digit never leaves it): up to sixteen digits in
 * one or two words loaded from the text, with no loop whose end depends on the length
 * (sizes, addresses and totals of [memory] events vary in length from one to the next). */
static inline __attribute__((always_inline)) const char *hm_jscan_int_padded(const char *p, const char *e, int64_t *out)
{
	const char *d = p + (p < e && *p == '-');
	size_t n = (size_t)(e - d), k = n > 8 ? n - 8 : n;
	if (n - 1 < 16 && (*d != '0' || n == 1)) {
		const uint64_t zeros = 0x3030303030303030ull;
		uint64_t a, b = zeros;
		memcpy(&a, d, 8);
		if (k < 8)
			a = a << (8 * (8 - k)) | zeros >> (8 * k);
		if (n > 8)
			memcpy(&b, e - 8, 8);
		if (hm_jscan_swar8_digits(a) && hm_jscan_swar8_digits(b)) {
			uint64_t v = n > 8 ? hm_jscan_swar8_value(a) * 100000000 + hm_jscan_swar8_value(b) : hm_jscan_swar8_value(a);
			*out = d != p ? -(int64_t)v : (int64_t)v;
			return NULL;
		}
	}
	return hm_jscan_int(p, e, out);
}

#endif
