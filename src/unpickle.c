/* The data-only unpickler (see unpickle.h). */
#include "unpickle.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A handle: the type in the top 4 bits, the payload below. Integers of 60 bits are held in
 * the handle; wider ones in bigs[] (payload = index * 2 + 1 when the value is above
 * INT64_MAX); floats in nums[]; strings by id in strs; containers by index in chunks of CHUNK. */
#define TAG(t) ((hm_pkv)(t) << 60)
#define PAYLOAD(v) ((v) & ((UINT64_C(1) << 60) - 1))
#define INLINE_MIN (-(INT64_C(1) << 59))
#define INLINE_MAX ((INT64_C(1) << 59) - 1)

typedef struct cont {
	hm_pkv *items;    /* a list's or tuple's elements; a dict's values */
	hm_pkv *keys;     /* a dict's keys: pair i is keys[i], items[i] */
	uint32_t n, cap;  /* elements, or pairs */
	uint64_t at : 48; /* offset of the opcode that made it, for messages */
	uint64_t color : 2;  /* the final check: 0 unseen, 1 on the path, 2 done */
	uint64_t height : 7; /* done: the deepest nesting below it */
	uint64_t dict : 1;
	uint64_t shared : 2; /* SH_ITEMS, SH_KEYS: the array is not the container's own (see room) */
	uint64_t indexed : 1; /* a dict of more than INDEX_MIN pairs: its hash is in hm_pk.idx */
	uint64_t run : 1;     /* a list of records, one after the other as they were made: no items,
			       * its first and last are in run[] (see add_run) */
	uint32_t memo;        /* the memo index it was put at (with MEMOIZED), for hm_pk_reduce */
	uint32_t refs;        /* REF_*: how it may be reached besides where it was made */
} cont;

/* A container's refs: put in the memo once (MEMOIZED) or more (MEMO_MANY), pushed again by
 * a BINGET (GOT), read by a hook and never to change (FROZEN). One made, memoized once and
 * never got is reached only where it was made and through its memo slot: a hook may take
 * it (hm_pk_reduce, the hook's dicts) and its node is used again. */
#define MEMOIZED 1u
#define MEMO_MANY 2u
#define GOT 4u
#define FROZEN 8u

/* Containers live in chunks of CHUNK: the array of them never moves nor doubles. */
#define CHUNK_BITS 16
#define CHUNK ((size_t)1 << CHUNK_BITS)

/* A container's first filling (most containers are filled once: one SETITEMS or APPENDS) is
 * copied into an arena of exact sizes, never into a malloc of its own; a frames list (elements
 * all dicts) and a dict's keys (all strings) are arrays that repeat (every entry of a trace
 * has the same keys, and a code path's stack is pickled as a new list each time it
 * allocates), so such an array is kept once, found in a table of shared arrays. A container
 * that grows later copies its arrays out first (room). */
#define SH_ITEMS 1
#define SH_KEYS 2
#define SHARE_MAX 256
typedef struct shtab {
	hm_pkv **arr;
	uint32_t *len;
	size_t n, cap; /* cap a power of two, or 0 */
} shtab;

typedef struct arena {
	hm_pkv *cur;
	size_t left;
	hm_pkv **blocks;
	size_t nblocks, capblocks;
} arena;

/* A dict's hash of keys (index_dict), by container index in ascending order. */
typedef struct dindex {
	uint32_t node;
	uint32_t *slots;
} dindex;

/* hm_pk_get's answers by keys array and key: the dicts that share their keys (a trace's
 * entries) have a key at the same place. at: the pair's index + 1, 0 when absent. */
#define GC 64
struct getcache {
	const hm_pkv *keys[GC];
	uint32_t atom[GC], at[GC];
};

/* Strings longer than this are kept only where hmem may read them (see keep_string). */
#define SHORT_STR 64
/* A dict of more pairs than this gets a hash of its keys. */
#define INDEX_MIN 16
/* The handle of a long string the reader dropped: hm_pk_str gives NULL. */
#define DROPPED (TAG(HM_PK_STR) | UINT32_MAX)

/* The bytes of the dicts a hook kept as records (hm_pk_hook), in blocks of RBLOCK: a
 * record's handle holds its position (block * RBLOCK + offset). Blocks are touched page by
 * page: a small snapshot's records cost what they hold. */
#define RBLOCK_BITS 20
#define RBLOCK ((size_t)1 << RBLOCK_BITS)

/* A list of records (see add_run): its first and last, and where hm_pk_item last was in it
 * (item i is v: a read goes on from there). */
struct run {
	hm_pkv first, last, v;
	size_t i;
};

struct hm_pk {
	hm_strtab strs;
	struct run *runs;       /* by run list (see add_run) */
	size_t nruns, capruns;
	unsigned char **rblocks; /* records (see RBLOCK) */
	size_t nrblocks, caprblocks, rused;
	uint64_t *anchors;       /* positions of the records that stand alone (hm_pk_hook) */
	size_t nanchors, capanchors;
	uint32_t *free_nodes;    /* containers taken by a hook, whose nodes new ones use */
	size_t nfree, capfree;
	struct rd *rd;           /* while hm_pk_load runs: its state (hm_pk_reduce) */
	hm_pkv *roots;           /* the elements of lists a hook took: checked at the end as if */
	size_t nroots, caproots; /* still in the tree (see check) */
	shtab shared;
	arena arena;
	dindex *idx;
	size_t nidx;
	uint64_t *work;   /* key comparisons and probes of hm_pk_get (hm_pk_work) */
	struct getcache *gc;
	uint64_t dropped; /* bytes of long strings not kept (hm_pk_dropped) */
	cont **chunks;
	size_t nconts, capchunks;
	uint64_t *bigs;
	size_t nbigs, capbigs;
	double *nums;
	size_t nnums, capnums;
	hm_pkv root;
};

/* The byte source and the parse state. */
typedef struct rd {
	const hm_pk_hook *hook;
	const char *name;
	hm_src *src;
	const unsigned char *buf; /* src: own, growable (own); text: the caller's */
	unsigned char *own;
	size_t cap, lo, hi;
	uint64_t base;            /* offset of buf[0] */
	int eof;
	char *err;
	size_t errsz;
	hm_pk *p;
	hm_pkv *stack;
	size_t sp, capstack;
	size_t marks[HM_PK_MAX_MARKS];
	size_t nmarks;
	hm_pkv *memo;             /* memo indices below capmemo, where MEMOIZE and BINPUT put them */
	size_t capmemo, memo_len;
	uint64_t *skey;           /* the others, sparse: an open-addressed map to sval */
	hm_pkv *sval;
	size_t sn, scap;
	const char *const *keep;  /* the keys whose long string values are kept (NULL: all) */
	uint8_t *wanted;          /* per string id: 1 when it is one of keep */
	size_t capwanted;
	uint64_t kept, budget;    /* bytes the tree holds, and what the input's size allows */
	uint64_t dropped;
	hm_pkv *last_keys;        /* the shared keys of the last dict filled, and their number */
	size_t last_n;
	const hm_pkv *seen[256];   /* check: shared arrays whose elements are done, and their height */
	uint8_t seen_h[256];
} rd;

static int fail(rd *r, uint64_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(rd *r, uint64_t off, const char *fmt, ...)
{
	int n = snprintf(r->err, r->errsz, "%s:%llu: ", r->name, (unsigned long long)off);
	if (n >= 0 && (size_t)n < r->errsz) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(r->err + n, r->errsz - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static uint64_t pos(const rd *r)
{
	return r->base + r->lo;
}

/* Make n bytes available at buf + lo: 0, or -1 when the data ends first (or fails: the
 * source's message in err). The buffer grows only as data arrives, so a huge declared
 * length costs what the file really holds. */
static int avail(rd *r, uint64_t n)
{
	while (r->hi - r->lo < n) {
		if (r->eof)
			return -1;
		if (r->lo) {
			memmove(r->own, r->own + r->lo, r->hi - r->lo);
			r->base += r->lo, r->hi -= r->lo, r->lo = 0;
		}
		if (r->cap - r->hi < (64u << 10)) {
			r->cap = r->cap * 2 > r->hi + (1u << 20) ? r->cap * 2 : r->hi + (1u << 20);
			r->own = hm_xrealloc(r->own, r->cap);
			r->buf = r->own;
		}
		long got = hm_src_read(r->src, (char *)r->own + r->hi, r->cap - r->hi);
		if (got < 0) {
			fail(r, pos(r) + (r->hi - r->lo), "%s", hm_src_error(r->src));
			r->eof = 2;
			return -1;
		}
		if (got == 0)
			r->eof = 1;
		r->hi += (size_t)got;
	}
	return 0;
}

static uint64_t le(const unsigned char *b, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static void push(rd *r, hm_pkv v)
{
	if (r->sp == r->capstack)
		hm_grow(&r->stack, &r->capstack, r->sp + 1, sizeof *r->stack);
	r->stack[r->sp++] = v;
}

static int spend(rd *r, uint64_t off, uint64_t bytes);

static hm_pkv new_cont(rd *r, enum hm_pk_type t, uint64_t at)
{
	hm_pk *p = r->p;
	if (p->nfree) { /* the node of a container a hook took */
		size_t i = p->free_nodes[--p->nfree];
		p->chunks[i / CHUNK][i % CHUNK] = (cont){.at = at, .dict = t == HM_PK_DICT};
		return TAG(t) | i;
	}
	if (p->nconts % CHUNK == 0) {
		hm_grow(&p->chunks, &p->capchunks, p->nconts / CHUNK + 1, sizeof *p->chunks);
		p->chunks[p->nconts / CHUNK] = hm_xrealloc(NULL, CHUNK * sizeof **p->chunks);
	}
	p->chunks[p->nconts / CHUNK][p->nconts % CHUNK] = (cont){.at = at, .dict = t == HM_PK_DICT};
	r->kept += sizeof(cont);
	return TAG(t) | p->nconts++;
}

static cont *node(const hm_pk *p, size_t i)
{
	return &p->chunks[i >> CHUNK_BITS][i & (CHUNK - 1)];
}

static cont *cont_of(const hm_pk *p, hm_pkv v)
{
	enum hm_pk_type t = hm_pk_type(v);
	return t == HM_PK_LIST || t == HM_PK_TUPLE || t == HM_PK_DICT ? node(p, PAYLOAD(v)) : NULL;
}

/* An array of n handles into its copy of a growable allocation (a shared one is never
 * changed in place). */
static hm_pkv *copy_out(const hm_pkv *a, size_t n, size_t cap)
{
	hm_pkv *b = hm_xrealloc(NULL, cap * sizeof *b);
	if (n)
		memcpy(b, a, n * sizeof *b);
	return b;
}

/* Room for n more elements (pairs). Most containers are filled once (one SETITEMS or
 * APPENDS): their first size is exact; later ones double (the batches of 1000 of a long
 * list). A shared array is copied before it changes. */
static void room(cont *k, size_t n)
{
	size_t need = (size_t)k->n + n;
	if (need <= k->cap && !k->shared)
		return;
	size_t cap = k->cap ? (size_t)k->cap * 2 : 0;
	if (cap < need)
		cap = need;
	if (cap > (UINT64_C(1) << 31))
		cap = UINT64_C(1) << 31;
	if (k->shared & SH_ITEMS)
		k->items = copy_out(k->items, k->n, cap);
	else
		k->items = hm_xrealloc(k->items, cap * sizeof *k->items);
	if (k->dict && (k->shared & SH_KEYS))
		k->keys = copy_out(k->keys, k->n, cap);
	else if (k->dict)
		k->keys = hm_xrealloc(k->keys, cap * sizeof *k->keys);
	k->shared = 0;
	k->cap = (uint32_t)cap;
}

/* n handles of the arena, for a container's first filling (see shtab). */
static hm_pkv *arena_take(arena *a, size_t n)
{
	if (n > a->left) {
		size_t sz = n > (UINT64_C(1) << 19) ? n : (UINT64_C(1) << 19); /* 4 MiB */
		hm_grow(&a->blocks, &a->capblocks, a->nblocks + 1, sizeof *a->blocks);
		a->blocks[a->nblocks++] = a->cur = hm_xrealloc(NULL, sz * sizeof *a->cur);
		a->left = sz;
	}
	hm_pkv *r = a->cur;
	a->cur += n, a->left -= n;
	return r;
}

/* The shared copy of a[0, n) (see shtab): the equal array met before, or a copy in the
 * arena, added to the table. */
static hm_pkv *share(hm_pk *p, const hm_pkv *a, uint32_t n)
{
	shtab *t = &p->shared;
	uint64_t h = n;
	for (uint32_t i = 0; i < n; i++)
		h = hm_pk_hash(h ^ a[i]);
	if ((t->n + 1) * 2 > t->cap) {
		shtab g = {0};
		g.cap = t->cap ? t->cap * 2 : 1024;
		g.arr = hm_xcalloc(g.cap, sizeof *g.arr);
		g.len = hm_xcalloc(g.cap, sizeof *g.len);
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->arr[i])
				continue;
			uint64_t hh = t->len[i];
			for (uint32_t j = 0; j < t->len[i]; j++)
				hh = hm_pk_hash(hh ^ t->arr[i][j]);
			size_t s = hh & (g.cap - 1);
			while (g.arr[s])
				s = (s + 1) & (g.cap - 1);
			g.arr[s] = t->arr[i], g.len[s] = t->len[i];
		}
		g.n = t->n;
		free(t->arr), free(t->len);
		*t = g;
	}
	for (size_t s = h & (t->cap - 1);; s = (s + 1) & (t->cap - 1)) {
		if (!t->arr[s]) {
			hm_pkv *c = arena_take(&p->arena, n);
			memcpy(c, a, n * sizeof *a);
			t->arr[s] = c, t->len[s] = n, t->n++;
			return c;
		}
		if (t->len[s] == n && !memcmp(t->arr[s], a, n * sizeof *a))
			return t->arr[s];
	}
}

/* Whether a[0, n) is of a kind that repeats (see shtab): all dicts (a frames list) or all
 * strings (a dict's keys), and short. */
static int repeats(const hm_pkv *a, size_t n, enum hm_pk_type t, size_t step)
{
	if (n == 0 || n > SHARE_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (hm_pk_type(a[i * step]) != t)
			return 0;
	return 1;
}

/* A container a hook read never changes afterwards: what it read is what the file holds. */
static int frozen(rd *r, uint64_t off, const cont *k)
{
	if (!(k->refs & FROZEN))
		return 0;
	return fail(r, off, "a list read as a trace entry's frames (the container made at byte %llu) is changed after the "
			    "entry (hmem reads each entry as it completes)", (unsigned long long)k->at);
}

/* Whether v[0, n) are records, each made right after the one before it (after *after when
 * it is not HM_PK_ABSENT). */
static int in_order(const hm_pk *p, hm_pkv after, const hm_pkv *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (hm_pk_type(v[i]) != HM_PK_RECORD || (after != HM_PK_ABSENT && hm_pk_record_next(p, after) != v[i]))
			return 0;
		after = v[i];
	}
	return 1;
}

/* A list of a device's trace entries holds records made one after another: it keeps only
 * its first and last (a run, in hm_pk.runs; items holds the run's index) and its length,
 * not 8 bytes an entry. A list that stops being one gets its items (unrun). Returns 1 when
 * v[0, n) went into the run. */
static int add_run(rd *r, cont *k, hm_pkv list, const hm_pkv *v, size_t n)
{
	hm_pk *p = r->p;
	if (hm_pk_type(list) != HM_PK_LIST || !r->hook)
		return 0;
	if (k->run && in_order(p, p->runs[(uintptr_t)k->items].last, v, n)) {
		p->runs[(uintptr_t)k->items].last = v[n - 1];
		k->n += (uint32_t)n;
		return 1;
	}
	if (k->run || k->n || k->cap || !in_order(p, HM_PK_ABSENT, v, n))
		return 0;
	hm_grow(&p->runs, &p->capruns, p->nruns + 1, sizeof *p->runs);
	p->runs[p->nruns] = (struct run){v[0], v[n - 1], v[0], 0};
	k->items = (hm_pkv *)(uintptr_t)p->nruns++;
	k->run = 1, k->shared = SH_ITEMS | SH_KEYS, k->n = (uint32_t)n;
	r->kept += sizeof *p->runs;
	return 1;
}

/* A run's items, made (see add_run). */
static void unrun(rd *r, uint64_t off, cont *k)
{
	hm_pkv *items = hm_xrealloc(NULL, (k->n ? k->n : 1) * sizeof *items);
	hm_pkv w = r->p->runs[(uintptr_t)k->items].first;
	for (uint32_t i = 0; i < k->n; i++, w = hm_pk_record_next(r->p, w))
		items[i] = w;
	k->items = items, k->cap = k->n, k->run = 0, k->shared = 0;
	spend(r, off, k->n * sizeof *items);
}

static int add_items(rd *r, uint64_t off, hm_pkv c, const hm_pkv *v, size_t n)
{
	cont *k = cont_of(r->p, c);
	if (n == 0) /* (TUPLE of an empty MARK: items may still be NULL) */
		return 0;
	if (frozen(r, off, k))
		return -1;
	if ((uint64_t)k->n + n > (UINT64_C(1) << 31))
		return fail(r, off, "a container of more than 2^31 elements");
	if (add_run(r, k, c, v, n))
		return 0;
	if (k->run)
		unrun(r, off, k);
	if (spend(r, off, n * sizeof *v))
		return -1;
	if (k->n == 0 && k->cap == 0) { /* the first filling: shared, or in the arena */
		if (hm_pk_type(c) == HM_PK_LIST && repeats(v, n, HM_PK_DICT, 1)) {
			k->items = share(r->p, v, (uint32_t)n);
		} else {
			k->items = arena_take(&r->p->arena, n);
			memcpy(k->items, v, n * sizeof *v);
		}
		k->shared = SH_ITEMS, k->n = k->cap = (uint32_t)n;
		return 0;
	}
	room(k, n);
	memcpy(k->items + k->n, v, n * sizeof *v);
	k->n += (uint32_t)n;
	return 0;
}

/* Pairs kv[0, 2n) (key, value, ...) into a dict. */
static int add_pairs(rd *r, uint64_t off, hm_pkv c, const hm_pkv *kv, size_t n)
{
	cont *k = cont_of(r->p, c);
	if (n == 0)
		return 0;
	if ((uint64_t)k->n + n > (UINT64_C(1) << 30))
		return fail(r, off, "a container of more than 2^31 elements");
	if (spend(r, off, 2 * n * sizeof *kv))
		return -1;
	if (k->n == 0 && k->cap == 0) {
		k->items = arena_take(&r->p->arena, n);
		for (size_t i = 0; i < n; i++)
			k->items[i] = kv[2 * i + 1];
		if (repeats(kv, n, HM_PK_STR, 2)) {
			hm_pkv keys[SHARE_MAX];
			int same = r->last_keys && r->last_n == n;
			for (size_t i = 0; i < n; i++)
				keys[i] = kv[2 * i], same = same && r->last_keys[i] == keys[i];
			/* (the dict before this one had the same keys: a trace's entries, one after another) */
			k->keys = same ? r->last_keys : share(r->p, keys, (uint32_t)n);
			r->last_keys = k->keys, r->last_n = n;
		} else {
			k->keys = arena_take(&r->p->arena, n);
			for (size_t i = 0; i < n; i++)
				k->keys[i] = kv[2 * i];
		}
		k->shared = SH_ITEMS | SH_KEYS, k->n = k->cap = (uint32_t)n;
		return 0;
	}
	room(k, n);
	for (size_t i = 0; i < n; i++)
		k->keys[k->n + i] = kv[2 * i], k->items[k->n + i] = kv[2 * i + 1];
	k->n += (uint32_t)n;
	return 0;
}

static hm_pkv new_int(rd *r, int64_t x, int above)
{
	if (!above && x >= INLINE_MIN && x <= INLINE_MAX)
		return TAG(HM_PK_INT) | ((uint64_t)x & PAYLOAD(~UINT64_C(0)));
	hm_pk *p = r->p;
	if (p->nbigs == p->capbigs)
		hm_grow(&p->bigs, &p->capbigs, p->nbigs + 1, sizeof *p->bigs);
	p->bigs[p->nbigs] = (uint64_t)x;
	return TAG(HM_PK_BIGINT) | ((uint64_t)p->nbigs++ << 1 | (uint64_t)above);
}

/* UTF-8 as Python's pickle writes it (surrogatepass: encoded surrogates allowed); returns
 * the offset of the first bad byte, or n. */
static size_t utf8_bad(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i];
		size_t k = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
		if (!k || i + k > n || (k == 2 && c < 0xc2) || (k == 4 && c > 0xf4))
			return i;
		for (size_t j = 1; j < k; j++)
			if ((s[i + j] & 0xc0) != 0x80)
				return i;
		if ((k == 3 && c == 0xe0 && s[i + 1] < 0xa0) || (k == 4 && c == 0xf0 && s[i + 1] < 0x90) ||
		    (k == 4 && c == 0xf4 && s[i + 1] >= 0x90))
			return i;
		i += k;
	}
	return n;
}

/* Names of the opcodes, to say which one was refused. */
static const char *op_name(unsigned op)
{
	static const struct { unsigned char op; const char *name; } names[] = {
		{'c', "GLOBAL"}, {0x93, "STACK_GLOBAL"}, {'R', "REDUCE"}, {'b', "BUILD"}, {'i', "INST"},
		{'o', "OBJ"}, {0x81, "NEWOBJ"}, {0x92, "NEWOBJ_EX"}, {'P', "PERSID"}, {'Q', "BINPERSID"},
		{0x82, "EXT1"}, {0x83, "EXT2"}, {0x84, "EXT4"}, {'B', "BINBYTES"}, {'C', "SHORT_BINBYTES"},
		{0x8e, "BINBYTES8"}, {0x8f, "EMPTY_SET"}, {0x90, "ADDITEMS"}, {0x91, "FROZENSET"},
		{0x96, "BYTEARRAY8"}, {0x97, "NEXT_BUFFER"}, {0x98, "READONLY_BUFFER"}, {'I', "INT"},
		{'L', "LONG"}, {0x8b, "LONG4"}, {'S', "STRING"}, {'T', "BINSTRING"}, {'U', "SHORT_BINSTRING"},
		{'V', "UNICODE"}, {'F', "FLOAT"}, {'p', "PUT"}, {'g', "GET"}, {'0', "POP"}, {'2', "DUP"},
		{'1', "POP_MARK"},
	};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (names[i].op == op)
			return names[i].name;
	return NULL;
}

/* The start of the items above the innermost mark (0 without one): nothing below it may
 * be taken by an opcode that does not pop the mark. */
static size_t fence(const rd *r)
{
	return r->nmarks ? r->marks[r->nmarks - 1] : 0;
}

static int pop_mark(rd *r, uint64_t off, size_t *k)
{
	if (!r->nmarks)
		return fail(r, off, "no MARK is open (mark stack underflow)");
	*k = r->marks[--r->nmarks];
	return 0;
}

static int need_items(rd *r, uint64_t off, size_t n, const char *what)
{
	if (r->sp - fence(r) < n)
		return fail(r, off, "%s needs %zu value%s on the stack (stack underflow)", what, n, n == 1 ? "" : "s");
	return 0;
}

/* The memo slot of idx, or NULL when it was never set. */
static hm_pkv *memo_slot(rd *r, uint64_t idx);

/* A container a hook took: the slot of the memo that holds it (it is memoized at most
 * once and was never got, so nothing else reaches it) holds what replaces it, and its node
 * goes to the free list for the next container made. */
static void release(rd *r, hm_pkv v, hm_pkv by)
{
	hm_pk *p = r->p;
	cont *k = cont_of(p, v);
	hm_pkv *slot = k->refs & MEMOIZED ? memo_slot(r, k->memo) : NULL;
	if (slot && *slot == v)
		*slot = by;
	if (!(k->shared & SH_ITEMS))
		free(k->items);
	if (k->dict && !(k->shared & SH_KEYS))
		free(k->keys);
	*k = (cont){.shared = SH_ITEMS | SH_KEYS};
	hm_grow(&p->free_nodes, &p->capfree, p->nfree + 1, sizeof *p->free_nodes);
	p->free_nodes[p->nfree++] = (uint32_t)PAYLOAD(v);
}

/* Whether a container can be taken by a hook: reached only where it was made (and its
 * memo slot), never changed before. */
static int takeable(const cont *k)
{
	return !(k->refs & (MEMO_MANY | GOT | FROZEN));
}

/* A list is taken only when its items are the arena's or shared (its first filling): its
 * hm_pk_same stays its elements' until hm_pk_free, as the hook may keep it. */
static int list_takeable(const cont *k)
{
	return takeable(k) && (k->shared & SH_ITEMS) && !k->run;
}

/* The bytes of a record, after their length (a varint), in the blocks of records. */
static hm_pkv put_record(rd *r, uint64_t off, const void *rec, size_t len)
{
	hm_pk *p = r->p;
	size_t need = len + 2;
	if (!p->nrblocks || p->rused % RBLOCK + need + 1 > RBLOCK) { /* (a 0 after the last record of a block) */
		if (p->nrblocks)
			p->rblocks[p->rused / RBLOCK][p->rused % RBLOCK] = 0;
		hm_grow(&p->rblocks, &p->caprblocks, p->nrblocks + 1, sizeof *p->rblocks);
		p->rblocks[p->nrblocks++] = hm_xrealloc(NULL, RBLOCK);
		p->rused = (p->nrblocks - 1) * RBLOCK;
	}
	unsigned char *b = p->rblocks[p->rused / RBLOCK] + p->rused % RBLOCK;
	hm_pkv v = TAG(HM_PK_RECORD) | p->rused;
	b[0] = (unsigned char)(len & 0x7f) | (len > 0x7f ? 0x80 : 0);
	size_t h = 1;
	if (len > 0x7f)
		b[h++] = (unsigned char)(len >> 7);
	memcpy(b + h, rec, len);
	p->rused += h + len;
	r->kept += h + len;
	(void)off;
	return v;
}

/* Python's pickle writes a dict's pairs in SETITEMS of BATCH: a first one of fewer holds
 * them all. */
#define BATCH 1000

/* Pairs for a dict, checked: keys are scalars (a list or dict key cannot be hashed). *where
 * is the dict, where it stands on the stack: a dict that a hook keeps as a record (all its
 * pairs at once, the dict reached from nowhere else) is replaced there by the record. */
static int set_pairs(rd *r, uint64_t off, hm_pkv *where, const hm_pkv *kv, size_t n)
{
	hm_pkv dict = *where;
	if (hm_pk_type(dict) == HM_PK_RECORD)
		return fail(r, off, "a trace entry gets more items after its first SETITEMS (hmem reads each entry as it "
				    "completes; Python's pickle fills a dict of fewer than %d keys at once)", BATCH);
	if (hm_pk_type(dict) != HM_PK_DICT)
		return fail(r, off, "setting items of something that is not a dict");
	if (n % 2)
		return fail(r, off, "a key without a value");
	for (size_t i = 0; i < n; i += 2)
		if (hm_pk_type(kv[i]) >= HM_PK_LIST)
			return fail(r, off, "a dict key must be a string or a number");
	cont *k = cont_of(r->p, dict);
	if (r->hook && n && n / 2 < BATCH && k->n == 0 && k->cap == 0 && takeable(k)) {
		const void *rec;
		size_t len;
		int rc = r->hook->dict(r->hook->ctx, r->p, k->at, kv, n / 2, &rec, &len);
		if (rc < 0)
			return -1;
		if (rc >= 1) {
			if (len > 16000 || len < 3 || spend(r, off, len + 2))
				return len > 16000 || len < 3 ? fail(r, off, "a record of %zu bytes", len) : -1;
			hm_pkv v = put_record(r, off, rec, len);
			if (rc == 2) {
				hm_grow(&r->p->anchors, &r->p->capanchors, r->p->nanchors + 1, sizeof *r->p->anchors);
				r->p->anchors[r->p->nanchors++] = PAYLOAD(v);
			}
			release(r, dict, v);
			*where = v;
			return 0;
		}
	}
	return add_pairs(r, off, dict, kv, n / 2);
}

static int append(rd *r, uint64_t off, hm_pkv list, const hm_pkv *v, size_t n)
{
	if (hm_pk_type(list) != HM_PK_LIST)
		return fail(r, off, "appending to something that is not a list");
	return add_items(r, off, list, v, n);
}

/* A slot of the sparse memo for idx (add: made when absent), or NULL. */
static hm_pkv *sparse_slot(rd *r, uint64_t idx, int add)
{
	if (add && (r->sn + 1) * 2 > r->scap) {
		size_t oc = r->scap;
		uint64_t *ok = r->skey;
		hm_pkv *ov = r->sval;
		r->scap = oc ? oc * 2 : 64;
		r->skey = hm_xcalloc(r->scap, sizeof *r->skey);
		r->sval = hm_xcalloc(r->scap, sizeof *r->sval);
		r->sn = 0;
		for (size_t i = 0; i < oc; i++)
			if (ok[i])
				*sparse_slot(r, ok[i] - 1, 1) = ov[i];
		free(ok), free(ov);
	}
	if (!r->scap)
		return NULL;
	for (size_t i = hm_pk_hash(idx) & (r->scap - 1);; i = (i + 1) & (r->scap - 1)) {
		if (r->skey[i] == idx + 1)
			return &r->sval[i];
		if (!r->skey[i]) {
			if (!add)
				return NULL;
			r->skey[i] = idx + 1, r->sn++;
			r->sval[i] = HM_PK_ABSENT;
			return &r->sval[i];
		}
	}
}

/* The memo costs what it holds: indices a little past the entries set so far (MEMOIZE's,
 * and BINPUT's as Python and the jit Pickler number them, 0, 1, 2, ...) go into an array;
 * an index far beyond them (a hand-made LONG_BINPUT 100000000) into a hash, so one opcode
 * cannot make hmem allocate gigabytes. */
static int memo_put(rd *r, uint64_t off, uint64_t idx)
{
	if (r->sp == 0)
		return fail(r, off, "memoizing with an empty stack");
	cont *k = cont_of(r->p, r->stack[r->sp - 1]);
	if (k) /* (idx < 2^28, checked below before it matters) */
		k->refs |= k->refs & MEMOIZED ? MEMO_MANY : MEMOIZED, k->memo = (uint32_t)idx;
	if (idx >= HM_PK_MAX_MEMO || idx > off)
		return fail(r, off, "memo index %llu out of range", (unsigned long long)idx);
	if (idx >= r->capmemo && idx <= 2 * (uint64_t)r->memo_len + 1024) {
		size_t old = r->capmemo;
		hm_grow(&r->memo, &r->capmemo, (size_t)idx + 1, sizeof *r->memo);
		for (size_t i = old; i < r->capmemo; i++)
			r->memo[i] = HM_PK_ABSENT;
		for (size_t i = 0; i < r->scap; i++) /* what the array now covers moves into it */
			if (r->skey[i] && r->skey[i] - 1 < r->capmemo && r->sval[i] != HM_PK_ABSENT)
				r->memo[r->skey[i] - 1] = r->sval[i], r->sval[i] = HM_PK_ABSENT;
	}
	hm_pkv *slot = idx < r->capmemo ? &r->memo[idx] : sparse_slot(r, idx, 1);
	r->memo_len += *slot == HM_PK_ABSENT;
	*slot = r->stack[r->sp - 1];
	return 0;
}

static hm_pkv *memo_slot(rd *r, uint64_t idx)
{
	hm_pkv *slot = idx < r->capmemo ? &r->memo[idx] : sparse_slot(r, idx, 0);
	return slot && *slot != HM_PK_ABSENT ? slot : NULL;
}

static int memo_get(rd *r, uint64_t off, uint64_t idx)
{
	hm_pkv *slot = memo_slot(r, idx);
	if (!slot)
		return fail(r, off, "memo index %llu was never set", (unsigned long long)idx);
	cont *k = cont_of(r->p, *slot);
	if (k)
		k->refs |= GOT;
	push(r, *slot);
	return 0;
}

/* What the tree holds may not outgrow what the input could honestly make: BUDGET_PER_BYTE
 * bytes of tree per byte of the file (compressed, when it is gzip), plus BUDGET_BASE. A
 * real snapshot's tree is a few times its pickle, and a pickle at most a few tens of times
 * its gzip; a gzip bomb of empty dicts or distinct strings is a thousand times. */
#define BUDGET_PER_BYTE 256
#define BUDGET_BASE (UINT64_C(256) << 20)

/* The stack counts too: a million values under one MARK are held there before APPENDS. */
static int spend(rd *r, uint64_t off, uint64_t bytes)
{
	r->kept += bytes;
	uint64_t held = r->kept + r->capstack * sizeof *r->stack;
	if (held <= r->budget)
		return 0;
	uint64_t in = r->src ? hm_src_file_pos(r->src) : r->hi;
	r->budget = in * BUDGET_PER_BYTE + BUDGET_BASE;
	if (held <= r->budget)
		return 0;
	return fail(r, off, "the values read so far take %llu MiB, more than %d times the %llu bytes of input read "
			    "(a compression bomb?)", (unsigned long long)(held >> 20), BUDGET_PER_BYTE, (unsigned long long)in);
}

/* Whether a long string at the top of the stack-to-be could be read by hmem: it is the
 * value of a pair being set in a dict (above a MARK over the dict, in a value position, or
 * for SETITEM right above the dict and its key) whose key is one of keep. hmem reads a
 * string nowhere else, so other long strings (values of keys it ignores, items of lists)
 * are dropped after their UTF-8 is checked: a file of gigabytes of such strings costs a
 * buffer, not their size. */
static int keep_string(const rd *r)
{
	if (!r->keep)
		return 1;
	size_t k = r->nmarks ? r->marks[r->nmarks - 1] : 0;
	hm_pkv key;
	if (r->nmarks && k >= 1 && hm_pk_type(r->stack[k - 1]) == HM_PK_DICT && (r->sp - k) % 2 == 1)
		key = r->stack[r->sp - 1];
	else if (r->sp >= k + 2 && hm_pk_type(r->stack[r->sp - 2]) == HM_PK_DICT)
		key = r->stack[r->sp - 1];
	else
		return 0;
	uint32_t id = hm_pk_type(key) == HM_PK_STR && key != DROPPED ? (uint32_t)PAYLOAD(key) : UINT32_MAX;
	return id < r->capwanted && r->wanted[id];
}

/* A newly interned string's place in wanted. Every new string is checked: wanted grows by
 * more than one at a time, so an id below its capacity may still be new (a key such as
 * "filename" first met after the growth was never marked, and the long paths of real
 * snapshots were dropped). */
static void note_string(rd *r, uint32_t id, const char *s, size_t n)
{
	if (!r->keep)
		return;
	if (id >= r->capwanted) {
		size_t old = r->capwanted;
		hm_grow(&r->wanted, &r->capwanted, (size_t)id + 1, sizeof *r->wanted);
		memset(r->wanted + old, 0, r->capwanted - old);
	}
	for (const char *const *k = r->keep; *k; k++)
		if (strlen(*k) == n && !memcmp(*k, s, n))
			r->wanted[id] = 1;
}

static int string(rd *r, uint64_t off, uint64_t n)
{
	if (n > HM_PK_MAX_STR)
		return fail(r, off, "a string of %llu bytes (at most 1 GiB)", (unsigned long long)n);
	if (n > SHORT_STR && !keep_string(r)) {
		/* Checked in pieces of at most 1 MiB; a character cut by a piece's end waits for the
		 * next piece. */
		uint64_t left = n;
		while (left) {
			size_t want = left < (1u << 20) ? (size_t)left : (1u << 20);
			if (avail(r, want))
				return r->eof == 2 ? -1 : fail(r, off, "a string of %llu bytes, but the pickle ends %llu bytes later",
								 (unsigned long long)n, (unsigned long long)(n - left + (r->hi - r->lo)));
			size_t bad = utf8_bad(r->buf + r->lo, want);
			if (bad < want && (want == left || want - bad >= 4))
				return fail(r, pos(r) + bad, "invalid UTF-8 in a string");
			r->lo += bad, left -= bad;
		}
		r->dropped += n;
		push(r, DROPPED);
		return 0;
	}
	if (avail(r, n))
		return r->eof == 2 ? -1 : fail(r, off, "a string of %llu bytes, but the pickle ends %llu bytes later",
						 (unsigned long long)n, (unsigned long long)(r->hi - r->lo));
	const unsigned char *s = r->buf + r->lo;
	size_t bad = utf8_bad(s, (size_t)n);
	if (bad < n)
		return fail(r, pos(r) + bad, "invalid UTF-8 in a string");
	size_t known = r->p->strs.n;
	uint32_t id = hm_strtab_intern(&r->p->strs, (const char *)s, (size_t)n);
	if (r->p->strs.n > known) {
		note_string(r, id, (const char *)s, (size_t)n);
		if (spend(r, off, n + 16))
			return -1;
	}
	push(r, TAG(HM_PK_STR) | id);
	r->lo += (size_t)n;
	return 0;
}

/* Arguments of an opcode: n bytes, or the pickle ends. */
#define ARG(n)                                                                                              \
	do {                                                                                                \
		if (r->hi - r->lo < (n) && avail(r, (n)))                                                   \
			return r->eof == 2 ? -1 : fail(r, off, "the pickle ends inside an opcode's argument"); \
	} while (0)

/* One opcode at buf + lo. Returns 0 to go on, 1 at STOP, -1 on error. */
static int step(rd *r)
{
	if (r->hi == r->lo && avail(r, 1))
		return r->eof == 2 ? -1 : fail(r, pos(r), "the pickle ends before its STOP opcode (truncated)");
	uint64_t off = pos(r);
	unsigned op = r->buf[r->lo++];
	if (r->kept + r->capstack * sizeof *r->stack > r->budget && spend(r, off, 0))
		return -1;
	const unsigned char *a;
	hm_pkv v;
	size_t k = 0, n;
	switch (op) {
	case 0x80: /* PROTO */
		ARG(1); a = r->buf + r->lo, r->lo++;
		if (a[0] < 2 || a[0] > 5)
			return fail(r, off, "pickle protocol %u (hmem reads protocols 2 to 5; re-save it with "
					    "pickle.dump(snapshot, f, protocol=4))", a[0]);
		return 0;
	case 0x95: /* FRAME: framing only */
		ARG(8); r->lo += 8;
		return 0;
	case '.': /* STOP */
		if (r->sp == 0)
			return fail(r, off, "STOP with an empty stack");
		r->p->root = r->stack[r->sp - 1];
		return 1;
	case '(': /* MARK */
		if (r->nmarks == HM_PK_MAX_MARKS)
			return fail(r, off, "more than %d open MARKs", HM_PK_MAX_MARKS);
		r->marks[r->nmarks++] = r->sp;
		return 0;
	case '}': push(r, new_cont(r, HM_PK_DICT, off)); return 0;
	case ']': push(r, new_cont(r, HM_PK_LIST, off)); return 0;
	case ')': push(r, new_cont(r, HM_PK_TUPLE, off)); return 0;
	case 'N': push(r, TAG(HM_PK_NONE)); return 0;
	case 0x88: push(r, TAG(HM_PK_BOOL) | 1); return 0;
	case 0x89: push(r, TAG(HM_PK_BOOL)); return 0;
	case 's': /* SETITEM */
		if (need_items(r, off, 3, "SETITEM"))
			return -1;
		r->sp -= 2;
		return set_pairs(r, off, &r->stack[r->sp - 1], r->stack + r->sp, 2);
	case 'u': /* SETITEMS */
	case 'e': /* APPENDS */
		if (pop_mark(r, off, &k))
			return -1;
		if (k == 0 || k <= fence(r))
			return fail(r, off, "%s with nothing below its MARK (stack underflow)", op == 'u' ? "SETITEMS" : "APPENDS");
		v = r->stack[k - 1];
		n = r->sp - k;
		r->sp = k;
		return op == 'u' ? set_pairs(r, off, &r->stack[k - 1], r->stack + k, n) : append(r, off, v, r->stack + k, n);
	case 'a': /* APPEND */
		if (need_items(r, off, 2, "APPEND"))
			return -1;
		r->sp--;
		return append(r, off, r->stack[r->sp - 1], r->stack + r->sp, 1);
	case 't': /* TUPLE */
	case 'l': /* LIST */
	case 'd': /* DICT */
		if (pop_mark(r, off, &k))
			return -1;
		v = new_cont(r, op == 't' ? HM_PK_TUPLE : op == 'l' ? HM_PK_LIST : HM_PK_DICT, off);
		if ((op == 'd' ? set_pairs(r, off, &v, r->stack + k, r->sp - k) : add_items(r, off, v, r->stack + k, r->sp - k)))
			return -1;
		r->sp = k;
		push(r, v);
		return 0;
	case 0x85: case 0x86: case 0x87: /* TUPLE1..3 */
		k = op - 0x84;
		if (need_items(r, off, k, "TUPLEn"))
			return -1;
		v = new_cont(r, HM_PK_TUPLE, off);
		if (add_items(r, off, v, r->stack + r->sp - k, k))
			return -1;
		r->sp -= k;
		push(r, v);
		return 0;
	case 'J': ARG(4); a = r->buf + r->lo, r->lo += 4, push(r, new_int(r, (int32_t)(uint32_t)le(a, 4), 0)); return 0;
	case 'K': ARG(1); a = r->buf + r->lo, r->lo += 1, push(r, new_int(r, a[0], 0)); return 0;
	case 'M': ARG(2); a = r->buf + r->lo, r->lo += 2, push(r, new_int(r, (int64_t)le(a, 2), 0)); return 0;
	case 0x8a: { /* LONG1: little-endian two's complement */
		ARG(1); n = r->buf[r->lo];
		ARG(1 + n); a = r->buf + r->lo + 1;
		if (n > 9 || (n == 9 && a[8] != 0))
			return fail(r, off, "an integer of %zu bytes (hmem reads 64-bit integers)", n);
		r->lo += 1 + n;
		uint64_t u = le(a, n > 8 ? 8 : (int)n);
		if (n > 0 && n < 8 && (a[n - 1] & 0x80))
			u |= ~UINT64_C(0) << (8 * n);
		push(r, new_int(r, (int64_t)u, n == 9 && (u >> 63)));
		return 0;
	}
	case 'G': { /* BINFLOAT, big-endian */
		ARG(8); a = r->buf + r->lo, r->lo += 8;
		uint64_t u = 0;
		for (int i = 0; i < 8; i++)
			u = u << 8 | a[i];
		double d;
		memcpy(&d, &u, 8);
		hm_pk *p = r->p;
		if (p->nnums == p->capnums)
			hm_grow(&p->nums, &p->capnums, p->nnums + 1, sizeof *p->nums);
		p->nums[p->nnums] = d;
		push(r, TAG(HM_PK_FLOAT) | p->nnums++);
		return 0;
	}
	case 0x8c: ARG(1); n = r->buf[r->lo], r->lo += 1; return string(r, off, n);
	case 'X': ARG(4); n = (size_t)le(r->buf + r->lo, 4), r->lo += 4; return string(r, off, n);
	case 0x8d: { ARG(8); uint64_t n8 = le(r->buf + r->lo, 8); r->lo += 8; return string(r, off, n8); }
	case 0x94: return memo_put(r, off, r->memo_len);
	case 'q': ARG(1); n = r->buf[r->lo], r->lo += 1; return memo_put(r, off, n);
	case 'r': ARG(4); n = (size_t)le(r->buf + r->lo, 4), r->lo += 4; return memo_put(r, off, n);
	case 'h': ARG(1); n = r->buf[r->lo], r->lo += 1; return memo_get(r, off, n);
	case 'j': ARG(4); n = (size_t)le(r->buf + r->lo, 4), r->lo += 4; return memo_get(r, off, n);
	default: {
		const char *nm = op_name(op);
		if (nm)
			return fail(r, off, "refused pickle opcode %s (0x%02x): a memory snapshot holds only data, "
					   "and hmem never imports, calls or builds objects", nm, op);
		return fail(r, off, "unknown pickle opcode 0x%02x", op);
	}
	}
}

/* The tree from the root: no container inside itself, at most HM_PK_MAX_DEPTH deep. Each
 * container is visited once (its height kept), so shared frames cost nothing twice. The
 * recursion is as deep as the bound. */
static int check(rd *r, hm_pkv v, int depth)
{
	cont *c = cont_of(r->p, v);
	if (!c)
		return 0;
	if (c->color == 1)
		return fail(r, c->at, "the container made here contains itself (a cycle)");
	if (c->color == 2) {
		if (depth + c->height > HM_PK_MAX_DEPTH)
			return fail(r, c->at, "containers nested more than %d deep", HM_PK_MAX_DEPTH);
		return 0;
	}
	if (depth >= HM_PK_MAX_DEPTH)
		return fail(r, c->at, "containers nested more than %d deep", HM_PK_MAX_DEPTH);
	if (c->run) { /* records: no container below */
		c->color = 2, c->height = 0;
		return 0;
	}
	/* A shared array of frames met before: its elements are done, the same height. */
	size_t slot = (size_t)(hm_pk_hash((uint64_t)(uintptr_t)c->items) & 255);
	if (c->n && r->seen[slot] == c->items && depth + r->seen_h[slot] <= HM_PK_MAX_DEPTH) {
		c->color = 2, c->height = r->seen_h[slot];
		return 0;
	}
	c->color = 1;
	int h = 0;
	for (uint32_t i = 0; i < c->n; i++) {
		hm_pkv w = c->items[i];
		cont *d = cont_of(r->p, w);
		if (!d)
			continue;
		if ((d->color != 2 || depth + 1 + d->height > HM_PK_MAX_DEPTH) && check(r, w, depth + 1))
			return -1;
		if (d->height + 1 > h)
			h = d->height + 1;
	}
	if (c->shared & SH_ITEMS && !c->dict)
		r->seen[slot] = c->items, r->seen_h[slot] = (uint8_t)h;
	c->color = 2;
	c->height = (uint8_t)h;
	return 0;
}

/* Each dict of more than INDEX_MIN pairs gets an open-addressed table of pair index + 1 by
 * key, the last pair of a key winning: hm_pk_get is then one probe or a few, however many
 * keys a hostile dict has. */
static uint32_t *index_dict(const cont *c)
{
	size_t pairs = c->n, cap = 64;
	while (cap < pairs * 2)
		cap *= 2;
	uint32_t *index = hm_xcalloc(cap + 1, sizeof *index);
	index[0] = (uint32_t)(cap - 1);
	for (uint32_t i = 0; i < pairs; i++) {
		hm_pkv k = c->keys[i];
		for (size_t h = hm_pk_hash(k) & (cap - 1);; h = (h + 1) & (cap - 1)) {
			uint32_t *slot = &index[1 + h];
			if (!*slot || c->keys[*slot - 1] == k) {
				*slot = i + 1;
				break;
			}
		}
	}
	return index;
}

hm_pk *hm_pk_load(const char *name, hm_src *src, const char *text, size_t len, const char *const *keep, char *err,
		  size_t errsz)
{
	return hm_pk_load_with(name, src, text, len, keep, NULL, err, errsz);
}

hm_pk *hm_pk_load_with(const char *name, hm_src *src, const char *text, size_t len, const char *const *keep,
		       const hm_pk_hook *hook, char *err, size_t errsz)
{
	rd r = {0};
	r.name = name, r.src = src, r.err = err, r.errsz = errsz, r.keep = keep, r.hook = hook;
	if (src) {
		r.cap = 1u << 20;
		r.own = hm_xrealloc(NULL, r.cap);
		r.buf = r.own;
	} else {
		r.buf = (const unsigned char *)text, r.hi = len, r.eof = 1;
	}
	r.budget = BUDGET_BASE;
	r.p = hm_xcalloc(1, sizeof *r.p);
	r.p->work = hm_xcalloc(1, sizeof *r.p->work);
	r.p->gc = hm_xcalloc(1, sizeof *r.p->gc);
	r.p->rd = &r;
	hm_grow(&r.stack, &r.capstack, 64, sizeof *r.stack); /* never NULL, even for an empty MARK */
	int rc = 0;
	if (avail(&r, 1) == 0 && r.buf[r.lo] != 0x80)
		rc = fail(&r, 0, "a pickle of protocol 0 or 1 (it starts without a PROTO opcode): hmem reads protocols 2 to "
				 "5; re-save it with pickle.dump(snapshot, f, protocol=4)");
	while (rc == 0)
		rc = step(&r);
	if (rc == 1 && avail(&r, 1) == 0)
		rc = fail(&r, pos(&r), "unexpected data after the pickle's STOP opcode (a pickle holds one value)");
	else if (rc == 1 && r.eof == 2)
		rc = -1;
	if (rc == 1)
		rc = check(&r, r.p->root, 0);
	/* The frames of entries a hook took, at their place: root, device_traces, the device's
	 * list, the entry, its frames list. */
	for (size_t i = 0; rc == 0 && i < r.p->nroots; i++)
		rc = check(&r, r.p->roots[i], 5);
	free(r.p->roots);
	r.p->roots = NULL, r.p->rd = NULL;
	for (size_t i = 0; rc == 0 && i < r.p->nconts; i++) {
		cont *c = node(r.p, i);
		if (c->dict && c->n > INDEX_MIN) {
			hm_pk *p = r.p;
			if (p->nidx % 64 == 0)
				p->idx = hm_xrealloc(p->idx, (p->nidx + 64) * sizeof *p->idx);
			p->idx[p->nidx++] = (dindex){(uint32_t)i, index_dict(c)};
			c->indexed = 1;
		}
	}
	free(r.own);
	free(r.stack);
	free(r.memo);
	free(r.skey), free(r.sval), free(r.wanted);
	if (rc < 0) {
		hm_pk_free(r.p);
		return NULL;
	}
	r.p->dropped = r.dropped;
	return r.p;
}

void hm_pk_free(hm_pk *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nconts; i++) {
		cont *c = node(p, i);
		if (!(c->shared & SH_ITEMS))
			free(c->items);
		if (!(c->shared & SH_KEYS))
			free(c->keys);
	}
	for (size_t i = 0; i < p->nidx; i++)
		free(p->idx[i].slots);
	free(p->idx);
	for (size_t i = 0; i < p->arena.nblocks; i++)
		free(p->arena.blocks[i]);
	free(p->arena.blocks);
	free(p->shared.arr), free(p->shared.len);
	free(p->work), free(p->gc);
	for (size_t i = 0; i < p->nrblocks; i++)
		free(p->rblocks[i]);
	free(p->rblocks), free(p->free_nodes), free(p->roots), free(p->anchors), free(p->runs);
	for (size_t i = 0; i * CHUNK < p->nconts; i++)
		free(p->chunks[i]);
	free(p->chunks);
	free(p->bigs);
	free(p->nums);
	hm_strtab_free(&p->strs);
	free(p);
}

hm_pkv hm_pk_root(const hm_pk *p)
{
	return p->root;
}

enum hm_pk_type hm_pk_type(hm_pkv v)
{
	return (enum hm_pk_type)(v >> 60);
}

int hm_pk_int(const hm_pk *p, hm_pkv v, int64_t *out)
{
	uint64_t x = PAYLOAD(v);
	switch (hm_pk_type(v)) {
	case HM_PK_BOOL: *out = (int64_t)x; return 0;
	case HM_PK_INT: *out = (int64_t)(x << 4) >> 4; return 0; /* sign-extend 60 bits */
	case HM_PK_BIGINT: *out = (int64_t)p->bigs[x >> 1]; return (int)(x & 1);
	default: return -1;
	}
}

int hm_pk_num(const hm_pk *p, hm_pkv v, double *out)
{
	int64_t i;
	if (hm_pk_type(v) == HM_PK_FLOAT) {
		*out = p->nums[PAYLOAD(v)];
		return 0;
	}
	int rc = hm_pk_int(p, v, &i);
	if (rc < 0)
		return -1;
	*out = rc ? (double)(uint64_t)i : (double)i;
	return 0;
}

const char *hm_pk_str(const hm_pk *p, hm_pkv v, size_t *len)
{
	if (hm_pk_type(v) != HM_PK_STR || v == DROPPED)
		return NULL;
	uint32_t id = (uint32_t)PAYLOAD(v);
	*len = p->strs.len[id];
	return p->strs.str[id];
}

const char *hm_pk_str_of(const hm_pk *p, uint32_t id, size_t *len)
{
	*len = p->strs.len[id];
	return p->strs.str[id];
}

uint32_t hm_pk_str_id(hm_pkv v)
{
	return hm_pk_type(v) == HM_PK_STR && v != DROPPED ? (uint32_t)PAYLOAD(v) : UINT32_MAX;
}

size_t hm_pk_len(const hm_pk *p, hm_pkv v)
{
	const cont *c = cont_of(p, v);
	return !c ? 0 : c->n;
}

hm_pkv hm_pk_item(const hm_pk *p, hm_pkv v, size_t i)
{
	const cont *c = cont_of(p, v);
	if (!c->run)
		return c->items[i];
	struct run *k = &p->runs[(uintptr_t)c->items]; /* read in order: going on costs one step */
	if (k->i > i)
		k->i = 0, k->v = k->first;
	for (; k->i < i; k->i++)
		k->v = hm_pk_record_next(p, k->v);
	return k->v;
}

hm_pkv hm_pk_key(const hm_pk *p, hm_pkv v, size_t i)
{
	return cont_of(p, v)->keys[i];
}

hm_pkv hm_pk_value(const hm_pk *p, hm_pkv v, size_t i)
{
	return cont_of(p, v)->items[i];
}

/* A lookup that does not add: the table is the pickle's (read-only once loaded). */
uint32_t hm_pk_atom(const hm_pk *p, const char *key)
{
	size_t n = strlen(key);
	for (size_t i = 0; i < p->strs.n; i++)
		if (p->strs.len[i] == n && memcmp(p->strs.str[i], key, n) == 0)
			return (uint32_t)i;
	return UINT32_MAX;
}

hm_pkv hm_pk_get(const hm_pk *p, hm_pkv dict, uint32_t atom)
{
	if (hm_pk_type(dict) != HM_PK_DICT || atom == UINT32_MAX)
		return HM_PK_ABSENT;
	const cont *c = cont_of(p, dict);
	hm_pkv want = TAG(HM_PK_STR) | atom;
	if (c->indexed) { /* its hash, found by halving p->idx (few dicts have one) */
		size_t lo = 0, hi = p->nidx, id = PAYLOAD(dict);
		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;
			if (p->idx[mid].node <= id)
				lo = mid;
			else
				hi = mid;
		}
		const uint32_t *index = p->idx[lo].slots;
		size_t mask = index[0];
		for (size_t h = hm_pk_hash(want) & mask;; h = (h + 1) & mask) {
			uint32_t slot = index[1 + h];
			++*p->work;
			if (!slot)
				return HM_PK_ABSENT;
			if (c->keys[slot - 1] == want)
				return c->items[slot - 1];
		}
	}
	struct getcache *g = p->gc;
	size_t slot = (atom ^ (size_t)((uintptr_t)c->keys >> 3) * 31) & (GC - 1);
	if (c->n && g->keys[slot] == c->keys && g->atom[slot] == atom) {
		++*p->work;
		return g->at[slot] ? c->items[g->at[slot] - 1] : HM_PK_ABSENT;
	}
	uint32_t at = 0;
	for (uint32_t i = c->n; i-- > 0;) {
		++*p->work;
		if (c->keys[i] == want) {
			at = i + 1;
			break;
		}
	}
	if (c->shared & SH_KEYS)
		g->keys[slot] = c->keys, g->atom[slot] = atom, g->at[slot] = at;
	return at ? c->items[at - 1] : HM_PK_ABSENT;
}

uint64_t hm_pk_work(const hm_pk *p)
{
	return *p->work;
}

uint64_t hm_pk_dropped(const hm_pk *p)
{
	return p->dropped;
}

uint64_t hm_pk_hash(uint64_t x)
{
	static const char here = 0;
	x ^= (uint64_t)(uintptr_t)&here * UINT64_C(0x9e3779b97f4a7c15); /* (PIE and ASLR move it) */
	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

uint64_t hm_pk_same(const hm_pk *p, hm_pkv v)
{
	const cont *c = cont_of(p, v);
	return c->run ? (uint64_t)(uintptr_t)c : (uint64_t)(uintptr_t)c->items;
}

uint32_t hm_pk_node(hm_pkv v)
{
	enum hm_pk_type t = hm_pk_type(v);
	return v != HM_PK_ABSENT && (t == HM_PK_LIST || t == HM_PK_TUPLE || t == HM_PK_DICT) ? (uint32_t)PAYLOAD(v) : UINT32_MAX;
}

uint64_t hm_pk_at(const hm_pk *p, hm_pkv v)
{
	const cont *c = v == HM_PK_ABSENT ? NULL : cont_of(p, v);
	return c ? c->at : 0;
}

size_t hm_pk_containers(const hm_pk *p)
{
	return p->nconts;
}

size_t hm_pk_strings(const hm_pk *p)
{
	return p->strs.n;
}

hm_pkv hm_pk_reduce(hm_pk *p, hm_pkv list, uint64_t token, int fresh)
{
	rd *r = p->rd;
	cont *k = cont_of(p, list);
	if (!r || !k || k->dict)
		return list;
	if (fresh && k->n && !k->run) {
		hm_grow(&p->roots, &p->caproots, p->nroots + k->n, sizeof *p->roots);
		memcpy(p->roots + p->nroots, k->items, k->n * sizeof *k->items);
		p->nroots += k->n;
		r->kept += k->n * sizeof *k->items;
	}
	if (!list_takeable(k)) {
		k->refs |= FROZEN;
		return list;
	}
	hm_pkv v = hm_pk_token_of(token);
	release(r, list, v);
	return v;
}

int hm_pk_charge(hm_pk *p, uint64_t off, uint64_t bytes)
{
	return p->rd ? spend(p->rd, off, bytes) : 0;
}

const unsigned char *hm_pk_record(const hm_pk *p, hm_pkv v, size_t *len)
{
	if (hm_pk_type(v) != HM_PK_RECORD)
		return NULL;
	uint64_t at = PAYLOAD(v);
	const unsigned char *b = p->rblocks[at / RBLOCK] + at % RBLOCK;
	*len = b[0] & 0x7f;
	if (b[0] & 0x80)
		*len |= (size_t)b[1] << 7;
	return b + (b[0] & 0x80 ? 2 : 1);
}

uint64_t hm_pk_token(hm_pkv v)
{
	return hm_pk_type(v) == HM_PK_TOKEN ? PAYLOAD(v) : UINT64_MAX;
}

hm_pkv hm_pk_token_of(uint64_t token)
{
	return TAG(HM_PK_TOKEN) | (token & PAYLOAD(~UINT64_C(0)));
}

uint64_t hm_pk_record_end(const hm_pk *p)
{
	return (uint64_t)p->nrblocks * RBLOCK;
}

hm_pkv hm_pk_record_anchor(const hm_pk *p, hm_pkv v)
{
	uint64_t at = PAYLOAD(v);
	size_t lo = 0, hi = p->nanchors;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (p->anchors[mid] <= at)
			lo = mid;
		else
			hi = mid;
	}
	return TAG(HM_PK_RECORD) | (p->nanchors ? p->anchors[lo] : 0);
}

hm_pkv hm_pk_record_next(const hm_pk *p, hm_pkv v)
{
	size_t len;
	const unsigned char *b = hm_pk_record(p, v, &len);
	uint64_t next = PAYLOAD(v) + (size_t)(b - (p->rblocks[PAYLOAD(v) / RBLOCK] + PAYLOAD(v) % RBLOCK)) + len;
	if (next >= p->rused)
		return HM_PK_ABSENT;
	if (next % RBLOCK == 0 || p->rblocks[next / RBLOCK][next % RBLOCK] == 0)
		next = (next / RBLOCK + 1) * RBLOCK;
	return TAG(HM_PK_RECORD) | next;
}
