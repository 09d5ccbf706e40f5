/* The layouts PyTorch writes, matched literally, then in any white space (see klayout.h). */
#include "klayout.h"

#include <string.h>

/* How many of the sixteen bytes at d, first to last, are digits before the first that is
 * not (16: all are). One compare of the sixteen bytes where SSE2 is there; else two words,
 * the second only when the first is all digits. */
static inline unsigned lead_digits16(const char *d)
{
#ifdef __SSE2__
	__m128i w = _mm_loadu_si128((const __m128i *)(const void *)d);
	__m128i out = _mm_or_si128(_mm_cmplt_epi8(w, _mm_set1_epi8('0')), _mm_cmpgt_epi8(w, _mm_set1_epi8('9')));
	return (unsigned)__builtin_ctz((unsigned)_mm_movemask_epi8(out) | 0x10000u);
#else
	const uint64_t ones = 0x0101010101010101ull;
	unsigned nd = 0;
	for (int i = 0; i < 2 && nd == 8u * i; i++) {
		uint64_t w, t;
		memcpy(&w, d + 8 * i, 8);
		t = w & 0x7f7f7f7f7f7f7f7full; /* byte + 0x50 reaches 0x80 from '0', + 0x46 from ':' */
		uint64_t other = ~((t + 0x50 * ones) & ~(t + 0x46 * ones) & ~w) & 0x80 * ones;
		nd += other ? (unsigned)__builtin_ctzll(other) >> 3 : 8;
	}
	return nd;
#endif
}

/* The value of eight digits held as their low nibbles, first digit in the first byte (as
 * hm_jscan_swar8_value, with the '0's already taken off). */
static inline uint64_t nibbles8_value(uint64_t w)
{
	w = (w * 10) + (w >> 8);
	return (((w & 0x000000ff000000ffull) * (100 + (1000000ull << 32))) +
		(((w >> 16) & 0x000000ff000000ffull) * (1 + (10000ull << 32)))) >> 32;
}

/* The literal lit (n bytes: the separator before a key, the key, ": ") at c, then a plain
 * integer: an optional '-' (unless unsigned_only), 1 to 15 digits, no leading zero. Gives the
 * integer's end, with its text in *s and its value in *v, as kevent.c's int_field and
 * addr_field would; NULL for anything else. The digits are counted in one look and read as
 * at most two words, the last eight ending where they end (the bytes before them are the
 * literal, so readable) and masked to the digits: the only branches on their number are for
 * one digit (a device's type and id) and for more than eight. */
static inline __attribute__((always_inline)) const char *lit_int(const char *c, const char *lit, size_t n, int unsigned_only,
								  hm_slice *s, int64_t *v)
{
	if (memcmp(c, lit, n) != 0)
		return NULL;
	c += n;
	const char *d = c + (!unsigned_only && *c == '-');
	unsigned nd = lead_digits16(d);
	if (nd - 1 >= 15 || (*d == '0' && nd > 1))
		return NULL;
	const uint64_t nibbles = 0x0f0f0f0f0f0f0f0full;
	uint64_t lo, hi, x;
	if (nd == 1) {
		x = (uint64_t)(*d - '0');
	} else {
		memcpy(&lo, d + nd - 8, 8);
		x = nibbles8_value(lo & nibbles << (8 * (8 - (nd < 8 ? nd : 8))));
		if (nd > 8) {
			memcpy(&hi, d, 8);
			x += nibbles8_value(hi << (8 * (16 - nd)) & nibbles) * 100000000;
		}
	}
	*v = d != c ? -(int64_t)x : (int64_t)x;
	*s = (hm_slice){c, d + nd};
	return d + nd;
}

/* The literal lit (n bytes) at c: past it, or NULL. */
static inline __attribute__((always_inline)) const char *lit_at(const char *c, const char *lit, size_t n)
{
	return memcmp(c, lit, n) == 0 ? c + n : NULL;
}

/* Other white space between members (flex, below): past the comma before a member (none
 * before the first) and the white space after it, at the key's quote; NULL where the comma
 * is missing. One space, as between the members of a line, is told in one compare; a new
 * line and up to fifteen spaces, one member a line, in one compare of sixteen bytes (the
 * member follows, and the event's padding after it). */
static inline __attribute__((always_inline)) const char *flex_sep(const char *c, int comma)
{
	if (comma && *c++ != ',')
		return NULL;
	if (c[0] == ' ' && c[1] == '"')
		return c + 1;
#ifdef __SSE2__
	if (c[0] == '\n') {
		__m128i w = _mm_loadu_si128((const __m128i *)(const void *)(c + 1));
		unsigned other = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w, _mm_set1_epi8(' '))) ^ 0xffffu;
		if (other && c[1 + __builtin_ctz(other)] == '"')
			return c + 1 + __builtin_ctz(other);
	}
#endif
	return hm_jscan_past_ws(c);
}

/* The key and its colon (the n bytes of lit: a key and ":") at c in other white space (flex,
 * below), and the one space after the colon that PyTorch and Python's json module write, or
 * none (a compact writer): past them, or NULL. */
static inline __attribute__((always_inline)) const char *flex_key(const char *c, const char *lit, size_t n)
{
	if (!c || memcmp(c, lit, n) != 0)
		return NULL;
	c += n;
	return c + (*c == ' ');
}

/* Each step gives up on the object at its first difference, so the next never looks at c.
 * sep is the white space PyTorch writes before a key, with the comma (none before the
 * first member), key the key and ": ": compared as one literal; in a layout of other white
 * space (flex), the comma and any white space, the key and its colon, and one space or none. */
#define AT_KEY(sep, key) \
	(flex ? flex_key(c = flex_sep(c, sep[0] == ','), key, sizeof key - 2) : lit_at(c, sep key, sizeof sep key - 1))
#define INT_AT(sep, key, uns, s, x) \
	if (!(c = flex ? (c = flex_key(flex_sep(c, sep[0] == ','), key, sizeof key - 2)) ? lit_int(c, "", 0, uns, s, x) : NULL \
		       : lit_int(c, sep key, sizeof sep key - 1, uns, s, x))) \
	return 0
#define INT(sep, key, f) INT_AT(sep, key, 0, &m->f, &v->f)
#define ADDR(sep, key) INT_AT(sep, key, 1, &m->addr, &v->addr)
/* The first letter of the next key: past ", \"" in PyTorch's white space, past the comma and
 * any white space (k) in flex. */
#define KEY1 (flex ? (k = flex_sep(c, 1)) ? k[1] : 0 : c[3])

/* hm_klayout_mem's match, in PyTorch's white space or (flex) any. */
static inline __attribute__((always_inline)) int layout_mem(const char *p, const char *e, hm_kmem *m, hm_kmemvals *v,
								int flex)
{
	/* the new line and indent Kineto writes args with, one compare; else the scan of it */
	const char *c = p + 1, *k;
	c = memcmp(c, "\n      ", 7) == 0 && !hm_jscan_is_ws(c[7]) ? c + 7 : hm_jscan_past_ws(c);
	switch (c[1]) {
	case 'T': /* 2025 on: CUDA, then ROCm (another order, and "finished") */
		INT("", "\"Total Reserved\": ", tres);
		INT(", ", "\"Total Allocated\": ", talloc);
		INT(", ", "\"Bytes\": ", bytes);
		if (KEY1 == 'A') {
			ADDR(", ", "\"Addr\": ");
			INT(", ", "\"Device Id\": ", did);
			INT(", ", "\"Device Type\": ", dtype);
		} else {
			INT(", ", "\"Device Id\": ", did);
			INT(", ", "\"Device Type\": ", dtype);
			ADDR(", ", "\"Addr\": ");
			const char *at = c, *f = AT_KEY(", ", "\"finished\": ");
			c = f && memcmp(f, "false", 5) == 0 ? f + 5 : f && memcmp(f, "true", 4) == 0 ? f + 4 : at;
		}
		INT(", ", "\"Ev Idx\": ", evidx);
		break;
	case 'E': /* 2022 */
		INT("", "\"Ev Idx\": ", evidx);
		INT(", ", "\"Device Type\": ", dtype);
		INT(", ", "\"Device Id\": ", did);
		ADDR(", ", "\"Addr\": ");
		INT(", ", "\"Bytes\": ", bytes);
		INT(", ", "\"Total Allocated\": ", talloc);
		INT(", ", "\"Total Reserved\": ", tres);
		break;
	case 'D': /* 2021: no address, totals or Ev Idx */
		INT("", "\"Device Type\": ", dtype);
		INT(", ", "\"Device Id\": ", did);
		INT(", ", "\"Bytes\": ", bytes);
		break;
	default:
		return 0;
	}
	/* the scanner counts brackets, not which: "{ ... ]" is left to the general path */
	c = hm_jscan_past_ws(c);
	return c == e - 1 && *c == '}';
}

/* The args of a [memory] event [p, e) in a layout PyTorch writes (README "Inputs": the three
 * generations, and ROCm's), read as one literal after another: each separator, key and ": "
 * compared as words, each integer parsed where it stands, with no scan for where a value or
 * key ends. Then, where that differs, the same keys in the same order with any white space
 * between members (a trace written again with an indent, one member a line, by a tool). 1
 * when the whole object matched, with its members in m and their values in v; 0 at the first
 * byte that differs (an escaped key, another order, an extra key, a number of another form):
 * the caller then reads the args from their start as always, so what they hold and every
 * error and its offset stay as they were. */
int hm_klayout_mem(const char *p, const char *e, hm_kmem *m, hm_kmemvals *v)
{
	if (layout_mem(p, e, m, v, 0))
		return 1;
	/* the second match starts from what the caller gave: nothing of the first is left */
	memset(m, 0, sizeof *m);
	v->bytes = v->addr = v->talloc = v->tres = v->evidx = v->dtype = v->did = INT64_MIN;
	return layout_mem(p, e, m, v, 1);
}

#undef INT
#undef ADDR
#undef INT_AT

/* Past the closing quote of the string at c, as hm_jscan_quote_end gives it: sixteen bytes
 * at a time, one look for a quote or a backslash; at a backslash, or near e, that scan
 * takes over from c. */
static inline __attribute__((always_inline)) const char *str_end(const char *c, const char *e)
{
#ifdef __SSE2__
	for (const char *s = c + 1; e - s >= 16; s += 16) {
		__m128i w = _mm_loadu_si128((const __m128i *)(const void *)s);
		unsigned m = (unsigned)_mm_movemask_epi8(
			_mm_or_si128(_mm_cmpeq_epi8(w, _mm_set1_epi8('"')), _mm_cmpeq_epi8(w, _mm_set1_epi8('\\'))));
		if (m) {
			if (s[__builtin_ctz(m)] == '"')
				return s + __builtin_ctz(m) + 1;
			break;
		}
	}
#endif
	return hm_jscan_quote_end(c, e);
}

/* The end of the number or literal at c, as hm_jscan_scalar_end gives it: the bytes that
 * can end one are all at or below ',' but ']' and '}', so a number's digits, sign, point
 * and exponent pass three compares, not eight; a byte that only looks like an end (a
 * control character, or one from 0x80) hands over to that scan from c. */
static inline __attribute__((always_inline)) const char *num_end(const char *c)
{
#ifdef __SSE2__
	for (const char *s = c;; s += 16) {
		__m128i w = _mm_loadu_si128((const __m128i *)(const void *)s);
		__m128i may = _mm_or_si128(_mm_cmplt_epi8(w, _mm_set1_epi8(',' + 1)),
					   _mm_or_si128(_mm_cmpeq_epi8(w, _mm_set1_epi8(']')), _mm_cmpeq_epi8(w, _mm_set1_epi8('}'))));
		unsigned m = (unsigned)_mm_movemask_epi8(may);
		if (m) {
			if (hm_jscan_ends_scalar[(unsigned char)s[__builtin_ctz(m)]])
				return s + __builtin_ctz(m);
			break;
		}
	}
#endif
	return hm_jscan_scalar_end(c);
}

/* Past the bytes at c that can be a number's ('-' to '9': digits, sign, point; '/' too, which
 * no end is), or at most 31 bytes on. Where Kineto writes an integer or a time, followed by
 * the comma of the next member, this is num_end's end, found with two compares a 16 bytes and
 * no look-up; where it is not a comma (another end, an exponent, a literal, a longer number),
 * the caller asks num_end. */
static inline __attribute__((always_inline)) const char *num_run_end(const char *c)
{
#ifdef __SSE2__
	/* the second 16 bytes only where the first are all a number's (a time of µs is 17; each
	 * member's own branch, so predicted): the event's last byte is a '}' at or past c, and
	 * PAD bytes follow it */
	__m128i dash = _mm_set1_epi8('-'), nine = _mm_set1_epi8('9');
	__m128i w = _mm_loadu_si128((const __m128i *)(const void *)c);
	unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmplt_epi8(w, dash), _mm_cmpgt_epi8(w, nine)));
	if (!m) {
		w = _mm_loadu_si128((const __m128i *)(const void *)(c + 16));
		m = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmplt_epi8(w, dash), _mm_cmpgt_epi8(w, nine))) << 16 | 0x80000000u;
	}
	return c + __builtin_ctz(m);
#else
	while (*c >= '-' && *c <= '9')
		c++;
	return c;
#endif
}

/* The value at c crossed as kevent.c's walk_event crosses it: a string to its closing
 * quote, a container by its recorded end (*t), a number or literal to its end. Gives the
 * value's end, with the value in *v; NULL when c is NULL (the key before it differed) or the
 * value is not one walk_event takes. A string of one plain character ("ph": "X") is seen
 * whole without a scan. */
static inline __attribute__((always_inline)) const char *val_at(const char *c, const char *p, const char *e,
								 const hm_jtok **t, const hm_jtok *end, hm_slice *v)
{
	if (!c)
		return NULL;
	const char *q;
	if (*c == '"') {
		if (c[2] == '"' && c[1] != '"' && c[1] != '\\' && c + 3 < e)
			q = c + 3;
		else if ((q = str_end(c, e)) >= e)
			return NULL;
	} else if (*c == '{' || *c == '[') {
		if (*t == end || p + (*t)->start != c)
			return NULL;
		q = p + (*t)->end + 1;
		(*t)++;
	} else if (((q = num_run_end(c)) == c || *q != ',') && (q = num_end(c)) == c) {
		return NULL;
	}
	*v = (hm_slice){c, q};
	return q;
}

/* As INT above: the first member that differs ends the match. */
#define VAL(sep, key, v) \
	if (!(c = val_at(AT_KEY(sep, key), p, e, &t, end, &(v)))) \
	return 0

/* hm_klayout_event's match, in Kineto's white space or (flex) any. */
static inline __attribute__((always_inline)) int layout_event(const char *p, const char *e, const hm_jtok *t,
								  const hm_jtok *end, hm_kev *x, int flex)
{
	hm_slice unread; /* "s", "id" and "bp": walked, not kept */
	const char *c = p + 1, *k;
	VAL("\n    ", "\"ph\": ", x->ph);
	if (KEY1 == 'i') { /* a flow */
		VAL(", ", "\"id\": ", unread);
		VAL(", ", "\"pid\": ", x->pid);
		VAL(", ", "\"tid\": ", x->tid);
		VAL(", ", "\"ts\": ", x->ts);
		VAL(",\n    ", "\"cat\": ", x->cat);
		VAL(", ", "\"name\": ", x->name);
		if (KEY1 == 'b')
			VAL(", ", "\"bp\": ", unread);
	} else {
		int cat = KEY1 == 'c'; /* none in an instant event of 2021 */
		if (cat)
			VAL(", ", "\"cat\": ", x->cat);
		if (KEY1 == 's') { /* an instant event */
			VAL(", ", "\"s\": ", unread);
			VAL(", ", "\"name\": ", x->name);
			VAL(",\n    ", "\"pid\": ", x->pid);
			VAL(", ", "\"tid\": ", x->tid);
			VAL(",\n    ", "\"ts\": ", x->ts);
		} else if (!cat) {
			return 0;
		} else {
			VAL(", ", "\"name\": ", x->name);
			VAL(", ", "\"pid\": ", x->pid);
			VAL(", ", "\"tid\": ", x->tid);
			VAL(",\n    ", "\"ts\": ", x->ts);
			VAL(", ", "\"dur\": ", x->dur);
		}
		VAL(",\n    ", "\"args\": ", x->args);
	}
	c = hm_jscan_past_ws(c);
	return c == e - 1 && *c == '}' && t == end;
}

/* The members of a slice, instant event or flow [p, e) laid out as PyTorch's profiler
 * (Kineto) writes them, a few to a line:
 *   "ph": "X", "cat": C, "name": N, "pid": P, "tid": T,  /  "ts": S, "dur": D,  /  "args": A
 *   "ph": "i", "cat": C, "s": "t", "name": N,  /  "pid": P, "tid": T,  /  "ts": S,  /  "args": A
 *   "ph": "s", "id": I, "pid": P, "tid": T, "ts": S,  /  "cat": C, "name": N[, "bp": B]
 * each separator and key compared as words where walk_event finds them key by key (its
 * chain of scans, README "Performance"). Then, where that differs, the same keys in the same
 * order with any white space between members: the traces of 2021 ("cat": "Operator", then a
 * new line; instant events without "cat") and traces written again with an indent by a
 * tool, one member a line. 1 with the members in *x (cleared by the caller); 0 where the
 * event differs (an escaped or other key, another order, another kind of event):
 * walk_event then walks it from its start, so its members and every error and offset stay
 * as they were. */
int hm_klayout_event(const char *p, const char *e, const hm_jtok *t, const hm_jtok *end, hm_kev *x)
{
	if (layout_event(p, e, t, end, x, 0))
		return 1;
	memset(x, 0, sizeof *x); /* as the caller gave it: nothing of the first match is left */
	return layout_event(p, e, t, end, x, 1);
}

#undef VAL
#undef KEY1
#undef AT_KEY
