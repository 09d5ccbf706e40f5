#include "cells.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Whether s[0, n) is a decimal number as JSON writes one (-5, 1.5e3). */
static int is_number(const char *s, size_t n)
{
	size_t i = s[0] == '-' || s[0] == '+', d = 0;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, d++)
		;
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, d++)
			;
	if (d && i < n && (s[i] == 'e' || s[i] == 'E')) {
		size_t e = 0;
		i += i + 1 < n && (s[i + 1] == '-' || s[i + 1] == '+');
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, e++)
			;
		d = e ? d : 0;
	}
	return d && i == n;
}

/* A text cell: quoted as RFC 4180 asks when it holds a comma, quote or line break, and
 * one a spreadsheet would run as a formula (=, +, -, @, tab or CR first: op names and file
 * names come from the trace; issue 12) starts with a ' as OWASP advises; a number such
 * as -5 stays a number. */
void hm_csv_str(FILE *f, const char *s, size_t n)
{
	int formula = n && memchr("=+-@\t\r", s[0], 6) && !is_number(s, n);
	if (!memchr(s, ',', n) && !memchr(s, '"', n) && !memchr(s, '\n', n) && !memchr(s, '\r', n)) {
		if (formula)
			putc('\'', f);
		fwrite(s, 1, n, f);
		return;
	}
	putc('"', f);
	if (formula)
		putc('\'', f);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			putc('"', f);
		putc(s[i], f);
	}
	putc('"', f);
}

/* Print s left-aligned in a column of width characters; a longer s is cut at a character
 * boundary and ends in an ellipsis, so a cut name never reads as a whole one. Width 0: the
 * whole of s, unpadded (a last column). Names come from traces and rule files: control
 * characters are shown escaped (hm_esc), never sent to the terminal. */
void hm_put_col(FILE *f, const char *s, size_t n, size_t width)
{
	char *t = hm_esc(s, n, 0, &n);
	s = t;
	if (width == 0)
		fwrite(s, 1, n, f);
	size_t all = 0, w = 0, i = 0;
	for (size_t k = 0; width && k < n; k++)
		all += ((unsigned char)s[k] & 0xc0) != 0x80;
	while (width && i < n) {
		size_t j = i + 1;
		while (j < n && ((unsigned char)s[j] & 0xc0) == 0x80)
			j++;
		if (w + 1 > width || (all > width && w + 1 == width)) {
			fputs("\xe2\x80\xa6", f); /* U+2026 HORIZONTAL ELLIPSIS */
			w++;
			break;
		}
		fwrite(s + i, 1, j - i, f);
		w++;
		i = j;
	}
	for (; w < width; w++)
		putc(' ', f);
	free(t);
}
