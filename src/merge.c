/* The merge of partials (merge.h). */
#include "merge.h"
#include "partial.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef HM_VERSION
#define HM_VERSION "0.0.0"
#endif

/* The options table of a partial, copied. */
typedef struct optlist {
	char **name, **value;
	size_t n, cap, cap2;
} optlist;

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
	char *rules, *rules_hash;
	optlist opts;      /* the first partial's options (the others' are the same) */
	char **argv;       /* those options as hmem run's arguments (into opts) */
	hm_opts shaped;    /* and as hmem run parsed them (into argv) */
};

static void opt_add(void *ctx, const char *name, const char *value)
{
	optlist *l = ctx;
	hm_grow(&l->name, &l->cap, l->n + 1, sizeof *l->name);
	hm_grow(&l->value, &l->cap2, l->n + 1, sizeof *l->value);
	l->name[l->n] = hm_xstrdup(name);
	l->value[l->n++] = hm_xstrdup(value);
}

static void opt_free(optlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->name[i]), free(l->value[i]);
	free(l->name), free(l->value);
	*l = (optlist){0};
}

static int opt_same(const optlist *a, const optlist *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->name[i], b->name[i]) || strcmp(a->value[i], b->value[i]))
			return 0;
	return 1;
}

/* Appends text to buf (sz bytes, *len used), cutting what does not fit. */
static void put(char *buf, size_t sz, size_t *len, const char *text, size_t n)
{
	size_t room = *len < sz ? sz - *len - 1 : 0;
	memcpy(buf + *len, text, n < room ? n : room);
	*len += n < room ? n : room;
	buf[*len] = 0;
}

/* A word for a command line the user may paste, after a space: as it is when the shell
 * reads it so, else in single quotes. */
static void put_word(char *buf, size_t sz, size_t *len, const char *w)
{
	static const char plain[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-";
	if (*len)
		put(buf, sz, len, " ", 1);
	if (*w && strspn(w, plain) == strlen(w)) {
		put(buf, sz, len, w, strlen(w));
		return;
	}
	put(buf, sz, len, "'", 1);
	for (const char *c = w; *c; c++)
		put(buf, sz, len, *c == '\'' ? "'\\''" : c, *c == '\'' ? 4 : 1);
	put(buf, sz, len, "'", 1);
}

/* An options table as the command line that gave it, or "none". */
static void opt_show(const optlist *l, char *buf, size_t sz)
{
	size_t len = 0;
	buf[0] = 0;
	for (size_t i = 0; i < l->n; i++)
		for (int j = 0; j < 2; j++) {
			const char *w = j ? l->value[i] : l->name[i];
			char *e = hm_esc(w, strlen(w), 0, NULL); /* a newline as \x0a: one line */
			put_word(buf, sz, &len, e);
			free(e);
		}
	if (!l->n)
		snprintf(buf, sz, "none");
}

int hm_merge_is_partial(const char *path)
{
	char head[16];
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int yes = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, head, sizeof head) == (ssize_t)sizeof head &&
		  !memcmp(head, "SQLite format 3", sizeof head);
	close(fd);
	return yes;
}

/* Every partial is a regular file: SQLite would wait forever on a FIFO (issue 24). */
static int regular_files(char **paths, int n, char *err, size_t errsz)
{
	struct stat st;
	for (int k = 0; k < n; k++) {
		if (stat(paths[k], &st) != 0) {
			snprintf(err, errsz, "%s: cannot open: %s", paths[k], strerror(errno));
			return HM_EXIT_IO;
		}
		if (!S_ISREG(st.st_mode)) {
			const char *what = S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO"
					 : S_ISSOCK(st.st_mode) ? "a socket" : "a device";
			snprintf(err, errsz, "merge: %s is %s, not a partial: give the files that 'hmem run ... --partial FILE' "
				 "wrote", paths[k], what);
			return HM_EXIT_USAGE;
		}
	}
	return 0;
}

int hm_merge_no_rules(char **paths, int n, int argc, char **argv)
{
	char err[8192], cmd[16384];
	hm_partial *p = NULL;
	int rc = regular_files(paths, n, err, sizeof err);
	if (rc == 0)
		rc = hm_partial_open(paths[0], &p, err, sizeof err);
	if (rc) {
		if (rc == HM_EXIT_USAGE)
			hm_usage_error("%s", err);
		else
			hm_eprintf("hmem: %s\n", err);
		return rc;
	}
	/* Both come from the partial: a newline in them shown as \x0a, never as a line of ours. */
	size_t len = 0;
	const char *v = hm_partial_meta(p, "rules");
	char *rules = hm_esc(v, strlen(v), 0, NULL);
	v = hm_partial_meta(p, "rules_hash");
	char *hash = hm_esc(v, strlen(v), 0, NULL);
	put_word(cmd, sizeof cmd, &len, "hmem"), put_word(cmd, sizeof cmd, &len, "merge");
	put_word(cmd, sizeof cmd, &len, rules);
	for (int i = 2; i < argc; i++)
		put_word(cmd, sizeof cmd, &len, argv[i]);
	hm_eprintf("hmem: merge: no rule file given. %s was made with the rule file %s (digest %s).\n"
		   "hmem: a merge runs only the rule file you name, with only the options you give it: a partial is "
		   "data.\nhmem: if you trust that file, name it first (it must have that digest, with the modules it "
		   "requires):\n  %s\nTry 'hmem --help'.\n", paths[0], rules, hash, cmd);
	free(rules), free(hash);
	hm_partial_close(p);
	return HM_EXIT_USAGE;
}

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

/* The options tables of every partial are the same, row for row, byte for byte. */
static int same_options(hm_merge *m, char *err, size_t errsz)
{
	char a[2048], b[2048];
	for (int k = 0; k < m->n; k++) {
		optlist l = {0};
		if (hm_partial_options(m->p[k], opt_add, k ? (void *)&l : (void *)&m->opts) != 0) {
			snprintf(err, errsz, "merge: %s: its options table is missing or damaged: not a partial of this hmem",
				 m->path[k]);
			return HM_EXIT_INPUT;
		}
		if (k && !opt_same(&m->opts, &l)) {
			opt_show(&m->opts, a, sizeof a), opt_show(&l, b, sizeof b);
			snprintf(err, errsz, "merge: %s and %s come from different options (%.500s and %.500s): refused; run "
				 "every shard with the same options, then merge", m->path[0], m->path[k], a, b);
			opt_free(&l);
			return HM_EXIT_INPUT;
		}
		opt_free(&l);
	}
	return 0;
}

/* Every partial is a part of one split: --shard I/N with the same N. */
static int same_split(hm_merge *m, char *err, size_t errsz)
{
	char first[64];
	int i, n0 = 0, nk;
	for (int k = 0; k < m->n; k++) {
		const char *s = hm_partial_meta(m->p[k], "shard");
		char end;
		if (sscanf(s, "%d/%d%c", &i, &nk, &end) != 2 || nk < 1 || i < 0 || i >= nk) {
			snprintf(err, errsz, "merge: %s: its shard (%.64s) is not I/N: not a partial of this hmem", m->path[k], s);
			return HM_EXIT_INPUT;
		}
		if (!k) {
			n0 = nk;
			snprintf(first, sizeof first, "%s", s);
		} else if (nk != n0) {
			snprintf(err, errsz, "merge: %s is part %s and %s is part %s: the traces were split in two ways "
				 "(--shard I/N with another N): refused; merge the parts of one split", m->path[0], first,
				 m->path[k], s);
			return HM_EXIT_INPUT;
		}
	}
	return 0;
}

/* Each row becomes the two arguments it stands for, for hmem run's own checks, into
 * m->shaped: a name must be one of these (a partial never gives -I, --out, --allow-io,
 * --timeout or --lua-mem), and a value is always an argument, whatever bytes it holds. */
static int parse_options(hm_merge *m, char *err, size_t errsz)
{
	static const char *const shaping[] = {"--set", "--top", "--steps", "--from", "--to"};
	m->argv = hm_xcalloc(2 * m->opts.n + 5, sizeof *m->argv);
	m->argv[0] = "hmem", m->argv[1] = "run", m->argv[2] = "(rules)";
	int k = 3;
	for (size_t i = 0; i < m->opts.n; i++) {
		size_t j = 0;
		while (j < sizeof shaping / sizeof *shaping && strcmp(m->opts.name[i], shaping[j]))
			j++;
		if (j == sizeof shaping / sizeof *shaping) {
			snprintf(err, errsz, "merge: %s gives the option '%.100s': refused; a partial gives only --set, --top, "
				 "--steps, --from and --to (capabilities and limits come from the merge's command line)",
				 m->path[0], m->opts.name[i]);
			return HM_EXIT_INPUT;
		}
		m->argv[k++] = m->opts.name[i], m->argv[k++] = m->opts.value[i];
	}
	m->argv[k++] = m->path[0];
	m->shaped.cmd = "run";
	if (hm_parse_args(k, m->argv, &m->shaped) != 0) {
		snprintf(err, errsz, "merge: the options in %s are not those of hmem run (see above): refused", m->path[0]);
		return HM_EXIT_INPUT;
	}
	return 0;
}

int hm_merge_open(char **paths, int n, hm_merge **out, char *err, size_t errsz)
{
	*out = NULL;
	int rc = regular_files(paths, n, err, errsz);
	if (rc)
		return rc;
	hm_merge *m = hm_xcalloc(1, sizeof *m);
	m->p = hm_xcalloc((size_t)n, sizeof *m->p);
	m->path = paths;
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
				 {"plan_hash", "plans (file lists)"}};
	for (int k = 1; k < n; k++)
		for (size_t j = 0; j < sizeof keys / sizeof *keys; j++)
			if (differs(m, k, keys[j][0], keys[j][1], err, errsz)) {
				hm_merge_close(m);
				return HM_EXIT_INPUT;
			}
	if ((rc = same_options(m, err, errsz)) != 0 || (rc = same_split(m, err, errsz)) != 0 ||
	    (rc = parse_options(m, err, errsz)) != 0) {
		hm_merge_close(m);
		return rc;
	}
	m->rules = hm_xstrdup(hm_partial_meta(m->p[0], "rules"));
	m->rules_hash = hm_xstrdup(hm_partial_meta(m->p[0], "rules_hash"));
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
	opt_free(&m->opts);
	free(m->rules), free(m->rules_hash), free(m->argv);
	hm_opts_free(&m->shaped);
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

hm_runopt *hm_merge_options_of(const hm_opts *o, size_t *n)
{
	hm_runopt *r = hm_xcalloc((size_t)o->nset + 5, sizeof *r);
	*n = 0;
	for (int i = 0; i < o->nset; i++)
		r[(*n)++] = (hm_runopt){"--set", o->set[i]};
	const char *one[][2] = {{"--top", o->top}, {"--steps", o->steps}, {"--from", o->from}, {"--to", o->to}};
	for (size_t i = 0; i < sizeof one / sizeof *one; i++)
		if (one[i][1])
			r[(*n)++] = (hm_runopt){one[i][0], one[i][1]};
	return r;
}

void hm_merge_apply_options(hm_merge *m, hm_opts *o)
{
	hm_opts *x = &m->shaped;
	free(o->set);
	o->set = x->set, o->nset = x->nset, x->set = NULL;
	o->top = x->top, o->steps = x->steps, o->from = x->from, o->to = x->to, o->win = x->win, o->top_n = x->top_n;
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
	*f = hm_analyze(t);
	return 0;
}
