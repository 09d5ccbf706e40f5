/* diffside: one side of `hmem diff` read from traces: the --json report of the run (the
 * same text hm_write_json writes) with, per series, what diff needs beyond it: the bytes
 * live at the peak grouped by op and by module (every allocation, not only --top), and
 * the timeline at most HM_DIFF_POINTS times over, for the chart. Plain C, no Lua.
 *
 * Ownership: the text is malloc'd and the caller's; the report is only read. */
#ifndef HM_DIFFSIDE_H
#define HM_DIFFSIDE_H

#include "output.h"

#define HM_DIFF_POINTS 500

/* {"report": {...--json...}, "extra": [{"groups": {"op": [[key, bytes, count], ...],
 * "module": [...]}, "points": {"ms": [...], "cats": [[...], ...]}}, ...], "colors":
 * {"name": "#rrggbb", ...}}: extra[i] is report.series[i]'s; "cats" follows that series'
 * categories in --json order; "colors" the pack's declared colours, for the diff page. */
char *hm_diff_side_json(const hm_report *r, size_t *len);

#endif
