/* reader: what every input format's reader is given and must do, the contract between trace.c
 * (which picks a reader by the file's first bytes) and the readers (kineto.c, snapshot.c),
 * so that a reader depends on this contract and never on the table that lists it. Types
 * only: no function is defined for this header. Plain C, no Lua.
 *
 * Ownership: the caller (trace.c) owns the store t and everything in `in`; a reader only
 * appends to t and fills its counts, and frees all it allocated before returning. */
#ifndef HM_READER_H
#define HM_READER_H

#include "input.h"
#include "store.h"

/* What a reader is given: the decoded bytes of one file, from src, or text[0, len) in
 * memory when src is NULL (both the caller's). */
typedef struct hm_read_in {
	const char *path;
	hm_src *src;
	const char *text;
	size_t len;
	int keep_partial, threads; /* as in hm_read_opts of trace.h */
	uint64_t *progress;
} hm_read_in;

/* A reader fills the empty store t (rank stays HM_NONE unless the file says it; the name
 * decides otherwise) and counts the events it read in t->events. Returns 0, or -1 with
 * "path:offset: what" in err and the exit code in *code; t is then freed by the caller. */
typedef int (*hm_reader_fn)(hm_trace *t, const hm_read_in *in, char *err, size_t errsz, int *code);

#endif
