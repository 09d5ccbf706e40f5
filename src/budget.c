/* Budgets and failures: what makes a finished run exit 6. */
#include "budget.h"
#include "cells.h"
#include "jsonw.h"
#include "util.h"

#include <ctype.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Units by name, case aside: SI (powers of 1000) and binary (powers of 1024). */
static const struct unit {
	const char *name;
	double mul;
} units[] = {
	{"B", 1.0},          {"kB", 1000.0},      {"MB", 1000000.0},   {"GB", 1e9 + 0.0},
	{"TB", 1e12 + 0.0},  {"PB", 1e15 + 0.0},  {"KiB", 1024.0},     {"MiB", 1048576.0},
	{"GiB", 1073741824.0}, {"TiB", 1099511627776.0}, {"PiB", 1125899906842624.0},
};

int hm_size_parse(const char *s, int64_t *out)
{
	size_t digits = strspn(s, "0123456789."), dots = 0;
	for (size_t i = 0; i < digits; i++)
		dots += s[i] == '.';
	if (!digits || dots > 1 || (digits == 1 && dots))
		return -1; /* decimal only: no "nan", "inf", hex, sign or exponent */
	char num[64];
	if (digits >= sizeof num)
		return -1;
	memcpy(num, s, digits);
	num[digits] = 0;
	const char *u = s + digits;
	if (*u == ' ')
		u++;
	double mul = *u ? 0 : 1;
	for (size_t i = 0; i < sizeof units / sizeof *units && !mul; i++)
		if (!strcasecmp(u, units[i].name))
			mul = units[i].mul;
	double v = strtod(num, NULL) * mul;
	if (!mul || !isfinite(v) || v > 4611686018427387904.0) /* 2^62 */
		return -1;
	*out = (int64_t)llround(v);
	return 0;
}

int hm_budget_is_device(const char *name)
{
	static const char *const types[] = {"cuda", "hip", "xpu", "mps", "privateuseone", "*"};
	if (!strcmp(name, "cpu") || !strcmp(name, "*"))
		return 1;
	const char *colon = strchr(name, ':');
	if (!colon || !colon[1] || strspn(colon + 1, "0123456789*?[]-!") != strlen(colon + 1))
		return 0;
	size_t n = (size_t)(colon - name);
	for (size_t i = 0; i < sizeof types / sizeof *types; i++)
		if (strlen(types[i]) == n && !strncmp(name, types[i], n))
			return 1;
	return n > 4 && !strncmp(name, "type", 4) && strspn(name + 4, "0123456789") == n - 4;
}

static char *dup_or_null(const char *s)
{
	return s ? hm_xstrdup(s) : NULL;
}

void hm_budget_add(hm_budgets *b, const char *device, const char *category, int64_t max, const char *from)
{
	hm_grow(&b->v, &b->cap, b->n + 1, sizeof *b->v);
	b->v[b->n++] = (hm_budget){dup_or_null(device), dup_or_null(category), max, hm_xstrdup(from)};
}

/* A bare device kind ("cuda", "hip") names every device of that kind: "cuda:*". */
static int is_kind(const char *name)
{
	static const char *const kinds[] = {"cuda", "hip", "xpu", "mps", "privateuseone"};
	for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
		if (!strcmp(name, kinds[i]))
			return 1;
	return 0;
}

int hm_budget_parse(hm_budgets *b, const char *arg, char *err, size_t errsz)
{
	const char *eq = strrchr(arg, '=');
	const char *size = eq ? eq + 1 : arg;
	int64_t max;
	if (hm_size_parse(size, &max) != 0) {
		snprintf(err, errsz, "--fail-above needs SIZE, DEVICE=SIZE or CATEGORY=SIZE with a size such as 40GiB, "
				     "12GB or 1048576, not '%s'", arg);
		return -1;
	}
	char key[512] = "", from[600];
	if (eq && (eq == arg || (size_t)(eq - arg) >= sizeof key)) {
		snprintf(err, errsz, "--fail-above %s: the name before '=' must be a device or a category", arg);
		return -1;
	}
	if (eq)
		memcpy(key, arg, (size_t)(eq - arg));
	snprintf(from, sizeof from, "--fail-above %s", arg);
	if (eq && is_kind(key)) /* "cuda=40GiB": every cuda device */
		strcat(key, ":*");
	int dev = eq && hm_budget_is_device(key);
	hm_budget_add(b, dev ? key : NULL, eq && !dev ? key : NULL, max, from);
	return 0;
}

void hm_budget_fail(hm_budgets *b, const char *message)
{
	hm_grow(&b->fails, &b->fcap, b->nfails + 1, sizeof *b->fails);
	b->fails[b->nfails++] = hm_xstrdup(message);
}

void hm_budgets_merge(hm_budgets *b, const hm_budgets *from)
{
	for (size_t i = 0; i < from->n; i++)
		hm_budget_add(b, from->v[i].device, from->v[i].category, from->v[i].max, from->v[i].from);
	for (size_t i = 0; i < from->nfails; i++)
		hm_budget_fail(b, from->fails[i]);
}

/* A name matches a pattern when equal, or as a glob: "aten::*", "cuda:*". */
static int matches(const char *pattern, const char *name, size_t n)
{
	if (!pattern)
		return 1;
	return (strlen(pattern) == n && !memcmp(pattern, name, n)) || fnmatch(pattern, name, 0) == 0;
}

const char *hm_budget_declared(const hm_budget *bg, int *cmdline)
{
	static const char at[] = "hmem.budget at ";
	*cmdline = strncmp(bg->from, at, sizeof at - 1) != 0;
	return *cmdline ? bg->from : bg->from + sizeof at - 1;
}

/* "t.json rank 1 cuda:0" as the outputs name a series: the path only when the run has
 * several traces and the trace no rank. */
static void series_name(char *buf, size_t n, const hm_report *r, const hm_file *hf, const hm_series *s)
{
	if (hf->t->rank != HM_NONE)
		snprintf(buf, n, "rank %" PRId64 " %s", hf->t->rank, s->device);
	else if (r->nfiles > 1)
		snprintf(buf, n, "%s %s", hf->t->path, s->device);
	else
		snprintf(buf, n, "%s", s->device);
}

/* A peak and its limit in binary units, in bytes when the two round the same. */
static void fmt_pair(char *a, char *l, size_t n, int64_t actual, int64_t max)
{
	hm_fmt_bytes(a, n, actual);
	hm_fmt_bytes(l, n, max);
	if (!strcmp(a, l)) /* the same when rounded: the bytes say which is more */
		snprintf(a, n, "%" PRId64 " B", actual), snprintf(l, n, "%" PRId64 " B", max);
}

static void add_break(hm_verdict *v, const hm_file *hf, const hm_series *s, size_t cat, int64_t actual)
{
	hm_grow(&v->breaks, &v->cap, v->nbreaks + 1, sizeof *v->breaks);
	v->breaks[v->nbreaks++] = (hm_break){hf, s, cat, actual};
}

/* One peak checked against budget res: the highest so far is kept, one above the limit is
 * a break. */
static void check_one(hm_verdict *v, hm_budget_result *res, const hm_budget *bg, const hm_file *hf,
		      const hm_series *s, size_t cat, int64_t actual)
{
	res->checked++;
	if (actual > res->actual)
		res->actual = actual, res->file = hf, res->series = s, res->cat = cat;
	if (actual > bg->max)
		add_break(v, hf, s, cat, actual), res->nbreaks++;
}

void hm_budget_eval(const hm_budgets *b, const hm_report *r, hm_verdict *v)
{
	*v = (hm_verdict){.b = b, .res = hm_xcalloc(b->n ? b->n : 1, sizeof *v->res)};
	for (size_t i = 0; i < b->n; i++) {
		const hm_budget *bg = &b->v[i];
		hm_budget_result *res = &v->res[i];
		*res = (hm_budget_result){.first = v->nbreaks, .actual = -1, .cat = HM_BUDGET_TOTAL};
		for (size_t fi = 0; fi < r->nfiles; fi++) {
			const hm_file *hf = r->files[fi];
			for (size_t si = 0; si < hf->nseries; si++) {
				const hm_series *s = &hf->series[si];
				if (!matches(bg->device, s->device, strlen(s->device)))
					continue;
				if (!bg->category)
					check_one(v, res, bg, hf, s, HM_BUDGET_TOTAL, s->peak);
				for (size_t c = 0; bg->category && c < s->ncats; c++)
					if (s->cats[c].used && matches(bg->category, r->cats->str[c], r->cats->len[c]))
						check_one(v, res, bg, hf, s, c, s->cats[c].peak);
			}
		}
		v->passed += res->nbreaks == 0;
	}
}

/* One broken budget: "t.json rank 1 cuda:0: activation peak 1.50 KiB, limit 1.00 KiB
 * (--fail-above activation=1KiB), over by 512 B (+50.0%)". */
static void print_break(const hm_report *r, const hm_break *k, const hm_budget *bg)
{
	char a[32], l[32], o[32], rank[32] = "";
	fmt_pair(a, l, sizeof a, k->actual, bg->max);
	hm_fmt_bytes(o, sizeof o, k->actual - bg->max);
	if (k->file->t->rank != HM_NONE)
		snprintf(rank, sizeof rank, " rank %" PRId64, k->file->t->rank);
	int cat = k->cat != HM_BUDGET_TOTAL;
	hm_eprintf("hmem: over budget: %s%s %s: %.*s%speak %s, limit %s (%s), over by %s", k->file->t->path, rank,
		   k->series->device, cat ? (int)r->cats->len[k->cat] : 0, cat ? r->cats->str[k->cat] : "", cat ? " " : "",
		   a, l, bg->from, o);
	if (bg->max > 0)
		hm_eprintf(" (+%.1f%%)", 100.0 * (double)(k->actual - bg->max) / (double)bg->max);
	hm_eprintf("\n");
}

size_t hm_budget_report(const hm_verdict *v, const hm_report *r, int quiet)
{
	const hm_budgets *b = v->b;
	fflush(stdout); /* the summary first, then what broke */
	for (size_t i = 0; i < b->n; i++) {
		const hm_budget_result *res = &v->res[i];
		for (size_t k = 0; k < res->nbreaks; k++)
			print_break(r, &v->breaks[res->first + k], &b->v[i]);
		if (!res->checked && !quiet)
			hm_eprintf("hmem: warning: the budget of %s matches no %s in this run\n", b->v[i].from,
				   b->v[i].category ? "category of a series" : "series");
	}
	for (size_t i = 0; i < b->nfails; i++)
		hm_eprintf("hmem: failed by the rule file: %s\n", b->fails[i]);
	return v->nbreaks + b->nfails;
}

char *hm_budget_line(const hm_report *r, size_t i)
{
	const hm_verdict *v = r->verdict;
	const hm_budget *bg = &v->b->v[i];
	const hm_budget_result *res = &v->res[i];
	char line[2048], where[600] = "", a[32], l[32], more[48] = "";
	if (!res->checked) {
		snprintf(line, sizeof line, "%s matches no %s", bg->from, bg->category ? "category of a series" : "series");
		return hm_xstrdup(line);
	}
	series_name(where, sizeof where, r, res->file, res->series);
	fmt_pair(a, l, sizeof a, res->actual, bg->max);
	if (res->nbreaks > 1)
		snprintf(more, sizeof more, "; %zu peaks above", res->nbreaks);
	int cat = res->cat != HM_BUDGET_TOTAL;
	snprintf(line, sizeof line, "%s %.*s%speak %s %s %s (%s%s)", where, cat ? (int)r->cats->len[res->cat] : 0,
		 cat ? r->cats->str[res->cat] : "", cat ? " " : "", a, res->nbreaks ? ">" : "<=", l, bg->from, more);
	return hm_xstrdup(line);
}

static void json_opt_str(FILE *f, const char *s)
{
	if (s)
		hm_json_str(f, s, strlen(s), 0);
	else
		fputs("null", f);
}

void hm_budget_json(FILE *f, const hm_report *r)
{
	const hm_verdict *v = r->verdict;
	size_t n = v ? v->b->n : 0, nfails = v ? v->b->nfails : 0;
	fputs(",\n \"budgets\": [", f);
	for (size_t i = 0; i < n; i++) {
		const hm_budget *bg = &v->b->v[i];
		const hm_budget_result *res = &v->res[i];
		int cmdline;
		const char *declared = hm_budget_declared(bg, &cmdline);
		fputs(i ? ",\n  {\"device\": " : "\n  {\"device\": ", f);
		json_opt_str(f, bg->device);
		fputs(", \"category\": ", f);
		json_opt_str(f, bg->category);
		fprintf(f, ", \"limit_bytes\": %" PRId64 ", \"declared\": ", bg->max);
		hm_json_str(f, declared, strlen(declared), 0);
		fprintf(f, ", \"declared_in\": \"%s\",\n   \"actual_bytes\": ", cmdline ? "command line" : "rule file");
		if (res->checked) {
			fprintf(f, "%" PRId64 ", \"at\": {\"path\": ", res->actual);
			hm_json_str(f, res->file->t->path, strlen(res->file->t->path), 0);
			fputs(", \"rank\": ", f);
			hm_json_opt(f, res->file->t->rank);
			fputs(", \"device\": ", f);
			hm_json_str(f, res->series->device, strlen(res->series->device), 0);
			fputs(", \"category\": ", f);
			if (res->cat != HM_BUDGET_TOTAL)
				hm_json_str(f, r->cats->str[res->cat], r->cats->len[res->cat], 0);
			else
				fputs("null", f);
			fputs("}", f);
		} else {
			fputs("null, \"at\": null", f);
		}
		fprintf(f, ", \"checked\": %zu, \"broken\": %zu, \"passed\": %s}", res->checked, res->nbreaks,
			res->nbreaks ? "false" : "true");
	}
	fputs("],\n \"failures\": [", f);
	for (size_t i = 0; i < nfails; i++) {
		fputs(i ? ", " : "", f);
		hm_json_str(f, v->b->fails[i], strlen(v->b->fails[i]), 0);
	}
	fputs("]", f);
}

void hm_budget_summary(FILE *f, const hm_report *r)
{
	const hm_verdict *v = r->verdict;
	if (!v || (!v->b->n && !v->b->nfails))
		return;
	size_t cap = 256, len = 0;
	char *text = hm_xcalloc(cap, 1);
	const char *sep = "";
	if (v->b->n)
		len = (size_t)snprintf(text, cap, "budgets: %zu of %zu passed", v->passed, v->b->n), sep = "; ";
	else
		len = (size_t)snprintf(text, cap, "budgets: "), sep = "";
	for (size_t i = 0; i < v->b->n + v->b->nfails; i++) {
		char *part;
		if (i < v->b->n) {
			if (!v->res[i].nbreaks && v->res[i].checked)
				continue; /* the line says what failed, and what names nothing */
			part = hm_budget_line(r, i);
		} else {
			const char *msg = v->b->fails[i - v->b->n];
			part = hm_xcalloc(strlen(msg) + 32, 1);
			sprintf(part, "failed by the rule file: %s", msg);
		}
		size_t need = len + strlen(sep) + strlen(part) + 1;
		hm_grow(&text, &cap, need, 1);
		len += (size_t)snprintf(text + len, cap - len, "%s%s", sep, part);
		sep = "; ";
		free(part);
	}
	hm_put_col(f, text, len, 0);
	putc('\n', f);
	free(text);
}

void hm_verdict_free(hm_verdict *v)
{
	free(v->res);
	free(v->breaks);
	*v = (hm_verdict){0};
}

void hm_budgets_free(hm_budgets *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->v[i].device), free(b->v[i].category), free(b->v[i].from);
	for (size_t i = 0; i < b->nfails; i++)
		free(b->fails[i]);
	free(b->v);
	free(b->fails);
	*b = (hm_budgets){0};
}
