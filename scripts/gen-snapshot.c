/* gen-snapshot: write a synthetic PyTorch memory snapshot of about the requested size,
 * deterministically, in the bytes torch.cuda.memory._dump_snapshot writes (PyTorch 2.5+,
 * Python's pickler, protocol 4), fast enough for gigabytes (make bench).
 *
 *   gen-snapshot [--mb N] [--devices D] [--seed S] > snapshot.pickle
 *
 * The layout follows the real snapshots hmem was measured on (README "Snapshots"): the keys
 * segments, device_traces, allocator_settings, external_annotations in that order; segments
 * with their blocks (address, size, requested_size, state, frames); trace entries keyed
 * action, addr, size, stream, time_us, compile_context, frames; alloc, free_requested,
 * free_completed and segment_alloc entries. As Python's pickler writes it, every string, dict
 * and list is memoized and met again through BINGET or LONG_BINGET: key names, action names,
 * frame dicts (name, filename, line: a pool of 400, shared by every stack) and frame lists
 * (an alloc's list is its block's at the end; a free_completed shares its free_requested's).
 * A stack holds 4 to 36 frames (about 14), drawn from 3000 code paths; lists and dicts go out
 * in batches of 1000 (MARK ... APPENDS) and in FRAMEs of 64 KiB, as the pickler does. The
 * same arguments give the same bytes. It says on standard error how many bytes and entries it
 * wrote. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two xorshift generators: rng for the allocator's steps, rng2 for what only the written
 * pass draws (times, a free's stack), so the silent pass over the end state takes the same
 * steps. */
#define RNG2 0x9e3779b97f4a7c15ull
static uint64_t rng, rng2 = RNG2;

static uint64_t draw(uint64_t *s, uint64_t n)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return *s % n;
}

static uint64_t below(uint64_t n)
{
	return draw(&rng, n);
}

static uint64_t below2(uint64_t n)
{
	return draw(&rng2, n);
}

/* Output: opcodes gather in a frame, written with its FRAME header once it passes 64 KiB
 * (or counted only, in the sizing pass). */
static unsigned char fbuf[1 << 18];
static size_t flen;
static uint64_t written;
static int sink; /* 1: count only */

static void flush(void)
{
	if (!flen)
		return;
	unsigned char h[9] = {0x95};
	for (int i = 0; i < 8; i++)
		h[1 + i] = (unsigned char)((uint64_t)flen >> (8 * i));
	if (!sink && (fwrite(h, 1, 9, stdout) != 9 || fwrite(fbuf, 1, flen, stdout) != flen)) {
		perror("gen-snapshot");
		exit(1);
	}
	written += 9 + flen;
	flen = 0;
}

static void op(const void *b, size_t n)
{
	memcpy(fbuf + flen, b, n);
	flen += n;
}

static void op1(int c)
{
	fbuf[flen++] = (unsigned char)c;
}

/* At an opcode boundary: a new frame past 64 KiB. */
static void boundary(void)
{
	if (flen >= 65536)
		flush();
}

static uint32_t memo;

static uint32_t memoize(void)
{
	op1(0x94);
	return memo++;
}

static void get(uint32_t idx)
{
	if (idx < 256) {
		unsigned char b[2] = {'h', (unsigned char)idx};
		op(b, 2);
	} else {
		unsigned char b[5] = {'j', (unsigned char)idx, (unsigned char)(idx >> 8), (unsigned char)(idx >> 16),
				      (unsigned char)(idx >> 24)};
		op(b, 5);
	}
}

static void integer(int64_t x)
{
	if (x >= 0 && x < 256) {
		op1('K'), op1((int)x);
	} else if (x >= 0 && x < 65536) {
		op1('M'), op1((int)(x & 255)), op1((int)(x >> 8));
	} else if (x >= INT32_MIN && x <= INT32_MAX) {
		op1('J');
		for (int i = 0; i < 4; i++)
			op1((int)(((uint64_t)x >> (8 * i)) & 255));
	} else { /* LONG1: the fewest bytes of two's complement */
		int n = 1;
		while (n < 8 && !((x >> (8 * n - 1)) == 0 || (x >> (8 * n - 1)) == -1))
			n++;
		op1(0x8a), op1(n);
		for (int i = 0; i < n; i++)
			op1((int)(((uint64_t)x >> (8 * i)) & 255));
	}
}

/* A new string (SHORT_BINUNICODE or BINUNICODE), memoized; its memo index. */
static uint32_t str(const char *s)
{
	size_t n = strlen(s);
	if (n < 256) {
		op1(0x8c), op1((int)n);
	} else {
		op1('X');
		for (int i = 0; i < 4; i++)
			op1((int)((n >> (8 * i)) & 255));
	}
	op(s, n);
	return memoize();
}

/* Strings met again (keys, action names): written once, then fetched. */
enum { K_SEGMENTS, K_DEVICE_TRACES, K_ALLOCATOR_SETTINGS, K_EXTERNAL_ANNOTATIONS, K_DEVICE, K_ADDRESS, K_TOTAL_SIZE,
       K_ALLOCATED_SIZE, K_ACTIVE_SIZE, K_REQUESTED_SIZE, K_STREAM, K_SEGMENT_TYPE, K_SEGMENT_POOL_ID, K_IS_EXPANDABLE,
       K_FRAMES, K_BLOCKS, K_SIZE, K_STATE, K_NAME, K_FILENAME, K_LINE, K_ACTION, K_ADDR, K_TIME_US,
       K_COMPILE_CONTEXT, K_STAGE, V_LARGE, V_INACTIVE, V_ACTIVE_ALLOCATED, V_ALLOC, V_FREE_REQUESTED,
       V_FREE_COMPLETED, V_SEGMENT_ALLOC, V_START, V_END, NKEYS };
static const char *const keyname[NKEYS] = {
	"segments", "device_traces", "allocator_settings", "external_annotations", "device", "address", "total_size",
	"allocated_size", "active_size", "requested_size", "stream", "segment_type", "segment_pool_id",
	"is_expandable", "frames", "blocks", "size", "state", "name", "filename", "line", "action", "addr", "time_us",
	"compile_context", "stage", "large", "inactive", "active_allocated", "alloc", "free_requested",
	"free_completed", "segment_alloc", "START", "END"};
static uint32_t keymemo[NKEYS];

static void key(int k)
{
	if (keymemo[k])
		get(keymemo[k] - 1);
	else
		keymemo[k] = str(keyname[k]) + 1;
}

/* Frames: a pool of frame dicts, and code paths (stacks of pool indices). */
#define NFRAMES 400
#define NPATHS 3000
#define MAXDEPTH 36
static char fname[NFRAMES][48], ffile[NFRAMES][96];
static int fline[NFRAMES];
static uint32_t fmemo[NFRAMES]; /* memo index + 1 once written */
static uint16_t path[NPATHS][MAXDEPTH];
static int depth[NPATHS];

static void make_paths(void)
{
	static const char *const dirs[] = {"/home/user/proj", "/usr/lib/python3/dist-packages/torch/nn/modules",
					   "/usr/lib/python3/dist-packages/torch/autograd",
					   "/usr/lib/python3/dist-packages/transformers/models/llama",
					   "/usr/lib/python3/dist-packages/torch/optim"};
	for (int i = 0; i < NFRAMES; i++) {
		snprintf(ffile[i], sizeof ffile[i], "%s/%s%d.py", dirs[i % 5], i % 5 ? "module" : "train", i / 5 % 40);
		snprintf(fname[i], sizeof fname[i], "%s_%d", i % 3 ? "forward" : "_call_impl", i);
		fline[i] = 10 + (int)below(3000);
	}
	for (int p = 0; p < NPATHS; p++) { /* a shared base (module, main, step), then a path of its own */
		int n = 4 + (int)(below(17) + below(17));
		depth[p] = n;
		for (int j = 0; j < n; j++)
			path[p][j] = (uint16_t)(j < 3 ? (uint64_t)j * 5 : below(NFRAMES));
	}
}

static void frame(int f)
{
	if (fmemo[f]) {
		get(fmemo[f] - 1);
		return;
	}
	op1('}');
	uint32_t m = memoize();
	op1('(');
	key(K_NAME), str(fname[f]), key(K_FILENAME), str(ffile[f]), key(K_LINE), integer(fline[f]);
	op1('u');
	fmemo[f] = m + 1;
}

/* A new frames list of code path p (innermost first, as PyTorch lists them); its memo index. */
static uint32_t frames(int p)
{
	op1(']');
	uint32_t m = memoize();
	int n = depth[p];
	if (n > 1)
		op1('(');
	for (int j = n - 1; j >= 0; j--)
		frame(path[p][j]);
	op1(n > 1 ? 'e' : 'a');
	return m;
}

static void empty_list(void)
{
	op1(']');
	memoize();
}

/* The allocator: per device, SLOTS blocks of 2 MiB in segments of 20 MiB, each slot free or
 * holding one allocation (the block rounded up to 512 bytes). */
#define SLOTS 4096
#define SLOT (UINT64_C(2) << 20)
#define PER_SEG 10
typedef struct dev {
	uint64_t base;
	int64_t req[SLOTS];   /* requested bytes, 0 when free */
	uint64_t seq[SLOTS];  /* the alloc that holds it */
	uint32_t lmemo[SLOTS]; /* memo index of the list its block was written with, + 1 */
	uint8_t seg[SLOTS / PER_SEG + 1];
	int free[SLOTS], nfree;
	int live[SLOTS], nlive, where[SLOTS];
	uint64_t steps;
} dev;

static int64_t req_size(void)
{
	uint64_t r = below(100);
	if (r < 55)
		return 4 * (int64_t)(1 + below(2048));
	if (r < 90)
		return (int64_t)(1 + below(SLOT / 4));
	return (int64_t)(SLOT / 4 + below(SLOT - SLOT / 4));
}

static int64_t rounded(int64_t r)
{
	return (r + 511) / 512 * 512;
}

static uint64_t clock_us;

static void dev_init(dev *d, int idx)
{
	memset(d, 0, sizeof *d);
	d->base = UINT64_C(0x7f0000000000) + (uint64_t)idx * (UINT64_C(1) << 36);
	for (int i = SLOTS - 1; i >= 0; i--)
		d->free[d->nfree++] = i;
}

/* One entry dict: its head, and its tail from time_us on. */
static void entry_head(int action, uint64_t addr, int64_t size)
{
	op1('}'), memoize(), op1('(');
	key(K_ACTION), key(action), key(K_ADDR), integer((int64_t)addr), key(K_SIZE), integer(size), key(K_STREAM),
		integer(0);
	clock_us += 1 + below2(40);
	key(K_TIME_US), integer((int64_t)clock_us), key(K_COMPILE_CONTEXT), str("N/A"), key(K_FRAMES);
}

/* A step of device d: an allocation when few are live or by chance, else a free. Entries
 * go out when emit (the sizing pass and the pass over the end state run it silently). */
static int in_batch;

static uint64_t entries; /* written */

static void entry_done(void)
{
	op1('u');
	entries++;
	if (++in_batch == 1000)
		op1('e'), op1('('), in_batch = 0;
	boundary();
}

static void step(dev *d, const dev *end, int emit)
{
	int alloc = d->nlive < 64 || (d->nfree && below(100) < (d->nlive > SLOTS * 3 / 4 ? 30u : 55u));
	uint64_t seq = d->steps++;
	if (alloc) {
		int s = d->free[--d->nfree];
		int64_t r = req_size();
		uint64_t addr = d->base + (uint64_t)s * SLOT;
		int p = (int)below(NPATHS);
		d->req[s] = r, d->seq[s] = seq;
		d->where[s] = d->nlive, d->live[d->nlive++] = s;
		int fresh = !d->seg[s / PER_SEG];
		d->seg[s / PER_SEG] = 1;
		if (!emit)
			return;
		uint32_t lm = 0;
		int reuse = end && end->req[s] && end->seq[s] == seq;
		if (fresh) {
			entry_head(V_SEGMENT_ALLOC, d->base + (uint64_t)(s / PER_SEG) * PER_SEG * SLOT, (int64_t)(PER_SEG * SLOT));
			if (reuse)
				get(end->lmemo[s] - 1), lm = end->lmemo[s];
			else
				lm = frames(p) + 1;
			entry_done();
		}
		entry_head(V_ALLOC, addr, r);
		if (lm)
			get(lm - 1);
		else if (reuse)
			get(end->lmemo[s] - 1);
		else
			frames(p);
		entry_done();
		return;
	}
	int k = (int)below((uint64_t)d->nlive), s = d->live[k];
	d->live[k] = d->live[--d->nlive], d->where[d->live[k]] = k;
	int64_t r = d->req[s];
	d->req[s] = 0;
	d->free[d->nfree++] = s;
	if (!emit)
		return;
	uint64_t addr = d->base + (uint64_t)s * SLOT;
	entry_head(V_FREE_REQUESTED, addr, r);
	uint32_t lm = frames((int)below2(NPATHS));
	entry_done();
	entry_head(V_FREE_COMPLETED, addr, r);
	get(lm);
	entry_done();
}

/* The segments as the trace ends: per segment its slots in address order, a live slot an
 * active block and its free rest, a free one an inactive block of 2 MiB. */
static void segments(dev *d, int idx)
{
	int batch = 0;
	for (int g = 0; g <= (SLOTS - 1) / PER_SEG; g++) {
		if (!d->seg[g])
			continue;
		int64_t alloc = 0, reqd = 0;
		for (int j = 0; j < PER_SEG && g * PER_SEG + j < SLOTS; j++)
			if (d->req[g * PER_SEG + j])
				alloc += rounded(d->req[g * PER_SEG + j]), reqd += d->req[g * PER_SEG + j];
		op1('}'), memoize(), op1('(');
		key(K_DEVICE), integer(idx), key(K_ADDRESS), integer((int64_t)(d->base + (uint64_t)g * PER_SEG * SLOT));
		key(K_TOTAL_SIZE), integer((int64_t)(PER_SEG * SLOT)), key(K_ALLOCATED_SIZE), integer(alloc);
		key(K_ACTIVE_SIZE), integer(alloc), key(K_REQUESTED_SIZE), integer(reqd), key(K_STREAM), integer(0);
		key(K_SEGMENT_TYPE), key(V_LARGE), key(K_SEGMENT_POOL_ID), integer(0), integer(0), op1(0x86), memoize();
		key(K_IS_EXPANDABLE), op1(0x89), key(K_FRAMES), empty_list(), key(K_BLOCKS), op1(']'), memoize(), op1('(');
		for (int j = 0; j < PER_SEG && g * PER_SEG + j < SLOTS; j++) {
			int s = g * PER_SEG + j;
			uint64_t a = d->base + (uint64_t)s * SLOT;
			int64_t r = d->req[s], b = rounded(r);
			if (r) {
				op1('}'), memoize(), op1('(');
				key(K_ADDRESS), integer((int64_t)a), key(K_SIZE), integer(b), key(K_REQUESTED_SIZE), integer(r);
				key(K_STATE), key(V_ACTIVE_ALLOCATED), key(K_FRAMES);
				d->lmemo[s] = frames((int)(d->seq[s] % NPATHS)) + 1;
				op1('u');
			}
			if (b < (int64_t)SLOT) {
				op1('}'), memoize(), op1('(');
				key(K_ADDRESS), integer((int64_t)(a + (uint64_t)b)), key(K_SIZE), integer((int64_t)SLOT - b);
				key(K_REQUESTED_SIZE), integer(0), key(K_STATE), key(V_INACTIVE), key(K_FRAMES), empty_list();
				op1('u');
			}
			boundary();
		}
		op1('e'), op1('u');
		if (++batch == 1000)
			op1('e'), op1('('), batch = 0;
		boundary();
	}
}

/* The whole file for steps steps per device: written, or only counted (count): its size. */
static uint64_t snapshot(dev *sim, dev *end, int ndev, uint64_t steps, uint64_t seed, int count)
{
	sink = count, written = 0, flen = 0, memo = 0, entries = 0, rng2 = RNG2;
	memset(keymemo, 0, sizeof keymemo), memset(fmemo, 0, sizeof fmemo);
	uint64_t s0 = seed;
	for (int d = 0; d < ndev; d++) {
		rng = s0 + (uint64_t)d * 7919 * 2;
		dev_init(&end[d], d);
		for (uint64_t i = 0; i < steps; i++)
			step(&end[d], NULL, 0);
	}
	static const unsigned char head[] = {0x80, 4};
	if (!count && fwrite(head, 1, 2, stdout) != 2) {
		perror("gen-snapshot");
		exit(1);
	}
	op1('}'), memoize(), op1('(');
	key(K_SEGMENTS), op1(']'), memoize(), op1('(');
	for (int d = 0; d < ndev; d++)
		segments(&end[d], d);
	op1('e');
	key(K_DEVICE_TRACES), op1(']'), memoize();
	if (ndev > 1)
		op1('(');
	for (int d = 0; d < ndev; d++) {
		rng = s0 + (uint64_t)d * 7919 * 2;
		dev_init(&sim[d], d);
		clock_us = UINT64_C(1763324225770003) - steps * 30;
		op1(']'), memoize(), op1('(');
		in_batch = 0;
		for (uint64_t i = 0; i < steps; i++)
			step(&sim[d], &end[d], 1);
		op1('e');
		if (ndev == 1)
			op1('a'); /* one device: the pickler's APPEND, no MARK */
	}
	if (ndev > 1)
		op1('e');
	key(K_ALLOCATOR_SETTINGS);
	op1('}'), memoize(), op1('(');
	str("PYTORCH_CUDA_ALLOC_CONF"), str(""), str("max_split_size"), integer(-1);
	str("garbage_collection_threshold");
	static const unsigned char zero[] = {'G', 0, 0, 0, 0, 0, 0, 0, 0};
	op(zero, sizeof zero);
	str("expandable_segments"), op1(0x89), op1('u');
	/* record_function ranges: a forward and a backward per 2000 entries of device 0 */
	key(K_EXTERNAL_ANNOTATIONS), op1(']'), memoize(), op1('(');
	uint64_t t = UINT64_C(1763324225770003) - steps * 30;
	int batch = 0;
	for (uint64_t i = 0; i < steps / 1000 + 1; i++) {
		for (int k = 0; k < 4; k++) {
			op1('}'), memoize(), op1('(');
			key(K_NAME), str(k < 2 ? "## forward ##" : "## backward ##"), key(K_STAGE), key(k % 2 ? V_END : V_START);
			key(K_DEVICE), integer(0), key(K_TIME_US), integer((int64_t)t);
			t += 5000;
			op1('u');
			if (++batch == 1000)
				op1('e'), op1('('), batch = 0;
		}
		boundary();
	}
	op1('e'), op1('u'), op1('.');
	flush();
	if (!count && fflush(stdout)) {
		perror("gen-snapshot");
		exit(1);
	}
	return written + 2;
}

int main(int argc, char **argv)
{
	double mb = 1024;
	int ndev = 1;
	uint64_t seed = 88172645463325252ull;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mb") && i + 1 < argc)
			mb = atof(argv[++i]);
		else if (!strcmp(argv[i], "--devices") && i + 1 < argc)
			ndev = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10) | 1;
		else {
			fprintf(stderr, "usage: gen-snapshot [--mb N] [--devices D] [--seed S] > snapshot.pickle\n");
			return 2;
		}
	}
	if (ndev < 1 || ndev > 16 || mb <= 0) {
		fprintf(stderr, "gen-snapshot: --devices 1 to 16, --mb above 0\n");
		return 2;
	}
	dev *sim = calloc((size_t)ndev, sizeof *sim), *end = calloc((size_t)ndev, sizeof *end);
	/* Sizing: steps counted (nothing written) until the trace holds about mb MB, then the
	 * whole file counted for that many steps, and the steps scaled to the size asked for. */
	rng = seed;
	make_paths();
	uint64_t target = (uint64_t)(mb * 1e6), steps = 0;
	sink = 1;
	dev_init(&sim[0], 0);
	while (written + flen < target / (uint64_t)ndev) {
		step(&sim[0], NULL, 1);
		steps++;
		boundary();
	}
	flush();
	uint64_t counted = snapshot(sim, end, ndev, steps, seed, 1);
	steps = (uint64_t)((double)steps * (double)target / (double)counted) + 1;
	snapshot(sim, end, ndev, steps, seed, 0);
	fprintf(stderr, "gen-snapshot: %llu bytes, %llu entries\n", (unsigned long long)(written + 2),
		(unsigned long long)entries);
	free(sim), free(end);
	return 0;
}
