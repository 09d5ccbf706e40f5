#define _GNU_SOURCE /* vasprintf */
#include "util.h"

#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <malloc.h> /* mallopt */
#include <sys/mman.h>

/* Big blocks (columns, sort buffers) are mapped on their own (glibc: above a fixed
 * threshold), so a freed one goes back to the system at once and a growing one moves by
 * mremap, with no copy. Small pages, not transparent huge ones: on the virtual machines this
 * runs on, the first touch of a huge page that the host had taken back costs 2 to 8 times
 * what its 4 KiB pages do (0.4-0.6 GB/s against 1-3), and a trace's columns are touched
 * once (README "Performance"). */
#define MMAP_FROM (1u << 20)

static void oom(size_t n)
{
	fprintf(stderr, "hmem: out of memory (asked for %zu bytes)\n", n);
	exit(HM_EXIT_INTERNAL);
}

/* A fixed threshold: glibc's moving one would put freed sizes on the heap. */
static void fixed_threshold(void)
{
	static int once;
	if (!__atomic_exchange_n(&once, 1, __ATOMIC_RELAXED))
		mallopt(M_MMAP_THRESHOLD, MMAP_FROM);
}

void *hm_xrealloc(void *p, size_t n)
{
	fixed_threshold();
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

void *hm_xcalloc(size_t n, size_t size)
{
	fixed_threshold();
	void *q = calloc(n ? n : 1, size ? size : 1);
	if (!q) {
		fprintf(stderr, "hmem: out of memory (asked for %zu x %zu bytes)\n", n, size);
		exit(HM_EXIT_INTERNAL);
	}
	return q;
}

void *hm_xmap(size_t n)
{
	void *q = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED)
		oom(n);
	return q;
}

void hm_xunmap(void *p, size_t n)
{
	if (p)
		munmap(p, n ? n : 1);
}

char *hm_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(hm_xrealloc(NULL, n), s, n);
}

void hm_grow(void *arr, size_t *cap, size_t need, size_t elsz)
{
	if (need <= *cap)
		return;
	size_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	*(void **)arr = hm_xrealloc(*(void **)arr, c * elsz);
	*cap = c;
}

/* Words loaded from the string itself: the last one overlaps the one before when the
 * length is no multiple of eight, and a string shorter than a word is put together in a
 * register. (A tail copied byte by byte into a word and read back stalls the load; names
 * are hashed once per slice.) */
uint64_t hm_hash_words(uint64_t h, const char *s, size_t len, uint64_t *last)
{
	uint64_t w = 0;
	if (len < 8) {
		for (size_t i = 0; i < len; i++)
			w |= (uint64_t)(unsigned char)s[i] << (8 * i);
	} else {
		const char *end = s + len - 8;
		for (; s < end; s += 8) {
			memcpy(&w, s, 8);
			h = hm_hash_mix(h, w);
		}
		memcpy(&w, end, 8);
	}
	*last = w;
	return h;
}

/* Eight bytes at a time (op and kernel names run to hundreds of bytes); ids come from
 * the order of insertion, so only where names sit in the table depends on the hash, never
 * an id. */
static uint64_t strtab_hash(const char *s, size_t len)
{
	uint64_t w, h = hm_hash_words(len * 0x9e3779b97f4a7c15ull, s, len, &w);
	h = (h ^ w) * 0x94d049bb133111ebull;
	return h ^ h >> 29;
}

/* Tables start small: every input file has its own, and most hold a handful of names. */
static void strtab_rehash(hm_strtab *t)
{
	size_t nslot = t->nslot ? t->nslot * 2 : 16;
	uint32_t *slot = hm_xcalloc(nslot, sizeof *slot);
	for (size_t id = 0; id < t->n; id++) {
		size_t i = strtab_hash(t->str[id], t->len[id]) & (nslot - 1);
		while (slot[i])
			i = (i + 1) & (nslot - 1);
		slot[i] = (uint32_t)id + 1;
	}
	free(t->slot);
	t->slot = slot;
	t->nslot = nslot;
}

uint32_t hm_strtab_intern(hm_strtab *t, const char *s, size_t len)
{
	if ((t->n + 1) * 2 > t->nslot)
		strtab_rehash(t);
	size_t i = strtab_hash(s, len) & (t->nslot - 1);
	for (; t->slot[i]; i = (i + 1) & (t->nslot - 1)) {
		uint32_t id = t->slot[i] - 1;
		if (t->len[id] == len && memcmp(t->str[id], s, len) == 0)
			return id;
	}
	size_t old = t->cap;
	hm_grow(&t->str, &old, t->n + 1, sizeof *t->str);
	hm_grow(&t->len, &t->cap, t->n + 1, sizeof *t->len);
	char *copy = hm_xrealloc(NULL, len + 1);
	memcpy(copy, s, len);
	copy[len] = 0;
	t->str[t->n] = copy;
	t->len[t->n] = (uint32_t)len;
	t->slot[i] = (uint32_t)t->n + 1;
	return (uint32_t)t->n++;
}

void hm_strtab_free(hm_strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->str[i]);
	free(t->str);
	free(t->len);
	free(t->slot);
	memset(t, 0, sizeof *t);
}

size_t hm_thread_split(const char *key, size_t len, const char **tid, size_t *tid_len)
{
	const char *sep = memchr(key, 0x1f, len);
	size_t pl = sep ? (size_t)(sep - key) : len;
	if (tid)
		*tid = sep ? sep + 1 : key + len;
	if (tid_len)
		*tid_len = sep ? len - pl - 1 : 0;
	return pl;
}

int hm_thread_same_pid(const hm_strtab *threads, uint32_t a, uint32_t b)
{
	if (a == b)
		return 1;
	size_t n = hm_thread_split(threads->str[a], threads->len[a], NULL, NULL);
	return n == hm_thread_split(threads->str[b], threads->len[b], NULL, NULL) &&
	       memcmp(threads->str[a], threads->str[b], n) == 0;
}

/* The number is read as its digit string and a decimal point position, so that
 * "1419116105360.746" becomes exactly 1419116105360746 ns with no double in between. */
const char *hm_num_parse(const char *s, size_t len, int scale, int round, int *neg, uint64_t *mag)
{
	const char *p = s, *e = s + len;
	*neg = 0;
	if (p < e && *p == '-')
		*neg = 1, p++;
	const char *ds = p;
	char dig[64];
	size_t nd = 0, lead = 0, dropped_nonzero = 0;
	long point = 0; /* digits before the decimal point, counted after leading zeros */
	int seen_nonzero = 0, have_digit = 0;
	if (p < e && *p == '0' && p + 1 < e && p[1] >= '0' && p[1] <= '9')
		return "invalid number (leading zero)";
	for (; p < e && *p >= '0' && *p <= '9'; p++) {
		have_digit = 1;
		if (*p != '0' || seen_nonzero) {
			seen_nonzero = 1;
			if (nd < sizeof dig)
				dig[nd++] = *p;
			else
				return "number too large";
			point++;
		}
	}
	(void)ds;
	if (!have_digit)
		return "invalid number";
	if (p < e && *p == '.') {
		p++;
		if (p >= e || *p < '0' || *p > '9')
			return "invalid number";
		for (; p < e && *p >= '0' && *p <= '9'; p++) {
			if (!seen_nonzero && *p == '0') {
				lead++;
				continue;
			}
			seen_nonzero = 1;
			if (nd < sizeof dig)
				dig[nd++] = *p;
			else if (*p != '0')
				dropped_nonzero = 1;
		}
	}
	long exp = 0;
	if (p < e && (*p == 'e' || *p == 'E')) {
		p++;
		int eneg = 0;
		if (p < e && (*p == '+' || *p == '-'))
			eneg = *p++ == '-';
		if (p >= e || *p < '0' || *p > '9')
			return "invalid number";
		for (; p < e && *p >= '0' && *p <= '9'; p++)
			if (exp < 100000)
				exp = exp * 10 + (*p - '0');
		if (eneg)
			exp = -exp;
	}
	if (p != e)
		return "invalid number";
	/* value = 0.dig * 10^(point - lead + exp); keep digits above 10^-scale. */
	long keep = point - (long)lead + exp + scale;
	uint64_t v = 0;
	for (long i = 0; i < keep; i++) {
		unsigned d = i < (long)nd ? (unsigned)(dig[i] - '0') : 0;
		if (v > (UINT64_MAX - d) / 10)
			return "number out of 64-bit range";
		v = v * 10 + d;
	}
	long first_dropped = keep < 0 ? 0 : keep;
	int frac_nonzero = dropped_nonzero;
	for (long i = first_dropped; i < (long)nd; i++)
		if (dig[i] != '0')
			frac_nonzero = 1;
	if (frac_nonzero) {
		if (!round)
			return scale ? "number has more decimals than supported" : "expected an integer";
		if (keep >= 0 && keep < (long)nd && dig[keep] >= '5') {
			if (v == UINT64_MAX)
				return "number out of 64-bit range";
			v++;
		}
	}
	if (*neg && v > (uint64_t)INT64_MAX + 1)
		return "number out of 64-bit range";
	if (v == 0)
		*neg = 0;
	*mag = v;
	return NULL;
}

const char *hm_num_i64(const char *s, size_t len, int scale, int round, int64_t *out)
{
	int neg;
	uint64_t mag;
	const char *err = hm_num_parse(s, len, scale, round, &neg, &mag);
	if (err)
		return err;
	if (!neg && mag > (uint64_t)INT64_MAX)
		return "number out of 64-bit range";
	*out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	return NULL;
}

int hm_fmt_us(char *buf, int64_t ns)
{
	uint64_t m = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	unsigned frac = (unsigned)(m % 1000);
	int n = sprintf(buf, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", m / 1000, frac);
	while (n > 2 && buf[n - 1] == '0' && buf[n - 2] != '.')
		buf[--n] = 0;
	return n;
}

void hm_fmt_bytes(char *buf, size_t n, int64_t bytes)
{
	static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)(bytes < 0 ? 0 - (uint64_t)bytes : (uint64_t)bytes);
	int u = 0;
	/* Move up a unit also when two decimals would round to 1024.00. */
	while ((v >= 1024 || (u > 0 && v >= 1023.995)) && u < 5)
		v /= 1024, u++;
	const char *sign = bytes < 0 ? "-" : "";
	if (u == 0)
		snprintf(buf, n, "%s%.0f B", sign, v);
	else
		snprintf(buf, n, "%s%.2f %s", sign, v, unit[u]);
}

/* Length of the well-formed UTF-8 sequence at p (Unicode table 3-7), 0 if there is none. */
static size_t utf8_len(const unsigned char *p, const unsigned char *e)
{
	unsigned c = *p;
	size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80, hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
	if (!len || (size_t)(e - p) < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* Terminal text must not carry the bytes a terminal obeys (issue 12): an op named
 * "\x1b]0;TITLE\x07" would retitle it, "\x1b[2J" clear it, even with --color never. C0
 * controls, DEL and C1 controls (U+0080..U+009F written in UTF-8, or such a byte on its
 * own, which an 8-bit terminal obeys) are shown as \xNN per byte; other text, valid
 * UTF-8 or not, passes as it is. */
char *hm_esc(const char *s, size_t n, int keep_lines, size_t *outlen)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + n;
	char *out = hm_xrealloc(NULL, 4 * n + 1), *o = out;
	while (p < e) {
		unsigned c = *p;
		size_t len = c >= 0x80 ? utf8_len(p, e) : 1, ctl;
		if (c < 0x20)
			ctl = !(keep_lines && (c == '\n' || c == '\t'));
		else if (c == 0x7f || (c >= 0x80 && c <= 0x9f))
			ctl = 1;
		else
			ctl = c == 0xc2 && len == 2 && p[1] <= 0x9f ? 2 : 0;
		if (ctl) {
			for (size_t i = 0; i < ctl; i++)
				o += sprintf(o, "\\x%02x", p[i]);
			p += ctl;
		} else {
			len = len ? len : 1; /* a byte that is not UTF-8 (and not a control) */
			memcpy(o, p, len);
			o += len, p += len;
		}
	}
	*o = 0;
	if (outlen)
		*outlen = (size_t)(o - out);
	return out;
}

void hm_fput_esc(FILE *f, const char *s, size_t n)
{
	size_t len;
	char *t = hm_esc(s, n, 0, &len);
	fwrite(t, 1, len, f);
	free(t);
}

/* printf to standard error, as terminal text (hm_esc, line breaks kept). */
void hm_eprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = NULL;
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		oom(0);
	char *t = hm_esc(msg, (size_t)n, 1, NULL);
	fputs(t, stderr);
	free(t);
	free(msg);
}

double hm_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
