/* The merge of partials (merge.h). */
#include "merge.h"
#include "partial.h"
#include "util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#ifndef HM_VERSION
#define HM_VERSION "0.0.0"
#endif

struct hm_merge {
	hm_partial **p;
	char **path;
	int n;
	hm_plan plan;
	int *owner;        /* plan index -> partial holding it, -1 none */
	int *skipped;      /* plan index -> its shard skipped it */
	char **why;        /* plan index -> why it was skipped (or missing) */
	int64_t *events;   /* plan index -> events read before the error */
	hm_strtab *cats;   /* per partial: its category names by id */
	int problems;
	uint64_t calls, hits;
	char *rules, *rules_hash, *options;
	char **argv;       /* the options as arguments (into options_buf) */
	char *options_buf;
};

typedef struct cover_ctx {
	hm_merge *m;
	int k;
} cover_ctx;

static void cover(void *ctx, int idx, int skipped, const char *why, int64_t events)
{
	cover_ctx *c = ctx;
	hm_merge *m = c->m;
	if (idx < 0 || idx >= m->plan.n)
		return;
	if (m->owner[idx] >= 0) {
		hm_eprintf("hmem: merge: %s is in both %s and %s (a shard given twice?); the first is used\n",
			   m->plan.path[idx], m->path[m->owner[idx]], m->path[c->k]);
		m->problems++;
		return;
	}
	m->owner[idx] = c->k;
	m->skipped[idx] = skipped;
	if (skipped)
		m->why[idx] = hm_xstrdup(why), m->events[idx] = events;
}

/* The first difference of key between partial k and the first one, said in err. */
static int differs(hm_merge *m, int k, const char *key, const char *what, char *err, size_t errsz)
{
	char first[4096];
	snprintf(first, sizeof first, "%s", hm_partial_meta(m->p[0], key));
	const char *v = hm_partial_meta(m->p[k], key);
	if (!strcmp(first, v))
		return 0;
	snprintf(err, errsz, "merge: %s and %s come from different %s (%.200s and %.200s): refused; run every shard with "
		 "the same hmem, rule file and options, then merge", m->path[0], m->path[k],
		 what, first, v);
	for (char *c = err; *c; c++)
		if (*c == '\n')
			*c = ' ';
	return 1;
}

int hm_merge_open(char **paths, int n, hm_merge **out, char *err, size_t errsz)
{
	hm_merge *m = hm_xcalloc(1, sizeof *m);
	*out = NULL;
	m->p = hm_xcalloc((size_t)n, sizeof *m->p);
	m->path = paths;
	int rc = 0;
	for (int k = 0; k < n && !rc; k++, m->n++)
		rc = hm_partial_open(paths[k], &m->p[k], err, errsz);
	if (rc) {
		m->n--;
		hm_merge_close(m);
		return rc;
	}
	if (strcmp(hm_partial_meta(m->p[0], "hmem_version"), HM_VERSION)) {
		snprintf(err, errsz, "merge: %s was written by hmem %s, this is hmem %s: refused; merge with the hmem that wrote "
			 "it, or run the shards again with this one", paths[0],
			 hm_partial_meta(m->p[0], "hmem_version"), HM_VERSION);
		hm_merge_close(m);
		return HM_EXIT_INPUT;
	}
	const char *keys[][2] = {{"hmem_version", "hmem versions"}, {"rules_hash", "rule files (or modules they require)"},
				 {"options", "options"}, {"plan_hash", "plans (file lists)"}};
	for (int k = 1; k < n; k++)
		for (size_t j = 0; j < sizeof keys / sizeof *keys; j++)
			if (differs(m, k, keys[j][0], keys[j][1], err, errsz)) {
				hm_merge_close(m);
				return HM_EXIT_INPUT;
			}
	m->rules = hm_xstrdup(hm_partial_meta(m->p[0], "rules"));
	m->rules_hash = hm_xstrdup(hm_partial_meta(m->p[0], "rules_hash"));
	m->options = hm_xstrdup(hm_partial_meta(m->p[0], "options"));
	hm_partial_plan(m->p[0], &m->plan);
	size_t np = (size_t)m->plan.n + 1;
	m->owner = hm_xcalloc(np, sizeof *m->owner);
	m->skipped = hm_xcalloc(np, sizeof *m->skipped);
	m->why = hm_xcalloc(np, sizeof *m->why);
	m->events = hm_xcalloc(np, sizeof *m->events);
	m->cats = hm_xcalloc((size_t)n, sizeof *m->cats);
	for (int i = 0; i < m->plan.n; i++)
		m->owner[i] = -1;
	for (int k = 0; k < n; k++) {
		cover_ctx c = {m, k};
		hm_partial_each_file(m->p[k], cover, &c);
		hm_partial_categories(m->p[k], &m->cats[k]);
		m->calls += strtoull(hm_partial_meta(m->p[k], "classify_calls"), NULL, 10);
		m->hits += strtoull(hm_partial_meta(m->p[k], "cache_hits"), NULL, 10);
	}
	for (int i = 0; i < m->plan.n; i++)
		if (m->owner[i] < 0) {
			char why[8192];
			snprintf(why, sizeof why, "%s: in no partial (its shard is missing or failed)", m->plan.path[i]);
			hm_eprintf("hmem: merge: no partial holds %s (its shard is missing or failed: run that shard "
				   "again, hmem plan --shard I/N shows which, and merge once more)\n", m->plan.path[i]);
			m->why[i] = hm_xstrdup(why);
			m->problems++;
		}
	*out = m;
	return 0;
}

void hm_merge_close(hm_merge *m)
{
	if (!m)
		return;
	for (int k = 0; k < m->n; k++)
		hm_partial_close(m->p[k]);
	for (int i = 0; m->why && i < m->plan.n; i++)
		free(m->why[i]);
	for (int k = 0; m->cats && k < m->n; k++)
		hm_strtab_free(&m->cats[k]);
	hm_plan_free(&m->plan);
	free(m->p), free(m->owner), free(m->skipped), free(m->why), free(m->events), free(m->cats);
	free(m->rules), free(m->rules_hash), free(m->options), free(m->argv), free(m->options_buf);
	free(m);
}

const hm_plan *hm_merge_plan(const hm_merge *m)
{
	return &m->plan;
}

int hm_merge_problems(const hm_merge *m)
{
	return m->problems;
}

const char *hm_merge_rules(const hm_merge *m)
{
	return m->rules;
}

const char *hm_merge_rules_hash(const hm_merge *m)
{
	return m->rules_hash;
}

uint64_t hm_merge_calls(const hm_merge *m)
{
	return m->calls;
}

uint64_t hm_merge_cache_hits(const hm_merge *m)
{
	return m->hits;
}

static void add(char **s, size_t *len, const char *a, const char *b)
{
	size_t la = strlen(a), lb = b ? strlen(b) + 1 : 0;
	*s = hm_xrealloc(*s, *len + la + lb + 2);
	memcpy(*s + *len, a, la);
	(*s)[*len + la] = '\n';
	if (b) {
		memcpy(*s + *len + la + 1, b, lb - 1);
		(*s)[*len + la + lb] = '\n';
	}
	*len += la + 1 + lb;
	(*s)[*len] = 0;
}

char *hm_merge_options_of(const hm_opts *o)
{
	char *s = hm_xstrdup("");
	size_t len = 0;
	for (int i = 0; i < o->ninc; i++)
		add(&s, &len, "-I", o->inc[i]);
	for (int i = 0; i < o->nset; i++)
		add(&s, &len, "--set", o->set[i]);
	const char *one[][2] = {{"--out", o->out_dir}, {"--top", o->top}, {"--timeout", o->timeout}, {"--lua-mem", o->lua_mem},
				{"--steps", o->steps}, {"--from", o->from}, {"--to", o->to}};
	for (size_t i = 0; i < sizeof one / sizeof *one; i++)
		if (one[i][1])
			add(&s, &len, one[i][0], one[i][1]);
	if (o->allow_io)
		add(&s, &len, "--allow-io", NULL);
	return s;
}

int hm_merge_apply_options(hm_merge *m, hm_opts *o, char *err, size_t errsz)
{
	m->options_buf = hm_xstrdup(m->options);
	int argc = 3;
	for (char *c = m->options_buf; *c; c++)
		argc += *c == '\n';
	m->argv = hm_xcalloc((size_t)argc + 2, sizeof *m->argv);
	m->argv[0] = "hmem", m->argv[1] = "run", m->argv[2] = m->rules;
	int k = 3;
	for (char *c = m->options_buf, *nl; (nl = strchr(c, '\n')); c = nl + 1)
		*nl = 0, m->argv[k++] = c;
	m->argv[k++] = m->path[0];
	hm_opts x = {.cmd = "run"};
	int rc = hm_parse_args(k, m->argv, &x);
	if (rc == 0) {
		o->rules = m->rules;
		free(o->inc), free(o->set);
		o->inc = x.inc, o->ninc = x.ninc, o->set = x.set, o->nset = x.nset;
		o->out_dir = x.out_dir, o->top = x.top, o->timeout = x.timeout, o->lua_mem = x.lua_mem;
		o->steps = x.steps, o->from = x.from, o->to = x.to, o->win = x.win, o->allow_io = x.allow_io;
		x.inc = NULL, x.set = NULL;
	} else {
		snprintf(err, errsz, "merge: the options in %s do not parse", m->path[0]);
	}
	free(x.paths), free(x.inc), free(x.set), free(x.fail_above);
	return rc ? HM_EXIT_INPUT : 0;
}

static void intern_new(void *ctx, const char *name, size_t len)
{
	hm_strtab_intern(ctx, name, len);
}

int hm_merge_file(hm_merge *m, int i, hm_strtab *cats, hm_file **f, int32_t **catev, const char **why,
		  uint64_t *events, char *err, size_t errsz)
{
	*f = NULL, *catev = NULL;
	int k = m->owner[i];
	if (k < 0 || m->skipped[i]) {
		*why = m->why[i], *events = (uint64_t)m->events[i];
		return 1;
	}
	hm_trace *t = hm_partial_trace(m->p[k], i, catev, err, errsz);
	if (!t) {
		m->problems++;
		return -1;
	}
	hm_partial_new_categories(m->p[k], i, intern_new, cats);
	/* The partial's ids -> ours, by name, for the ids this trace uses: each is one it
	 * introduced or one an earlier trace did, so in cats by now (interning nothing new). */
	const hm_strtab *pc = &m->cats[k];
	int64_t *map = hm_xcalloc(pc->n + 1, sizeof *map);
	for (size_t c = 0; c < pc->n; c++)
		map[c] = -1;
	for (size_t e = 0; e < t->mem.n; e++) {
		int32_t c = (*catev)[e];
		if (c < 0 || (size_t)c >= pc->n)
			continue;
		if (map[c] < 0)
			map[c] = hm_strtab_intern(cats, pc->str[c], pc->len[c]);
		(*catev)[e] = (int32_t)map[c];
	}
	free(map);
	hm_file *a = hm_analyze(t);
	for (size_t s = 0; s < a->nseries; s++)
		for (size_t j = 0; j < a->series[s].n; j++)
			a->series[s].cat[j] = (*catev)[a->series[s].ev[j]];
	*f = a;
	return 0;
}
