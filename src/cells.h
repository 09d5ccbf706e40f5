/* cells: one cell of a table as hmem's writers print it: a CSV text cell (every CSV), and
 * a column of the text summary's tables. Plain C, no Lua.
 *
 * Ownership: both only write to f. */
#ifndef HM_CELLS_H
#define HM_CELLS_H

#include <stddef.h>
#include <stdio.h>

/* A CSV text cell as every CSV of hmem writes one: quoted as RFC 4180 asks, a leading '
 * before what a spreadsheet would run as a formula; never escaped for a terminal. */
void hm_csv_str(FILE *f, const char *s, size_t n);

/* s[0, n) as a summary table cell (made safe for a terminal), cut or padded to width
 * characters; width 0 writes it whole. */
void hm_put_col(FILE *f, const char *s, size_t n, size_t width);

#endif
