/* JSON values as every writer prints them (see jsonw.h). */
#include "jsonw.h"

#include "store.h"
#include "util.h"

#include <inttypes.h>

/* JSON strings: escapes as RFC 8259 asks; bytes that are not UTF-8 become U+FFFD so the
 * output always parses. */
void hm_json_str(FILE *f, const char *s, size_t n, int in_html)
{
	const unsigned char *p = (const unsigned char *)s, *e = p + n;
	putc('"', f);
	while (p < e) {
		unsigned c = *p;
		if (c == '"' || c == '\\') {
			putc('\\', f), putc((int)c, f), p++;
		} else if (c < 0x20 || (in_html && (c == '<' || c == '>' || c == '&'))) {
			fprintf(f, "\\u%04x", c), p++;
		} else if (c < 0x80) { /* the run of bytes that need no escape, written at once */
			const unsigned char *q = p + 1;
			while (q < e && *q >= 0x20 && *q < 0x80 && *q != '"' && *q != '\\' &&
			       !(in_html && (*q == '<' || *q == '>' || *q == '&')))
				q++;
			fwrite(p, 1, (size_t)(q - p), f), p = q;
		} else {
			/* Well-formed sequences only (Unicode table 3-7): lead bytes F5..FF, overlong
			 * forms (E0 80..9F, F0 80..8F), UTF-16 surrogates (ED A0..BF) and code points
			 * past U+10FFFF (F4 90..) are invalid UTF-8, which strict JSON parsers reject. */
			int len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
			unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80, hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
			int ok = len && e - p >= len && p[1] >= lo && p[1] <= hi;
			for (int i = 2; ok && i < len; i++)
				ok = (p[i] & 0xc0) == 0x80;
			if (ok) {
				fwrite(p, 1, (size_t)len, f), p += len;
			} else {
				fputs("\\ufffd", f), p++;
			}
		}
	}
	putc('"', f);
}

void hm_json_opt(FILE *f, int64_t v)
{
	if (v == HM_NONE)
		fputs("null", f);
	else
		fprintf(f, "%" PRId64, v);
}

void hm_json_us(FILE *f, int64_t ns)
{
	char b[40];
	if (ns == HM_NONE) {
		fputs("null", f);
		return;
	}
	hm_fmt_us(b, ns);
	fputs(b, f);
}
