/* util: allocation that cannot fail silently, growable arrays, string interning, thread
 * keys split into pid and tid, exact decimal number parsing, sizes and times as text, text
 * safe for a terminal. Plain C, no Lua. */
#ifndef HM_UTIL_H
#define HM_UTIL_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* Exit codes are part of the documented interface (README "Exit codes"). */
enum hm_exit {
	HM_EXIT_OK = 0,
	HM_EXIT_INTERNAL = 1, /* a bug or out of memory */
	HM_EXIT_USAGE = 2,    /* bad command line */
	HM_EXIT_SCRIPT = 3,   /* the rule file failed to load or raised an error */
	HM_EXIT_INPUT = 4,    /* a trace is malformed, or no trace was found */
	HM_EXIT_IO = 5,       /* a file could not be read or an output could not be written */
	HM_EXIT_BUDGET = 6,   /* a budget was exceeded or the rule file called hmem.fail (budget.h) */
};

/* Abort with HM_EXIT_INTERNAL on allocation failure; never returns NULL. */
void *hm_xrealloc(void *p, size_t n);
void *hm_xcalloc(size_t n, size_t size);
char *hm_xstrdup(const char *s);
/* One step of the hash of words that strtab and the cache_by memo use. */
static inline uint64_t hm_hash_mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
	return h ^ h >> 31;
}

/* h mixed with every word of s[0, len) but the last, which goes to *last for the caller's
 * own last step (a string under eight bytes is that word alone). */
uint64_t hm_hash_words(uint64_t h, const char *s, size_t len, uint64_t *last);

/* A block of n bytes (zeroed) mapped on its own, for scratch that lives a while beside
 * longer-lived allocations: from the heap, it would leave a hole under them when freed, and
 * the peak after it would grow by its size. Freed with hm_xunmap(p, n). */
void *hm_xmap(size_t n);
void hm_xunmap(void *p, size_t n);
/* Seconds on the monotonic clock (for durations and deadlines). */
double hm_now(void);

/* Grow *arr (element size elsz) so that it holds at least need elements. */
void hm_grow(void *arr, size_t *cap, size_t need, size_t elsz);

/* An append-only table of interned byte strings; ids are dense from 0.
 * The table owns copies of the strings; pointers stay valid until hm_strtab_free. */
typedef struct hm_strtab {
	char **str;
	uint32_t *len;
	size_t n, cap;
	uint32_t *slot; /* open addressing: id + 1, 0 = empty */
	size_t nslot;
} hm_strtab;

uint32_t hm_strtab_intern(hm_strtab *t, const char *s, size_t len);
void hm_strtab_free(hm_strtab *t);

/* A thread key as the readers make it (store.h): "pid\x1ftid", each part canonical text
 * that may hold NUL bytes, so split by its length, never as a C string. Returns the pid's
 * length (key[0, return)); the tid is *tid[0, *tid_len) (both may be NULL when not wanted).
 * A key without the separator is all pid, with an empty tid. Nothing is copied. */
size_t hm_thread_split(const char *key, size_t len, const char **tid, size_t *tid_len);
/* Whether threads a and b of a table of thread keys are of one process (the same pid). */
int hm_thread_same_pid(const hm_strtab *threads, uint32_t a, uint32_t b);

/* Parse the JSON number text [s, s+len) as value * 10^scale, exactly.
 * Digits below the scale are rounded to nearest when round is set, else they must be
 * zero. The result must fit in [-2^63, 2^64-1]; *neg says the sign, *mag the magnitude.
 * Returns NULL on success, else a static message. */
const char *hm_num_parse(const char *s, size_t len, int scale, int round, int *neg, uint64_t *mag);

/* Signed 64-bit view of hm_num_parse; error if out of int64 range. */
const char *hm_num_i64(const char *s, size_t len, int scale, int round, int64_t *out);

/* Format ns as microseconds with up to three decimals and at least one ("12.5", "7.0"). */
int hm_fmt_us(char *buf, int64_t ns);

/* Format bytes in binary units ("6.17 GiB", "512 B"). */
void hm_fmt_bytes(char *buf, size_t n, int64_t bytes);

/* s[0, n) as text for a terminal (README "Outputs"): C0 controls, DEL and C1 controls
 * become \xNN (line breaks and tabs stay when keep_lines). Returns a malloc'd string the
 * caller frees; *outlen (if not NULL) gets its length. */
char *hm_esc(const char *s, size_t n, int keep_lines, size_t *outlen);
/* Write s[0, n) to f through hm_esc, line breaks escaped too: a name from a trace or a
 * rule file on one line of the summary. */
void hm_fput_esc(FILE *f, const char *s, size_t n);

/* fprintf(stderr, ...) through hm_esc, line breaks kept: for messages that quote names. */
void hm_eprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
