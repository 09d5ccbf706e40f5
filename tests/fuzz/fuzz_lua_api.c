/* libFuzzer target over the scripting API (issue 12, "Contain"): the input becomes a rule
 * file, which hmem loads (hm_script_open, the sandbox, --timeout 5, --lua-mem 64) and
 * runs over a small trace: classify, the timeline, the declared aggregations, done(report)
 * and the --json writer.
 *
 * An input that starts with "--" is Lua source as it is (the regressions are readable rule
 * files). Any other input is a program for a small generator: each byte picks a statement
 * (an hmem.* call, a change to what one returned, to hmem itself, to the string metatable,
 * math or cjson, a require) and the next bytes its operands, from pools of valid and
 * hostile values. Every statement runs in a pcall, so a rule file mostly loads and the
 * later ones still run. Then classify and done get statements of their own.
 *
 * What is checked: no sanitizer report and no crash (a rule file must never be able to
 * make hmem read what it did not check), and an error always comes with a message.
 *
 * Linked with tests/fuzz/replay.c instead of libFuzzer, it runs files given on the
 * command line (tests/run replays tests/fuzz/regressions-lua/). */
#define _GNU_SOURCE
#include "analyze.h"
#include "fuzz_report.h"
#include "output.h"
#include "script.h"
#include "timeline.h"
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char trace_json[] =
	"{\"traceEvents\": [\n"
	"{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#2\", \"pid\": 10, \"tid\": 10, \"ts\": 99, \"dur\": 20},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::empty\", \"pid\": 10, \"tid\": 10, \"ts\": 100, \"dur\": 5.5},\n"
	"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 10, \"tid\": 10, \"ts\": 111, \"dur\": 2},\n"
	"{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 10, \"tid\": 10, \"ts\": 101.25, \"args\": "
	"{\"Total Reserved\": 2097152, \"Total Allocated\": 1024, \"Bytes\": 1024, \"Addr\": 4096, \"Device Id\": 0, \"Device Type\": 1}},\n"
	"{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 10, \"tid\": 10, \"ts\": 102.5, \"args\": "
	"{\"Total Reserved\": 2097152, \"Total Allocated\": 1536, \"Bytes\": 512, \"Addr\": 8192, \"Device Id\": 0, \"Device Type\": 1}},\n"
	"{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 10, \"tid\": 10, \"ts\": 110, \"args\": "
	"{\"Total Reserved\": 2097152, \"Total Allocated\": 512, \"Bytes\": -1024, \"Addr\": 4096, \"Device Id\": 0, \"Device Type\": 1}},\n"
	"{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 10, \"tid\": 10, \"ts\": 112, \"args\": "
	"{\"Total Reserved\": 4194304, \"Total Allocated\": 768, \"Bytes\": 256, \"Addr\": 4096, \"Device Id\": 0, \"Device Type\": 1}},\n"
	"{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 10, \"tid\": 10, \"ts\": 113, \"args\": "
	"{\"Total Reserved\": 4194304, \"Total Allocated\": 256, \"Bytes\": -512, \"Addr\": 8192, \"Device Id\": 0, \"Device Type\": 1}}\n"
	"]}\n";

static int g_fd = -1;
static char g_path[64];

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_lua_api: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

/* The rule file lives in a memory file, so hmem loads it by path as it loads any. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	g_fd = memfd_create("hmem-fuzz-rules.lua", 0);
	if (g_fd < 0)
		die("memfd_create failed", NULL);
	snprintf(g_path, sizeof g_path, "/proc/self/fd/%d", g_fd);
	return 0;
}

/* ---- the generator ---- */

typedef struct gen {
	const uint8_t *p, *e;
	FILE *out;
	int naggs;
} gen;

static unsigned take(gen *g)
{
	return g->p < g->e ? *g->p++ : 0;
}

/* Values of every kind, valid ones for each argument and hostile ones. */
static const char *const values[] = {
	"nil", "true", "false", "0", "-1", "1e9", "2^53", "math.huge", "0/0", "math.mininteger", "3",
	"\"\"", "\"op\"", "\"bytes\"", "\"x\\0y\"", "\"live_at_peak\"", "\"live_at_end\"", "\"all\"", "\"category\"",
	"\"lifetime\"", "\"ops\"", "\"annotations\"", "\"stack\"", "\"kind\"", "\"step\"", "\"nope\"",
	"{}", "{\"op\"}", "{\"op\", \"category\"}", "{\"kind\", F.key}", "{12345}", "{{}}",
	"F.key", "F.num", "F.boom", "F.tab", "F.long", "F.nul", "F.row", "F.yes", "F.no",
	"D[1]", "D[#D]", "hmem", "S.trap", "S.self", "string.rep(\"a\", 100000)", "12345",
	"{name = \"x\", by = 12345}", "{name = \"y\", by = \"op\"}", "setmetatable({}, {__index = F.boom})",
	"S.deep", "\"[[[[1]]]]\"", "string.rep(\"[\", 5000)", "cjson.null", "cjson", "string", "math",
	"getmetatable(\"\")", "R",
};
#define NVALUES (sizeof values / sizeof *values)

static const char *value(gen *g)
{
	return values[take(g) % NVALUES];
}

static const char *const bys[] = {"\"op\"", "{\"category\", \"op\"}", "F.key", "{F.num, \"kind\"}", "\"ops\"",
				  "{\"ops\", \"annotations\"}", "\"step\"", "{\"device\", \"rank\", F.key}"};
static const char *const fields[] = {"op", "bytes", "category", "lifetime", "ops", "kind", "step", "ts",
				     "free_ts", "annotations", "stack", "device", "nope", "before_trace"};
static const char *const modules[] = {"hmem", "cjson", "cjson.safe", "hmem.rules.size", "hmem.rules.pytorch",
				      "hmem.testing", "os", "io", "debug", "nope", "hmem.nope"};
static const char *const libkeys[] = {"string.format", "string.rep", "math.floor", "math.abs", "table.concat",
				      "hmem.human", "hmem.aggregate", "hmem.cache_by", "hmem._aggregations",
				      "hmem.bucket", "cjson.encode", "cjson.decode", "os.time"};

#define PICK(g, a) (a[take(g) % (sizeof a / sizeof *a)])

/* One statement that may call into hmem or change what it handed out. */
static void statement(gen *g, int where)
{
	FILE *o = g->out;
	fputs("pcall(function() ", o);
	switch (take(g) % 24) {
	case 0: /* a declaration, mostly valid */
	case 1: {
		unsigned m = take(g);
		fprintf(o, "D[#D + 1] = hmem.aggregate{name = %s%d, by = %s", m & 1 ? "\"agg\" .. " : "", g->naggs++,
			m & 2 ? value(g) : PICK(g, bys));
		if (m & 4)
			fprintf(o, ", sum = %s", m & 8 ? value(g) : "\"bytes\"");
		if (m & 16)
			fprintf(o, ", max = %s", m & 32 ? value(g) : "\"lifetime\"");
		if (m & 64)
			fprintf(o, ", where = %s, top = %s", value(g), value(g));
		if (m & 128)
			fprintf(o, ", count = %s", value(g));
		fputs("}", o);
		break;
	}
	case 2: fprintf(o, "D[#D].name = %s", value(g)); break;
	case 3: fprintf(o, "D[#D].by = %s", value(g)); break;
	case 4: fprintf(o, "D[#D].by[1] = %s", value(g)); break;
	case 5: fprintf(o, "D[#D].where = %s; D[#D].sum = %s", value(g), value(g)); break;
	case 6: fprintf(o, "hmem._aggregations = {%s, {name = %s, by = %s}}", value(g), value(g), value(g)); break;
	case 7: fprintf(o, "%s = %s", PICK(g, libkeys), value(g)); break;
	case 8: fprintf(o, "hmem.cache_by(%s)", value(g)); break;
	case 9: fprintf(o, "V = hmem.human(%s)", value(g)); break;
	case 10: fprintf(o, "V = hmem.bucket(%s, %s, %s)", value(g), value(g), value(g)); break;
	case 11: fprintf(o, "cjson.%s_max_depth(%s)", take(g) & 1 ? "encode" : "decode", value(g)); break;
	case 12: fprintf(o, "V = cjson.decode(%s)", value(g)); break;
	case 13: fprintf(o, "V = cjson.encode(%s)", value(g)); break;
	case 14: fprintf(o, "getmetatable(\"\").__index = %s", value(g)); break;
	case 15: fprintf(o, "getmetatable(\"\").__index.format = %s", value(g)); break;
	case 16: fprintf(o, "V = require(\"%s\")", PICK(g, modules)); break;
	case 17: fprintf(o, "setmetatable(D[#D], {__index = %s, __newindex = %s})", value(g), value(g)); break;
	case 18: fprintf(o, "D[#D + 1] = hmem.aggregate(%s)", value(g)); break;
	case 19: /* a table changed after it was declared */
		fprintf(o, "local t = {name = \"t%d\", by = {\"op\"}}; D[#D + 1] = hmem.aggregate(t); t.name = %s; t.by[1] = %s",
			g->naggs++, value(g), value(g));
		break;
	case 20: fputs("collectgarbage()", o); break;
	case 21: fprintf(o, "V = (\"%%s %%d\"):format(%s, %s)", value(g), value(g)); break;
	case 22:
		if (where == 1)
			fprintf(o, "getmetatable(R).__index = %s", value(g));
		else if (where == 2)
			fprintf(o, "local s = report.series[1]; V = s:timeline(%s, {points = %s}); V = s:live_at(%s)", value(g),
				value(g), value(g));
		else
			fprintf(o, "V = load(%s)", value(g));
		break;
	default:
		if (where == 1)
			fprintf(o, "V = R[\"%s\"]", PICK(g, fields));
		else if (where == 2)
			fputs("for n, a in pairs(report.aggregations) do for _, r in ipairs(a.rows) do V = r[a.columns[1]] end end",
			      o);
		else
			fprintf(o, "V = hmem.write(%s, %s)", value(g), value(g));
		break;
	}
	fputs(" end)\n", o);
}

static char *generate(const uint8_t *data, size_t size, size_t *len)
{
	char *src;
	gen g = {data, data + size, open_memstream(&src, len), 0};
	FILE *o = g.out;
	fputs("local hmem = require \"hmem\"\nlocal cjson = require \"cjson\"\n"
	      "D, V, R = {}, nil, nil\n"
	      "F = {key = function(r) return r.op end, num = function(r) return r.bytes % 3 end,\n"
	      "  boom = function() error(\"boom\") end, tab = function() return {} end,\n"
	      "  long = function(r) return string.rep(\"k\", 1000) .. tostring(r.ts) end,\n"
	      "  nul = function(r) return \"a\\0\" .. r.kind end, row = function(r) return r end,\n"
	      "  yes = function() return true end, no = function() return false end}\n"
	      "S = {trap = setmetatable({}, {__index = function() error(\"trap\") end}), deep = {}}\n"
	      "S.self = S; for _ = 1, 1100 do S.deep = {S.deep} end\n",
	      o);
	int n = 0;
	while (g.p < g.e && n++ < 48 && take(&g) != 0xff)
		statement(&g, 0);
	fputs("function classify(row)\n  R = row\n", o);
	for (int i = 0, k = (int)(take(&g) % 4); i < k; i++)
		statement(&g, 1);
	unsigned c = take(&g) % 4;
	fprintf(o, "  return %s\nend\nfunction done(report)\n",
		c == 0 ? "\"c\"" : c == 1 ? "row.op" : c == 2 ? "tostring(row.bytes % 3)" : "V");
	for (int i = 0, k = (int)(take(&g) % 4); i < k; i++)
		statement(&g, 2);
	fputs("end\n", o);
	fclose(o);
	return src;
}

/* ---- the run ---- */

static void run(const char *src, size_t len)
{
	if (ftruncate(g_fd, 0) != 0 || (len && pwrite(g_fd, src, len, 0) != (ssize_t)len))
		die("cannot write the memory file", NULL);
	hm_script_opts so = {0};
	so.rules = g_path;
	so.timeout_s = 5;
	so.mem_limit = 64u << 20;
	char err[4096] = "";
	hm_strtab cats = {0};
	hm_strtab_intern(&cats, "(before trace)", 14);
	hm_script *s = hm_script_open(&so, &cats, err, sizeof err);
	if (!s) {
		if (!err[0])
			die("a rule file failed to load without a message", NULL);
		hm_strtab_free(&cats);
		return;
	}
	hm_trace *t = hm_trace_parse("fuzz.json", trace_json, sizeof trace_json - 1, err, sizeof err);
	if (!t)
		die("the built-in trace does not parse", err);
	hm_file *f = hm_analyze(t);
	hm_report rep = fuzz_report(&f, &cats, NULL);
	if (hm_script_classify(s, f, &cats, err, sizeof err) == 0) {
		for (size_t i = 0; i < f->nseries; i++)
			hm_timeline(&f->series[i], &t->mem, cats.n);
		rep.rules = hm_script_name(s);
		if (hm_script_finish(s, &rep, err, sizeof err) == 0) {
			fuzz_write_json_summary(&rep);
		} else if (!err[0]) {
			die("done or an aggregation failed without a message", NULL);
		}
	} else if (!err[0]) {
		die("classify failed without a message", NULL);
	}
	hm_script_close(s);
	for (size_t i = 0; i < rep.naggs; i++)
		hm_agg_free(&rep.aggs[i]);
	free(rep.aggs);
	hm_file_free(f);
	hm_strtab_free(&cats);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (g_fd < 0)
		LLVMFuzzerInitialize(NULL, NULL);
	if (size >= 2 && data[0] == '-' && data[1] == '-') {
		run((const char *)data, size);
		return 0;
	}
	size_t len;
	char *src = generate(data, size, &len);
	if (getenv("FUZZ_LUA_API_PRINT"))
		fputs(src, stderr);
	run(src, len);
	free(src);
	return 0;
}
