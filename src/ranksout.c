#include "ranksout.h"
#include "ranks.h"
#include "cells.h"
#include "jsonw.h"
#include "util.h"

#include <inttypes.h>
#include <string.h>

/* A row's subject: its category's name, or "(device peak)". */
static void row_name(const hm_report *r, const hm_rankrow *w, const char **s, size_t *n)
{
	if (w->cat == HM_RANKS_DEVICE)
		*s = "(device peak)", *n = 13;
	else
		*s = r->cats->str[w->cat], *n = r->cats->len[w->cat];
}

void hm_ranks_summary(FILE *f, const hm_report *r, size_t width)
{
	hm_ranks k;
	hm_ranks_compute(r, &k);
	const char *dim = r->color ? "\033[2m" : "", *bold = r->color ? "\033[1m" : "", *off = r->color ? "\033[0m" : "";
	for (size_t i = 0; i < k.n; i++) {
		const hm_rankrow *w = &k.rows[i];
		char b[4][32], ratio[32];
		if (w->cat == HM_RANKS_DEVICE) {
			fprintf(f, "\n%sacross ranks: %s, %zu series%s (imbalance = max/mean)\n", bold, w->kind, w->n, off);
			fprintf(f, "%s    %-*s %12s %12s %12s %12s %9s  %s%s\n", dim, (int)width, "category", "max", "min", "median",
				"mean", "max/mean", "max at", off);
		}
		const char *s;
		size_t n;
		row_name(r, w, &s, &n);
		hm_fmt_bytes(b[0], sizeof b[0], w->max);
		hm_fmt_bytes(b[1], sizeof b[1], w->min);
		hm_fmt_bytes(b[2], sizeof b[2], w->median);
		hm_fmt_bytes(b[3], sizeof b[3], w->mean);
		hm_ranks_fmt_milli(ratio, sizeof ratio, w->imbalance);
		fputs("    ", f);
		hm_put_col(f, s, n, width);
		fprintf(f, " %12s %12s %12s %12s %9s  ", b[0], b[1], b[2], b[3], *ratio ? ratio : "-");
		if (w->max_f->t->rank != HM_NONE)
			fprintf(f, "rank %" PRId64 " ", w->max_f->t->rank);
		fprintf(f, "%s ", w->max_s->device);
		hm_put_col(f, w->max_f->t->path, strlen(w->max_f->t->path), 0);
		putc('\n', f);
	}
	hm_ranks_free(&k);
}

void hm_ranks_csv(FILE *f, const hm_report *r)
{
	hm_ranks k;
	hm_ranks_compute(r, &k);
	for (size_t i = 0; i < k.n; i++) {
		const hm_rankrow *w = &k.rows[i];
		const hm_trace *t = w->max_f->t;
		hm_csv_str(f, t->path, strlen(t->path));
		putc(',', f);
		if (t->rank != HM_NONE)
			fprintf(f, "%" PRId64, t->rank);
		putc(',', f);
		hm_csv_str(f, w->max_s->device, strlen(w->max_s->device));
		fputs(",,,,", f);
		if (w->cat != HM_RANKS_DEVICE)
			hm_csv_str(f, r->cats->str[w->cat], r->cats->len[w->cat]);
		char ratio[32];
		hm_ranks_fmt_milli(ratio, sizeof ratio, w->imbalance);
		fprintf(f, ",,,,,,%s,", w->cat == HM_RANKS_DEVICE ? "rank_peak" : "rank_category");
		hm_csv_str(f, w->kind, strlen(w->kind));
		fprintf(f, ",%zu,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%s\n", w->n, w->max, w->min, w->median, w->mean,
			ratio);
	}
	hm_ranks_free(&k);
}

void hm_ranks_json(FILE *f, const hm_report *r)
{
	hm_ranks k;
	hm_ranks_compute(r, &k);
	putc('[', f);
	for (size_t i = 0; i < k.n; i++) {
		const hm_rankrow *w = &k.rows[i];
		fputs(i ? ",\n  {\"device_kind\": " : "\n  {\"device_kind\": ", f);
		hm_json_str(f, w->kind, strlen(w->kind), 0);
		fputs(", \"category\": ", f);
		if (w->cat == HM_RANKS_DEVICE)
			fputs("null", f);
		else
			hm_json_str(f, r->cats->str[w->cat], r->cats->len[w->cat], 0);
		fprintf(f, ", \"series\": %zu,\n   \"max_bytes\": %" PRId64 ", \"max_path\": ", w->n, w->max);
		hm_json_str(f, w->max_f->t->path, strlen(w->max_f->t->path), 0);
		fputs(", \"max_rank\": ", f);
		hm_json_opt(f, w->max_f->t->rank);
		fputs(", \"max_device\": ", f);
		hm_json_str(f, w->max_s->device, strlen(w->max_s->device), 0);
		char ratio[32];
		hm_ranks_fmt_milli(ratio, sizeof ratio, w->imbalance);
		fprintf(f, ",\n   \"min_bytes\": %" PRId64 ", \"median_bytes\": %" PRId64 ", \"mean_bytes\": %" PRId64
			", \"imbalance\": %s}", w->min, w->median, w->mean, *ratio ? ratio : "null");
	}
	putc(']', f);
	hm_ranks_free(&k);
}
