/* args: hmem's command line: the commands' --help, the table of outputs, and the options
 * parsed and checked into hm_opts before anything is read. */
#ifndef HM_ARGS_H
#define HM_ARGS_H

#include "budget.h"
#include "output.h"
#include "window.h"

#include <stdio.h>

/* An output written to a file the user names (a row of HM_OUTPUTS). */
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
} hm_output;

/* Every output written to a file the user names, in the order they are checked and
 * written: X(ID, fields of its hm_output). Option parsing, --help, the checks (which command
 * it belongs to, standard output, the same file twice or over an input) and writing all
 * read the table made of it (outputs, args.c), and its ids (OUT_ID) and count (N_OUTPUTS)
 * are made of it too: a new output is its writer (one file) and one row here. */
#define HM_OUTPUTS(X)                                                                                       \
	X(JSON, .flag = "--json", .cmd = "run", .stdout_ok = 1, .write = hm_write_json,                     \
	  .help = "write the report as JSON (- for standard output)")                                       \
	X(TIMELINE, .flag = "--timeline", .cmd = "run", .stdout_ok = 1, .write = hm_write_timeline,         \
	  .help = "write the per-category timeline as CSV, one row per memory event")                       \
	X(HTML, .flag = "--html", .cmd = "run", .stdout_ok = 1, .write = hm_write_html,                     \
	  .help = "write an interactive report: a chart per series, tables (one file,\n"                    \
		  "                    opens offline)")                                                     \
	X(PERFETTO, .flag = "--perfetto", .cmd = "run", .stdout_ok = 1, .write = hm_write_perfetto,         \
	  .help = "write the timelines as Chrome-trace counter tracks (Perfetto UI)")                       \
	X(ANNOTATE, .flag = "--annotate", .cmd = "run", .stdout_ok = 1, .one_trace = 1,                     \
	  .write_or_fail = hm_write_annotated,                                                              \
	  .help = "write the trace (one) with those counter tracks added; gzip if FILE\n"                   \
		  "                    ends in .gz")                                                        \
	X(EVENTS_CSV, .flag = "--csv", .cmd = "events", .stdout_ok = 1, .by_default = 1,                    \
	  .write = hm_write_events, .misplaced = "; 'hmem run' writes --json and --timeline",               \
	  .help = "write the events there instead of standard output")                                      \
	X(ALLOCATIONS_CSV, .flag = "--csv", .cmd = "allocations", .stdout_ok = 1, .by_default = 1,          \
	  .write = hm_write_allocations, .help = "write the allocations there instead of standard output")  \
	X(DB, .flag = "--db", .cmd = "run", .write_or_fail = hm_write_db,                                   \
	  .help = "write the report as one SQLite database (README \"Many machines\")")                     \
	X(PARTIAL, .flag = "--partial", .cmd = "run", .write_or_fail = hm_write_db,                         \
	  .help = "write this run's part for hmem merge (SQLite; with --shard I/N:\n"                       \
		  "                    the I-th of N parts of the traces)")

enum hm_output_id {
#define HM_OUTPUT_ID(id, ...) OUT_##id,
	HM_OUTPUTS(HM_OUTPUT_ID)
#undef HM_OUTPUT_ID
	N_OUTPUTS
};
enum { N_FORMATS = 3 };
/* Every output, in the order of HM_OUTPUTS. */
extern const hm_output outputs[N_OUTPUTS];
/* The summary of 'hmem run' on standard output, one row per --format (named in flag). */
extern const hm_output formats[N_FORMATS];

typedef struct opts {
	const char *cmd, *rules, *out_dir, *top, *jobs, *timeout, *lua_mem, *format, *color;
	const char *out[N_OUTPUTS]; /* the path of each output, NULL when not asked for */
	const hm_output *std;          /* what else goes to standard output, or NULL */
	char **paths;
	const char **inc;
	int npaths, ninc, keep_going, quiet, summary, allow_io, verbose;
	const char **fail_above, **set; /* repeatable: --fail-above, --set */
	int nfail_above, nset;
	const char *steps, *from, *to; /* the window (window.h) */
	const char *shard;          /* --shard I/N (plan.h) */
	int is_merge;               /* parsed for hmem merge: as run, every word in paths (RULES first) */
	/* The values of the options above, each parsed once (the strings are kept as given:
	 * a partial records them so); hm_opts_values holds every default. */
	double timeout_s;           /* --timeout, seconds (0: none) */
	size_t lua_mem_bytes;       /* --lua-mem (0: none) */
	size_t top_n;               /* --top */
	int njobs;                  /* -j, at least 1 */
	int shard_i, nshards;       /* --shard I/N; 0 and 1 without it */
	hm_window win;              /* --steps, --from, --to */
	hm_budgets budgets;         /* every --fail-above */
} hm_opts;

/* The defaults of --timeout (seconds) and --lua-mem (MB), which hmem diff's comparison
 * shares; every other default is in hm_opts_values. */
#define HM_TIMEOUT_DEFAULT 60
#define HM_LUA_MEM_DEFAULT_MB 4096

/* "hmem: MESSAGE" (fmt with arg) and the hint to --help on standard error; HM_EXIT_USAGE. */
int hm_usage_error(const char *fmt, const char *arg);
/* --help: the options, with each output's line where its command's options are. */
void hm_print_usage(FILE *f);
/* Parse and check the options of run, events, allocations or packs (argv[1], in o->cmd)
 * into o: 0, or HM_EXIT_USAGE after saying what is wrong. The caller frees o's arrays
 * with hm_opts_free, whatever the result. */
int hm_parse_args(int argc, char **argv, hm_opts *o);
/* The values of o's --timeout, --lua-mem, --top and -j from its strings (checked already),
 * and the default of each option not given: hm_parse_args calls it; so does a command that
 * builds hm_opts itself (hmem diff's trace sides). */
void hm_opts_values(hm_opts *o);
void hm_opts_free(hm_opts *o);
/* Outputs never replace what is read, nor each other (issue 11): an output naming one of
 * files (the traces a run reads, also those found in a directory) or the rule file, or two
 * outputs naming one file, are usage errors (exit 2, said). Devices, FIFOs and "-" are
 * written in place and may repeat. */
int hm_check_outputs(const hm_opts *o, char **files, int nfiles);

#endif
