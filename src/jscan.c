/* The jscan helpers that are not on the per-member path (see jscan.h): skipping nested
 * values, decoding escapes, naming value kinds, and the block classifiers. */
#include "jscan.h"

#include <ctype.h>
#include <stdlib.h>
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define HAVE_SIMD_CLONES 1
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

/* The forms hm_jscan_ns does not take in a few words: digits eight at a time, then one by
 * one, up to three decimals; anything else through hm_num_i64. */
const char *hm_jscan_ns_general(const char *p, const char *e, int64_t *out)
{
	int64_t v = 0;
	const char *s = p;
	p = hm_jscan_digits8(p, e, 16, &v);
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

const char *hm_jscan_kind_at(char c)
{
	switch (c) {
	case '"': return "a string";
	case '{': return "an object";
	case '[': return "an array";
	case 't': case 'f': return "a boolean";
	case 'n': return "null";
	case '-': case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9':
		return "a number";
	default: return "not valid JSON";
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

static uint64_t brackets_base(const unsigned char *p, size_t n, hm_jscan_brk *out, hm_jscan_carry *c)
{
	uint64_t busy = 0;
	for (size_t k = 0; k < n; k++) {
		hm_jscan_blk b = hm_jscan_classify64(p + 64 * k);
		uint64_t out_str = ~hm_jscan_in_string(b, c);
		out[k] = (hm_jscan_brk){b.bracket & out_str, b.open & out_str};
		busy |= (uint64_t)(out[k].bracket != 0) << k;
	}
	return busy;
}

#ifdef HAVE_SIMD_CLONES
/* The prefix xor as one carry-less multiply by all ones (simdjson's way). */
__attribute__((target("pclmul"))) static inline uint64_t prefix_xor_clmul(uint64_t x)
{
	__m128i v = _mm_set_epi64x(0, (long long)x), ones = _mm_set1_epi8((char)0xff);
	return (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(v, ones, 0));
}

/* The strings of a classified block, as hm_jscan_in_string, with the multiply. */
__attribute__((target("pclmul"))) static inline uint64_t in_string_clmul(hm_jscan_blk b, hm_jscan_carry *c)
{
	uint64_t quotes = b.quote & ~hm_jscan_escaped(b.bslash, &c->esc);
	uint64_t in_str = prefix_xor_clmul(quotes) ^ c->str;
	c->str = (uint64_t)((int64_t)in_str >> 63);
	return in_str;
}

/* AVX2: two loads and eight compares into masks per block. */
__attribute__((target("avx2"))) static inline hm_jscan_blk classify64_avx2(const unsigned char *p)
{
	const __m256i q = _mm256_set1_epi8('"'), s = _mm256_set1_epi8('\\'), o = _mm256_set1_epi8('{'),
		      c = _mm256_set1_epi8('}'), x = _mm256_set1_epi8(0x20);
	__m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)p);
	__m256i v1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
	__m256i w0 = _mm256_or_si256(v0, x), w1 = _mm256_or_si256(v1, x);
#define MASK64(a, b) ((uint64_t)(uint32_t)_mm256_movemask_epi8(a) | (uint64_t)(uint32_t)_mm256_movemask_epi8(b) << 32)
	hm_jscan_blk r;
	r.quote = MASK64(_mm256_cmpeq_epi8(v0, q), _mm256_cmpeq_epi8(v1, q));
	r.bslash = MASK64(_mm256_cmpeq_epi8(v0, s), _mm256_cmpeq_epi8(v1, s));
	__m256i o0 = _mm256_cmpeq_epi8(w0, o), o1 = _mm256_cmpeq_epi8(w1, o);
	r.open = MASK64(o0, o1);
	r.bracket = r.open | MASK64(_mm256_cmpeq_epi8(w0, c), _mm256_cmpeq_epi8(w1, c));
#undef MASK64
	return r;
}

/* The two loops over blocks of an instruction set, around its block classifier: the masks
 * alone (classify_chunk_ISA), and the brackets outside strings (brackets_ISA). */
#define CHUNK_LOOPS(isa, tgt)                                                                                   \
	__attribute__((target(tgt))) static void classify_chunk_##isa(const unsigned char *p, size_t n, hm_jscan_blk *out) \
	{                                                                                                       \
		for (size_t k = 0; k < n; k++)                                                                  \
			out[k] = classify64_##isa(p + 64 * k);                                                  \
	}                                                                                                       \
	__attribute__((target(tgt ",pclmul"))) static uint64_t brackets_##isa(const unsigned char *p, size_t n,   \
									   hm_jscan_brk *out, hm_jscan_carry *c) \
	{                                                                                                       \
		uint64_t busy = 0;                                                                              \
		for (size_t k = 0; k < n; k++) {                                                                \
			hm_jscan_blk b = classify64_##isa(p + 64 * k);                                          \
			uint64_t out_str = ~in_string_clmul(b, c);                                              \
			out[k] = (hm_jscan_brk){b.bracket & out_str, b.open & out_str};                         \
			busy |= (uint64_t)(out[k].bracket != 0) << k;                                           \
		}                                                                                               \
		return busy;                                                                                    \
	}

CHUNK_LOOPS(avx2, "avx2")

/* AVX-512BW (where the CPU has it): one load and four compares into masks per block. */
__attribute__((target("avx512bw"))) static inline hm_jscan_blk classify64_avx512(const unsigned char *p)
{
	const __m512i q = _mm512_set1_epi8('"'), s = _mm512_set1_epi8('\\'), o = _mm512_set1_epi8('{'),
		      c = _mm512_set1_epi8('}'), x = _mm512_set1_epi8(0x20);
	__m512i v = _mm512_loadu_si512((const void *)p), w = _mm512_or_si512(v, x);
	hm_jscan_blk r;
	r.quote = _mm512_cmpeq_epi8_mask(v, q);
	r.bslash = _mm512_cmpeq_epi8_mask(v, s);
	r.open = _mm512_cmpeq_epi8_mask(w, o);
	r.bracket = r.open | _mm512_cmpeq_epi8_mask(w, c);
	return r;
}

CHUNK_LOOPS(avx512, "avx512bw")
#endif

/* Which code this CPU can run: 2 AVX-512BW, 1 AVX2, 0 the baseline (the carry-less
 * multiply comes with both on every CPU that has them, and is checked all the same). */
static int simd_level(void)
{
#ifdef HAVE_SIMD_CLONES
	if (!__builtin_cpu_supports("pclmul"))
		return 0;
	if (__builtin_cpu_supports("avx512bw"))
		return 2;
	if (__builtin_cpu_supports("avx2"))
		return 1;
#endif
	return 0;
}

static int named_level(const char *name)
{
	return !name ? -1 : strcmp(name, "base") == 0 ? 0 : strcmp(name, "avx2") == 0 ? 1 : strcmp(name, "avx512") == 0 ? 2 : -1;
}

/* The level to run: the CPU's best, or a lower one HMEM_SIMD names. */
static int picked_level(void)
{
	static int picked = -1;
	int l = __atomic_load_n(&picked, __ATOMIC_RELAXED);
	if (l >= 0)
		return l;
	l = simd_level();
	int want = named_level(getenv("HMEM_SIMD"));
	if (want >= 0 && want < l)
		l = want;
	__atomic_store_n(&picked, l, __ATOMIC_RELAXED);
	return l;
}

/* The code of each level (simd_level), both loops. */
static const struct simd_code {
	hm_jscan_classify_fn classify;
	hm_jscan_brackets_fn brackets;
} simd_code[] = {
	{classify_chunk_base, brackets_base},
#ifdef HAVE_SIMD_CLONES
	{classify_chunk_avx2, brackets_avx2},
	{classify_chunk_avx512, brackets_avx512},
#endif
};

int hm_jscan_simd(void)
{
	return picked_level();
}

hm_jscan_classify_fn hm_jscan_pick_classify(void)
{
	return simd_code[picked_level()].classify;
}

hm_jscan_brackets_fn hm_jscan_pick_brackets(void)
{
	return simd_code[picked_level()].brackets;
}

hm_jscan_classify_fn hm_jscan_classify_named(const char *name)
{
	int l = named_level(name);
	return l >= 0 && l <= simd_level() ? simd_code[l].classify : NULL;
}

hm_jscan_brackets_fn hm_jscan_brackets_named(const char *name)
{
	int l = named_level(name);
	return l >= 0 && l <= simd_level() ? simd_code[l].brackets : NULL;
}
