/* The jscan helpers that are not on the per-member path (see jscan.h): skipping nested
 * values, decoding escapes, naming value kinds, and the block classifiers. */
#include "jscan.h"

#include <ctype.h>
#include <stdlib.h>
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define HAVE_AVX512_CLONE 1
#endif

const char *hm_jscan_skip(const char *p, const char *e)
{
	if (p >= e)
		return p;
	if (*p != '{' && *p != '[' && *p != '"') {
		while (p < e && !hm_jscan_ends_scalar[(unsigned char)*p])
			p++;
		return p;
	}
	long depth = 0;
	while (p < e) {
		char c = *p++;
		if (c == '"') {
			const char *q = hm_jscan_string_end(p, e);
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

const char *hm_jscan_unescape(hm_jscan_scratch *s, const char *p, const char *q, size_t *len)
{
	p++, q--;
	if (!memchr(p, '\\', (size_t)(q - p))) {
		*len = (size_t)(q - p);
		return p;
	}
	hm_grow(&s->buf, &s->cap, (size_t)(q - p) + 4, 1);
	char *o = s->buf;
	size_t n = 0;
	for (; p < q; p++) {
		if (*p != '\\') {
			o[n++] = *p;
			continue;
		}
		if (++p >= q)
			return NULL;
		unsigned cp;
		switch (*p) {
		case '"': case '\\': case '/': o[n++] = *p; break;
		case 'b': o[n++] = '\b'; break;
		case 'f': o[n++] = '\f'; break;
		case 'n': o[n++] = '\n'; break;
		case 'r': o[n++] = '\r'; break;
		case 't': o[n++] = '\t'; break;
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
			put_utf8(o, &n, cp);
			break;
		default:
			return NULL;
		}
	}
	*len = n;
	return o;
}

const char *hm_jscan_kind_at(char c)
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

const char *hm_jscan_kind_of(hm_slice s)
{
	size_t n = (size_t)(s.q - s.p);
	if ((*s.p == 't' && (n != 4 || memcmp(s.p, "true", 4) != 0)) || (*s.p == 'f' && (n != 5 || memcmp(s.p, "false", 5) != 0)) ||
	    (*s.p == 'n' && (n != 4 || memcmp(s.p, "null", 4) != 0)))
		return "not valid JSON";
	return hm_jscan_kind_at(*s.p);
}

static void classify_chunk_base(const unsigned char *p, size_t n, hm_jscan_blk *out)
{
	for (size_t k = 0; k < n; k++)
		out[k] = hm_jscan_classify64(p + 64 * k);
}

#ifdef HAVE_AVX512_CLONE
/* AVX-512BW (where the CPU has it): one load and four compares into masks per block. */
__attribute__((target("avx512bw"))) static void classify_chunk_avx512(const unsigned char *p, size_t n, hm_jscan_blk *out)
{
	const __m512i q = _mm512_set1_epi8('"'), s = _mm512_set1_epi8('\\'), o = _mm512_set1_epi8('{'),
		      c = _mm512_set1_epi8('}'), x = _mm512_set1_epi8(0x20);
	for (size_t k = 0; k < n; k++) {
		__m512i v = _mm512_loadu_si512((const void *)(p + 64 * k)), w = _mm512_or_si512(v, x);
		out[k].quote = _mm512_cmpeq_epi8_mask(v, q);
		out[k].bslash = _mm512_cmpeq_epi8_mask(v, s);
		out[k].open = _mm512_cmpeq_epi8_mask(w, o);
		out[k].bracket = out[k].open | _mm512_cmpeq_epi8_mask(w, c);
	}
}
#endif

hm_jscan_classify_fn hm_jscan_pick_classify(void)
{
	static hm_jscan_classify_fn picked;
	hm_jscan_classify_fn f = __atomic_load_n(&picked, __ATOMIC_RELAXED);
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
