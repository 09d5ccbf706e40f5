#include "ranks.h"
#include "util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A series' device kind: its device name up to the ':' ("cuda:1" -> "cuda"). */
static void kind_of(const hm_series *s, char *buf, size_t n)
{
	size_t l = strcspn(s->device, ":");
	if (l >= n)
		l = n - 1;
	memcpy(buf, s->device, l);
	buf[l] = 0;
}

/* The series of one kind, in report order. */
typedef struct members {
	char kind[40];
	const hm_file **f;
	const hm_series **s;
	size_t n, cap;
} members;

static void members_add(members *m, const hm_file *f, const hm_series *s)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 8;
		m->f = hm_xrealloc(m->f, m->cap * sizeof *m->f);
		m->s = hm_xrealloc(m->s, m->cap * sizeof *m->s);
	}
	m->f[m->n] = f, m->s[m->n] = s, m->n++;
}

/* Every kind seen, in the order first seen. */
static members *group(const hm_report *r, size_t *nk)
{
	members *k = NULL;
	size_t n = 0;
	for (size_t i = 0; i < r->nfiles; i++)
		for (size_t si = 0; si < r->files[i]->nseries; si++) {
			const hm_series *s = &r->files[i]->series[si];
			char kind[40];
			kind_of(s, kind, sizeof kind);
			size_t j = 0;
			while (j < n && strcmp(k[j].kind, kind))
				j++;
			if (j == n) {
				k = hm_xrealloc(k, (n + 1) * sizeof *k);
				memset(&k[n], 0, sizeof k[n]);
				memcpy(k[n].kind, kind, sizeof kind);
				n++;
			}
			members_add(&k[j], r->files[i], s);
		}
	*nk = n;
	return k;
}

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The row of values v[0, m->n), in report order; v is sorted on return. */
static void stats(hm_rankrow *row, const members *m, int64_t *v)
{
	size_t n = m->n, at = 0;
	__int128 sum = 0;
	for (size_t i = 0; i < n; i++) {
		sum += v[i];
		if (v[i] > v[at])
			at = i;
	}
	row->n = n;
	row->max = v[at];
	row->max_f = m->f[at], row->max_s = m->s[at];
	qsort(v, n, sizeof *v, by_value);
	row->min = v[0];
	int64_t lo = v[(n - 1) / 2], hi = v[n / 2];
	row->median = lo + (int64_t)(((__int128)hi - lo) / 2);
	row->mean = (int64_t)(sum / (__int128)n);
	row->imbalance = sum > 0 ? (int64_t)(((__int128)row->max * (__int128)n * 2000 + sum) / (2 * sum)) : HM_NONE;
}

static int by_max(const void *a, const void *b)
{
	const hm_rankrow *x = a, *y = b;
	if (x->max != y->max)
		return x->max < y->max ? 1 : -1;
	return (x->cat > y->cat) - (x->cat < y->cat);
}

/* The device row, then the categories with a peak by highest peak, of one kind, into rows. */
static size_t kind_rows(const hm_report *r, const members *m, hm_rankrow *rows)
{
	int64_t *v = hm_xcalloc(m->n, sizeof *v);
	size_t nr = 0;
	for (size_t i = 0; i < m->n; i++)
		v[i] = m->s[i]->peak;
	rows[nr].cat = HM_RANKS_DEVICE;
	stats(&rows[nr++], m, v);
	for (size_t c = 0; c < r->cats->n; c++) {
		int some = 0; /* a category at 0 bytes on every series says nothing */
		for (size_t i = 0; i < m->n; i++) {
			const hm_series *s = m->s[i];
			v[i] = c < s->ncats && s->cats[c].used ? s->cats[c].peak : 0;
			some |= v[i] != 0;
		}
		if (!some)
			continue;
		rows[nr].cat = c;
		stats(&rows[nr++], m, v);
	}
	free(v);
	qsort(rows + 1, nr - 1, sizeof *rows, by_max);
	for (size_t i = 0; i < nr; i++)
		memcpy(rows[i].kind, m->kind, sizeof m->kind);
	return nr;
}

typedef struct block {
	size_t from, n, seen;
	int64_t max;
} block;

static int by_block(const void *a, const void *b)
{
	const block *x = a, *y = b;
	if (x->max != y->max)
		return x->max < y->max ? 1 : -1;
	return (x->seen > y->seen) - (x->seen < y->seen);
}

void hm_ranks_compute(const hm_report *r, hm_ranks *out)
{
	size_t nk;
	members *k = group(r, &nk);
	hm_rankrow *rows = hm_xcalloc(nk * (r->cats->n + 1) + 1, sizeof *rows);
	block *b = hm_xcalloc(nk + 1, sizeof *b);
	size_t nr = 0, nb = 0;
	for (size_t j = 0; j < nk; j++) {
		if (k[j].n >= 2) {
			size_t n = kind_rows(r, &k[j], rows + nr);
			b[nb++] = (block){nr, n, j, rows[nr].max};
			nr += n;
		}
		free(k[j].f), free(k[j].s);
	}
	free(k);
	qsort(b, nb, sizeof *b, by_block);
	out->rows = hm_xcalloc(nr + 1, sizeof *out->rows);
	out->n = 0;
	for (size_t i = 0; i < nb; i++)
		for (size_t j = 0; j < b[i].n; j++)
			out->rows[out->n++] = rows[b[i].from + j];
	free(rows);
	free(b);
}

void hm_ranks_free(hm_ranks *k)
{
	free(k->rows);
	k->rows = NULL;
	k->n = 0;
}

typedef struct claim {
	int64_t rank;
	size_t seen; /* the file's position among the kind's series */
} claim;

static int by_claim(const void *a, const void *b)
{
	const claim *x = a, *y = b;
	if (x->rank != y->rank)
		return (x->rank > y->rank) - (x->rank < y->rank);
	return (x->seen > y->seen) - (x->seen < y->seen);
}

/* Two traces (files) naming the same rank for one kind are two runs of one rank mixed up,
 * or a rank taken from a file name by mistake: their figures count twice. Said once per
 * (kind, rank), naming the first two traces; the report still counts every series. */
size_t hm_ranks_warn_duplicates(const hm_report *r, int quiet)
{
	size_t nk, dups = 0;
	members *k = group(r, &nk);
	for (size_t j = 0; j < nk; j++) {
		const members *m = &k[j];
		claim *c = hm_xcalloc(m->n + 1, sizeof *c);
		size_t nc = 0;
		for (size_t a = 0; a < m->n; a++) /* one claim per file: its series are adjacent */
			if (m->f[a]->t->rank != HM_NONE && (a == 0 || m->f[a - 1] != m->f[a]))
				c[nc++] = (claim){m->f[a]->t->rank, a};
		qsort(c, nc, sizeof *c, by_claim);
		for (size_t a = 0; a + 1 < nc; a++) {
			if (c[a].rank != c[a + 1].rank || (a > 0 && c[a - 1].rank == c[a].rank))
				continue;
			dups++;
			if (!quiet)
				hm_eprintf("hmem: warning: rank %" PRId64 " is claimed by two traces for %s: %s and %s "
					   "(the cross-rank report counts both)\n", c[a].rank, m->kind, m->f[c[a].seen]->t->path,
					   m->f[c[a + 1].seen]->t->path);
		}
		free(c);
		free(m->f), free(m->s);
	}
	free(k);
	return dups;
}

void hm_ranks_fmt_milli(char *buf, size_t n, int64_t milli)
{
	if (milli == HM_NONE)
		snprintf(buf, n, "%s", "");
	else
		snprintf(buf, n, "%" PRId64 ".%03" PRId64, milli / 1000, milli % 1000);
}
