/* script: what the rest of hmem sees of the Lua side (its top: lbind.h draws the rest), and
 * no Lua type in it. Loads a rule file or pack into a sandbox, calls its classify(row) once
 * per allocation, computes declared aggregations and calls its done(report).
 *
 * Ownership: an hm_script owns its Lua state and everything made for it; it keeps
 * pointers to the options' strings, to each hm_file it classified (rows point into its
 * series) and to the category table, which the caller keeps alive until hm_script_close.
 * It writes only the cat column of each series (analyze.h). */
#ifndef HM_SCRIPT_H
#define HM_SCRIPT_H

#include "analyze.h"
#include "budget.h"
#include "embedded.h" /* build/embedded.c includes this header */
#include "output.h"

#include <stdio.h>

typedef struct hm_script hm_script;

typedef struct hm_script_opts {
	const char *rules;   /* a path, or the name of a pack (shipped, on -I or HMEM_PATH) */
	const char **inc;    /* -I directories, searched before HMEM_PATH */
	int ninc;
	int allow_io;        /* --allow-io: the full standard library */
	const char *out_dir; /* --out DIR for hmem.write, or NULL */
	double timeout_s;    /* --timeout: longest a single call into the rules may run (0: none) */
	size_t mem_limit;    /* --lua-mem: most bytes the Lua heap may hold (0: none) */
	const char **set;    /* --set key=value (checked: a key before '='), as hmem.args */
	int nset;
	int quiet;           /* -q: hmem.note says nothing */
} hm_script_opts;

/* Load the rules into a new Lua state and resolve the hooks; categories the pack
 * declares are added to cats in order. NULL on failure with the message in err (a Lua
 * error reads "path:line: message"). The script keeps pointers to o's strings. */
hm_script *hm_script_open(const hm_script_opts *o, hm_strtab *cats, char *err, size_t errsz);

/* The rule file as reported ("examples/x.lua", or "pack size" for a shipped pack). */
const char *hm_script_name(const hm_script *s);

/* Set s->cat for every event of every series of f: allocations and unpaired frees are
 * classified by the rules (or the cache_by memo); a matched free inherits its
 * allocation's category. Returns 0, or -1 with the error, the event and a traceback in
 * err. f must stay alive as long as the script (a rule file may keep rows). */
int hm_script_classify(hm_script *s, hm_file *f, hm_strtab *cats, char *err, size_t errsz);

/* After the timelines: compute the declared aggregations into rep, point rep->colors at
 * the colours the pack declared (owned by s, valid until hm_script_close) and call
 * done(report); done stopped by hmem.fail is a success (the failure is in the verdict).
 * On success the Lua state is then closed (its finalizers run under the
 * --timeout too, before any output is written): after it only hm_script_name,
 * hm_script_calls, hm_script_cache_hits and hm_script_close may be called. Returns 0 or
 * -1 with err. */
int hm_script_finish(hm_script *s, hm_report *rep, char *err, size_t errsz);

/* The budgets the rule file declared with hmem.budget and the failures it asked for with
 * hmem.fail (owned by s, valid until hm_script_close; budget.h checks them). */
const hm_budgets *hm_script_verdict(const hm_script *s);

/* The hash of the rule file and every module it required while it loaded (16 hex
 * digits), which partials of one merge must share; valid until hm_script_close. */
const char *hm_script_digest(const hm_script *s);

/* classify calls made, and allocations answered from the cache_by memo (a memo per
 * trace, so the counts of traces add up whichever run read them). */
uint64_t hm_script_calls(const hm_script *s);
uint64_t hm_script_cache_hits(const hm_script *s);

void hm_script_close(hm_script *s);

/* `hmem packs`: the shipped packs and those found on -I and HMEM_PATH, with their
 * descriptions. Returns an exit code. */
int hm_script_list_packs(const hm_script_opts *o, FILE *out);


#endif
