/* lsandbox: the environment each chunk runs in (the rule file, each module it requires,
 * each pack): allow-listed globals, its own copies of the library tables and its own
 * require, the shared metatables sealed; and where require and pack names find files. A
 * Lua binding file: calls lclassify and lreport (the hmem module's host functions),
 * lrow, lbounds, lcjson and lctx, never the host (lbind.h).
 *
 * Ownership: the host owns the hm_sandbox and everything it points to; they must outlive
 * the state (require reads them). */
#ifndef HM_LSANDBOX_H
#define HM_LSANDBOX_H

#include "budget.h"
#include "embedded.h"
#include "lclassify.h"

typedef struct hm_sandbox {
	const char **inc;     /* -I directories, searched before HMEM_PATH */
	int ninc;
	int allow_io;         /* --allow-io: the full standard library */
	const char *out_dir;  /* --out DIR for hmem.write, or NULL */
	char *rule_dir;       /* where require looks first: the loaded file's directory (NULL: none) */
	hm_classify *cls;     /* where hmem.cache_by declares */
	hm_budgets *verdict;  /* where hmem.budget and hmem.fail record (NULL: checked, not kept) */
	const char **set;     /* --set key=value, what hmem.args holds */
	int nset;
	int in_done;          /* done(report) is running: hmem.fail may be called */
	int quiet;            /* -q: hmem.note says nothing */
	uint64_t *digest;     /* when set: every file or module loaded is hashed into it (plan.h) */
	int out_fd;           /* --out DIR opened by the first hmem.write, + 1 (0: not yet); the host closes it */
} hm_sandbox;

/* The standard libraries (bounded, lbounds.h) and hmem's metatables, for a state that
 * will run rule files. [-0, +0, e] */
void hm_sandbox_open_libs(lua_State *L, const hm_sandbox *sb);

/* Load path (or source, a built-in module's text, named path) as text with chunk name
 * @path, in a fresh sandbox. [-0, +1, e] */
void hm_sandbox_load(lua_State *L, const hm_sandbox *sb, const char *path, const char *source);

/* Where require and pack names look, in order: rule_dir (for require: the directory of the
 * rule file or pack file loaded, none for a shipped pack, never the working directory as
 * such), -I directories, HMEM_PATH, then the modules built into hmem; a reserved name only
 * among the built-in modules. Pushes the path of the file found (for a built-in module,
 * its path in lua/ and the module is returned), or nil. [-0, +1, m] */
const hm_embedded *hm_sandbox_find(lua_State *L, const hm_sandbox *sb, const char *name, const char *rule_dir);

/* The i-th directory searched for packs and modules: -I directories, then the entries
 * of HMEM_PATH (colon-separated, empty ones skipped). Returns 0 past the last. */
int hm_sandbox_search_dir(const hm_sandbox *sb, int i, char *dir, size_t cap);

/* hmem, hmem.* and cjson are always hmem's own: a file of that name next to the rule
 * file, in the working directory, on -I or HMEM_PATH is never loaded in their place. */
int hm_sandbox_reserved(const char *name);

/* Whether the error value at idx is what hmem.fail raises: the rule file failed the run on
 * purpose, which is no script error (the message is in the verdict). [-0, +0, -] */
int hm_sandbox_is_fail(lua_State *L, int idx);

/* Whether path is a regular file. */
int hm_sandbox_is_file(const char *path);

#endif
