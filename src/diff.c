/* hmem diff: two runs side by side. */
#include "diff.h"
#include "args.h"
#include "budget.h"
#include "ldiff.h"
#include "outfile.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct diff_opts {
	const char *pos[3], *json, *html, *format, *top;
	int npos, summary, changed_only;
	hm_diff_delta *deltas;
	size_t ndeltas;
	hm_diff_run run;
} diff_opts;

static int usage(const char *fmt, const char *arg)
{
	hm_eprintf("hmem: ");
	hm_eprintf(fmt, arg);
	hm_eprintf("\nTry 'hmem --help'.\n");
	return HM_EXIT_USAGE;
}

/* One --fail-above-delta: [KEY=]SIZE or [KEY=]N%. */
static int parse_delta(const char *arg, hm_diff_delta *d)
{
	const char *eq = strrchr(arg, '='), *v = eq ? eq + 1 : arg;
	size_t n = strlen(v);
	*d = (hm_diff_delta){.from = arg};
	if (n > 1 && v[n - 1] == '%') {
		char num[64];
		char *end;
		if (n - 1 >= sizeof num || strspn(v, "0123456789.") != n - 1)
			return -1;
		memcpy(num, v, n - 1);
		num[n - 1] = 0;
		d->pct = strtod(num, &end);
		d->is_pct = 1;
		if (*end || num[0] == '.')
			return -1;
	} else if (hm_size_parse(v, &d->bytes) != 0) {
		return -1;
	}
	if (eq == arg)
		return -1;
	if (eq) {
		char *key = hm_xcalloc((size_t)(eq - arg) + 1, 1);
		memcpy(key, arg, (size_t)(eq - arg));
		d->key = key;
		d->device = hm_budget_is_device(key);
	}
	return 0;
}

static int parse(int argc, char **argv, diff_opts *o)
{
	o->deltas = hm_xcalloc((size_t)argc, sizeof *o->deltas);
	o->run.inc = hm_xcalloc((size_t)argc, sizeof *o->run.inc);
	o->run.set = hm_xcalloc((size_t)argc, sizeof *o->run.set);
	static const char *const with_arg[] = {"--json", "--html", "--format", "--top", "--fail-above-delta", "-I",
					       "--set", "--timeout", "--lua-mem", "-j", NULL};
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		int k = 0;
		while (with_arg[k] && strcmp(a, with_arg[k]))
			k++;
		if (with_arg[k]) {
			if (++i >= argc)
				return usage("%s needs an argument (see hmem --help)", a);
			v = argv[i];
		}
		if (!strcmp(a, "--json"))
			o->json = v;
		else if (!strcmp(a, "--html"))
			o->html = v;
		else if (!strcmp(a, "--format"))
			o->format = v;
		else if (!strcmp(a, "--top"))
			o->top = v;
		else if (!strcmp(a, "--fail-above-delta")) {
			if (parse_delta(v, &o->deltas[o->ndeltas++]) != 0)
				return usage("--fail-above-delta needs SIZE or PCT%% (10MiB, 5%%), optionally after DEVICE= or "
					     "CATEGORY=, not '%s'", v);
		} else if (!strcmp(a, "-I"))
			o->run.inc[o->run.ninc++] = v;
		else if (!strcmp(a, "--set")) {
			if (!strchr(v, '=') || v[0] == '=')
				return usage("--set needs KEY=VALUE (read as hmem.args.KEY), not '%s'", v);
			o->run.set[o->run.nset++] = v;
		} else if (!strcmp(a, "--timeout"))
			o->run.timeout = v;
		else if (!strcmp(a, "--lua-mem"))
			o->run.lua_mem = v;
		else if (!strcmp(a, "-j"))
			o->run.jobs = v;
		else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
			o->run.quiet = 1;
		else if (!strcmp(a, "--allow-io"))
			o->run.allow_io = 1;
		else if (!strcmp(a, "--summary"))
			o->summary = 1;
		else if (!strcmp(a, "--changed-only"))
			o->changed_only = 1;
		else if (a[0] == '-' && a[1])
			return usage("unknown option '%s' for diff", a);
		else if (o->npos < 3)
			o->pos[o->npos++] = a;
		else
			return usage("%s", "diff takes [RULES] BEFORE AFTER: at most three paths");
	}
	if (o->npos < 2)
		return usage("%s", "diff needs two sides: hmem diff [RULES] BEFORE AFTER");
	if (o->format && strcmp(o->format, "text") && strcmp(o->format, "csv") && strcmp(o->format, "json"))
		return usage("--format is text, csv or json, not '%s'", o->format);
	if (o->top && (strspn(o->top, "0123456789") != strlen(o->top) || !*o->top || strlen(o->top) > 7))
		return usage("--top needs a number from 0 to 1000000, not '%s'", o->top);
	const char *bad[] = {o->run.timeout, o->run.lua_mem, o->run.jobs};
	for (int i = 0; i < 3; i++)
		if (bad[i] && (!*bad[i] || strspn(bad[i], "0123456789.") != strlen(bad[i])))
			return usage("a number option of diff is not a decimal number: '%s'", bad[i]);
	if (o->json && o->html && !strcmp(o->json, o->html) && strcmp(o->json, "-"))
		return usage("--json and --html name the same file %s: give each output its own", o->json);
	return 0;
}

/* An output never replaces a side it reads (README "Outputs"): a usage error. */
static int over_input(const char *out, const char *const side[2])
{
	struct stat o, in;
	if (!out || stat(out, &o) != 0 || !S_ISREG(o.st_mode))
		return 0;
	for (int i = 0; i < 2; i++)
		if (stat(side[i], &in) == 0 && in.st_dev == o.st_dev && in.st_ino == o.st_ino)
			return usage("%s would replace a side being compared: write elsewhere", out);
	return 0;
}

/* An hmem --json report begins with {"version": (hmem writes it first); a Kineto trace never
 * does. Anything else that is a file or folder is traces. */
static int is_report(const char *path)
{
	struct stat st;
	char buf[64] = "";
	FILE *f;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !(f = fopen(path, "rb")))
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = buf + strspn(buf, " \t\r\n");
	if (*p++ != '{')
		return 0;
	p += strspn(p, " \t\r\n");
	return !strncmp(p, "\"version\"", 9);
}

static int read_whole(const char *path, char **text, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		hm_eprintf("hmem: %s: cannot open the report\n", path);
		return HM_EXIT_IO;
	}
	size_t cap = 0;
	*len = 0;
	*text = NULL;
	for (size_t got = 1; got;) {
		hm_grow(text, &cap, *len + 65536, 1);
		got = fread(*text + *len, 1, cap - *len, f);
		*len += got;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		hm_eprintf("hmem: %s: cannot read the report\n", path);
		return HM_EXIT_IO;
	}
	return 0;
}

/* Writes the outputs asked for; everything is written before anything is renamed. */
static int write_all(const char *path[HM_DIFF_FORMATS + 1], const hm_diff_res *res, const int which[])
{
	hm_out out[HM_DIFF_FORMATS + 1] = {{0}};
	char err[1024];
	int i;
	for (i = 0; i <= HM_DIFF_FORMATS; i++) {
		if (!path[i])
			continue;
		if (hm_out_open(&out[i], path[i], err, sizeof err) != 0)
			goto fail;
		fwrite(res->out[which[i]], 1, res->outlen[which[i]], out[i].f);
	}
	for (i = 0; i <= HM_DIFF_FORMATS; i++)
		if (path[i] && hm_out_commit(&out[i], err, sizeof err) != 0)
			goto fail;
	return 0;
fail:
	hm_eprintf("hmem: %s\n", err);
	for (i = 0; i <= HM_DIFF_FORMATS; i++)
		hm_out_abort(&out[i]);
	return HM_EXIT_IO;
}

int hm_diff_main(int argc, char **argv, hm_diff_reader read)
{
	diff_opts o = {0};
	char *text[2] = {0}, err[4096], *key_paths[2];
	hm_diff_res res = {0};
	int rc = parse(argc, argv, &o);
	const char *side[2] = {o.pos[o.npos - 2 < 0 ? 0 : o.npos - 2], o.pos[o.npos - 1 < 0 ? 0 : o.npos - 1]};
	hm_diff_req q = {.deltas = o.deltas, .ndeltas = o.ndeltas, .top = o.top ? strtol(o.top, NULL, 10) : 10,
			.changed_only = o.changed_only};
	o.run.rules = o.npos == 3 ? o.pos[0] : NULL;
	if (!rc)
		rc = over_input(o.json, side) ? HM_EXIT_USAGE : over_input(o.html, side) ? HM_EXIT_USAGE : 0;
	for (int i = 0; i < 2 && !rc; i++) {
		q.name[i] = side[i];
		if (is_report(side[i])) {
			rc = read_whole(side[i], &text[i], &q.len[i]);
		} else if (!o.run.rules) {
			rc = usage("%s is traces, not an hmem --json report: give the rules first, hmem diff RULES BEFORE AFTER",
				   side[i]);
		} else {
			key_paths[0] = (char *)side[i];
			o.run.paths = key_paths;
			o.run.npaths = 1;
			rc = read(&o.run, &text[i], &q.len[i]);
		}
		q.text[i] = text[i];
	}
	/* Standard output: the --format, unless only files were named (then with --summary). */
	const char *path[HM_DIFF_FORMATS + 1] = {0};
	int which[HM_DIFF_FORMATS + 1] = {0};
	const char *fmt = o.format ? o.format : "text";
	int std = !rc && (o.summary || o.format || (!o.json && !o.html));
	path[0] = o.json, which[0] = HM_DIFF_JSON;
	path[1] = o.html, which[1] = HM_DIFF_HTML;
	path[2] = std ? "-" : NULL;
	which[2] = !strcmp(fmt, "csv") ? HM_DIFF_CSV : !strcmp(fmt, "json") ? HM_DIFF_JSON : HM_DIFF_TEXT;
	if (!rc && std && ((o.json && !strcmp(o.json, "-")) || (o.html && !strcmp(o.html, "-"))))
		rc = usage("%s", "only one output can go to standard output");
	for (int i = 0; i < 3 && !rc; i++)
		if (path[i])
			q.want[which[i]] = 1;
	/* The comparison runs under the run's limits: a report is data from elsewhere. */
	q.timeout_s = o.run.timeout ? strtod(o.run.timeout, NULL) : HM_TIMEOUT_DEFAULT;
	q.mem_limit = (size_t)((o.run.lua_mem ? strtod(o.run.lua_mem, NULL) : HM_LUA_MEM_DEFAULT_MB) * 1048576.0);
	int got = rc ? 0 : hm_diff_compute(&q, &res, err, sizeof err);
	if (got) {
		hm_eprintf("hmem: %s\n", err);
		rc = got == -2 ? HM_EXIT_SCRIPT : HM_EXIT_INPUT;
	}
	if (!rc)
		rc = write_all(path, &res, which);
	if (!rc) {
		fflush(stdout);
		for (size_t i = 0; i < res.nnotes && !o.run.quiet; i++)
			hm_eprintf("hmem: warning: %s\n", res.notes[i]);
		for (size_t i = 0; i < res.nbreaks; i++)
			hm_eprintf("hmem: %s\n", res.breaks[i]);
		if (res.nbreaks)
			rc = HM_EXIT_BUDGET;
	}
	hm_diff_res_free(&res);
	free(text[0]), free(text[1]);
	for (size_t i = 0; i < o.ndeltas; i++)
		free((char *)o.deltas[i].key);
	free(o.deltas), free(o.run.inc), free(o.run.set);
	return rc;
}
