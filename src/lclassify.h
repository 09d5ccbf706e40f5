/* lclassify: the classify loop (classify(row) once per allocation, the category of a
 * matched free taken from its allocation) and the cache_by memo that answers repeated
 * keys without calling Lua. A Lua binding file: calls lrow and lctx, never the host
 * (lbind.h); script.c holds the hook and passes it in.
 *
 * Ownership: the host embeds an hm_classify (zeroed), calls hm_classify_init once the
 * rules have loaded and hm_classify_free at the end; the memo's tables are its own. It
 * writes only the cat column of each series (analyze.h). */
#ifndef HM_LCLASSIFY_H
#define HM_LCLASSIFY_H

#include "lctx.h"
#include "lview.h"

typedef struct hm_classify {
	int cats_ref;             /* name -> category id (a registry table) */
	const char *cat_addr[16]; /* recent category names (interned strings cats_ref keeps) */
	int32_t cat_id[16];
	uint64_t calls, cache_hits, cache_clears;
	int cache_fields[16];     /* cache_by: field ids, HM_F_NONE for a function */
	int cache_fn[16];         /* the functions' registry references */
	int ncache;
	hm_strtab fn_ctx;         /* (function, context) -> id */
	uint32_t *fn_val;         /* id -> its answer, an id in fn_vals */
	size_t nfn_val, fn_cap;
	hm_strtab fn_vals;        /* the functions' answers as key bytes */
	struct hm_fn_recent {     /* recent (function + 1, context) -> answer, before fn_ctx */
		int64_t ctx;
		int fn;
		uint32_t val;
	} fn_recent[1024];
	struct hm_memo_slot {     /* the memo: open addressing on the key's hash */
		uint64_t hash;
		uint32_t off, len;      /* the key's bytes in memo_keys; len 0: empty */
		int32_t cat;            /* -1: not answered yet */
	} *memo;
	size_t memo_slots, memo_n;
	char *memo_keys;
	size_t memo_keylen, memo_keycap;
	char *keybuf, *valbuf;
	size_t keycap, valcap;
	hm_view view;             /* the rules' view of the context (lview.h) */
} hm_classify;

/* Push hmem.cache_by{field, ...}: it fills c's fields while the rules load (the state's
 * declarations not closed), an error after. c must outlive the state. [-0, +1, m] */
void hm_lua_push_cache_by(lua_State *L, hm_classify *c);

/* "view" or "free_view" when cache_by names that field but the rules declare no view
 * function (read once they have loaded), else NULL: such rules fail at load, not at their
 * first row (issue 28). */
const char *hm_classify_view_missing(const hm_classify *c);

/* The cache_by memo forgets every answer (hmem.cache_clear, and each new trace). */
void hm_classify_forget(hm_classify *c);

/* Push hmem.cache_clear(): the memo forgets what it remembered. c must outlive the
 * state. [-0, +1, m] */
void hm_lua_push_cache_clear(lua_State *L, hm_classify *c);

/* Once the rules have loaded. [-0, +0, m] */
void hm_classify_init(hm_classify *c, lua_State *L);

/* Set the cat of every event of every series of f, calling the function held by fn_ref
 * (the rules' classify) in x's state for each allocation and unpaired free the memo does
 * not answer; keep: rows are kept for a later phase (lrow.h). Returns 0, or -1 with the
 * error, the event and a traceback in err (path names the rule file in a limit's
 * message). New category names are interned into cats. */
int hm_classify_run(hm_classify *c, hm_lctx *x, int fn_ref, int keep, hm_file *f, hm_strtab *cats, const char *path,
		    char *err, size_t errsz);

void hm_classify_free(hm_classify *c);

#endif
