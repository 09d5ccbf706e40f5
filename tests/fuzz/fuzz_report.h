/* The report the fuzz targets hand to the writers (a file's series and its categories, top
 * 5), and the JSON and text writers run into memory: each target's last step. */
#ifndef FUZZ_REPORT_H
#define FUZZ_REPORT_H

#include "output.h"

#include <stdio.h>
#include <stdlib.h>

static inline hm_report fuzz_report(hm_file **f, const hm_strtab *cats, const char *rules)
{
	hm_report rep = {0};
	rep.rules = rules;
	rep.files = f;
	rep.nfiles = 1;
	rep.cats = cats;
	rep.top = 5;
	return rep;
}

/* --json and the summary of rep, written to memory and dropped (a sanitizer sees them). */
static inline void fuzz_write_json_summary(const hm_report *rep)
{
	char *buf;
	size_t n;
	FILE *out = open_memstream(&buf, &n);
	hm_write_json(out, rep);
	hm_write_summary(out, rep);
	fclose(out);
	free(buf);
}

#endif
