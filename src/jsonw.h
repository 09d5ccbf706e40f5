/* jsonw: JSON values as every writer prints them (strings, optional integers, times).
 * Plain C; writes to an open FILE. */
#ifndef HM_JSONW_H
#define HM_JSONW_H

#include <stdint.h>
#include <stdio.h>

/* A JSON string of s[0, n): bytes that are not UTF-8 become U+FFFD; with in_html, '<',
 * '>' and '&' are escaped too, so the text is safe inside an HTML <script> element. */
void hm_json_str(FILE *f, const char *s, size_t n, int in_html);

/* An integer, or null for HM_NONE. */
void hm_json_opt(FILE *f, int64_t v);

/* A time in ns as exact µs (hm_fmt_us), or null for HM_NONE. */
void hm_json_us(FILE *f, int64_t ns);

#endif
