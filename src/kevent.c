/* One Kineto event (see kevent.h). An event is walked once: its members are matched to the
 * eight keys an event can have (ev), and what its ph, name and cat say decides what is kept. */
#include "kevent.h"
#include "klayout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The state of one parsing thread: the handler's, or the scanner's (which parses in place
 * when there is no handler, and walks members while the handler lags). */
typedef struct hm_kevent {
	hm_trace *t;
	hm_jerr *err;
	const char *buf; /* the buffer of the event being parsed, at offset base of the JSON */
	uint64_t base;
	struct tcache { /* recent threads by the raw text of their pid and tid */
		uint32_t id; /* UINT32_MAX: empty */
		uint8_t pl, tl;
		char raw[66]; /* up to 58 bytes, and 8 readable past them (see same_text) */
	} tcache[16];
	struct wcache { /* the same for pid and tid texts of up to eight bytes, as words */
		uint64_t wp, wt;
		uint32_t id; /* UINT32_MAX: empty */
		uint8_t pl, tl;
	} wcache[16];
	const char *last_cat; /* raw text of the last slice's cat (in last_cat_raw) and its id */
	char last_cat_raw[64];
	size_t last_cat_len;
	uint32_t last_cat_id;
	uint64_t traffic; /* sum of |Bytes| of the memory events so far (see add_instant) */
	struct ncache { /* recent slice names by their raw text, quotes included (see intern_name) */
		uint32_t id;
		uint32_t len; /* 0: empty */
		char raw[64];
	} *ncache; /* NCACHE entries, allocated at the first name */
	hm_jscan_scratch scratch; /* unescaped strings */
} kx;

hm_kevent *hm_kevent_new(hm_trace *t, hm_jerr *err)
{
	kx *k = hm_xcalloc(1, sizeof *k);
	k->t = t, k->err = err;
	for (int i = 0; i < 16; i++)
		k->tcache[i].id = k->wcache[i].id = UINT32_MAX;
	return k;
}

void hm_kevent_free(hm_kevent *k)
{
	if (!k)
		return;
	free(k->scratch.buf);
	free(k->ncache);
	free(k);
}

static uint64_t off_of(kx *k, const char *p)
{
	return k->base + (uint64_t)(p - k->buf);
}

static void fail_at(kx *k, const char *p, const char *fmt, const char *a, const char *b)
{
	hm_jerr_at(k->err, off_of(k, p), fmt, a, b);
}

#define KEY(lit) (klen == sizeof lit - 1 && memcmp(key, lit, klen) == 0)

typedef hm_kev ev;

/* An ev with no member, set field by field: `ev x = {0}` compiles to a rep stos here,
 * whose start-up cost is a tenth of walking a whole event. */
#define EV_CLEAR(x) ((x).ph = (x).name = (x).cat = (x).pid = (x).tid = (x).ts = (x).dur = (x).args = (hm_slice){0, 0})

/* The members of ev in order, for passing them between threads (see hm_kevent_walk). */
static const size_t ev_at[8] = {offsetof(ev, ph), offsetof(ev, name), offsetof(ev, cat), offsetof(ev, pid),
				offsetof(ev, tid), offsetof(ev, ts), offsetof(ev, dur), offsetof(ev, args)};
#define EV_MEMBER(x, i) ((hm_slice *)(void *)((char *)(x) + ev_at[i]))

__attribute__((noinline)) int hm_kevent_key(hm_jscan_scratch *scratch, const char **key, size_t *klen)
{
	if (!memchr(*key, '\\', *klen))
		return 0;
	size_t n;
	const char *d = hm_jscan_unescape(scratch, *key - 1, *key + *klen + 1, &n);
	if (!d)
		return 0;
	*key = d, *klen = n;
	return 1;
}

/* A key decoded into k's scratch (see hm_kevent_key). */
static int unescaped_key(kx *k, const char **key, size_t *klen)
{
	return hm_kevent_key(&k->scratch, key, klen);
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
static __attribute__((noinline)) void ev_member_escaped(kx *k, const char *key, size_t klen, hm_slice v, ev *x)
{
	if (klen < 7 || !unescaped_key(k, &key, &klen))
		return;
	EV_KEYS(x, v)
}

static inline void ev_member(kx *k, const char *key, size_t klen, hm_slice v, ev *x)
{
	EV_KEYS(x, v)
	ev_member_escaped(k, key, klen, v, x);
}

typedef struct memargs {
	kx *k;
	hm_kmem a;
} memargs;

/* The keys of a [memory] event's args: the member goes to its field, and the caller returns. */
#define MEM_KEYS(m, v)                                                                       \
	switch (klen) { /* the keys have different lengths */                               \
	case 5: if (KEY("Bytes")) { m->a.bytes = v; return; } break;                          \
	case 4: if (KEY("Addr")) { m->a.addr = v; return; } break;                            \
	case 15: if (KEY("Total Allocated")) { m->a.talloc = v; return; } break;              \
	case 14: if (KEY("Total Reserved")) { m->a.tres = v; return; } break;                 \
	case 6: if (KEY("Ev Idx")) { m->a.evidx = v; return; } break;                         \
	case 11: if (KEY("Device Type")) { m->a.dtype = v; return; } break;                   \
	case 9: if (KEY("Device Id")) { m->a.did = v; return; } break;                        \
	}

/* A key that matched nothing as written, decoded (see ev_member). */
static __attribute__((noinline)) void mem_member_escaped(const char *key, size_t klen, hm_slice v, memargs *m)
{
	if (klen < 9 || !unescaped_key(m->k, &key, &klen))
		return;
	MEM_KEYS(m, v)
}

static void mem_member(void *ud, const char *key, size_t klen, hm_slice v)
{
	memargs *m = ud;
	MEM_KEYS(m, v)
	mem_member_escaped(key, klen, v, m);
}

/* The keys of a [memory] event's args as PyTorch writes them, quotes included, from their
 * bytes (see known_key). */
static hm_slice *known_mem_key(void *ud, const char *c, const char **ke)
{
#define LIT(f, lit) (memcmp(c, lit, sizeof lit - 1) == 0 ? (*ke = c + sizeof lit - 1, &m->a.f) : NULL)
	memargs *m = ud;
	switch (c[1]) {
	case 'T': return c[7] == 'A' ? LIT(talloc, "\"Total Allocated\"") : LIT(tres, "\"Total Reserved\"");
	case 'D': return c[8] == 'I' ? LIT(did, "\"Device Id\"") : LIT(dtype, "\"Device Type\"");
	case 'A': return LIT(addr, "\"Addr\"");
	case 'B': return LIT(bytes, "\"Bytes\"");
	case 'E': return LIT(evidx, "\"Ev Idx\"");
	default: return NULL;
	}
#undef LIT
}


/* Report a member that is not a number, or whose number did not parse (err). */
static int number_field(kx *k, hm_slice v, const char *ctx, const char *what, const char *expected, const char *err)
{
	char w[128];
	if (hm_jscan_not_number(v.p)) {
		snprintf(w, sizeof w, "%s: \"%s\" is %s, expected %s", ctx, what, hm_jscan_kind_of(v), expected);
		fail_at(k, v.p, "%s", w, 0);
		return -1;
	}
	if (err) {
		snprintf(w, sizeof w, "%s: \"%s\": %s", ctx, what, err);
		fail_at(k, v.p, "%s", w, 0);
		return -1;
	}
	return 0;
}

/* An integer member of an event's args (what: "[memory] event"); absent gives HM_NONE (the
 * caller has checked the required ones). */
static inline __attribute__((always_inline)) int int_field(kx *k, const char *what, hm_slice v, const char *name, int64_t *out)
{
	if (!v.p) {
		*out = HM_NONE;
		return 0;
	}
	/* a parsed integer starts with a digit or '-': no string, container or literal */
	const char *e = hm_jscan_int_padded(v.p, v.q, out);
	return e ? number_field(k, v, what, name, "an integer", e) : 0;
}

static int ts_field(kx *k, hm_slice v, const char *what, const char *ctx, int64_t *out)
{
	int bad = hm_jscan_not_number(v.p);
	const char *e = bad ? NULL : hm_jscan_ns(v.p, v.q, out);
	if (!bad && !e && (*out <= -HM_STORE_TS_LIMIT || *out >= HM_STORE_TS_LIMIT))
		e = "out of range (beyond 2^62 ns, 146 years, from zero)";
	return bad || e ? number_field(k, v, ctx, what, "a number of microseconds", e) : 0;
}

/* pid/tid as canonical text: integers (numbers or numeric strings) in decimal, other
 * strings as they are, so 25738 and "25738" name the same thread. */
static size_t id_text(kx *k, hm_slice v, char *out, size_t cap)
{
	if (!v.p)
		return 0;
	const char *s = v.p;
	size_t n = (size_t)(v.q - v.p);
	if (*v.p == '"') {
		s = hm_jscan_str(&k->scratch, v.p, v.q, &n);
		if (!s)
			return 0;
	}
	int64_t x;
	if (n && !hm_jscan_int(s, s + n, &x))
		return (size_t)snprintf(out, cap, "%lld", (long long)x);
	/* 0x1f separates pid from tid in thread keys; inside a string it becomes U+FFFD, or
	 * ("a\x1fb", "c") and ("a", "b\x1fc") would be one thread, split in the wrong place. */
	size_t j = 0;
	for (size_t i = 0; i < n && j + (s[i] == 0x1f ? 3 : 1) < cap; i++) {
		if (s[i] == 0x1f)
			memcpy(out + j, "\xef\xbf\xbd", 3), j += 3;
		else
			out[j++] = s[i];
	}
	return j;
}

static uint32_t thread_key(kx *k, const ev *x)
{
	char key[520];
	size_t n = id_text(k, x->pid, key, 256);
	key[n++] = 0x1f;
	n += id_text(k, x->tid, key + n, 256);
	return hm_store_thread(k->t, key, n);
}

/* Whether the n bytes at a and b are the same: up to eight (a pid, a tid) as one word each,
 * with no call (both have eight bytes readable: the cache's raw text, the padded event). */
static inline int same_text(const char *a, const char *b, size_t n)
{
	if (n == 0 || n > 8)
		return memcmp(a, b, n) == 0;
	uint64_t x, y;
	memcpy(&x, a, 8), memcpy(&y, b, 8);
	return ((x ^ y) & (~UINT64_C(0) >> (64 - 8 * n))) == 0;
}

/* thread_of where the cache of words misses: the thread, found by its key, takes the slot c. */
static __attribute__((noinline)) uint32_t thread_fill_words(kx *k, const ev *x, struct wcache *c, uint64_t wp, uint64_t wt,
							     size_t pl, size_t tl)
{
	uint32_t id = thread_key(k, x);
	c->wp = wp, c->wt = wt, c->pl = (uint8_t)pl, c->tl = (uint8_t)tl, c->id = id;
	return id;
}

/* thread_of for a pid or tid absent or of more than eight bytes: a cache of their raw text. */
static __attribute__((noinline)) uint32_t thread_of_text(kx *k, const ev *x, size_t pl, size_t tl)
{
	const char *pp = x->pid.p ? x->pid.p : "", *tp = x->tid.p ? x->tid.p : "";
	unsigned h = (unsigned)(pl * 7 + tl * 3 + (pl ? (unsigned char)pp[pl - 1] : 0) * 5 + (tl ? (unsigned char)tp[tl - 1] : 0) +
				(tl > 1 ? (unsigned char)tp[tl - 2] * 11 : 0)) % 16;
	struct tcache *c = &k->tcache[h];
	if (c->id != UINT32_MAX && pl == c->pl && tl == c->tl && same_text(c->raw, pp, pl) && same_text(c->raw + pl, tp, tl))
		return c->id;
	uint32_t id = thread_key(k, x);
	if (pl + tl <= sizeof c->raw - 8) {
		memcpy(c->raw, pp, pl);
		memcpy(c->raw + pl, tp, tl);
		c->pl = (uint8_t)pl, c->tl = (uint8_t)tl, c->id = id;
	}
	return id;
}

/* A trace has few threads and events name them the same way each time: a small cache of
 * the raw pid and tid text answers most lookups without formatting or hashing. The usual
 * case, both of one to eight bytes, each held as a word of its text, found in the cache of
 * words, is inlined where a slice or a memory event is kept (as a call, its register saves
 * cost as much as the lookup); the rest are calls. */
static inline __attribute__((always_inline)) uint32_t thread_of(kx *k, const ev *x)
{
	size_t pl = x->pid.p ? (size_t)(x->pid.q - x->pid.p) : 0, tl = x->tid.p ? (size_t)(x->tid.q - x->tid.p) : 0;
	if (pl - 1 >= 8 || tl - 1 >= 8)
		return thread_of_text(k, x, pl, tl);
	uint64_t wp, wt;
	memcpy(&wp, x->pid.p, 8), memcpy(&wt, x->tid.p, 8);
	wp &= ~UINT64_C(0) >> (64 - 8 * pl), wt &= ~UINT64_C(0) >> (64 - 8 * tl);
	struct wcache *c = &k->wcache[((wp * 0x9e3779b97f4a7c15ull) ^ (wt * 0xc2b2ae3d27d4eb4full)) >> 60];
	if (c->id != UINT32_MAX && c->wp == wp && c->wt == wt && c->pl == pl && c->tl == tl)
		return c->id;
	return thread_fill_words(k, x, c, wp, wt, pl, tl);
}

/* "Addr": an unsigned integer (a bad one reported, -1). */
static int addr_field(kx *k, hm_slice a, uint64_t *uaddr)
{
	int neg;
	int64_t small;
	const char *e = NULL;
	/* Named by type as for the other fields ("is a string"), not "invalid number". */
	if (hm_jscan_not_number(a.p)) {
		fail_at(k, a.p, "[memory] event: \"Addr\" is %s, expected an integer", hm_jscan_kind_of(a), 0);
		return -1;
	}
	if (!hm_jscan_int_padded(a.p, a.q, &small))
		neg = small < 0, *uaddr = neg ? 0 - (uint64_t)small : (uint64_t)small;
	else
		e = hm_num_parse(a.p, (size_t)(a.q - a.p), 0, 0, &neg, uaddr);
	if (e) {
		fail_at(k, a.p, "[memory] event: \"Addr\": %s", e, 0);
		return -1;
	}
	if (neg && *uaddr) { /* an address is never negative: no wrapping to 2^64 - 1 (issue 11) */
		fail_at(k, a.p, "[memory] event: \"Addr\": negative (an address is 0 or more)", 0, 0);
		return -1;
	}
	return 0;
}

/* A [memory] event, or (oom) an [OutOfMemory] one, kept whole. Device Type, Device Id and
 * Bytes are what PyTorch's own OOM test checks: an OOM without them (or without args)
 * belongs to no device and is only counted (hm_trace.oom_events; explain.c reports it); its
 * totals are optional too (older and CPU traces). The store's limits hold for both. */
static void add_instant(kx *k, const ev *x, const char *evp, const int64_t *tsp, int oom)
{
	const char *what = oom ? "[OutOfMemory] event" : "[memory] event";
	memargs m;
	m.k = k;
	m.a.bytes = m.a.addr = m.a.talloc = m.a.tres = m.a.evidx = m.a.dtype = m.a.did = (hm_slice){0, 0};
	if (!x->args.p || *x->args.p != '{') {
		if (!oom)
			fail_at(k, evp, "%s without an args object", what, 0);
		return;
	}
	_Static_assert(HM_NONE == INT64_MIN, "klayout.h gives absent args as INT64_MIN");
	hm_kmemvals v = {HM_NONE, HM_NONE, HM_NONE, HM_NONE, HM_NONE, HM_NONE, HM_NONE};
	int laid = hm_klayout_mem(x->args.p, x->args.q, &m.a, &v);
	if (!laid) {
		m.a.bytes = m.a.addr = m.a.talloc = m.a.tres = m.a.evidx = m.a.dtype = m.a.did = (hm_slice){0, 0};
		const char *bad = hm_jscan_members_known(x->args.p, x->args.q, known_mem_key, mem_member, &m);
		if (bad) {
			fail_at(k, bad, "invalid JSON in the args of %s %s", oom ? "an" : "a", what);
			return;
		}
	}
	hm_mem_event me;
	int64_t dt, di;
	if (!x->ts.p) {
		fail_at(k, evp, "%s without \"ts\"", what, 0);
		return;
	}
	if (tsp)
		me.ts = *tsp;
	else if (ts_field(k, x->ts, "ts", what, &me.ts))
		return;
	const char *req[] = {"Bytes", "Device Type", "Device Id"};
	hm_slice reqv[] = {m.a.bytes, m.a.dtype, m.a.did};
	for (int i = 0; i < 3; i++)
		if (!reqv[i].p) {
			if (!oom)
				fail_at(k, evp, "[memory] event without \"%s\" in its args", req[i], 0);
			return;
		}
	if (laid)
		me.bytes = v.bytes, dt = v.dtype, di = v.did, me.total_alloc = v.talloc, me.total_res = v.tres, me.ev_idx = v.evidx;
	else if (int_field(k, what, m.a.bytes, "Bytes", &me.bytes) || int_field(k, what, m.a.dtype, "Device Type", &dt) ||
		 int_field(k, what, m.a.did, "Device Id", &di) || int_field(k, what, m.a.talloc, "Total Allocated", &me.total_alloc) ||
		 int_field(k, what, m.a.tres, "Total Reserved", &me.total_res) || int_field(k, what, m.a.evidx, "Ev Idx", &me.ev_idx))
		return;
	/* The store's limits (store.h): each size, the sum of all, and Total Allocated. */
	uint64_t size = me.bytes < 0 ? 0 - (uint64_t)me.bytes : (uint64_t)me.bytes;
	if (size > HM_STORE_MEM_LIMIT || (!oom && (k->traffic += size) > HM_STORE_MEM_LIMIT)) {
		fail_at(k, m.a.bytes.p, "%s: \"Bytes\": %s 2^60 bytes (1 EiB)", what,
			oom ? "beyond" : "the sizes of the memory events add up to more than");
		return;
	}
	int64_t ta = me.total_alloc;
	if (ta != HM_NONE && (ta > HM_STORE_MEM_LIMIT || ta < -HM_STORE_MEM_LIMIT)) {
		fail_at(k, m.a.talloc.p, "%s: \"Total Allocated\": beyond 2^60 bytes (1 EiB)", what, 0);
		return;
	}
	me.addr = laid && m.a.addr.p ? (uint64_t)v.addr : 0;
	me.has_addr = m.a.addr.p != NULL;
	if (!laid && m.a.addr.p && addr_field(k, m.a.addr, &me.addr))
		return;
	if (dt < -32768 || dt > 32767 || di < INT32_MIN || di > INT32_MAX) {
		fail_at(k, m.a.dtype.p, "%s: device type or id out of range", what, 0);
		return;
	}
	me.dev_type = (int32_t)dt, me.dev_id = (int32_t)di;
	me.thread = thread_of(k, x);
	if (oom)
		hm_store_add_oom(k->t, &me);
	else
		hm_store_add_mem(k->t, &me);
}

/* Device-side categories: their pid/tid are a device and a stream, never a host thread. */
static int device_side(hm_slice cat)
{
	/* gpu_memcpy, gpu_memset, gpu_user_annotation: all start with gpu_ */
	return HM_SLICE_IS(cat, "kernel") || HM_SLICE_IS(cat, "Kernel") || HM_SLICE_IS(cat, "Memcpy") ||
	       HM_SLICE_IS(cat, "Memset") || HM_SLICE_IS(cat, "Trace") ||
	       (cat.p && cat.q - cat.p > 5 && memcmp(cat.p, "\"gpu_", 5) == 0);
}

static uint32_t intern_str(kx *k, hm_slice v)
{
	size_t n = 0;
	const char *s = "";
	if (v.p && *v.p == '"') {
		s = hm_jscan_str(&k->scratch, v.p, v.q, &n);
		if (!s) {
			fail_at(k, v.p, "invalid escape in a string", 0, 0);
			return 0;
		}
	}
	return hm_store_name(k->t, s, n);
}

/* Slices share few names (the same ops, the same Python frames), mostly written alike: a
 * small cache of their raw text answers most without the escape check and the hash of the
 * string table. */
#define NCACHE 256

static uint32_t intern_name(kx *k, hm_slice v)
{
	size_t n = v.p ? (size_t)(v.q - v.p) : 0;
	if (n < 8 || n > sizeof k->ncache->raw)
		return intern_str(k, v);
	if (!k->ncache)
		k->ncache = hm_xcalloc(NCACHE, sizeof *k->ncache);
	uint64_t a, b;
	memcpy(&a, v.p, 8), memcpy(&b, v.q - 8, 8);
	struct ncache *c = &k->ncache[((a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full) ^ n) >> 56];
	if (c->len == n && memcmp(c->raw, v.p, n) == 0)
		return c->id;
	uint32_t id = intern_str(k, v);
	if (!k->err->failed)
		c->len = (uint32_t)n, c->id = id, memcpy(c->raw, v.p, n);
	return id;
}

/* Slices share a handful of categories, mostly the same as the slice before, else often two
 * in turn (cpu_op, cuda_runtime), which the names' cache then answers. */
static uint32_t intern_cat(kx *k, hm_slice v)
{
	size_t n = v.p ? (size_t)(v.q - v.p) : 0;
	if (k->last_cat && n == k->last_cat_len && memcmp(k->last_cat, v.p, n) == 0)
		return k->last_cat_id;
	uint32_t id = intern_name(k, v);
	if (n && n < sizeof k->last_cat_raw) {
		memcpy(k->last_cat_raw, v.p, n);
		k->last_cat = k->last_cat_raw, k->last_cat_len = n, k->last_cat_id = id;
	}
	return id;
}

/* What a slice is, from its category (cat: compared as JSON means it, see plain). */
static uint8_t slice_kind(hm_slice cat)
{
	return HM_SLICE_IS(cat, "cpu_op") || HM_SLICE_IS(cat, "Operator") ? HM_SL_OP
		: HM_SLICE_IS(cat, "user_annotation") ? HM_SL_ANNOTATION
		: HM_SLICE_IS(cat, "python_function") ? HM_SL_PYTHON : HM_SL_OTHER;
}

static void add_slice(kx *k, const ev *x, const char *evp, const int64_t *tsp, uint8_t kind)
{
	int64_t ts, dur = 0;
	if (!x->ts.p) {
		fail_at(k, evp, "slice (ph X) without \"ts\"", 0, 0);
		return;
	}
	if (tsp)
		ts = *tsp;
	else if (ts_field(k, x->ts, "ts", "slice (ph X)", &ts))
		return;
	if (x->dur.p && ts_field(k, x->dur, "dur", "slice (ph X)", &dur))
		return;
	uint32_t name = intern_name(k, x->name), cat = intern_cat(k, x->cat);
	if (k->err->failed)
		return;
	hm_store_add_slice(k->t, ts, dur, name, cat, thread_of(k, x), kind);
}

typedef struct named {
	kx *k;
	hm_slice name;
} named;

static void name_member(void *ud, const char *key, size_t klen, hm_slice v)
{
	named *n = ud;
	if (KEY("name") || (unescaped_key(n->k, &key, &klen) && KEY("name")))
		n->name = v;
}

/* M thread_name metadata: the name of a (pid, tid). */
static void add_thread_name(kx *k, const ev *x)
{
	named n = {k, {0}};
	if (!x->args.p || *x->args.p != '{' || hm_jscan_members(x->args.p, x->args.q, name_member, &n) || !n.name.p)
		return;
	uint32_t th = thread_of(k, x), id = intern_str(k, n.name);
	hm_store_name_thread(k->t, th, id);
}

/* The string s (quotes included) for comparing with literals: s itself, or when it has
 * escapes (profilers write none, but "[m\u0065mory]" is "[memory]" in JSON: issue 11) its
 * decoded text, quoted, in buf (cut to cap bytes: longer text equals no literal compared,
 * and a prefix stays a prefix). */
static hm_slice plain(kx *k, hm_slice s, char *buf, size_t cap)
{
	size_t n;
	const char *d;
	if (!s.p || !memchr(s.p + 1, '\\', (size_t)(s.q - s.p - 1)) || !(d = hm_jscan_unescape(&k->scratch, s.p, s.q, &n)))
		return s;
	if (n > cap - 2)
		n = cap - 2;
	buf[0] = '"';
	memcpy(buf + 1, d, n);
	buf[n + 1] = '"';
	return (hm_slice){buf, buf + n + 2};
}

/* What the event's fields say it is, and what is kept of it. */
static void handle_event(kx *k, const ev *x, const char *p)
{
	/* ph, name and cat are strings where present: one test, then which one is not */
	if ((x->ph.p && *x->ph.p != '"') | (x->name.p && *x->name.p != '"') | (x->cat.p && *x->cat.p != '"')) {
		hm_slice strs[] = {x->ph, x->name, x->cat};
		const char *keys[] = {"ph", "name", "cat"};
		for (int i = 0; i < 3; i++)
			if (strs[i].p && *strs[i].p != '"') {
				fail_at(k, strs[i].p, "event \"%s\" is %s, expected a string", keys[i], hm_jscan_kind_of(strs[i]));
				return;
			}
	}
	int64_t ts;
	const int64_t *tsp = NULL; /* the parsed ts, when it is a valid time */
	if (x->ts.p && *x->ts.p != '"' && !hm_jscan_ns(x->ts.p, x->ts.q, &ts) && ts > -HM_STORE_TS_LIMIT && ts < HM_STORE_TS_LIMIT) {
		tsp = &ts;
	}
	/* ph is one letter in every event a profiler writes */
	char ph = x->ph.p && x->ph.q - x->ph.p == 3 ? x->ph.p[1] : 0;
	char pb[8], nb[32], cb[64];
	if (!ph && x->ph.p) {
		hm_slice d = plain(k, x->ph, pb, sizeof pb);
		ph = d.q - d.p == 3 ? d.p[1] : 0;
	}
	/* Metadata is no moment of the run (scripts/gen-trace writes it at ts 0): it must not
	 * move the trace's start, the "+ms" origin of every report (issue 17). */
	if (tsp && ph != 'M')
		hm_store_saw_ts(k->t, ts);
	/* The name decides only for these, the category only for slices; either is decoded only
	 * where its text as written matches nothing. */
	uint64_t *n = k->t->count;
	if (ph == 'i' || ph == 'I') {
		hm_slice name = x->name;
		int mem = HM_SLICE_IS(name, "[memory]"), oom = !mem && HM_SLICE_IS(name, "[OutOfMemory]");
		if (!mem && !oom && (name = plain(k, x->name, nb, sizeof nb)).p != x->name.p)
			mem = HM_SLICE_IS(name, "[memory]"), oom = HM_SLICE_IS(name, "[OutOfMemory]");
		if (mem)
			add_instant(k, x, p, tsp, 0), n[HM_EV_MEMORY]++;
		else if (oom)
			add_instant(k, x, p, tsp, 1), k->t->oom_events++, n[HM_EV_OOM]++;
		else
			n[HM_EV_OTHER]++;
	} else if (ph == 'X') {
		hm_slice cat = x->cat;
		int dev = device_side(cat);
		uint8_t kind = dev ? HM_SL_OTHER : slice_kind(cat);
		if (!dev && kind == HM_SL_OTHER && (cat = plain(k, x->cat, cb, sizeof cb)).p != x->cat.p)
			dev = device_side(cat), kind = dev ? HM_SL_OTHER : slice_kind(cat);
		if (dev)
			n[HM_EV_DEVICE_SLICE]++;
		else
			add_slice(k, x, p, tsp, kind), n[HM_EV_HOST_SLICE]++;
	} else if (ph == 'M') {
		hm_slice name = x->name;
		int tn = HM_SLICE_IS(name, "thread_name");
		if (!tn && (name = plain(k, x->name, nb, sizeof nb)).p != x->name.p)
			tn = HM_SLICE_IS(name, "thread_name");
		if (tn)
			add_thread_name(k, x), n[HM_EV_THREAD_NAME]++;
		else
			n[HM_EV_METADATA]++;
	} else if (ph == 's' || ph == 'f' || ph == 't') {
		n[HM_EV_FLOW]++;
	} else {
		n[HM_EV_OTHER]++;
	}
}

/* The first 4, 5 or 6 bytes of a literal as a word, a constant (little-endian, as loaded). */
#define KB(s, i) ((uint64_t)(unsigned char)(s)[i] << (8 * (i)))
#define K4(s) (KB(s, 0) | KB(s, 1) | KB(s, 2) | KB(s, 3))
#define K5(s) (K4(s) | KB(s, 4))
#define K6(s) (K5(s) | KB(s, 5))

/* The member of x that the key at c (its opening quote) names, when it is one of the eight
 * as profilers write them, quotes included, with *ke past its closing quote; else NULL. The
 * bytes at c are compared as they are: nothing waits for a scan to find the closing quote,
 * so the scan of the value can start at once (walking members is a chain of scans, each
 * starting where the one before ended: README "Performance"). */
static inline hm_slice *known_key(ev *x, const char *c, const char **ke)
{
	uint64_t w;
	memcpy(&w, c, 8);
	uint64_t w4 = w & 0xffffffffull, w5 = w & 0xffffffffffull, w6 = w & 0xffffffffffffull;
	hm_slice *m = w4 == K4("\"ph\"")     ? &x->ph
		      : w4 == K4("\"ts\"")   ? &x->ts
		      : w5 == K5("\"cat\"")  ? &x->cat
		      : w5 == K5("\"pid\"")  ? &x->pid
		      : w5 == K5("\"tid\"")  ? &x->tid
		      : w5 == K5("\"dur\"")  ? &x->dur
		      : w6 == K6("\"name\"") ? &x->name
		      : w6 == K6("\"args\"") ? &x->args
					      : NULL;
	if (m)
		*ke = c + (m == &x->ph || m == &x->ts ? 4 : m == &x->name || m == &x->args ? 6 : 5);
	return m;
}


/* The event [p, e) is complete and its depth-1 containers are known. Match keys to
 * values and check the member syntax (key ':' value, separated by ','): strings and
 * numbers are crossed here, containers by their recorded ends, never rescanned. */
static int walk_event(kx *k, const char *p, const char *e, const hm_jtok *t, size_t ntok, ev *xp)
{
	/* e[-1] is the closing '}', outside any string: the scans below stop inside the event.
	 * t is NULL when no event so far had a container at depth 1 (see hm_jscan_tok_at). */
	EV_CLEAR(*xp);
	const hm_jtok *end = ntok ? t + ntok : t;
	if (hm_klayout_event(p, e, t, end, xp))
		return 0;
	ev x;
	EV_CLEAR(x);
	const char *c = hm_jscan_past_ws(p + 1);
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
		const char *ks = c, *ke;
		hm_slice *known = known_key(&x, c, &ke);
		if (!known && (ke = hm_jscan_quote_end(c, e)) >= e)
			goto bad;
		c = ke;
		if (!hm_jscan_colon(&c))
			goto bad;
		hm_slice v = {c, c};
		if (*c == '"') {
			v.q = hm_jscan_quote_end(c, e);
			if (v.q >= e)
				goto bad;
		} else if (*c == '{' || *c == '[') {
			if (t == end || p + t->start != c)
				goto bad;
			v.q = p + t->end + 1;
			t++;
		} else {
			v.q = hm_jscan_scalar_end(c);
			if (v.q == c)
				goto bad;
		}
		if (known)
			*known = v;
		else
			ev_member(k, ks + 1, (size_t)(ke - ks - 2), v, &x);
		c = v.q;
		if (hm_jscan_comma(&c))
			continue;
		if (*c == '}' && c == e - 1) {
			if (t != end)
				goto bad;
			*xp = x;
			return 0;
		}
		if (*c != ',')
			goto bad;
		c = hm_jscan_past_ws(c + 1);
	}
bad:
	fail_at(k, c, "invalid JSON in an event", 0, 0);
	return -1;
}

static void slice_event(kx *k, const char *p, const char *e, const hm_jtok *t, size_t ntok)
{
	ev x;
	if (walk_event(k, p, e, t, ntok, &x) == 0)
		handle_event(k, &x, p);
}

/* An event with no handler thread: parsed in place. */
void hm_kevent_on_event(void *ud, hm_jstream *st, size_t s, size_t e)
{
	kx *k = ud;
	const char *buf = st->b.buf;
	k->buf = buf, k->base = st->b.base;
	slice_event(k, buf + s, buf + e, hm_jscan_tok_at(st->b.tok, st->b.tok0), st->b.ntok - st->b.tok0);
	if (!k->err->failed)
		k->t->events++;
}

/* The scanner walks an event for the handler: its eight members as offsets in buf
 * (UINT32_MAX: absent). */
int hm_kevent_walk(void *ud, const char *buf, uint64_t base, size_t s, size_t e, const hm_jtok *t, size_t ntok,
		   uint32_t *out)
{
	kx *k = ud;
	ev x;
	k->buf = buf, k->base = base;
	if (walk_event(k, buf + s, buf + e, t, ntok, &x) != 0)
		return -1;
	for (int j = 0; j < 8; j++) {
		const hm_slice *m = EV_MEMBER(&x, j);
		out[2 * j] = m->p ? (uint32_t)(m->p - buf) : UINT32_MAX;
		out[2 * j + 1] = m->p ? (uint32_t)(m->q - buf) : 0;
	}
	return 0;
}

/* The handler thread parses an event, or takes the members the scanner walked. */
int hm_kevent_handle(void *ud, const char *buf, uint64_t base, size_t s, size_t e, const hm_jtok *t, size_t ntok,
		     const uint32_t *w)
{
	kx *k = ud;
	k->buf = buf, k->base = base;
	if (w) {
		ev x;
		for (int j = 0; j < 8; j++)
			*EV_MEMBER(&x, j) = w[2 * j] == UINT32_MAX ? (hm_slice){0} : (hm_slice){buf + w[2 * j], buf + w[2 * j + 1]};
		handle_event(k, &x, buf + s);
	} else {
		slice_event(k, buf + s, buf + e, t, ntok);
	}
	if (k->err->failed)
		return -1;
	k->t->events++;
	return 0;
}
