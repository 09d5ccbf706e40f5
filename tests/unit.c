/* C unit tests of the plain-C core (util, input, trace, analyze, timeline); no Lua.
 * Prints one line per check, "ok - NAME" or "not ok - NAME" followed by "#   detail";
 * exits 0 when every check passed, 1 otherwise. Fixture files are written under a
 * mkdtemp directory that is removed at the end. */
#define _GNU_SOURCE
#include "analyze.h"
#include "helper.h"
#include "fields.h"
#include "explain.h"
#include "input.h"
#include "jscan.h"
#include "klayout.h"
#include "store.h"
#include "timeline.h"
#include "trace.h"
#include "unpickle.h"
#include "util.h"
#include "window.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

/* ---------------------------------------------------------------- reporting */

static int g_pass, g_fail;

static void report(int ok, const char *name, const char *detail)
{
	printf("%s - %s\n", ok ? "ok" : "not ok", name);
	if (ok) {
		g_pass++;
	} else {
		g_fail++;
		printf("#   %s\n", detail && *detail ? detail : "failed");
	}
	fflush(stdout);
}

__attribute__((format(printf, 3, 4)))
static int check(int ok, const char *name, const char *fmt, ...)
{
	char d[1024] = "";
	if (!ok) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(d, sizeof d, fmt, ap);
		va_end(ap);
	}
	report(ok, name, d);
	return ok;
}

static int check_i64(const char *name, int64_t got, int64_t want)
{
	return check(got == want, name, "got %" PRId64 ", want %" PRId64, got, want);
}

static int check_str(const char *name, const char *got, const char *want)
{
	return check(got && strcmp(got, want) == 0, name, "got \"%s\", want \"%s\"", got ? got : "(null)", want);
}

/* A group of assertions reported as one check: the first failure is the detail. */
typedef struct grp {
	int bad;
	char detail[768];
} grp;

__attribute__((format(printf, 3, 4)))
static int g_true(grp *g, int ok, const char *fmt, ...)
{
	if (!ok && !g->bad) {
		g->bad = 1;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(g->detail, sizeof g->detail, fmt, ap);
		va_end(ap);
	}
	return ok;
}

static int g_i64(grp *g, const char *what, int64_t got, int64_t want)
{
	return g_true(g, got == want, "%s: got %" PRId64 ", want %" PRId64, what, got, want);
}

static int g_str(grp *g, const char *what, const char *got, const char *want)
{
	return g_true(g, got && strcmp(got, want) == 0, "%s: got \"%s\", want \"%s\"", what, got ? got : "(null)", want);
}

static void g_done(grp *g, const char *name)
{
	report(!g->bad, name, g->detail);
}

/* ---------------------------------------------------------------- string builder */

typedef struct sb {
	char *p;
	size_t n, cap;
	int items; /* elements written since sb_open (for commas) */
} sb;

__attribute__((format(printf, 2, 3)))
static void sb_printf(sb *b, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
		va_end(ap);
		if (b->p && (size_t)k < b->cap - b->n) {
			b->n += (size_t)k;
			return;
		}
		size_t need = b->n + (size_t)k + 1;
		size_t c = b->cap ? b->cap : 256;
		while (c < need)
			c *= 2;
		b->p = hm_xrealloc(b->p, c);
		b->cap = c;
	}
}

static void sb_fill(sb *b, char c, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t c2 = b->cap ? b->cap : 256;
		while (c2 < b->n + n + 1)
			c2 *= 2;
		b->p = hm_xrealloc(b->p, c2);
		b->cap = c2;
	}
	memset(b->p + b->n, c, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void sb_free(sb *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

/* Start an element of traceEvents (writes the comma). */
static void sb_item(sb *b)
{
	if (b->items++)
		sb_printf(b, ",\n");
}

static void tr_open(sb *b)
{
	sb_printf(b, "{\"schemaVersion\": 1, \"traceEvents\": [\n");
	b->items = 0;
}

static void tr_close(sb *b)
{
	sb_printf(b, "\n]}");
}

#define NOADDR INT64_MIN
#define NOTOT HM_NONE

/* A 2022-style [memory] event; ts is the JSON text of the timestamp, pid/tid JSON text. */
static void mem_ev(sb *b, const char *ts, int dt, int di, int64_t addr, int64_t bytes, int64_t ta, int64_t tr,
		   const char *pid, const char *tid)
{
	sb_item(b);
	sb_printf(b, "{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", "
		     "\"pid\": %s, \"tid\": %s, \"ts\": %s, \"args\": {\"Device Type\": %d, \"Device Id\": %d",
		  pid, tid, ts, dt, di);
	if (addr != NOADDR)
		sb_printf(b, ", \"Addr\": %" PRId64, addr);
	sb_printf(b, ", \"Bytes\": %" PRId64, bytes);
	if (ta != NOTOT)
		sb_printf(b, ", \"Total Allocated\": %" PRId64, ta);
	if (tr != NOTOT)
		sb_printf(b, ", \"Total Reserved\": %" PRId64, tr);
	sb_printf(b, "}}");
}

/* Shorthand: cuda:0 on pid 1 / tid 1, integer µs. */
static void mem_simple(sb *b, long ts, int64_t addr, int64_t bytes, int64_t ta)
{
	char t[32];
	snprintf(t, sizeof t, "%ld", ts);
	mem_ev(b, t, 1, 0, addr, bytes, ta, NOTOT, "1", "1");
}

static void op_ev(sb *b, const char *cat, const char *name, const char *ts, const char *dur, const char *pid,
		  const char *tid)
{
	sb_item(b);
	sb_printf(b, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %s, \"tid\": %s, \"ts\": %s, \"dur\": %s, "
		     "\"args\": {\"External id\": 7}}",
		  cat, name, pid, tid, ts, dur);
}

static void op_simple(sb *b, const char *name, long ts, long dur, const char *tid)
{
	char t[32], d[32];
	snprintf(t, sizeof t, "%ld", ts);
	snprintf(d, sizeof d, "%ld", dur);
	op_ev(b, "cpu_op", name, t, d, "1", tid);
}

static hm_trace *parse_text(const char *name, const char *text, size_t len, char *err, size_t errsz)
{
	err[0] = 0;
	return hm_trace_parse(name, text, len, err, errsz);
}

/* ---------------------------------------------------------------- numbers */

static void num_ok(const char *name, const char *text, int scale, int round, int64_t want)
{
	int64_t v = 12345;
	const char *e = hm_num_i64(text, strlen(text), scale, round, &v);
	if (e)
		check(0, name, "\"%s\": unexpected error \"%s\"", text, e);
	else
		check(v == want, name, "\"%s\" (scale %d, round %d): got %" PRId64 ", want %" PRId64, text, scale, round, v, want);
}

static void num_err(const char *name, const char *text, int scale, int round)
{
	int64_t v = 0;
	const char *e = hm_num_i64(text, strlen(text), scale, round, &v);
	check(e != NULL, name, "\"%s\" (scale %d, round %d) was accepted as %" PRId64, text, scale, round, v);
}

/* ---------------------------------------------------------------- jscan and store */

/* text copied into a zeroed buffer with the padding the scans may read past its end */
static const char *padded(char *buf, size_t cap, const char *text)
{
	memset(buf, 0, cap);
	memcpy(buf, text, strlen(text));
	return buf;
}

typedef struct keys_seen {
	int n;
	char keys[128];
} keys_seen;

static void note_key(void *ud, const char *key, size_t klen, hm_slice v)
{
	keys_seen *k = ud;
	k->n++;
	snprintf(k->keys + strlen(k->keys), sizeof k->keys - strlen(k->keys), "%.*s=%.*s;", (int)klen, key,
		 (int)(v.q - v.p), v.p);
}

/* The reader's helpers on buffers alone, no threads (issue 13): the expected values are
 * worked out by hand from the text. */
/* Issue 29: the layouts matched with other white space between members (klayout.c, flex):
 * an event and a [memory] event's args written again with an indent by a tool, one member
 * a line, and the traces of 2021 ("cat": "Operator", then a new line; an instant event
 * without "cat"). Each must match (the fast path taken), with its members where the text
 * puts them; one thing changed, the match gives up and the general walk reads it. */
static void test_klayout_flex(void)
{
	static const struct {
		const char *text;
		int match;
		const char *ph, *name, *ts, *tid;
	} ev[] = {
		{"{\n            \"ph\": \"X\",\n            \"cat\": \"cpu_op\",\n            \"name\": \"aten::slice\",\n"
		 "            \"pid\": 6583,\n            \"tid\": 6583,\n            \"ts\": 1365627865340.865,\n"
		 "            \"dur\": 7.5,\n            \"args\": {\n                \"External id\": 2\n            }\n        }",
		 1, "\"X\"", "\"aten::slice\"", "1365627865340.865", "6583"},
		{"{\n    \"ph\": \"X\", \"cat\": \"Operator\", \n    \"name\": \"aten::empty\", \"pid\": 25738, \"tid\": \"25738\",\n"
		 "    \"ts\": 1623142623460111, \"dur\": 25,\n    \"args\": {\n      \"Device\": 25738, \"External id\": 2\n    }\n  }",
		 1, "\"X\"", "\"aten::empty\"", "1623142623460111", "\"25738\""},
		{"{\n    \"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\",\n    \"pid\": 25738, \"tid\": 25738,\n"
		 "    \"ts\": 1623142623460121,\n    \"args\": {\n      \"Device Type\": 0, \"Device Id\": -1, \"Bytes\": 4\n    }\n  }",
		 1, "\"i\"", "\"[memory]\"", "1623142623460121", "25738"},
		{"{\n\t\"ph\": \"f\",\n\t\"id\": 16,\n\t\"pid\": 0,\n\t\"tid\": 7,\n\t\"ts\": 1365627865398.728,\n\t\"cat\": \"ac2g\",\n"
		 "\t\"name\": \"ac2g\",\n\t\"bp\": \"e\"\n}", 1, "\"f\"", "\"ac2g\"", "1365627865398.728", "7"},
		/* written by a compact writer (no white space), and by Python's json.dumps (one line) */
		{"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,\"tid\":2,\"ts\":5.5,\"dur\":1,\"args\":{\"External id\":1}}",
		 1, "\"X\"", "\"a\"", "5.5", "2"},
		{"{\"ph\": \"s\", \"id\": 3, \"pid\": 1, \"tid\": 2, \"ts\": 7.25, \"cat\": \"ac2g\", \"name\": \"ac2g\"}", 1, "\"s\"",
		 "\"ac2g\"", "7.25", "2"},
		/* a space before a comma, a value on the line after its key, a missing comma */
		{"{\n  \"ph\": \"X\" ,\n  \"cat\": \"cpu_op\",\n  \"name\": \"a\",\n  \"pid\": 1,\n  \"tid\": 1,\n  \"ts\": 5,\n  \"dur\": 1\n}",
		 0, 0, 0, 0, 0},
		{"{\n  \"ph\": \"X\",\n  \"cat\": \"cpu_op\",\n  \"name\": \"a\",\n  \"pid\": 1,\n  \"tid\": 1,\n  \"ts\":\n 5,\n  \"dur\": 1\n}",
		 0, 0, 0, 0, 0},
		{"{\n  \"ph\": \"X\",\n  \"cat\": \"cpu_op\"\n  \"name\": \"a\",\n  \"pid\": 1,\n  \"tid\": 1,\n  \"ts\": 5,\n  \"dur\": 1\n}",
		 0, 0, 0, 0, 0},
	};
	char buf[1024];
	for (size_t i = 0; i < sizeof ev / sizeof *ev; i++) {
		const char *p = padded(buf, sizeof buf, ev[i].text), *e = p + strlen(p);
		/* the depth-1 container (args), found by hand: its '{' after "args", its last '}' */
		hm_jtok tok[1];
		const char *a = strstr(p, "\"args\""), *ao = a ? strchr(a, '{') : NULL, *ac = e - 1;
		while (ao && ac > ao && *--ac != '}')
			;
		size_t nt = 0;
		if (ao)
			tok[nt++] = (hm_jtok){(uint32_t)(ao - p), (uint32_t)(ac - p)};
		hm_kev x;
		memset(&x, 0, sizeof x);
		int got = hm_klayout_event(p, e, tok, tok + nt, &x);
		char name[96];
		snprintf(name, sizeof name, "klayout: event %zu in other white space %s", i, ev[i].match ? "matches" : "is left to the walk");
		if (!ev[i].match) {
			check(!got, name, "matched");
			continue;
		}
		char w[4][64] = {"", "", "", ""};
		const hm_slice *m[] = {&x.ph, &x.name, &x.ts, &x.tid};
		for (int j = 0; j < 4; j++)
			if (m[j]->p)
				snprintf(w[j], sizeof w[j], "%.*s", (int)(m[j]->q - m[j]->p), m[j]->p);
		check(got && !strcmp(w[0], ev[i].ph) && !strcmp(w[1], ev[i].name) && !strcmp(w[2], ev[i].ts) && !strcmp(w[3], ev[i].tid) &&
		      (!ao || (x.args.p == ao && x.args.q == ac + 1)),
		      name, "matched %d: ph %s name %s ts %s tid %s", got, w[0], w[1], w[2], w[3]);
	}
	/* [memory] args one member a line: CUDA's order, ROCm's with "finished"; compact; a
	 * space before a comma and a missing comma are left to the walk */
	static const struct {
		const char *text;
		int match;
		int64_t bytes, addr, evidx;
	} mem[] = {
		{"{\n        \"Total Reserved\": 2097152,\n        \"Total Allocated\": 1024,\n        \"Bytes\": 1024,\n"
		 "        \"Addr\": 4096,\n        \"Device Id\": 0,\n        \"Device Type\": 1,\n        \"Ev Idx\": 7\n      }",
		 1, 1024, 4096, 7},
		{"{\n        \"Total Reserved\": 0,\n        \"Total Allocated\": 8,\n        \"Bytes\": 8,\n        \"Device Id\": -1,\n"
		 "        \"Device Type\": 0,\n        \"Addr\": 4783256832,\n        \"finished\": true,\n        \"Ev Idx\": 24790\n      }",
		 1, 8, 4783256832, 24790},
		{"{\"Total Reserved\":0,\"Total Allocated\":8,\"Bytes\":8,\"Addr\":12288,\"Device Id\":0,\"Device Type\":1,"
		 "\"Ev Idx\":3}", 1, 8, 12288, 3},
		{"{\n  \"Total Reserved\": 0,\n  \"Total Allocated\": 8 ,\n  \"Bytes\": 8,\n  \"Addr\": 1,\n  \"Device Id\": 0,\n"
		 "  \"Device Type\": 1,\n  \"Ev Idx\": 1\n}", 0, 0, 0, 0},
		{"{\n  \"Total Reserved\": 0,\n  \"Total Allocated\": 8,\n  \"Bytes\": 8\n  \"Addr\": 1,\n  \"Device Id\": 0,\n"
		 "  \"Device Type\": 1,\n  \"Ev Idx\": 1\n}", 0, 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof mem / sizeof *mem; i++) {
		const char *p = padded(buf, sizeof buf, mem[i].text);
		hm_kmem km;
		hm_kmemvals v = {-1, -1, -1, -1, -1, -1, -1};
		memset(&km, 0, sizeof km);
		int got = hm_klayout_mem(p, p + strlen(p), &km, &v);
		char name[96];
		snprintf(name, sizeof name, "klayout: [memory] args %zu in other white space %s", i,
			 mem[i].match ? "match" : "are left to the walk");
		if (mem[i].match)
			check(got && v.bytes == mem[i].bytes && v.addr == mem[i].addr && v.evidx == mem[i].evidx, name,
			      "matched %d: bytes %lld addr %lld ev idx %lld", got, (long long)v.bytes, (long long)v.addr,
			      (long long)v.evidx);
		else
			check(!got, name, "matched");
	}
}

static void test_jscan(void)
{
	char buf[256];
	/* One 64-byte block: the brackets outside strings are the object's two and the array's
	 * two; the '{' inside "x{" and the escaped quote do not count. */
	const char *t = padded(buf, sizeof buf, "{\"a\\\"b\": \"x{\", \"c\": [1, 2]}");
	hm_jscan_blk b = hm_jscan_classify64((const unsigned char *)t);
	uint64_t carry = 0;
	uint64_t quotes = b.quote & ~hm_jscan_escaped(b.bslash, &carry);
	uint64_t in_str = hm_jscan_prefix_xor(quotes);
	uint64_t br = b.bracket & ~in_str, want = 0;
	for (size_t i = 0; t[i]; i++)
		if (i == 0 || i == strlen(t) - 1 || t[i] == '[' || t[i] == ']')
			want |= UINT64_C(1) << i;
	check(br == want, "jscan: brackets in strings and escaped quotes are not structure", "got %#llx, want %#llx",
	      (unsigned long long)br, (unsigned long long)want);
	uint64_t want_open = 0; /* the object's '{' and the array's '[' (issue 19: counted by mask) */
	for (size_t i = 0; t[i]; i++)
		if (i == 0 || t[i] == '[')
			want_open |= UINT64_C(1) << i;
	check((b.open & br) == want_open, "jscan: the opening brackets are told from the closing ones", "got %#llx, want %#llx",
	      (unsigned long long)(b.open & br), (unsigned long long)want_open);
	hm_jscan_blk cb[1];
	hm_jscan_pick_classify()((const unsigned char *)t, 1, cb);
	check(cb[0].quote == b.quote && cb[0].bslash == b.bslash && cb[0].bracket == b.bracket && cb[0].open == b.open,
	      "jscan: the picked block classifier agrees with the baseline", "masks differ");

	/* White space runs, the common indents (checked as words) and the rest (issue 19): the
	 * first byte that is not white space, counted by strspn. */
	const char *runs[] = {"\n    \"a", "\n  }", "\n     x", "\n   x", "\n    \ty", "\n  \r\n x", " \n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\nz", "x"};
	int ws_ok = 1;
	char wsw[64] = "";
	for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
		t = padded(buf, sizeof buf, runs[i]);
		if (hm_jscan_past_ws(t) != t + strspn(t, " \n\r\t"))
			ws_ok = 0, snprintf(wsw, sizeof wsw, "run %zu: at %td", i, hm_jscan_past_ws(t) - t);
	}
	check(ws_ok, "jscan: white space is crossed to its first other byte, whatever the indent", "%s", wsw);

	t = padded(buf, sizeof buf, "\"ab\\\"c\" ,");
	check(hm_jscan_quote_end(t, t + strlen(t)) == t + 7, "jscan: a string's end is past its closing quote, not an escaped one",
	      "got %td", hm_jscan_quote_end(t, t + strlen(t)) - t);
	check(hm_jscan_scalar_end(padded(buf, sizeof buf, "-12.5e3 }")) == buf + 7, "jscan: a number ends at white space",
	      "got %td", hm_jscan_scalar_end(buf) - buf);

	const struct { const char *text; int64_t ns; int ok; } ns[] = {
		{"1.5", 1500, 1}, {"123456789012.345", 123456789012345, 1}, {"7", 7000, 1}, {"1e3", 1000000, 1},
		{"0.0005", 1, 1}, {"01.5", 0, 0}, {"1.", 0, 0},
		/* the words-from-the-text path (issue 19): 8 to 19 bytes, each length of the integer part */
		{"1234.567", 1234567, 1}, {"12345.678", 12345678, 1}, {"12345678.901", 12345678901, 1},
		{"123456789.012", 123456789012, 1}, {"1419116105360.746", 1419116105360746, 1},
		{"999999999999999.999", 999999999999999999, 1}, {"0123.456", 0, 0}, {"12a4.567", 0, 0},
		{"123456789a12.345", 0, 0}, {"1234.5x7", 0, 0}, {"-1234.567", -1234567, 1},
		/* whole µs (traces of 2022 and before), the largest that fits in ns and the next */
		{"12345678", 12345678000, 1}, {"1669783687464181", 1669783687464181000, 1},
		{"9223372036854775", 9223372036854775000, 1}, {"9223372036854776", 0, 0}, {"01234567", 0, 0},
		/* short whole µs, and one or two decimals (a trace written again by a tool) */
		{"45", 45000, 1}, {"0", 0, 1}, {"05", 0, 0}, {"7.5", 7500, 1}, {"12.0", 12000, 1}, {"0.5", 500, 1},
		{".5", 0, 0}, {"5.", 0, 0}, {"1365627865340.86", 1365627865340860, 1}, {"136562786534.8", 136562786534800, 1},
		{"999999999999999.99", 999999999999999990, 1}, {"1365627865340.8x", 0, 0}, {"9999999999999999.99", 0, 0},
	};
	for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
		int64_t v = -1;
		const char *e = hm_jscan_ns(ns[i].text, ns[i].text + strlen(ns[i].text), &v);
		char name[128];
		snprintf(name, sizeof name, "jscan: \"%s\" µs is %s", ns[i].text, ns[i].ok ? "exact ns" : "refused");
		check(ns[i].ok ? !e && v == ns[i].ns : e != NULL, name, "got %lld (%s)", (long long)v, e ? e : "no error");
	}
	/* The words-from-the-text paths agree with the general parser (hm_num_i64), value and
	 * refusal, for every length of the integer part up to 17 digits, none to three
	 * decimals (none: whole µs, no point), and a stray byte (or a leading zero) at each
	 * place (issue 29: the first digits of a long integer part read as a word too). */
	int ns_agree = 1;
	char ns_why[160] = "";
	for (int ilen = 1; ilen <= 17 && ns_agree; ilen++)
		for (int dec = 0; dec <= 3 && ns_agree; dec++)
			for (int bad = -2; bad < ilen + (dec ? 1 + dec : 0) && ns_agree; bad++) {
				char txt[32];
				int o = 0;
				for (int i = 0; i < ilen; i++)
					txt[o++] = (char)('1' + (i * 5 + ilen) % 9);
				if (dec)
					txt[o++] = '.';
				for (int i = 0; i < dec; i++)
					txt[o++] = (char)('0' + (i * 3 + ilen) % 10);
				txt[o] = 0;
				if (bad == -1)
					txt[0] = '0';
				else if (bad >= 0)
					txt[bad] = bad == ilen ? 'e' : (char)('/' + (bad & 1) * 11); /* '/' and ':' border the digits */
				int64_t va = -1, vb = -2;
				const char *ea = hm_jscan_ns(txt, txt + o, &va), *eb = hm_num_i64(txt, (size_t)o, 3, 1, &vb);
				if ((ea == NULL) != (eb == NULL) || (!ea && va != vb)) {
					ns_agree = 0;
					snprintf(ns_why, sizeof ns_why, "\"%s\": %lld (%s), hm_num_i64 %lld (%s)", txt, (long long)va,
						 ea ? ea : "-", (long long)vb, eb ? eb : "-");
				}
			}
	check(ns_agree, "jscan: µs text to ns agrees with the general parser on every length and stray byte", "%s", ns_why);
	int64_t v = 0;
	check(!hm_jscan_int("-42", "-42" + 3, &v) && v == -42, "jscan: -42 is an integer", "got %lld", (long long)v);
	check(hm_jscan_int("4.5", "4.5" + 3, &v) != NULL, "jscan: 4.5 is no integer", "accepted");
	/* The padded reader of [memory] fields agrees with hm_jscan_int, value and message, on
	 * every length up to 20 digits, signs, leading zeros and a stray byte at each place (issue 19). */
	int agree = 1;
	char why[160] = "";
	for (int len = 0; len <= 20 && agree; len++)
		for (int bad = -1; bad < len && agree; bad++)
			for (int sign = 0; sign < 3 && agree; sign++) {
				char txt[32];
				int o = 0;
				if (sign == 1)
					txt[o++] = '-';
				for (int i = 0; i < len; i++)
					txt[o + i] = (char)(i == bad ? '.' : sign == 2 && i == 0 && len > 1 ? '0' : '1' + (i * 7 + len) % 9);
				txt[o + len] = 0;
				const char *p = padded(buf, sizeof buf, txt);
				int64_t va = 0, vb = 0;
				const char *ea = hm_jscan_int_padded(p, p + strlen(txt), &va), *eb = hm_jscan_int(p, p + strlen(txt), &vb);
				if ((ea == NULL) != (eb == NULL) || (ea && strcmp(ea, eb)) || (!ea && va != vb)) {
					agree = 0;
					snprintf(why, sizeof why, "\"%s\": %lld (%s), hm_jscan_int %lld (%s)", txt, (long long)va, ea ? ea : "-",
						 (long long)vb, eb ? eb : "-");
				}
			}
	check(agree, "jscan: hm_jscan_int_padded = hm_jscan_int on every length, sign and stray byte", "%s", why);

	hm_jscan_scratch sc = {0};
	size_t n = 0;
	const char *q = "\"a\\u00e9\\n\\ud83d\\ude00\"";
	const char *d = hm_jscan_unescape(&sc, q, q + strlen(q), &n);
	check(d && n == 8 && memcmp(d, "a\xc3\xa9\n\xf0\x9f\x98\x80", 8) == 0,
	      "jscan: escapes decode to UTF-8 (a surrogate pair to one character)", "n=%zu", n);
	q = "\"bad \\x\"";
	check(hm_jscan_unescape(&sc, q, q + strlen(q), &n) == NULL, "jscan: an unknown escape is refused", "accepted");
	free(sc.buf);

	keys_seen k = {0};
	t = padded(buf, sizeof buf, "{ \"a\": 1, \"b\" : {\"x\": [2]}, \"c\":\"s\"}");
	const char *bad = hm_jscan_members(t, t + strlen(t), note_key, &k);
	check(!bad && k.n == 3 && strcmp(k.keys, "a=1;b={\"x\": [2]};c=\"s\";") == 0,
	      "jscan: members are walked in order, nested values whole", "bad=%s keys=%s", bad ? bad : "-", k.keys);
	k = (keys_seen){0};
	t = padded(buf, sizeof buf, "{\"a\": 1 \"b\": 2}");
	bad = hm_jscan_members(t, t + strlen(t), note_key, &k);
	check(bad == t + 8, "jscan: a missing comma is reported where it is missing", "at %td", bad ? bad - t : -1);
}

/* The block scan of every instruction set this CPU has (issue 29: AVX2 beside AVX-512 and
 * the baseline), against a byte-by-byte reference on adversarial text: quotes and
 * backslashes on both sides of block edges, escaped quotes, odd and even backslash runs of
 * every length, NUL bytes, invalid UTF-8, brackets in and out of strings; blocks handed over
 * in runs of every length, so that a string state dropped between two calls, or between two
 * blocks of one call, shows as a wrong bracket. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n)
{
	rnd_state ^= rnd_state << 13, rnd_state ^= rnd_state >> 7, rnd_state ^= rnd_state << 17;
	return (unsigned)(rnd_state % n);
}

/* The reference: the brackets outside strings, and the opening ones, of text[0, n) (n a
 * multiple of 64), one mask pair per block. A backslash escapes the next byte anywhere, as
 * the block scan has it. */
static void blocks_by_bytes(const unsigned char *text, size_t n, uint64_t *br, uint64_t *op)
{
	int in = 0, esc = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = text[i];
		if (i % 64 == 0)
			br[i / 64] = op[i / 64] = 0;
		if (esc)
			esc = 0;
		else if (c == '\\')
			esc = 1;
		else if (c == '"')
			in = !in;
		if (!in && (c == '{' || c == '}' || c == '[' || c == ']')) {
			br[i / 64] |= UINT64_C(1) << (i % 64);
			if (c == '{' || c == '[')
				op[i / 64] |= UINT64_C(1) << (i % 64);
		}
	}
}

static void test_jscan_blocks(void)
{
	enum { NB = 24, LEN = 64 * NB };
	static unsigned char text[LEN + HM_JSCAN_PAD];
	static const unsigned char alpha[] = {'"', '"', '\\', '\\', '\\', '{', '}', '[', ']', 'a', ' ', ':', ',', 0, 0xff, 0xc3, 0x80};
	const char *names[] = {"base", "avx2", "avx512"};
	uint64_t br[NB], op[NB];
	hm_jscan_brk got[NB];
	int have = 0;
	for (int v = 0; v < 3; v++) {
		hm_jscan_brackets_fn f = hm_jscan_brackets_named(names[v]);
		hm_jscan_classify_fn cl = hm_jscan_classify_named(names[v]);
		if (!f || !cl)
			continue;
		have++;
		char why[200] = "", cwhy[200] = "";
		for (int round = 0; round < 3000 && !*why; round++) {
			/* rounds of random bytes, of long backslash runs before a quote at each place
			 * of a block edge, and of strings that span one or more blocks */
			int kind = round % 3;
			for (size_t i = 0; i < LEN; i++)
				text[i] = kind == 0 ? alpha[rnd(sizeof alpha)] : kind == 1 ? (rnd(4) ? 'x' : '{') : (rnd(40) ? 'y' : alpha[rnd(sizeof alpha)]);
			if (kind == 1) {
				size_t edge = 64 * (1 + rnd(NB - 2)), run = 1 + rnd(70), at = edge - rnd(3) + rnd(3);
				for (size_t i = at - run; i < at; i++)
					text[i] = '\\';
				text[at] = '"';
				text[at + 1 + rnd(130)] = '"';
			}
			size_t nb = NB - rnd(3);
			blocks_by_bytes(text, 64 * nb, br, op);
			hm_jscan_carry c = {0, 0};
			uint64_t busy[NB]; /* what each call said of each block: has a bracket (1) or not */
			for (size_t k = 0; k < nb;) { /* runs of 1 to 64 blocks */
				size_t m = 1 + rnd(round % 2 ? 3 : HM_JSCAN_CHUNK);
				if (m > nb - k)
					m = nb - k;
				uint64_t mask = f(text + 64 * k, m, got + k, &c);
				for (size_t j = 0; j < m; j++)
					busy[k + j] = mask >> j & 1;
				if (m < 64 && mask >> m)
					snprintf(why, sizeof why, "round %d: blocks past the %zu read are said to have brackets", round, m);
				k += m;
			}
			for (size_t k = 0; k < nb && !*why; k++)
				if (got[k].bracket != br[k] || got[k].open != op[k] || busy[k] != (br[k] != 0))
					snprintf(why, sizeof why, "round %d, block %zu: brackets %#llx, want %#llx; said %s", round, k,
						 (unsigned long long)got[k].bracket, (unsigned long long)br[k],
						 busy[k] ? "some" : "none");
			hm_jscan_blk cb[NB];
			cl(text, nb, cb);
			for (size_t k = 0; k < nb && !*cwhy; k++) {
				hm_jscan_blk b = hm_jscan_classify64(text + 64 * k);
				if (b.quote != cb[k].quote || b.bslash != cb[k].bslash || b.bracket != cb[k].bracket || b.open != cb[k].open)
					snprintf(cwhy, sizeof cwhy, "round %d, block %zu", round, k);
			}
		}
		char name[128];
		snprintf(name, sizeof name, "jscan: the %s block scan finds the brackets outside strings, carried across blocks and calls", names[v]);
		check(!*why, name, "%s", why);
		snprintf(name, sizeof name, "jscan: the %s classifier agrees with the baseline on every byte", names[v]);
		check(!*cwhy, name, "%s", cwhy);
	}
	check(have >= 1, "jscan: the baseline block scan is there", "none");

	/* The whole reader at every alignment of the text's end (the last block is shorter) and
	 * of its events on blocks: events whose strings hold brackets, escaped quotes and
	 * backslash runs, each read as one slice. */
	char *json = malloc(8192), err[256];
	int ok = 1;
	char why[300] = "";
	for (int pad = 0; pad < 130 && ok; pad++) {
		int o = snprintf(json, 8192, "{\"traceEvents\": [%*s", pad, "");
		for (int e = 0; e < 12; e++)
			o += snprintf(json + o, 8192 - (size_t)o,
				      "%s{\"ph\": \"X\", \"name\": \"n%.*s\\\\\\\"{[\", \"cat\": \"cpu_op\", \"ts\": %d.5, \"dur\": 1, "
				      "\"pid\": 1, \"tid\": 1, \"args\": {\"s\": \"}]\\\"%.*s\", \"d\": [[1], [2]]}}",
				      e ? ", " : "", (e * 7 + pad) % 12 * 2, "\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\", e + 1,
				      (e + pad) % 11 * 2, "\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\");
		o += snprintf(json + o, 8192 - (size_t)o, "]}%*s", pad % 64, "");
		hm_trace *t = hm_trace_parse("align.json", json, (size_t)o, err, sizeof err);
		if (!t || t->count[HM_EV_HOST_SLICE] != 12) {
			ok = 0;
			snprintf(why, sizeof why, "pad %d: %s", pad, t ? "not 12 slices" : err);
		}
		hm_trace_free(t);
	}
	free(json);
	check(ok, "jscan: events with brackets and escapes in strings read whole at every alignment", "%s", why);
}

/* A packed column gives back every value it was given, whatever the spread of a block:
 * one value, HM_NONE among others, the widths 1 to 4 at their limits, and spans past
 * int64 (issue 19: the store keeps its totals packed). Checked against a plain array. */
static void test_pack(void)
{
	enum { N = 64 * 40 + 17 };
	static int64_t want[N];
	hm_pack p = {0};
	uint64_t x = 88172645463325252u;
	for (size_t i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t b = i / 64;
		int64_t base = (int64_t)(b * 1000003u) - 500000;
		static const uint64_t spread[] = {0, 1, 255, 254, 256, 65535, 65534, 65536, UINT32_MAX - 1, UINT32_MAX,
						  (uint64_t)UINT32_MAX + 1, UINT64_MAX};
		uint64_t s = spread[b % 12];
		int64_t v = s == UINT64_MAX ? (int64_t)x : (int64_t)((uint64_t)base + (s ? x % (s + 1) : 0));
		if (i % 64 == 0 && s && s != UINT64_MAX)
			v = base + (int64_t)s; /* the largest offset of the width is there */
		if (i % 64 == 1)
			v = base;
		if (b % 5 == 1 && i % 64 == 5)
			v = HM_NONE;
		if (b == 13 || (b == 14 && i % 2))
			v = b == 13 ? HM_NONE : INT64_MAX;
		want[i] = v;
		hm_pack_add(&p, v);
	}
	size_t bad = N;
	for (size_t i = 0; i < N; i++)
		if (hm_pack_get(&p, i) != want[i] && bad == N)
			bad = i;
	check(bad == N, "pack: every value read back", "row %zu", bad);
	hm_pack_set(&p, 70, INT64_MIN + 1), want[70] = INT64_MIN + 1;
	hm_pack_set(&p, N - 1, 5), want[N - 1] = 5;
	hm_pack_fit(&p);
	int64_t *all = hm_xrealloc(NULL, N * sizeof *all);
	hm_pack_copy(&p, all);
	check(memcmp(all, want, sizeof want) == 0, "pack: rows set after the fact, then the room given back", "differ");
	check(hm_pack_bytes(&p) < N * 8, "pack: takes less than the plain column", "%zu bytes", hm_pack_bytes(&p));
	free(all);
	hm_pack_free(&p);
}

/* The store grows its columns together and keeps what was appended (issue 13). */
static void test_store(void)
{
	hm_trace *t = hm_store_new("x.json");
	uint32_t a = hm_store_name(t, "aten::add", 9), th = hm_store_thread(t, "1\x1f" "2", 3);
	for (int i = 0; i < 3000; i++) {
		hm_mem_event e = {i, i % 2 ? -64 : 64, HM_NONE, HM_NONE, i, 0x1000u + (uint64_t)i, 1, 1, 0, th};
		hm_store_add_mem(t, &e);
		hm_store_add_slice(t, i, -5, a, a, th, HM_SL_OP);
	}
	hm_store_name_thread(t, 4, a);
	int ok = t->mem.n == 3000 && t->mem.cap >= 3000 && t->sl.n == 3000 && hm_mem_ts(&t->mem, 2999) == 2999 &&
		 hm_mem_bytes(&t->mem, 2999) == -64 && t->mem.addr[1500] == 0x1000u + 1500 && hm_mem_ev_idx(&t->mem, 7) == 7 &&
		 t->sl.dur[10] == 0 && t->sl.kind[2999] == HM_SL_OP && t->thread_name[4] == a && t->thread_name[0] == UINT32_MAX &&
		 t->rank == HM_NONE && t->first_ts == HM_NONE;
	check(ok, "store: appends past the first growth keep every row, negative durations stored as 0", "n=%zu", t->mem.n);
	hm_store_free(t);
}

/* The store's packed memory columns give back what each event had, read through the
 * hm_mem_* accessors, checked against plain arrays (issue 29): times that jump and go
 * back, sizes of both signs from 0 to the store's limit, a thread that changes now and
 * then, events with and without an Addr, Total Allocated absent on some; rows read while
 * their block is still being filled, and again once the last block (not full) is closed. */
static void test_store_packed(void)
{
	enum { N = 64 * 9 + 23 };
	static int64_t ts[N], bytes[N], ta[N];
	static uint32_t thread[N];
	static int has_addr[N];
	static uint64_t addr[N];
	hm_trace *t = hm_store_new("x.json");
	uint64_t x = 88172645463325252u;
	int ok = 1;
	size_t bad = N;
	for (size_t i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t b = i / 64;
		ts[i] = b == 3 ? -(int64_t)(x % 1000000) : (int64_t)(i * 1000 + x % 997) + (b == 5 ? HM_STORE_TS_LIMIT - 10000000 : 0);
		bytes[i] = i % 7 == 0 ? 0 : (int64_t)(x % (b == 6 ? (uint64_t)HM_STORE_MEM_LIMIT : 1u << 20));
		if (i % 2)
			bytes[i] = -bytes[i];
		thread[i] = b == 2 ? (uint32_t)(x % 5) : (uint32_t)(i / 100);
		has_addr[i] = b == 4 ? 0 : b == 7 ? (int)(x % 2) : 1;
		addr[i] = has_addr[i] ? 0x7f0000000000u + (x % 4096) * 512 : 0;
		ta[i] = i % 11 == 3 ? HM_NONE : (int64_t)i * 512;
		hm_mem_event e = {ts[i], bytes[i], ta[i], HM_NONE, (int64_t)i, addr[i], has_addr[i], 1, 0, thread[i]};
		hm_store_add_mem(t, &e);
		const hm_mem *m = &t->mem;
		size_t j = i - i % 64 + (i % 64) / 2; /* a row of the block being filled */
		if (hm_mem_ts(m, j) != ts[j] || hm_mem_bytes(m, j) != bytes[j] || hm_mem_thread(m, j) != thread[j])
			ok = 0;
	}
	check(ok, "store: packed memory columns read back while their block is being filled", "differ");
	const hm_mem *m = &t->mem;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < N && bad == N; i++)
			if (hm_mem_ts(m, i) != ts[i] || hm_mem_bytes(m, i) != bytes[i] || hm_mem_thread(m, i) != thread[i] ||
			    hm_mem_has_addr(m, i) != has_addr[i] || (has_addr[i] && hm_mem_addr(m, i) != addr[i]) ||
			    hm_mem_total_alloc(m, i) != ta[i] || hm_mem_total_res(m, i) != HM_NONE || hm_mem_ev_idx(m, i) != (int64_t)i)
				bad = i;
		hm_pack_fit(&t->mem.ts), hm_pack_fit(&t->mem.bytes), hm_pack_fit(&t->mem.thread), hm_pack_fit(&t->mem.has_addr);
	}
	check(bad == N, "store: every packed memory column reads back as appended (issue 29)", "row %zu", bad);
	check(hm_pack_bytes(&t->mem.ts) + hm_pack_bytes(&t->mem.bytes) + hm_pack_bytes(&t->mem.thread) +
		      hm_pack_bytes(&t->mem.has_addr) < N * (8 + 8 + 4 + 1),
	      "store: packed time, size, thread and Addr flag take less than plain columns", "%zu bytes",
	      hm_pack_bytes(&t->mem.ts));
	hm_store_free(t);
}

static void test_numbers(void)
{
	num_ok("num: 0 is 0", "0", 0, 0, 0);
	num_ok("num: 42 is 42", "42", 0, 0, 42);
	num_ok("num: -17 is -17", "-17", 0, 0, -17);
	{
		int neg = 7;
		uint64_t mag = 7;
		const char *e = hm_num_parse("-0", 2, 0, 0, &neg, &mag);
		check(!e && neg == 0 && mag == 0, "num: -0 parses as zero with the sign cleared",
		      "err=%s neg=%d mag=%" PRIu64, e ? e : "none", neg, mag);
		e = hm_num_parse("-0.0001", 7, 3, 1, &neg, &mag);
		check(!e && neg == 0 && mag == 0, "num: -0.0001 us rounds to 0 ns with the sign cleared",
		      "err=%s neg=%d mag=%" PRIu64, e ? e : "none", neg, mag);
	}
	num_ok("num: 1e3 is 1000", "1e3", 0, 0, 1000);
	num_ok("num: 1E+3 is 1000", "1E+3", 0, 0, 1000);
	num_ok("num: 1.5e3 is 1500", "1.5e3", 0, 0, 1500);
	num_ok("num: 150e-1 is 15", "150e-1", 0, 0, 15);
	num_err("num: 15e-1 as an integer is an error (1.5)", "15e-1", 0, 0);
	num_err("num: 1.5 as an integer is an error", "1.5", 0, 0);
	num_ok("num: 2.0 as an integer is 2 (zero decimals are fine)", "2.0", 0, 0, 2);
	num_ok("num: 1419116105360.746 us is exactly 1419116105360746 ns", "1419116105360.746", 3, 1, 1419116105360746);
	num_ok("num: 1669783687404093 us (integer) is 1669783687404093000 ns", "1669783687404093", 3, 1,
	       INT64_C(1669783687404093000));
	num_ok("num: 1.419116105360746e12 us is exactly 1419116105360746 ns", "1.419116105360746e12", 3, 1,
	       1419116105360746);
	num_ok("num: 123e-2 us is 1230 ns", "123e-2", 3, 0, 1230);
	num_ok("num: 0.001 us is 1 ns", "0.001", 3, 0, 1);
	num_ok("num: 1.0005 us rounds to 1001 ns with round=1", "1.0005", 3, 1, 1001);
	num_ok("num: 1.0004 us rounds to 1000 ns with round=1", "1.0004", 3, 1, 1000);
	num_ok("num: 0.9995 us rounds up across the point to 1000 ns", "0.9995", 3, 1, 1000);
	num_ok("num: 0.0005 us rounds to 1 ns", "0.0005", 3, 1, 1);
	num_ok("num: 0.00049 us rounds to 0 ns", "0.00049", 3, 1, 0);
	num_ok("num: -1.0005 us rounds to -1001 ns (nearest, away from zero on a tie)", "-1.0005", 3, 1, -1001);
	num_err("num: 1.0005 us with round=0 is an error", "1.0005", 3, 0);
	num_ok("num: 9223372036854775807 (2^63-1) is INT64_MAX", "9223372036854775807", 0, 0, INT64_MAX);
	num_ok("num: -9223372036854775808 (-2^63) is INT64_MIN", "-9223372036854775808", 0, 0, INT64_MIN);
	num_err("num: 9223372036854775808 (2^63) does not fit int64", "9223372036854775808", 0, 0);
	num_err("num: -9223372036854775809 is below int64", "-9223372036854775809", 0, 0);
	{
		int neg = 1;
		uint64_t mag = 0;
		const char *e = hm_num_parse("18446744073709551615", 20, 0, 0, &neg, &mag);
		check(!e && !neg && mag == UINT64_MAX, "num: hm_num_parse reads 18446744073709551615 (2^64-1) exactly",
		      "err=%s neg=%d mag=%" PRIu64, e ? e : "none", neg, mag);
		e = hm_num_parse("18446744073709551616", 20, 0, 0, &neg, &mag);
		check(e != NULL, "num: hm_num_parse rejects 18446744073709551616 (2^64) instead of wrapping",
		      "accepted as %" PRIu64, mag);
		e = hm_num_parse("-9223372036854775809", 20, 0, 0, &neg, &mag);
		check(e != NULL, "num: hm_num_parse rejects -9223372036854775809 (below -2^63)", "accepted, mag %" PRIu64, mag);
		e = hm_num_parse("18446744073709551615.5", 22, 0, 1, &neg, &mag);
		check(e != NULL, "num: rounding 2^64-1 + 0.5 up is an overflow error, not a wrap", "accepted as %" PRIu64, mag);
		e = hm_num_parse("18446744073709551.616", 21, 3, 0, &neg, &mag);
		check(e != NULL, "num: 18446744073709551.616 us (2^64 ns) is out of range", "accepted as %" PRIu64, mag);
		e = hm_num_parse("1e19", 4, 0, 0, &neg, &mag);
		check(!e && mag == UINT64_C(10000000000000000000), "num: 1e19 is 10^19 (fits in uint64)",
		      "err=%s mag=%" PRIu64, e ? e : "none", mag);
	}
	num_err("num: 9223372036854775808 via hm_num_i64 is an error", "9223372036854775808", 0, 0);
	num_err("num: 1e20 overflows (error, not wrap)", "1e20", 0, 0);
	num_err("num: 184467440737095516150 (21 digits) overflows", "184467440737095516150", 0, 0);
	num_err("num: 36893488147419103232 (2^65) overflows", "36893488147419103232", 0, 0);
	{
		char big[120];
		memset(big, '9', 100);
		big[100] = 0;
		num_err("num: a 100-digit integer is an error", big, 0, 0);
	}
	num_err("num: 1e99999999 is an error (huge exponent)", "1e99999999", 0, 0);
	num_ok("num: 1e-99999999 rounds to 0 with round=1", "1e-99999999", 3, 1, 0);
	num_err("num: leading zero 01 is rejected", "01", 0, 0);
	num_err("num: leading zero -01 is rejected", "-01", 0, 0);
	num_err("num: leading zeros 00 are rejected", "00", 0, 0);
	num_ok("num: 0.5 us (zero before the point) is 500 ns", "0.5", 3, 0, 500);
	num_err("num: NaN is rejected", "NaN", 0, 0);
	num_err("num: Infinity is rejected", "Infinity", 0, 0);
	num_err("num: -Infinity is rejected", "-Infinity", 0, 0);
	num_err("num: the empty string is rejected", "", 0, 0);
	num_err("num: a lone minus is rejected", "-", 0, 0);
	num_err("num: 1. (no digit after the point) is rejected", "1.", 3, 1);
	num_err("num: .5 (no digit before the point) is rejected", ".5", 3, 1);
	num_err("num: +1 (plus sign) is rejected", "+1", 0, 0);
	num_err("num: 1e (no exponent digits) is rejected", "1e", 0, 0);
	num_err("num: 1e+ (no exponent digits) is rejected", "1e+", 0, 0);
	num_err("num: 0x10 is rejected", "0x10", 0, 0);
	num_err("num: trailing space is rejected", "1 ", 0, 0);
	num_err("num: leading space is rejected", " 1", 0, 0);
	num_err("num: true is rejected", "true", 0, 0);
	{
		/* Only len bytes are read: "12" out of "123". */
		int64_t v = 0;
		const char *e = hm_num_i64("123", 2, 0, 0, &v);
		check(!e && v == 12, "num: only len bytes are read (\"123\" with len 2 is 12)", "err=%s v=%" PRId64,
		      e ? e : "none", v);
	}
	{
		char s[300];
		/* "1." + 200 zeros: more digits than the digit buffer, but the value is 1 µs exactly */
		strcpy(s, "1.");
		memset(s + 2, '0', 200);
		s[202] = 0;
		num_ok("num: 1. followed by 200 zeros is exactly 1000 ns with round=0", s, 3, 0, 1000);
		/* "1." + 70 zeros + "1": the non-zero digit is past the digit buffer */
		memset(s + 2, '0', 70);
		strcpy(s + 72, "1");
		num_err("num: a non-zero digit 71 places after the point is an error with round=0", s, 3, 0);
		num_ok("num: ... and rounds away with round=1", s, 3, 1, 1000);
		/* "1.2345" + 100 nines = 1234.5999... ns -> 1235 */
		strcpy(s, "1.2345");
		memset(s + 6, '9', 100);
		s[106] = 0;
		num_ok("num: 1.2345999... (100 more digits) us rounds to 1235 ns", s, 3, 1, 1235);
		/* "0." + 100 zeros + "1" with scale 3 */
		strcpy(s, "0.");
		memset(s + 2, '0', 100);
		strcpy(s + 102, "1");
		num_err("num: 0.000...1 (100 zeros) us is an error with round=0", s, 3, 0);
		num_ok("num: 0.000...1 (100 zeros) us is 0 ns with round=1", s, 3, 1, 0);
		/* 25 significant digits that scale down to an exact integer: 1234567890123456789.000000 */
		num_ok("num: 1234567890123456.789000000000 us is 1234567890123456789 ns", "1234567890123456.789000000000", 3, 0,
		       INT64_C(1234567890123456789));
	}
}

/* ---------------------------------------------------------------- formatting */

static void test_format(void)
{
	char b[64];
	hm_fmt_us(b, 7000);
	check_str("fmt_us: 7000 ns is \"7.0\" (at least one decimal)", b, "7.0");
	hm_fmt_us(b, 12500);
	check_str("fmt_us: 12500 ns is \"12.5\" (trailing zeros trimmed)", b, "12.5");
	hm_fmt_us(b, 1419116105360746);
	check_str("fmt_us: 1419116105360746 ns is \"1419116105360.746\"", b, "1419116105360.746");
	hm_fmt_us(b, 1);
	check_str("fmt_us: 1 ns is \"0.001\"", b, "0.001");
	hm_fmt_us(b, 0);
	check_str("fmt_us: 0 ns is \"0.0\"", b, "0.0");
	hm_fmt_us(b, 10);
	check_str("fmt_us: 10 ns is \"0.01\"", b, "0.01");
	hm_fmt_us(b, -1500);
	check_str("fmt_us: -1500 ns is \"-1.5\"", b, "-1.5");
	int n = hm_fmt_us(b, 1669783687464300000);
	check(strcmp(b, "1669783687464300.0") == 0 && n == (int)strlen(b),
	      "fmt_us: 1669783687464300000 ns is \"1669783687464300.0\" and the length is returned", "got \"%s\" n=%d", b, n);
	hm_fmt_us(b, INT64_MIN);
	check_str("fmt_us: INT64_MIN ns is \"-9223372036854775.808\"", b, "-9223372036854775.808");

	static const struct {
		int64_t v;
		const char *want;
	} fb[] = {
		{0, "0 B"},
		{512, "512 B"},
		{1023, "1023 B"},
		{1024, "1.00 KiB"},
		{1536, "1.50 KiB"},
		{1048576, "1.00 MiB"},
		{1073741824, "1.00 GiB"},
		{6629508096, "6.17 GiB"},
		{1099511627776, "1.00 TiB"},
		{-2048, "-2.00 KiB"},
		{INT64_MIN, "-8192.00 PiB"},
	};
	for (size_t i = 0; i < sizeof fb / sizeof *fb; i++) {
		char name[128];
		snprintf(name, sizeof name, "fmt_bytes: %" PRId64 " is \"%s\"", fb[i].v, fb[i].want);
		hm_fmt_bytes(b, sizeof b, fb[i].v);
		check_str(name, b, fb[i].want);
	}
	char small[6];
	hm_fmt_bytes(small, sizeof small, 6629508096);
	check(strlen(small) == 5, "fmt_bytes: output is truncated to the buffer size", "got \"%s\"", small);
}

/* ---------------------------------------------------------------- string table */

static void test_strtab(void)
{
	hm_strtab t = {0};
	uint32_t a = hm_strtab_intern(&t, "aten::add", 9);
	uint32_t b = hm_strtab_intern(&t, "aten::mul", 9);
	uint32_t a2 = hm_strtab_intern(&t, "aten::add_x", 9); /* same first 9 bytes */
	check(a == 0 && b == 1, "strtab: ids are dense from 0", "a=%u b=%u", a, b);
	check(a2 == a, "strtab: the same bytes give the same id", "a=%u again=%u", a, a2);
	check(a != b, "strtab: different bytes give different ids", "a=%u b=%u", a, b);
	uint32_t e = hm_strtab_intern(&t, "", 0);
	uint32_t e2 = hm_strtab_intern(&t, "xyz", 0);
	check(e == e2 && t.len[e] == 0 && t.str[e][0] == 0, "strtab: the empty string is one entry", "e=%u e2=%u", e, e2);

	uint32_t n1 = hm_strtab_intern(&t, "ab\0cd", 5);
	uint32_t n2 = hm_strtab_intern(&t, "ab\0ce", 5);
	uint32_t n3 = hm_strtab_intern(&t, "ab", 2);
	uint32_t n4 = hm_strtab_intern(&t, "ab\0cd", 5);
	check(n1 != n2 && n1 != n3 && n2 != n3 && n4 == n1, "strtab: embedded NUL bytes are part of the key",
	      "ids %u %u %u %u", n1, n2, n3, n4);
	check(t.len[n1] == 5 && memcmp(t.str[n1], "ab\0cd", 5) == 0 && t.str[n1][5] == 0,
	      "strtab: a string with a NUL keeps its length and bytes, NUL-terminated copy", "len %u", t.len[n1]);

	size_t base = t.n;
	grp g = {0};
	char k[32];
	const char *first = t.str[a];
	for (int i = 0; i < 5000; i++) {
		int len = snprintf(k, sizeof k, "name-%d", i);
		uint32_t id = hm_strtab_intern(&t, k, (size_t)len);
		if (!g_i64(&g, "id of new string", id, (int64_t)(base + (size_t)i)))
			break;
	}
	g_i64(&g, "count after 5000 strings", (int64_t)t.n, (int64_t)(base + 5000));
	for (int i = 0; i < 5000 && !g.bad; i++) {
		int len = snprintf(k, sizeof k, "name-%d", i);
		uint32_t id = hm_strtab_intern(&t, k, (size_t)len);
		g_i64(&g, "id after rehash", id, (int64_t)(base + (size_t)i));
		g_true(&g, strcmp(t.str[id], k) == 0, "stored text of %s is %s", k, t.str[id]);
	}
	g_i64(&g, "aten::add after rehash", hm_strtab_intern(&t, "aten::add", 9), a);
	g_i64(&g, "ab\\0cd after rehash", hm_strtab_intern(&t, "ab\0cd", 5), n1);
	g_true(&g, t.str[a] == first, "the pointer of an early string moved");
	g_i64(&g, "count unchanged by lookups", (int64_t)t.n, (int64_t)(base + 5000));
	g_done(&g, "strtab: 5000 strings survive rehashing with stable ids and pointers");
	hm_strtab_free(&t);
	check(t.n == 0 && t.str == NULL, "strtab: hm_strtab_free empties the table", "n=%zu", t.n);
}

/* ---------------------------------------------------------------- unpickler (issue 24) */

/* A pickle of one dict of n pairs "k<i>": i (then "k0": -1 again when dup: the last wins),
 * into b; its length. */
static size_t pk_dict(unsigned char *b, int n, int dup)
{
	size_t k = 0;
	b[k++] = 0x80, b[k++] = 4, b[k++] = '}', b[k++] = '(';
	for (int i = 0; i < n + dup; i++) {
		int len = snprintf((char *)b + k + 2, 16, "k%d", i < n ? i : 0);
		int32_t v = i < n ? i : -1;
		b[k] = 0x8c, b[k + 1] = (unsigned char)len, k += 2 + (size_t)len;
		b[k++] = 'J';
		memcpy(b + k, &v, 4), k += 4; /* (little-endian hosts) */
	}
	b[k++] = 'u', b[k++] = '.';
	return k;
}

/* A dict's look-ups cost a probe or a few however many keys it has (its keys are hashed):
 * a hostile dict of 200,000 keys looked up 50,000 times took 56 s when each look-up scanned
 * it. And the memo's far indices, and bytes after STOP. */
static void test_unpickle(void)
{
	static unsigned char b[20 * 20000 + 64];
	char err[256], key[16];
	uint64_t work[2];
	for (int r = 0; r < 2; r++) {
		int n = r ? 20000 : 2000;
		size_t len = pk_dict(b, n, 1);
		hm_pk *p = hm_pk_load("t", NULL, (const char *)b, len, NULL, err, sizeof err);
		if (!check(p != NULL, "unpickle: a dict of many keys loads", "%s", err))
			return;
		int bad = 0;
		for (int i = 0; i < 1000; i++) {
			snprintf(key, sizeof key, "k%d", i * (n / 1000));
			int64_t v = -2;
			hm_pk_int(p, hm_pk_get(p, hm_pk_root(p), hm_pk_atom(p, key)), &v);
			bad += v != (i ? i * (n / 1000) : -1);
		}
		check(!bad && hm_pk_get(p, hm_pk_root(p), hm_pk_atom(p, "nope")) == HM_PK_ABSENT,
		      "unpickle: a hashed dict finds each key's last value, and nothing for an absent key", "%d wrong", bad);
		work[r] = hm_pk_work(p);
		hm_pk_free(p);
	}
	check(work[0] > 0 && work[1] <= 2 * work[0], "unpickle: 1000 look-ups in a dict 10 times bigger cost about the same",
	      "%llu then %llu probes", (unsigned long long)work[0], (unsigned long long)work[1]);

	/* PROTO 4, FRAMEs to byte 2000, EMPTY_LIST, LONG_BINPUT 1500 (far past the entries
	 * set, so in the memo's hash), LONG_BINGET 1500, TUPLE2, STOP: the list twice. */
	static unsigned char m[2100];
	size_t k = 0;
	m[k++] = 0x80, m[k++] = 4;
	while (k < 2000)
		memset(m + k, 0, 9), m[k] = 0x95, k += 9;
	uint32_t idx = 1500;
	m[k++] = ']', m[k++] = 'r', memcpy(m + k, &idx, 4), k += 4;
	m[k++] = 'j', memcpy(m + k, &idx, 4), k += 4;
	m[k++] = 0x86, m[k++] = '.';
	hm_pk *q = hm_pk_load("t", NULL, (const char *)m, k, NULL, err, sizeof err);
	check(q && hm_pk_len(q, hm_pk_root(q)) == 2 && hm_pk_item(q, hm_pk_root(q), 0) == hm_pk_item(q, hm_pk_root(q), 1) &&
		      hm_pk_type(hm_pk_item(q, hm_pk_root(q), 0)) == HM_PK_LIST,
	      "unpickle: a far memo index is kept and found", "%s", q ? "wrong tree" : err);
	hm_pk_free(q);
	/* Issue 25: arrays kept once are copied before they change. l1 = [f, f] and l2 = [f, f]
	 * share their frames, then l1 gets a third (BINGET l1, MARK, f, APPENDS); d2 = {'a': 2}
	 * shares f's keys, then f gets 'b' (SETITEM). Root: [l1, l2, l1, d2, f]. */
	static const unsigned char cw[] = {0x80, 4, ']', 0x94, '(', ']', 0x94, '(', '}', 0x94, '(', 0x8c, 1, 'a', 0x94, 'K', 1,
					   'u', 'h', 2, 'e', ']', 0x94, '(', 'h', 2, 'h', 2, 'e', 'h', 1, '(', 'h', 2, 'e',
					   '}', 0x94, 'h', 3, 'K', 2, 's', 'h', 2, 0x8c, 1, 'b', 0x94, 'K', 3, 's', 'e', '.'};
	hm_pk *w = hm_pk_load("t", NULL, (const char *)cw, sizeof cw, NULL, err, sizeof err);
	if (check(w != NULL, "unpickle: a shared array changed later loads", "%s", err)) {
		hm_pkv r = hm_pk_root(w), l1 = hm_pk_item(w, r, 0), l2 = hm_pk_item(w, r, 1), d2 = hm_pk_item(w, r, 3),
		       f = hm_pk_item(w, r, 4);
		int64_t a = 0, bv = 0;
		hm_pk_int(w, hm_pk_get(w, d2, hm_pk_atom(w, "a")), &a), hm_pk_int(w, hm_pk_get(w, f, hm_pk_atom(w, "b")), &bv);
		check(hm_pk_len(w, r) == 5 && hm_pk_len(w, l1) == 3 && hm_pk_len(w, l2) == 2 && hm_pk_item(w, r, 2) == l1 &&
			      hm_pk_same(w, l1) != hm_pk_same(w, l2) && hm_pk_len(w, d2) == 1 && a == 2 &&
			      hm_pk_get(w, d2, hm_pk_atom(w, "b")) == HM_PK_ABSENT && hm_pk_len(w, f) == 2 && bv == 3,
		      "unpickle: a list or dict that grows after its elements or keys were shared leaves the others as they were "
		      "(issue 25)", "lens %zu %zu %zu %zu, a %lld, b %lld", hm_pk_len(w, l1), hm_pk_len(w, l2), hm_pk_len(w, d2),
		      hm_pk_len(w, f), (long long)a, (long long)bv);
	}
	hm_pk_free(w);
	unsigned char t[] = {0x80, 4, ']', '.', '\n'};
	hm_pk *p = hm_pk_load("t", NULL, (const char *)t, sizeof t, NULL, err, sizeof err);
	check(!p && strstr(err, "t:4: unexpected data after the pickle's STOP opcode"), "unpickle: bytes after STOP are an error at their offset",
	      "%s", p ? "loaded" : err);
	hm_pk_free(p);
}

/* ---------------------------------------------------------------- trace reader */

static void test_trace_generations(void)
{
	char err[512];
	/* 2021 (PyTorch ~1.9): no cat, no Addr, no totals, integer ts, ops are "Operator" with string tid. */
	const char *t21 =
		"{\"schemaVersion\": 1, \"traceEvents\": [\n"
		"{\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"aten::empty\", \"pid\": 25738, \"tid\": \"25738\", "
		"\"ts\": 1623143089861000, \"dur\": 10, \"args\": {\"Input dims\": [[1, 2]]}},\n"
		"{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 25738, \"tid\": 25738, \"ts\": 1623143089861005, "
		"\"args\": {\"Device Type\": 0, \"Device Id\": -1, \"Bytes\": 4}},\n"
		"{\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 25738, \"tid\": \"25738\", "
		"\"ts\": 1623143089861006, \"dur\": 3},\n"
		"{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 25738, \"tid\": 25738, \"ts\": 1623143089861020, "
		"\"args\": {\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": -4}},\n"
		"{\"ph\": \"X\", \"cat\": \"Trace\", \"name\": \"PyTorch Profiler (0)\", \"pid\": \"Traces\", \"tid\": \"PyTorch Profiler\", "
		"\"ts\": 1623143089860000, \"dur\": 900}\n"
		"]}";
	hm_trace *t = parse_text("resnet50_worker0.json", t21, strlen(t21), err, sizeof err);
	grp g = {0};
	if (g_true(&g, t != NULL, "parse failed: %s", err)) {
		g_i64(&g, "events", (int64_t)t->events, 5);
		g_i64(&g, "mem.n", (int64_t)t->mem.n, 2);
		g_i64(&g, "ts[0] ns", hm_mem_ts(&t->mem, 0), INT64_C(1623143089861005000));
		g_i64(&g, "ts[1] ns", hm_mem_ts(&t->mem, 1), INT64_C(1623143089861020000));
		g_i64(&g, "bytes[0]", hm_mem_bytes(&t->mem, 0), 4);
		g_i64(&g, "bytes[1]", hm_mem_bytes(&t->mem, 1), -4);
		g_i64(&g, "has_addr[0]", hm_mem_has_addr(&t->mem, 0), 0);
		g_i64(&g, "total_alloc[0]", hm_mem_total_alloc(&t->mem, 0), HM_NONE);
		g_i64(&g, "total_res[0]", hm_mem_total_res(&t->mem, 0), HM_NONE);
		g_i64(&g, "ev_idx[0]", hm_mem_ev_idx(&t->mem, 0), HM_NONE);
		g_i64(&g, "dev_type[0]", t->mem.dev_type[0], 0);
		g_i64(&g, "dev_id[0]", t->mem.dev_id[0], -1);
		g_i64(&g, "dev_type[1]", t->mem.dev_type[1], 1);
		g_i64(&g, "dev_id[1]", t->mem.dev_id[1], 0);
		g_i64(&g, "host slices (the Operator; the Runtime slice is on another thread)", (int64_t)t->sl.n, 2);
		g_i64(&g, "slice 0 is an op", t->sl.kind[0], HM_SL_OP);
		if (t->sl.n >= 1) {
			g_i64(&g, "op ts", t->sl.ts[0], INT64_C(1623143089861000000));
			g_i64(&g, "op dur", t->sl.dur[0], 10000);
			g_str(&g, "op name", t->names.str[t->sl.name[0]], "aten::empty");
			g_i64(&g, "op thread == memory thread (string vs int tid)", t->sl.thread[0], hm_mem_thread(&t->mem, 0));
		}
		g_i64(&g, "first_ts", t->first_ts, INT64_C(1623143089860000000));
		g_i64(&g, "rank", t->rank, HM_NONE);
		g_i64(&g, "has_trace_events", t->has_trace_events, 1);
	}
	g_done(&g, "trace: 2021 [memory] events (no cat, Addr or totals; int ts; Operator ops, string tid)");
	hm_trace_free(t);

	/* 2022: cat cpu_instant_event, int ts, args Ev Idx, Device Type, Device Id, Addr, Bytes, totals. */
	const char *t22 =
		"{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"Tesla V100-SXM2-32GB\"}],\n"
		"\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 1, \"world_size\": 2},\n"
		"\"traceEvents\": [\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::zeros\", \"pid\": 783658, \"tid\": 785244, "
		"\"ts\": 1669783687404090, \"dur\": 8, \"args\": {\"External id\": 3}},\n"
		"{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 783658, "
		"\"tid\": 785244, \"ts\": 1669783687404093, \"args\": {\"Ev Idx\": 7, \"Device Type\": 1, \"Device Id\": 1, "
		"\"Addr\": 139942626263040, \"Bytes\": 98566144, \"Total Allocated\": 6629508096, \"Total Reserved\": 12782141440}},\n"
		"{\"ph\": \"f\", \"id\": 1, \"pid\": 783658, \"tid\": 785244, \"ts\": 1669783687404094, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}\n"
		"],\n\"traceName\": \"/tmp/trace_8_rank_1.json\", \"profile_memory\": 1}";
	t = parse_text("x_rank_5.json", t22, strlen(t22), err, sizeof err);
	g = (grp){0};
	if (g_true(&g, t != NULL, "parse failed: %s", err)) {
		g_i64(&g, "events", (int64_t)t->events, 3);
		g_i64(&g, "mem.n", (int64_t)t->mem.n, 1);
		g_i64(&g, "ts", hm_mem_ts(&t->mem, 0), INT64_C(1669783687404093000));
		g_i64(&g, "ev_idx", hm_mem_ev_idx(&t->mem, 0), 7);
		g_i64(&g, "dev_type", t->mem.dev_type[0], 1);
		g_i64(&g, "dev_id", t->mem.dev_id[0], 1);
		g_i64(&g, "has_addr", hm_mem_has_addr(&t->mem, 0), 1);
		g_true(&g, t->mem.addr[0] == UINT64_C(139942626263040), "addr %" PRIu64, t->mem.addr[0]);
		g_i64(&g, "bytes", hm_mem_bytes(&t->mem, 0), 98566144);
		g_i64(&g, "total_alloc", hm_mem_total_alloc(&t->mem, 0), INT64_C(6629508096));
		g_i64(&g, "total_res", hm_mem_total_res(&t->mem, 0), INT64_C(12782141440));
		g_i64(&g, "ops.n", (int64_t)t->sl.n, 1);
		g_i64(&g, "rank from distributedInfo (over the file name)", t->rank, 1);
		g_i64(&g, "first_ts", t->first_ts, INT64_C(1669783687404090000));
	}
	g_done(&g, "trace: 2022 [memory] events (cpu_instant_event, int ts, Addr and totals; distributedInfo.rank)");
	hm_trace_free(t);

	/* 2025+: float ts with 3 decimals, other arg order, ROCm "finished", huge Total Reserved. */
	const char *t25 =
		"{\"traceEvents\": [\n"
		"{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1016005, "
		"\"tid\": 1016005, \"ts\": 1419116105360.746, \"args\": {\"Total Reserved\": 194000000000, \"Total Allocated\": 4096, "
		"\"Bytes\": 4096, \"Addr\": 140000000000000, \"Device Id\": 0, \"Device Type\": 6, \"Ev Idx\": 0, \"finished\": true}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1016005, \"tid\": 1016005, "
		"\"ts\": 1419116105360.700, \"dur\": 10.250, \"args\": {}},\n"
		"{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"torch/nn/modules/module.py(1736): _call_impl\", "
		"\"pid\": 1016005, \"tid\": 1016005, \"ts\": 1419116105360.001, \"dur\": 100.5}\n"
		"],\n\"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": 1741000000000000000}";
	t = parse_text("gaunernst_bert.json", t25, strlen(t25), err, sizeof err);
	g = (grp){0};
	if (g_true(&g, t != NULL, "parse failed: %s", err)) {
		g_i64(&g, "mem.n", (int64_t)t->mem.n, 1);
		g_i64(&g, "ts (exact ns)", hm_mem_ts(&t->mem, 0), 1419116105360746);
		g_i64(&g, "dev_type", t->mem.dev_type[0], 6);
		g_i64(&g, "total_res", hm_mem_total_res(&t->mem, 0), INT64_C(194000000000));
		g_i64(&g, "total_alloc", hm_mem_total_alloc(&t->mem, 0), 4096);
		g_i64(&g, "ev_idx", hm_mem_ev_idx(&t->mem, 0), 0);
		g_true(&g, t->mem.addr[0] == UINT64_C(140000000000000), "addr %" PRIu64, t->mem.addr[0]);
		g_i64(&g, "host slices (cpu_op and one other host slice)", (int64_t)t->sl.n, 2);
		g_i64(&g, "slice 0 is an op", t->sl.kind[0], HM_SL_OP);
		if (t->sl.n >= 1) {
			g_i64(&g, "op ts", t->sl.ts[0], 1419116105360700);
			g_i64(&g, "op dur", t->sl.dur[0], 10250);
		}
		g_i64(&g, "first_ts", t->first_ts, 1419116105360001);
	}
	g_done(&g, "trace: 2025 [memory] events (float ts with 3 decimals, reordered args, extra keys)");
	hm_trace_free(t);
}

/* Times in every form: the reader's fast paths give exactly what the general exact parser
 * (hm_num_i64, µs to ns) gives, and refuse what it refuses. */
static void test_trace_times(void)
{
	static const char *const forms[] = {
		"0.500", "1.000", "10.250", "7", "12", "1419116105360.746", "999999999999999.999",
		"100000000000000.001", "1234567890123456.125", "1623143089861005", "1.5", "1.25",
		"0.001", "1e3", "1.0000", "-1.000", "-0.500", "01.000", "00.000", "1.", ".500",
		"1419116105360.7461", "4611686018427387.903", "9999999999999999", NULL,
	};
	grp g = {0};
	for (int i = 0; forms[i]; i++) {
		char err[512];
		sb b = {0};
		tr_open(&b);
		mem_ev(&b, forms[i], 1, 0, 16, 8, NOTOT, NOTOT, "1", "1");
		tr_close(&b);
		hm_trace *t = parse_text("times.json", b.p, b.n, err, sizeof err);
		int64_t want;
		const char *bad = hm_num_i64(forms[i], strlen(forms[i]), 3, 1, &want);
		if (!bad && (want <= -(INT64_C(1) << 62) || want >= (INT64_C(1) << 62)))
			bad = "out of range";
		if (bad)
			g_true(&g, t == NULL, "ts %s: read as %" PRId64 ", the general parser says: %s", forms[i],
			       t ? hm_mem_ts(&t->mem, 0) : 0, bad);
		else if (g_true(&g, t != NULL, "ts %s: refused (%s), the general parser reads %" PRId64, forms[i], err, want))
			g_i64(&g, forms[i], hm_mem_ts(&t->mem, 0), want);
		hm_trace_free(t);
		sb_free(&b);
	}
	g_done(&g, "trace: ts in 24 forms reads exactly as the general decimal parser (fast paths included)");
}

static void test_trace_shapes(void)
{
	char err[512];
	hm_trace *t;
	grp g;

	/* pid/tid as strings or numbers name the same thread; non-numeric strings stay distinct. */
	{
		sb b = {0};
		tr_open(&b);
		mem_ev(&b, "10", 1, 0, 16, 8, NOTOT, NOTOT, "42", "7");
		mem_ev(&b, "11", 1, 0, 16, -8, NOTOT, NOTOT, "\"42\"", "\"7\"");
		mem_ev(&b, "12", 1, 0, 32, 8, NOTOT, NOTOT, "\"42\"", "7");
		mem_ev(&b, "13", 1, 0, 32, -8, NOTOT, NOTOT, "42", "\"07\"");
		mem_ev(&b, "14", 1, 0, 48, 8, NOTOT, NOTOT, "\"Traces\"", "\"PyTorch Profiler\"");
		mem_ev(&b, "15", 1, 0, 48, -8, NOTOT, NOTOT, "42", "-1");
		mem_ev(&b, "16", 1, 0, 48, 8, NOTOT, NOTOT, "\"42\"", "\"-1\"");
		tr_close(&b);
		t = parse_text("threads.json", b.p, b.n, err, sizeof err);
		g = (grp){0};
		if (g_true(&g, t && t->mem.n == 7, "parse failed: %s", err)) {
			uint32_t th[7];
			for (size_t i = 0; i < 7; i++)
				th[i] = hm_mem_thread(&t->mem, i);
			g_true(&g, th[0] == th[1], "42/7 and \"42\"/\"7\" differ");
			g_true(&g, th[0] == th[2], "42/7 and \"42\"/7 differ");
			g_true(&g, th[0] != th[3], "\"07\" (not a canonical integer) was taken as 7");
			g_true(&g, th[4] != th[0] && th[4] != th[3], "\"Traces\" collided with another thread");
			g_true(&g, th[5] == th[6], "42/-1 and \"42\"/\"-1\" differ");
			g_true(&g, th[5] != th[0], "tid -1 and 7 collide");
		}
		g_done(&g, "trace: pid/tid as numbers or numeric strings map to the same thread key");
		hm_trace_free(t);
		sb_free(&b);
	}

	/* Top-level array form. */
	{
		const char *s = "[{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 5, "
				"\"args\": {\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": 64}},\n"
				" {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 1, \"tid\": 1, \"ts\": 4, \"dur\": 2}]\n";
		t = parse_text("array.json", s, strlen(s), err, sizeof err);
		g = (grp){0};
		if (g_true(&g, t != NULL, "parse failed: %s", err)) {
			g_i64(&g, "events", (int64_t)t->events, 2);
			g_i64(&g, "mem.n", (int64_t)t->mem.n, 1);
			g_i64(&g, "ops.n", (int64_t)t->sl.n, 1);
			g_i64(&g, "has_trace_events", t->has_trace_events, 1);
			g_i64(&g, "first_ts", t->first_ts, 4000);
		}
		g_done(&g, "trace: a top-level array of events is read as traceEvents");
		hm_trace_free(t);
	}

	/* Missing traceEvents, null traceEvents, empty traceEvents. */
	{
		const char *s = "{\"schemaVersion\": 1, \"deviceProperties\": [], \"metadata\": {\"traceEvents\": [1, 2]}}";
		t = parse_text("none.json", s, strlen(s), err, sizeof err);
		g = (grp){0};
		if (g_true(&g, t != NULL, "parse failed: %s", err)) {
			g_i64(&g, "has_trace_events", t->has_trace_events, 0);
			g_i64(&g, "events", (int64_t)t->events, 0);
			g_i64(&g, "mem.n", (int64_t)t->mem.n, 0);
			g_i64(&g, "first_ts", t->first_ts, HM_NONE);
		}
		g_done(&g, "trace: a missing traceEvents is not an error (a nested traceEvents key is ignored)");
		hm_trace_free(t);

		s = "{\"traceEvents\": null}";
		t = parse_text("null.json", s, strlen(s), err, sizeof err);
		check(t && !t->has_trace_events && t->events == 0, "trace: \"traceEvents\": null reads as no traceEvents",
		      "t=%p err=%s", (void *)t, err);
		hm_trace_free(t);

		s = "{\"traceEvents\": [ ]}";
		t = parse_text("empty.json", s, strlen(s), err, sizeof err);
		check(t && t->has_trace_events && t->events == 0 && t->mem.n == 0 && t->sl.n == 0,
		      "trace: an empty traceEvents is present with 0 events", "t=%p err=%s", (void *)t, err);
		hm_trace_free(t);

		s = "{}";
		t = parse_text("obj.json", s, strlen(s), err, sizeof err);
		check(t && !t->has_trace_events, "trace: {} is an empty trace", "err=%s", err);
		hm_trace_free(t);

		s = "[]";
		t = parse_text("arr.json", s, strlen(s), err, sizeof err);
		check(t && t->has_trace_events && t->events == 0, "trace: [] is an empty trace with traceEvents", "err=%s", err);
		hm_trace_free(t);
	}

	/* UTF-8 byte order mark. */
	{
		const char *s = "\xef\xbb\xbf{\"traceEvents\": [{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, "
				"\"ts\": 1, \"args\": {\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": 8}}]}";
		t = parse_text("bom.json", s, strlen(s), err, sizeof err);
		check(t && t->mem.n == 1 && hm_mem_bytes(&t->mem, 0) == 8, "trace: a leading UTF-8 BOM is skipped", "err=%s", err);
		hm_trace_free(t);
	}

	/* distributedInfo.rank (after traceEvents, as a string) vs the file name. */
	{
		const char *s = "{\"traceEvents\": [], \"distributedInfo\": {\"backend\": \"nccl\", \"pg_config\": [{\"rank\": 9}], "
				"\"rank\": 3, \"world_size\": 8}}";
		t = parse_text("job_rank-7.json", s, strlen(s), err, sizeof err);
		check(t && t->rank == 3, "trace: distributedInfo.rank after traceEvents wins over rank-7 in the name",
		      "rank=%" PRId64 " err=%s", t ? t->rank : -99, err);
		hm_trace_free(t);
		s = "{\"traceEvents\": []}";
		t = parse_text("dir/job_rank-7.json", s, strlen(s), err, sizeof err);
		check(t && t->rank == 7, "trace: without distributedInfo the rank comes from the file name",
		      "rank=%" PRId64 " err=%s", t ? t->rank : -99, err);
		hm_trace_free(t);
		s = "{\"distributedInfo\": {\"backend\": \"gloo\", \"rank\": 0}, \"traceEvents\": []}";
		t = parse_text("other_rank_4.json", s, strlen(s), err, sizeof err);
		check(t && t->rank == 0, "trace: distributedInfo.rank 0 is a rank (not 'none')", "rank=%" PRId64 " err=%s",
		      t ? t->rank : -99, err);
		hm_trace_free(t);
	}

	/* Which events are ops; [OutOfMemory]; first_ts; escapes in names. */
	{
		sb b = {0};
		tr_open(&b);
		op_ev(&b, "cpu_op", "aten::add", "100", "10", "1", "1");
		op_ev(&b, "Operator", "aten::mul", "110", "10", "1", "1");
		op_ev(&b, "python_function", "py", "90", "50", "1", "1");
		op_ev(&b, "user_annotation", "ProfilerStep#2", "80", "90", "1", "1");
		op_ev(&b, "cuda_runtime", "cudaLaunchKernel", "101", "1", "1", "1");
		op_ev(&b, "kernel", "gemm", "102", "5", "0", "7");
		sb_item(&b);
		sb_printf(&b, "{\"ph\": \"B\", \"cat\": \"cpu_op\", \"name\": \"begin\", \"pid\": 1, \"tid\": 1, \"ts\": 70}");
		sb_item(&b);
		sb_printf(&b, "{\"ph\": \"i\", \"cat\": \"cpu_op\", \"name\": \"instant\", \"pid\": 1, \"tid\": 1, \"ts\": 71}");
		op_ev(&b, "cpu_op", "aten::copy_\\\"x\\\"\\u00e9\\n", "120.5", "1", "1", "1");
		sb_item(&b);
		sb_printf(&b, "{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[OutOfMemory]\", \"pid\": 1, \"tid\": 1, \"ts\": 60.25, "
			      "\"args\": {\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": 1073741824}}");
		sb_item(&b);
		sb_printf(&b, "{\"ph\": \"i\", \"name\": \"[OutOfMemory]\", \"ts\": 61}");
		sb_item(&b);
		sb_printf(&b, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"args\": {\"name\": \"python\"}}");
		tr_close(&b);
		t = parse_text("ops.json", b.p, b.n, err, sizeof err);
		g = (grp){0};
		if (g_true(&g, t != NULL, "parse failed: %s", err)) {
			g_i64(&g, "events", (int64_t)t->events, 12);
			/* host slices: add, mul, py, ProfilerStep#2, cudaLaunchKernel, copy_ (not the kernel,
			 * not B/i events) */
			g_i64(&g, "host slices", (int64_t)t->sl.n, 6);
			if (t->sl.n == 6) {
				g_str(&g, "op 0", t->names.str[t->sl.name[0]], "aten::add");
				g_str(&g, "op 1", t->names.str[t->sl.name[1]], "aten::mul");
				g_i64(&g, "kinds", t->sl.kind[0] * 100000 + t->sl.kind[1] * 10000 + t->sl.kind[2] * 1000 +
					  t->sl.kind[3] * 100 + t->sl.kind[4] * 10 + t->sl.kind[5],
				      HM_SL_OP * 100000 + HM_SL_OP * 10000 + HM_SL_PYTHON * 1000 + HM_SL_ANNOTATION * 100 +
					      HM_SL_OTHER * 10 + HM_SL_OP);
				g_str(&g, "op 2 (escapes decoded)", t->names.str[t->sl.name[5]], "aten::copy_\"x\"\xc3\xa9\n");
				g_i64(&g, "op 2 ts", t->sl.ts[5], 120500);
			}
			g_i64(&g, "mem.n", (int64_t)t->mem.n, 0);
		}
		g_done(&g, "trace: host slices are the ph X events that are not device-side, with their kind (names unescaped)");
		check(t && t->oom_events == 2 && t->mem.n == 0, "trace: [OutOfMemory] instants are counted, not kept as memory events",
		      "oom=%" PRIu64, t ? t->oom_events : 0);
		check(t && t->first_ts == 60250, "trace: first_ts is the smallest ts of any event (60.25 us)",
		      "first_ts=%" PRId64, t ? t->first_ts : 0);
		hm_trace_free(t);
		sb_free(&b);
	}

	/* Strings holding brackets, quotes and escaped backslashes do not confuse the reader. */
	{
		const char *s = "{\"traceName\": \"a]}\\\\\", \"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", "
				"\"name\": \"x}]\\\\\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1, \"args\": {\"s\": \"\\\"}]\"}},\n"
				"{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 2, "
				"\"args\": {\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": 3}}], \"x\": [\"]\", {\"}\": \"[\"}]}";
		t = parse_text("strings.json", s, strlen(s), err, sizeof err);
		check(t && t->events == 2 && t->mem.n == 1 && t->sl.n == 1 && strcmp(t->names.str[t->sl.name[0]], "x}]\\") == 0,
		      "trace: brackets, quotes and backslashes inside strings are skipped correctly", "t=%p err=%s",
		      (void *)t, err);
		hm_trace_free(t);
	}

	/* Addr 2^64-1; Bytes 0; Bytes with an exponent. A negative Addr is an error at its offset,
	 * not its 64-bit pattern (issue 11). */
	{
		sb b = {0};
		tr_open(&b);
		mem_ev(&b, "1", 1, 0, -16, 8, NOTOT, NOTOT, "1", "1");
		tr_close(&b);
		t = parse_text("neg.json", b.p, b.n, err, sizeof err);
		const char *at = strstr(b.p, "\"Addr\": -16");
		char want[128];
		snprintf(want, sizeof want, "neg.json:%td: [memory] event: \"Addr\": negative", at ? at - b.p + 8 : 0);
		check(!t && strncmp(err, want, strlen(want)) == 0, "trace: issue 11: Addr -16 is an error at its offset",
		      "err=%s want prefix %s", err, want);
		hm_trace_free(t);
		sb_free(&b);
		tr_open(&b);
		mem_ev(&b, "1", 1, 0, 16, 8, NOTOT, NOTOT, "1", "1");
		sb_item(&b);
		sb_printf(&b, "{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 2, \"args\": "
			      "{\"Device Type\": 1, \"Device Id\": 0, \"Addr\": 18446744073709551615, \"Bytes\": 0}}");
		sb_item(&b);
		sb_printf(&b, "{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 3, \"args\": "
			      "{\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": 1e3, \"Total Allocated\": -0}}");
		tr_close(&b);
		t = parse_text("addr.json", b.p, b.n, err, sizeof err);
		g = (grp){0};
		if (g_true(&g, t && t->mem.n == 3, "parse failed: %s", err)) {
			g_true(&g, t->mem.addr[0] == 16, "addr 16 -> %" PRIx64, t->mem.addr[0]);
			g_true(&g, t->mem.addr[1] == UINT64_MAX, "addr 2^64-1 -> %" PRIx64, t->mem.addr[1]);
			g_i64(&g, "bytes 0", hm_mem_bytes(&t->mem, 1), 0);
			g_i64(&g, "bytes 1e3", hm_mem_bytes(&t->mem, 2), 1000);
			g_i64(&g, "total -0", hm_mem_total_alloc(&t->mem, 2), 0);
		}
		g_done(&g, "trace: Addr 2^64-1 fits, Bytes 1e3 is 1000");
		hm_trace_free(t);
		sb_free(&b);
	}
}

/* Expect a parse error whose text starts with "NAME:OFF: " and contains what. */
static void expect_error(const char *name, const char *text, size_t len, long off, const char *what)
{
	char err[512] = "";
	hm_trace *t = hm_trace_parse("bad.json", text, len, err, sizeof err);
	char prefix[64];
	snprintf(prefix, sizeof prefix, "bad.json:%ld: ", off);
	if (t) {
		check(0, name, "parsed without an error (%" PRIu64 " events)", t->events);
		hm_trace_free(t);
		return;
	}
	check(strncmp(err, prefix, strlen(prefix)) == 0 && (!what || strstr(err, what)), name,
	      "got \"%s\", want prefix \"%s\" and \"%s\"", err, prefix, what ? what : "");
}

static long pos_of(const char *text, const char *needle)
{
	const char *p = strstr(text, needle);
	return p ? (long)(p - text) : -1000;
}

static void test_trace_errors(void)
{
	const char *ev = "{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"args\": "
			 "{\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": 64}}";
	char s[1024];

	snprintf(s, sizeof s, "{\"traceEvents\": [%s, %s", ev, ev);
	s[strlen(s) - 20] = 0; /* cut inside the second event */
	expect_error("trace error: cut-off JSON names the offset of the unterminated event", s, strlen(s),
		     pos_of(s, "}}, {") + 4, "cut-off");

	snprintf(s, sizeof s, "{\"traceEvents\": [%s, ", ev);
	expect_error("trace error: the file ending after a comma in traceEvents names the end offset", s, strlen(s),
		     (long)strlen(s), "cut-off");

	snprintf(s, sizeof s, "{\"traceEvents\": [%s]", ev);
	expect_error("trace error: a missing final } names the end offset", s, strlen(s), (long)strlen(s), "cut-off");

	snprintf(s, sizeof s, "{\"traceEvents\": [%s], \"traceName\": \"abc", ev);
	expect_error("trace error: a cut-off top-level string names the offset of its opening quote", s, strlen(s),
		     pos_of(s, "\"abc"), "cut-off");

	const char *bs = "{\"traceEvents\": [{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"args\": "
			 "{\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": \"64\"}}]}";
	expect_error("trace error: Bytes as a string names the offset of the string", bs, strlen(bs), pos_of(bs, "\"64\""),
		     "string");

	const char *mb = "{\"traceEvents\": [\n  {\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"args\": "
			 "{\"Device Type\": 1, \"Device Id\": 0, \"Addr\": 5}}]}";
	expect_error("trace error: a [memory] event without Bytes names the offset of the event", mb, strlen(mb),
		     pos_of(mb, "{\"ph\""), "Bytes");

	const char *hi = "{\"traceEvents\": [{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"args\": "
			 "{\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": 99999999999999999999}}]}";
	expect_error("trace error: a Bytes beyond 64 bits names the offset of the number", hi, strlen(hi),
		     pos_of(hi, "999"), "64-bit");

	const char *hi2 = "{\"traceEvents\": [{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"args\": "
			  "{\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": 9223372036854775808}}]}";
	expect_error("trace error: Bytes 2^63 (fits no int64) is an error", hi2, strlen(hi2), pos_of(hi2, "9223"), NULL);

	const char *ha = "{\"traceEvents\": [{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"args\": "
			 "{\"Device Type\": 1, \"Device Id\": 0, \"Addr\": 18446744073709551616, \"Bytes\": 8}}]}";
	expect_error("trace error: an Addr of 2^64 names the offset of the number", ha, strlen(ha), pos_of(ha, "1844"),
		     "Addr");

	const char *nan = "{\"traceEvents\": [{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"args\": "
			  "{\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": NaN}}]}";
	expect_error("trace error: a NaN token in Bytes names its offset", nan, strlen(nan), pos_of(nan, "NaN"), "Bytes");

	const char *inf = "{\"traceEvents\": [{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": Infinity, "
			  "\"args\": {\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": 8}}]}";
	expect_error("trace error: an Infinity ts on a [memory] event names its offset", inf, strlen(inf),
		     pos_of(inf, "Infinity"), "ts");

	const char *fl = "{\"traceEvents\": [{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 5, \"args\": "
			 "{\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": 8.5}}]}";
	expect_error("trace error: a fractional Bytes names its offset", fl, strlen(fl), pos_of(fl, "8.5"), "Bytes");

	snprintf(s, sizeof s, "{\"traceEvents\": [%s]} x", ev);
	expect_error("trace error: trailing garbage after the JSON value names its offset", s, strlen(s), pos_of(s, "x"),
		     "after the end");

	snprintf(s, sizeof s, "{\"traceEvents\": [%s]}{}", ev);
	expect_error("trace error: a second top-level value is trailing garbage", s, strlen(s), (long)strlen(s) - 2, NULL);

	expect_error("trace error: empty text is an error at offset 0", "", 0, 0, "empty");
	expect_error("trace error: white space only is an error at offset 0", " \n\t", 3, 0, "empty");

	const char *te = "{\"traceEvents\": {\"a\": 1}}";
	expect_error("trace error: a traceEvents that is an object names its offset", te, strlen(te), pos_of(te, "{\"a\""),
		     "not an array");

	const char *num = "[1, 2]";
	expect_error("trace error: a top-level array of numbers is not a trace", num, strlen(num), 1, "not a Chrome trace");

	const char *nc = "{\"traceEvents\": [{\"ph\": \"i\" \"name\": \"x\"}]}";
	expect_error("trace error: a missing comma inside an event names the offset", nc, strlen(nc), pos_of(nc, "\"name"),
		     "invalid JSON");

	const char *nbc = "{\"traceEvents\": [{\"ph\": \"f\"} {\"ph\": \"f\"}]}";
	expect_error("trace error: a missing comma between events names the offset", nbc, strlen(nbc),
		     pos_of(nbc, "} {") + 2, "between events");

	const char *noargs = "{\"traceEvents\": [{\"ph\": \"i\", \"name\": \"[memory]\", \"ts\": 5}]}";
	expect_error("trace error: a [memory] event without args names the event", noargs, strlen(noargs),
		     pos_of(noargs, "{\"ph\""), "args");

	const char *strts = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"ts\": \"5\", \"dur\": 1}]}";
	expect_error("trace error: an op ts that is a string names its offset", strts, strlen(strts), pos_of(strts, "\"5\""),
		     "ts");

	const char *xx = "hello";
	expect_error("trace error: text that is not JSON is an error at offset 0", xx, strlen(xx), 0, "expected '{' or '['");

	/* Only len bytes are parsed: a valid prefix of a longer buffer. */
	{
		char err[256];
		const char *full = "{\"traceEvents\": []}GARBAGE";
		hm_trace *t = parse_text("prefix.json", full, 19, err, sizeof err);
		check(t != NULL, "trace: hm_trace_parse reads exactly len bytes of the text", "err=%s", err);
		hm_trace_free(t);
	}
}

static void test_rank_from_name(void)
{
	check_i64("rank: \"rank-3\" is 3", hm_trace_rank_from_name("rank-3"), 3);
	check_i64("rank: \"x_rank_12.json\" is 12", hm_trace_rank_from_name("x_rank_12.json"), 12);
	check_i64("rank: \"rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz\" is 34",
		  hm_trace_rank_from_name("rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"), 34);
	check_i64("rank: \"trace.json\" has none", hm_trace_rank_from_name("trace.json"), HM_NONE);
	check_i64("rank: \"rank.json\" and \"rank-x\" have none", hm_trace_rank_from_name("rank.json-rank-x"), HM_NONE);
	check_i64("rank: the last occurrence wins (\"rank-1_of_rank_2.json\" is 2)",
		  hm_trace_rank_from_name("rank-1_of_rank_2.json"), 2);
	check_i64("rank: only the base name counts (\"run/rank_7/trace.json\" has none)",
		  hm_trace_rank_from_name("run/rank_7/trace.json"), HM_NONE);
	check_i64("rank: \"run/rank_7/w_rank-0.json\" is 0", hm_trace_rank_from_name("run/rank_7/w_rank-0.json"), 0);
	check_i64("rank: \"vllm_decode_full_graph_capture_rank_0.1773709742341309550.pt.trace.json.gz\" is 0",
		  hm_trace_rank_from_name("vllm_decode_full_graph_capture_rank_0.1773709742341309550.pt.trace.json.gz"), 0);
}

/* ---------------------------------------------------------------- analyze */

static hm_file *analyze_sb(const char *name, sb *b, char *err, size_t errsz)
{
	hm_trace *t = parse_text(name, b->p, b->n, err, errsz);
	return t ? hm_analyze(t) : NULL;
}

static void test_analyze_sort_series(void)
{
	char err[512];
	sb b = {0};
	tr_open(&b);
	/* file order: ts 30, 10, 20, 10, 10 on cuda:0 (bytes identify them) */
	mem_simple(&b, 30, NOADDR, 1, NOTOT);
	mem_simple(&b, 10, NOADDR, 2, NOTOT);
	mem_simple(&b, 20, NOADDR, 3, NOTOT);
	mem_simple(&b, 10, NOADDR, 4, NOTOT);
	mem_simple(&b, 10, NOADDR, 5, NOTOT);
	tr_close(&b);
	hm_file *f = analyze_sb("sort.json", &b, err, sizeof err);
	grp g = {0};
	if (g_true(&g, f && f->nseries == 1 && f->series[0].n == 5, "analyze failed: %s", err)) {
		static const uint32_t want[] = {1, 3, 4, 2, 0};
		for (int k = 0; k < 5; k++)
			g_i64(&g, "ev at position", f->series[0].ev[k], want[k]);
	}
	g_done(&g, "analyze: events are stably sorted by ts (ties keep file order)");
	hm_file_free(f);
	sb_free(&b);

	/* Many equal timestamps: stability must hold beyond small-array cases. */
	b = (sb){0};
	tr_open(&b);
	for (int i = 0; i < 300; i++)
		mem_simple(&b, (i % 3) * 10, NOADDR, i + 1, NOTOT);
	tr_close(&b);
	f = analyze_sb("sort300.json", &b, err, sizeof err);
	g = (grp){0};
	if (g_true(&g, f && f->nseries == 1 && f->series[0].n == 300, "analyze failed: %s", err)) {
		const hm_mem *m = &f->t->mem;
		for (size_t k = 1; k < 300; k++) {
			uint32_t p = f->series[0].ev[k - 1], q = f->series[0].ev[k];
			if (!g_true(&g, hm_mem_ts(m, p) < hm_mem_ts(m, q) || (hm_mem_ts(m, p) == hm_mem_ts(m, q) && p < q),
				    "positions %zu,%zu: events %u (ts %" PRId64 ") then %u (ts %" PRId64 ")", k - 1, k, p,
				    hm_mem_ts(m, p), q, hm_mem_ts(m, q)))
				break;
		}
	}
	g_done(&g, "analyze: 300 events with 3 distinct ts keep file order within each ts");
	hm_file_free(f);
	sb_free(&b);

	/* Series split and order by (device type, id). */
	b = (sb){0};
	tr_open(&b);
	mem_ev(&b, "5", 1, 1, NOADDR, 11, NOTOT, NOTOT, "1", "1");
	mem_ev(&b, "4", 0, -1, NOADDR, 12, NOTOT, NOTOT, "1", "1");
	mem_ev(&b, "3", 6, 0, NOADDR, 13, NOTOT, NOTOT, "1", "1");
	mem_ev(&b, "2", 1, 0, NOADDR, 14, NOTOT, NOTOT, "1", "1");
	mem_ev(&b, "1", 1, 0, NOADDR, 15, NOTOT, NOTOT, "1", "1");
	mem_ev(&b, "6", 9, 0, NOADDR, 16, NOTOT, NOTOT, "1", "1");
	mem_ev(&b, "7", 1, 10, NOADDR, 17, NOTOT, NOTOT, "1", "1");
	mem_ev(&b, "8", 1, 2, NOADDR, 18, NOTOT, NOTOT, "1", "1");
	tr_close(&b);
	f = analyze_sb("series.json", &b, err, sizeof err);
	g = (grp){0};
	if (g_true(&g, f != NULL, "analyze failed: %s", err) && g_i64(&g, "nseries", (int64_t)f->nseries, 7)) {
		static const char *names[] = {"cpu", "cuda:0", "cuda:1", "cuda:2", "cuda:10", "hip:0", "type9:0"};
		static const size_t ns[] = {1, 2, 1, 1, 1, 1, 1};
		for (size_t s = 0; s < 7; s++) {
			g_str(&g, "device", f->series[s].device, names[s]);
			g_i64(&g, "series n", (int64_t)f->series[s].n, (int64_t)ns[s]);
		}
		g_i64(&g, "cuda:0 first event (ts 1)", f->series[1].ev[0], 4);
		g_i64(&g, "cuda:0 second event (ts 2)", f->series[1].ev[1], 3);
		g_i64(&g, "cpu dev_id", f->series[0].dev_id, -1);
	}
	g_done(&g, "analyze: one series per device, ordered by device type then numeric id");
	hm_file_free(f);
	sb_free(&b);

	/* A trace without memory events has no series. */
	b = (sb){0};
	tr_open(&b);
	op_simple(&b, "aten::add", 1, 2, "1");
	tr_close(&b);
	f = analyze_sb("nomem.json", &b, err, sizeof err);
	check(f && f->nseries == 0, "analyze: a trace without memory events has no series", "err=%s", err);
	hm_file_free(f);
	sb_free(&b);

	static const struct {
		int32_t type, id;
		const char *want;
	} dn[] = {
		{0, -1, "cpu"}, {1, 0, "cuda:0"}, {6, 0, "hip:0"}, {12, 1, "xpu:1"},
		{13, 0, "mps:0"}, {20, 0, "privateuseone:0"}, {9, 0, "type9:0"}, {1, 7, "cuda:7"},
	};
	for (size_t i = 0; i < sizeof dn / sizeof *dn; i++) {
		char name[96], buf[40];
		snprintf(name, sizeof name, "device name: type %d id %d is %s", (int)dn[i].type, (int)dn[i].id, dn[i].want);
		hm_device_name(buf, sizeof buf, dn[i].type, dn[i].id);
		check_str(name, buf, dn[i].want);
	}
}

static void test_analyze_pairing(void)
{
	char err[512];
	sb b = {0};
	tr_open(&b);
	mem_simple(&b, 10, 0x100, 100, NOTOT);  /* e0 k0 */
	mem_simple(&b, 20, 0x100, 100, NOTOT);  /* e1 k1: second live alloc at one Addr */
	mem_simple(&b, 30, 0x100, -100, NOTOT); /* e2 k2 -> k1 (LIFO) */
	mem_simple(&b, 40, 0x100, -100, NOTOT); /* e3 k3 -> k0 */
	mem_simple(&b, 50, 0x200, -64, NOTOT);  /* e4 k4: no live alloc -> before */
	mem_simple(&b, 60, 0x300, 50, NOTOT);   /* e5 k5 */
	mem_simple(&b, 70, 0x300, -60, NOTOT);  /* e6 k6: size mismatch */
	mem_simple(&b, 80, 0x300, -50, NOTOT);  /* e7 k7 -> k5 */
	mem_simple(&b, 90, 0x400, 100, NOTOT);  /* e8 k8 */
	mem_simple(&b, 100, 0x400, 200, NOTOT); /* e9 k9 */
	mem_simple(&b, 110, 0x400, -100, NOTOT); /* e10 k10 -> k8 (same size, skipping k9) */
	mem_simple(&b, 120, 0x400, -200, NOTOT); /* e11 k11 -> k9 */
	mem_simple(&b, 130, 0x100, 0, NOTOT);   /* e12 k12: zero bytes */
	mem_simple(&b, 150, 0x500, -32, NOTOT); /* e13 k14: free written before its alloc, later ts */
	mem_simple(&b, 140, 0x500, 32, NOTOT);  /* e14 k13 */
	mem_simple(&b, 160, 0x100, -100, NOTOT); /* e15 k15: the Addr's allocs are all freed -> before */
	mem_ev(&b, "170", 1, 1, 0x600, -16, NOTOT, NOTOT, "1", "1"); /* cuda:1 */
	mem_simple(&b, 165, 0x600, 16, NOTOT);  /* e17 k16 (cuda:0): never freed on this device */
	tr_close(&b);
	hm_file *f = analyze_sb("pair.json", &b, err, sizeof err);
	if (!f || f->nseries != 2) {
		check(0, "analyze: pairing fixture parses", "err=%s nseries=%zu", err, f ? f->nseries : 0);
		hm_file_free(f);
		sb_free(&b);
		return;
	}
	hm_series *s = &f->series[0];
	grp g = {0};
	g_i64(&g, "n", (int64_t)s->n, 17);
	if (!g.bad) {
		static const int32_t partner[] = {3, 2, 1, 0, -1, 7, -1, 5, 10, 11, 8, 9, -1, 14, 13, -1, -1};
		for (int k = 0; k < 17; k++) {
			char w[48];
			snprintf(w, sizeof w, "partner[%d]", k);
			g_i64(&g, w, s->partner[k], partner[k]);
		}
	}
	g_done(&g, "pair: frees pair LIFO with the latest live allocation of the same Addr and size");
	check(s->n == 17 && s->partner[1] == 2 && s->partner[0] == 3,
	      "pair: two live allocations at one Addr: the first free takes the later one", "partner[1]=%d",
	      s->n == 17 ? s->partner[1] : -9);
	check(s->n == 17 && s->before[4] == 1 && s->partner[4] == -1,
	      "pair: a free with Addr and no live allocation is flagged before-trace", "before=%d", s->n == 17 ? s->before[4] : -9);
	check(s->n == 17 && s->before[15] == 1, "pair: a free after its Addr's allocations are all freed is before-trace",
	      "before=%d", s->n == 17 ? s->before[15] : -9);
	check(s->n == 17 && s->partner[6] == -1 && s->partner[5] == 7,
	      "pair: a free with a different size is not paired; the allocation stays live for the right free",
	      "partner[6]=%d partner[5]=%d", s->n == 17 ? s->partner[6] : -9, s->n == 17 ? s->partner[5] : -9);
	check(s->n == 17 && s->partner[12] == -1 && s->before[12] == 0, "pair: a zero-byte event is neither paired nor before",
	      "partner=%d before=%d", s->n == 17 ? s->partner[12] : -9, s->n == 17 ? s->before[12] : -9);
	check(s->n == 17 && s->partner[13] == 14 && s->before[14] == 0,
	      "pair: pairing uses time order (a free written before its allocation, with a later ts, pairs)",
	      "partner[13]=%d", s->n == 17 ? s->partner[13] : -9);
	{
		int nbad = 0;
		const hm_mem *m = &f->t->mem;
		for (size_t k = 0; k < s->n; k++)
			nbad += s->before[k] && (hm_mem_bytes(m, s->ev[k]) >= 0 || s->partner[k] >= 0);
		check(nbad == 0, "pair: allocations, zero-byte events and matched frees are never flagged before-trace",
		      "%d flagged", nbad);
	}
	check(s->has_addr == 1, "pair: a series with Addr has has_addr set", "has_addr=%d", s->has_addr);
	hm_series *s1 = &f->series[1];
	check(strcmp(s1->device, "cuda:1") == 0 && s1->n == 1 && s1->partner[0] == -1 && s1->before[0] == 1 &&
		      s->partner[16] == -1,
	      "pair: pairing is per device (an alloc on cuda:0 does not pair a free at the same Addr on cuda:1)",
	      "device=%s before=%d", s1->device, s1->before[0]);
	hm_file_free(f);
	sb_free(&b);

	/* No Addr (2021): nothing pairs, nothing is before-trace. */
	b = (sb){0};
	tr_open(&b);
	mem_simple(&b, 1, NOADDR, 8, NOTOT);
	mem_simple(&b, 2, NOADDR, -8, NOTOT);
	mem_simple(&b, 3, NOADDR, -8, NOTOT);
	tr_close(&b);
	f = analyze_sb("noaddr.json", &b, err, sizeof err);
	g = (grp){0};
	if (g_true(&g, f && f->nseries == 1, "analyze failed: %s", err)) {
		s = &f->series[0];
		for (size_t k = 0; k < s->n; k++) {
			g_i64(&g, "partner", s->partner[k], -1);
			g_i64(&g, "before", s->before[k], 0);
		}
		g_i64(&g, "has_addr", s->has_addr, 0);
	}
	g_done(&g, "pair: without Addr nothing is paired and no free is before-trace");
	hm_file_free(f);
	sb_free(&b);
}

static const char *opname(const hm_file *f, int32_t op)
{
	return op < 0 ? "(none)" : f->t->names.str[f->t->sl.name[op]];
}

/* "a>b>c" from hm_context (ops only). */
static void ops_text(const hm_file *f, uint32_t e, char *out, size_t cap)
{
	int32_t ops[16];
	size_t n = hm_context(f, e, HM_KIND(HM_SL_OP), ops, 16);
	out[0] = 0;
	for (size_t i = 0; i < n && i < 16; i++) {
		size_t l = strlen(out);
		snprintf(out + l, cap - l, "%s%s", i ? ">" : "", opname(f, ops[i]));
	}
}

/* op_of and hm_context of 600 memory events against a brute-force scan of 400 ops on two
 * threads. runs 0: ops at random times, in random order. runs k: each thread's ops in k
 * runs, each in time order (as real traces write a thread's python_function slices apart
 * from its cpu_ops), at the same times in each run and of three lengths, every fifth op
 * written twice: ties of start and length within a run and between runs, which the file
 * order decides; the analysis' sort merges the runs (analyze.c sort_slices). */
static void check_ops_brute(int runs)
{
	char err[512];
	sb b = {0};
	tr_open(&b);
	uint64_t rng = 88172645463325252ull + (uint64_t)runs;
#define RND() (rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17, rng)
	int nops = 400, nmem = 600;
	for (int i = 0; i < nops; i++) {
		long ts = (long)(RND() % 2000), dur = (long)(RND() % 200);
		if (runs) /* run i / (nops / runs), written whole, in time order within it; the runs
			   * share their times and lengths (ties between runs: the file order decides) */
			ts = (long)(i % (nops / runs)) * 2000 / (nops / runs), dur = (long)(RND() % 3) * 50;
		char nm[16];
		snprintf(nm, sizeof nm, "op%d", i);
		const char *tid = (RND() & 1) ? "1" : "2";
		op_simple(&b, nm, ts, dur, tid);
		if (runs && i % 5 == 0)
			snprintf(nm, sizeof nm, "op%dbis", i), op_simple(&b, nm, ts, dur, tid);
	}
	for (int i = 0; i < nmem; i++) {
		char ts[32];
		snprintf(ts, sizeof ts, "%ld", (long)(RND() % 2100));
		mem_ev(&b, ts, 1, 0, NOADDR, 8, NOTOT, NOTOT, "1", (RND() & 1) ? "1" : "\"2\"");
	}
	tr_close(&b);
	hm_file *f = analyze_sb(runs ? "run_ops.json" : "random_ops.json", &b, err, sizeof err);
	grp g = {0};
	if (g_true(&g, f != NULL, "analyze failed: %s", err)) {
		const hm_slices *o = &f->t->sl;
		const hm_mem *m = &f->t->mem;
		for (size_t e = 0; e < m->n && !g.bad; e++) {
			int32_t best = -1;
			int32_t want[512];
			size_t nwant = 0;
			for (size_t i = 0; i < o->n; i++) {
				if (o->thread[i] != hm_mem_thread(m, e) || o->ts[i] > hm_mem_ts(m, e) || o->ts[i] + o->dur[i] < hm_mem_ts(m, e))
					continue;
				want[nwant++] = (int32_t)i;
				if (best < 0 || o->ts[i] > o->ts[best] || (o->ts[i] == o->ts[best] && o->dur[i] <= o->dur[best]))
					best = (int32_t)i;
			}
			/* the tie rule (issue 15): at the start of the innermost op, the innermost op
			 * that started before the event wins if it ends at that very time */
			int32_t alt = -1;
			for (size_t j = 0; best >= 0 && o->ts[best] == hm_mem_ts(m, e) && j < nwant; j++) {
				int32_t i = want[j];
				if (o->ts[i] < hm_mem_ts(m, e) &&
				    (alt < 0 || o->ts[i] > o->ts[alt] || (o->ts[i] == o->ts[alt] && o->dur[i] <= o->dur[alt])))
					alt = i;
			}
			if (alt >= 0 && o->ts[alt] + o->dur[alt] == hm_mem_ts(m, e))
				best = alt;
			g_true(&g, f->op_of[e] == best, "event %zu (ts %" PRId64 "): op_of %d (%s), brute force %d (%s)", e,
			       hm_mem_ts(m, e), f->op_of[e], opname(f, f->op_of[e]), best, opname(f, best));
			/* outermost first = reverse innermost order: sort want by (ts asc, dur desc, index asc) */
			for (size_t i = 1; i < nwant; i++)
				for (size_t j = i; j > 0; j--) {
					int32_t x = want[j - 1], y = want[j];
					int later = o->ts[x] > o->ts[y] || (o->ts[x] == o->ts[y] && o->dur[x] < o->dur[y]) ||
						    (o->ts[x] == o->ts[y] && o->dur[x] == o->dur[y] && x > y);
					if (!later)
						break;
					want[j - 1] = y, want[j] = x;
				}
			int32_t got[512];
			size_t ngot = hm_context(f, (uint32_t)e, HM_KIND(HM_SL_OP), got, 512);
			g_true(&g, ngot == nwant, "event %zu (ts %" PRId64 "): hm_ops_of gives %zu ops, %zu contain it", e,
			       hm_mem_ts(m, e), ngot, nwant);
			for (size_t i = 0; i < nwant && i < ngot && !g.bad; i++)
				g_true(&g, got[i] == want[i], "event %zu: ops[%zu] is %s, want %s", e, i, opname(f, got[i]),
				       opname(f, want[i]));
		}
	}
	g_done(&g, runs ? "op context: 600 events x 400 ops written in 3 runs on 2 threads agree with a brute-force scan"
			: "op context: 600 events x 400 random ops on 2 threads agree with a brute-force scan");
	hm_file_free(f);
	sb_free(&b);
}

static void test_analyze_ops(void)
{
	char err[512];
	sb b = {0};
	tr_open(&b);
	op_simple(&b, "outer", 100, 100, "1");
	op_simple(&b, "mid", 110, 40, "1");
	op_simple(&b, "inner", 120, 10, "1");
	op_ev(&b, "python_function", "py_inner", "121", "2", "1", "1");
	op_simple(&b, "long", 300, 100, "1");
	op_simple(&b, "short", 300, 50, "1");
	op_simple(&b, "twin_a", 500, 10, "1");
	op_simple(&b, "twin_b", 500, 10, "1");
	op_simple(&b, "ov_a", 600, 100, "1");
	op_simple(&b, "ov_b", 650, 150, "1");
	op_simple(&b, "point", 900, 0, "1");
	op_simple(&b, "other_thread", 124, 2, "2");
	op_ev(&b, "cpu_op", "other_pid", "124", "2", "2", "1");
	op_simple(&b, "after", 1000, 10, "1");
	/* memory events, thread 1/1 unless said */
	static const struct {
		long ts;
		const char *tid, *pid, *op, *ops;
	} mv[] = {
		{125, "1", "1", "inner", "outer>mid>inner"},
		{140, "1", "1", "mid", "outer>mid"},
		{130, "1", "1", "inner", "outer>mid>inner"},
		{100, "1", "1", "outer", "outer"},
		{200, "1", "1", "outer", "outer"},
		{201, "1", "1", "(none)", ""},
		{320, "1", "1", "short", "long>short"},
		{370, "1", "1", "long", "long"},
		{505, "1", "1", "twin_b", "twin_a>twin_b"},
		{660, "1", "1", "ov_b", "ov_a>ov_b"},
		{750, "1", "1", "ov_b", "ov_b"},
		{900, "1", "1", "point", "point"},
		{125, "2", "1", "other_thread", "other_thread"},
		{125, "3", "1", "(none)", ""},
		{125, "\"1\"", "\"1\"", "inner", "outer>mid>inner"},
		{50, "1", "1", "(none)", ""},
		{125, "1", "2", "other_pid", "other_pid"},
	};
	size_t nmv = sizeof mv / sizeof *mv;
	for (size_t i = 0; i < nmv; i++) {
		char ts[32];
		snprintf(ts, sizeof ts, "%ld", mv[i].ts);
		mem_ev(&b, ts, 1, 0, NOADDR, 8, NOTOT, NOTOT, mv[i].pid, mv[i].tid);
	}
	tr_close(&b);
	hm_file *f = analyze_sb("ops.json", &b, err, sizeof err);
	if (!f || f->t->mem.n != nmv) {
		check(0, "op context: fixture parses", "err=%s", err);
		hm_file_free(f);
		sb_free(&b);
		return;
	}
	static const char *spec[] = {
		"op: the innermost of three nested ops",
		"op: after the inner op ended, its parent",
		"op: the end of an op is inside it (closed interval)",
		"op: the start of an op is inside it (closed interval)",
		"op: the end of the outermost op is inside it",
		"op: just after every op: none",
		"op: same start: the shorter duration is innermost",
		"op: same start: after the shorter ended, the longer",
		"op: same start and duration: the later in the file",
		"op: overlapping, not nested: the later start wins",
		"op: overlapping, not nested: after the first ended, the second",
		"op: a zero-duration op contains its own ts",
		"op: ops of another tid are used only for that tid",
		"op: a thread without ops has none (others' ops ignored)",
		"op: string pid/tid find the ops of the numeric thread",
		"op: before every op: none",
		"op: ops of another pid with the same tid are not used",
	};
	for (size_t i = 0; i < nmv; i++) {
		char name[160];
		snprintf(name, sizeof name, "%s (ts %ld -> %s)", spec[i], mv[i].ts, mv[i].op);
		check_str(name, opname(f, f->op_of[i]), mv[i].op);
	}
	for (size_t i = 0; i < nmv; i++) {
		char name[160], got[256];
		snprintf(name, sizeof name, "ops: event at ts %ld (tid %s) is enclosed by [%s], outermost first", mv[i].ts,
			 mv[i].tid, mv[i].ops);
		ops_text(f, (uint32_t)i, got, sizeof got);
		check_str(name, got, mv[i].ops);
	}
	{
		int32_t out[3] = {-7, -7, -7};
		size_t n = hm_context(f, 0, HM_KIND(HM_SL_OP), out, 2);
		check(n == 3 && out[2] == -7, "ops: hm_ops_of returns the full count and writes at most cap entries",
		      "n=%zu out[2]=%d", n, out[2]);
		n = hm_context(f, 5, HM_KIND(HM_SL_OP), out, 0);
		check(n == 0, "ops: an event outside every op has 0 enclosing ops", "n=%zu", n);
	}
	/* Header: parent[i] is the innermost slice containing slice i's start, or -1. */
	{
		const hm_slices *o = &f->t->sl;
		grp g = {0};
		for (size_t i = 0; i < o->n; i++) {
			const char *nm = f->t->names.str[o->name[i]];
			int32_t want = -1;
			if (!strcmp(nm, "mid"))
				want = 0;
			else if (!strcmp(nm, "inner"))
				want = 1;
			else if (!strcmp(nm, "short"))
				want = 4; /* same start, longer: contains it and comes first */
			else if (!strcmp(nm, "twin_b"))
				want = 6;
			else if (!strcmp(nm, "ov_b"))
				want = 8;
			else if (!strcmp(nm, "py_inner"))
				want = 2; /* slices of every kind nest: a python frame inside an op */
			char w[64];
			snprintf(w, sizeof w, "parent of %s", nm);
			g_i64(&g, w, f->parent[i], want);
		}
		g_done(&g, "parent: innermost slice containing each slice's start, -1 for top-level ones (also after the last memory event)");
	}
	hm_file_free(f);
	sb_free(&b);

	check_ops_brute(0);
	check_ops_brute(3);
}

/* Issue 29: hm_analyze runs its steps on two threads (helper.h). HMEM_TEST_SCHEDULE=
 * helper-first and =helper-last run the helper's part whole before or after the calling
 * thread's: the analysis of a trace with several threads, processes and devices, slices out
 * of place and memory events out of time order must be the same under each; with fewer
 * memory events than slices and more (the larger sort stays on the calling thread). */
static void test_analyze_schedules(int nmem)
{
	sb b = {0};
	tr_open(&b);
	static const char *const thr[][2] = {{"1", "2"}, {"1", "3"}, {"2", "4"}, {"1", "9"}};
	uint64_t r = 29;
	for (int i = 0; i < 3000; i++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		int th = (int)(r >> 60) % 4, us = 10 * i;
		char ts[32], dur[32], name[32];
		if (i % 100 == 0) {
			snprintf(ts, sizeof ts, "%d", us), snprintf(dur, sizeof dur, "%d", 990);
			snprintf(name, sizeof name, "ProfilerStep#%d", i / 100);
			op_ev(&b, "user_annotation", name, ts, dur, "1", "2");
		}
		/* a parent written after its two children, another before its child */
		snprintf(ts, sizeof ts, "%d", us + 2), snprintf(dur, sizeof dur, "%d", (int)(r >> 40) % 3);
		op_ev(&b, "cpu_op", "aten::child", ts, dur, thr[th][0], thr[th][1]);
		snprintf(ts, sizeof ts, "%d", us + 4);
		op_ev(&b, "cpu_op", "aten::child2", ts, "1", thr[th][0], thr[th][1]);
		snprintf(ts, sizeof ts, "%d", us + 1), snprintf(dur, sizeof dur, "%d", 5 + (int)(r >> 50) % 6);
		op_ev(&b, "cpu_op", "aten::parent", ts, dur, thr[th][0], thr[th][1]);
		op_ev(&b, i % 7 ? "python_function" : "cpu_op", "frame", ts, "3", thr[th][0], thr[th][1]);
	}
	for (int i = 0; i < nmem; i++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		int th = (int)(r >> 61) % 3, dev = (int)(r >> 58) % 3, us = 7 * i + ((r >> 30) % 5 == 0 ? -30 : 0);
		char ts[32];
		snprintf(ts, sizeof ts, "%d", us > 0 ? us : 0);
		int64_t addr = 0x1000 + 512 * ((i / 2) % 300), bytes = (i % 2 ? -1 : 1) * 512 * (1 + (i / 2) % 4);
		mem_ev(&b, ts, dev ? 1 : 0, dev ? dev - 1 : -1, addr, bytes, NOTOT, NOTOT, thr[th][0], thr[th][1]);
	}
	tr_close(&b);
	/* the last: no helper thread allowed (-j 1), its part run at the join */
	static const char *const sched[] = {NULL, "helper-first", "helper-last", "(no thread)"};
	hm_file *ref = NULL;
	for (int k = 0; k < 4; k++) {
		if (k == 1 || k == 2)
			setenv("HMEM_TEST_SCHEDULE", sched[k], 1);
		hm_helper_allow(k != 3);
		char err[512];
		hm_file *f = analyze_sb("schedules", &b, err, sizeof err);
		unsetenv("HMEM_TEST_SCHEDULE");
		hm_helper_allow(1);
		grp g = {0};
		if (!g_true(&g, f != NULL, "analysis failed: %s", err)) {
			g_done(&g, "analyze: issue 29: the analysis parses");
			continue;
		}
		if (!ref) {
			ref = f;
			size_t inner = 0, step = 0, paired = 0;
			for (uint32_t i = 0; i < f->t->mem.n; i++)
				inner += f->inner_of[i] >= 0, step += hm_step_of(f, i) >= 0;
			for (size_t s = 0; s < f->nseries; s++)
				for (size_t i = 0; i < f->series[s].n; i++)
					paired += f->series[s].partner[i] >= 0;
			size_t lo = (size_t)nmem / 8, hi = (size_t)nmem * 7 / 8;
			char name[160];
			snprintf(name, sizeof name,
				 "analyze: issue 29: the schedules' trace (%d memory events) has 3 devices, events in and out of "
				 "slices, steps, pairs",
				 nmem);
			check(f->nseries == 3 && f->t->sl.n == 3000 * 4 + 30 && f->t->mem.n == (size_t)nmem && inner > lo &&
				      inner < hi && step > lo && step < hi && paired > lo && paired < hi,
			      name, "series %zu, inner %zu, step %zu, paired %zu", f->nseries, inner, step, paired);
			continue;
		}
		if (g_i64(&g, "series", (int64_t)f->nseries, (int64_t)ref->nseries))
			for (size_t s = 0; s < f->nseries; s++) {
				const hm_series *x = &f->series[s], *y = &ref->series[s];
				if (!g_i64(&g, "series events", (int64_t)x->n, (int64_t)y->n))
					continue;
				for (size_t i = 0; i < x->n; i++)
					if (!g_i64(&g, "ev", x->ev[i], y->ev[i]) || !g_i64(&g, "partner", x->partner[i], y->partner[i]) ||
					    !g_i64(&g, "before", x->before[i], y->before[i]))
						break;
			}
		for (uint32_t i = 0; i < f->t->mem.n; i++)
			if (!g_i64(&g, "inner_of", f->inner_of[i], ref->inner_of[i]) || !g_i64(&g, "op_of", f->op_of[i], ref->op_of[i]) ||
			    !g_i64(&g, "step", hm_step_of(f, i), hm_step_of(ref, i)) ||
			    !g_i64(&g, "step ts", hm_step_ts_of(f, i), hm_step_ts_of(ref, i)))
				break;
		for (size_t i = 0; i < f->t->sl.n; i++)
			if (!g_i64(&g, "parent", f->parent[i], ref->parent[i]))
				break;
		char name[128];
		snprintf(name, sizeof name, "analyze: issue 29: %d memory events, %s%s gives the same analysis", nmem,
			 k < 3 ? "HMEM_TEST_SCHEDULE=" : "", sched[k]);
		g_done(&g, name);
		hm_file_free(f);
	}
	hm_file_free(ref);
	sb_free(&b);
}

/* ---------------------------------------------------------------- timeline */

/* Classify like the Lua side does: allocations and unpaired frees take cat_of_ev[event],
 * matched frees inherit their allocation's category, zero-byte events get -1. */
static void classify(hm_series *s, const hm_mem *m, const int32_t *cat_of_ev)
{
	hm_stage_enter(s, HM_STAGE_CLASSIFIED);
	for (size_t k = 0; k < s->n; k++) {
		int64_t bytes = hm_mem_bytes(m, s->ev[k]);
		if (bytes == 0)
			s->cat[k] = -1;
		else if (bytes > 0 || s->partner[k] < 0)
			s->cat[k] = cat_of_ev[s->ev[k]];
	}
	for (size_t k = 0; k < s->n; k++)
		if (hm_mem_bytes(m, s->ev[k]) < 0 && s->partner[k] >= 0)
			s->cat[k] = s->cat[s->partner[k]];
}

static void test_timeline(void)
{
	char err[512];
	enum { NC = 4 };

	/* Rules 2, 3, 5, 6 with Total Allocated: 1000 bytes live before the trace, of which a
	 * 300-byte block is freed during it. */
	sb b = {0};
	tr_open(&b);
	mem_ev(&b, "10", 1, 0, 0xA0, 100, 1100, 2048, "1", "1");   /* k0 alloc cat1 */
	mem_ev(&b, "20", 1, 0, 0xF0, -300, 800, 2048, "1", "1");   /* k1 before-trace free, cat2 */
	mem_ev(&b, "30", 1, 0, 0xB0, 500, 1300, 4096, "1", "1");   /* k2 alloc cat1 -> peak */
	mem_ev(&b, "35", 1, 0, 0xC0, 0, 1300, 4096, "1", "1");     /* k3 zero bytes */
	mem_ev(&b, "40", 1, 0, 0xA0, -100, 1200, 3072, "1", "1");  /* k4 free of k0 -> cat1 */
	mem_ev(&b, "50", 1, 0, 0xD0, 50, 1250, 3072, "1", "1");    /* k5 alloc cat3 */
	mem_ev(&b, "60", 1, 0, 0xE0, 20, NOTOT, NOTOT, "1", "1");  /* k6 alloc cat3, no totals */
	mem_ev(&b, "70", 1, 0, 0xE0, -20, 1250, 3072, "1", "1");   /* k7 free of k6 */
	tr_close(&b);
	hm_file *f = analyze_sb("tl1.json", &b, err, sizeof err);
	if (!f || f->nseries != 1 || f->series[0].n != 8) {
		check(0, "timeline: fixture 1 parses", "err=%s", err);
	} else {
		hm_series *s = &f->series[0];
		const hm_mem *m = &f->t->mem;
		static const int32_t cats[] = {1, 2, 1, -1, 1, 3, 3, 3};
		classify(s, m, cats);
		hm_timeline(s, m, NC);
		grp g = {0};
		g_i64(&g, "start_bytes", s->start_bytes, 1000);
		g_i64(&g, "(before trace) start", s->cats[0].start, 700);
		g_i64(&g, "cat1 start", s->cats[1].start, 0);
		g_i64(&g, "cat2 start (holds the before-trace free)", s->cats[2].start, 300);
		g_i64(&g, "cat3 start", s->cats[3].start, 0);
		g_done(&g, "timeline: with Total Allocated, (before trace) starts at TA - Bytes of the first event minus before-trace frees (rules 3, 5)");
		int64_t v[NC];
		hm_timeline_start(s, v, NC);
		check(v[0] == 700 && v[1] == 0 && v[2] == 300 && v[3] == 0, "timeline: hm_timeline_start gives the start values",
		      "%" PRId64 " %" PRId64 " %" PRId64 " %" PRId64, v[0], v[1], v[2], v[3]);
		g = (grp){0};
		for (size_t k = 0; k < s->n; k++) {
			if (s->cat[k] >= 0)
				v[s->cat[k]] += hm_mem_bytes(m, s->ev[k]);
			int64_t sum = v[0] + v[1] + v[2] + v[3];
			if (hm_mem_total_alloc(m, s->ev[k]) != HM_NONE) {
				char w[48];
				snprintf(w, sizeof w, "sum after event %zu", k);
				g_i64(&g, w, sum, hm_mem_total_alloc(m, s->ev[k]));
			}
		}
		g_done(&g, "timeline: replaying the categories gives Total Allocated after every event (rule 6)");
		{
			/* hm_replay: the start state, then one state per event, each category
			 * summing to the device total and to the trace's Total Allocated. */
			int64_t rv[NC];
			hm_replay it;
			hm_replay_init(&it, s, m, rv, NC);
			int ok = it.k == -1 && it.total == 1000 && it.reserved == HM_NONE && rv[0] == 700 && rv[2] == 300;
			size_t states = 0;
			while (hm_replay_next(&it)) {
				int64_t sum = rv[0] + rv[1] + rv[2] + rv[3], ta = hm_mem_total_alloc(m, it.e);
				ok &= it.k == (long)states++ && it.ts == hm_mem_ts(m, it.e) && sum == it.total && (ta == HM_NONE || ta == sum);
				ok &= it.reserved == hm_mem_total_res(m, it.e) && it.kind == hm_kind_of(it.bytes);
			}
			check(ok && states == s->n && it.total == s->end_bytes,
			      "timeline: hm_replay gives the start, then every event's state (issue 13)", "states=%zu", states);
		}
		check(s->mismatches == 0 && s->first_mismatch == -1, "timeline: a consistent trace has 0 mismatches",
		      "mismatches=%" PRIu64 " first=%ld", s->mismatches, s->first_mismatch);
		g = (grp){0};
		g_i64(&g, "peak", s->peak, 1300);
		g_i64(&g, "peak_k", s->peak_k, 2);
		g_i64(&g, "peak_ts", s->peak_ts, 30000);
		g_done(&g, "timeline: the peak is 1300 bytes, first reached at the third event (ts 30 us)");
		g = (grp){0};
		g_i64(&g, "(before trace) at peak", s->cats[0].at_peak, 700);
		g_i64(&g, "cat1 at peak", s->cats[1].at_peak, 600);
		g_i64(&g, "cat2 at peak", s->cats[2].at_peak, 0);
		g_i64(&g, "cat3 at peak", s->cats[3].at_peak, 0);
		g_done(&g, "timeline: category values at the device peak");
		g = (grp){0};
		g_i64(&g, "(before trace) peak", s->cats[0].peak, 700);
		g_i64(&g, "cat1 peak", s->cats[1].peak, 600);
		g_i64(&g, "cat2 peak (its start)", s->cats[2].peak, 300);
		g_i64(&g, "cat3 peak", s->cats[3].peak, 70);
		g_done(&g, "timeline: each category's own peak over the same states");
		g = (grp){0};
		g_i64(&g, "(before trace) end", s->cats[0].end, 700);
		g_i64(&g, "cat1 end", s->cats[1].end, 500);
		g_i64(&g, "cat2 end", s->cats[2].end, 0);
		g_i64(&g, "cat3 end", s->cats[3].end, 50);
		g_i64(&g, "end_bytes", s->end_bytes, 1250);
		g_done(&g, "timeline: end values after the last event");
		g = (grp){0};
		g_i64(&g, "allocs", (int64_t)s->allocs, 4);
		g_i64(&g, "frees", (int64_t)s->frees, 3);
		g_i64(&g, "matched_frees", (int64_t)s->matched_frees, 2);
		g_i64(&g, "zero_events", (int64_t)s->zero_events, 1);
		g_i64(&g, "(before trace) allocs", (int64_t)s->cats[0].allocs, 0);
		g_i64(&g, "cat1 allocs", (int64_t)s->cats[1].allocs, 2);
		g_i64(&g, "cat1 alloc_bytes", (int64_t)s->cats[1].alloc_bytes, 600);
		g_i64(&g, "cat2 allocs (a before-trace free is no allocation)", (int64_t)s->cats[2].allocs, 0);
		g_i64(&g, "cat2 alloc_bytes", (int64_t)s->cats[2].alloc_bytes, 0);
		g_i64(&g, "cat3 allocs", (int64_t)s->cats[3].allocs, 2);
		g_i64(&g, "cat3 alloc_bytes", (int64_t)s->cats[3].alloc_bytes, 70);
		g_done(&g, "timeline: allocs/alloc_bytes per category count only allocations made during the trace");
		check_i64("timeline: max_reserved is the largest Total Reserved (4096)", s->max_reserved, 4096);
		check(s->cats[0].used && s->cats[1].used && s->cats[2].used && s->cats[3].used,
		      "timeline: every category that held bytes is marked used", "used %d %d %d %d", s->cats[0].used,
		      s->cats[1].used, s->cats[2].used, s->cats[3].used);

		/* Rule 6 counting: change two totals, the series must report them. */
		m = &f->t->mem;
		hm_pack_set(&f->t->mem.total_alloc, s->ev[4], 1199);
		hm_pack_set(&f->t->mem.total_alloc, s->ev[5], 1);
		s->stage = HM_STAGE_CLASSIFIED; /* the timeline again, over its own results */
		hm_timeline(s, m, NC);
		check(s->mismatches == 2 && s->first_mismatch == 4,
		      "timeline: events whose Total Allocated differs from the device total are counted, the first is kept",
		      "mismatches=%" PRIu64 " first=%ld", s->mismatches, s->first_mismatch);
		check(s->start_bytes == 1000 && s->peak == 1300 && s->end_bytes == 1250,
		      "timeline: mismatches do not change the computed totals", "start=%" PRId64 " peak=%" PRId64,
		      s->start_bytes, s->peak);
		/* Calling hm_timeline again with more categories replaces the old results. */
		s->stage = HM_STAGE_CLASSIFIED;
		hm_timeline(s, m, NC + 2);
		check(s->ncats == NC + 2 && s->cats[5].end == 0 && s->cats[5].used == 0 && s->cats[1].end == 500,
		      "timeline: a second hm_timeline replaces cats (unused categories stay 0 and unused)", "ncats=%zu",
		      s->ncats);
	}
	hm_file_free(f);
	sb_free(&b);

	/* Rule 3 + 5 when the first event is itself a before-trace free. */
	b = (sb){0};
	tr_open(&b);
	mem_ev(&b, "1", 1, 0, 0x10, -100, 900, NOTOT, "1", "1");
	mem_ev(&b, "2", 1, 0, 0x20, 40, 940, NOTOT, "1", "1");
	tr_close(&b);
	f = analyze_sb("tl_first_free.json", &b, err, sizeof err);
	if (f && f->nseries == 1) {
		hm_series *s = &f->series[0];
		static const int32_t cats[] = {2, 1};
		classify(s, &f->t->mem, cats);
		hm_timeline(s, &f->t->mem, NC);
		grp g = {0};
		g_i64(&g, "(before trace) start", s->cats[0].start, 900);
		g_i64(&g, "cat2 start", s->cats[2].start, 100);
		g_i64(&g, "start_bytes", s->start_bytes, 1000);
		g_i64(&g, "peak (initial)", s->peak, 1000);
		g_i64(&g, "peak_k", s->peak_k, -1);
		g_i64(&g, "mismatches", (int64_t)s->mismatches, 0);
		g_i64(&g, "max_reserved (none)", s->max_reserved, HM_NONE);
		g_done(&g, "timeline: first event a before-trace free: (before trace) = TA - Bytes - size = 900");
	} else {
		check(0, "timeline: first-free fixture parses", "err=%s", err);
	}
	hm_file_free(f);
	sb_free(&b);

	/* 2021 style: no totals, no Addr (rules 4 and 5 without Total Allocated); peak at the initial state. */
	b = (sb){0};
	tr_open(&b);
	mem_ev(&b, "1", 0, -1, NOADDR, -100, NOTOT, NOTOT, "1", "1");
	mem_ev(&b, "2", 0, -1, NOADDR, 30, NOTOT, NOTOT, "1", "1");
	mem_ev(&b, "3", 0, -1, NOADDR, -50, NOTOT, NOTOT, "1", "1");
	tr_close(&b);
	f = analyze_sb("tl2021.json", &b, err, sizeof err);
	if (f && f->nseries == 1) {
		hm_series *s = &f->series[0];
		static const int32_t cats[] = {2, 1, 2};
		classify(s, &f->t->mem, cats);
		hm_timeline(s, &f->t->mem, NC);
		grp g = {0};
		g_i64(&g, "(before trace) start", s->cats[0].start, 120);
		g_i64(&g, "start_bytes", s->start_bytes, 120);
		g_i64(&g, "cat2 start (no rule 3 without Addr)", s->cats[2].start, 0);
		g_done(&g, "timeline: without Total Allocated, (before trace) is the least amount keeping the total >= 0 (120)");
		g = (grp){0};
		g_i64(&g, "peak", s->peak, 120);
		g_i64(&g, "peak_k", s->peak_k, -1);
		g_i64(&g, "peak_ts (first event)", s->peak_ts, 1000);
		g_i64(&g, "(before trace) at peak", s->cats[0].at_peak, 120);
		g_i64(&g, "cat1 at peak", s->cats[1].at_peak, 0);
		g_i64(&g, "cat2 at peak", s->cats[2].at_peak, 0);
		g_done(&g, "timeline: when the initial state is the peak, peak_k is -1 and at_peak are the start values");
		g = (grp){0};
		g_i64(&g, "cat2 end (frees subtracted at their time)", s->cats[2].end, -150);
		g_i64(&g, "cat1 end", s->cats[1].end, 30);
		g_i64(&g, "cat1 peak", s->cats[1].peak, 30);
		g_i64(&g, "cat2 peak (its start)", s->cats[2].peak, 0);
		g_i64(&g, "end_bytes", s->end_bytes, 0);
		g_i64(&g, "mismatches", (int64_t)s->mismatches, 0);
		g_i64(&g, "max_reserved", s->max_reserved, HM_NONE);
		g_i64(&g, "matched_frees", (int64_t)s->matched_frees, 0);
		g_done(&g, "timeline: without Addr each free is subtracted from its own category at its time (rule 4)");
	} else {
		check(0, "timeline: 2021 fixture parses", "err=%s", err);
	}
	hm_file_free(f);
	sb_free(&b);

	/* Peak reached twice: its time is the first. No totals, Addr present. */
	b = (sb){0};
	tr_open(&b);
	mem_simple(&b, 5, 0x1, 100, NOTOT);
	mem_simple(&b, 6, 0x1, -100, NOTOT);
	mem_simple(&b, 7, 0x2, 100, NOTOT);
	mem_simple(&b, 8, 0x2, -100, NOTOT);
	tr_close(&b);
	f = analyze_sb("tl_twice.json", &b, err, sizeof err);
	if (f && f->nseries == 1) {
		hm_series *s = &f->series[0];
		static const int32_t cats[] = {1, 1, 2, 2};
		classify(s, &f->t->mem, cats);
		hm_timeline(s, &f->t->mem, NC);
		grp g = {0};
		g_i64(&g, "start_bytes", s->start_bytes, 0);
		g_i64(&g, "peak", s->peak, 100);
		g_i64(&g, "peak_k", s->peak_k, 0);
		g_i64(&g, "peak_ts", s->peak_ts, 5000);
		g_i64(&g, "cat1 at peak", s->cats[1].at_peak, 100);
		g_i64(&g, "cat2 at peak", s->cats[2].at_peak, 0);
		g_i64(&g, "cat2 peak", s->cats[2].peak, 100);
		g_i64(&g, "end", s->end_bytes, 0);
		g_done(&g, "timeline: a peak reached twice is timed at its first occurrence (rule 7)");
	} else {
		check(0, "timeline: twice fixture parses", "err=%s", err);
	}
	hm_file_free(f);
	sb_free(&b);

	/* Rule 3 without totals: the free's category holds its size from the start; no extra (before trace). */
	b = (sb){0};
	tr_open(&b);
	mem_simple(&b, 1, 0x40, -64, NOTOT);
	mem_simple(&b, 2, 0x50, 10, NOTOT);
	tr_close(&b);
	f = analyze_sb("tl_rule3.json", &b, err, sizeof err);
	if (f && f->nseries == 1) {
		hm_series *s = &f->series[0];
		static const int32_t cats[] = {2, 1};
		classify(s, &f->t->mem, cats);
		hm_timeline(s, &f->t->mem, NC);
		grp g = {0};
		g_i64(&g, "before flag", s->before[0], 1);
		g_i64(&g, "(before trace) start", s->cats[0].start, 0);
		g_i64(&g, "cat2 start", s->cats[2].start, 64);
		g_i64(&g, "start_bytes", s->start_bytes, 64);
		g_i64(&g, "peak", s->peak, 64);
		g_i64(&g, "peak_k", s->peak_k, -1);
		g_i64(&g, "cat2 peak", s->cats[2].peak, 64);
		g_i64(&g, "cat2 end", s->cats[2].end, 0);
		g_i64(&g, "end_bytes", s->end_bytes, 10);
		g_done(&g, "timeline: without totals a before-trace free holds +size in its category from the start (rule 3)");
	} else {
		check(0, "timeline: rule 3 fixture parses", "err=%s", err);
	}
	hm_file_free(f);
	sb_free(&b);

	/* Two devices keep separate totals. */
	b = (sb){0};
	tr_open(&b);
	mem_ev(&b, "1", 1, 0, 0x1, 100, 100, NOTOT, "1", "1");
	mem_ev(&b, "2", 1, 1, 0x1, 7, 7, NOTOT, "1", "1");
	mem_ev(&b, "3", 1, 0, 0x2, 5, 105, NOTOT, "1", "1");
	tr_close(&b);
	f = analyze_sb("tl_dev.json", &b, err, sizeof err);
	if (f && f->nseries == 2) {
		static const int32_t cats[] = {1, 1, 1};
		for (size_t i = 0; i < 2; i++) {
			classify(&f->series[i], &f->t->mem, cats);
			hm_timeline(&f->series[i], &f->t->mem, NC);
		}
		check(f->series[0].mismatches == 0 && f->series[1].mismatches == 0 && f->series[0].peak == 105 &&
			      f->series[1].peak == 7 && f->series[0].start_bytes == 0,
		      "timeline: Total Allocated is a per-device counter (two devices, 0 mismatches)",
		      "mismatches %" PRIu64 "/%" PRIu64 " peaks %" PRId64 "/%" PRId64, f->series[0].mismatches,
		      f->series[1].mismatches, f->series[0].peak, f->series[1].peak);
	} else {
		check(0, "timeline: two-device fixture parses", "err=%s", err);
	}
	hm_file_free(f);
	sb_free(&b);
}

/* ---------------------------------------------------------------- input */

static char g_tmp[64];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(p);
}

static int write_file(const char *path, const void *data, size_t n)
{
	FILE *fp = fopen(path, "wb");
	if (!fp)
		return -1;
	size_t w = fwrite(data, 1, n, fp);
	return fclose(fp) == 0 && w == n ? 0 : -1;
}

static int write_gz(const char *path, const void *data, size_t n)
{
	gzFile z = gzopen(path, "wb1");
	if (!z)
		return -1;
	size_t off = 0;
	while (off < n) {
		unsigned chunk = n - off > (1u << 20) ? (1u << 20) : (unsigned)(n - off);
		if (gzwrite(z, (const char *)data + off, chunk) != (int)chunk) {
			gzclose(z);
			return -1;
		}
		off += chunk;
	}
	return gzclose(z) == Z_OK ? 0 : -1;
}

static char *read_all(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	sb b = {0};
	char buf[65536];
	size_t k;
	sb_printf(&b, "%s", "");
	while ((k = fread(buf, 1, sizeof buf, fp)) > 0) {
		if (b.n + k + 1 > b.cap) {
			while (b.n + k + 1 > b.cap)
				b.cap *= 2;
			b.p = hm_xrealloc(b.p, b.cap);
		}
		memcpy(b.p + b.n, buf, k);
		b.n += k;
	}
	fclose(fp);
	*n = b.n;
	return b.p;
}

static char *tpath(const char *rel)
{
	static char buf[8][512];
	static int i;
	char *p = buf[i++ % 8];
	snprintf(p, 512, "%s/%s", g_tmp, rel);
	return p;
}

/* Read a whole source with reads of at most chunk bytes; returns -1 on error. */
static long src_slurp(hm_src *s, size_t chunk, sb *out)
{
	char *buf = hm_xrealloc(NULL, chunk);
	long total = 0, n;
	while ((n = hm_src_read(s, buf, chunk)) > 0) {
		if (out) {
			if (out->n + (size_t)n + 1 > out->cap) {
				size_t c = out->cap ? out->cap : 256;
				while (c < out->n + (size_t)n + 1)
					c *= 2;
				out->p = hm_xrealloc(out->p, c);
				out->cap = c;
			}
			memcpy(out->p + out->n, buf, (size_t)n);
			out->n += (size_t)n;
		}
		total += n;
	}
	free(buf);
	return n < 0 ? -1 : total;
}

static void test_expand(void)
{
	static const char *files[] = {"d/b.json", "d/a.json.gz", "d/sub/c.json", "d/sub/deeper/d.json.gz", "d/notes.txt",
				      "d/e.json.bak", "d/sub.json", "d/f.gz", "d/gjson"};
	mkdir(tpath("d"), 0700);
	mkdir(tpath("d/sub"), 0700);
	mkdir(tpath("d/sub/deeper"), 0700);
	mkdir(tpath("d/empty"), 0700);
	mkdir(tpath("d/dir.json"), 0700); /* a directory named like a trace is walked, not listed */
	for (size_t i = 0; i < sizeof files / sizeof *files; i++)
		write_file(tpath(files[i]), "{}", 2);
	write_file(tpath("d/dir.json/h.json"), "{}", 2);

	char err[512] = "";
	char **out = NULL;
	int nout = -1;
	char *args[3];
	args[0] = tpath("d");
	int rc = hm_input_expand(args, 1, &out, &nout, err, sizeof err);
	static const char *want[] = {"d/a.json.gz", "d/b.json", "d/dir.json/h.json", "d/sub.json", "d/sub/c.json",
				     "d/sub/deeper/d.json.gz"};
	grp g = {0};
	if (g_true(&g, rc == 0, "rc %d: %s", rc, err) && g_i64(&g, "count", nout, 6)) {
		for (int i = 0; i < nout; i++)
			g_str(&g, "path", out[i], tpath(want[i]));
	}
	g_done(&g, "expand: a directory gives every *.json / *.json.gz below it, recursively, sorted by path");
	for (int i = 0; rc == 0 && i < nout; i++)
		free(out[i]);
	free(out);

	/* A file is taken as given; argument order is kept; a trailing slash adds no double slash. */
	char withslash[512];
	snprintf(withslash, sizeof withslash, "%s/", tpath("d/sub"));
	args[0] = tpath("d/notes.txt");
	args[1] = withslash;
	args[2] = tpath("d/b.json");
	out = NULL;
	rc = hm_input_expand(args, 3, &out, &nout, err, sizeof err);
	g = (grp){0};
	if (g_true(&g, rc == 0, "rc %d: %s", rc, err) && g_i64(&g, "count", nout, 4)) {
		g_str(&g, "0", out[0], tpath("d/notes.txt"));
		g_str(&g, "1", out[1], tpath("d/sub/c.json"));
		g_str(&g, "2", out[2], tpath("d/sub/deeper/d.json.gz"));
		g_str(&g, "3", out[3], tpath("d/b.json"));
	}
	g_done(&g, "expand: files are taken whatever their name, in argument order; dir/ gives dir/x (no //)");
	for (int i = 0; rc == 0 && i < nout; i++)
		free(out[i]);
	free(out);

	args[0] = tpath("d/empty");
	out = NULL;
	nout = -1;
	rc = hm_input_expand(args, 1, &out, &nout, err, sizeof err);
	check(rc == 0 && nout == 0, "expand: an empty directory gives no files (not an error)", "rc=%d n=%d", rc, nout);
	free(out);

	args[0] = tpath("d");
	args[1] = tpath("d/missing.json");
	out = NULL;
	err[0] = 0;
	rc = hm_input_expand(args, 2, &out, &nout, err, sizeof err);
	check(rc == -2 && strstr(err, "missing.json"), "expand: a missing path is an error (-2, not found) naming it", "rc=%d err=%s", rc, err);
}

/* A gzip member with an FNAME of pad bytes, so that its total size can be chosen. */
static unsigned char *gz_member(const char *data, size_t n, size_t pad, size_t *outlen)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
	uLong bound = deflateBound(&z, (uLong)n);
	unsigned char *def = hm_xrealloc(NULL, bound);
	z.next_in = (unsigned char *)(uintptr_t)data;
	z.avail_in = (uInt)n;
	z.next_out = def;
	z.avail_out = (uInt)bound;
	deflate(&z, Z_FINISH);
	size_t dn = bound - z.avail_out;
	deflateEnd(&z);
	size_t total = 10 + (pad ? pad + 1 : 0) + dn + 8;
	unsigned char *o = hm_xrealloc(NULL, total), *p = o;
	static const unsigned char hdr[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
	memcpy(p, hdr, 10);
	if (pad) {
		o[3] = 0x08; /* FNAME */
		memset(p + 10, 'n', pad);
		p[10 + pad] = 0;
		p += pad + 1;
	}
	p += 10;
	memcpy(p, def, dn);
	p += dn;
	uLong crc = crc32(crc32(0, Z_NULL, 0), (const Bytef *)data, (uInt)n);
	for (int i = 0; i < 4; i++)
		*p++ = (unsigned char)(crc >> (8 * i));
	for (int i = 0; i < 4; i++)
		*p++ = (unsigned char)((uint32_t)n >> (8 * i));
	free(def);
	*outlen = total;
	return o;
}

/* hm_src_peek (issue 13: the reader is chosen by the first decoded bytes): the bytes looked
 * at are read again, and where a read stops or fails is the same as without the look. */
static void test_src_peek(void)
{
	char err[512];
	sb big = {0};
	for (int i = 0; i < 30000; i++)
		sb_printf(&big, "{\"i\": %d},\n", i);
	write_file(tpath("peek.json"), big.p, big.n);
	write_gz(tpath("peek.json.gz"), big.p, big.n);
	const char *files[] = {"peek.json", "peek.json.gz", "peek.json.gz"};
	for (int f = 0; f < 3; f++) {
		hm_src *s = hm_src_open_threads(tpath(files[f]), f == 2, err, sizeof err);
		const unsigned char *head = NULL;
		size_t nh = s ? hm_src_peek(s, &head) : 0;
		int head_ok = nh >= 16 && memcmp(head, big.p, 16) == 0;
		sb out = {0};
		long n = s ? src_slurp(s, 1000, &out) : -2;
		char name[160];
		snprintf(name, sizeof name, "src: after a peek at the start, %s%s is read byte for byte", files[f],
			 f == 2 ? " (inflating thread)" : "");
		check(head_ok && n == (long)big.n && memcmp(out.p, big.p, big.n) == 0, name, "nh=%zu n=%ld", nh, n);
		sb_free(&out);
		hm_src_close(s);
	}
	/* a gzip stream cut short: the same bytes, then the same error, peeked or not */
	size_t cut = 300;
	FILE *g = fopen(tpath("peek.json.gz"), "rb");
	char *z = hm_xrealloc(NULL, cut);
	size_t zn = g ? fread(z, 1, cut, g) : 0;
	if (g)
		fclose(g);
	write_file(tpath("peek_cut.json.gz"), z, zn);
	free(z);
	char e1[600] = "", e2[600] = "";
	long n1 = -2, n2 = -2;
	for (int peek = 0; peek < 2; peek++) {
		hm_src *s = hm_src_open_threads(tpath("peek_cut.json.gz"), 0, err, sizeof err);
		const unsigned char *head;
		if (s && peek)
			hm_src_peek(s, &head);
		long n = s ? src_slurp(s, 1 << 19, NULL) : -2;
		snprintf(peek ? e2 : e1, sizeof e1, "%s", s ? hm_src_error(s) : err);
		*(peek ? &n2 : &n1) = n;
		hm_src_close(s);
	}
	check(n1 == -1 && n2 == -1 && strcmp(e1, e2) == 0 && strstr(e1, "truncated"),
	      "src: a cut gzip stream fails the same way after a peek", "%ld \"%s\" / %ld \"%s\"", n1, e1, n2, e2);
	sb_free(&big);
}

static void test_src(void)
{
	char err[512];
	const char *plain = "{\"traceEvents\": [], \"note\": \"plain text, no compression\"}\n";
	write_file(tpath("plain.json"), plain, strlen(plain));
	hm_src *s = hm_src_open(tpath("plain.json"), err, sizeof err);
	sb out = {0};
	long n = s ? src_slurp(s, 7, &out) : -2;
	check(s && n == (long)strlen(plain) && out.n == strlen(plain) && memcmp(out.p, plain, out.n) == 0 &&
		      !hm_src_is_gzip(s) && hm_src_file_size(s) == strlen(plain) && hm_src_file_pos(s) == strlen(plain),
	      "src: a plain file is read byte for byte in small reads (size and position reported)", "n=%ld err=%s", n,
	      s ? hm_src_error(s) : err);
	if (s)
		check(hm_src_read(s, out.p, 16) == 0, "src: reading past the end of a plain file returns 0", "not 0");
	hm_src_close(s);
	sb_free(&out);

	/* Compressible but not trivial data, larger than the 128 KiB input buffer. */
	sb big = {0};
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 40000; i++)
		sb_printf(&big, "{\"i\": %d, \"v\": %" PRIu64 "},\n", i, (RND() % 1000000));
	write_gz(tpath("gz_named.json"), big.p, big.n);
	s = hm_src_open(tpath("gz_named.json"), err, sizeof err);
	out = (sb){0};
	n = s ? src_slurp(s, 4093, &out) : -2;
	check(s && hm_src_is_gzip(s) && n == (long)big.n && memcmp(out.p, big.p, big.n) == 0 &&
		      hm_src_file_pos(s) == hm_src_file_size(s),
	      "src: gzip is detected by magic bytes (name .json) and inflated exactly", "n=%ld want %zu err=%s", n, big.n,
	      s ? hm_src_error(s) : err);
	/* Random numbers compress less than ten times: the guess is ten times the file. */
	struct stat gst;
	check(s && stat(tpath("gz_named.json"), &gst) == 0 && hm_src_text_size(s) == 10 * (uint64_t)gst.st_size,
	      "src: the text of a gzip file compressing less than 10x is guessed at 10x its size", "guess %llu",
	      s ? (unsigned long long)hm_src_text_size(s) : 0);
	hm_src_close(s);
	sb_free(&out);

	/* Events compress 20 times and more: the trailer gives the exact size. */
	sb ev = {0};
	for (int i = 0; i < 20000; i++)
		sb_printf(&ev, "{\"ph\": \"X\", \"name\": \"aten::mm\", \"ts\": %d, \"dur\": 5},\n", i);
	write_gz(tpath("trailer.json.gz"), ev.p, ev.n);
	s = hm_src_open(tpath("trailer.json.gz"), err, sizeof err);
	check(s && stat(tpath("trailer.json.gz"), &gst) == 0 && (uint64_t)gst.st_size * 10 < ev.n &&
		      hm_src_text_size(s) == ev.n,
	      "src: the text of a gzip file compressing more than 10x is its trailer's size", "guess %llu, text %zu, file %lld",
	      s ? (unsigned long long)hm_src_text_size(s) : 0, ev.n, (long long)gst.st_size);
	hm_src_close(s);
	sb_free(&ev);

	/* The trailer holds the size modulo 4 GiB: 5 in a file of 100 bytes is 4 GiB + 5. */
	char fake[100] = {0x1f, (char)0x8b, 8};
	fake[96] = 5;
	write_file(tpath("wrapped.json.gz"), fake, sizeof fake);
	s = hm_src_open(tpath("wrapped.json.gz"), err, sizeof err);
	check(s && hm_src_text_size(s) == 4294967296ull + 5, "src: a trailer's size below the file's is taken modulo 4 GiB",
	      "guess %llu", s ? (unsigned long long)hm_src_text_size(s) : 0);
	hm_src_close(s);
	write_file(tpath("plain_size.json"), plain, strlen(plain));
	s = hm_src_open(tpath("plain_size.json"), err, sizeof err);
	check(s && hm_src_text_size(s) == strlen(plain), "src: a plain file's text is its size", "guess %llu",
	      s ? (unsigned long long)hm_src_text_size(s) : 0);
	hm_src_close(s);

	write_file(tpath("plain_named.json.gz"), plain, strlen(plain));
	s = hm_src_open(tpath("plain_named.json.gz"), err, sizeof err);
	out = (sb){0};
	n = s ? src_slurp(s, 1 << 16, &out) : -2;
	check(s && !hm_src_is_gzip(s) && n == (long)strlen(plain), "src: a plain file named .json.gz is read as plain",
	      "n=%ld", n);
	hm_src_close(s);
	sb_free(&out);

	/* Concatenated members (cat a.gz b.gz). */
	{
		size_t la, lb;
		char *a = NULL, *bb = NULL;
		write_gz(tpath("m1.gz"), "{\"traceEvents\": [", 17);
		write_gz(tpath("m2.gz"), "]}", 2);
		a = read_all(tpath("m1.gz"), &la);
		bb = read_all(tpath("m2.gz"), &lb);
		sb cat = {0};
		sb_printf(&cat, "%s", "");
		if (a && bb) {
			cat.p = hm_xrealloc(cat.p, la + lb + 1);
			memcpy(cat.p, a, la);
			memcpy(cat.p + la, bb, lb);
			cat.n = la + lb;
			write_file(tpath("cat.json.gz"), cat.p, cat.n);
		}
		s = hm_src_open(tpath("cat.json.gz"), err, sizeof err);
		out = (sb){0};
		n = s ? src_slurp(s, 5, &out) : -2;
		check(s && n == 19 && memcmp(out.p, "{\"traceEvents\": []}", 19) == 0,
		      "src: concatenated gzip members are read in turn", "n=%ld err=%s", n, s ? hm_src_error(s) : err);
		hm_src_close(s);
		sb_free(&out);

		/* Trailing bytes that are not a gzip member are an error. */
		if (a) {
			char *tg = hm_xrealloc(NULL, la + 4);
			memcpy(tg, a, la);
			memcpy(tg + la, "junk", 4);
			write_file(tpath("trailing.gz"), tg, la + 4);
			free(tg);
		}
		s = hm_src_open(tpath("trailing.gz"), err, sizeof err);
		n = s ? src_slurp(s, 64, NULL) : -2;
		check(n == -1 && strstr(hm_src_error(s), "after the end"),
		      "src: bytes after the last gzip member that are not a member are an error", "n=%ld err=%s", n,
		      s ? hm_src_error(s) : err);
		hm_src_close(s);
		free(a);
		free(bb);
		sb_free(&cat);
	}

	/* A member boundary one byte before the end of the 128 KiB read: the next member's
	 * magic is split across two reads. */
	{
		size_t l0, l1, l2;
		unsigned char *m0 = gz_member("AAAA", 4, 0, &l0);
		free(m0);
		size_t target = 131071; /* 2^17 - 1 */
		unsigned char *m1 = gz_member("AAAA", 4, target - l0 - 1, &l1);
		unsigned char *m2 = gz_member("BBBB", 4, 0, &l2);
		unsigned char *both = hm_xrealloc(NULL, l1 + l2);
		memcpy(both, m1, l1);
		memcpy(both + l1, m2, l2);
		write_file(tpath("split_magic.gz"), both, l1 + l2);
		s = hm_src_open(tpath("split_magic.gz"), err, sizeof err);
		out = (sb){0};
		n = s ? src_slurp(s, 1024, &out) : -2;
		check(l1 == target && n == 8 && memcmp(out.p, "AAAABBBB", 8) == 0,
		      "src: a second gzip member is found when its magic straddles a read boundary (member of 131071 bytes)",
		      "member size %zu, n=%ld, error: %s", l1, n, s ? hm_src_error(s) : err);
		hm_src_close(s);
		sb_free(&out);
		/* Same with the boundary exactly on the read size: the control case. */
		free(m1);
		m1 = gz_member("AAAA", 4, target + 1 - l0 - 1, &l1);
		both = hm_xrealloc(both, l1 + l2);
		memcpy(both, m1, l1);
		memcpy(both + l1, m2, l2);
		write_file(tpath("split_magic2.gz"), both, l1 + l2);
		s = hm_src_open(tpath("split_magic2.gz"), err, sizeof err);
		out = (sb){0};
		n = s ? src_slurp(s, 1024, &out) : -2;
		check(l1 == target + 1 && n == 8 && memcmp(out.p, "AAAABBBB", 8) == 0,
		      "src: a second gzip member right at a read boundary (member of 131072 bytes) is read",
		      "member size %zu, n=%ld, error: %s", l1, n, s ? hm_src_error(s) : err);
		hm_src_close(s);
		sb_free(&out);
		free(m1);
		free(m2);
		free(both);
	}

	/* Truncated gzip. */
	{
		size_t lz;
		char *z = read_all(tpath("gz_named.json"), &lz);
		if (z)
			write_file(tpath("trunc.json.gz"), z, lz / 2);
		s = hm_src_open(tpath("trunc.json.gz"), err, sizeof err);
		out = (sb){0};
		n = s ? src_slurp(s, 1 << 16, &out) : -2;
		check(s && n == -1 && strstr(hm_src_error(s), "truncated"), "src: a truncated gzip file is an error (not EOF)",
		      "n=%ld err=%s", n, s ? hm_src_error(s) : err);
		hm_src_close(s);
		sb_free(&out);
		/* Cut inside the 8-byte trailer. */
		if (z)
			write_file(tpath("trunc_trailer.gz"), z, lz - 3);
		s = hm_src_open(tpath("trunc_trailer.gz"), err, sizeof err);
		n = s ? src_slurp(s, 1 << 16, NULL) : -2;
		check(s && n == -1, "src: a gzip file cut inside its trailer is an error", "n=%ld", n);
		hm_src_close(s);
		/* Corrupt data. */
		if (z && lz > 100) {
			for (size_t i = 20; i < 60; i++)
				z[i] ^= 0x5a;
			write_file(tpath("corrupt.gz"), z, lz);
		}
		s = hm_src_open(tpath("corrupt.gz"), err, sizeof err);
		n = s ? src_slurp(s, 1 << 16, NULL) : -2;
		check(s && n == -1, "src: corrupt gzip data is an error", "n=%ld", n);
		hm_src_close(s);
		free(z);
	}

	err[0] = 0;
	s = hm_src_open(tpath("nope.json"), err, sizeof err);
	check(!s && strstr(err, "nope.json"), "src: opening a missing file fails with its name in the message", "err=%s", err);
	hm_src_close(s);
	s = hm_src_open(tpath("d"), err, sizeof err);
	check(!s, "src: opening a directory fails", "opened");
	hm_src_close(s);

	write_file(tpath("empty.json"), "", 0);
	s = hm_src_open(tpath("empty.json"), err, sizeof err);
	n = s ? src_slurp(s, 16, NULL) : -2;
	check(s && n == 0, "src: an empty file reads as 0 bytes", "n=%ld", n);
	hm_src_close(s);
	sb_free(&big);
}

static int same_trace(grp *g, const hm_trace *a, const hm_trace *b)
{
	if (!g_i64(g, "events", (int64_t)a->events, (int64_t)b->events) || !g_i64(g, "mem.n", (int64_t)a->mem.n, (int64_t)b->mem.n) ||
	    !g_i64(g, "ops.n", (int64_t)a->sl.n, (int64_t)b->sl.n))
		return 0;
	const hm_mem *x = &a->mem, *y = &b->mem;
	for (size_t i = 0; i < x->n; i++)
		if (!g_true(g, hm_mem_ts(x, i) == hm_mem_ts(y, i) && hm_mem_bytes(x, i) == hm_mem_bytes(y, i) && x->addr[i] == y->addr[i] &&
				       hm_mem_total_alloc(x, i) == hm_mem_total_alloc(y, i) && hm_mem_total_res(x, i) == hm_mem_total_res(y, i) &&
				       x->dev_type[i] == y->dev_type[i] && x->dev_id[i] == y->dev_id[i] &&
				       hm_mem_has_addr(x, i) == hm_mem_has_addr(y, i) &&
				       strcmp(a->threads.str[hm_mem_thread(x, i)], b->threads.str[hm_mem_thread(y, i)]) == 0,
			    "memory event %zu differs", i))
			return 0;
	for (size_t i = 0; i < a->sl.n; i++)
		if (!g_true(g, a->sl.ts[i] == b->sl.ts[i] && a->sl.dur[i] == b->sl.dur[i] &&
				       a->names.len[a->sl.name[i]] == b->names.len[b->sl.name[i]] &&
				       memcmp(a->names.str[a->sl.name[i]], b->names.str[b->sl.name[i]],
					      a->names.len[a->sl.name[i]]) == 0,
			    "op %zu differs", i))
			return 0;
	return g_i64(g, "first_ts", a->first_ts, b->first_ts) && g_i64(g, "oom", (int64_t)a->oom_events, (int64_t)b->oom_events);
}

static void test_trace_read(void)
{
	char err[512];
	int code = 0;
	/* Skipped top-level strings that cross a refill of the 1 MiB read buffer. */
	{
		sb p = {0};
		const char *tail = "0], \"traceName\": ";
		sb_printf(&p, "{\"traceEvents\": [], \"pad\": [");
		size_t q = (1u << 20) - 20; /* the opening quote of traceName's value */
		while (p.n + strlen(tail) < q - 1)
			sb_printf(&p, "0,");
		sb_printf(&p, "%s", tail);
		sb_fill(&p, ' ', q - p.n);
		sb_printf(&p, "\"");
		sb_fill(&p, 't', 40);
		sb_printf(&p, "\", \"schemaVersion\": 1}");
		write_file(tpath("straddle.json"), p.p, p.n);
		write_gz(tpath("straddle.json.gz"), p.p, p.n);
		code = 0;
		hm_trace *t = hm_trace_read(tpath("straddle.json"), err, sizeof err, &code);
		check(t && t->has_trace_events && t->events == 0 && p.p[q] == '"',
		      "trace: a skipped top-level string crossing the 1 MiB read boundary is read (plain file)", "err=%s",
		      t ? "" : err);
		hm_trace_free(t);
		t = hm_trace_read(tpath("straddle.json.gz"), err, sizeof err, &code);
		check(t && t->has_trace_events && t->events == 0,
		      "trace: a skipped top-level string crossing the 1 MiB read boundary is read (gzip)", "err=%s",
		      t ? "" : err);
		hm_trace_free(t);
		sb_free(&p);
		sb_printf(&p, "{\"metadata\": \"");
		sb_fill(&p, 'm', 1100000);
		sb_printf(&p, "\", \"traceEvents\": []}");
		write_file(tpath("longstr.json"), p.p, p.n);
		t = hm_trace_read(tpath("longstr.json"), err, sizeof err, &code);
		check(t && t->has_trace_events && t->events == 0,
		      "trace: a skipped top-level string longer than the read buffer (1.1 MB) is read", "err=%s",
		      t ? "" : err);
		hm_trace_free(t);
		sb_free(&p);
	}

	/* A trace of several MiB: a 1.1 MiB number array before traceEvents (skipped), a 1.1 MiB
	 * op name (kept across buffer refills) and thousands of events straddling refills. */
	sb b = {0};
	sb_printf(&b, "{\"metadata\": [0");
	for (int i = 0; i < 550000; i++)
		sb_printf(&b, ",1");
	sb_printf(&b, "], \"distributedInfo\": {\"rank\": 2}, \"traceEvents\": [\n");
	b.items = 0;
	for (int i = 0; i < 9000; i++) {
		char ts[40];
		snprintf(ts, sizeof ts, "1419116105%03d.%03d", i / 1000, i % 1000);
		mem_ev(&b, ts, 1, 0, 0x1000 + 16 * (i / 2), (i % 2) ? -512 : 512, (i % 2) ? 0 : 512, 2097152, "7", "\"8\"");
		if (i % 3 == 0)
			op_ev(&b, "cpu_op", "aten::empty", ts, "0.5", "7", "8");
		if (i == 4000) {
			sb_item(&b);
			sb_printf(&b, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"pid\": 7, \"tid\": 8, \"ts\": 1, \"dur\": 1, \"name\": \"");
			sb_fill(&b, 'n', 1100000);
			sb_printf(&b, "\"}");
		}
	}
	tr_close(&b);
	write_file(tpath("big_rank_9.json"), b.p, b.n);
	write_gz(tpath("big.json.gz"), b.p, b.n);
	hm_trace *ref = parse_text("mem", b.p, b.n, err, sizeof err);
	check(ref && ref->mem.n == 9000 && ref->sl.n == 3001 && ref->rank == 2 &&
		      ref->names.len[ref->sl.name[1334]] == 1100000,
	      "trace: a 5 MiB text parses in memory (9000 memory events, a 1.1 MB op name)", "err=%s", err);
	hm_trace *tp = hm_trace_read(tpath("big_rank_9.json"), err, sizeof err, &code);
	grp g = {0};
	if (g_true(&g, tp && ref, "read failed: %s", err))
		same_trace(&g, tp, ref);
	if (tp)
		g_str(&g, "path", tp->path, tpath("big_rank_9.json"));
	g_done(&g, "trace: streaming a plain file larger than the read buffer gives the same columns as hm_trace_parse");
	hm_trace *tz = hm_trace_read(tpath("big.json.gz"), err, sizeof err, &code);
	g = (grp){0};
	if (g_true(&g, tz && ref, "read failed: %s", err))
		same_trace(&g, tz, ref);
	g_done(&g, "trace: streaming the gzip of it gives the same columns");
	hm_trace_free(tp);
	hm_trace_free(tz);
	hm_trace_free(ref);

	/* An error far into the stream names the offset in the decompressed JSON. */
	char *bad = strstr(b.p + 3000000, "\"Bytes\": 512");
	if (bad) {
		long off = (long)(bad - b.p) + 9;
		memcpy(bad + 9, "\"1\"", 3); /* "Bytes": "1" -- same length as 512 */
		write_file(tpath("bad_far.json"), b.p, b.n);
		write_gz(tpath("bad_far.json.gz"), b.p, b.n);
		char want[600];
		code = 0;
		snprintf(want, sizeof want, "%s:%ld: ", tpath("bad_far.json"), off);
		tp = hm_trace_read(tpath("bad_far.json"), err, sizeof err, &code);
		check(!tp && code == HM_EXIT_INPUT && strncmp(err, want, strlen(want)) == 0,
		      "trace: an error 3 MB into a plain file names the exact byte offset", "err=%s want prefix %s code=%d", err,
		      want, code);
		hm_trace_free(tp);
		snprintf(want, sizeof want, "%s:%ld: ", tpath("bad_far.json.gz"), off);
		code = 0;
		tz = hm_trace_read(tpath("bad_far.json.gz"), err, sizeof err, &code);
		check(!tz && code == HM_EXIT_INPUT && strncmp(err, want, strlen(want)) == 0,
		      "trace: an error 3 MB into a gzip file names the offset in the decompressed JSON",
		      "err=%s want prefix %s code=%d", err, want, code);
		hm_trace_free(tz);
	} else {
		check(0, "trace: big fixture has a Bytes field after 3 MB", "not found");
	}

	/* Truncated gzip and cut-off JSON through files. */
	{
		size_t lz;
		char *z = read_all(tpath("big.json.gz"), &lz);
		if (z)
			write_file(tpath("big_trunc.json.gz"), z, lz / 2);
		free(z);
		code = 0;
		tz = hm_trace_read(tpath("big_trunc.json.gz"), err, sizeof err, &code);
		char want[600];
		snprintf(want, sizeof want, "%s:", tpath("big_trunc.json.gz"));
		check(!tz && code == HM_EXIT_INPUT && strncmp(err, want, strlen(want)) == 0 && strstr(err, "truncated"),
		      "trace: a truncated gzip trace is a bad-input error naming the file", "err=%s code=%d", err, code);
		hm_trace_free(tz);
		write_file(tpath("cut.json"), b.p, b.n / 2);
		code = 0;
		tp = hm_trace_read(tpath("cut.json"), err, sizeof err, &code);
		check(!tp && code == HM_EXIT_INPUT && strstr(err, "cut-off"), "trace: a cut-off plain trace is a bad-input error",
		      "err=%s code=%d", err, code);
		hm_trace_free(tp);
	}

	code = 0;
	tp = hm_trace_read(tpath("does_not_exist.json"), err, sizeof err, &code);
	check(!tp && code == HM_EXIT_IO && strstr(err, "does_not_exist.json"),
	      "trace: a missing file is an I/O error naming the file", "err=%s code=%d", err, code);
	hm_trace_free(tp);

	/* A small file: rank from its name, BOM, gzip. */
	const char *small = "\xef\xbb\xbf{\"traceEvents\": [{\"ph\": \"i\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, "
			    "\"ts\": 1, \"args\": {\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": 8}}]}";
	write_gz(tpath("rank-3.json.gz"), small, strlen(small));
	tz = hm_trace_read(tpath("rank-3.json.gz"), err, sizeof err, &code);
	check(tz && tz->rank == 3 && tz->mem.n == 1, "trace: a small gzip file with a BOM, rank 3 from its name",
	      "err=%s", tz ? "" : err);
	hm_trace_free(tz);
	write_file(tpath("empty2.json"), "", 0);
	code = 0;
	tp = hm_trace_read(tpath("empty2.json"), err, sizeof err, &code);
	check(!tp && code == HM_EXIT_INPUT && strstr(err, ":0: "), "trace: an empty file is a bad-input error at offset 0",
	      "err=%s code=%d", err, code);
	hm_trace_free(tp);
	sb_free(&b);
}

/* Issue 11: the scanner thread hands each full batch of events to the parsing thread and
 * goes on in another. HMEM_TEST_SCHEDULE=lockstep forces the schedule that broke it: two
 * batches only, and the parser gives each batch back before the scanner takes its next one
 * (so the batch just handed over is the only free one). The event cut by the batch's end has
 * containers the scanner must still have: read with it, plain and gzip, every walk mode,
 * the columns equal those of the text parsed in memory. */
static void test_trace_handoff(void)
{
	sb b = {0};
	tr_open(&b);
	for (int i = 0; i < 40000; i++) {
		char ts[32];
		snprintf(ts, sizeof ts, "%d.%03d", 1000 + i, i % 1000);
		mem_ev(&b, ts, 1, i % 3, 0x1000 + 16 * (i / 2), (i % 2) ? -64 : 64, 64, NOTOT, "1", "2");
		sb_item(&b);
		/* several containers per event: the cut one has some before and after the cut */
		sb_printf(&b, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::op%d\", \"pid\": 1, \"tid\": 2, "
			     "\"ts\": %s, \"dur\": 1, \"a\": [1, 2], \"b\": {\"c\": [3]}, \"d\": [], \"args\": {\"x\": %d}}",
			  i % 50, ts, i);
	}
	tr_close(&b);
	write_file(tpath("handoff.json"), b.p, b.n);
	write_gz(tpath("handoff.json.gz"), b.p, b.n);
	char err[512];
	hm_trace *ref = parse_text("handoff", b.p, b.n, err, sizeof err);
	check(ref && ref->mem.n == 40000 && ref->sl.n == 40000, "trace: the hand-off fixture parses in memory", "err=%s", err);
	const char *walks[] = {"scanner", "handler", NULL};
	const char *files[] = {"handoff.json", "handoff.json.gz"};
	setenv("HMEM_TEST_SCHEDULE", "lockstep", 1);
	for (int w = 0; w < 3; w++) {
		if (walks[w])
			setenv("HMEM_WALK", walks[w], 1);
		else
			unsetenv("HMEM_WALK");
		/* two threads: gzip inflates on the scanner's; three: on a thread of its own */
		for (int f = 0; f < 2; f++)
			for (int threads = 2; threads <= (f ? 3 : 2); threads++) {
				hm_read_opts o = {0, NULL, threads};
				int code = 0;
				err[0] = 0;
				hm_trace *t = hm_trace_read_opts(tpath(files[f]), &o, err, sizeof err, &code, NULL);
				grp g = {0};
				if (g_true(&g, t && ref, "read failed: %s", err))
					same_trace(&g, t, ref);
				char name[200];
				snprintf(name, sizeof name,
					 "trace: issue 11: batches handed back at once (lockstep), HMEM_WALK=%s, %s, %d threads: same columns",
					 walks[w] ? walks[w] : "(unset)", files[f], threads);
				g_done(&g, name);
				hm_trace_free(t);
			}
	}
	unsetenv("HMEM_TEST_SCHEDULE");
	unsetenv("HMEM_WALK");
	hm_trace_free(ref);
	sb_free(&b);
}

/* hm_field_names writes into the caller's buffer, bounded, and HM_FIELD_NAMES_CAP holds the
 * whole list (issue 26: it was strcat into a static 512-byte buffer). */
static void test_field_names(void)
{
	char all[HM_FIELD_NAMES_CAP], small[16];
	size_t n = hm_field_names(all, sizeof all);
	check(n < sizeof all && strlen(all) == n, "field names: the whole list fits in HM_FIELD_NAMES_CAP", "%zu bytes", n);
	check(!strncmp(all, "ts, ts_ns, bytes, ", 18) && strstr(all, ", free_frames") && !strstr(all, ", ,"),
	      "field names: every name, comma-separated", "%s", all);
	memset(small, 'x', sizeof small);
	size_t m = hm_field_names(small, 8);
	check(m == n && !strcmp(small, "ts, ts_") && small[8] == 'x', "field names: cut to the buffer given, terminated, nothing past it",
	      "%zu %.16s", m, small);
	check(hm_field_names(NULL, 0) == n, "field names: the length alone with no buffer", "want %zu", n);
}

/* Thread keys are split in one place (issue 26), by their length: a pid or tid may hold NUL. */
static void test_thread_split(void)
{
	const char *tid;
	size_t tl, pl = hm_thread_split("25738\x1f" "7", 7, &tid, &tl);
	check(pl == 5 && tl == 1 && *tid == '7', "thread key: \"25738\\x1f7\" is pid 25738, tid 7", "pid %zu tid %zu", pl, tl);
	pl = hm_thread_split("a\0b\x1f\0", 5, &tid, &tl);
	check(pl == 3 && tl == 1 && tid[0] == 0, "thread key: NUL bytes in pid and tid are kept, split by length", "pid %zu tid %zu", pl, tl);
	pl = hm_thread_split("\x1f", 1, &tid, &tl);
	check(pl == 0 && tl == 0, "thread key: a snapshot's \"\\x1f\" is an empty pid and tid", "pid %zu tid %zu", pl, tl);
	pl = hm_thread_split("xyz", 3, &tid, &tl);
	check(pl == 3 && tl == 0, "thread key: no separator, all pid", "pid %zu tid %zu", pl, tl);
	hm_strtab th = {0};
	uint32_t a = hm_strtab_intern(&th, "1\x1f" "2", 3), b = hm_strtab_intern(&th, "1\x1f" "3", 3), c = hm_strtab_intern(&th, "12\x1f", 3);
	check(hm_thread_same_pid(&th, a, b) && !hm_thread_same_pid(&th, a, c) && hm_thread_same_pid(&th, c, c),
	      "thread key: same pid, 1/2 and 1/3, not 12/", "%u %u %u", a, b, c);
	hm_strtab_free(&th);
}

/* ---------------------------------------------------------------- stages */

/* The writers of a series, as src/run.c runs them (analyze.h, enum hm_stage). */
enum { W_WINDOW, W_CLASSIFY, W_TIMELINE, W_EXPLAIN };

static void write_stage(hm_file *f, int w)
{
	if (w == W_WINDOW)
		hm_window_apply(f, INT64_MIN, INT64_MAX);
	else if (w == W_CLASSIFY)
		hm_file_given_cats(f, NULL);
	else if (w == W_EXPLAIN)
		hm_explain(f, 2);
	else
		for (size_t s = 0; s < f->nseries; s++)
			hm_timeline(&f->series[s], &f->t->mem, 2);
}

/* The writers w[0..n) over a fresh analysis of b, in a child process: 1 when an assertion
 * stopped it (SIGABRT), 0 when all ran, -1 otherwise. */
static int writers_stop(sb *b, const int *w, int n)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		char err[512];
		int fd = open("/dev/null", O_WRONLY); /* the assertion's own message */
		if (fd >= 0)
			dup2(fd, 2);
		hm_file *f = analyze_sb("stages.json", b, err, sizeof err);
		if (!f)
			_exit(2);
		for (int i = 0; i < n; i++)
			write_stage(f, w[i]);
		hm_file_free(f);
		_exit(0);
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT ? 1 : WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Issue 26: the writer list of analyze.h is a checked rule. In order the writers run and
 * each records its stage; out of order (the window after classification, as it once ran;
 * a timeline before classification; a writer twice) an assertion stops the run. */
static void test_stages(void)
{
	char err[512];
	sb b = {0};
	tr_open(&b);
	mem_ev(&b, "10", 1, 0, 0xA0, 100, 100, NOTOT, "1", "1");
	mem_ev(&b, "20", 1, 0, 0xA0, -100, 0, NOTOT, "1", "1");
	tr_close(&b);
	hm_file *f = analyze_sb("stages.json", &b, err, sizeof err);
	if (!f || f->nseries != 1) {
		check(0, "stages: the fixture parses", "err=%s", err);
	} else {
		grp g = {0};
		g_i64(&g, "analysed", f->series[0].stage, HM_STAGE_ANALYZED);
		static const int want[] = {HM_STAGE_WINDOWED, HM_STAGE_CLASSIFIED, HM_STAGE_TIMELINE, HM_STAGE_EXPLAINED};
		static const char *const name[] = {"windowed", "classified", "timeline", "explained"};
		for (int w = W_WINDOW; w <= W_EXPLAIN; w++) {
			write_stage(f, w);
			g_i64(&g, name[w], f->series[0].stage, want[w]);
		}
		g_done(&g, "stages: each writer records its stage, in the order of analyze.h");
	}
	hm_file_free(f);
#ifdef NDEBUG
	check(1, "stages: out-of-order writers (skipped: NDEBUG build, no assertions)", NULL);
#else
	static const struct {
		int w[5], n, stops;
		const char *name;
	} cases[] = {
		{{W_WINDOW, W_CLASSIFY, W_TIMELINE, W_EXPLAIN}, 4, 0, "every writer in order runs"},
		{{W_CLASSIFY, W_TIMELINE, W_EXPLAIN}, 3, 0, "without a window, classification follows the analysis"},
		{{W_CLASSIFY, W_WINDOW}, 2, 1, "a window after classification stops the run"},
		{{W_TIMELINE}, 1, 1, "a timeline before classification stops the run"},
		{{W_CLASSIFY, W_EXPLAIN}, 2, 1, "explain before the timeline stops the run"},
		{{W_WINDOW, W_WINDOW}, 2, 1, "a window twice stops the run"},
		{{W_CLASSIFY, W_CLASSIFY}, 2, 1, "classification twice stops the run"},
		{{W_CLASSIFY, W_TIMELINE, W_EXPLAIN, W_TIMELINE}, 4, 1, "a timeline after explain stops the run"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int got = writers_stop(&b, cases[i].w, cases[i].n);
		char what[160];
		snprintf(what, sizeof what, "stages: %s", cases[i].name);
		check(got == cases[i].stops, what, "child: %d (1: stopped by an assertion, 0: ran, -1: other)", got);
	}
#endif
	sb_free(&b);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_numbers();
	test_jscan();
	test_klayout_flex();
	test_jscan_blocks();
	test_pack();
	test_store_packed();
	test_store();
	test_format();
	test_field_names();
	test_thread_split();
	test_strtab();
	test_unpickle();
	test_trace_generations();
	test_trace_times();
	test_trace_shapes();
	test_trace_errors();
	test_rank_from_name();
	test_analyze_sort_series();
	test_analyze_pairing();
	test_analyze_ops();
	test_analyze_schedules(4000);
	test_analyze_schedules(16000);
	test_timeline();
	test_stages();

	snprintf(g_tmp, sizeof g_tmp, "%s", "/tmp/hmem-unit-XXXXXX");
	if (!mkdtemp(g_tmp)) {
		check(0, "unit: a temporary directory can be made", "%s", strerror(errno));
	} else {
		test_expand();
		test_src();
		test_src_peek();
		test_trace_read();
		test_trace_handoff();
		nftw(g_tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	}
	fprintf(stderr, "# unit: %d passed, %d failed\n", g_pass, g_fail);
	return g_fail ? 1 : 0;
}
