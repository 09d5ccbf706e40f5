/* diff: the `hmem diff [RULES] BEFORE AFTER` command: its options, its two sides (each an
 * hmem --json report, or traces read with RULES through the caller's reader), the
 * comparison (ldiff.h) and its outputs; exit 6 when --fail-above-delta is exceeded.
 * Plain C, no Lua.
 *
 * Ownership: the reader's text is malloc'd and becomes diff's, which frees it. */
#ifndef HM_DIFF_H
#define HM_DIFF_H

#include <stddef.h>

/* What reading one trace side needs from the command line (options as given, checked). */
typedef struct hm_diff_run {
	const char *rules;
	char **paths;       /* the side: one trace file or folder */
	int npaths;
	const char **inc, **set; /* -I, --set */
	int ninc, nset;
	const char *timeout, *lua_mem, *jobs;
	int quiet, allow_io;
} hm_diff_run;

/* Reads a trace side as `hmem run` does and gives its text (diffside.h, malloc'd).
 * Returns 0 or the exit code of the run that failed (its message already printed). */
typedef int (*hm_diff_reader)(const hm_diff_run *run, char **text, size_t *len);

/* `hmem diff` with argv as main got it (argv[1] is "diff"). Returns the exit code. */
int hm_diff_main(int argc, char **argv, hm_diff_reader read);


#endif
