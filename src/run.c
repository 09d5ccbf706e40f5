/* The run as its list of stages (run.h). */
#include "run.h"
#include "helper.h"
#include "analyze.h"
#include "budget.h"
#include "diffside.h"
#include "explain.h"
#include "loader.h"
#include "outfile.h"
#include "partial.h"
#include "ranks.h"
#include "script.h"
#include "timeline.h"
#include "window.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Seconds spent, for --verbose; the stages add to these. */
enum { ST_READ, ST_ANALYZE, ST_CLASSIFY, ST_TIMELINE, ST_FINISH, ST_OUTPUT, ST_N, ST_OWN = -1 };
static const char *const timer_names[ST_N] = {"read", "sort+pair+context", "classify", "timeline",
					      "aggregate+done", "output"};

typedef struct run run;

/* Where the traces come from. */
typedef struct source {
	const char *cmd, *args;       /* for messages: the command and what follows its rule file */
	int (*plan)(run *r);          /* fills r->plan: 0, or an exit code with r->err */
	int (*check_rules)(run *r);   /* after the rule file is open: 0, or an exit code (said) */
	void (*start)(run *r);
	hm_load *(*next)(run *r, int i); /* trace i of r->files, in order; r->catev when classified */
	void (*counts)(run *r);       /* the report's classify calls and cache hits */
	int (*problems)(run *r);      /* traces missing or damaged: the run fails (exit 4) */
	void (*stop)(run *r);
} source;

/* Where the finished report goes. */
typedef struct sink {
	const char *name;
	int whole;  /* the report is finished here: aggregations, done(report), the duplicate-rank
		     * warning (a partial's are the merge's) */
	int judged; /* budgets are checked before it (the outputs show them) and said after */
	int (*write)(run *r);
} sink;

struct run {
	const hm_opts *o;
	const source *src;
	const sink *snk;
	hm_merge *merge;        /* the partials source's */
	hm_loader *loader;      /* the traces source's */
	int show, shown;        /* its progress line */
	double start;
	hm_load merged;         /* the partials source's trace at hand */
	int32_t *catev;         /* the categories the source gave the trace at hand, or NULL */
	hm_plan plan;
	int plan_borrowed;      /* plan is the source's own */
	hm_runinfo info;
	hm_runopt *options;
	char **files;
	int nfiles;
	hm_script *script;
	hm_strtab cats;
	hm_report rep;
	hm_verdict verdict;
	hm_budgets budgets;
	size_t ncut;            /* traces kept only up to a cut (--keep-going) */
	size_t nmissing;        /* traces without the steps of --steps */
	char no_steps[2048];    /* and the steps they have */
	char *diff_text;        /* the diff side's */
	size_t diff_len;
	double stage_s[ST_N];
	hm_walk **walks;        /* by file (rep.files): its series' first timeline pass, done while
				 * it was classified (stage_classify); NULL where hm_timeline does it */
	int rc;                 /* the sink's */
	char err[8192];
};


/* The traces this run reads, in plan order: all of them or the shard's part (--shard
 * I/N); info.file_idx gets each one's index in the plan. */
static void plan_files(run *r)
{
	const hm_opts *o = r->o;
	hm_plan *plan = &r->plan;
	int *of = hm_xcalloc((size_t)plan->n + 1, sizeof *of);
	r->info.shard = o->shard_i, r->info.nshards = o->nshards;
	if (o->shard)
		hm_plan_assign(plan, o->nshards, of);
	r->files = hm_xcalloc((size_t)plan->n + 1, sizeof *r->files);
	r->info.file_idx = hm_xcalloc((size_t)plan->n + 1, sizeof *r->info.file_idx);
	for (int i = 0; i < plan->n; i++)
		if (of[i] == r->info.shard) {
			r->info.file_idx[r->nfiles] = i;
			r->files[r->nfiles++] = hm_xstrdup(plan->path[i]);
		}
	free(of);
}

static int traces_plan(run *r)
{
	return hm_plan_make(r->o->paths, r->o->npaths, &r->plan, r->err, sizeof r->err);
}

static int no_check(run *r)
{
	(void)r;
	return 0;
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
	char d[32], t[32], rt[32];
	hm_fmt_bytes(d, sizeof d, (int64_t)done);
	hm_fmt_bytes(t, sizeof t, (int64_t)total);
	hm_fmt_bytes(rt, sizeof rt, (int64_t)rate);
	fprintf(stderr, "\r\033[Khmem: %d/%d traces, %s of %s read, %s/s", files, nfiles, d, t, rt);
	if (rate > 0 && total > done)
		fprintf(stderr, ", %.0f s left", (double)(total - done) / rate);
}

static void traces_start(run *r)
{
	r->loader = hm_loader_start(r->files, r->nfiles, r->o->njobs, r->o->keep_going);
	r->show = !r->o->quiet && isatty(2);
	r->start = hm_now();
}

static hm_load *traces_next(run *r, int i)
{
	hm_load *ld;
	while (!(ld = hm_loader_wait(r->loader, i, r->show ? 250 : -1))) {
		progress_line(r->loader, r->nfiles, r->start, 0);
		r->shown = 1;
	}
	if (r->shown)
		progress_line(r->loader, r->nfiles, r->start, 1), r->shown = 0;
	return ld;
}

static void traces_counts(run *r)
{
	r->rep.classify_calls = r->script ? hm_script_calls(r->script) : 0;
	r->rep.cache_hits = r->script ? hm_script_cache_hits(r->script) : 0;
}

static int no_problems(run *r)
{
	(void)r;
	return 0;
}

static void traces_stop(run *r)
{
	hm_loader_stop(r->loader);
	r->loader = NULL;
}

static const source traces = {"run", "PATH", traces_plan, no_check, traces_start, traces_next, traces_counts,
			      no_problems, traces_stop};

static int partials_plan(run *r)
{
	r->plan = *hm_merge_plan(r->merge); /* the merge's: not freed here */
	r->plan_borrowed = 1;
	return 0;
}

/* The merge runs the rule file its user names, which must be the one the shards ran. */
static int partials_check_rules(run *r)
{
	if (!strcmp(r->info.rules_hash, hm_merge_rules_hash(r->merge)))
		return 0;
	hm_eprintf("hmem: merge: the rule file %s (digest %s, with the modules it requires) is not the one the "
		   "partials were made with (%s, digest %s): refused; name the rule file the shards ran (and -I DIR "
		   "where it requires modules from there)\n", r->o->rules, r->info.rules_hash, hm_merge_rules(r->merge),
		   hm_merge_rules_hash(r->merge));
	return HM_EXIT_INPUT;
}

static void partials_start(run *r)
{
	(void)r;
}

/* Trace i as the loader would hand it over: a file with the categories its shard gave, or
 * a skipped trace (a damaged store too). */
static hm_load *partials_next(run *r, int i)
{
	const char *why = NULL;
	hm_load *ld = &r->merged;
	free(r->catev); /* of a trace whose store could not be read */
	r->catev = NULL;
	*ld = (hm_load){0};
	int rc = hm_merge_file(r->merge, i, &r->cats, &ld->f, &r->catev, &why, &ld->lost, r->err, sizeof r->err);
	ld->code = HM_EXIT_INPUT;
	ld->err = rc < 0 ? r->err : (char *)why;
	return ld;
}

static void partials_counts(run *r)
{
	r->rep.classify_calls = hm_merge_calls(r->merge), r->rep.cache_hits = hm_merge_cache_hits(r->merge);
}

static int partials_problems(run *r)
{
	return hm_merge_problems(r->merge);
}

static void partials_stop(run *r)
{
	(void)r;
}

static const source partials = {"merge", "PARTIAL", partials_plan, partials_check_rules, partials_start,
				partials_next, partials_counts, partials_problems, partials_stop};


/* Cut a trace to the window, before anything of it is classified. A trace without the
 * window's steps keeps nothing (said, unless quiet); the steps it has are added to
 * r->no_steps, for the usage error of a run where no trace has them. */
static int stage_window(run *r, hm_file *f)
{
	const hm_window *w = &r->o->win;
	if (!w->on)
		return 0;
	int64_t from, to;
	if (hm_window_bounds(w, f->t, &from, &to) != 0) {
		char steps[200], asked[40];
		size_t len = strlen(r->no_steps), n = sizeof r->no_steps;
		hm_window_steps_of(f->t, steps, sizeof steps);
		if (len < n)
			snprintf(r->no_steps + len, n - len, "%s%s: %s", len ? "; " : "", f->t->path, steps);
		snprintf(asked, sizeof asked, w->step_a == w->step_b ? "#%d" : "#%d to #%d", (int)w->step_a, (int)w->step_b);
		if (!r->o->quiet)
			hm_eprintf("hmem: warning: %s has no ProfilerStep%s (its steps: %s): nothing of it is in the window\n",
				   f->t->path, asked, steps);
		r->nmissing++;
	}
	hm_window_apply(f, from, to);
	return 0;
}

/* A file's series walked for the timeline (hm_timeline_walk) on a helper thread: it reads
 * what the analysis and the window wrote, and writes only w, its own until joined. */
typedef struct walker {
	const hm_file *f;
	hm_walk *w;
} walker;

static void walk_series(void *arg)
{
	walker *wk = arg;
	for (size_t i = 0; i < wk->f->nseries; i++)
		hm_timeline_walk(&wk->f->series[i], &wk->f->t->mem, &wk->w[i]);
}

/* The categories the source gave (a partial's), else the rule file's, else none.
 * Classification runs on this thread (Lua) while a helper walks the file's series for
 * the timeline, on a core that would sit idle (helper.h: where -j leaves it one; else the
 * walk runs here after): classification writes only s->cat, which the walk never reads. */
static int stage_classify(run *r, hm_file *f)
{
	int rc = 0;
	walker wk = {f, hm_xcalloc(f->nseries ? f->nseries : 1, sizeof *wk.w)};
	hm_helper h;
	hm_helper_start(&h, walk_series, &wk);
	if (r->catev || !r->script) {
		hm_file_given_cats(f, r->catev);
	} else if (hm_script_classify(r->script, f, &r->cats, r->err, sizeof r->err) != 0) {
		hm_eprintf("hmem: %s\n", r->err);
		rc = HM_EXIT_SCRIPT;
	}
	hm_helper_join(&h);
	r->walks[r->rep.nfiles - 1] = wk.w;
	free(r->catev);
	r->catev = NULL;
	return rc;
}

static const struct trace_stage {
	const char *name;
	int (*run)(run *r, hm_file *f); /* 0, or the exit code that ends the run (said) */
} per_trace[] = {
	{"window", stage_window},
	{"classify", stage_classify},
};

/* A trace the source could not give: the run stops, or with --keep-going goes on without
 * it (said, and the run fails at the end). */
static int skip(run *r, int i, hm_load *ld)
{
	const hm_opts *o = r->o;
	if (!o->keep_going) {
		hm_eprintf("hmem: %s\n", ld->err);
		hm_eprintf("hmem: stopped; use --keep-going to skip traces that cannot be read\n");
		return ld->code;
	}
	if (!o->quiet)
		hm_eprintf("hmem: skipped %s (%llu events read before the error are not used)\n", ld->err,
			   (unsigned long long)ld->lost);
	r->info.skip_idx[r->rep.nskipped] = r->info.file_idx[i];
	hm_skip *sk = &r->rep.skipped[r->rep.nskipped++];
	sk->path = hm_xstrdup(r->files[i]);
	sk->why = hm_xstrdup(ld->err);
	sk->events = ld->lost;
	return 0;
}

/* What a trace says of itself as it comes: cut short, a snapshot where a JSON trace is
 * needed, no memory events. 0, or an exit code (said). */
static int accept(run *r, hm_file *f)
{
	const hm_opts *o = r->o;
	hm_trace *t = f->t;
	if (t->cut_at) {
		r->ncut++;
		if (!o->quiet)
			hm_eprintf("hmem: warning: %s\nhmem: kept the %llu complete events before byte %llu; "
				   "the %llu bytes after it are lost\n", t->cut_why, (unsigned long long)t->events,
				   (unsigned long long)t->cut_at, (unsigned long long)t->lost_bytes);
	}
	for (int j = 0; t->snap && j < N_OUTPUTS; j++) /* --annotate copies a JSON trace; a pickle is none */
		if (o->out[j] && outputs[j].one_trace) {
			hm_eprintf("hmem: %s: %s is a memory snapshot (a pickle): only a JSON trace can be annotated; "
				   "--perfetto writes the counter tracks alone\n", outputs[j].flag, t->path);
			return HM_EXIT_USAGE;
		}
	if (!o->quiet && t->mem.n == 0)
		hm_eprintf("hmem: note: %s has no [memory] events%s\n", t->path,
			   t->top_array ? " (a bare array of events, as PyTorch's profiler writes without Kineto: it records "
					  "no memory even with profile_memory=True; use a PyTorch built with Kineto)"
			   : t->has_trace_events ? " (record with torch.profiler.profile(profile_memory=True))"
						 : " (no traceEvents in it)");
	return 0;
}


/* Each trace from the source, in plan order, through the stages of a trace; then, with
 * --steps, the run is a usage error when no trace has any of them. */
static int stage_source(run *r)
{
	const hm_opts *o = r->o;
	int rc;
	r->src->start(r);
	for (int i = 0; i < r->nfiles; i++) {
		size_t cats_before = r->cats.n;
		hm_load *ld = r->src->next(r, i);
		r->stage_s[ST_READ] += ld->read_s;
		r->stage_s[ST_ANALYZE] += ld->analyze_s;
		if (!ld->f) {
			if ((rc = skip(r, i, ld)) != 0)
				return rc;
			continue;
		}
		hm_file *f = ld->f;
		ld->f = NULL;
		r->rep.files[r->rep.nfiles++] = f;
		double t0 = hm_now();
		if ((rc = accept(r, f)) != 0)
			return rc;
		for (size_t s = 0; s < sizeof per_trace / sizeof *per_trace; s++)
			if ((rc = per_trace[s].run(r, f)) != 0)
				return rc;
		r->info.cat_from[r->rep.nfiles - 1] = cats_before;
		r->info.file_idx[r->rep.nfiles - 1] = r->info.file_idx[i];
		r->stage_s[ST_CLASSIFY] += hm_now() - t0;
	}
	r->info.cat_from[r->rep.nfiles] = r->cats.n;
	r->src->stop(r);
	const hm_window *w = &o->win;
	if (w->by_steps && r->nmissing && r->nmissing == r->rep.nfiles && !o->shard) { /* a shard: the merge says it */
		char msg[sizeof r->no_steps + 100];
		if (w->step_a == w->step_b)
			snprintf(msg, sizeof msg, "--steps %d: no trace has ProfilerStep#%d (%s)", (int)w->step_a,
				 (int)w->step_a, r->no_steps);
		else
			snprintf(msg, sizeof msg, "--steps %d-%d: no trace has any of ProfilerStep#%d to #%d (%s)",
				 (int)w->step_a, (int)w->step_b, (int)w->step_a, (int)w->step_b, r->no_steps);
		return hm_usage_error("%s", msg);
	}
	return 0;
}

/* Per series, the timeline, and the check of rule 6: a mismatch means events are missing
 * or the trace has more than one allocator writing one counter. */
static int stage_timeline(run *r)
{
	for (size_t i = 0; i < r->rep.nfiles; i++) {
		const hm_file *f = r->rep.files[i];
		for (size_t k = 0; k < f->nseries; k++) {
			hm_series *s = &f->series[k];
			hm_timeline_with(s, &f->t->mem, r->cats.n, r->walks[i] ? &r->walks[i][k] : NULL);
			if (!s->mismatches || r->o->quiet)
				continue;
			char ts[32];
			hm_fmt_us(ts, hm_mem_ts(&f->t->mem, s->ev[s->first_mismatch]));
			hm_eprintf("hmem: warning: %s %s: the sum of categories differs from the trace's Total Allocated "
				   "after %llu of %zu events (first at ts %s)\n", f->t->path, s->device,
				   (unsigned long long)s->mismatches, s->n, ts);
		}
	}
	return 0;
}

static int stage_explain(run *r)
{
	for (size_t i = 0; i < r->rep.nfiles; i++)
		hm_explain(r->rep.files[i], r->cats.n);
	hm_explain_note_mixed(r->rep.files, r->rep.nfiles, r->o->quiet);
	if (r->snk->whole)
		hm_ranks_warn_duplicates(&r->rep, r->o->quiet);
	if (r->rep.nskipped && !r->o->quiet)
		hm_eprintf("hmem: %zu of %d traces skipped (see above)\n", r->rep.nskipped, r->nfiles);
	return 0;
}

/* The aggregations and done(report), for a sink that takes a finished report, and the
 * budgets checked, for one that shows them. */
static int stage_finish(run *r)
{
	r->src->counts(r);
	if (r->script) {
		r->rep.rules = hm_script_name(r->script);
		if (r->snk->whole && hm_script_finish(r->script, &r->rep, r->err, sizeof r->err) != 0) {
			hm_eprintf("hmem: %s\n", r->err);
			return HM_EXIT_SCRIPT;
		}
	}
	hm_budgets_merge(&r->budgets, &r->o->budgets);
	if (r->script)
		hm_budgets_merge(&r->budgets, hm_script_verdict(r->script));
	if (r->snk->judged)
		hm_budget_eval(&r->budgets, &r->rep, &r->verdict), r->rep.verdict = &r->verdict;
	return 0;
}

static int stage_sink(run *r)
{
	r->rc = r->snk->write(r);
	return 0;
}

/* -v's counts and times, then the exit code: a trace skipped or cut, or missing from the
 * partials, fails the run once every output is written (like make -k); broken budgets are
 * listed last, and exit 6 only when nothing else failed (README "Errors and exit codes"). */
static int stage_verdict(run *r)
{
	const hm_report *rep = &r->rep;
	int rc = r->rc;
	if (r->o->verbose) {
		uint64_t events = 0, mem = 0, classified = rep->classify_calls + rep->cache_hits;
		for (size_t i = 0; i < rep->nfiles; i++)
			events += rep->files[i]->t->events, mem += rep->files[i]->t->mem.n;
		hm_eprintf("hmem: %d traces, %llu events, %llu memory events, %llu classify calls, %llu cache hits\n",
			   r->nfiles, (unsigned long long)events, (unsigned long long)mem,
			   (unsigned long long)rep->classify_calls, (unsigned long long)rep->cache_hits);
		uint64_t kinds[HM_EV_KINDS] = {0};
		for (size_t i = 0; i < rep->nfiles; i++)
			for (int k = 0; k < HM_EV_KINDS; k++)
				kinds[k] += rep->files[i]->t->count[k];
		hm_eprintf("hmem: events read %llu = used (memory %llu, host slices %llu, thread names %llu)"
			   " + not used (oom %llu, device slices %llu, flows %llu, metadata %llu, other %llu)\n",
			   (unsigned long long)events, (unsigned long long)kinds[HM_EV_MEMORY],
			   (unsigned long long)kinds[HM_EV_HOST_SLICE], (unsigned long long)kinds[HM_EV_THREAD_NAME],
			   (unsigned long long)kinds[HM_EV_OOM], (unsigned long long)kinds[HM_EV_DEVICE_SLICE],
			   (unsigned long long)kinds[HM_EV_FLOW], (unsigned long long)kinds[HM_EV_METADATA],
			   (unsigned long long)kinds[HM_EV_OTHER]);
		for (int st = 0; st < ST_N; st++)
			hm_eprintf("hmem: %-18s %8.3f s%s\n", timer_names[st], r->stage_s[st],
				   st <= ST_ANALYZE ? " (summed over the reading threads)" : "");
		if (classified && r->stage_s[ST_CLASSIFY] > 0)
			hm_eprintf("hmem: classify: %.0f rows/s (%.0f ns per row)\n",
				   (double)classified / r->stage_s[ST_CLASSIFY],
				   r->stage_s[ST_CLASSIFY] * 1e9 / (double)classified);
	}
	if (rc == HM_EXIT_OK && (rep->nskipped || r->ncut))
		rc = HM_EXIT_INPUT;
	if (rc == HM_EXIT_OK && r->src->problems(r))
		rc = HM_EXIT_INPUT; /* a trace missing, twice, or unreadable: said, the rest written */
	if (r->snk->judged && (rc == HM_EXIT_OK || rc == HM_EXIT_INPUT) && hm_budget_report(&r->verdict, rep, r->o->quiet) &&
	    rc == HM_EXIT_OK)
		rc = HM_EXIT_BUDGET;
	return rc;
}

/* The stages of the report, in order; source runs the stages of each trace (per_trace).
 * Each returns 0, or the exit code that ends the run there (verdict: the run's). */
static const struct run_stage {
	const char *name;
	int timer;               /* what --verbose adds its time to (ST_OWN: the stage times itself) */
	int (*run)(run *r);
} stages[] = {
	{"source", ST_OWN, stage_source},
	{"timeline", ST_TIMELINE, stage_timeline},
	{"explain", ST_TIMELINE, stage_explain},
	{"finish", ST_FINISH, stage_finish},
	{"sink", ST_OUTPUT, stage_sink},
	{"verdict", ST_OWN, stage_verdict},
};


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
static int write_outputs(run *r)
{
	const hm_opts *o = r->o;
	hm_report copy = r->rep;
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

/* --db and --partial record besides the report what a merge needs (partial.h): each
 * trace's categories per event, the options that shape results. */
static int write_with_info(run *r, int complete)
{
	hm_runinfo *in = &r->info;
	in->catev = hm_xcalloc((size_t)r->rep.nfiles + 1, sizeof *in->catev);
	for (size_t i = 0; i < r->rep.nfiles; i++)
		in->catev[i] = hm_partial_capture(r->rep.files[i]);
	in->opts = r->options = hm_merge_options_of(r->o, &in->nopts);
	in->complete = complete;
	r->rep.info = in;
	return write_outputs(r);
}

static int write_db(run *r)
{
	return write_with_info(r, 1);
}

static int write_partial(run *r)
{
	return write_with_info(r, 0);
}

static int write_diff_side(run *r)
{
	r->diff_text = hm_diff_side_json(&r->rep, &r->diff_len);
	return r->diff_text ? HM_EXIT_OK : HM_EXIT_INTERNAL;
}

static const sink to_outputs = {"outputs", 1, 1, write_outputs};
static const sink to_db = {"db", 1, 1, write_db};             /* --db, with the other outputs */
static const sink to_partial = {"partial", 0, 0, write_partial}; /* --partial, alone */
static const sink to_diff_side = {"diff side", 1, 0, write_diff_side};

static const sink *sink_of(const hm_opts *o)
{
	return o->out[OUT_PARTIAL] ? &to_partial : o->out[OUT_DB] ? &to_db : &to_outputs;
}


/* Before any trace is read: the plan, the checks of the command line against it, the
 * rule file. 0, or an exit code (said). */
static int prepare(run *r)
{
	const hm_opts *o = r->o;
	int rc;
	if ((rc = r->src->plan(r)) != 0) {
		hm_eprintf("hmem: %s\n", r->err);
		return rc;
	}
	plan_files(r);
	size_t n = (size_t)r->nfiles + 1;
	r->info.plan = &r->plan;
	r->info.cat_from = hm_xcalloc(n, sizeof *r->info.cat_from);
	r->info.skip_idx = hm_xcalloc(n, sizeof *r->info.skip_idx);
	if (r->nfiles == 0 && !o->shard) {
		hm_eprintf("hmem: no trace files (*.json, *.json.gz) found in");
		for (int i = 0; i < o->npaths; i++)
			hm_eprintf(" %s", o->paths[i]);
		hm_eprintf("\n");
		return HM_EXIT_INPUT;
	}
	if ((rc = hm_check_outputs(o, r->files, r->nfiles)) != 0)
		return rc;
	const char *rules = o->rules;
	size_t rl = rules ? strlen(rules) : 0;
	if (rules && ((rl > 5 && !strcmp(rules + rl - 5, ".json")) || (rl > 3 && !strcmp(rules + rl - 3, ".gz")))) {
		hm_eprintf("hmem: %s looks like a trace; the first argument of '%s' is the rule file: hmem %s RULES.lua "
			   "%s...\n", rules, r->src->cmd, r->src->cmd, r->src->args);
		return HM_EXIT_USAGE;
	}
	hm_script_opts so = {o->rules, o->inc, o->ninc, o->allow_io, o->out_dir, o->timeout_s, o->lua_mem_bytes,
			     o->set, o->nset, o->quiet};
	r->rep.top = o->top_n;
	if (o->rules && !(r->script = hm_script_open(&so, &r->cats, r->err, sizeof r->err))) {
		hm_eprintf("hmem: %s\n", r->err);
		return HM_EXIT_SCRIPT;
	}
	if (r->script) {
		r->info.rules_hash = hm_script_digest(r->script);
		if ((rc = r->src->check_rules(r)) != 0)
			return rc;
	}
	r->rep.files = hm_xcalloc((size_t)r->nfiles, sizeof *r->rep.files);
	r->walks = hm_xcalloc((size_t)r->nfiles + 1, sizeof *r->walks);
	r->rep.skipped = hm_xcalloc((size_t)r->nfiles, sizeof *r->rep.skipped);
	return 0;
}

static void cleanup(run *r)
{
	hm_loader_stop(r->loader);
	hm_script_close(r->script);
	hm_report *rep = &r->rep;
	for (size_t i = 0; i < rep->nfiles; i++)
		hm_file_free(rep->files[i]), free(r->walks[i]);
	free(r->walks);
	for (size_t i = 0; i < rep->nskipped; i++)
		free(rep->skipped[i].path), free(rep->skipped[i].why);
	free(rep->files);
	free(rep->skipped);
	for (size_t i = 0; i < rep->naggs; i++)
		hm_agg_free(&rep->aggs[i]);
	free(rep->aggs);
	for (int i = 0; i < r->nfiles; i++)
		free(r->files[i]);
	free(r->files);
	hm_strtab_free(&r->cats);
	hm_runinfo *in = &r->info;
	for (size_t i = 0; in->catev && i < rep->nfiles; i++)
		free(in->catev[i]);
	free(in->catev), free(in->cat_from), free(in->file_idx), free(in->skip_idx), free(r->options), free(r->catev);
	hm_verdict_free(&r->verdict);
	hm_budgets_free(&r->budgets);
	if (!r->plan_borrowed)
		hm_plan_free(&r->plan);
}

static int run_stages(const hm_opts *o, const source *src, hm_merge *m, const sink *snk, char **text, size_t *len)
{
	run *r = hm_xcalloc(1, sizeof *r);
	r->o = o, r->src = src, r->snk = snk, r->merge = m;
	r->rep.rules = o->rules;
	r->rep.cats = &r->cats;
	if (o->win.on)
		hm_strtab_intern(&r->cats, "(before window)", 15);
	else
		hm_strtab_intern(&r->cats, "(before trace)", 14);
	int rc = prepare(r);
	for (size_t s = 0; s < sizeof stages / sizeof *stages && rc == 0; s++) {
		double t0 = hm_now();
		rc = stages[s].run(r);
		if (stages[s].timer != ST_OWN)
			r->stage_s[stages[s].timer] += hm_now() - t0;
	}
	cleanup(r);
	if (text)
		*text = r->diff_text, *len = r->diff_len;
	else
		free(r->diff_text);
	free(r);
	return rc;
}

int hm_run(const hm_opts *o)
{
	return run_stages(o, &traces, NULL, sink_of(o), NULL, NULL);
}

int hm_run_merge(const hm_opts *o, hm_merge *m)
{
	return run_stages(o, &partials, m, sink_of(o), NULL, NULL);
}

int hm_run_diff_side(const hm_opts *o, char **text, size_t *len)
{
	*text = NULL, *len = 0;
	int rc = run_stages(o, &traces, NULL, &to_diff_side, text, len);
	if (rc != HM_EXIT_OK) {
		free(*text);
		*text = NULL, *len = 0;
	}
	return rc;
}
