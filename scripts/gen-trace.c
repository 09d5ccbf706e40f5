/* gen-trace: write a synthetic Kineto trace of about the requested size, deterministically.
 *
 *   gen-trace [--shape S] [--mb N] [--rank R] [--seed S] > trace.json
 *   gen-trace [--shape S] [--mb N] --ranks K --dir DIR   (DIR/rank0.json ... each N/K MiB)
 *
 * The mix follows real PyTorch 2.x traces: training steps (ProfilerStep#N annotations),
 * forward ops nesting aten ops with long args (shapes, types, strides), cuda_runtime launches
 * with flows to kernels on the GPU stream, a backward thread, and [memory] events pairing
 * every allocation with a later free, with running Total Allocated / Total Reserved per
 * device. Times are µs with three decimals, events are pretty-printed the way Kineto writes
 * them. The same arguments give the same bytes. Shapes (what the reader's speed depends on):
 *   mixed   about a third memory events, nested ops with record_shapes args (the default)
 *   host    deep stacks: python_function (with_stack) and cpu_op slices, ~20 per memory event,
 *           each layer's stack the same at every step, as a model's
 *   unique  the host shape with random stacks: almost every allocation in a new context
 *   memory  mostly memory events, a few ops around them
 *   long    long names and args: with_stack paths, many-input shapes, a "Call stack" string
 * --ranks writes K files of one shape at once (a folder of many small ranks). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t pick(uint64_t n)
{
	return next() % n;
}

static uint64_t written;
static int rank_id;

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void out(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vprintf(fmt, ap);
	va_end(ap);
	if (n > 0)
		written += (uint64_t)n;
}

static int first = 1;
static void sep(void)
{
	out(first ? "\n" : ",\n");
	first = 0;
}

static void ts_us(char *b, uint64_t ns)
{
	sprintf(b, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static const char *const ops[] = {
	"aten::linear", "aten::addmm", "aten::matmul", "aten::layer_norm", "aten::native_layer_norm",
	"aten::gelu", "aten::softmax", "aten::_softmax", "aten::dropout", "aten::add", "aten::mul",
	"aten::view", "aten::transpose", "aten::contiguous", "aten::clone", "aten::bmm", "aten::cat",
	"aten::empty", "aten::empty_strided", "aten::to", "aten::_to_copy", "aten::copy_",
};
#define NOPS (sizeof ops / sizeof *ops)

static const int pid = 4242, tid_main = 4242, tid_bwd = 4301;
static uint64_t ev_idx, ext_id, corr;
static int64_t allocated = 1ll << 30, reserved = 2ll << 30; /* weights allocated before the trace */

typedef struct live {
	uint64_t addr;
	int64_t bytes;
	int tid;
} live;
static live *lv;
static size_t nlive, lvcap;
static uint64_t next_addr = 0x7f0000000000ull;

static void mem_event(uint64_t ns, int tid, int64_t bytes, uint64_t addr)
{
	char t[32];
	ts_us(t, ns);
	allocated += bytes;
	if (allocated > reserved)
		reserved = (allocated + (2 << 20)) & ~((int64_t)(2 << 20) - 1);
	sep();
	out("  {\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n"
	    "    \"pid\": %d, \"tid\": %d,\n    \"ts\": %s,\n    \"args\": {\n"
	    "      \"Total Reserved\": %" PRId64 ", \"Total Allocated\": %" PRId64 ", \"Bytes\": %" PRId64
	    ", \"Addr\": %" PRIu64 ", \"Device Id\": 0, \"Device Type\": 1, \"Ev Idx\": %" PRIu64 "\n    }\n  }",
	    pid, tid, t, reserved, allocated, bytes, addr, ev_idx++);
}

static void alloc_at(uint64_t ns, int tid)
{
	static const int64_t sizes[] = {512, 4096, 65536, 1 << 20, 4 << 20, 16 << 20, 64 << 20};
	int64_t b = sizes[pick(7)] * (int64_t)(1 + pick(3));
	if (nlive == lvcap) {
		lvcap = lvcap ? lvcap * 2 : 1024;
		lv = realloc(lv, lvcap * sizeof *lv);
	}
	lv[nlive++] = (live){next_addr, b, tid};
	mem_event(ns, tid, b, next_addr);
	next_addr += (uint64_t)b + 512;
}

static void free_some(uint64_t ns, int tid, size_t keep)
{
	while (nlive > keep) {
		size_t i = nlive - 1 - (size_t)pick(nlive < 4 ? nlive : 4);
		live x = lv[i];
		lv[i] = lv[--nlive];
		mem_event(ns, tid, -x.bytes, x.addr);
		ns += 50;
	}
}

static void slice(const char *cat, const char *name, int p, int t, uint64_t ns, uint64_t dur, int long_args)
{
	char a[32], d[32];
	ts_us(a, ns);
	ts_us(d, dur);
	sep();
	out("  {\n    \"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d,\n"
	    "    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n      \"External id\": %" PRIu64 ",\"Ev Idx\": %" PRIu64,
	    cat, name, p, t, a, d, ext_id++, ev_idx++);
	if (long_args)
		out(", \"Input Dims\": [[%d, %d, %d], [%d, %d], []], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"],"
		    " \"Input Strides\": [[%d, %d, 1], [%d, 1], []], \"Concrete Inputs\": [\"\", \"\", \"1\"],"
		    " \"Sequence number\": %" PRIu64 ", \"Fwd thread id\": 0, \"Record function id\": 0",
		    8, 1024, 768, 768, 3072, 1024 * 768, 768, 3072, ext_id);
	out("\n    }\n  }");
}

static void launch(uint64_t ns)
{
	char a[32], k[32];
	uint64_t c = corr++;
	ts_us(a, ns);
	ts_us(k, ns + 5000);
	sep();
	out("  {\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": %d, \"tid\": %d,\n"
	    "    \"ts\": %s, \"dur\": 4.250,\n    \"args\": {\n      \"cbid\": 211, \"correlation\": %" PRIu64 "\n    }\n  }",
	    pid, tid_main, a, c);
	sep();
	out("  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8::Params)\", \"pid\": 0, \"tid\": 7,\n"
	    "    \"ts\": %s, \"dur\": 21.503,\n    \"args\": {\n      \"queued\": 0, \"device\": 0, \"context\": 1,\n"
	    "      \"stream\": 7, \"correlation\": %" PRIu64 ",\n      \"registers per thread\": 118,\n"
	    "      \"shared memory\": 17408,\n      \"blocks per SM\": 0.395062,\n      \"warps per SM\": 1.580247,\n"
	    "      \"grid\": [2, 16, 1],\n      \"block\": [128, 1, 1],\n      \"est. achieved occupancy %%\": 3\n    }\n  }",
	    k, c);
	sep();
	out("  {\n    \"ph\": \"s\", \"id\": %" PRIu64 ", \"pid\": %d, \"tid\": %d, \"ts\": %s,\n"
	    "    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  }", c, pid, tid_main, a);
	sep();
	out("  {\n    \"ph\": \"f\", \"id\": %" PRIu64 ", \"pid\": 0, \"tid\": 7, \"ts\": %s,\n"
	    "    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }", c, k);
}

/* python_function slices (with_stack): their args as PyTorch 2.x writes them. */
static uint64_t py_id;
static void py_slice(const char *name, uint64_t ns, uint64_t dur, uint64_t parent)
{
	char a[32], d[32];
	ts_us(a, ns);
	ts_us(d, dur);
	sep();
	out("  {\n    \"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d,\n"
	    "    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n      \"Python parent id\": %" PRIu64 ", \"Python id\": %" PRIu64
	    ", \"Python thread\": 0\n    }\n  }",
	    name, pid, tid_main, a, d, parent, py_id++);
}

static const char *const pyframes[] = {
	"<built-in method run_backward of torch._C._EngineBase object at 0x7f3a2c1e5b40>",
	"torch/nn/modules/module.py(1527): _call_impl", "torch/nn/modules/module.py(1518): _wrapped_call_impl",
	"nn.Module: TransformerEncoderLayer_0", "torch/nn/modules/transformer.py(714): forward",
	"torch/nn/modules/transformer.py(728): _sa_block", "nn.Module: MultiheadAttention_0",
	"torch/nn/modules/activation.py(1205): forward", "torch/nn/functional.py(5364): multi_head_attention_forward",
	"nn.Module: Linear_1", "torch/nn/modules/linear.py(114): forward", "<built-in function linear>",
};
#define NFRAMES (sizeof pyframes / sizeof *pyframes)

/* The layer of the step being written (0-23): the host shape's structure follows it. */
static int cur_layer;

/* Op chains as PyTorch nests them (an op and the ops it calls), four deep. */
static const char *const chains[][4] = {
	{"aten::linear", "aten::addmm", "aten::empty_strided", "aten::empty"},
	{"aten::layer_norm", "aten::native_layer_norm", "aten::empty_like", "aten::empty_strided"},
	{"aten::dropout", "aten::native_dropout", "aten::empty_like", "aten::empty_strided"},
	{"aten::matmul", "aten::bmm", "aten::contiguous", "aten::clone"},
	{"aten::softmax", "aten::_softmax", "aten::empty_like", "aten::empty"},
	{"aten::to", "aten::_to_copy", "aten::empty_strided", "aten::copy_"},
};

/* One layer of the host shape: a python stack of depth 8-11 around a chain of four nested
 * ops, three leaf ops, one allocation and one launch: about twenty host slices per memory
 * event (free_some adds the frees). Like a model's forward, a layer's stack and ops are the
 * same at every step (its module names carry the layer's number); what is allocated and
 * freed is not. */
static uint64_t layer_host(uint64_t ns)
{
	uint64_t st = 0x9e3779b97f4a7c15ull * (uint64_t)(cur_layer + 1), depth = 8 + (uint64_t)cur_layer % 4;
	uint64_t dur = 80000, parent = py_id;
	char mod[64];
	for (uint64_t i = 0; i < depth; i++) {
		st ^= st << 13, st ^= st >> 7, st ^= st << 17;
		const char *f = pyframes[(i + st % 2) % NFRAMES];
		if (!strncmp(f, "nn.Module: ", 11)) {
			snprintf(mod, sizeof mod, "%s_%d", f, cur_layer);
			f = mod;
		}
		py_slice(f, ns + i * 200, dur - i * 400, parent + i);
	}
	uint64_t t = ns + depth * 200;
	const char *const *chain = chains[cur_layer % (int)(sizeof chains / sizeof *chains)];
	for (int i = 0; i < 4; i++)
		slice("cpu_op", chain[i], pid, tid_main, t + (uint64_t)i * 300, 60000 - (uint64_t)i * 600, i == 0);
	t += 1500;
	for (int k = 0; k < 3; k++)
		slice("cpu_op", ops[(cur_layer + k * 7) % (int)NOPS], pid, tid_main, t + (uint64_t)k * 15000, 12000, 0);
	alloc_at(t + 500, tid_main);
	launch(t + 2000);
	free_some(t + 40000, tid_main, 24);
	return ns + dur + 1000;
}

/* The unique shape: the host shape with every stack and op chain drawn at random, so that
 * almost every allocation has a context never seen before (the worst case of a pack's
 * memo; no model runs like that). */
static uint64_t layer_unique(uint64_t ns)
{
	uint64_t depth = 8 + pick(4), dur = 80000, parent = py_id;
	for (uint64_t i = 0; i < depth; i++)
		py_slice(pyframes[(i + pick(2)) % NFRAMES], ns + i * 200, dur - i * 400, parent + i);
	uint64_t t = ns + depth * 200;
	for (int i = 0; i < 4; i++)
		slice("cpu_op", ops[pick(NOPS)], pid, tid_main, t + (uint64_t)i * 300, 60000 - (uint64_t)i * 600, i == 0);
	t += 1500;
	for (int k = 0; k < 3; k++)
		slice("cpu_op", ops[pick(NOPS)], pid, tid_main, t + (uint64_t)k * 15000, 12000, 0);
	alloc_at(t + 500, tid_main);
	launch(t + 2000);
	free_some(t + 40000, tid_main, 24);
	return ns + dur + 1000;
}

/* One op of the memory shape: an op around twelve allocations, frees down to 32 live. */
static uint64_t layer_memory(uint64_t ns)
{
	slice("cpu_op", ops[pick(NOPS)], pid, tid_main, ns, 40000, 0);
	for (int k = 0; k < 12; k++)
		alloc_at(ns + 1000 + (uint64_t)k * 2000, tid_main);
	free_some(ns + 30000, tid_main, 32);
	if (pick(4) == 0)
		launch(ns + 35000);
	return ns + 41000;
}

/* record_shapes of an op with many inputs, and the "Call stack" string older with_stack
 * traces carry in the args. */
static void long_op(const char *name, uint64_t ns, uint64_t dur)
{
	char a[32], d[32];
	ts_us(a, ns);
	ts_us(d, dur);
	sep();
	out("  {\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d,\n"
	    "    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n      \"External id\": %" PRIu64 ",\"Ev Idx\": %" PRIu64
	    ", \"Input Dims\": [",
	    name, pid, tid_main, a, d, ext_id++, ev_idx++);
	int n = 6 + (int)pick(10);
	for (int i = 0; i < n; i++)
		out("%s[%d, %d, %d, %d]", i ? ", " : "", 8, 16 + i, 1024, 64 * (1 + (int)pick(48)));
	out("], \"Input type\": [");
	for (int i = 0; i < n; i++)
		out("%s\"%s\"", i ? ", " : "", i % 3 ? "c10::BFloat16" : "float");
	out("], \"Input Strides\": [");
	for (int i = 0; i < n; i++)
		out("%s[%d, %d, %d, 1]", i ? ", " : "", 16777216, 1048576, 1024);
	out("], \"Concrete Inputs\": [");
	for (int i = 0; i < n; i++)
		out("%s\"%s\"", i ? ", " : "", i % 4 == 3 ? "False" : "");
	out("], \"Call stack\": \"");
	for (int i = 0; i < 10; i++)
		out("%s%s", i ? ";" : "", pyframes[(i + pick(3)) % NFRAMES]);
	out("\", \"Sequence number\": %" PRIu64 ", \"Fwd thread id\": 0, \"Record function id\": 0\n    }\n  }", ext_id);
}

/* One layer of the long shape: a short python stack of long names, two ops with long args,
 * an allocation, a launch (the kernel's name is long too). */
static uint64_t layer_long(uint64_t ns)
{
	uint64_t parent = py_id;
	for (int i = 0; i < 4; i++)
		py_slice(pyframes[(i * 3 + pick(3)) % NFRAMES], ns + (uint64_t)i * 100, 50000 - (uint64_t)i * 200, parent + (uint64_t)i);
	long_op(ops[pick(NOPS)], ns + 500, 45000);
	long_op(ops[pick(NOPS)], ns + 1000, 20000);
	alloc_at(ns + 1500, tid_main);
	launch(ns + 3000);
	free_some(ns + 30000, tid_main, 16);
	return ns + 51000;
}

/* The default mix: a forward pass of 24 layers, a backward pass of 24 on its own thread. */
static uint64_t step_mixed(uint64_t ns, uint64_t limit)
{
	uint64_t fwd_start = ns + 1000;
	ns = fwd_start;
	for (int layer = 0; layer < 24 && written < limit; layer++) {
		uint64_t op_start = ns;
		slice("cpu_op", ops[pick(NOPS)], pid, tid_main, op_start, 40000, 1);
		for (int k = 0; k < 3; k++) {
			uint64_t inner = op_start + 1000 + (uint64_t)k * 12000;
			slice("cpu_op", ops[pick(NOPS)], pid, tid_main, inner, 10000, 1);
			alloc_at(inner + 500, tid_main);
			launch(inner + 2000);
		}
		ns = op_start + 41000;
	}
	for (int layer = 0; layer < 24 && written < limit; layer++) {
		uint64_t op_start = ns;
		slice("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", pid, tid_bwd, op_start, 30000, 0);
		alloc_at(op_start + 1000, tid_bwd);
		launch(op_start + 2000);
		free_some(op_start + 10000, tid_bwd, nlive > 40 ? nlive - 4 : nlive);
		ns = op_start + 31000;
	}
	return ns;
}

typedef uint64_t (*layer_fn)(uint64_t ns);

/* One trace of the shape (layer NULL: mixed) on standard output. */
static void generate(layer_fn layer, uint64_t mb)
{
	static char buf[1 << 20];
	setvbuf(stdout, buf, _IOFBF, sizeof buf);
	out("{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": 8},\n"
	    "  \"deviceProperties\": [{\"id\": 0, \"name\": \"Synthetic GPU\", \"totalGlobalMem\": 85899345920}],\n"
	    "  \"baseTimeNanoseconds\": 1767189312000000000,\n  \"traceEvents\": [", rank_id);
	sep();
	out("  {\n    \"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 0.000, \"pid\": %d, \"tid\": %d,\n"
	    "    \"args\": {\n      \"name\": \"pt_autograd_0\"\n    }\n  }", pid, tid_bwd);
	uint64_t ns = 1419116105360746ull, limit = mb << 20;
	for (int step = 1; written < limit; step++) {
		uint64_t step_start = ns;
		char nm[64];
		snprintf(nm, sizeof nm, "ProfilerStep#%d", step);
		if (layer) {
			ns += 1000;
			for (cur_layer = 0; cur_layer < 24 && written < limit; cur_layer++)
				ns = layer(ns);
		} else {
			ns = step_mixed(ns, limit);
		}
		free_some(ns, tid_main, 8);
		ns += 1000;
		slice("user_annotation", nm, pid, tid_main, step_start, ns - step_start, 0);
		ns += 5000;
	}
	free_some(ns, tid_main, 0);
	out("\n  ],\n  \"traceName\": \"synthetic\"\n}\n");
	fflush(stdout);
}

static int usage(FILE *f, int code)
{
	fprintf(f, "usage: gen-trace [--shape mixed|host|unique|memory|long] [--mb N] [--rank R] [--seed S] > trace.json\n"
			"       gen-trace [--shape S] [--mb N] [--seed S] --ranks K --dir DIR  (DIR/rankR.json, N/K MiB each)\n"
			"  mixed   about a third memory events, nested ops with record_shapes args (default)\n"
			"  host    deep python_function/cpu_op stacks, about 20 host slices per memory event\n"
			"  unique  the host shape with random stacks: almost every allocation in a new context\n"
			"  memory  mostly memory events\n"
			"  long    long names and args (with_stack paths, many-input shapes, Call stack strings)\n");
	return code;
}

int main(int argc, char **argv)
{
	uint64_t mb = 64;
	int ranks = 0;
	const char *dir = NULL;
	layer_fn layer = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mb") && i + 1 < argc)
			mb = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--rank") && i + 1 < argc)
			rank_id = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			rng ^= strtoull(argv[++i], NULL, 10) * 0x9e3779b97f4a7c15ull;
		else if (!strcmp(argv[i], "--ranks") && i + 1 < argc)
			ranks = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
			const char *s = argv[++i];
			if (!strcmp(s, "mixed"))
				layer = NULL;
			else if (!strcmp(s, "host"))
				layer = layer_host;
			else if (!strcmp(s, "unique"))
				layer = layer_unique;
			else if (!strcmp(s, "memory"))
				layer = layer_memory;
			else if (!strcmp(s, "long"))
				layer = layer_long;
			else
				return usage(stderr, 2);
		} else if (!strcmp(argv[i], "--help"))
			return usage(stdout, 0);
		else
			return usage(stderr, 2);
	}
	if (!ranks != !dir || ranks < 0)
		return usage(stderr, 2);
	if (!ranks) {
		rng ^= (uint64_t)rank_id * 0x2545f4914f6cdd1dull;
		generate(layer, mb);
		return ferror(stdout) ? 1 : 0;
	}
	/* Each rank in a child of its own: every rank starts from the same state, rank aside. */
	uint64_t per = (mb + (uint64_t)ranks - 1) / (uint64_t)ranks;
	for (int r = 0; r < ranks; r++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/rank%d.json", dir, r);
		pid_t c = fork();
		if (c == 0) {
			if (!freopen(path, "w", stdout)) {
				perror(path);
				_exit(1);
			}
			rank_id = r;
			rng ^= (uint64_t)rank_id * 0x2545f4914f6cdd1dull;
			generate(layer, per);
			_exit(fclose(stdout) ? 1 : 0);
		}
		int st;
		if (c < 0 || waitpid(c, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	return 0;
}
