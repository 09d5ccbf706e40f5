/* budget: whether a run passes. Sizes as people write them ("40GiB", "1.5 GB"), the
 * budgets of --fail-above and of hmem.budget in a rule file, the failures a rule file
 * asks for with hmem.fail, and the check of all of them against a finished report (exit
 * 6, README "Errors and exit codes"). Plain C, no Lua.
 *
 * Ownership: an hm_budgets owns copies of every string given to it; hm_budgets_free frees
 * them. The check only reads the report. */
#ifndef HM_BUDGET_H
#define HM_BUDGET_H

#include "report.h"

#include <stdint.h>

/* One limit: the device total's peak (category NULL), or one category's own peak, on
 * every series whose device matches device (a glob, as fnmatch; NULL: every device). */
typedef struct hm_budget {
	char *device, *category;
	int64_t max;
	char *from; /* who set it: "--fail-above cuda:0=40GiB", "rules.lua" */
} hm_budget;

typedef struct hm_budgets {
	hm_budget *v;
	size_t n, cap;
	char **fails; /* messages given to hmem.fail, in order */
	size_t nfails, fcap;
} hm_budgets;

/* A size: a decimal number (a fraction allowed) and a unit: B, SI kB/KB, MB, GB, TB, PB
 * (powers of 1000) or binary KiB, MiB, GiB, TiB, PiB (powers of 1024), case aside, a space
 * allowed before it; no unit means bytes. Rounded to the nearest byte, at most 2^62.
 * Returns 0, or -1 when s is not such a size. */
int hm_size_parse(const char *s, int64_t *out);

/* Whether name reads as a device ("cpu", "cuda:0", "hip:*", "type9:1", a glob on the id):
 * what tells a device budget from a category budget in --fail-above KEY=SIZE. */
int hm_budget_is_device(const char *name);

/* Adds a budget (strings copied; device and category may be NULL). */
void hm_budget_add(hm_budgets *b, const char *device, const char *category, int64_t max, const char *from);

/* Adds the budget of one --fail-above argument: SIZE, DEVICE=SIZE or CATEGORY=SIZE.
 * Returns 0, or -1 with a message in err. */
int hm_budget_parse(hm_budgets *b, const char *arg, char *err, size_t errsz);

/* Adds a failure asked for by the rule file (message copied). */
void hm_budget_fail(hm_budgets *b, const char *message);

/* Appends copies of every budget and failure of from to b. */
void hm_budgets_merge(hm_budgets *b, const hm_budgets *from);

/* One peak above its limit: a series' total (cat HM_BUDGET_TOTAL) or one category's. */
#define HM_BUDGET_TOTAL ((size_t)-1)
typedef struct hm_break {
	const hm_file *file;
	const hm_series *series;
	size_t cat;
	int64_t actual;
} hm_break;

/* What one budget found: every peak it names was checked (checked of them), the highest
 * of them is actual (-1: it named none) in file/series/cat, and its breaks are
 * breaks[first .. first + nbreaks) of the verdict. */
typedef struct hm_budget_result {
	size_t checked, first, nbreaks;
	int64_t actual;
	const hm_file *file;
	const hm_series *series;
	size_t cat;
} hm_budget_result;

/* Whether a run passes, for every output to show (README "Budgets"): the result of each
 * budget of b, in order, and the failures of b. */
typedef struct hm_verdict {
	const hm_budgets *b;
	hm_budget_result *res; /* b->n of them */
	hm_break *breaks;
	size_t nbreaks, cap, passed;
} hm_verdict;

/* Checks every budget of b against every series of r into v. Nothing is printed.
 * Ownership: v points into b and into r's files; it is valid while both are, and
 * hm_verdict_free frees what v allocated. */
void hm_budget_eval(const hm_budgets *b, const hm_report *r, hm_verdict *v);

/* Writes to standard error one line per budget broken (series, what, actual, limit, who set
 * it, over by how much), then one per failure; warns (unless quiet) about a budget that
 * matches no series. Returns how many peaks broke a budget plus the failures: 0 means the
 * run passes. */
size_t hm_budget_report(const hm_verdict *v, const hm_report *r, int quiet);

/* Budget i of r->verdict as a line for the outputs: "rank 1 cuda:0 peak 5.10 GiB > 4.00 GiB (--fail-above
 * cuda=4GiB)", with "<=" when it holds and "matches no series" when it names nothing. A
 * malloc'd string the caller frees. */
char *hm_budget_line(const hm_report *r, size_t i);

/* r->verdict (NULL: no budget was checked) in --json, as its members "budgets" and
 * "failures" after a comma (README "Outputs"), and as the summary's last line, "budgets: 2
 * of 3 passed; ..." (no line when the run has no budget and no failure). */
void hm_budget_json(FILE *f, const hm_report *r);
void hm_budget_summary(FILE *f, const hm_report *r);

/* Where bg was declared, for the outputs: "--fail-above cuda=4GiB" on the command
 * line, else "rules.lua:3" (the hmem.budget call); *cmdline says which. */
const char *hm_budget_declared(const hm_budget *bg, int *cmdline);

void hm_verdict_free(hm_verdict *v);
void hm_budgets_free(hm_budgets *b);

#endif
