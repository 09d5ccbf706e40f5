/* input: find trace files and read them as a stream of JSON bytes, gzip or plain.
 * Plain C, no Lua. */
#ifndef HM_INPUT_H
#define HM_INPUT_H

#include <stddef.h>
#include <stdint.h>

/* Expand paths: a file is taken as given (whatever its name, a pipe too); a directory
 * contributes every regular file (or link to one) named *.json / *.json.gz below it,
 * sorted by path, entering each directory once; a directory it cannot list is put on
 * the list itself (opening it says why). Returns 0; -2 when a path does not exist, -1
 * when one cannot be looked at, with a message in err. The caller frees (*out)[i] and
 * *out. */
int hm_input_expand(char **paths, int npaths, char ***out, int *nout, char *err, size_t errsz);

/* A byte source: gzip is detected by its magic bytes, not by the file name;
 * concatenated gzip members are read in turn. */
typedef struct hm_src hm_src;

/* Open path; NULL with a message in err when it cannot be opened. */
hm_src *hm_src_open(const char *path, char *err, size_t errsz);
/* The same; threaded 0 inflates on the caller's thread instead of its own (until
 * hm_src_inflate_on_thread). */
hm_src *hm_src_open_threads(const char *path, int threaded, char *err, size_t errsz);
/* From here on a gzip source inflates on a thread of its own, a few buffers ahead of the
 * reader (nothing for plain text, or when it does already). Call it after hm_src_peek or
 * before any read; the reads before it were inflated on the caller's thread. */
void hm_src_inflate_on_thread(hm_src *s);
/* The first decoded bytes (at least 16 unless the data ends or fails first), to tell input
 * formats apart; they stay to be read. *head points into the source, valid until the next
 * read. Call it before the first read, or not at all. */
size_t hm_src_peek(hm_src *s, const unsigned char **head);
/* Read up to cap bytes of JSON; returns 0 at the end, -1 on error (hm_src_error says why). */
long hm_src_read(hm_src *s, char *buf, size_t cap);
/* Without copying (a gzip file inflating on its own thread, between buffers; else
 * returns -2 and hm_src_read is the way): the next inflated bytes in a buffer the caller now owns, of
 * *cap bytes with the data at [*at, *at + n) and at least HM_SRC_HEADROOM bytes free
 * before it. Returns n, 0 at the end, -1 on error (as hm_src_read, which then says the
 * same). The caller gives a buffer back for each one taken, when done with it. */
#define HM_SRC_HEADROOM (64u << 10)
long hm_src_take(hm_src *s, char **buf, size_t *cap, size_t *at);
void hm_src_give(hm_src *s, char *buf, size_t cap);
const char *hm_src_error(const hm_src *s);
/* Bytes of the file consumed so far and its total size (for progress and messages). */
uint64_t hm_src_file_pos(const hm_src *s);
uint64_t hm_src_file_size(const hm_src *s);
int hm_src_is_gzip(const hm_src *s);
/* Bytes of text the file holds: its size, or for gzip a guess from its size and trailer
 * (input.c inflated_size), to size columns before reading. */
uint64_t hm_src_text_size(const hm_src *s);
void hm_src_close(hm_src *s);

#endif
