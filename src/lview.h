/* lview: a pack's view of the context. A pack that declares view(name, kind) says which
 * names of a row's context it looks at, as short codes; hmem calls the function once per
 * distinct name and kind, and names each distinct sequence of codes with an integer:
 * row.view (the thread, annotations, python frames and ops enclosing the event) and
 * row.free_view (the ops enclosing its free). Rows of a thousand contexts that a pack
 * tells apart by three facts then share a handful of views, so cache_by{"view", ...}
 * answers them without Lua. A Lua binding file: calls the plain-C fields and lctx.
 *
 * Ownership: hm_classify embeds an hm_view (zeroed, ref LUA_NOREF when none is declared)
 * and frees it; the state's rows point at it (lctx.h) while the state lives. */
#ifndef HM_LVIEW_H
#define HM_LVIEW_H

#include "lctx.h"

/* Field ids of row.view and row.free_view: beyond the plain-C fields (fields.h). */
enum { HM_F_VIEW = HM_F_COUNT + 1, HM_F_FREE_VIEW };

typedef struct hm_view {
	int ref;              /* the pack's view function; LUA_NOREF (or 0 when zeroed): none */
	hm_strtab names;      /* kind letter + name -> id */
	uint32_t *code;       /* name id -> its code's id in codes + 1; 0: left out, UINT32_MAX: not asked */
	size_t ncode, code_cap;
	hm_strtab codes;      /* the function's answers */
	const void *trace;    /* the trace the name-id memo below is for */
	uint32_t *by_name[3]; /* annotation, python, op: trace name id -> code + 2; 0: not met, 1: left out */
	size_t by_name_n;
	const char *thread;   /* the thread name met last (its bytes stay while the trace does) */
	uint32_t thread_code;
	struct hm_view_recent { /* recent (context id, side) -> view, before ctxs */
		int64_t ctx;
		uint32_t side, view;
	} recent[1024];
	hm_strtab ctxs;       /* side letter + context id -> id */
	uint32_t *ctx_view;   /* ctxs id -> view id; 0: not worked out */
	size_t nctx, ctx_cap;
	hm_strtab seqs;       /* sequences of code ids -> view id - 1 */
	uint32_t *seq;
	size_t seq_cap;
} hm_view;

/* HM_F_VIEW or HM_F_FREE_VIEW for their names, else HM_F_NONE. */
int hm_view_field(const char *name, size_t len);

/* Every row field's name, the view's included, for messages: into buf[cap] as
 * hm_field_names (HM_FIELD_NAMES_CAP is room for them). */
size_t hm_view_field_names(char *buf, size_t cap);

/* Take the function at idx as the rules' view. [-0, +0, m] */
void hm_view_set(hm_view *v, lua_State *L, int idx);

/* The view id (from 1) of the row's context (field HM_F_VIEW) or of its free's
 * (HM_F_FREE_VIEW; HM_NONE when not freed in the trace). Names not met before go through
 * the view function: may raise, also when no view is declared. [-0, +0, e] */
int64_t hm_view_of(hm_view *v, lua_State *L, const hm_rowref *r, hm_ctxmemo *memo, int field);

/* Before each trace's classify: the memo by name id is for one trace (a trace freed may
 * leave its address to the next). */
void hm_view_next_trace(hm_view *v);

void hm_view_free(hm_view *v);

#endif
