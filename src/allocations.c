#include "allocations.h"
#include "fields.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A field's value as a CSV cell: nothing for nil, text quoted by hm_csv_str. */
static void cell(FILE *f, const hm_rowref *r, int field, const hm_strtab *cats)
{
	hm_value v;
	putc(',', f);
	if (!field)
		return; /* a field this hmem does not have yet: an empty column */
	hm_field_get(r, field, cats, &v);
	if (v.type == HM_V_INT)
		fprintf(f, "%" PRId64, v.i);
	else if (v.type == HM_V_NUM)
		fprintf(f, "%.17g", v.d);
	else if (v.type == HM_V_STR)
		hm_csv_str(f, v.s, v.len);
	else if (v.type == HM_V_BOOL)
		fputs(v.i ? "true" : "false", f);
}

/* A time in µs from integer ns, exactly (a double of ns since the epoch would not be). */
static void us(FILE *f, int64_t ns)
{
	char b[40];
	putc(',', f);
	hm_fmt_us(b, ns);
	fputs(b, f);
}

/* The annotations and ops around event e, outermost first, joined by " > ": where in the
 * program it happened, without a rule pack's phase names. */
static void context(FILE *f, const hm_file *hf, uint32_t e, char **buf, size_t *cap)
{
	int32_t sl[64];
	size_t n = hm_context(hf, e, HM_KIND(HM_SL_OP) | HM_KIND(HM_SL_ANNOTATION), sl, 64);
	size_t len = hm_names_join(hf->t, HM_F_OPS, sl, n > 64 ? 64 : n, buf, cap);
	putc(',', f);
	if (len)
		hm_csv_str(f, *buf, len);
}

void hm_write_allocations(FILE *f, const hm_report *r)
{
	/* frame: the row field, the innermost user Python frame (empty where none encloses the
	 * event; README "From hmem to a DataFrame"). */
	int frame = hm_field_id("frame", 5);
	static const int fields[] = {HM_F_BYTES, HM_F_CATEGORY, HM_F_OP, HM_F_MODULE};
	char *buf = NULL;
	size_t cap = 0;
	fputs("path,rank,device,alloc_ts,free_ts,lifetime,bytes,category,op,module,frame,step,context\n", f);
	for (size_t i = 0; i < r->nfiles; i++) {
		const hm_file *hf = r->files[i];
		const hm_mem *m = &hf->t->mem;
		for (size_t si = 0; si < hf->nseries; si++) {
			const hm_series *s = &hf->series[si];
			for (size_t k = 0; k < s->n; k++) {
				uint32_t e = s->ev[k];
				int64_t bytes = hm_mem_bytes(m, e);
				if (bytes == 0 || (bytes < 0 && s->partner[k] >= 0))
					continue; /* a zero-byte event, or the free of a row already written */
				hm_rowref ref = {hf, s, (uint32_t)k};
				hm_csv_str(f, hf->t->path, strlen(hf->t->path));
				putc(',', f);
				if (hf->t->rank != HM_NONE)
					fprintf(f, "%" PRId64, hf->t->rank);
				putc(',', f);
				hm_csv_str(f, s->device, strlen(s->device));
				/* alloc_ts, free_ts, lifetime: a free classified by itself has no
				 * allocation in the trace, an allocation never freed no free. */
				int32_t p = s->partner[k];
				if (bytes > 0)
					us(f, hm_mem_ts(m, e));
				else
					putc(',', f);
				if (bytes < 0 || p >= 0)
					us(f, hm_mem_ts(m, bytes < 0 ? e : s->ev[p]));
				else
					putc(',', f);
				if (bytes > 0 && p >= 0)
					us(f, hm_mem_ts(m, s->ev[p]) - hm_mem_ts(m, e));
				else
					putc(',', f);
				for (size_t j = 0; j < sizeof fields / sizeof *fields; j++)
					cell(f, &ref, fields[j], r->cats);
				cell(f, &ref, frame, r->cats);
				cell(f, &ref, HM_F_STEP, r->cats);
				context(f, hf, e, &buf, &cap);
				putc('\n', f);
			}
		}
	}
	free(buf);
}
