/* args: hmem's command line (args.h). */
#include "args.h"
#include "allocations.h"
#include "budget.h"
#include "html.h"
#include "outfile.h"
#include "partial.h"
#include "plan.h"
#include "perfetto.h"
#include "util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef HM_VERSION
#define HM_VERSION "0.0.0"
#endif

static const char usage[] =
	"usage: hmem run RULES PATH... [options]   classify every allocation with RULES and report\n"
	"       hmem events PATH... [options]      every memory event with its context, as CSV\n"
	"       hmem allocations RULES PATH... [options]  one row per allocation, classified, as CSV\n"
	"       hmem packs [-I DIR] [--timeout SEC] [--lua-mem MB]  list the rule packs hmem can find\n"
	"       hmem diff [RULES] BEFORE AFTER [options]  what changed between two runs\n"
	"       hmem plan PATH... [--shard I/N]   the traces one run reads, with sizes and a hash\n"
	"       hmem merge RULES PARTIAL... [output options of run] [options]  finish the report of\n"
	"                                         shards: RULES is the rule file they ran (checked\n"
	"                                         by its digest)\n"
	"       hmem --help | -V, --version\n"
	"\n"
	"PATH is a trace file (.json or .json.gz, gzip found by content) or a directory: every\n"
	"*.json and *.json.gz below it, sorted by path. RULES is a Lua rule file defining\n"
	"classify(row) (or returning a pack table), or the name of a pack: size, op, phase,\n"
	"lifetime, pytorch, or one found on -I / HMEM_PATH.\n"
	"\n"
	"run options:\n";
/* Then the outputs of run (from the table of outputs), then: */
static const char usage_run[] =
	"  --summary         print the summary table even with another output\n"
	"  --format F        the summary as text (the default), csv or json (implies --summary)\n"
	"  --color WHEN      colour the text summary: auto (a terminal, unless NO_COLOR is set),\n"
	"                    always or never\n"
	"  --top N           allocations listed as live at each peak (default 20)\n"
	"  --steps A-B       report only steps A to B (ProfilerStep#A to #B); what is live when\n"
	"                    they start is the category (before window)\n"
	"  --from T, --to T  report only from/to T: ms since the trace's start, or ts:T in its µs\n"
	"  -I DIR            look for packs and required modules in DIR (before HMEM_PATH)\n"
	"  --out DIR         directory where the rule file may write with hmem.write(name, text)\n"
	"  --allow-io        give the rule file the whole standard library (io, os, debug, ...)\n"
	"  --timeout SEC     stop a call into the rule file that runs longer (default 60; 0: never)\n"
	"  --lua-mem MB      most memory the rule file's Lua heap may use (default 4096; 0: no limit)\n"
	"  --fail-above B    exit 6 when a peak is above a budget B: SIZE (each device's peak),\n"
	"                    DEVICE=SIZE (cuda:0=40GiB, cuda:*=40GiB) or CATEGORY=SIZE\n"
	"                    (activation=12GiB); sizes in B, kB, MB, GB, ... or KiB, MiB, GiB, ...;\n"
	"                    repeatable\n"
	"  --set KEY=VALUE   a parameter for the rule file, read as hmem.args.KEY; repeatable\n"
	"events options:\n";
/* Then the outputs of events, then: */
/* Then the outputs of allocations, then: */
static const char usage_alloc[] =
	"allocations options: -I, --out, --allow-io, --timeout and --lua-mem as for run, and\n";
static const char usage_common[] =
	"merge options: -I, --out, --allow-io, --timeout and --lua-mem as for run, for RULES, from\n"
	"  this command line only, never from a partial: a partial is data. The partials give the\n"
	"  options that shape results (--set, --top, --steps, --from, --to) and must agree on them\n"
	"common options (run, events, allocations, merge):\n"
	"  --keep-going      skip traces that cannot be read (each is reported), write the results of\n"
	"                    the others, then exit with 4\n"
	"  -q, --quiet       no warnings on standard error\n"
	"  -v, --verbose     time and counts per stage on standard error\n"
	"  -j N              read with N threads: N traces at a time, or fewer traces\n"
	"                    each on more threads (default: the number of cores)\n"
	"\n"
	"exit codes: 0 ok, 1 internal error, 2 usage, 3 rule file error, 4 bad or missing trace,\n"
	"            5 file could not be read or written, 6 over budget (or hmem.fail)\n";


const hm_output outputs[N_OUTPUTS] = {
#define HM_OUTPUT_ROW(id, ...) [OUT_##id] = {__VA_ARGS__},
	HM_OUTPUTS(HM_OUTPUT_ROW)
#undef HM_OUTPUT_ROW
};

/* The summary of 'hmem run' on standard output, one row per --format (named in flag). */
const hm_output formats[N_FORMATS] = {
	{.flag = "text", .cmd = "run", .write = hm_write_summary},
	{.flag = "csv", .cmd = "run", .write = hm_write_summary_csv},
	{.flag = "json", .cmd = "run", .write = hm_write_json},
};

int hm_usage_error(const char *fmt, const char *arg)
{
	hm_eprintf("hmem: ");
	hm_eprintf(fmt, arg);
	hm_eprintf("\nTry 'hmem --help'.\n");
	return HM_EXIT_USAGE;
}

/* Most --lua-mem takes: 100 TB, and no more than a size_t holds in bytes. */
#define LUA_MEM_MAX ((double)SIZE_MAX / 1048576.0 < 1e8 ? (double)SIZE_MAX / 1048576.0 : 1e8)

/* A number option's value: the whole argument a finite decimal number in [lo, hi]. */
static int num_arg(const char *s, double lo, double hi, double *v)
{
	char *end;
	if (!*s || strspn(s, "0123456789.eE+-") != strlen(s))
		return 0; /* decimal only: no "nan", "inf", hex or spaces */
	*v = strtod(s, &end);
	return !*end && isfinite(*v) && *v >= lo && *v <= hi;
}

/* The same for a count: decimal digits only. */
static int int_arg(const char *s, double lo, double hi, double *v)
{
	return strspn(s, "0123456789") == strlen(s) && num_arg(s, lo, hi, v);
}

/* hmem diff's options (diff.c parses them). */
static const char usage_diff[] =
	"diff options (hmem diff [RULES] BEFORE AFTER: each side an hmem --json report, or a\n"
	"trace file or folder read with RULES):\n"
	"  --json FILE       write the comparison as JSON (- for standard output)\n"
	"  --html FILE       write the comparison as a page: a line per pair, then per pair\n"
	"                    both timelines on one time axis and the change per category\n"
	"  --format F        standard output as text (the default), csv or json\n"
	"  --summary         print to standard output even with --json or --html\n"
	"  --fail-above-delta D  exit 6 when the peak grew by more than D: SIZE or PCT% (the\n"
	"                    peak), DEVICE=..., or CATEGORY=... (activation=5%); repeatable\n"
	"  --top N           groups by op and by module shown per series (default 10)\n"
	"  --changed-only    leave out the rows, and the pairs of series, that did not change\n"
	"  --timeout, --lua-mem  as for run: for trace sides, and for the comparison itself\n"
	"  -I, --set, --allow-io, -j, -q: as for run, for trace sides\n";

/* --help: the options, with each output's line where its command's options are. */
void hm_print_usage(FILE *f)
{
	const char *part[] = {usage, usage_run, usage_alloc, usage_diff, usage_common}, *cmd[] = {"run", "events", "allocations"};
	for (int i = 0; i < 5; i++) {
		fputs(part[i], f);
		for (int j = 0; i < 3 && j < N_OUTPUTS; j++) {
			char opt[64];
			snprintf(opt, sizeof opt, "%s FILE", outputs[j].flag);
			if (!strcmp(outputs[j].cmd, cmd[i]))
				fprintf(f, "  %-17s %s\n", opt, outputs[j].help);
		}
	}
}

/* The row of an output option, the command's own when two commands share the flag, or -1. */
static int output_of(const char *flag, const char *cmd)
{
	int any = -1;
	for (int j = 0; j < N_OUTPUTS; j++)
		if (!strcmp(flag, outputs[j].flag)) {
			if (!strcmp(cmd, outputs[j].cmd))
				return j;
			any = any < 0 ? j : any;
		}
	return any;
}

/* The commands that classify with a rule file: RULES first, and its options. */
static int takes_rules(const char *cmd)
{
	return !strcmp(cmd, "run") || !strcmp(cmd, "allocations");
}

/* How many outputs the command line names. */
static int outputs_named(const hm_opts *o)
{
	int n = 0;
	for (int j = 0; j < N_OUTPUTS; j++)
		n += o->out[j] != NULL;
	return n;
}

/* What goes to standard output besides the outputs named: the summary of 'hmem run' (when
 * asked for, or when no output is named), or the output of 'hmem events' written by
 * default; NULL for none. */
static const hm_output *std_output(const hm_opts *o)
{
	if (!strcmp(o->cmd, "run")) {
		for (int i = 0; i < N_FORMATS; i++)
			if (!strcmp(o->format ? o->format : "text", formats[i].flag))
				return o->summary || !outputs_named(o) ? &formats[i] : NULL;
		return NULL;
	}
	for (int j = 0; j < N_OUTPUTS; j++)
		if (outputs[j].by_default && !strcmp(outputs[j].cmd, o->cmd) && !outputs_named(o))
			return &outputs[j];
	return NULL;
}

/* Where the argument of a repeatable option of run goes (--fail-above, --set), or NULL. */
static const char **list_slot(hm_opts *o, const char *a, int argc)
{
	if (!o->set)
		o->fail_above = hm_xcalloc((size_t)argc, sizeof *o->fail_above),
		o->set = hm_xcalloc((size_t)argc, sizeof *o->set);
	if (!strcmp(a, "--fail-above"))
		return &o->fail_above[o->nfail_above++];
	if (!strcmp(a, "--set"))
		return &o->set[o->nset++];
	return NULL;
}

/* --fail-above and --set are checked whole before anything is read: a budget that does
 * not parse, or a parameter without a name, is a usage error. The budgets go to o. */
static int check_budget_args(hm_opts *o)
{
	char err[1024];
	int rc = 0;
	if ((o->nfail_above || o->nset) && strcmp(o->cmd, "run"))
		return hm_usage_error("%s", "--fail-above and --set belong to 'hmem run'");
	for (int i = 0; i < o->nfail_above && !rc; i++)
		if (hm_budget_parse(&o->budgets, o->fail_above[i], err, sizeof err) != 0)
			rc = hm_usage_error("%s", err);
	for (int i = 0; i < o->nset && !rc; i++)
		if (!strchr(o->set[i], '=') || o->set[i][0] == '=')
			rc = hm_usage_error("--set needs KEY=VALUE (read as hmem.args.KEY), not '%s'", o->set[i]);
	return rc;
}


/* --steps A-B, --from T, --to T: one window, of hmem run only. */
static int window_args(hm_opts *o)
{
	char err[256];
	o->win = (hm_window){.from = HM_NONE, .to = HM_NONE};
	if (!o->steps && !o->from && !o->to)
		return 0;
	if (strcmp(o->cmd, "run"))
		return hm_usage_error("%s", "--steps, --from and --to belong to 'hmem run'");
	if (o->steps && (o->from || o->to))
		return hm_usage_error("%s", "--steps or --from/--to: one window");
	if ((o->steps && hm_window_steps(&o->win, o->steps, err, sizeof err)) ||
	    (o->from && hm_window_time(&o->win, o->from, 0, err, sizeof err)) ||
	    (o->to && hm_window_time(&o->win, o->to, 1, err, sizeof err)))
		return hm_usage_error("%s", err);
	if (o->from && o->to && o->win.from_abs == o->win.to_abs && o->win.from > o->win.to)
		return hm_usage_error("%s", "--from is after --to");
	return 0;
}

static int run_like(const char *cmd)
{
	return !strcmp(cmd, "run");
}

/* --shard needs --partial (or --db), and --partial is written alone: the report is
 * finished by hmem merge (README "Many machines"). I/N go to o. */
static int shard_args(hm_opts *o)
{
	if (o->shard && hm_plan_parse_shard(o->shard, &o->shard_i, &o->nshards))
		return hm_usage_error("--shard needs I/N, the part I of N (0 <= I < N <= 100000), not '%s'", o->shard);
	if (o->shard && !o->out[OUT_PARTIAL] && !o->out[OUT_DB])
		return hm_usage_error("%s", "--shard needs --partial FILE (its part, for hmem merge)");
	if (!o->out[OUT_PARTIAL])
		return 0;
	for (int j = 0; j < N_OUTPUTS; j++)
		if (j != OUT_PARTIAL && o->out[j])
			return hm_usage_error("--partial is written alone: give %s to hmem merge", outputs[j].flag);
	if (o->summary || o->nfail_above)
		return hm_usage_error("%s", "--partial is written alone: give --summary, --format and --fail-above to hmem merge");
	return 0;
}

int hm_parse_args(int argc, char **argv, hm_opts *o)
{
	int out;
	const char **lst;
	o->paths = hm_xcalloc((size_t)argc, sizeof *o->paths);
	o->inc = hm_xcalloc((size_t)argc, sizeof *o->inc);
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char **dst = NULL, *inc = NULL;
		if (strcmp(a, "-I") == 0)
			dst = &inc;
		else if (strncmp(a, "-I", 2) == 0)
			o->inc[o->ninc++] = a + 2;
		else if (strcmp(a, "--out") == 0)
			dst = &o->out_dir;
		else if (strcmp(a, "--top") == 0)
			dst = &o->top;
		else if (strcmp(a, "-j") == 0 || strcmp(a, "--jobs") == 0)
			dst = &o->jobs;
		else if (strncmp(a, "-j", 2) == 0 && a[2])
			o->jobs = a + 2;
		else if (strcmp(a, "--timeout") == 0)
			dst = &o->timeout;
		else if (strcmp(a, "--lua-mem") == 0)
			dst = &o->lua_mem;
		else if (strcmp(a, "--allow-io") == 0)
			o->allow_io = 1;
		else if ((out = output_of(a, o->cmd)) >= 0)
			dst = &o->out[out];
		else if ((lst = list_slot(o, a, argc)))
			dst = lst;
		else if (strcmp(a, "--format") == 0)
			dst = &o->format;
		else if (strcmp(a, "--color") == 0)
			dst = &o->color;
		else if (strcmp(a, "--keep-going") == 0)
			o->keep_going = 1;
		else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)
			o->quiet = 1;
		else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0)
			o->verbose = 1;
		else if (strcmp(a, "--summary") == 0)
			o->summary = 1;
		else if (strcmp(a, "--steps") == 0)
			dst = &o->steps;
		else if (strcmp(a, "--from") == 0)
			dst = &o->from;
		else if (strcmp(a, "--to") == 0)
			dst = &o->to;
		else if (strcmp(a, "--shard") == 0 && run_like(o->cmd))
			dst = &o->shard;
		else if (a[0] == '-' && a[1])
			return hm_usage_error("unknown option '%s'", a);
		else if (takes_rules(o->cmd) && !o->rules && !o->is_merge)
			o->rules = a;
		else
			o->paths[o->npaths++] = argv[i];
		if (dst) {
			if (++i >= argc)
				return hm_usage_error("%s needs an argument (see hmem --help)", a);
			*dst = argv[i];
			if (inc)
				o->inc[o->ninc++] = inc;
		}
	}
	int run = strcmp(o->cmd, "run") == 0;
	if (run && shard_args(o) != 0)
		return HM_EXIT_USAGE;
	/* Every number is checked whole (issue 11): strtod takes "nan" and "inf", and a NaN
	 * timeout compared as never reached; MB past what size_t holds is undefined. */
	double v;
	if (o->jobs && !int_arg(o->jobs, 1, 1024, &v))
		return hm_usage_error("-j needs a number of threads to read with, from 1 to 1024, not '%s'", o->jobs);
	if (o->timeout && !num_arg(o->timeout, 0, 1e6, &v))
		return hm_usage_error("--timeout needs seconds, a number from 0 (no limit) to 1000000, not '%s'", o->timeout);
	if (o->lua_mem && (!num_arg(o->lua_mem, 0, LUA_MEM_MAX, &v) || (v > 0 && v < 1)))
		return hm_usage_error("--lua-mem needs megabytes, a number from 1 to 100000000 or 0 (no limit), not '%s'",
				   o->lua_mem);
	if (o->top && !int_arg(o->top, 0, 1000000, &v))
		return hm_usage_error("--top needs a number from 0 to 1000000, not '%s'", o->top);
	if (check_budget_args(o) || window_args(o) != 0)
		return HM_EXIT_USAGE;
	hm_opts_values(o);
	if (!strcmp(o->cmd, "packs")) {
		if (o->npaths || outputs_named(o) || o->out_dir || o->top || o->summary || o->format || o->color)
			return hm_usage_error("%s", "packs takes only -I DIR, --timeout and --lua-mem");
		return 0;
	}
	if (!takes_rules(o->cmd) && (o->out_dir || o->top || o->allow_io || o->ninc || o->timeout || o->lua_mem))
		return hm_usage_error("%s", "-I, --out, --top, --allow-io, --timeout and --lua-mem belong to 'hmem run'");
	if (!run && o->top)
		return hm_usage_error("%s", "--top belongs to 'hmem run'");
	char msg[8192];
	for (int j = 0; j < N_OUTPUTS; j++)
		if (o->out[j] && strcmp(outputs[j].cmd, o->cmd)) {
			snprintf(msg, sizeof msg, "%s belongs to 'hmem %s'%s", outputs[j].flag, outputs[j].cmd,
				 outputs[j].misplaced ? outputs[j].misplaced : "");
			return hm_usage_error("%s", msg);
		}
	if (!run) {
		const char *run_only[][2] = {{"--summary", o->summary ? "" : NULL}, {"--format", o->format}, {"--color", o->color}};
		for (size_t i = 0; i < sizeof run_only / sizeof *run_only; i++)
			if (run_only[i][1])
				return hm_usage_error("%s belongs to 'hmem run'", run_only[i][0]);
	}
	int fi = 0;
	while (o->format && fi < N_FORMATS && strcmp(o->format, formats[fi].flag))
		fi++;
	if (fi == N_FORMATS)
		return hm_usage_error("--format is text, csv or json, not '%s'", o->format);
	if (o->format)
		o->summary = 1;
	if (o->color && strcmp(o->color, "auto") && strcmp(o->color, "always") && strcmp(o->color, "never"))
		return hm_usage_error("--color is auto, always or never, not '%s'", o->color);
	if (o->is_merge && o->npaths == 0)
		return hm_usage_error("%s", "merge needs the rule file the shards ran and their partials: hmem merge RULES "
				      "PARTIAL... [output options] (README \"Many machines\")");
	if (run && !o->rules && !o->is_merge)
		return hm_usage_error("%s", "run needs a rule file and at least one trace: hmem run RULES PATH...");
	if (takes_rules(o->cmd) && !o->rules && !o->is_merge)
		return hm_usage_error("%s", "allocations needs a rule file and at least one trace: hmem allocations RULES PATH...");
	if (o->npaths == 0)
		return hm_usage_error("%s: no trace file or directory given", o->cmd);
	o->std = std_output(o);
	int to_stdout = o->std != NULL;
	for (int j = 0; j < N_OUTPUTS; j++) {
		if (!o->out[j] || strcmp(o->out[j], "-"))
			continue;
		if (!outputs[j].stdout_ok)
			return hm_usage_error("%s cannot be written to standard output", outputs[j].flag);
		if (to_stdout++)
			return hm_usage_error("%s", "only one output can go to standard output");
	}
	for (int j = 0; j < N_OUTPUTS; j++) {
		if (!o->out[j] || !outputs[j].one_trace)
			continue;
		/* One trace in, one trace out; and never over the trace being read. */
		struct stat in, st;
		if (o->npaths != 1 || (stat(o->paths[0], &in) == 0 && S_ISDIR(in.st_mode))) {
			snprintf(msg, sizeof msg, "%s needs exactly one trace file (not a directory)", outputs[j].flag);
			return hm_usage_error("%s", msg);
		}
		if (stat(o->paths[0], &in) == 0 && stat(o->out[j], &st) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino) {
			snprintf(msg, sizeof msg, "%s %s would replace the trace being read; write elsewhere", outputs[j].flag,
				 o->out[j]);
			return hm_usage_error("%s", msg);
		}
	}
	return 0;
}
/* Every default of an option is here (and in the two constants of args.h). */
void hm_opts_values(hm_opts *o)
{
	o->timeout_s = o->timeout ? strtod(o->timeout, NULL) : HM_TIMEOUT_DEFAULT;
	o->lua_mem_bytes = (size_t)((o->lua_mem ? strtod(o->lua_mem, NULL) : HM_LUA_MEM_DEFAULT_MB) * 1048576.0);
	o->top_n = o->top ? (size_t)strtol(o->top, NULL, 10) : 20;
	long jobs = o->jobs ? strtol(o->jobs, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
	o->njobs = (int)(jobs > 0 ? jobs : 1);
	if (!o->shard) /* else parsed by hm_parse_args */
		o->shard_i = 0, o->nshards = 1;
}

void hm_opts_free(hm_opts *o)
{
	free(o->paths), free(o->inc), free(o->fail_above), free(o->set);
	hm_budgets_free(&o->budgets);
	o->paths = NULL, o->inc = NULL, o->fail_above = NULL, o->set = NULL;
}

int hm_check_outputs(const hm_opts *o, char **files, int nfiles)
{
	const char *const *paths = o->out;
	enum { N = N_OUTPUTS };
	struct stat st[N], in;
	char *canon[N] = {0}, msg[8192];
	int file[N] = {0}, bad = 0;
	for (int i = 0; i < N && !bad; i++) {
		if (!paths[i] || !(file[i] = hm_out_file_id(paths[i], &st[i], &canon[i])))
			continue;
		for (int j = 0; j < i && !bad; j++) {
			if (!file[j])
				continue;
			int both = st[i].st_nlink && st[j].st_nlink;
			if (both ? st[i].st_dev == st[j].st_dev && st[i].st_ino == st[j].st_ino : !strcmp(canon[i], canon[j])) {
				snprintf(msg, sizeof msg, "%s %s and %s %s are the same file: give each output its own",
					 outputs[j].flag, paths[j], outputs[i].flag, paths[i]);
				bad = 1;
			}
		}
		for (int k = -1; k < nfiles && st[i].st_nlink && !bad; k++) {
			const char *ip = k < 0 ? o->rules : files[k];
			if (ip && stat(ip, &in) == 0 && in.st_dev == st[i].st_dev && in.st_ino == st[i].st_ino) {
				snprintf(msg, sizeof msg, "%s %s would replace the %s %s being read: write elsewhere", outputs[i].flag,
					 paths[i], k < 0 ? "rule file" : "trace", ip);
				bad = 1;
			}
		}
	}
	for (int i = 0; i < N; i++)
		free(canon[i]);
	return bad ? hm_usage_error("%s", msg) : 0;
}
