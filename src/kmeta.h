/* kmeta: the members of a Kineto trace's top-level object that describe the run, each walked
 * from its complete JSON value: distributedInfo (the rank) and deviceProperties (each GPU's
 * totalGlobalMem, the capacity an OOM is set against). Plain C; kineto.c calls it.
 *
 * Ownership: writes into the store t; sc is the caller's scratch for unescaped strings. */
#ifndef HM_KMETA_H
#define HM_KMETA_H

#include "jscan.h"
#include "store.h"

/* distributedInfo [p, e) (an object): its rank into t->rank. Returns NULL, or the position
 * of a bad value with why (cut to n bytes). */
const char *hm_kmeta_rank(hm_trace *t, hm_jscan_scratch *sc, const char *p, const char *e, char *why, size_t n);

/* deviceProperties [p, e) (an array): each element's totalGlobalMem by its id. Only
 * informative: an element without an integer id and size is passed over. Returns NULL, or
 * the position of invalid JSON with why. */
const char *hm_kmeta_devices(hm_trace *t, hm_jscan_scratch *sc, const char *p, const char *e, char *why, size_t n);

#endif
