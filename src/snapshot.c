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
	uint64_t work;    /* steps of the loops over blocks, segments and annotations (debug) */
} sx;

static int fail(sx *x, hm_pkv at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(sx *x, hm_pkv at, const char *fmt, ...)
{
	int n = snprintf(x->err, x->errsz, "%s:%llu: memory snapshot: ", x->path, (unsigned long long)hm_pk_at(x->p, at));
	if (n >= 0 && (size_t)n < x->errsz) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(x->err + n, x->errsz - (size_t)n, fmt, ap);
		va_end(ap);
	}
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

/* The stack of a frames list (interned), or UINT32_MAX when there is none; -1 on error
 * (through *bad). */
static uint32_t stack_id(sx *x, hm_pkv list, int *bad)
{
	if (list == HM_PK_ABSENT || hm_pk_type(list) == HM_PK_NONE)
		return UINT32_MAX;
	if (hm_pk_type(list) != HM_PK_LIST && hm_pk_type(list) != HM_PK_TUPLE) {
		*bad = fail(x, list, "'frames' is not a list");
		return UINT32_MAX;
	}
	uint32_t *slot = um_slot(&x->stack_of, hm_pk_same(x->p, list), 1); /* once per distinct list */
	if (*slot)
		return *slot - 1;
	x->stack_of.n++;
	size_t n = hm_pk_len(x->p, list), k = 0;
	hm_grow(&x->tmp, &x->captmp, n + 1, sizeof *x->tmp);
	for (size_t i = 0; i < n; i++) {
		uint32_t f = frame_id(x, hm_pk_item(x->p, list, i));
		if (f == UINT32_MAX - 1) {
			*bad = -1;
			return UINT32_MAX;
		}
		if (f != UINT32_MAX)
			x->tmp[k++] = f;
	}
	hm_snap *sn = x->s;
	size_t known = sn->stacks.n;
	uint32_t id = hm_strtab_intern(&sn->stacks, (const char *)x->tmp, k * sizeof *x->tmp);
	*slot = id + 1;
	if (sn->stacks.n > known) {
		hm_grow(&sn->stack_frame, &x->cap_stack_frame, (size_t)id + 1, sizeof *sn->stack_frame);
		sn->stack_frame[id] = user_frame(x, x->tmp, k);
	}
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

/* The time of an entry in ns: time_us when present, else a clock of its own (1 us per
 * entry after the last time seen), so order is kept and the timeline stays readable; the
 * entries without one are counted in *untimed when it is not NULL. */
static int entry_ts(sx *x, hm_pkv e, int64_t *clock, uint64_t *untimed)
{
	int64_t us;
	int rc = get_int(x, e, x->k.time_us, "time_us", &us);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		if (us > HM_STORE_TS_LIMIT / 1000 || us < -HM_STORE_TS_LIMIT / 1000)
			return fail(x, e, "time_us %lld is out of range (times within +-2^62 ns)", (long long)us);
		*clock = us * 1000;
	} else if ((*clock += 1000) >= HM_STORE_TS_LIMIT) {
		/* Checked at each step: 2^62 ns of untimed entries are out of reach, but one entry
		 * timed at the limit and one untimed after it are not, and a time past 2^62 would
		 * wrap a lifetime. */
		return fail(x, e, "an entry without 'time_us', 1 us after one at %lld ns, is past the clock's range "
				  "(times within +-2^62 ns)", (long long)(*clock - 1000));
	} else if (untimed) {
		++*untimed;
	}
	return 0;
}

/* The snapshot's columns, room for c rows (store.h hm_snap). */
static void grow_rows(hm_snap *s, size_t c)
{
	s->block_bytes = hm_xrealloc(s->block_bytes, c * sizeof *s->block_bytes);
	s->segment = hm_xrealloc(s->segment, c * sizeof *s->segment);
	s->origin = hm_xrealloc(s->origin, c * sizeof *s->origin);
	s->stream = hm_xrealloc(s->stream, c * sizeof *s->stream);
	s->stack = hm_xrealloc(s->stack, c * sizeof *s->stack);
	s->compile_ctx = hm_xrealloc(s->compile_ctx, c * sizeof *s->compile_ctx);
	s->user_meta = hm_xrealloc(s->user_meta, c * sizeof *s->user_meta);
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
	s->block_bytes[i] = b ? b->size : HM_NONE, s->segment[i] = b ? (int64_t)b->seg : HM_NONE;
	s->origin[i] = (uint8_t)origin, s->stream[i] = stream, s->stack[i] = stack;
	s->compile_ctx[i] = cc, s->user_meta[i] = um;
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
			hm_pkv e = hm_pk_item(x->p, list, i);
			if (hm_pk_type(e) != HM_PK_DICT)
				return fail(x, list, "trace entry %zu of device %lld is not a dict", i, (long long)d);
			if (pass == 0 && once(x, e, "the trace entry"))
				return -1;
			enum action a = action_of(get_str(x, e, x->k.action));
			int64_t size = 0, addr = 0, stream = HM_NONE, dfree = HM_NONE;
			int has_addr;
			if (entry_ts(x, e, &clock, pass ? &x->s->untimed : NULL) < 0 || get_size(x, e, x->k.size, "size", &size) < 0 ||
			    (has_addr = get_int(x, e, x->k.addr, "addr", &addr)) < 0 ||
			    get_int(x, e, x->k.stream, "stream", &stream) < 0 ||
			    get_int(x, e, x->k.device_free, "device_free", &dfree) < 0)
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
				uint32_t st = stack_id(x, hm_pk_get(x->p, e, x->k.frames), &bad);
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
				return fail(x, e, "the sizes add up to more than 2^60 bytes");
			hm_mem_event me = {clock, change, has_segs ? allocated : HM_NONE, has_segs ? reserved : HM_NONE, HM_NONE,
					   (uint64_t)addr, has_addr == 0, dev_type_of(d), dev_id_of(d), x->thread};
			hm_store_add_mem(x->t, &me);
			hm_store_saw_ts(x->t, clock);
			x->t->count[HM_EV_MEMORY]++;
			uint32_t st = stack_id(x, hm_pk_get(x->p, e, x->k.frames), &bad);
			if (bad)
				return -1;
			/* the alloc that made a block still live at the end: its block, segment */
			const blk *made = b && change > 0 && b->last == 1 && b->last_i == i ? b : NULL;
			add_snap_row(x, HM_SNAP_ENTRY, made, stream, st, get_name(x, e, x->k.compile_context),
				     get_name(x, e, x->k.user_metadata));
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
		if (x->t->mem.ts[i] > last)
			last = x->t->mem.ts[i];
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

int hm_snapshot_read(hm_trace *t, const hm_read_in *in, char *err, size_t errsz, int *code)
{
	/* The keys whose values hmem reads as strings: other long strings are dropped. */
	static const char *const keep[] = {"action", "state", "stage", "filename", "name", "compile_context",
					   "user_metadata", NULL};
	*code = HM_EXIT_INPUT;
	hm_pk *p = hm_pk_load(in->path, in->src, in->text, in->len, keep, err, errsz);
	if (!p)
		return -1;
	sx *x = hm_xcalloc(1, sizeof *x);
	*x = (sx){.t = t, .p = p, .path = in->path, .err = err, .errsz = errsz, .max_dev = -1};
	x->reached = hm_xcalloc(hm_pk_containers(p) + 1, 1);
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
		reserve(x, segs, traces, in->src ? hm_src_file_size(in->src) * (hm_src_is_gzip(in->src) ? 10 : 1) : in->len);
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
	free(x->reached), free(x->by_dev);
	free(x->frame_of.key), free(x->frame_of.val), free(x->stack_of.key), free(x->stack_of.val);
	free(x->block_at.key), free(x->block_at.val), free(x->blks), free(x->tmp), free(x->ops);
	free(x);
	hm_pk_free(p);
	return rc;
}
