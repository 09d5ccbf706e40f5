/* hmem: where did my GPU memory go? Command line, and the one-way flow
 * files -> reader -> analysis -> classify -> timeline -> writers. */
#include "allocations.h"
#include "args.h"
#include "analyze.h"
#include "budget.h"
#include "diff.h"
#include "diffside.h"
#include "explain.h"
#include "html.h"
#include "input.h"
#include "loader.h"
#include "merge.h"
#include "output.h"
#include "partial.h"
#include "perfetto.h"
#include "ranks.h"
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

/* Seconds spent per stage, for --verbose. */
enum { ST_READ, ST_ANALYZE, ST_CLASSIFY, ST_TIMELINE, ST_FINISH, ST_OUTPUT, ST_N };
static const char *const stage_names[ST_N] = {"read", "sort+pair+context", "classify", "timeline",
					       "aggregate+done", "output"};
static double stage_s[ST_N];

/* Cut a file to the window, before anything of it is classified. A trace without the
 * window's steps keeps nothing (said, unless quiet); what it has is added to have (room
 * for n), for the usage error of a run where no trace has them. Returns 0, or -1 then. */
static int apply_window(hm_file *f, const hm_window *w, int quiet, char *have, size_t n)
{
	int64_t from, to;
	int missing = hm_window_bounds(w, f->t, &from, &to) != 0;
	if (missing) {
		char steps[200];
		size_t len = strlen(have);
		hm_window_steps_of(f->t, steps, sizeof steps);
		if (len < n)
			snprintf(have + len, n - len, "%s%s: %s", len ? "; " : "", f->t->path, steps);
		char asked[40];
		snprintf(asked, sizeof asked, w->step_a == w->step_b ? "#%d" : "#%d to #%d", (int)w->step_a, (int)w->step_b);
		if (!quiet)
			hm_eprintf("hmem: warning: %s has no ProfilerStep%s (its steps: %s): nothing of it is in the window\n",
				   f->t->path, asked, steps);
	}
	hm_window_apply(f, from, to);
	return missing ? -1 : 0;
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
static int write_outputs(const hm_opts *o, const hm_report *report)
{
	hm_report copy = *report;
	copy.color = o->std == &formats[0] && want_color(o->color); /* text */
	const char *path[N_OUTPUTS + 1];
	const hm_output *row[N_OUTPUTS + 1];
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
static int check_outputs(const hm_opts *o, char **files, int nfiles)
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

/* The traces this run reads, in plan order: all of them, the shard's part (--shard I/N)
 * or, for hmem merge, every planned one; info->file_idx gets each one's index in the plan.
 * 0, or an exit code with err. */
static int plan_files(const hm_opts *o, hm_plan *plan, hm_runinfo *info, char ***files, int *nfiles, char *err,
		      size_t errsz)
{
	int rc = 0;
	if (o->merge)
		*plan = *hm_merge_plan(o->merge); /* the merge's: not freed here */
	else if ((rc = hm_plan_make(o->paths, o->npaths, plan, err, errsz)) != 0)
		return rc;
	int *of = hm_xcalloc((size_t)plan->n + 1, sizeof *of);
	if (o->shard) {
		hm_plan_parse_shard(o->shard, &info->shard, &info->nshards); /* checked by parse_args */
		hm_plan_assign(plan, info->nshards, of);
	}
	*files = hm_xcalloc((size_t)plan->n + 1, sizeof **files);
	info->file_idx = hm_xcalloc((size_t)plan->n + 1, sizeof *info->file_idx);
	for (int i = 0; i < plan->n; i++)
		if (of[i] == info->shard) {
			info->file_idx[*nfiles] = i;
			(*files)[(*nfiles)++] = hm_xstrdup(plan->path[i]);
		}
	free(of);
	return 0;
}

/* Trace i of a merge as the loader would hand it over: a file, or a skipped trace. */
static int merge_load(hm_merge *m, int i, hm_strtab *cats, hm_load *ld, int32_t **catev, char *err, size_t errsz)
{
	const char *why = NULL;
	int r = hm_merge_file(m, i, cats, &ld->f, catev, &why, &ld->lost, err, errsz);
	ld->code = HM_EXIT_INPUT;
	ld->err = r < 0 ? err : (char *)why; /* a damaged store: skipped like an unreadable trace */
	return 0;
}

static int run(const hm_opts *o)
{
	char err[8192];
	char **files = NULL;
	int nfiles = 0, rc = HM_EXIT_OK;
	hm_script *script = NULL;
	hm_loader *loader = NULL;
	size_t ncut = 0; /* traces kept only up to a cut (--keep-going) */
	size_t nmissing = 0; /* traces without the steps of --steps */
	char no_steps[2048] = ""; /* and the steps they have */
	hm_strtab cats = {0};
	hm_report rep = {0};
	rep.rules = o->rules;
	rep.cats = &cats;
	if (o->win.on)
		hm_strtab_intern(&cats, "(before window)", 15);
	else
		hm_strtab_intern(&cats, "(before trace)", 14);

	hm_plan plan = {0};
	hm_runinfo info = {.plan = &plan, .nshards = 1};
	hm_runopt *options = NULL;
	int32_t *merged_catev = NULL;
	if ((rc = plan_files(o, &plan, &info, &files, &nfiles, err, sizeof err)) != 0) {
		hm_eprintf("hmem: %s\n", err);
		goto done;
	}
	int want_db = o->out[OUT_DB] || o->out[OUT_PARTIAL];
	if (want_db) {
		info.catev = hm_xcalloc((size_t)nfiles + 1, sizeof *info.catev);
		info.cat_from = hm_xcalloc((size_t)nfiles + 1, sizeof *info.cat_from);
		info.skip_idx = hm_xcalloc((size_t)nfiles + 1, sizeof *info.skip_idx);
		info.opts = options = hm_merge_options_of(o, &info.nopts);
		rep.info = &info;
	}
	if (nfiles == 0 && !o->shard) {
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
		hm_eprintf(o->merge ? "hmem: %s looks like a trace; the first argument of 'merge' is the rule file: "
				      "hmem merge RULES.lua PARTIAL...\n"
				    : "hmem: %s looks like a trace; the first argument of 'run' is the rule file: "
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
	if (script)
		info.rules_hash = hm_script_digest(script);
	if (script && o->merge && strcmp(info.rules_hash, hm_merge_rules_hash(o->merge))) {
		hm_eprintf("hmem: merge: the rule file %s (digest %s, with the modules it requires) is not the one the "
			   "partials were made with (%s, digest %s): refused; name the rule file the shards ran (and -I DIR "
			   "where it requires modules from there)\n", o->rules, info.rules_hash, hm_merge_rules(o->merge),
			   hm_merge_rules_hash(o->merge));
		rc = HM_EXIT_INPUT;
		goto done;
	}
	rep.files = hm_xcalloc((size_t)nfiles, sizeof *rep.files);
	rep.skipped = hm_xcalloc((size_t)nfiles, sizeof *rep.skipped);
	long jobs = o->jobs ? strtol(o->jobs, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
	if (!o->merge)
		loader = hm_loader_start(files, nfiles, (int)(jobs > 0 ? jobs : 1), o->keep_going);
	int show = !o->quiet && isatty(2) && !o->merge, shown = 0;
	double start = hm_now();
	for (int i = 0; i < nfiles; i++) {
		hm_load *ld, merged = {0};
		size_t cats_before = cats.n;
		if (o->merge) {
			ld = &merged;
			if ((rc = merge_load(o->merge, i, &cats, ld, &merged_catev, err, sizeof err)) != 0)
				goto done;
		}
		while (!o->merge && !(ld = hm_loader_wait(loader, i, show ? 250 : -1))) {
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
			if (want_db)
				info.skip_idx[rep.nskipped] = info.file_idx[i];
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
		for (int j = 0; t->snap && j < N_OUTPUTS; j++) /* --annotate copies a JSON trace; a pickle is none */
			if (o->out[j] && outputs[j].one_trace) {
				hm_eprintf("hmem: %s: %s is a memory snapshot (a pickle): only a JSON trace can be annotated; "
					   "--perfetto writes the counter tracks alone\n", outputs[j].flag, t->path);
				rc = HM_EXIT_USAGE;
				goto done;
			}
		if (!o->quiet && t->mem.n == 0)
			hm_eprintf("hmem: note: %s has no [memory] events%s\n", t->path,
				t->top_array ? " (a bare array of events, as PyTorch's profiler writes without Kineto: it records "
					       "no memory even with profile_memory=True; use a PyTorch built with Kineto)"
				: t->has_trace_events ? " (record with torch.profiler.profile(profile_memory=True))"
						      : " (no traceEvents in it)");
		if (o->win.on && apply_window(f, &o->win, o->quiet, no_steps, sizeof no_steps) != 0)
			nmissing++;
		if (script && !o->merge && hm_script_classify(script, f, &cats, err, sizeof err) != 0) {
			hm_eprintf("hmem: %s\n", err);
			rc = HM_EXIT_SCRIPT;
			goto done;
		}
		if (want_db) {
			info.cat_from[rep.nfiles - 1] = cats_before;
			info.catev[rep.nfiles - 1] = merged_catev ? merged_catev : hm_partial_capture(f);
			info.file_idx[rep.nfiles - 1] = info.file_idx[i];
			merged_catev = NULL;
		}
		free(merged_catev);
		merged_catev = NULL;
		stage_s[ST_CLASSIFY] += hm_now() - t0;
	}
	hm_loader_stop(loader);
	loader = NULL;
	if (o->win.by_steps && nmissing && nmissing == rep.nfiles && !o->shard) { /* a shard: the merge says it */
		char msg[sizeof no_steps + 100];
		if (o->win.step_a == o->win.step_b)
			snprintf(msg, sizeof msg, "--steps %d: no trace has ProfilerStep#%d (%s)", (int)o->win.step_a,
				 (int)o->win.step_a, no_steps);
		else
			snprintf(msg, sizeof msg, "--steps %d-%d: no trace has any of ProfilerStep#%d to #%d (%s)",
				 (int)o->win.step_a, (int)o->win.step_b, (int)o->win.step_a, (int)o->win.step_b, no_steps);
		rc = hm_usage_error("%s", msg);
		goto done;
	}
	double t0 = hm_now();
	for (size_t i = 0; i < rep.nfiles; i++) {
		for (size_t s = 0; s < rep.files[i]->nseries; s++)
			hm_timeline(&rep.files[i]->series[s], &rep.files[i]->t->mem, cats.n);
		hm_explain(rep.files[i], cats.n);
		warn_mismatches(rep.files[i], o->quiet);
	}
	hm_explain_note_mixed(rep.files, rep.nfiles, o->quiet);
	if (!o->out[OUT_PARTIAL]) /* a shard sees only some ranks: the merge says it, once */
		hm_ranks_warn_duplicates(&rep, o->quiet);
	if (rep.nskipped && !o->quiet)
		hm_eprintf("hmem: %zu of %d traces skipped (see above)\n", rep.nskipped, nfiles);
	stage_s[ST_TIMELINE] += hm_now() - t0;
	t0 = hm_now();
	rep.classify_calls = script ? hm_script_calls(script) : 0;
	rep.cache_hits = script ? hm_script_cache_hits(script) : 0;
	if (o->merge)
		rep.classify_calls = hm_merge_calls(o->merge), rep.cache_hits = hm_merge_cache_hits(o->merge);
	if (want_db)
		info.cat_from[rep.nfiles] = cats.n, info.complete = !o->out[OUT_PARTIAL];
	if (script && o->out[OUT_PARTIAL]) {
		rep.rules = hm_script_name(script); /* aggregations and done(report) run at the merge */
	} else if (script) {
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
	/* Checked before the outputs, which show the verdict; said on standard error after them. */
	hm_verdict verdict = {0};
	int judge = !o->sink && !o->out[OUT_PARTIAL];
	if (judge)
		hm_budget_eval(&budgets, &rep, &verdict), rep.verdict = &verdict;
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
	if (o->merge && rc == HM_EXIT_OK && hm_merge_problems(o->merge))
		rc = HM_EXIT_INPUT; /* a trace missing, twice, or unreadable: said, the rest written */
	if (judge && (rc == HM_EXIT_OK || rc == HM_EXIT_INPUT) && hm_budget_report(&verdict, &rep, o->quiet) &&
	    rc == HM_EXIT_OK)
		rc = HM_EXIT_BUDGET;
	hm_verdict_free(&verdict);
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
	for (size_t i = 0; info.catev && i < rep.nfiles; i++)
		free(info.catev[i]);
	free(info.catev), free(info.cat_from), free(info.file_idx), free(info.skip_idx), free(options), free(merged_catev);
	if (!o->merge)
		hm_plan_free(&plan);
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
	hm_opts o = {.cmd = "run", .rules = d->rules, .paths = d->paths, .npaths = d->npaths, .inc = d->inc,
		  .ninc = d->ninc, .set = d->set, .nset = d->nset, .timeout = d->timeout, .lua_mem = d->lua_mem,
		  .jobs = d->jobs, .quiet = d->quiet, .allow_io = d->allow_io, .sink = diff_sink, .sink_ctx = &out};
	int rc = run(&o);
	*text = out.text;
	*len = out.len;
	if (rc == 0 && !out.text)
		rc = HM_EXIT_INTERNAL;
	return rc;
}

/* hmem merge RULES PARTIAL... [outputs]: the rule file, capabilities and limits come from
 * this command line alone; the options that shape results from the partials' rows (a
 * partial is data, issue 24); the rest is hmem run's own pipeline. */
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
	if (rc == 0 && (rc = check_outputs(&o, o.paths, o.npaths)) == 0) {
		hm_merge *m = NULL;
		if ((rc = hm_merge_open(o.paths, o.npaths, &m, err, sizeof err)) == 0) {
			hm_merge_apply_options(m, &o);
			o.merge = m;
			o.keep_going = 1;
			rc = run(&o);
		} else if (rc == HM_EXIT_USAGE) {
			hm_usage_error("%s", err);
		} else {
			hm_eprintf("hmem: %s\n", err);
		}
		hm_merge_close(m);
	}
	free(paths), free(o.inc), free(o.fail_above), free(o.set);
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
