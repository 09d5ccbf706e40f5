/* Budgets and failures: what makes a finished run exit 6. */
#include "budget.h"
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

/* One broken budget: "t.json rank 1 cuda:0: activation peak 1.50 KiB, limit 1.00 KiB
 * (--fail-above activation=1KiB), over by 512 B (+50.0%)". */
static void print_break(const hm_file *hf, const hm_series *s, const hm_budget *bg, int64_t actual)
{
	char a[32], l[32], o[32], rank[32] = "";
	hm_fmt_bytes(a, sizeof a, actual);
	hm_fmt_bytes(l, sizeof l, bg->max);
	if (!strcmp(a, l)) /* the same when rounded: the bytes say which is more */
		snprintf(a, sizeof a, "%" PRId64 " B", actual), snprintf(l, sizeof l, "%" PRId64 " B", bg->max);
	hm_fmt_bytes(o, sizeof o, actual - bg->max);
	if (hf->t->rank != HM_NONE)
		snprintf(rank, sizeof rank, " rank %" PRId64, hf->t->rank);
	hm_eprintf("hmem: over budget: %s%s %s: %s%speak %s, limit %s (%s), over by %s", hf->t->path, rank, s->device,
		   bg->category ? bg->category : "", bg->category ? " " : "", a, l, bg->from, o);
	if (bg->max > 0)
		hm_eprintf(" (+%.1f%%)", 100.0 * (double)(actual - bg->max) / (double)bg->max);
	hm_eprintf("\n");
}

size_t hm_budget_check(const hm_budgets *b, const hm_report *r, int quiet)
{
	size_t broken = 0;
	fflush(stdout); /* the summary first, then what broke */
	for (size_t i = 0; i < b->n; i++) {
		const hm_budget *bg = &b->v[i];
		int seen = 0;
		for (size_t fi = 0; fi < r->nfiles; fi++) {
			const hm_file *hf = r->files[fi];
			for (size_t si = 0; si < hf->nseries; si++) {
				const hm_series *s = &hf->series[si];
				if (!matches(bg->device, s->device, strlen(s->device)))
					continue;
				int64_t actual = -1;
				if (!bg->category)
					actual = s->peak;
				for (size_t c = 0; bg->category && c < s->ncats; c++)
					if (s->cats[c].used && matches(bg->category, r->cats->str[c], r->cats->len[c])) {
						actual = s->cats[c].peak;
						if (actual > bg->max)
							print_break(hf, s, bg, actual), broken++;
						seen = 1;
					}
				if (bg->category)
					continue;
				seen = 1;
				if (actual > bg->max)
					print_break(hf, s, bg, actual), broken++;
			}
		}
		if (!seen && !quiet)
			hm_eprintf("hmem: warning: the budget of %s matches no %s in this run\n", bg->from,
				   bg->category ? "category of a series" : "series");
	}
	for (size_t i = 0; i < b->nfails; i++)
		hm_eprintf("hmem: failed by the rule file: %s\n", b->fails[i]);
	return broken + b->nfails;
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
