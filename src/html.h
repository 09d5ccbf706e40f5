/* html: the interactive report (--html): one self-contained page with a stacked-area chart
 * of the categories per series, the summary tables and the aggregations. Plain C, no Lua;
 * the page's script and style (src/report.js, src/report.css) are compiled in. The chart's
 * states come from the series' replay (timeline.h); the writer only reads the report
 * (output.h says who owns it). */
#ifndef HM_HTML_H
#define HM_HTML_H

#include "output.h"

#include <stdio.h>

/* Columns each series' timeline is reduced to: every column keeps the states where the
 * device total is smallest and largest (and reserved largest, and the column's last), so
 * no peak is lost and the page stays small whatever the trace's size. */
#define HM_HTML_COLUMNS 1500

void hm_write_html(FILE *f, const hm_report *r);

/* The page's style and script, compiled in from src/report.css and src/report.js by
 * scripts/embed-text.lua. */
extern const char hm_html_style[], hm_html_script[];

#endif
