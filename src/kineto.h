/* kineto: the reader of PyTorch profiler (Kineto) Chrome-trace JSON: which top-level keys
 * and event keys mean what across the three trace generations (2021 "Operator" slices,
 * 2022-23 cpu_op, 2024+ with python_function frames), [memory] events with their args,
 * host op slices, thread_name metadata; everything else is counted and skipped. It walks
 * the text with jstream, on two threads through pipe when it may, and appends to the
 * store. Plain C, no Lua.
 *
 * Ownership: the caller owns t (an empty store) and everything in `in`; the reader only
 * appends to t and fills its counts, and frees all it allocated before returning. */
#ifndef HM_KINETO_H
#define HM_KINETO_H

#include "reader.h"

/* Read in into t (see hm_reader_fn in reader.h). */
int hm_kineto_read(hm_trace *t, const hm_read_in *in, char *err, size_t errsz, int *code);

#endif
