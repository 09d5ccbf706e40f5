/* Reading a PyTorch memory snapshot into the store (see snapshot.h; the format by version
 * is in README "Snapshots"). */
#include "snapshot.h"
#include "snaphost.h"
#include "snapseg.h"
#include "unpickle.h"
#include "util.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVICE 65534
#define HOST (MAX_DEVICE + 1) /* the slot of pinned host memory in sx.devs (snaphost.h) */

/* The members of a trace entry that read_device reads (entry, below). */
enum { F_TIME, F_SIZE, F_ADDR, F_STREAM, F_DFREE, NINT, F_ACTION = NINT, F_FRAMES, F_CC, F_UM, NFIELDS };

enum action { A_ALLOC, A_FREE_REQUESTED, A_FREE_COMPLETED, A_SEG_ALLOC, A_SEG_FREE, A_SEG_MAP, A_SEG_UNMAP, A_OOM, A_OTHER };

/* The key names, each looked up once in the pickle's strings. */
#define KEYS(X)                                                                                          \
	X(segments) X(device_traces) X(device) X(address) X(total_size) X(blocks) X(size) X(requested_size) \
	X(state) X(action) X(addr) X(stream) X(time_us) X(frames) X(filename) X(line) X(name)              \
	X(compile_context) X(user_metadata) X(device_free) X(external_annotations) X(stage) X(history) \
	X(real_size) X(segment_pool_id)
#define FIELD(k) uint32_t k;
#define ATOM(n) x->k.n = hm_pk_atom(x->p, #n);

typedef struct keys {
	KEYS(FIELD)
} keys;

/* A u64 -> u32 map (open addressing) for what is met many times through the memo: a frame
 * dict's handle -> its frame id, a frames list's elements (hm_pk_same) -> its stack id,
 * (device, block address) -> block. */
typedef struct umap {
	uint64_t *key;
	uint32_t *val;
	size_t n, cap; /* cap a power of two, or 0 */
	uint64_t probes; /* slots looked at (counted as work) */
} umap;

static uint32_t *um_slot(umap *m, uint64_t key, int add)
{
	if (add && (m->n + 1) * 2 > m->cap) {
		umap g = {.probes = m->probes};
		g.cap = m->cap ? m->cap * 2 : 1024;
		g.key = hm_xcalloc(g.cap, sizeof *g.key);
		g.val = hm_xcalloc(g.cap, sizeof *g.val);
		for (size_t i = 0; i < m->cap; i++)
			if (m->val[i])
				*um_slot(&g, m->key[i], 1) = m->val[i], g.n++;
		free(m->key), free(m->val);
		*m = g;
	}
	if (!m->cap)
		return NULL;
	for (size_t i = hm_pk_hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		m->probes++;
		if (m->val[i] && m->key[i] == key)
			return &m->val[i];
		if (!m->val[i]) {
			if (!add)
				return NULL;
			m->key[i] = key;
			return &m->val[i]; /* the caller stores value + 1 and counts n */
		}
	}
}

/* A live block of the segments as the snapshot ends. Each is a row: the row of the alloc
 * entry that made it when the trace has one (the last entry at its address is an alloc),
 * else a row of its own, allocated before the first entry. */
typedef struct blk {
	int64_t size, requested, stream;
	uint64_t addr, seg; /* its address and its segment's */
	int32_t dev;
	int8_t last;        /* the last entry at its address: 1 alloc, -1 free_completed, 0 none */
	size_t last_i;      /* that entry's index in the device's list */
	hm_pkv frames;      /* its frames (2.1+), or its history's newest entry's (1.13, 2.0) */
} blk;

typedef struct dev {
	int seen, has_segs;
	size_t blk0, nblk;  /* its blocks: x->by_dev[blk0, blk0 + nblk) */
	int64_t end_live;   /* requested bytes of the active blocks at the end */
	int64_t reserved;   /* total_size of its segments at the end */
} dev;

typedef struct sx {
	hm_trace *t;
	hm_snap *s;
	const hm_pk *p;
	keys k;
	const char *path;
	char *err;
	size_t errsz;
	umap frame_of, stack_of, block_at;
	blk *blks;
	size_t nblks, capblks;
	dev devs[HOST + 1];
	int max_dev;
	uint64_t traffic;
	uint32_t thread;
	size_t cap_stack_frame;
	uint32_t *tmp; /* frame ids of the stack being built */
	size_t captmp;
	int legacy;    /* 1.13: a list of segments, no trace */
	hm_segop *ops; /* the device's entries for the replay of its segments (snapseg.h) */
	size_t nops, capops;
	uint32_t *by_dev; /* indices of blks, by device (index_blocks) */
	uint8_t *reached; /* per container of the pickle: read already as an entry, list or block */
	uint8_t *rec_reached; /* per record (by its position / 4): read already as an entry */
	hm_strtab priv;   /* the frames lists of entries, as their elements' handles (entry_hook) */
	umap priv_of;     /* a frames list's elements (hm_pk_same) -> its id in priv + 1 */
	uint32_t *pub_of; /* by id in priv: its stack id + 1, once read */
	size_t cap_pub;
	uint8_t *field_of; /* by string id of the pickle: which entry key it is (entry_hook), + 1 */
	size_t cap_field;
	hm_pkv *kv;       /* an entry dict's pairs, copied (entry_of_dict) */
	size_t capkv;
	unsigned char rec[128]; /* the record entry_hook made last */
	int64_t enc[NINT + 1];  /* the values of the records made (encode): the integers, the offset */
	uint64_t nrec;
	int64_t dec[NINT + 1];  /* the same while they are read (decode), and the record that follows */
	hm_pkv dec_next;
	uint64_t work;    /* steps of the loops over blocks, segments and annotations (debug) */
} sx;

static int vfail(sx *x, uint64_t off, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
static int vfail(sx *x, uint64_t off, const char *fmt, va_list ap)
{
	int n = snprintf(x->err, x->errsz, "%s:%llu: memory snapshot: ", x->path, (unsigned long long)off);
	if (n >= 0 && (size_t)n < x->errsz)
		vsnprintf(x->err + n, x->errsz - (size_t)n, fmt, ap);
	return -1;
}

/* A message at the byte offset of the opcode that made the value at (fail), or at off. */
static int fail(sx *x, hm_pkv at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(sx *x, hm_pkv at, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(x, hm_pk_at(x->p, at), fmt, ap);
	va_end(ap);
	return -1;
}

static int fail_at(sx *x, uint64_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_at(sx *x, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(x, off, fmt, ap);
	va_end(ap);
	return -1;
}

/* An integer member: 0 with *out set, 1 when absent (or None), -1 (message) otherwise. A
 * value above INT64_MAX is taken as the int64 it wraps to: PyTorch writes -1 that way. */
static int get_int(sx *x, hm_pkv d, uint32_t key, const char *what, int64_t *out)
{
	hm_pkv v = hm_pk_get(x->p, d, key);
	if (v == HM_PK_ABSENT || hm_pk_type(v) == HM_PK_NONE)
		return 1;
	if (hm_pk_int(x->p, v, out) < 0)
		return fail(x, d, "'%s' is not an integer", what);
	return 0;
}

static int get_size(sx *x, hm_pkv d, uint32_t key, const char *what, int64_t *out)
{
	int rc = get_int(x, d, key, what, out);
	if (rc == 0 && (*out < 0 || *out > HM_STORE_MEM_LIMIT))
		return fail(x, d, "'%s' of %lld bytes is out of range (0 to 2^60)", what, (long long)*out);
	return rc;
}

static int get_dev(sx *x, hm_pkv d, int64_t dflt, int64_t *out)
{
	int rc = get_int(x, d, x->k.device, "device", out);
	if (rc == 1)
		*out = dflt, rc = 0;
	if (rc == 0 && (*out < 0 || *out > MAX_DEVICE))
		return fail(x, d, "device %lld is out of range (0 to %d)", (long long)*out, MAX_DEVICE);
	return rc;
}

/* A slot of sx.devs as the store names its series: CUDA device d, or pinned host memory. */
static int32_t dev_type_of(int64_t d)
{
	return d == HOST ? 0 : 1;
}

static int32_t dev_id_of(int64_t d)
{
	return d == HOST ? HM_SNAPHOST_ID : (int32_t)d;
}

/* A string member interned into the trace's names, or UINT32_MAX when absent. */
static uint32_t get_name(sx *x, hm_pkv d, uint32_t key)
{
	size_t n;
	const char *s = hm_pk_str(x->p, hm_pk_get(x->p, d, key), &n);
	return s ? hm_store_name(x->t, s, n) : UINT32_MAX;
}

/* A container hmem reads once per place it is found (a trace list, an entry, a segment, a
 * block list, a block, an annotation) is refused when found a second time: PyTorch's
 * snapshots share only frame lists and frame dicts through the memo (each read once here,
 * through frame_of and stack_of), so a shared entry is a hand-made multiplication, one list
 * of 255 bytes made the trace of 65,535 devices. */
static int once(sx *x, hm_pkv v, const char *what)
{
	uint32_t i = hm_pk_node(v);
	if (i == UINT32_MAX)
		return 0;
	if (x->reached[i])
		return fail(x, v, "%s made here is reached a second time through the memo (a memory snapshot shares only "
				  "frames; each entry, trace list, segment and block is its own)", what);
	x->reached[i] = 1;
	return 0;
}

static const char *get_str(sx *x, hm_pkv d, uint32_t key)
{
	size_t n;
	const char *s = hm_pk_str(x->p, hm_pk_get(x->p, d, key), &n);
	return s ? s : "";
}

int hm_snapshot_frame_shown(const char *file, const char *name)
{
	static const char *const funcs[] = {"unwind::unwind", "CapturedTraceback::gather", "gather_with_cpp", "_start",
					    "__libc_start_main", "PyEval_", "PyObject_", "PyFunction_"};
	static const char *const files[] = {"core/boxing", "/Register", "/Redispatch", "pythonrun.c", "Modules/main.c",
					    "Objects/call.c", "Objects/methodobject.c", "pycore_ceval.h", "ceval.c",
					    "cpython/abstract.h"};
	for (size_t i = 0; i < sizeof funcs / sizeof *funcs; i++)
		if (strstr(name, funcs[i]))
			return 0;
	for (size_t i = 0; i < sizeof files / sizeof *files; i++)
		if (strstr(file, files[i]))
			return 0;
	return 1;
}

/* A frame dict's id in s->frames, UINT32_MAX when memory_viz would not show it, or
 * UINT32_MAX - 1 on error; a dict shared through the memo is read once (the map holds
 * id + 2, or 1 for a frame left out). */
static uint32_t frame_id(sx *x, hm_pkv f)
{
	uint32_t *slot = um_slot(&x->frame_of, f, 1);
	if (*slot)
		return *slot == 1 ? UINT32_MAX : *slot - 2;
	x->frame_of.n++;
	if (hm_pk_type(f) != HM_PK_DICT) {
		fail(x, f, "a frame is not a dict");
		return UINT32_MAX - 1;
	}
	const char *file = get_str(x, f, x->k.filename), *name = get_str(x, f, x->k.name);
	uint32_t id = UINT32_MAX;
	if (hm_snapshot_frame_shown(file, name)) {
		hm_frame fr = {hm_store_name(x->t, file, strlen(file)), hm_store_name(x->t, name, strlen(name)), 0};
		if (get_int(x, f, x->k.line, "line", &fr.line) < 0)
			return UINT32_MAX - 1;
		id = hm_strtab_intern(&x->s->frames, (const char *)&fr, sizeof fr);
	}
	*slot = id == UINT32_MAX ? 1 : id + 2;
	return id;
}

/* Whether directory [s, e) of a path starts with prefix (lowercase), ignoring case:
 * Windows writes Lib and Python310. */
static int dir_starts(const char *s, const char *e, const char *prefix)
{
	size_t n = strlen(prefix);
	if ((size_t)(e - s) < n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (tolower((unsigned char)s[i]) != prefix[i])
			return 0;
	return 1;
}

static int dir_is(const char *s, const char *e, const char *name)
{
	return (size_t)(e - s) == strlen(name) && dir_starts(s, e, name);
}

/* Whether a Python file is the user's: a .py file, not PyTorch's (in a torch directory),
 * not an installed package's (site-packages, dist-packages), not code PyTorch generated (in
 * a torchinductor_* directory; <eval_with_key>, <frozen ...> are no .py files), not the
 * interpreter's own library (lib/python3.x, or Lib in a Windows Python* or cpython*
 * directory). Both / and \ separate directories: a snapshot taken on Windows names
 * D:\...\torch\functional.py. */
static int user_file(const char *f)
{
	size_t n = strlen(f);
	if (n <= 3 || strcmp(f + n - 3, ".py") || f[0] == '<')
		return 0;
	const char *up = f, *up_end = f; /* the directory above */
	for (const char *s = f, *e; *(e = s + strcspn(s, "/\\")); up = s, up_end = e, s = e + 1) {
		const char *next = e + 1, *next_end = next + strcspn(next, "/\\");
		if (dir_is(s, e, "torch") || dir_is(s, e, "site-packages") || dir_is(s, e, "dist-packages") ||
		    dir_starts(s, e, "torchinductor_"))
			return 0;
		if (dir_is(s, e, "lib") && ((*next_end && dir_starts(next, next_end, "python3")) || dir_starts(up, up_end, "python") ||
					     dir_starts(up, up_end, "cpython")))
			return 0;
	}
	return 1;
}

/* The name in a C++ frame "...::NAME::apply(" (an autograd node) or "at::_ops::NAME::call("
 * (an op), as [*s, *s + return value), or 0. */
static size_t cxx_name(const char *fn, const char *prefix, const char *suffix, const char **s)
{
	const char *p = strstr(fn, suffix);
	if (!p || strncmp(fn, prefix, strlen(prefix)))
		return 0;
	const char *b = p;
	while (b > fn && b[-1] != ':')
		b--;
	*s = b;
	return (size_t)(p - b);
}

/* Who made an allocation whose stack has no user frame, from its C++ frames (innermost
 * first): on the autograd engine's thread, "backward: NODE > OP" (the node's apply and the
 * outermost op it called, at::_ops::OP::call), "backward: NODE" or "backward: OP"; elsewhere
 * "op: OP" (the outermost op). 0 when the stack names neither. */
static int cxx_who(const hm_trace *t, const hm_snap *sn, const uint32_t *ids, size_t n, char *b, size_t cap)
{
	const char *node = NULL, *op = NULL, *s;
	size_t nnode = 0, nop = 0, len;
	int engine = 0;
	for (size_t i = 0; i < n; i++) {
		const char *fn = t->names.str[hm_snap_frame(sn, ids[i]).name];
		if (strstr(fn, "autograd::Engine::evaluate_function") || strstr(fn, "autograd::Engine::thread_main"))
			engine = 1;
		if (node)
			continue;
		if ((len = cxx_name(fn, "torch::autograd::", "::apply(", &s)))
			node = s, nnode = len;
		else if ((len = cxx_name(fn, "at::_ops::", "::call(", &s)))
			op = s, nop = len; /* the outermost below the node */
	}
	if (node || engine) {
		if (node && op)
			return snprintf(b, cap, "backward: %.*s > %.*s", (int)nnode, node, (int)nop, op);
		if (node || op)
			return snprintf(b, cap, "backward: %.*s", (int)(node ? nnode : nop), node ? node : op);
		return snprintf(b, cap, "backward");
	}
	return op ? snprintf(b, cap, "op: %.*s", (int)nop, op) : 0;
}

/* The innermost user frame of a stack as "file(line): name" (as Kineto names a
 * python_function), else what its C++ frames say (cxx_who), interned in the trace's names;
 * UINT32_MAX when there is neither. */
static uint32_t user_frame(sx *x, const uint32_t *ids, size_t n)
{
	hm_trace *t = x->t;
	for (size_t i = 0; i < n; i++) {
		hm_frame f = hm_snap_frame(x->s, ids[i]);
		if (!user_file(t->names.str[f.file]))
			continue;
		size_t len = t->names.len[f.file] + t->names.len[f.name] + 32;
		char *b = hm_xrealloc(NULL, len);
		int k = snprintf(b, len, "%s(%lld): %s", t->names.str[f.file], (long long)f.line, t->names.str[f.name]);
		uint32_t id = hm_store_name(t, b, (size_t)k);
		free(b);
		return id;
	}
	char b[256];
	int k = cxx_who(t, x->s, ids, n, b, sizeof b);
	return k > 0 ? hm_store_name(t, b, (size_t)k < sizeof b ? (size_t)k : sizeof b - 1) : UINT32_MAX;
}

/* The stack of the frame dicts frames[0, n) (its element i from at(i)), interned;
 * UINT32_MAX - 1 on error. */
static uint32_t stack_of(sx *x, hm_pkv list, const unsigned char *frames, size_t n)
{
	size_t k = 0;
	hm_grow(&x->tmp, &x->captmp, n + 1, sizeof *x->tmp);
	for (size_t i = 0; i < n; i++) {
		hm_pkv h;
		if (frames)
			memcpy(&h, frames + i * sizeof h, sizeof h);
		else
			h = hm_pk_item(x->p, list, i);
		uint32_t f = frame_id(x, h);
		if (f == UINT32_MAX - 1)
			return UINT32_MAX - 1;
		if (f != UINT32_MAX)
			x->tmp[k++] = f;
	}
	hm_snap *sn = x->s;
	size_t known = sn->stacks.n;
	uint32_t id = hm_strtab_intern(&sn->stacks, (const char *)x->tmp, k * sizeof *x->tmp);
	if (sn->stacks.n > known) {
		hm_grow(&sn->stack_frame, &x->cap_stack_frame, (size_t)id + 1, sizeof *sn->stack_frame);
		sn->stack_frame[id] = user_frame(x, x->tmp, k);
	}
	return id;
}

/* The stack of a frames list (interned), or UINT32_MAX when there is none; -1 on error
 * (through *bad). A list the reader took while it read the pickle (a token, entry_hook)
 * is found by its elements, kept in priv. */
static uint32_t stack_id(sx *x, hm_pkv list, int *bad)
{
	if (list == HM_PK_ABSENT || hm_pk_type(list) == HM_PK_NONE)
		return UINT32_MAX;
	uint64_t tok = hm_pk_token(list);
	uint32_t *slot, id;
	if (tok != UINT64_MAX) {
		slot = &x->pub_of[tok];
		if (*slot)
			return *slot - 1;
		id = stack_of(x, HM_PK_ABSENT, (const unsigned char *)x->priv.str[tok], x->priv.len[tok] / sizeof(hm_pkv));
		slot = &x->pub_of[tok];
	} else {
		if (hm_pk_type(list) != HM_PK_LIST && hm_pk_type(list) != HM_PK_TUPLE) {
			*bad = fail(x, list, "'frames' is not a list");
			return UINT32_MAX;
		}
		slot = um_slot(&x->stack_of, hm_pk_same(x->p, list), 1); /* once per distinct list */
		if (*slot)
			return *slot - 1;
		x->stack_of.n++;
		id = stack_of(x, list, NULL, hm_pk_len(x->p, list));
		slot = um_slot(&x->stack_of, hm_pk_same(x->p, list), 1);
	}
	if (id == UINT32_MAX - 1) {
		*bad = -1;
		return UINT32_MAX;
	}
	*slot = id + 1;
	return id;
}

static int is_active(const char *state)
{
	return !strcmp(state, "active_allocated") || !strcmp(state, "active_pending_free") ||
	       !strcmp(state, "active_awaiting_free");
}

/* What a block asked for when the snapshot has no requested_size (1.13): the real_size of
 * the first entry of its history, the newest (1.13 lists the chain from its head). 0 with
 * *req set, 1 when there is none, -1 (message) when it is not an integer. */
static int history_size(sx *x, hm_pkv b, int64_t *req)
{
	hm_pkv h = hm_pk_get(x->p, b, x->k.history);
	if (h == HM_PK_ABSENT || hm_pk_type(h) != HM_PK_LIST || !hm_pk_len(x->p, h) ||
	    hm_pk_type(hm_pk_item(x->p, h, 0)) != HM_PK_DICT)
		return 1;
	return get_size(x, hm_pk_item(x->p, h, 0), x->k.real_size, "real_size", req);
}

/* The frames of a block: its own (2.1+), else its history's newest entry's (1.13, 2.0);
 * HM_PK_ABSENT when none. */
static hm_pkv block_frames(sx *x, hm_pkv b)
{
	hm_pkv own = hm_pk_get(x->p, b, x->k.frames);
	if (own != HM_PK_ABSENT)
		return own;
	hm_pkv h = hm_pk_get(x->p, b, x->k.history);
	return h == HM_PK_ABSENT || hm_pk_type(h) != HM_PK_LIST || !hm_pk_len(x->p, h) ||
			       hm_pk_type(hm_pk_item(x->p, h, 0)) != HM_PK_DICT
		       ? HM_PK_ABSENT
		       : hm_pk_get(x->p, hm_pk_item(x->p, h, 0), x->k.frames);
}

/* Each device's blocks as a range of by_dev (a counting sort by device, in file order), so
 * that what is done per device walks its own blocks, not all of them: 8,000 devices of
 * one block each are 8,000 steps, not 64 million. */
static void index_blocks(sx *x)
{
	for (size_t d = 0; d <= HOST; d++)
		x->devs[d].nblk = 0;
	for (size_t i = 0; i < x->nblks; i++)
		x->devs[x->blks[i].dev].nblk++;
	size_t at = 0;
	for (size_t d = 0; d <= HOST; d++)
		x->devs[d].blk0 = at, at += x->devs[d].nblk, x->devs[d].nblk = 0;
	x->by_dev = hm_xrealloc(x->by_dev, (x->nblks + 1) * sizeof *x->by_dev);
	for (size_t i = 0; i < x->nblks; i++) {
		dev *dv = &x->devs[x->blks[i].dev];
		x->by_dev[dv->blk0 + dv->nblk++] = (uint32_t)i;
	}
	x->work += x->nblks;
}

/* The segments as the snapshot ends: per device the live requested bytes and the reserved
 * bytes, each segment's blocks summed by state, and each block by address (for the block
 * size of the allocation that made it). Blocks without an address (before 2.1) follow
 * each other from the segment's address. */
static int read_segments(sx *x, hm_pkv segs, int host)
{
	if (segs == HM_PK_ABSENT)
		return 0;
	if (hm_pk_type(segs) != HM_PK_LIST)
		return fail(x, segs, host ? "'host_segments' is not a list" : "'segments' is not a list");
	if (once(x, segs, host ? "the list 'host_segments'" : "the list of segments"))
		return -1;
	hm_snap *s = x->s;
	for (size_t i = 0; i < hm_pk_len(x->p, segs); i++) {
		hm_pkv g = hm_pk_item(x->p, segs, i), blocks;
		if (hm_pk_type(g) != HM_PK_DICT)
			return fail(x, segs, "segment %zu is not a dict", i);
		if (once(x, g, "the segment"))
			return -1;
		int64_t d, a = 0, total = 0, stream = HM_NONE;
		if ((host ? (d = HOST, 0) : get_dev(x, g, 0, &d)) < 0 || get_int(x, g, x->k.address, "address", &a) < 0 ||
		    get_size(x, g, x->k.total_size, "total_size", &total) < 0 || get_int(x, g, x->k.stream, "stream", &stream) < 0)
			return -1;
		hm_grow(&s->segs, &s->capsegs, s->nsegs + 1, sizeof *s->segs);
		hm_snapseg *sg = &s->segs[s->nsegs++];
		x->t->events++, x->t->count[HM_EV_OTHER]++;
		memset(sg, 0, sizeof *sg); /* padding too: a partial stores the records as they are */
		sg->dev = dev_id_of(d), sg->addr = (uint64_t)a, sg->total = total, sg->sized = 1;
		sg->stream = stream, hm_snapseg_pool(x->p, hm_pk_get(x->p, g, x->k.segment_pool_id), sg->pool); /* segment lives (issue 27) */
		dev *dv = &x->devs[d];
		dv->has_segs = dv->seen = 1;
		if (!host && d > x->max_dev)
			x->max_dev = (int)d;
		if ((dv->reserved += total) > HM_STORE_MEM_LIMIT)
			return fail(x, g, "the segments add up to more than 2^60 bytes");
		blocks = hm_pk_get(x->p, g, x->k.blocks);
		if (blocks == HM_PK_ABSENT)
			continue;
		if (hm_pk_type(blocks) != HM_PK_LIST)
			return fail(x, g, "'blocks' is not a list");
		if (once(x, blocks, "the list of blocks"))
			return -1;
		uint64_t at = (uint64_t)a;
		for (size_t j = 0; j < hm_pk_len(x->p, blocks); j++) {
			hm_pkv b = hm_pk_item(x->p, blocks, j);
			int64_t size = 0, req, ba;
			if (hm_pk_type(b) != HM_PK_DICT)
				return fail(x, blocks, "block %zu is not a dict", j);
			if (once(x, b, "the block"))
				return -1;
			if (get_size(x, b, x->k.size, "size", &size) < 0)
				return -1;
			int rc = get_size(x, b, x->k.requested_size, "requested_size", &req);
			if (rc == 1)
				rc = history_size(x, b, &req);
			if (rc < 0)
				return -1;
			int known = rc == 0;
			if (rc)
				req = size;
			rc = get_int(x, b, x->k.address, "address", &ba);
			if (rc < 0)
				return -1;
			if (rc == 0)
				at = (uint64_t)ba;
			const char *state = get_str(x, b, x->k.state);
			sg->blocks++;
			if (is_active(state)) {
				sg->sized &= known;
				if (!strcmp(state, "active_allocated"))
					sg->allocated += size, sg->allocated_requested += req;
				else
					sg->pending += size;
				sg->requested += req;
				if ((dv->end_live += req) > HM_STORE_MEM_LIMIT)
					return fail(x, b, "the blocks add up to more than 2^60 bytes");
				if (at >> 48 == 0) {
					hm_grow(&x->blks, &x->capblks, x->nblks + 1, sizeof *x->blks);
					x->blks[x->nblks] = (blk){size, req, stream, at, (uint64_t)a, (int32_t)d, 0, 0, block_frames(x, b)};
					uint32_t *slot = um_slot(&x->block_at, at | (uint64_t)d << 48, 1);
					if (!*slot)
						x->block_at.n++;
					*slot = (uint32_t)++x->nblks;
				}
			} else {
				sg->inactive += size;
				if (size > sg->largest_free)
					sg->largest_free = size;
			}
			at += (uint64_t)size;
		}
	}
	index_blocks(x);
	hm_snapseg_sort(s);
	return 0;
}

static enum action action_of(const char *a)
{
	static const char *const names[] = {"alloc", "free_requested", "free_completed", "segment_alloc",
					    "segment_free", "segment_map", "segment_unmap", "oom"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strcmp(a, names[i]))
			return (enum action)i;
	return A_OTHER;
}

/* The time of an entry in ns (rc: get_int's for its time_us, us; off: where it was made):
 * time_us when present, else a clock of its own (1 us per entry after the last time seen),
 * so order is kept and the timeline stays readable; the entries without one are counted in
 * *untimed when it is not NULL. */
static int clock_of(sx *x, uint64_t off, int rc, int64_t us, int64_t *clock, uint64_t *untimed)
{
	if (rc < 0)
		return -1;
	if (rc == 0) {
		if (us > HM_STORE_TS_LIMIT / 1000 || us < -HM_STORE_TS_LIMIT / 1000)
			return fail_at(x, off, "time_us %lld is out of range (times within +-2^62 ns)", (long long)us);
		*clock = us * 1000;
	} else if ((*clock += 1000) >= HM_STORE_TS_LIMIT) {
		/* Checked at each step: 2^62 ns of untimed entries are out of reach, but one entry
		 * timed at the limit and one untimed after it are not, and a time past 2^62 would
		 * wrap a lifetime. */
		return fail_at(x, off, "an entry without 'time_us', 1 us after one at %lld ns, is past the clock's range "
				       "(times within +-2^62 ns)", (long long)(*clock - 1000));
	} else if (untimed) {
		++*untimed;
	}
	return 0;
}

static int entry_ts(sx *x, hm_pkv e, int64_t *clock, uint64_t *untimed)
{
	int64_t us = 0;
	int rc = get_int(x, e, x->k.time_us, "time_us", &us);
	return clock_of(x, hm_pk_at(x->p, e), rc, us, clock, untimed);
}

/* What read_device reads of a trace entry. PyTorch's snapshots hold millions of entries:
 * each is made into a record of a few bytes (entry_hook) as soon as its dict is read, so
 * that the pickle's tree never holds them whole; a dict the reader could not take (one
 * reached through the memo) is read the same way when it is met (entry_of_dict). */
static const char *const entry_keys[NFIELDS] = {"time_us", "size", "addr", "stream", "device_free", "action", "frames",
						 "compile_context", "user_metadata"};

typedef struct entry {
	uint64_t at;        /* the byte offset of the opcode that made the dict */
	uint8_t action;     /* enum action */
	uint8_t st[NINT];   /* per integer member: 0 absent or None, 1 an integer (v), 2 not an integer */
	int64_t v[NINT];
	uint8_t frames;     /* 0 absent or None, 1 a list (stack: its id in priv), 2 not a list */
	uint32_t stack;
	uint64_t frames_at; /* frames 2: where its value was made */
	uint32_t cc, um;    /* string ids of the pickle; UINT32_MAX: absent, or not a string */
} entry;

/* An integer member as get_int reads it (0 with *out set, 1 absent or None, -1 with the
 * message), from the entry. */
static int entry_int(sx *x, const entry *e, int f, int64_t *out)
{
	if (e->st[f] == 2)
		return fail_at(x, e->at, "'%s' is not an integer", entry_keys[f]);
	if (e->st[f] == 1)
		*out = e->v[f];
	return e->st[f] == 1 ? 0 : 1;
}

static int entry_size(sx *x, const entry *e, int64_t *out)
{
	int rc = entry_int(x, e, F_SIZE, out);
	if (rc == 0 && (*out < 0 || *out > HM_STORE_MEM_LIMIT))
		return fail_at(x, e->at, "'size' of %lld bytes is out of range (0 to 2^60)", (long long)*out);
	return rc;
}

/* Which entry key the pickle's string id is (NFIELDS: none), found once per string. */
static int field_of(sx *x, const hm_pk *p, hm_pkv key)
{
	uint32_t id = hm_pk_str_id(key);
	if (id == UINT32_MAX)
		return NFIELDS;
	if (id >= x->cap_field) {
		size_t old = x->cap_field;
		hm_grow(&x->field_of, &x->cap_field, (size_t)id + 1, 1);
		memset(x->field_of + old, 0, x->cap_field - old);
	}
	if (!x->field_of[id]) {
		size_t n;
		const char *s = hm_pk_str(p, key, &n);
		int f = 0;
		while (f < NFIELDS && strcmp(s, entry_keys[f]))
			f++;
		x->field_of[id] = (uint8_t)(f + 1);
	}
	return x->field_of[id] - 1;
}

/* The frames list of an entry as its elements' handles in priv: its id there, and whether
 * it is new. The list never changes after (hm_pk_reduce), and is taken when nothing else
 * reaches it. -1 when the handles pass the pickle's bound. */
static int priv_stack(sx *x, hm_pk *p, uint64_t off, hm_pkv list, uint32_t *id)
{
	uint32_t *slot = um_slot(&x->priv_of, hm_pk_same(p, list), 1); /* the same elements: found once */
	if (*slot) {
		*id = *slot - 1;
		hm_pk_reduce(p, list, *id, 0);
		return 0;
	}
	x->priv_of.n++;
	size_t n = hm_pk_len(p, list);
	hm_grow(&x->kv, &x->capkv, n + 1, sizeof *x->kv);
	for (size_t i = 0; i < n; i++)
		x->kv[i] = hm_pk_item(p, list, i);
	size_t known = x->priv.n;
	*id = hm_strtab_intern(&x->priv, (const char *)x->kv, n * sizeof *x->kv);
	int fresh = x->priv.n > known;
	if (fresh) {
		if (hm_pk_charge(p, off, n * sizeof *x->kv + 16) < 0)
			return -1;
		size_t old = x->cap_pub;
		hm_grow(&x->pub_of, &x->cap_pub, x->priv.n, sizeof *x->pub_of);
		memset(x->pub_of + old, 0, (x->cap_pub - old) * sizeof *x->pub_of);
	}
	*um_slot(&x->priv_of, hm_pk_same(p, list), 1) = *id + 1;
	hm_pk_reduce(p, list, *id, fresh);
	return 0;
}

/* An entry from its pairs kv[0, 2n) (the last of a key wins, as in Python); -1 on error. A
 * frames list is read into priv (take: taken from the pickle when it can be). */
static int entry_of_pairs(sx *x, hm_pk *p, uint64_t at, const hm_pkv *kv, size_t n, entry *e)
{
	*e = (entry){.at = at, .action = A_OTHER, .cc = UINT32_MAX, .um = UINT32_MAX};
	hm_pkv fr = HM_PK_ABSENT;
	for (size_t i = 0; i < n; i++) {
		int f = field_of(x, p, kv[2 * i]);
		hm_pkv v = kv[2 * i + 1];
		size_t len;
		const char *str;
		if (f < NINT) {
			e->st[f] = hm_pk_type(v) == HM_PK_NONE ? 0 : hm_pk_int(p, v, &e->v[f]) < 0 ? 2 : 1;
		} else if (f == F_ACTION) {
			str = hm_pk_str(p, v, &len);
			e->action = (uint8_t)action_of(str ? str : "");
		} else if (f == F_FRAMES) {
			fr = v;
		} else if (f == F_CC || f == F_UM) {
			*(f == F_CC ? &e->cc : &e->um) = hm_pk_str_id(v);
		}
	}
	enum hm_pk_type t = hm_pk_type(fr);
	if (fr == HM_PK_ABSENT || t == HM_PK_NONE) {
		e->frames = 0;
	} else if (t == HM_PK_TOKEN) {
		e->frames = 1, e->stack = (uint32_t)hm_pk_token(fr);
	} else if (t == HM_PK_LIST || t == HM_PK_TUPLE) {
		e->frames = 1;
		if (priv_stack(x, p, at, fr, &e->stack) < 0)
			return -1;
	} else {
		e->frames = 2, e->frames_at = hm_pk_at(p, fr);
	}
	return 0;
}

static void put_varint(unsigned char **b, uint64_t v)
{
	while (v >= 0x80)
		*(*b)++ = (unsigned char)(v | 0x80), v >>= 7;
	*(*b)++ = (unsigned char)v;
}

static uint64_t get_varint(const unsigned char **b)
{
	uint64_t v = 0;
	for (int s = 0;; s += 7) {
		unsigned c = *(*b)++;
		v |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80))
			return v;
	}
}

/* Signed integers as varints of their zigzag. */
#define ZIG(v) (((uint64_t)(v) << 1) ^ (uint64_t)((v) >> 63))
#define UNZIG(u) ((int64_t)((u) >> 1) ^ -(int64_t)((u) & 1))

/* Every RECORD_ALONE-th record stands alone: one read out of order starts there
 * (hm_pk_record_anchor) and takes at most that many steps. */
#define RECORD_ALONE 64

/* The record of an entry (at most 3 + 9 * 10 bytes): a byte of action and frames state, two
 * of the integers' states (and whether it stands alone), then varints: the offset and each
 * integer present as the difference from the last record's (last: those values, updated;
 * zeros for a record that stands alone, alone), the stack, the strings. Entries follow
 * each other in the file, so the differences are small: about 15 bytes an entry. */
static size_t encode(const entry *e, unsigned char *b0, int64_t *last, int alone)
{
	unsigned char *b = b0;
	*b++ = (unsigned char)(e->action | e->frames << 4 | (e->cc != UINT32_MAX) << 6 | (e->um != UINT32_MAX) << 7);
	unsigned st = (unsigned)alone << 10;
	for (int f = 0; f < NINT; f++)
		st |= (unsigned)e->st[f] << (2 * f);
	*b++ = (unsigned char)st, *b++ = (unsigned char)(st >> 8);
	if (alone)
		memset(last, 0, (NINT + 1) * sizeof *last);
	put_varint(&b, ZIG((int64_t)(e->at - (uint64_t)last[NINT])));
	last[NINT] = (int64_t)e->at;
	for (int f = 0; f < NINT; f++)
		if (e->st[f] == 1) {
			put_varint(&b, ZIG((int64_t)((uint64_t)e->v[f] - (uint64_t)last[f])));
			last[f] = e->v[f];
		}
	if (e->frames)
		put_varint(&b, e->frames == 1 ? e->stack : e->frames_at);
	if (e->cc != UINT32_MAX)
		put_varint(&b, e->cc);
	if (e->um != UINT32_MAX)
		put_varint(&b, e->um);
	return (size_t)(b - b0);
}

static void decode(const unsigned char *b, entry *e, int64_t *last)
{
	unsigned h = *b++, st = b[0] | (unsigned)b[1] << 8;
	b += 2;
	*e = (entry){.action = (uint8_t)(h & 15), .frames = (uint8_t)(h >> 4 & 3), .cc = UINT32_MAX, .um = UINT32_MAX};
	if (st >> 10 & 1)
		memset(last, 0, (NINT + 1) * sizeof *last);
	uint64_t u = get_varint(&b);
	e->at = (uint64_t)last[NINT] + (uint64_t)UNZIG(u);
	last[NINT] = (int64_t)e->at;
	for (int f = 0; f < NINT; f++) {
		e->st[f] = (uint8_t)(st >> (2 * f) & 3);
		if (e->st[f] == 1) {
			u = get_varint(&b);
			e->v[f] = (int64_t)((uint64_t)last[f] + (uint64_t)UNZIG(u));
			last[f] = e->v[f];
		}
	}
	if (e->frames == 1)
		e->stack = (uint32_t)get_varint(&b);
	else if (e->frames == 2)
		e->frames_at = get_varint(&b);
	if (h & 64)
		e->cc = (uint32_t)get_varint(&b);
	if (h & 128)
		e->um = (uint32_t)get_varint(&b);
}

/* The reader's hook (unpickle.h): a dict with an "action" key is a trace entry (PyTorch's
 * other dicts, snapshot, segment, block, frame, annotation, settings, have none), kept as
 * its record. */
static int entry_hook(void *ctx, hm_pk *p, uint64_t off, const hm_pkv *kv, size_t n, const void **rec, size_t *len)
{
	sx *x = ctx;
	size_t i = 0;
	while (i < n && field_of(x, p, kv[2 * i]) != F_ACTION)
		i++;
	if (i == n)
		return 0;
	entry e;
	if (entry_of_pairs(x, p, off, kv, n, &e) < 0)
		return -1;
	int alone = x->nrec++ % RECORD_ALONE == 0;
	*len = encode(&e, x->rec, x->enc, alone);
	*rec = x->rec;
	return alone ? 2 : 1;
}

/* The entry of a record: read after the one before it, else from the last record that
 * stands alone before it. */
static void decode_record(sx *x, hm_pkv v, entry *e)
{
	size_t len;
	if (v != x->dec_next)
		for (hm_pkv w = hm_pk_record_anchor(x->p, v); w != v; w = hm_pk_record_next(x->p, w))
			decode(hm_pk_record(x->p, w, &len), e, x->dec);
	decode(hm_pk_record(x->p, v, &len), e, x->dec);
	x->dec_next = hm_pk_record_next(x->p, v);
}

/* Trace entry i of a device's list: a record, or a dict the reader did not take; -1 when
 * it is neither or is met a second time (once). */
static int get_entry(sx *x, hm_pkv list, size_t i, int64_t d, int first, entry *e)
{
	hm_pkv v = hm_pk_item(x->p, list, i);
	size_t len;
	if (hm_pk_record(x->p, v, &len)) {
		decode_record(x, v, e);
		uint64_t bit = (v & ((UINT64_C(1) << 60) - 1)) / 4;
		if (first && (x->rec_reached[bit / 8] >> (bit % 8) & 1))
			return fail_at(x, e->at, "the trace entry made here is reached a second time through the memo (a memory "
						 "snapshot shares only frames; each entry, trace list, segment and block is its own)");
		if (first)
			x->rec_reached[bit / 8] |= (uint8_t)(1u << (bit % 8));
		return 0;
	}
	if (hm_pk_type(v) != HM_PK_DICT)
		return fail(x, list, "trace entry %zu of device %lld is not a dict", i, (long long)d);
	if (first && once(x, v, "the trace entry"))
		return -1;
	size_t n = hm_pk_len(x->p, v);
	hm_grow(&x->kv, &x->capkv, 2 * n + 1, sizeof *x->kv);
	for (size_t k = 0; k < n; k++)
		x->kv[2 * k] = hm_pk_key(x->p, v, k), x->kv[2 * k + 1] = hm_pk_value(x->p, v, k);
	return entry_of_pairs(x, (hm_pk *)x->p, hm_pk_at(x->p, v), x->kv, n, e);
}

/* An entry's stack (stack_id). */
static uint32_t entry_stack(sx *x, const entry *e, int *bad)
{
	if (e->frames == 2) {
		*bad = fail_at(x, e->frames_at, "'frames' is not a list");
		return UINT32_MAX;
	}
	return e->frames ? stack_id(x, hm_pk_token_of(e->stack), bad) : UINT32_MAX;
}

/* A string of an entry (a string id of the pickle) interned in the trace's names. */
static uint32_t entry_name(sx *x, uint32_t id)
{
	size_t n;
	const char *s = id == UINT32_MAX ? NULL : hm_pk_str_of(x->p, id, &n);
	return s ? hm_store_name(x->t, s, n) : UINT32_MAX;
}

/* The snapshot's columns, room for c rows (store.h hm_snap). */
static void grow_rows(hm_snap *s, size_t c)
{
	s->origin = hm_xrealloc(s->origin, c * sizeof *s->origin);
	s->stack = hm_xrealloc(s->stack, c * sizeof *s->stack);
	s->cap = c;
}

/* The store's columns sized once for the rows to come, from the lengths of the trace lists
 * and block lists (an entry makes at most one memory event, a block at most one row), at
 * most one row per 8 bytes of input: grown by doubling, they would be copied into fresh
 * memory, both copies held for a moment. Room left unused is address space only. */
static void reserve(sx *x, hm_pkv segs, hm_pkv traces, uint64_t input)
{
	uint64_t n = 1024;
	for (size_t i = 0; i < hm_pk_len(x->p, traces) && hm_pk_type(traces) == HM_PK_LIST; i++)
		n += hm_pk_len(x->p, hm_pk_item(x->p, traces, i)) + 1;
	for (size_t i = 0; i < hm_pk_len(x->p, segs) && hm_pk_type(segs) == HM_PK_LIST; i++)
		n += hm_pk_len(x->p, hm_pk_get(x->p, hm_pk_item(x->p, segs, i), x->k.blocks));
	if (n > input / 8 + 1024)
		n = input / 8 + 1024;
	if (n > HM_STORE_RESERVE_MAX)
		n = HM_STORE_RESERVE_MAX;
	hm_store_reserve(x->t, n);
	if (n > x->s->cap)
		grow_rows(x->s, n);
}

/* The snapshot's columns of the memory event just added (store.h hm_snap). */
static void add_snap_row(sx *x, enum hm_snap_origin origin, const blk *b, int64_t stream, uint32_t stack, uint32_t cc,
			 uint32_t um)
{
	hm_snap *s = x->s;
	size_t i = x->t->mem.n - 1;
	if (i >= s->cap)
		grow_rows(s, s->cap ? s->cap * 2 : 1024);
	hm_pack_add(&s->block_bytes, b ? b->size : HM_NONE), hm_pack_add(&s->segment, b ? (int64_t)b->seg : HM_NONE);
	hm_pack_add(&s->stream, stream), hm_pack_add(&s->compile_ctx, cc), hm_pack_add(&s->user_meta, um);
	s->origin[i] = (uint8_t)origin, s->stack[i] = stack;
}

/* An entry that changes the device's segments or live blocks, kept for the replay. */
static void note_op(sx *x, enum action a, uint64_t addr, int64_t size, uint32_t oom, int64_t ts, int64_t stream)
{
	static const int kind[] = {[A_ALLOC] = HM_SEGOP_ALLOC, [A_FREE_REQUESTED] = -1, [A_FREE_COMPLETED] = HM_SEGOP_FREE,
				   [A_SEG_ALLOC] = HM_SEGOP_SEG_NEW, [A_SEG_FREE] = HM_SEGOP_SEG_GONE,
				   [A_SEG_MAP] = HM_SEGOP_SEG_NEW, [A_SEG_UNMAP] = HM_SEGOP_SEG_GONE, [A_OOM] = HM_SEGOP_OOM,
				   [A_OTHER] = -1};
	if (kind[a] < 0)
		return;
	hm_grow(&x->ops, &x->capops, x->nops + 1, sizeof *x->ops);
	x->ops[x->nops++] = (hm_segop){(uint8_t)kind[a], a == A_SEG_MAP || a == A_SEG_UNMAP, addr, size, oom, ts, stream,
				       (uint32_t)x->t->mem.n}; /* ts, stream, mem_at: segment lives (issue 27) */
}

/* The segments at each oom entry of device d (those from index oom0 on), when the
 * device has segments to start from. */
static void replay(sx *x, int64_t d, size_t oom0)
{
	hm_snapseg_lives(x->s, dev_id_of(d), x->ops, x->nops); /* segment lives (issue 27) */
	if (x->s->nooms == oom0 || !x->devs[d].has_segs) {
		for (size_t i = oom0; i < x->s->nooms; i++)
			x->s->ooms[i].segs = (hm_segstate){HM_NONE, 0, 0, 0, 0};
		return;
	}
	const dev *dv = &x->devs[d];
	hm_liveblk *lb = hm_xcalloc(dv->nblk + 1, sizeof *lb);
	for (size_t i = 0; i < dv->nblk; i++) {
		const blk *b = &x->blks[x->by_dev[dv->blk0 + i]];
		lb[i] = (hm_liveblk){b->addr, b->requested};
	}
	x->work += hm_snapseg_replay(x->s, dev_id_of(d), x->ops, x->nops, lb, dv->nblk);
	free(lb);
}

/* The live block of device d at addr, or NULL. */
static blk *block_at(sx *x, int64_t d, uint64_t addr)
{
	uint32_t *slot = addr >> 48 ? NULL : um_slot(&x->block_at, addr | (uint64_t)d << 48, 0);
	return slot ? &x->blks[*slot - 1] : NULL;
}

/* Each live block of device d that no entry allocated (the last entry at its address is
 * not an alloc) becomes an allocation before the first entry, never freed, with its frames,
 * its requested size, its block's size, segment and stream (memory_viz's "initially
 * allocated"); its bytes are part of the totals before the first entry, so the events
 * carry those totals unchanged. Blocks of 0 bytes change nothing and are left out. */
static int block_rows(sx *x, int64_t d, int64_t ts, int64_t allocated, int64_t reserved)
{
	const dev *dv = &x->devs[d];
	for (size_t i = 0; i < dv->nblk; i++) {
		blk *b = &x->blks[x->by_dev[dv->blk0 + i]];
		x->work++;
		if (b->last == 1 || b->requested == 0)
			continue;
		hm_mem_event me = {ts, b->requested, allocated, reserved, HM_NONE, b->addr, 1, dev_type_of(d), dev_id_of(d), x->thread};
		hm_store_add_mem(x->t, &me);
		int bad = 0;
		uint32_t st = stack_id(x, b->frames, &bad);
		if (bad)
			return -1;
		add_snap_row(x, HM_SNAP_BLOCK, b, b->stream, st, UINT32_MAX, UINT32_MAX);
	}
	return 0;
}

/* One device's entries, in two passes: the first sums what changes the totals (so the
 * totals before the first entry are known: the end's, from the segments, minus the
 * changes) and finds which live blocks an entry allocated; the second appends a zero-byte
 * event with those totals, the rows of the other live blocks, and then the allocations,
 * frees and segment events (zero-byte), each with the allocated and reserved bytes after
 * it, so that every event says what the allocator held then. */
static int read_device(sx *x, hm_pkv list, int64_t d)
{
	size_t n = list == HM_PK_ABSENT ? 0 : hm_pk_len(x->p, list);
	int64_t bytes = 0, res = 0, clock = -1000, first = HM_NONE;
	int ooms = 0; /* the replay's entries are kept only for a device with an oom entry */
	size_t oom0 = x->s->nooms;
	x->nops = 0;
	for (int pass = 0; pass < 2; pass++) {
		dev *dv = &x->devs[d];
		int64_t reserved = dv->reserved - res, allocated = dv->end_live - bytes;
		int has_segs = dv->has_segs;
		if (pass == 1 && has_segs) {
			if (allocated < -HM_STORE_MEM_LIMIT || allocated > HM_STORE_MEM_LIMIT)
				return fail(x, list, "device %lld: the totals are out of range", (long long)d);
			int64_t ts = first == HM_NONE ? 0 : first;
			hm_mem_event z = {ts, 0, allocated, reserved, HM_NONE, 0, 0, dev_type_of(d), dev_id_of(d), x->thread};
			hm_store_add_mem(x->t, &z);
			hm_store_saw_ts(x->t, z.ts);
			add_snap_row(x, HM_SNAP_BASELINE, NULL, HM_NONE, UINT32_MAX, UINT32_MAX, UINT32_MAX);
			if (block_rows(x, d, ts, allocated, reserved) < 0)
				return -1;
		}
		clock = -1000;
		for (size_t i = 0; i < n; i++) {
			entry e;
			if (get_entry(x, list, i, d, pass == 0, &e) < 0)
				return -1;
			enum action a = (enum action)e.action;
			int64_t size = 0, addr = 0, stream = HM_NONE, dfree = HM_NONE, us = 0;
			int has_addr, timed = entry_int(x, &e, F_TIME, &us);
			if (clock_of(x, e.at, timed, us, &clock, pass ? &x->s->untimed : NULL) < 0 ||
			    entry_size(x, &e, &size) < 0 || (has_addr = entry_int(x, &e, F_ADDR, &addr)) < 0 ||
			    entry_int(x, &e, F_STREAM, &stream) < 0 || entry_int(x, &e, F_DFREE, &dfree) < 0)
				return -1;
			if (first == HM_NONE)
				first = clock;
			int64_t delta = a == A_SEG_ALLOC || a == A_SEG_MAP ? size : a == A_SEG_FREE || a == A_SEG_UNMAP ? -size : 0;
			int64_t change = a == A_ALLOC ? size : a == A_FREE_COMPLETED ? -size : 0;
			blk *b = change && has_addr == 0 ? block_at(x, d, (uint64_t)addr) : NULL;
			if (pass == 0) {
				res += delta;
				bytes += change;
				ooms |= a == A_OOM;
				if (b)
					b->last = change > 0 ? 1 : -1, b->last_i = i;
				continue;
			}
			reserved += delta, allocated += change;
			x->s->entries++;
			if (ooms || delta) /* segment events always: segment lives (issue 27) */
				note_op(x, a, has_addr == 0 ? (uint64_t)addr : UINT64_MAX, size, (uint32_t)x->s->nooms, clock, stream);
			int bad = 0;
			if (a == A_OOM) {
				hm_snap *s = x->s;
				hm_grow(&s->ooms, &s->capooms, s->nooms + 1, sizeof *s->ooms);
				uint32_t st = entry_stack(x, &e, &bad);
				hm_snapoom *so = &s->ooms[s->nooms++];
				memset(so, 0, sizeof *so); /* padding too: a partial stores the records as they are */
				so->ts = clock, so->bytes = size, so->device_free = dfree, so->dev = dev_id_of(d);
				so->stack = st, so->mem_at = (uint32_t)x->t->mem.n, so->segs = (hm_segstate){HM_NONE, 0, 0, 0, 0};
				hm_mem_event oe = {clock, size, has_segs ? allocated : HM_NONE, has_segs ? reserved : HM_NONE, HM_NONE,
						   0, 0, dev_type_of(d), dev_id_of(d), x->thread};
				hm_store_add_oom(x->t, &oe); /* the same index in t->oom as in s->ooms */
				x->t->oom_events++, x->t->count[HM_EV_OOM]++;
			}
			if (delta && has_segs) { /* the reserved bytes change: a zero-byte event says so */
				hm_mem_event se = {clock, 0, allocated, reserved, HM_NONE, (uint64_t)addr, 0, dev_type_of(d), dev_id_of(d),
						   x->thread};
				hm_store_add_mem(x->t, &se);
				hm_store_saw_ts(x->t, clock);
				add_snap_row(x, HM_SNAP_ENTRY, NULL, stream, UINT32_MAX, UINT32_MAX, UINT32_MAX);
			}
			if (a != A_ALLOC && a != A_FREE_COMPLETED) {
				x->s->skipped++;
				if (a != A_OOM)
					x->t->count[HM_EV_OTHER]++;
				if (bad)
					return -1;
				continue;
			}
			if ((x->traffic += (uint64_t)size) > HM_STORE_MEM_LIMIT)
				return fail_at(x, e.at, "the sizes add up to more than 2^60 bytes");
			hm_mem_event me = {clock, change, has_segs ? allocated : HM_NONE, has_segs ? reserved : HM_NONE, HM_NONE,
					   (uint64_t)addr, has_addr == 0, dev_type_of(d), dev_id_of(d), x->thread};
			hm_store_add_mem(x->t, &me);
			hm_store_saw_ts(x->t, clock);
			x->t->count[HM_EV_MEMORY]++;
			uint32_t st = entry_stack(x, &e, &bad);
			if (bad)
				return -1;
			/* the alloc that made a block still live at the end: its block, segment */
			const blk *made = b && change > 0 && b->last == 1 && b->last_i == i ? b : NULL;
			add_snap_row(x, HM_SNAP_ENTRY, made, stream, st, entry_name(x, e.cc), entry_name(x, e.um));
		}
	}
	replay(x, d, oom0);
	return 0;
}

static int read_traces(sx *x, hm_pkv traces)
{
	size_t n = 0;
	if (traces != HM_PK_ABSENT) {
		if (hm_pk_type(traces) != HM_PK_LIST)
			return fail(x, traces, "'device_traces' is not a list");
		n = hm_pk_len(x->p, traces);
		if (n > MAX_DEVICE + 1)
			return fail(x, traces, "more than %d devices", MAX_DEVICE + 1);
	}
	for (size_t d = 0; d < n; d++) {
		hm_pkv l = hm_pk_item(x->p, traces, d);
		if (hm_pk_type(l) != HM_PK_LIST)
			return fail(x, traces, "the trace of device %zu is not a list", d);
		if (once(x, l, "the trace list"))
			return -1;
		if (hm_pk_len(x->p, l) || x->devs[d].seen) {
			x->devs[d].seen = 2;
			if (read_device(x, l, (int64_t)d) < 0)
				return -1;
		}
	}
	for (int d = 0; d <= x->max_dev; d++)
		if (x->devs[d].seen == 1 && read_device(x, HM_PK_ABSENT, d) < 0)
			return -1;
	return 0;
}

/* Pinned host memory (2026): host_segments and host_traces read as one more device, the
 * slot HOST, with the same pairing, baseline and replay as the GPUs' (snaphost.h). */
static int read_host(sx *x, hm_pkv root)
{
	if (x->legacy)
		return 0;
	const char *why = NULL;
	hm_pkv list;
	if (read_segments(x, hm_pk_get(x->p, root, hm_pk_atom(x->p, "host_segments")), 1) < 0)
		return -1;
	if (hm_snaphost_entries(x->p, hm_pk_get(x->p, root, hm_pk_atom(x->p, "host_traces")), &list, &why) < 0)
		return fail(x, root, "%s", why);
	if (list != HM_PK_ABSENT && once(x, list, "the list of host entries"))
		return -1;
	if ((list != HM_PK_ABSENT && hm_pk_len(x->p, list)) || x->devs[HOST].seen)
		return read_device(x, list, HOST);
	return 0;
}

/* record_function ranges (2.5+): START and END by name become annotation slices on the one
 * thread of the snapshot, so row.annotations works as for traces. An END closes the latest
 * open START of its name, found through a map of names to the open STARTs of that name
 * (each START links to the one of its name before it), so a file of many open ranges costs
 * one step per annotation. A START never ended lasts to the last event. */
static int read_annotations(sx *x, hm_pkv anns)
{
	if (anns == HM_PK_ABSENT)
		return 0;
	if (hm_pk_type(anns) != HM_PK_LIST)
		return fail(x, anns, "'external_annotations' is not a list");
	if (once(x, anns, "the list of annotations"))
		return -1;
	size_t n = hm_pk_len(x->p, anns), open = 0;
	struct { uint32_t name, prev; int64_t ts; int closed; } *st = hm_xcalloc(n + 1, sizeof *st);
	umap latest = {0}; /* name -> index + 1 of its latest open START in st */
	uint32_t cat = hm_store_name(x->t, "user_annotation", 15);
	int64_t last = x->t->first_ts == HM_NONE ? 0 : x->t->first_ts, clock = 0;
	for (size_t i = 0; i < x->t->mem.n; i++)
		if (hm_mem_ts(&x->t->mem, i) > last)
			last = hm_mem_ts(&x->t->mem, i);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		hm_pkv a = hm_pk_item(x->p, anns, i);
		if (hm_pk_type(a) != HM_PK_DICT || once(x, a, "the annotation") < 0 || entry_ts(x, a, &clock, NULL) < 0) {
			rc = hm_pk_type(a) != HM_PK_DICT ? fail(x, anns, "annotation %zu is not a dict", i) : -1;
			break;
		}
		uint32_t name = get_name(x, a, x->k.name);
		if (name == UINT32_MAX)
			continue;
		x->t->events++, x->t->count[HM_EV_HOST_SLICE]++;
		x->work++;
		if (hm_pk_get(x->p, a, x->k.time_us) != HM_PK_ABSENT) /* as a trace's slices: a step may start first */
			hm_store_saw_ts(x->t, clock);
		uint32_t *slot = um_slot(&latest, name, 1);
		if (!*slot)
			latest.n++;
		if (!strcmp(get_str(x, a, x->k.stage), "START")) {
			st[open].name = name, st[open].ts = clock, st[open].prev = *slot;
			*slot = (uint32_t)++open;
			continue;
		}
		if (*slot) {
			size_t j = *slot - 1;
			hm_store_add_slice(x->t, st[j].ts, clock - st[j].ts, name, cat, x->thread, HM_SL_ANNOTATION);
			st[j].closed = 1;
			*slot = st[j].prev;
		}
	}
	for (size_t j = 0; j < open && rc == 0; j++)
		if (!st[j].closed)
			hm_store_add_slice(x->t, st[j].ts, last - st[j].ts, st[j].name,
					   hm_store_name(x->t, HM_SNAP_OPEN_RANGE, sizeof HM_SNAP_OPEN_RANGE - 1), x->thread,
					   HM_SL_ANNOTATION);
	free(st);
	x->work += latest.probes;
	free(latest.key), free(latest.val);
	return rc;
}

static void free_sx(sx *x)
{
	free(x->reached), free(x->rec_reached), free(x->by_dev);
	free(x->frame_of.key), free(x->frame_of.val), free(x->stack_of.key), free(x->stack_of.val);
	free(x->block_at.key), free(x->block_at.val), free(x->blks), free(x->tmp), free(x->ops);
	hm_strtab_free(&x->priv);
	free(x->priv_of.key), free(x->priv_of.val);
	free(x->pub_of), free(x->field_of), free(x->kv);
	free(x);
}

int hm_snapshot_read(hm_trace *t, const hm_read_in *in, char *err, size_t errsz, int *code)
{
	/* The keys whose values hmem reads as strings: other long strings are dropped. */
	static const char *const keep[] = {"action", "state", "stage", "filename", "name", "compile_context",
					   "user_metadata", NULL};
	*code = HM_EXIT_INPUT;
	sx *x = hm_xcalloc(1, sizeof *x);
	*x = (sx){.t = t, .path = in->path, .err = err, .errsz = errsz, .max_dev = -1};
	hm_pk_hook hook = {x, entry_hook};
	hm_pk *p = hm_pk_load_with(in->path, in->src, in->text, in->len, keep, &hook, err, errsz);
	if (!p) {
		free_sx(x);
		return -1;
	}
	x->p = p;
	x->reached = hm_xcalloc(hm_pk_containers(p) + 1, 1);
	x->rec_reached = hm_xcalloc(hm_pk_record_end(p) / 32 + 1, 1);
	KEYS(ATOM)
	t->snap = x->s = hm_xcalloc(1, sizeof *x->s);
	t->has_trace_events = 1;
	x->thread = hm_store_thread(t, "\x1f", 1);
	hm_pkv root = hm_pk_root(p), segs = HM_PK_ABSENT, traces = HM_PK_ABSENT, anns = HM_PK_ABSENT;
	int rc = 0;
	if (hm_pk_type(root) == HM_PK_LIST) { /* 1.13: the list of segments */
		segs = root;
		x->legacy = 1;
	} else if (hm_pk_type(root) == HM_PK_DICT) {
		segs = hm_pk_get(p, root, x->k.segments);
		traces = hm_pk_get(p, root, x->k.device_traces);
		anns = hm_pk_get(p, root, x->k.external_annotations);
		if (segs == HM_PK_ABSENT && traces == HM_PK_ABSENT && hm_pk_get(p, root, hm_pk_atom(p, "host_segments")) == HM_PK_ABSENT &&
		    hm_pk_get(p, root, hm_pk_atom(p, "host_traces")) == HM_PK_ABSENT)
			rc = fail(x, root, "neither 'segments' nor 'device_traces' (not a memory snapshot?)");
	} else {
		rc = fail(x, root, "the pickle holds neither a dict nor a list of segments (not a memory snapshot?)");
	}
	if (rc == 0)
		reserve(x, segs, traces, in->src ? hm_src_text_size(in->src) : in->len);
	if (rc == 0)
		rc = read_segments(x, segs, 0);
	if (rc == 0)
		rc = read_traces(x, traces);
	if (rc == 0)
		rc = read_host(x, root);
	hm_snaphost_settings(p, root, &x->s->overflowed, &x->s->max_entries);
	if (rc == 0)
		rc = read_annotations(x, anns);
	t->events += x->s->entries;
	/* Work counted, for the tests that check it grows with the input (tests/cli/contain2_snap*.t). */
	x->work += x->frame_of.probes + x->stack_of.probes + x->block_at.probes;
	if (getenv("HMEM_DEBUG_SNAPSHOT_WORK"))
		hm_eprintf("hmem: debug: %s: snapshot work %llu (look-ups %llu, loops %llu), dropped string bytes %llu\n",
			   in->path, (unsigned long long)(hm_pk_work(p) + x->work), (unsigned long long)hm_pk_work(p),
			   (unsigned long long)x->work, (unsigned long long)hm_pk_dropped(p));
	free_sx(x);
	hm_pk_free(p);
	return rc;
}
