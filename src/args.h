/* args: hmem's command line: the commands' --help, the table of outputs, and the options
 * parsed and checked into hm_opts before anything is read. */
#ifndef HM_ARGS_H
#define HM_ARGS_H

#include "output.h"
#include "window.h"

#include <stdio.h>

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
} hm_output;

enum { N_OUTPUTS = 9, N_FORMATS = 3 };
/* The rows of --db and --partial (partial.h) in outputs. */
enum { OUT_DB = 7, OUT_PARTIAL = 8 };
/* Every output, in the order they are checked and written. */
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
	/* hmem diff: the finished report goes here instead of the outputs (no budgets). */
	void (*sink)(const hm_report *r, void *ctx);
	void *sink_ctx;
	const char *steps, *from, *to; /* the window (window.h) */
	hm_window win;
	const char *shard;          /* --shard I/N (plan.h) */
	struct hm_merge *merge;     /* hmem merge: the traces come from these partials (merge.h) */
	int is_merge;               /* parsed for hmem merge: as run, every word in paths (RULES first) */
} hm_opts;

/* "hmem: MESSAGE" (fmt with arg) and the hint to --help on standard error; HM_EXIT_USAGE. */
int hm_usage_error(const char *fmt, const char *arg);
/* --help: the options, with each output's line where its command's options are. */
void hm_print_usage(FILE *f);
/* Parse and check the options of run, events, allocations or packs (argv[1], in o->cmd)
 * into o: 0, or HM_EXIT_USAGE after saying what is wrong. */
int hm_parse_args(int argc, char **argv, hm_opts *o);

#endif
