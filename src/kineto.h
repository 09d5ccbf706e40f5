/* kineto: the reader of PyTorch profiler (Kineto) Chrome-trace JSON, as a file: its top
 * level (an object with traceEvents, or a bare array of events), the run's metadata
 * (distributedInfo, deviceProperties: kmeta.c), and the threads its events are parsed on:
 * it walks the text with jstream, on two threads through pipe when it may. What one event
 * means is kevent.c's. Plain C, no Lua.
 *
 * Ownership: as every reader (reader.h): the caller owns t (an empty store) and everything
 * in `in`; the reader only appends to t and fills its counts, and frees all it allocated
 * before returning. */
#ifndef HM_KINETO_H
#define HM_KINETO_H

#include "reader.h"

/* Read in into t (see hm_reader_fn in reader.h). */
int hm_kineto_read(hm_trace *t, const hm_read_in *in, char *err, size_t errsz, int *code);

#endif
