/* perfetto: the per-category timelines as Chrome-trace counter tracks (--perfetto), and
 * the original trace with those tracks added (--annotate), for Perfetto UI and
 * chrome://tracing. Plain C, no Lua; the states come from the series' replay (timeline.h).
 * Both only read the report (output.h says who owns it). */
#ifndef HM_PERFETTO_H
#define HM_PERFETTO_H

#include "output.h"

#include <stdio.h>

/* A Chrome-trace JSON object holding, per series, counter events ("ph": "C") on the
 * series' own pid and the trace's own time base: "hmem DEVICE" with one argument per
 * category (one track each), "hmem DEVICE allocated" and "hmem DEVICE reserved". */
void hm_write_perfetto(FILE *f, const hm_report *r);

/* The one trace of r, re-read from its path and copied byte for byte to f, with the same
 * counter events inserted at the start of its events array (gzip-compressed when
 * name ends in ".gz"). Returns 0, or an exit code (HM_EXIT_*) with a message in err
 * when the trace cannot be re-read or is no longer the file that was analysed. */
int hm_write_annotated(FILE *f, const hm_report *r, const char *name, char *err, size_t errsz);

#endif
