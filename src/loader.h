/* loader: read and analyse trace files on worker threads, handed out in file order, so
 * classification (single-threaded Lua) runs while later files still load. Plain C. */
#ifndef HM_LOADER_H
#define HM_LOADER_H

#include "analyze.h"

/* The outcome of loading one file. */
typedef struct hm_load {
	hm_file *f;          /* NULL on failure; the caller takes it (and sets this to NULL) */
	int code;            /* exit code class on failure */
	uint64_t lost;       /* events read before the error */
	char *err;           /* why it failed (NULL on success); the loader frees it */
	double read_s, analyze_s; /* seconds of this file's thread */
} hm_load;

typedef struct hm_loader hm_loader;

/* Start jobs workers (at least one) over paths[0..n). The loader keeps the pointers;
 * they must outlive it. */
hm_loader *hm_loader_start(char **paths, int n, int jobs, int keep_partial);

/* Wait for file i (in order, each once) at most timeout_ms (-1: no limit). Returns its
 * outcome, or NULL on timeout (to draw progress and wait again). */
hm_load *hm_loader_wait(hm_loader *l, int i, int timeout_ms);

/* Bytes of input files consumed so far and in all, and files done. */
void hm_loader_progress(hm_loader *l, uint64_t *done, uint64_t *total, int *files_done);

/* Stop the workers (each finishes its current file), join them, and free every result
 * not taken. */
void hm_loader_stop(hm_loader *l);

#endif
