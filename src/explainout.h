/* explainout: how the explain results of a series (explain.h: steps, OOMs, the allocator's
 * cache, the leak verdict) and "who allocated it" read in the summary and in --json. The
 * writers of output.c call these at their place in each series. Plain C, no Lua.
 *
 * Ownership: everything here only reads the report and writes to f or the caller's buffer. */
#ifndef HM_EXPLAINOUT_H
#define HM_EXPLAINOUT_H

#include "fields.h"
#include "report.h"

#include <stdio.h>

/* Who allocated the row's memory, for a table cell: the module path and the user frame
 * when the trace has them ("Model_0 > Attention_1 @ models/attn.py(40): forward"), else the
 * op path ("aten::linear > aten::addmm"), else "-". Cut to n - 1 bytes. */
void hm_explain_who(const hm_rowref *r, char *buf, size_t n);

/* The members ", "modules": [...], "frame": ..., "ops": [...], "who": ..." of a row's JSON
 * object. */
void hm_json_who(FILE *f, const hm_rowref *r);

/* The thread of an OOM (thread th of t): its name from thread_name metadata into *s, *n;
 * else "pid/tid" written into buf (cap bytes) and pointed at. */
void hm_explain_thread(const hm_trace *t, uint32_t th, const char **s, size_t *n, char *buf, size_t cap);

/* The explain members of a series' JSON object, each starting with ",": reserved_unallocated
 * figures, leak, steps, ooms (README "Outputs", the JSON contract). */
void hm_json_explain(FILE *f, const hm_report *r, const hm_file *hf, const hm_series *s);

/* The explain lines of a series in the summary (after its categories and live table). */
void hm_summary_explain(FILE *f, const hm_report *r, const hm_file *hf, const hm_series *s);

#endif
