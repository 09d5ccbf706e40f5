/* ldiff: `hmem diff`'s comparison, done by hmem.diff (lua/hmem/diff.lua and
 * diff_html.lua, built in) in a Lua state of its own with cjson: the sides are JSON, and
 * the logic is short in Lua. A Lua binding file: calls lctx and lcjson, nothing above
 * them; no Lua type in this header (diff.c, plain C, calls it).
 *
 * Ownership: the request is the caller's and only read; the result's strings are malloc'd
 * and freed by hm_diff_res_free. */
#ifndef HM_LDIFF_H
#define HM_LDIFF_H

#include <stddef.h>
#include <stdint.h>

/* One --fail-above-delta: the peak (key NULL), a device's peak (device set: key is a glob)
 * or a category's peak (key, a glob) may grow by at most bytes, or by pct percent. */
typedef struct hm_diff_delta {
	const char *key;
	int device, is_pct;
	int64_t bytes;
	double pct;
	const char *from; /* the option as given, for messages */
} hm_diff_delta;

enum { HM_DIFF_TEXT, HM_DIFF_JSON, HM_DIFF_CSV, HM_DIFF_HTML, HM_DIFF_FORMATS };

typedef struct hm_diff_req {
	const char *name[2];         /* how each side is named (its path) */
	const char *text[2];         /* each side: an hmem --json report, or diffside.h's text */
	size_t len[2];
	const hm_diff_delta *deltas;
	size_t ndeltas;
	long top;                    /* groups by op and by module shown per pair */
	int want[HM_DIFF_FORMATS];   /* which outputs to make */
	int changed_only;            /* --changed-only: rows and pairs that changed, alone */
	double timeout_s;            /* --timeout over the comparison (0: none) */
	size_t mem_limit;            /* --lua-mem over its Lua heap, bytes (0: none) */
} hm_diff_req;

typedef struct hm_diff_res {
	char *out[HM_DIFF_FORMATS];  /* the outputs asked for (NULL for the others) */
	size_t outlen[HM_DIFF_FORMATS];
	char **breaks, **notes;      /* limits exceeded; warnings */
	size_t nbreaks, nnotes;
} hm_diff_res;

/* Compares the two sides, in a Lua state with the standard library's data functions only
 * (no io, os, debug, package, load) under q's --timeout and --lua-mem: a report is data
 * from elsewhere. Returns 0; -1 with a message in err for a side that is not an hmem
 * report ("NAME: not an hmem --json report (...)", a value of the wrong type named by
 * where it is); -2 with a message when a limit stopped it (a call the hook cannot stop
 * ends the process, exit 3, as a rule file's does). res is filled either way and freed
 * by hm_diff_res_free. */
int hm_diff_compute(const hm_diff_req *q, hm_diff_res *res, char *err, size_t errsz);

void hm_diff_res_free(hm_diff_res *res);

#endif
