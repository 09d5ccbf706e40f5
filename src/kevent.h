/* kevent: one event of a Kineto trace: its members walked and matched to the eight keys an
 * event can have, and what its ph, name and cat make of it across the three trace
 * generations (2021 "Operator" slices, 2022-23 cpu_op, 2024+ python_function frames):
 * [memory] and [OutOfMemory] events with their args, host op slices, thread_name metadata,
 * each appended to the store; everything else counted and skipped. The file around the
 * events (its top level, its metadata, the threads) is kineto.c's. Plain C, no Lua.
 *
 * Ownership: an hm_kevent is made by hm_kevent_new and freed by hm_kevent_free; it points at
 * the store and the error record it is given (the caller's, which outlive it) and owns only
 * its scratch and caches. One hm_kevent serves one thread. */
#ifndef HM_KEVENT_H
#define HM_KEVENT_H

#include "jstream.h"
#include "store.h"

typedef struct hm_kevent hm_kevent;

/* The words of an event walked for the handler (hm_pipe_ops.words): its eight members. */
#define HM_KEVENT_WORDS 16

/* A parser of events into t, its first error into err. */
hm_kevent *hm_kevent_new(hm_trace *t, hm_jerr *err);
/* Frees k (NULL is nothing). */
void hm_kevent_free(hm_kevent *k);

/* jstream's event callback (ud: an hm_kevent): the event [s, e) of st's buffer parsed in
 * place, counted in t->events when it is good. */
void hm_kevent_on_event(void *ud, hm_jstream *st, size_t s, size_t e);
/* pipe's walk (ud: the scanner's hm_kevent): the event's eight members as offsets in buf
 * (UINT32_MAX: absent), into out[0, HM_KEVENT_WORDS); -1 when it is invalid (reported). */
int hm_kevent_walk(void *ud, const char *buf, uint64_t base, size_t s, size_t e, const hm_jtok *t, size_t ntok,
		   uint32_t *out);
/* pipe's handle (ud: the handler's hm_kevent): the event parsed, or the members walked
 * taken; -1 once the reader failed. */
int hm_kevent_handle(void *ud, const char *buf, uint64_t base, size_t s, size_t e, const hm_jtok *t, size_t ntok,
		     const uint32_t *walked);

/* Keys are matched as written; a key with escapes is matched again decoded ("B\u0079tes"
 * is "Bytes" in JSON, though no profiler writes it so: issue 11). Returns 1 with *key,
 * *klen the decoded key (in scratch, the caller's), 0 for a key without escapes or a bad
 * one (*key, *klen untouched). */
int hm_kevent_key(hm_jscan_scratch *scratch, const char **key, size_t *klen);

#endif
