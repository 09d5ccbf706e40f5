/* The layouts PyTorch writes, matched literally (see klayout.h). */
#include "klayout.h"

#include <string.h>

/* How many of the eight bytes of w, first to last, are digits before the first that is not. */
static inline unsigned lead_digits(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull;
	uint64_t t = w & 0x7f7f7f7f7f7f7f7full; /* byte + 0x50 reaches 0x80 from '0', + 0x46 from ':' */
	uint64_t digit = (t + 0x50 * ones) & ~(t + 0x46 * ones) & ~w & 0x80 * ones;
	uint64_t other = ~digit & 0x80 * ones;
	return other ? (unsigned)__builtin_ctzll(other) >> 3 : 8;
}

/* The literal lit (n bytes: the separator before a key, the key, ": ") at c, then a plain
 * integer: an optional '-' (unless unsigned_only), 1 to 15 digits, no leading zero. Gives the
 * integer's end, with its text in *s and its value in *v, as kevent.c's int_field and
 * addr_field would; NULL for anything else, or when c is NULL (a member before did not match). */
static inline __attribute__((always_inline)) const char *lit_int(const char *c, const char *lit, size_t n, int unsigned_only,
								  hm_slice *s, int64_t *v)
{
	if (!c || memcmp(c, lit, n) != 0)
		return NULL;
	c += n;
	const char *d = c + (!unsigned_only && *c == '-');
	uint64_t a, b = 0;
	memcpy(&a, d, 8);
	unsigned nd = lead_digits(a);
	if (nd == 8) {
		memcpy(&b, d + 8, 8);
		unsigned more = lead_digits(b);
		if (more == 8)
			return NULL;
		nd += more;
	}
	if (nd == 0 || (*d == '0' && nd > 1))
		return NULL;
	/* as hm_jscan_int_padded: the first digits closed up behind '0's, the last eight */
	const uint64_t zeros = 0x3030303030303030ull;
	unsigned k = nd > 8 ? nd - 8 : nd;
	if (k < 8)
		a = a << (8 * (8 - k)) | zeros >> (8 * k);
	uint64_t x = hm_jscan_swar8_value(a);
	if (nd > 8) {
		memcpy(&b, d + nd - 8, 8);
		x = x * 100000000 + hm_jscan_swar8_value(b);
	}
	*v = d != c ? -(int64_t)x : (int64_t)x;
	*s = (hm_slice){c, d + nd};
	return d + nd;
}

/* The literal lit (n bytes) at c: past it, or NULL (also when c is NULL). */
static inline __attribute__((always_inline)) const char *lit_at(const char *c, const char *lit, size_t n)
{
	return c && memcmp(c, lit, n) == 0 ? c + n : NULL;
}

#define LIT_INT(c, lit, f) lit_int(c, lit, sizeof lit - 1, 0, &m->f, &v->f)
#define LIT_ADDR(c, lit) lit_int(c, lit, sizeof lit - 1, 1, &m->addr, &v->addr)

/* The args of a [memory] event [p, e) in a layout PyTorch writes (README "Inputs": the three
 * generations, and ROCm's), read as one literal after another: each separator, key and ": "
 * compared as words, each integer parsed where it stands, with no scan for where a value or
 * key ends. 1 when the whole object matched, with its members in m and their values in v;
 * 0 at the first byte that differs (other white space, an escaped key, another order, an
 * extra key, a number of another form): the caller then reads the args from their start as
 * always, so what they hold and every error and its offset stay as they were. */
int hm_klayout_mem(const char *p, const char *e, hm_kmem *m, hm_kmemvals *v)
{
	const char *c = hm_jscan_past_ws(p + 1);
	switch (c[1]) {
	case 'T': /* 2025 on: CUDA, then ROCm (another order, and "finished") */
		c = LIT_INT(c, "\"Total Reserved\": ", tres);
		c = LIT_INT(c, ", \"Total Allocated\": ", talloc);
		c = LIT_INT(c, ", \"Bytes\": ", bytes);
		if (c && c[3] == 'A') {
			c = LIT_ADDR(c, ", \"Addr\": ");
			c = LIT_INT(c, ", \"Device Id\": ", did);
			c = LIT_INT(c, ", \"Device Type\": ", dtype);
		} else {
			c = LIT_INT(c, ", \"Device Id\": ", did);
			c = LIT_INT(c, ", \"Device Type\": ", dtype);
			c = LIT_ADDR(c, ", \"Addr\": ");
			const char *f = lit_at(c, ", \"finished\": false", 19), *t = lit_at(c, ", \"finished\": true", 18);
			c = f ? f : t ? t : c;
		}
		c = LIT_INT(c, ", \"Ev Idx\": ", evidx);
		break;
	case 'E': /* 2022 */
		c = LIT_INT(c, "\"Ev Idx\": ", evidx);
		c = LIT_INT(c, ", \"Device Type\": ", dtype);
		c = LIT_INT(c, ", \"Device Id\": ", did);
		c = LIT_ADDR(c, ", \"Addr\": ");
		c = LIT_INT(c, ", \"Bytes\": ", bytes);
		c = LIT_INT(c, ", \"Total Allocated\": ", talloc);
		c = LIT_INT(c, ", \"Total Reserved\": ", tres);
		break;
	case 'D': /* 2021: no address, totals or Ev Idx */
		c = LIT_INT(c, "\"Device Type\": ", dtype);
		c = LIT_INT(c, ", \"Device Id\": ", did);
		c = LIT_INT(c, ", \"Bytes\": ", bytes);
		break;
	default:
		return 0;
	}
	/* the scanner counts brackets, not which: "{ ... ]" is left to the general path */
	if (!c)
		return 0;
	c = hm_jscan_past_ws(c);
	return c == e - 1 && *c == '}';
}

#undef LIT_INT
#undef LIT_ADDR

/* After the literal lit (n bytes: the separator before a key, the key, ": ") at c, a value
 * crossed as kevent.c's walk_event crosses it: a string to its closing quote, a container by its
 * recorded end (*t), a number or literal to its end. Gives the value's end, with the value
 * in *v; NULL when c is NULL, the literal differs or the value is not one walk_event takes. */
static inline __attribute__((always_inline)) const char *lit_val(const char *c, const char *lit, size_t n, const char *p,
								  const char *e, const hm_jtok **t, const hm_jtok *end, hm_slice *v)
{
	if (!c || memcmp(c, lit, n) != 0)
		return NULL;
	c += n;
	const char *q;
	if (*c == '"') {
		if ((q = hm_jscan_quote_end(c, e)) >= e)
			return NULL;
	} else if (*c == '{' || *c == '[') {
		if (*t == end || p + (*t)->start != c)
			return NULL;
		q = p + (*t)->end + 1;
		(*t)++;
	} else if ((q = hm_jscan_scalar_end(c)) == c) {
		return NULL;
	}
	*v = (hm_slice){c, q};
	return q;
}

#define LIT_VAL(c, lit, v) lit_val(c, lit, sizeof lit - 1, p, e, &t, end, &(v))

/* The members of a slice, instant event or flow [p, e) laid out as PyTorch's profiler
 * (Kineto) writes them, a few to a line:
 *   "ph": "X", "cat": C, "name": N, "pid": P, "tid": T,  /  "ts": S, "dur": D,  /  "args": A
 *   "ph": "i", "cat": C, "s": "t", "name": N,  /  "pid": P, "tid": T,  /  "ts": S,  /  "args": A
 *   "ph": "s", "id": I, "pid": P, "tid": T, "ts": S,  /  "cat": C, "name": N[, "bp": B]
 * each separator and key compared as words where walk_event finds them key by key (its
 * chain of scans, README "Performance"). 1 with the members in *x (cleared by the caller); 0
 * where the event differs (another writer's white space or order, an escaped or other key,
 * another kind of event): walk_event then walks it from its start, so its members and every
 * error and offset stay as they were. */
int hm_klayout_event(const char *p, const char *e, const hm_jtok *t, const hm_jtok *end, hm_kev *x)
{
	hm_slice unread; /* "s", "id" and "bp": walked, not kept */
	const char *c = LIT_VAL(p + 1, "\n    \"ph\": ", x->ph);
	if (c && c[3] == 'i') { /* a flow */
		c = LIT_VAL(c, ", \"id\": ", unread);
		c = LIT_VAL(c, ", \"pid\": ", x->pid);
		c = LIT_VAL(c, ", \"tid\": ", x->tid);
		c = LIT_VAL(c, ", \"ts\": ", x->ts);
		c = LIT_VAL(c, ",\n    \"cat\": ", x->cat);
		c = LIT_VAL(c, ", \"name\": ", x->name);
		if (c && c[3] == 'b')
			c = LIT_VAL(c, ", \"bp\": ", unread);
	} else {
		c = LIT_VAL(c, ", \"cat\": ", x->cat);
		if (c && c[3] == 's') { /* an instant event */
			c = LIT_VAL(c, ", \"s\": ", unread);
			c = LIT_VAL(c, ", \"name\": ", x->name);
			c = LIT_VAL(c, ",\n    \"pid\": ", x->pid);
			c = LIT_VAL(c, ", \"tid\": ", x->tid);
			c = LIT_VAL(c, ",\n    \"ts\": ", x->ts);
		} else {
			c = LIT_VAL(c, ", \"name\": ", x->name);
			c = LIT_VAL(c, ", \"pid\": ", x->pid);
			c = LIT_VAL(c, ", \"tid\": ", x->tid);
			c = LIT_VAL(c, ",\n    \"ts\": ", x->ts);
			c = LIT_VAL(c, ", \"dur\": ", x->dur);
		}
		c = LIT_VAL(c, ",\n    \"args\": ", x->args);
	}
	if (!c)
		return 0;
	c = hm_jscan_past_ws(c);
	return c == e - 1 && *c == '}' && t == end;
}

#undef LIT_VAL
