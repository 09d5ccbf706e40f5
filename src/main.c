/* hmem: where did my GPU memory go? Command line, and the one-way flow
 * files -> reader -> analysis -> classify -> timeline -> writers. */
#include "allocations.h"
#include "analyze.h"
#include "budget.h"
#include "diff.h"
#include "diffside.h"
#include "explain.h"
#include "html.h"
#include "input.h"
#include "loader.h"
#include "output.h"
#include "perfetto.h"
#include "script.h"
#include "timeline.h"
#include "watchdog.h"
#include "window.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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
	"common options:\n"
	"  --keep-going      skip traces that cannot be read (each is reported), write the results of\n"
	"                    the others, then exit with 4\n"
	"  -q, --quiet       no warnings on standard error\n"
	"  -v, --verbose     time and counts per stage on standard error\n"
	"  -j N              read with N threads: N traces at a time, or fewer traces\n"
	"                    each on more threads (default: the number of cores)\n"
	"\n"
	"exit codes: 0 ok, 1 internal error, 2 usage, 3 rule file error, 4 bad or missing trace,\n"
	"            5 file could not be read or written, 6 over budget (or hmem.fail)\n";

/* Every output written to a file the user names. Option parsing, --help, the checks (which
 * command it belongs to, standard output, the same file twice or over an input) and
 * writing all read this table, in this order: a new output is its writer (one file)
 * and one row here. */
typedef struct output {
	const char *flag;
	const char *help;     /* its line in --help (continued after "\n" + 20 spaces) */
	const char *cmd;      /* the command it belongs to */
	int stdout_ok;        /* may be "-": standard output */
	int by_default;       /* written to standard output when its command names no output */
	int one_trace;        /* reads the one trace again: needs exactly one trace file */
	const char *misplaced; /* added to "belongs to 'hmem CMD'" when given to another command */
	void (*write)(FILE *f, const hm_report *r);
	/* Or, for a writer that can fail: 0, or an exit code (HM_EXIT_*) with a message in err. */
	int (*write_or_fail)(FILE *f, const hm_report *r, const char *path, char *err, size_t errsz);
} output;

static const output outputs[] = {
	{.flag = "--json", .cmd = "run", .stdout_ok = 1, .write = hm_write_json,
	 .help = "write the report as JSON (- for standard output)"},
	{.flag = "--timeline", .cmd = "run", .stdout_ok = 1, .write = hm_write_timeline,
	 .help = "write the per-category timeline as CSV, one row per memory event"},
	{.flag = "--html", .cmd = "run", .stdout_ok = 1, .write = hm_write_html,
	 .help = "write an interactive report: a chart per series, tables (one file,\n                    opens offline)"},
	{.flag = "--perfetto", .cmd = "run", .stdout_ok = 1, .write = hm_write_perfetto,
	 .help = "write the timelines as Chrome-trace counter tracks (Perfetto UI)"},
	{.flag = "--annotate", .cmd = "run", .stdout_ok = 1, .one_trace = 1, .write_or_fail = hm_write_annotated,
	 .help = "write the trace (one) with those counter tracks added; gzip if FILE\n                    ends in .gz"},
	{.flag = "--csv", .cmd = "events", .stdout_ok = 1, .by_default = 1, .write = hm_write_events,
	 .misplaced = "; 'hmem run' writes --json and --timeline",
	 .help = "write the events there instead of standard output"},
	{.flag = "--csv", .cmd = "allocations", .stdout_ok = 1, .by_default = 1, .write = hm_write_allocations,
	 .help = "write the allocations there instead of standard output"},
};
enum { N_OUTPUTS = sizeof outputs / sizeof *outputs };

/* The summary of 'hmem run' on standard output, one row per --format (named in flag). */
static const output formats[] = {
	{.flag = "text", .cmd = "run", .write = hm_write_summary},
	{.flag = "csv", .cmd = "run", .write = hm_write_summary_csv},
	{.flag = "json", .cmd = "run", .write = hm_write_json},
};
enum { N_FORMATS = sizeof formats / sizeof *formats };

typedef struct opts {
	const char *cmd, *rules, *out_dir, *top, *jobs, *timeout, *lua_mem, *format, *color;
	const char *out[N_OUTPUTS]; /* the path of each output, NULL when not asked for */
	const output *std;          /* what else goes to standard output, or NULL */
	char **paths;
	const char **inc;
	int npaths, ninc, keep_going, quiet, summary, allow_io, verbose;
	const char **fail_above, **set; /* repeatable: --fail-above, --set */
	int nfail_above, nset;
	/* hmem diff: the finished report goes here instead of the outputs (no budgets). */
	void (*sink)(const hm_report *r, void *ctx);
	void *sink_ctx;
	const char *steps, *from, *to; /* the window (window.h) */
	hm_window win;
} opts;

/* Seconds spent per stage, for --verbose. */
enum { ST_READ, ST_ANALYZE, ST_CLASSIFY, ST_TIMELINE, ST_FINISH, ST_OUTPUT, ST_N };
static const char *const stage_names[ST_N] = {"read", "sort+pair+context", "classify", "timeline",
					       "aggregate+done", "output"};
static double stage_s[ST_N];

static int usage_error(const char *fmt, const char *arg)
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

/* --help: the options, with each output's line where its command's options are. */
static void print_usage(FILE *f)
{
	const char *part[] = {usage, usage_run, usage_alloc, hm_diff_usage, usage_common}, *cmd[] = {"run", "events", "allocations"};
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
static int outputs_named(const opts *o)
{
	int n = 0;
	for (int j = 0; j < N_OUTPUTS; j++)
		n += o->out[j] != NULL;
	return n;
}

/* What goes to standard output besides the outputs named: the summary of 'hmem run' (when
 * asked for, or when no output is named), or the output of 'hmem events' written by
 * default; NULL for none. */
static const output *std_output(const opts *o)
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
static const char **list_slot(opts *o, const char *a, int argc)
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
 * not parse, or a parameter without a name, is a usage error. */
static int check_budget_args(const opts *o)
{
	char err[1024];
	hm_budgets b = {0};
	int rc = 0;
	if ((o->nfail_above || o->nset) && strcmp(o->cmd, "run"))
		return usage_error("%s", "--fail-above and --set belong to 'hmem run'");
	for (int i = 0; i < o->nfail_above && !rc; i++)
		if (hm_budget_parse(&b, o->fail_above[i], err, sizeof err) != 0)
			rc = usage_error("%s", err);
	hm_budgets_free(&b);
	for (int i = 0; i < o->nset && !rc; i++)
		if (!strchr(o->set[i], '=') || o->set[i][0] == '=')
			rc = usage_error("--set needs KEY=VALUE (read as hmem.args.KEY), not '%s'", o->set[i]);
	return rc;
}

/* Cut a file to the window; a trace without the window's steps keeps nothing (said). */
static void apply_window(hm_file *f, const hm_window *w, int quiet)
{
	int64_t from, to;
	if (hm_window_bounds(w, f->t, &from, &to) != 0 && !quiet)
		hm_eprintf("hmem: warning: %s has no ProfilerStep#%d to #%d: nothing of it is in the window\n", f->t->path,
			   (int)w->step_a, (int)w->step_b);
	hm_window_apply(f, from, to);
}

/* --steps A-B, --from T, --to T: one window, of hmem run only. */
static int window_args(opts *o)
{
	char err[256];
	o->win = (hm_window){.from = HM_NONE, .to = HM_NONE};
	if (!o->steps && !o->from && !o->to)
		return 0;
	if (strcmp(o->cmd, "run"))
		return usage_error("%s", "--steps, --from and --to belong to 'hmem run'");
	if (o->steps && (o->from || o->to))
		return usage_error("%s", "--steps or --from/--to: one window");
	if ((o->steps && hm_window_steps(&o->win, o->steps, err, sizeof err)) ||
	    (o->from && hm_window_time(&o->win, o->from, 0, err, sizeof err)) ||
	    (o->to && hm_window_time(&o->win, o->to, 1, err, sizeof err)))
		return usage_error("%s", err);
	if (o->from && o->to && o->win.from_abs == o->win.to_abs && o->win.from > o->win.to)
		return usage_error("%s", "--from is after --to");
	return 0;
}

static int parse_args(int argc, char **argv, opts *o)
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
		else if (a[0] == '-' && a[1])
			return usage_error("unknown option '%s'", a);
		else if (takes_rules(o->cmd) && !o->rules)
			o->rules = a;
		else
			o->paths[o->npaths++] = argv[i];
		if (dst) {
			if (++i >= argc)
				return usage_error("%s needs an argument (see hmem --help)", a);
			*dst = argv[i];
			if (inc)
				o->inc[o->ninc++] = inc;
		}
	}
	int run = strcmp(o->cmd, "run") == 0;
	/* Every number is checked whole (issue 11): strtod takes "nan" and "inf", and a NaN
	 * timeout compared as never reached; MB past what size_t holds is undefined. */
	double v;
	if (o->jobs && !int_arg(o->jobs, 1, 1024, &v))
		return usage_error("-j needs a number of threads to read with, from 1 to 1024, not '%s'", o->jobs);
	if (o->timeout && !num_arg(o->timeout, 0, 1e6, &v))
		return usage_error("--timeout needs seconds, a number from 0 (no limit) to 1000000, not '%s'", o->timeout);
	if (o->lua_mem && (!num_arg(o->lua_mem, 0, LUA_MEM_MAX, &v) || (v > 0 && v < 1)))
		return usage_error("--lua-mem needs megabytes, a number from 1 to 100000000 or 0 (no limit), not '%s'",
				   o->lua_mem);
	if (o->top && !int_arg(o->top, 0, 1000000, &v))
		return usage_error("--top needs a number from 0 to 1000000, not '%s'", o->top);
	if (check_budget_args(o) || window_args(o) != 0)
		return HM_EXIT_USAGE;
	if (!strcmp(o->cmd, "packs")) {
		if (o->npaths || outputs_named(o) || o->out_dir || o->top || o->summary || o->format || o->color)
			return usage_error("%s", "packs takes only -I DIR, --timeout and --lua-mem");
		return 0;
	}
	if (!takes_rules(o->cmd) && (o->out_dir || o->top || o->allow_io || o->ninc || o->timeout || o->lua_mem))
		return usage_error("%s", "-I, --out, --top, --allow-io, --timeout and --lua-mem belong to 'hmem run'");
	if (!run && o->top)
		return usage_error("%s", "--top belongs to 'hmem run'");
	char msg[8192];
	for (int j = 0; j < N_OUTPUTS; j++)
		if (o->out[j] && strcmp(outputs[j].cmd, o->cmd)) {
			snprintf(msg, sizeof msg, "%s belongs to 'hmem %s'%s", outputs[j].flag, outputs[j].cmd,
				 outputs[j].misplaced ? outputs[j].misplaced : "");
			return usage_error("%s", msg);
		}
	if (!run) {
		const char *run_only[][2] = {{"--summary", o->summary ? "" : NULL}, {"--format", o->format}, {"--color", o->color}};
		for (size_t i = 0; i < sizeof run_only / sizeof *run_only; i++)
			if (run_only[i][1])
				return usage_error("%s belongs to 'hmem run'", run_only[i][0]);
	}
	int fi = 0;
	while (o->format && fi < N_FORMATS && strcmp(o->format, formats[fi].flag))
		fi++;
	if (fi == N_FORMATS)
		return usage_error("--format is text, csv or json, not '%s'", o->format);
	if (o->format)
		o->summary = 1;
	if (o->color && strcmp(o->color, "auto") && strcmp(o->color, "always") && strcmp(o->color, "never"))
		return usage_error("--color is auto, always or never, not '%s'", o->color);
	if (run && !o->rules)
		return usage_error("%s", "run needs a rule file and at least one trace: hmem run RULES PATH...");
	if (takes_rules(o->cmd) && !o->rules)
		return usage_error("%s", "allocations needs a rule file and at least one trace: hmem allocations RULES PATH...");
	if (o->npaths == 0)
		return usage_error("%s: no trace file or directory given", o->cmd);
	o->std = std_output(o);
	int to_stdout = o->std != NULL;
	for (int j = 0; j < N_OUTPUTS; j++) {
		if (!o->out[j] || strcmp(o->out[j], "-"))
			continue;
		if (!outputs[j].stdout_ok)
			return usage_error("%s cannot be written to standard output", outputs[j].flag);
		if (to_stdout++)
			return usage_error("%s", "only one output can go to standard output");
	}
	for (int j = 0; j < N_OUTPUTS; j++) {
		if (!o->out[j] || !outputs[j].one_trace)
			continue;
		/* One trace in, one trace out; and never over the trace being read. */
		struct stat in, st;
		if (o->npaths != 1 || (stat(o->paths[0], &in) == 0 && S_ISDIR(in.st_mode))) {
			snprintf(msg, sizeof msg, "%s needs exactly one trace file (not a directory)", outputs[j].flag);
			return usage_error("%s", msg);
		}
		if (stat(o->paths[0], &in) == 0 && stat(o->out[j], &st) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino) {
			snprintf(msg, sizeof msg, "%s %s would replace the trace being read; write elsewhere", outputs[j].flag,
				 o->out[j]);
			return usage_error("%s", msg);
		}
	}
	return 0;
}

/* Per series, the check of rule 6; a mismatch means events are missing or the trace
 * has more than one allocator writing one counter. */
static void warn_mismatches(const hm_file *f, int quiet)
{
	for (size_t i = 0; i < f->nseries && !quiet; i++) {
		const hm_series *s = &f->series[i];
		if (!s->mismatches)
			continue;
		char ts[32];
		hm_fmt_us(ts, f->t->mem.ts[s->ev[s->first_mismatch]]);
		hm_eprintf("hmem: warning: %s %s: the sum of categories differs from the trace's Total Allocated "
				"after %llu of %zu events (first at ts %s)\n",
			f->t->path, s->device, (unsigned long long)s->mismatches, s->n, ts);
	}
}

/* On a terminal, a progress line on standard error while traces load: files, bytes of
 * input read, rate and time left. Cleared when done. */
static void progress_line(hm_loader *l, int nfiles, double start, int clear)
{
	if (clear) {
		fputs("\r\033[K", stderr);
		return;
	}
	uint64_t done, total;
	int files;
	hm_loader_progress(l, &done, &total, &files);
	double el = hm_now() - start, rate = el > 0 ? (double)done / el : 0;
	char d[32], t[32], r[32];
	hm_fmt_bytes(d, sizeof d, (int64_t)done);
	hm_fmt_bytes(t, sizeof t, (int64_t)total);
	hm_fmt_bytes(r, sizeof r, (int64_t)rate);
	fprintf(stderr, "\r\033[Khmem: %d/%d traces, %s of %s read, %s/s", files, nfiles, d, t, r);
	if (rate > 0 && total > done)
		fprintf(stderr, ", %.0f s left", (double)(total - done) / rate);
}

/* --color auto: a terminal, unless NO_COLOR (no-color.org) is set to anything non-empty
 * or the terminal says it is dumb. */
static int want_color(const char *when)
{
	if (when && strcmp(when, "auto"))
		return !strcmp(when, "always");
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
	return isatty(STDOUT_FILENO) && !(no && *no) && !(term && !strcmp(term, "dumb"));
}

/* Writes the outputs named, in table order, then standard output's; everything is
 * written before anything is renamed into place. */
static int write_outputs(const opts *o, const hm_report *report)
{
	hm_report copy = *report;
	copy.color = o->std == &formats[0] && want_color(o->color); /* text */
	const char *path[N_OUTPUTS + 1];
	const output *row[N_OUTPUTS + 1];
	for (int i = 0; i < N_OUTPUTS; i++)
		path[i] = o->out[i], row[i] = &outputs[i];
	path[N_OUTPUTS] = o->std ? "-" : NULL, row[N_OUTPUTS] = o->std;
	enum { N = N_OUTPUTS + 1 };
	hm_out out[N] = {0};
	char err[1024];
	int rc = HM_EXIT_IO;
	for (int i = 0; i < N; i++) {
		if (!path[i])
			continue;
		if (hm_out_open(&out[i], path[i], err, sizeof err) != 0)
			goto fail;
		if (row[i]->write)
			row[i]->write(out[i].f, &copy);
		else if ((rc = row[i]->write_or_fail(out[i].f, &copy, path[i], err, sizeof err)) != 0)
			goto fail;
	}
	rc = HM_EXIT_IO;
	for (int i = 0; i < N; i++)
		if (path[i] && hm_out_commit(&out[i], err, sizeof err) != 0)
			goto fail;
	return HM_EXIT_OK;
fail:
	hm_eprintf("hmem: %s\n", err);
	for (int i = 0; i < N; i++)
		hm_out_abort(&out[i]);
	return rc;
}

/* Outputs never replace what is read, nor each other (issue 11): an output naming a trace
 * (also one found in a directory) or the rule file, or two outputs naming one file, are
 * usage errors (exit 2). Devices, FIFOs and "-" are written in place and may repeat. */
static int check_outputs(const opts *o, char **files, int nfiles)
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
	return bad ? usage_error("%s", msg) : 0;
}

static int run(const opts *o)
{
	char err[8192];
	char **files = NULL;
	int nfiles = 0, rc = HM_EXIT_OK;
	hm_script *script = NULL;
	hm_loader *loader = NULL;
	size_t ncut = 0; /* traces kept only up to a cut (--keep-going) */
	hm_strtab cats = {0};
	hm_report rep = {0};
	rep.rules = o->rules;
	rep.cats = &cats;
	if (o->win.on)
		hm_strtab_intern(&cats, "(before window)", 15);
	else
		hm_strtab_intern(&cats, "(before trace)", 14);

	int xrc = hm_input_expand(o->paths, o->npaths, &files, &nfiles, err, sizeof err);
	if (xrc != 0) {
		hm_eprintf("hmem: %s\n", err);
		rc = xrc == -2 ? HM_EXIT_INPUT : HM_EXIT_IO;
		goto done;
	}
	if (nfiles == 0) {
		hm_eprintf("hmem: no trace files (*.json, *.json.gz) found in");
		for (int i = 0; i < o->npaths; i++)
			hm_eprintf(" %s", o->paths[i]);
		hm_eprintf("\n");
		rc = HM_EXIT_INPUT;
		goto done;
	}
	if ((rc = check_outputs(o, files, nfiles)) != 0)
		goto done;
	const char *r = o->rules;
	size_t rl = r ? strlen(r) : 0;
	if (r && ((rl > 5 && !strcmp(r + rl - 5, ".json")) || (rl > 3 && !strcmp(r + rl - 3, ".gz")))) {
		hm_eprintf("hmem: %s looks like a trace; the first argument of 'run' is the rule file: "
				"hmem run RULES.lua PATH...\n", r);
		rc = HM_EXIT_USAGE;
		goto done;
	}
	hm_script_opts so = {o->rules, o->inc, o->ninc, o->allow_io, o->out_dir,
			     o->timeout ? strtod(o->timeout, NULL) : 60,
			     (size_t)((o->lua_mem ? strtod(o->lua_mem, NULL) : 4096) * 1048576.0), o->set, o->nset, o->quiet};
	rep.top = o->top ? (size_t)strtol(o->top, NULL, 10) : 20;
	if (o->rules && !(script = hm_script_open(&so, &cats, err, sizeof err))) {
		hm_eprintf("hmem: %s\n", err);
		rc = HM_EXIT_SCRIPT;
		goto done;
	}
	rep.files = hm_xcalloc((size_t)nfiles, sizeof *rep.files);
	rep.skipped = hm_xcalloc((size_t)nfiles, sizeof *rep.skipped);
	long jobs = o->jobs ? strtol(o->jobs, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
	loader = hm_loader_start(files, nfiles, (int)(jobs > 0 ? jobs : 1), o->keep_going);
	int show = !o->quiet && isatty(2), shown = 0;
	double start = hm_now();
	for (int i = 0; i < nfiles; i++) {
		hm_load *ld;
		while (!(ld = hm_loader_wait(loader, i, show ? 250 : -1))) {
			progress_line(loader, nfiles, start, 0);
			shown = 1;
		}
		if (shown)
			progress_line(loader, nfiles, start, 1), shown = 0;
		stage_s[ST_READ] += ld->read_s;
		stage_s[ST_ANALYZE] += ld->analyze_s;
		if (!ld->f) {
			if (!o->keep_going) {
				hm_eprintf("hmem: %s\n", ld->err);
				hm_eprintf("hmem: stopped; use --keep-going to skip traces that cannot be read\n");
				rc = ld->code;
				goto done;
			}
			if (!o->quiet)
				hm_eprintf("hmem: skipped %s (%llu events read before the error are not used)\n",
					ld->err, (unsigned long long)ld->lost);
			hm_skip *sk = &rep.skipped[rep.nskipped++];
			sk->path = hm_xstrdup(files[i]);
			sk->why = hm_xstrdup(ld->err);
			sk->events = ld->lost;
			continue;
		}
		hm_file *f = ld->f;
		ld->f = NULL;
		hm_trace *t = f->t;
		if (t->cut_at) {
			ncut++;
			if (!o->quiet)
				hm_eprintf("hmem: warning: %s\nhmem: kept the %llu complete events before byte %llu; "
						"the %llu bytes after it are lost\n", t->cut_why, (unsigned long long)t->events,
					(unsigned long long)t->cut_at, (unsigned long long)t->lost_bytes);
		}
		double t0 = hm_now();
		rep.files[rep.nfiles++] = f;
		if (!o->quiet && t->mem.n == 0)
			hm_eprintf("hmem: note: %s has no [memory] events%s\n", t->path,
				t->top_array ? " (a bare array of events, as PyTorch's profiler writes without Kineto: it records "
					       "no memory even with profile_memory=True; use a PyTorch built with Kineto)"
				: t->has_trace_events ? " (record with torch.profiler.profile(profile_memory=True))"
						      : " (no traceEvents in it)");
		if (script && hm_script_classify(script, f, &cats, err, sizeof err) != 0) {
			hm_eprintf("hmem: %s\n", err);
			rc = HM_EXIT_SCRIPT;
			goto done;
		}
		stage_s[ST_CLASSIFY] += hm_now() - t0;
	}
	hm_loader_stop(loader);
	loader = NULL;
	double t0 = hm_now();
	for (size_t i = 0; i < rep.nfiles; i++) {
		if (o->win.on)
			apply_window(rep.files[i], &o->win, o->quiet);
		for (size_t s = 0; s < rep.files[i]->nseries; s++)
			hm_timeline(&rep.files[i]->series[s], &rep.files[i]->t->mem, cats.n);
		hm_explain(rep.files[i], cats.n);
		warn_mismatches(rep.files[i], o->quiet);
	}
	if (rep.nskipped && !o->quiet)
		hm_eprintf("hmem: %zu of %d traces skipped (see above)\n", rep.nskipped, nfiles);
	stage_s[ST_TIMELINE] += hm_now() - t0;
	t0 = hm_now();
	rep.classify_calls = script ? hm_script_calls(script) : 0;
	rep.cache_hits = script ? hm_script_cache_hits(script) : 0;
	if (script) {
		rep.rules = hm_script_name(script);
		if (hm_script_finish(script, &rep, err, sizeof err) != 0) {
			hm_eprintf("hmem: %s\n", err);
			rc = HM_EXIT_SCRIPT;
			goto done;
		}
	}
	hm_budgets budgets = {0};
	for (int i = 0; i < o->nfail_above; i++)
		hm_budget_parse(&budgets, o->fail_above[i], err, sizeof err); /* checked by parse_args */
	if (script)
		hm_budgets_merge(&budgets, hm_script_verdict(script));
	stage_s[ST_FINISH] += hm_now() - t0;
	t0 = hm_now();
	if (o->sink)
		o->sink(&rep, o->sink_ctx);
	else
		rc = write_outputs(o, &rep);
	stage_s[ST_OUTPUT] += hm_now() - t0;
	if (o->verbose) {
		uint64_t events = 0, mem = 0, classified = rep.classify_calls + rep.cache_hits;
		for (size_t i = 0; i < rep.nfiles; i++)
			events += rep.files[i]->t->events, mem += rep.files[i]->t->mem.n;
		hm_eprintf("hmem: %d traces, %llu events, %llu memory events, %llu classify calls, %llu cache hits\n",
			nfiles, (unsigned long long)events, (unsigned long long)mem,
			(unsigned long long)rep.classify_calls, (unsigned long long)rep.cache_hits);
		uint64_t kinds[HM_EV_KINDS] = {0};
		for (size_t i = 0; i < rep.nfiles; i++)
			for (int k = 0; k < HM_EV_KINDS; k++)
				kinds[k] += rep.files[i]->t->count[k];
		hm_eprintf("hmem: events read %llu = used (memory %llu, host slices %llu, thread names %llu)"
				" + not used (oom %llu, device slices %llu, flows %llu, metadata %llu, other %llu)\n",
			(unsigned long long)events, (unsigned long long)kinds[HM_EV_MEMORY],
			(unsigned long long)kinds[HM_EV_HOST_SLICE], (unsigned long long)kinds[HM_EV_THREAD_NAME],
			(unsigned long long)kinds[HM_EV_OOM], (unsigned long long)kinds[HM_EV_DEVICE_SLICE],
			(unsigned long long)kinds[HM_EV_FLOW], (unsigned long long)kinds[HM_EV_METADATA],
			(unsigned long long)kinds[HM_EV_OTHER]);
		for (int st = 0; st < ST_N; st++)
			hm_eprintf("hmem: %-18s %8.3f s%s\n", stage_names[st], stage_s[st],
				st <= ST_ANALYZE ? " (summed over the reading threads)" : "");
		if (classified && stage_s[ST_CLASSIFY] > 0)
			hm_eprintf("hmem: classify: %.0f rows/s (%.0f ns per row)\n",
				(double)classified / stage_s[ST_CLASSIFY], stage_s[ST_CLASSIFY] * 1e9 / (double)classified);
	}
	if (rc == HM_EXIT_OK && (rep.nskipped || ncut))
		rc = HM_EXIT_INPUT; /* like make -k: the rest is written, the run still failed */
	/* Budgets once every output is written: broken ones are listed after the summary, and
	 * exit 6 only when nothing else failed (README "Errors and exit codes"). */
	if (!o->sink && (rc == HM_EXIT_OK || rc == HM_EXIT_INPUT) && hm_budget_check(&budgets, &rep, o->quiet) && rc == HM_EXIT_OK)
		rc = HM_EXIT_BUDGET;
	hm_budgets_free(&budgets);
done:
	hm_loader_stop(loader);
	hm_script_close(script);
	for (size_t i = 0; i < rep.nfiles; i++)
		hm_file_free(rep.files[i]);
	for (size_t i = 0; i < rep.nskipped; i++)
		free(rep.skipped[i].path), free(rep.skipped[i].why);
	free(rep.files);
	free(rep.skipped);
	for (size_t i = 0; i < rep.naggs; i++)
		hm_agg_free(&rep.aggs[i]);
	free(rep.aggs);
	for (int i = 0; i < nfiles; i++)
		free(files[i]);
	free(files);
	hm_strtab_free(&cats);
	return rc;
}

/* One trace side of hmem diff: its report as diffside.h's text. */
typedef struct diff_text {
	char *text;
	size_t len;
} diff_text;

static void diff_sink(const hm_report *r, void *ctx)
{
	diff_text *d = ctx;
	d->text = hm_diff_side_json(r, &d->len);
}

/* hmem diff reads a trace side as hmem run would, with the same options. */
static int diff_read(const hm_diff_run *d, char **text, size_t *len)
{
	diff_text out = {0};
	opts o = {.cmd = "run", .rules = d->rules, .paths = d->paths, .npaths = d->npaths, .inc = d->inc,
		  .ninc = d->ninc, .set = d->set, .nset = d->nset, .timeout = d->timeout, .lua_mem = d->lua_mem,
		  .jobs = d->jobs, .quiet = d->quiet, .allow_io = d->allow_io, .sink = diff_sink, .sink_ctx = &out};
	int rc = run(&o);
	*text = out.text;
	*len = out.len;
	if (rc == 0 && !out.text)
		rc = HM_EXIT_INTERNAL;
	return rc;
}

int main(int argc, char **argv)
{
	/* A rule stopped by the watchdog's second expiry ends the run at once: its
	 * hmem.write files being written go with it. */
	hm_watchdog_at_kill(hm_out_remove_tmp);
	if (argc < 2)
		return usage_error("%s", "missing command (run, events, allocations or packs)");
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		print_usage(stdout);
		return HM_EXIT_OK;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("hmem %s\n", HM_VERSION);
		return HM_EXIT_OK;
	}
	if (strcmp(cmd, "run") && strcmp(cmd, "events") && strcmp(cmd, "packs") && strcmp(cmd, "allocations") && strcmp(cmd, "diff"))
		return usage_error("unknown command '%s' (commands: run, events, allocations, packs, diff)", cmd);
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			print_usage(stdout);
			return HM_EXIT_OK;
		}
	if (!strcmp(cmd, "diff"))
		return hm_diff_main(argc, argv, diff_read);
	opts o = {0};
	o.cmd = cmd;
	int rc = parse_args(argc, argv, &o);
	if (rc == 0 && !strcmp(cmd, "packs")) {
		hm_script_opts so = {0}; /* each pack loads as under hmem run: sandbox and limits */
		so.inc = o.inc;
		so.ninc = o.ninc;
		so.timeout_s = o.timeout ? strtod(o.timeout, NULL) : 60;
		so.mem_limit = (size_t)((o.lua_mem ? strtod(o.lua_mem, NULL) : 4096) * 1048576.0);
		rc = hm_script_list_packs(&so, stdout);
	} else if (rc == 0) {
		rc = run(&o);
	}
	free(o.paths);
	free(o.inc);
	free(o.fail_above);
	free(o.set);
	return rc;
}
