/* outfile: output files that appear only when complete (README "Outputs"). A regular file or
 * a new name (through symlinks, to the file they name) is written under a temporary name in
 * its directory and renamed over it by hm_out_commit, keeping the mode and owner of the file
 * it replaces, so a failed run never leaves a half-written file; a fatal signal removes the
 * temporary file. Anything else (a device, a FIFO, a socket, /dev/stdout, /proc/self/fd/N)
 * is opened and written in place, never replaced. "-" is stdout. Plain C, no Lua.
 *
 * Ownership: an hm_out owns its FILE, path and temporary name from hm_out_open until
 * hm_out_commit or hm_out_abort, which free them (stdout is never closed). */
#ifndef HM_OUTFILE_H
#define HM_OUTFILE_H

#include <stdio.h>
#include <sys/stat.h>

typedef struct hm_out {
	FILE *f;
	char *path, *tmp; /* tmp NULL: written in place */
	int slot;         /* where the signal handler finds tmp (+ 1; 0: nowhere) */
} hm_out;

/* 0 with o->f open for writing, or -1 with a message in err (o then holds nothing). */
int hm_out_open(hm_out *o, const char *path, char *err, size_t errsz);
/* Flushes, closes and renames into place: 0, or -1 with a message in err (the temporary
 * file removed). A closed or never opened o is fine (0). */
int hm_out_commit(hm_out *o, char *err, size_t errsz);
void hm_out_abort(hm_out *o); /* closes and removes the temporary file; any state is fine */
/* Removes every temporary file being written, from any thread or a signal handler (only
 * unlink: no lock, no allocation); for a run that ends at once (the watchdog's kill). */
void hm_out_remove_tmp(void);

/* hmem.write's file (issue 24): name, one path component, made in the directory open at
 * dirfd (dirname names it in messages) as a new temporary file (O_CREAT|O_EXCL|O_NOFOLLOW)
 * and renamed over name with renameat: no symlink is followed, neither at the temporary
 * name nor at name (a link there is replaced by the file, as rename replaces it). An
 * existing regular file's mode is kept. 0, or -1 with a message in err (nothing left). */
int hm_out_write_at(int dirfd, const char *dirname, const char *name, const void *data, size_t len, char *err,
		    size_t errsz);

/* Whether writing path would replace (or create) a regular file: 1 with its canonical
 * name in *canon (malloc'd, the caller frees) and *st filled when it exists (st_nlink 0
 * when not); 0 for "-" and for what is written in place. Two outputs, or an output and an
 * input, are the same file when both exist with the same st_dev and st_ino, or their
 * canonical names are equal. */
int hm_out_file_id(const char *path, struct stat *st, char **canon);

#endif
