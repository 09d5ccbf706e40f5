/* hmem: where did my GPU memory go? The commands: each parses its options (args.h) and
 * hands them to its stages (run.h), or is a command of its own (diff, plan). */
#include "args.h"
#include "diff.h"
#include "merge.h"
#include "outfile.h"
#include "plan.h"
#include "run.h"
#include "script.h"
#include "watchdog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef HM_VERSION
#define HM_VERSION "0.0.0"
#endif

/* hmem diff reads a trace side as hmem run would, with the same options. */
static int diff_read(const hm_diff_run *d, char **text, size_t *len)
{
	hm_opts o = {.cmd = "run", .rules = d->rules, .paths = d->paths, .npaths = d->npaths, .inc = d->inc,
		     .ninc = d->ninc, .set = d->set, .nset = d->nset, .timeout = d->timeout, .lua_mem = d->lua_mem,
		     .jobs = d->jobs, .quiet = d->quiet, .allow_io = d->allow_io};
	hm_opts_values(&o);
	return hm_run_diff_side(&o, text, len);
}

/* hmem merge RULES PARTIAL... [outputs]: the rule file, capabilities and limits come from
 * this command line alone; the options that shape results from the partials' rows (a
 * partial is data, issue 24); the rest is hmem run's stages, the partials their source. */
static int merge_main(int argc, char **argv)
{
	char err[8192];
	hm_opts o = {.cmd = "run", .is_merge = 1};
	int rc = hm_parse_args(argc, argv, &o);
	char **paths = o.paths;
	const char *theirs = o.top ? "--top" : o.steps ? "--steps" : o.from ? "--from" : o.to ? "--to" : o.nset ? "--set"
			   : o.shard ? "--shard" : o.out[OUT_PARTIAL] ? "--partial" : NULL;
	if (rc == 0 && theirs)
		rc = hm_usage_error("%s is an option of the shards' hmem run: the merge takes it from the partials", theirs);
	size_t l = rc == 0 ? strlen(o.paths[0]) : 0;
	if (rc == 0 && (hm_merge_is_partial(o.paths[0]) || (l > 3 && !strcmp(o.paths[0] + l - 3, ".db")))) {
		rc = hm_merge_no_rules(o.paths, o.npaths, argc, argv);
	} else if (rc == 0) {
		o.rules = *o.paths++; /* hmem merge RULES PARTIAL..., as hmem run RULES PATH... */
		if (--o.npaths == 0)
			rc = hm_usage_error("merge: no partial given after the rule file %s: hmem merge RULES PARTIAL... "
					    "(the files of hmem run RULES PATH... --shard I/N --partial FILE)", o.rules);
	}
	if (rc == 0 && (rc = hm_check_outputs(&o, o.paths, o.npaths)) == 0) {
		hm_merge *m = NULL;
		if ((rc = hm_merge_open(o.paths, o.npaths, &m, err, sizeof err)) == 0) {
			hm_merge_apply_options(m, &o);
			o.keep_going = 1; /* a trace its shard skipped is said, the rest merged */
			rc = hm_run_merge(&o, m);
		} else if (rc == HM_EXIT_USAGE) {
			hm_usage_error("%s", err);
		} else {
			hm_eprintf("hmem: %s\n", err);
		}
		hm_merge_close(m);
	}
	o.paths = paths;
	hm_opts_free(&o);
	return rc;
}

int main(int argc, char **argv)
{
	/* A rule stopped by the watchdog's second expiry ends the run at once: its
	 * hmem.write files being written go with it. */
	hm_watchdog_at_kill(hm_out_remove_tmp);
	if (argc < 2)
		return hm_usage_error("%s", "missing command (run, events, allocations, packs, diff, plan or merge)");
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		hm_print_usage(stdout);
		return HM_EXIT_OK;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("hmem %s\n", HM_VERSION);
		return HM_EXIT_OK;
	}
	if (strcmp(cmd, "run") && strcmp(cmd, "events") && strcmp(cmd, "packs") && strcmp(cmd, "allocations") && strcmp(cmd, "diff") &&
	    strcmp(cmd, "plan") && strcmp(cmd, "merge"))
		return hm_usage_error("unknown command '%s' (commands: run, events, allocations, packs, diff, plan, merge)", cmd);
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			hm_print_usage(stdout);
			return HM_EXIT_OK;
		}
	if (!strcmp(cmd, "diff"))
		return hm_diff_main(argc, argv, diff_read);
	if (!strcmp(cmd, "plan"))
		return hm_plan_main(argc, argv);
	if (!strcmp(cmd, "merge"))
		return merge_main(argc, argv);
	hm_opts o = {0};
	o.cmd = cmd;
	int rc = hm_parse_args(argc, argv, &o);
	if (rc == 0 && !strcmp(cmd, "packs")) {
		hm_script_opts so = {0}; /* each pack loads as under hmem run: sandbox and limits */
		so.inc = o.inc;
		so.ninc = o.ninc;
		so.timeout_s = o.timeout_s;
		so.mem_limit = o.lua_mem_bytes;
		rc = hm_script_list_packs(&so, stdout);
	} else if (rc == 0) {
		rc = hm_run(&o);
	}
	hm_opts_free(&o);
	return rc;
}
