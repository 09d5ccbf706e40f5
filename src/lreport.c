/* What done(report) sees: the report as tables, series as userdata with methods, and
 * the group-bys declared with hmem.aggregate, computed here with C hash tables (Lua is
 * called only for key or where functions). */
#define _GNU_SOURCE /* qsort_r */
#include "lreport.h"
#include "lbind.h"
#include "lexplain.h"
#include "lranks.h"
#include "lrow.h"
#include "timeline.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

typedef struct series_ud {
	const hm_file *f;
	const hm_series *s;
	const hm_report *rep;
} series_ud;

static void push_opt_int(lua_State *L, int64_t v)
{
	if (v == HM_NONE)
		lua_pushnil(L);
	else
		lua_pushinteger(L, (lua_Integer)v);
}

/* A list of rows for positions pos[0..n). [-0, +1, m] */
static void push_rows(lua_State *L, const series_ud *u, const uint32_t *pos, size_t n)
{
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		hm_lua_row_push(L, u->f, u->s, pos[i], u->rep->cats);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

/* series:timeline(category [, {points = N}]) -> ts (µs) and bytes arrays: the value
 * before the first event and after every event; with points, at most 2N points, the
 * min and max of each of N time buckets, so no peak is lost. The points are made in a
 * userdata, so nothing malloc'd is held while they are pushed. [-?, +2, e] */
static int series_timeline(lua_State *L)
{
	const series_ud *u = luaL_checkudata(L, 1, HM_SERIES_META);
	size_t len;
	const char *name = luaL_checklstring(L, 2, &len);
	lua_Integer points = 0;
	if (lua_istable(L, 3)) {
		lua_getfield(L, 3, "points");
		points = luaL_optinteger(L, -1, 0);
		luaL_argcheck(L, points >= 0, 3, "points must be positive");
	}
	const hm_strtab *cats = u->rep->cats;
	long cat = -1;
	for (size_t c = 0; c < cats->n; c++)
		if (cats->len[c] == len && memcmp(cats->str[c], name, len) == 0)
			cat = (long)c;
	if (cat < 0)
		return luaL_error(L, "timeline: no category '%s'", name);
	size_t room = u->s->n + 1;
	if (points && (uint64_t)points < room / 2)
		room = 2 * (size_t)points;
	int64_t *val = lua_newuserdatauv(L, (cats->n + 2 * room) * sizeof *val, 0), *ts = val + cats->n, *bytes = ts + room;
	size_t n = hm_timeline_points(u->s, &u->f->t->mem, (size_t)cat, cats->n, (uint64_t)points, val, ts, bytes);
	lua_createtable(L, (int)n, 0);
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		lua_pushnumber(L, (lua_Number)ts[i] / 1000.0);
		lua_rawseti(L, -3, (lua_Integer)i + 1);
		lua_pushinteger(L, bytes[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 2;
}

/* series:live_at(ts) -> the rows live at ts (µs), largest first. The scratch buffer
 * is a userdata, so nothing malloc'd is held while rows are pushed. [-1, +1, e] */
static int series_live_at(lua_State *L)
{
	const series_ud *u = luaL_checkudata(L, 1, HM_SERIES_META);
	lua_Number ts = luaL_checknumber(L, 2);
	luaL_argcheck(L, ts == ts && ts > -9e15 && ts < 9e15, 2, "a time in µs within the trace's range");
	uint32_t *pos = lua_newuserdatauv(L, (u->s->n + 1) * sizeof *pos, 0);
	size_t n = hm_live_at(u->s, &u->f->t->mem, (int64_t)(ts * 1000.0 + (ts >= 0 ? 0.5 : -0.5)), pos, u->s->n);
	push_rows(L, u, pos, n);
	return 1;
}

/* series:allocations() -> every classified row (allocations and unpaired frees), in time
 * order. [-1, +1, m] */
static int series_allocations(lua_State *L)
{
	const series_ud *u = luaL_checkudata(L, 1, HM_SERIES_META);
	const hm_series *s = u->s;
	const hm_mem *m = &u->f->t->mem;
	lua_createtable(L, (int)s->allocs, 0);
	lua_Integer i = 0;
	for (size_t k = 0; k < s->n; k++) {
		int64_t b = hm_mem_bytes(m, s->ev[k]);
		if (b > 0 || (b < 0 && s->partner[k] < 0)) {
			hm_lua_row_push(L, u->f, u->s, (uint32_t)k, u->rep->cats);
			lua_rawseti(L, -2, ++i);
		}
	}
	return 1;
}

static const luaL_Reg series_methods[] = {
	{"timeline", series_timeline},
	{"live_at", series_live_at},
	{"allocations", series_allocations},
	{NULL, NULL},
};

/* Each OOM's live: the rows live at it, largest first, --top of them. [-0, +0, m] */
static void oom_live(lua_State *L, const series_ud *u)
{
	size_t top = u->rep->top;
	uint32_t *pos = lua_newuserdatauv(L, (top ? top : 1) * sizeof *pos, 0);
	for (size_t i = 0; i < u->s->nooms; i++) {
		lua_rawgeti(L, -2, (lua_Integer)i + 1);
		size_t n = hm_live_at(u->s, &u->f->t->mem, u->s->ooms[i].ts, pos, top);
		push_rows(L, u, pos, n < top ? n : top);
		lua_setfield(L, -2, "live");
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}

/* The fields of a series, looked up by name in a table (series_index's upvalue 1) rather
 * than compared one by one. A field that makes a table (kept) makes it once per series:
 * the series' user value keeps it, so that s.live_at_peak[i] in a loop over i builds the
 * list once, not once per i (issue 26), and s.steps == s.steps. */
enum {
	SF_PATH, SF_RANK, SF_DEVICE, SF_MEMORY_EVENTS, SF_ALLOCS, SF_FREES, SF_MATCHED_FREES, SF_BEFORE,
	SF_PEAK_BYTES, SF_PEAK_TS, SF_END_BYTES, SF_MAX_RESERVED, SF_MISMATCHES, SF_SNAPSHOT, SF_CATEGORIES,
	SF_LIVE_AT_PEAK, SF_EXPLAIN /* lexplain.h's */
};
static const struct series_field {
	const char *name;
	int id, kept;
} series_fields[] = {
	{"path", SF_PATH, 0}, {"rank", SF_RANK, 0}, {"device", SF_DEVICE, 0}, {"memory_events", SF_MEMORY_EVENTS, 0},
	{"allocs", SF_ALLOCS, 0}, {"frees", SF_FREES, 0}, {"matched_frees", SF_MATCHED_FREES, 0},
	{"before_trace_bytes", SF_BEFORE, 0}, {"peak_bytes", SF_PEAK_BYTES, 0}, {"peak_ts", SF_PEAK_TS, 0},
	{"end_bytes", SF_END_BYTES, 0}, {"max_reserved_bytes", SF_MAX_RESERVED, 0}, {"mismatches", SF_MISMATCHES, 0},
	{"snapshot", SF_SNAPSHOT, 0}, {"categories", SF_CATEGORIES, 1}, {"live_at_peak", SF_LIVE_AT_PEAK, 1},
	{"steps", SF_EXPLAIN, 1}, {"steps_note", SF_EXPLAIN, 0}, {"ooms", SF_EXPLAIN, 1}, {"leak", SF_EXPLAIN, 1},
	{"reserved_unallocated_at_peak", SF_EXPLAIN, 0}, {"max_reserved_unallocated", SF_EXPLAIN, 0},
	{"max_reserved_unallocated_ts", SF_EXPLAIN, 0},
};

/* series.categories: {name=, peak_bytes=, ...} per category used. [-0, +1, m] */
static void push_categories(lua_State *L, const series_ud *u)
{
	const hm_series *s = u->s;
	lua_newtable(L);
	lua_Integer i = 0;
	for (size_t c = 0; c < s->ncats; c++) {
		const hm_catstat *cs = &s->cats[c];
		if (!cs->used)
			continue;
		lua_createtable(L, 0, 6);
		lua_pushlstring(L, u->rep->cats->str[c], u->rep->cats->len[c]);
		lua_setfield(L, -2, "name");
		const char *keys[] = {"peak_bytes", "bytes_at_peak", "end_bytes", "allocs", "alloc_bytes"};
		int64_t vals[] = {cs->peak, cs->at_peak, cs->end, (int64_t)cs->allocs, (int64_t)cs->alloc_bytes};
		for (int j = 0; j < 5; j++) {
			lua_pushinteger(L, vals[j]);
			lua_setfield(L, -2, keys[j]);
		}
		lua_rawseti(L, -2, ++i);
	}
}

/* The value of field f of the series. [-0, +1, m] */
static void push_field(lua_State *L, const series_ud *u, const struct series_field *f)
{
	const hm_series *s = u->s;
	const hm_trace *t = u->f->t;
	switch (f->id) {
	case SF_PATH: lua_pushstring(L, t->path); break;
	case SF_RANK: push_opt_int(L, t->rank); break;
	case SF_DEVICE: lua_pushstring(L, s->device); break;
	case SF_MEMORY_EVENTS: lua_pushinteger(L, (lua_Integer)s->n); break;
	case SF_ALLOCS: lua_pushinteger(L, (lua_Integer)s->allocs); break;
	case SF_FREES: lua_pushinteger(L, (lua_Integer)s->frees); break;
	case SF_MATCHED_FREES: lua_pushinteger(L, (lua_Integer)s->matched_frees); break;
	case SF_BEFORE: lua_pushinteger(L, s->start_bytes); break;
	case SF_PEAK_BYTES: lua_pushinteger(L, s->peak); break;
	case SF_PEAK_TS: lua_pushnumber(L, (lua_Number)s->peak_ts / 1000.0); break;
	case SF_END_BYTES: lua_pushinteger(L, s->end_bytes); break;
	case SF_MAX_RESERVED: push_opt_int(L, s->max_reserved); break;
	case SF_MISMATCHES: lua_pushinteger(L, (lua_Integer)s->mismatches); break;
	case SF_SNAPSHOT: lua_pushboolean(L, t->snap != NULL); break;
	case SF_CATEGORIES: push_categories(L, u); break;
	case SF_LIVE_AT_PEAK: {
		size_t top = u->rep->top; /* --top 0: none, as in --json (issue 11) */
		uint32_t *pos = lua_newuserdatauv(L, top * sizeof *pos, 0);
		size_t n = hm_live_at_peak(s, &t->mem, pos, top);
		push_rows(L, u, pos, n < top ? n : top);
		lua_remove(L, -2); /* pos */
		break;
	}
	default:
		hm_lua_explain_field(L, u->rep->cats, u->f, s, f->name);
		if (f->name[0] == 'o') /* ooms */
			oom_live(L, u);
		break;
	}
}

/* series.field or series:method: upvalue 1 maps field names to their series_field, upvalue
 * 2 method names to their functions. [-0, +1, e] */
static int series_index(lua_State *L)
{
	const series_ud *u = luaL_checkudata(L, 1, HM_SERIES_META);
	const char *k = luaL_checkstring(L, 2);
	lua_pushvalue(L, 2);
	if (lua_rawget(L, lua_upvalueindex(2)) != LUA_TNIL) /* a method */
		return 1;
	lua_pushvalue(L, 2);
	const struct series_field *f = lua_rawget(L, lua_upvalueindex(1)) == LUA_TLIGHTUSERDATA ? lua_touserdata(L, -1) : NULL;
	if (!f)
		return luaL_error(L, "series has no field '%s' (fields: path, rank, device, memory_events, allocs, "
				  "frees, matched_frees, before_trace_bytes, peak_bytes, peak_ts, end_bytes, "
				  "max_reserved_bytes, mismatches, categories, live_at_peak, " HM_LUA_EXPLAIN_FIELDS
				  "; methods: timeline, live_at, allocations)", k);
	if (!f->kept) {
		push_field(L, u, f);
		return 1;
	}
	if (lua_getiuservalue(L, 1, 1) != LUA_TTABLE) { /* the series' kept tables, made at the first */
		lua_pop(L, 1);
		lua_createtable(L, 0, 4);
		lua_pushvalue(L, -1);
		lua_setiuservalue(L, 1, 1);
	}
	lua_pushvalue(L, 2);
	if (lua_rawget(L, -2) == LUA_TNIL) {
		lua_pop(L, 1);
		push_field(L, u, f);
		lua_pushvalue(L, 2);
		lua_pushvalue(L, -2);
		lua_rawset(L, -4);
	}
	return 1;
}

static int series_tostring(lua_State *L)
{
	const series_ud *u = luaL_checkudata(L, 1, HM_SERIES_META);
	lua_pushfstring(L, "hmem.series(%s %s)", u->f->t->path, u->s->device);
	return 1;
}

void hm_lua_series_register(lua_State *L)
{
	luaL_newmetatable(L, HM_SERIES_META);
	size_t nf = sizeof series_fields / sizeof *series_fields;
	lua_createtable(L, 0, (int)nf);
	for (size_t i = 0; i < nf; i++) {
		lua_pushlightuserdata(L, (void *)&series_fields[i]);
		lua_setfield(L, -2, series_fields[i].name);
	}
	luaL_newlib(L, series_methods);
	lua_pushcclosure(L, series_index, 2);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, series_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pushboolean(L, 0); /* getmetatable(series) is false: no rule file can change it */
	lua_setfield(L, -2, "__metatable");
	lua_pop(L, 1);
}

static void push_cell(lua_State *L, const hm_cell *c)
{
	switch (c->type) {
	case HM_V_INT: lua_pushinteger(L, (lua_Integer)c->i); break;
	case HM_V_NUM: lua_pushnumber(L, c->d); break;
	case HM_V_STR: lua_pushstring(L, c->s); break;
	case HM_V_BOOL: lua_pushboolean(L, (int)c->i); break;
	default: lua_pushnil(L); break;
	}
}

void hm_lua_report_push(lua_State *L, const hm_report *rep)
{
	hm_lua_rows(L)->cats = rep->cats; /* rows classify kept read their category from now on */
	lua_createtable(L, 0, 6);
	lua_pushstring(L, rep->rules ? rep->rules : "");
	lua_setfield(L, -2, "rules");
	lua_createtable(L, (int)rep->cats->n, 0);
	for (size_t c = 0; c < rep->cats->n; c++) {
		lua_pushlstring(L, rep->cats->str[c], rep->cats->len[c]);
		lua_rawseti(L, -2, (lua_Integer)c + 1);
	}
	lua_setfield(L, -2, "categories");
	lua_createtable(L, (int)rep->nfiles, 0);
	for (size_t i = 0; i < rep->nfiles; i++) {
		const hm_trace *t = rep->files[i]->t;
		lua_createtable(L, 0, 4);
		lua_pushstring(L, t->path);
		lua_setfield(L, -2, "path");
		push_opt_int(L, t->rank);
		lua_setfield(L, -2, "rank");
		lua_pushinteger(L, (lua_Integer)t->events);
		lua_setfield(L, -2, "events");
		lua_pushinteger(L, (lua_Integer)t->mem.n);
		lua_setfield(L, -2, "memory_events");
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_setfield(L, -2, "inputs");
	lua_newtable(L);
	lua_Integer n = 0;
	for (size_t i = 0; i < rep->nfiles; i++)
		for (size_t s = 0; s < rep->files[i]->nseries; s++) {
			series_ud *u = lua_newuserdatauv(L, sizeof *u, 1); /* user value: kept tables */
			u->f = rep->files[i];
			u->s = &rep->files[i]->series[s];
			u->rep = rep;
			luaL_setmetatable(L, HM_SERIES_META);
			lua_rawseti(L, -2, ++n);
		}
	lua_setfield(L, -2, "series");
	lua_createtable(L, 0, (int)rep->naggs);
	for (size_t a = 0; a < rep->naggs; a++) {
		const hm_agg *g = &rep->aggs[a];
		lua_createtable(L, 0, 2);
		lua_createtable(L, (int)g->ncols, 0);
		for (size_t c = 0; c < g->ncols; c++) {
			lua_pushstring(L, g->cols[c]);
			lua_rawseti(L, -2, (lua_Integer)c + 1);
		}
		lua_setfield(L, -2, "columns");
		lua_createtable(L, (int)g->nrows, 0);
		for (size_t r = 0; r < g->nrows; r++) {
			lua_createtable(L, 0, (int)g->ncols);
			for (size_t c = 0; c < g->ncols; c++) {
				push_cell(L, &g->cells[r * g->ncols + c]);
				lua_setfield(L, -2, g->cols[c]);
			}
			lua_rawseti(L, -2, (lua_Integer)r + 1);
		}
		lua_setfield(L, -2, "rows");
		lua_setfield(L, -2, g->name);
	}
	lua_setfield(L, -2, "aggregations");
	hm_lua_ranks_push(L, rep);
	lua_setfield(L, -2, "ranks");
}

/* ---- aggregations ---- */

/* Group state lives in a userdata with __gc, so a Lua error in a key or where function
 * frees it. */
typedef struct agg_work {
	hm_strtab keys; /* key bytes -> group */
	size_t ngroups, cap, nkeys;
	uint64_t *count;
	int64_t *isum, *imax;
	double *dsum, *dmax;
	uint8_t *has_max;
	int sum_float, max_float;
	hm_cell *keyvals; /* ngroups x nkeys, strings owned */
	char *buf, *tmp;
	size_t bufcap, tmpcap;
	size_t charged; /* bytes counted against --lua-mem (hm_lua_charge) */
} agg_work;

#define AGG_META "hmem.aggwork"

/* Frees the group state and gives its bytes back to the --lua-mem count. */
static void agg_free(lua_State *L, agg_work *w)
{
	for (size_t i = 0; i < w->ngroups * w->nkeys; i++)
		free(w->keyvals[i].s);
	free(w->keyvals), free(w->count), free(w->isum), free(w->imax), free(w->dsum), free(w->dmax);
	free(w->has_max), free(w->buf), free(w->tmp);
	hm_strtab_free(&w->keys);
	hm_lua_uncharge(L, w->charged);
	memset(w, 0, sizeof *w);
}

static int agg_gc(lua_State *L)
{
	agg_free(L, luaL_checkudata(L, 1, AGG_META));
	return 0;
}

/* What a rule's aggregation makes hmem keep in C counts against --lua-mem (a by
 * function returning a new key per row would otherwise take the machine). [-0, +0, e] */
static void charge(lua_State *L, agg_work *w, size_t bytes)
{
	hm_lua_charge(L, bytes);
	w->charged += bytes;
}

/* hm_grow, counted first. [-0, +0, e] */
static void grow_charged(lua_State *L, agg_work *w, void *arr, size_t *cap, size_t need, size_t elsz)
{
	if (need <= *cap)
		return;
	size_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	charge(L, w, (c - *cap) * elsz);
	hm_grow(arr, cap, need, elsz);
}

static void buf_add(lua_State *L, agg_work *w, size_t *n, const void *p, size_t len)
{
	grow_charged(L, w, &w->buf, &w->bufcap, *n + len, 1);
	memcpy(w->buf + *n, p, len);
	*n += len;
}

/* A key value (string, number, boolean or nil) appended as type + bytes; a string's
 * bytes start at *str. [-0, +0, e] */
static void key_add(lua_State *L, agg_work *w, size_t *n, const hm_value *v, size_t *str)
{
	char type = (char)v->type;
	buf_add(L, w, n, &type, 1);
	if (v->type == HM_V_STR) {
		buf_add(L, w, n, &v->len, sizeof v->len);
		*str = *n;
		buf_add(L, w, n, v->s, v->len);
	} else if (v->type == HM_V_NUM) {
		buf_add(L, w, n, &v->d, sizeof v->d);
	} else if (v->type != HM_V_NIL) {
		buf_add(L, w, n, &v->i, sizeof v->i);
	}
}

/* The value at the top of the stack as a key (popped after use by the caller). */
static void lua_key(lua_State *L, hm_value *v)
{
	memset(v, 0, sizeof *v);
	switch (lua_type(L, -1)) {
	case LUA_TNIL: break;
	case LUA_TBOOLEAN: v->type = HM_V_BOOL, v->i = lua_toboolean(L, -1); break;
	case LUA_TNUMBER:
		if (lua_isinteger(L, -1))
			v->type = HM_V_INT, v->i = lua_tointeger(L, -1);
		else
			v->type = HM_V_NUM, v->d = lua_tonumber(L, -1);
		break;
	case LUA_TSTRING: v->type = HM_V_STR, v->s = lua_tolstring(L, -1, &v->len); break;
	default: luaL_error(L, "aggregate: a by function returned a %s (expected a string, number, boolean or nil)", luaL_typename(L, -1));
	}
}

/* A list field as one key: names joined by " > " (outermost first). */
static void list_key(agg_work *w, const hm_rowref *r, int field, hm_value *v, char **tmp, size_t *tmpcap)
{
	int32_t buf[64];
	size_t n = hm_field_list(r, field, buf, 64);
	size_t len = hm_names_join(r->f->t, field, buf, n > 64 ? 64 : n, tmp, tmpcap);
	(void)w;
	v->type = HM_V_STR;
	v->s = *tmp ? *tmp : "";
	v->len = len;
}

static int number_of(const hm_value *v, int64_t *i, double *d)
{
	if (v->type == HM_V_INT)
		*i = v->i, *d = (double)v->i;
	else if (v->type == HM_V_NUM)
		*d = v->d, *i = v->d > -9e18 && v->d < 9e18 ? (int64_t)v->d : 0; /* the float sum is used then */
	else
		return v->type == HM_V_NIL ? 0 : -1;
	return 1;
}

/* The numeric field of a row for sum or max: 0 when nil, raises when not a number; sets
 * *is_float once a float is seen. [-0, +0, e] */
static int numeric(lua_State *L, const hm_rowref *r, int field, const hm_report *rep, const char *agg,
		   const char *what, int64_t *iv, double *dv, int *is_float)
{
	hm_value v;
	hm_field_get(r, field, rep->cats, &v);
	*iv = 0, *dv = 0;
	int ok = number_of(&v, iv, dv);
	if (ok < 0)
		luaL_error(L, "aggregate '%s': %s of '%s', which is not a number", agg, what, hm_field_name(field));
	if (v.type == HM_V_NUM)
		*is_float = 1;
	return ok;
}

/* Groups by their sum (by their count when the aggregation sums nothing: ctx's
 * by_count), largest first, then in the order they were met. */
typedef struct group_order {
	const agg_work *w;
	int by_count;
} group_order;

static int cmp_group(const void *a, const void *b, void *ctx)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const group_order *o = ctx;
	const agg_work *w = o->w;
	int sum = w->dsum && !o->by_count;
	double vx = sum ? (w->sum_float ? w->dsum[x] : (double)w->isum[x]) : (double)w->count[x];
	double vy = sum ? (w->sum_float ? w->dsum[y] : (double)w->isum[y]) : (double)w->count[y];
	if (vx != vy)
		return vx > vy ? -1 : 1;
	return x < y ? -1 : 1;
}

static char *cell_str(const char *p, size_t len)
{
	char *s = hm_xrealloc(NULL, len + 1);
	memcpy(s, p, len);
	s[len] = 0;
	return s;
}

/* Is the classified row at position k kept by the where mode? */
static int where_ok(const hm_series *s, size_t k, int where)
{
	if (where == 1 && !s->has_addr)
		return 0; /* without Addr nothing is known to be live */
	if (where == 1)
		return s->partner[k] < 0 || s->partner[k] > s->peak_k
			? (s->before[k] == HM_BEFORE_TRACE || s->before[k] == HM_BEFORE_WINDOW ? (long)k > s->peak_k
			   : s->before[k] == 2 || (long)k <= s->peak_k) : 0;
	if (where == 2)
		return s->before[k] != HM_BEFORE_TRACE && s->before[k] != HM_BEFORE_WINDOW && s->partner[k] < 0 && s->has_addr;
	return 1;
}

/* ---- declarations ---- */

static const char *const decl_keys[] = {"name", "by", "sum", "count", "max", "where", "top", "per", NULL};

/* The field name at the top of the stack, as an id; raises naming what it is for. */
static int decl_field(lua_State *L, const char *agg, const char *what)
{
	if (lua_type(L, -1) != LUA_TSTRING)
		luaL_error(L, "aggregate '%s': %s must be a field name", agg, what);
	size_t n;
	const char *f = lua_tolstring(L, -1, &n);
	int id = hm_field_id(f, n);
	if (!id) {
		char names[HM_FIELD_NAMES_CAP];
		hm_field_names(names, sizeof names);
		luaL_error(L, "aggregate '%s': %s '%s' is not a row field (fields: %s)", agg, what, f, names);
	}
	return id;
}

/* Checked in full, then copied: the rule's table is read once, raw (no metamethod runs),
 * with every value kept on the stack while it is looked at, and never read again. */
int hm_lua_aggregate_declare(lua_State *L)
{
	hm_decls *ds = hm_lua_decls(L);
	hm_aggdecl d = {0};
	if (ds->closed)
		return luaL_error(L, "aggregate: declare aggregations while the rule file loads, not later");
	if (!lua_istable(L, 1))
		return luaL_error(L, "aggregate: expected a table {name=, by=, ...}");
	lua_settop(L, 1);
	for (lua_pushnil(L); lua_next(L, 1); lua_pop(L, 1)) {
		int known = 0;
		for (int i = 0; decl_keys[i] && lua_type(L, -2) == LUA_TSTRING; i++)
			known |= !strcmp(lua_tostring(L, -2), decl_keys[i]);
		if (!known)
			return luaL_error(L, "aggregate: unknown key '%s' (keys: name, by, sum, count, max, where, top, per)",
						   lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : luaL_typename(L, -2));
	}
	for (int i = 0; decl_keys[i]; i++) { /* 2: name, 3: by, 4: sum, 5: count, 6: max, 7: where, 8: top, 9: per */
		lua_pushstring(L, decl_keys[i]);
		lua_rawget(L, 1);
	}
	size_t nlen;
	if (lua_type(L, 2) != LUA_TSTRING)
		return luaL_error(L, "aggregate: name must be a string");
	const char *name = lua_tolstring(L, 2, &nlen);
	if (strlen(name) != nlen)
		return luaL_error(L, "aggregate: name must not hold a NUL byte");
	for (size_t i = 0; i < ds->n; i++)
		if (!strcmp(ds->v[i].name, name))
			return luaL_error(L, "aggregate: '%s' is declared twice", name);
	/* per: "series" (the default) or "all"; rows of a CPU and a GPU, or of two ranks, are
	 * summed together only when asked (issue 17). */
	const char *per = lua_type(L, 9) == LUA_TSTRING ? lua_tostring(L, 9) : NULL;
	if (!lua_isnil(L, 9) && !(per && (!strcmp(per, "series") || !strcmp(per, "all"))))
		return luaL_error(L, "aggregate: per must be \"series\" (the default) or \"all\"");
	d.per_series = !per || !strcmp(per, "series");
	if (d.per_series)
		d.by_field[0] = HM_F_FILE, d.by_field[1] = HM_F_DEVICE, d.by_ref[0] = d.by_ref[1] = 0, d.nby = 2;
	/* by: a field name, a function, or a list of them; functions stay on the stack (10..). */
	int by = 3;
	if (lua_type(L, by) == LUA_TSTRING || lua_isfunction(L, by)) {
		lua_createtable(L, 1, 0);
		lua_pushvalue(L, by);
		lua_rawseti(L, -2, 1);
		lua_replace(L, by);
	}
	if (!lua_istable(L, by) || lua_rawlen(L, by) == 0)
		return luaL_error(L, "aggregate: by must list at least one field or function");
	for (lua_Integer i = 1; lua_rawgeti(L, by, i) != LUA_TNIL; i++) {
		d.by_pos[d.nby < 16 ? d.nby : 15] = (unsigned char)(i < 255 ? i : 255);
		if (d.nby == 16)
			return luaL_error(L, "aggregate '%s': at most 16 keys%s", name, d.per_series ? " (file and device included)" : "");
		if (lua_isfunction(L, -1)) {
			d.by_ref[d.nby++] = lua_gettop(L); /* a stack slot until the copy */
			continue;
		}
		if (lua_type(L, -1) != LUA_TSTRING)
			return luaL_error(L, "aggregate: each by entry must be a field name or a function(row)");
		d.by_ref[d.nby] = 0;
		d.by_field[d.nby] = decl_field(L, name, "by");
		lua_pop(L, 1);
		if (d.per_series && (d.by_field[d.nby] == HM_F_FILE || d.by_field[d.nby] == HM_F_DEVICE))
			continue; /* already a key, the first ones */
		d.nby++;
	}
	lua_pop(L, 1);
	if (!lua_isnil(L, 4))
		lua_pushvalue(L, 4), d.sum = decl_field(L, name, "sum"), lua_pop(L, 1);
	d.count = lua_type(L, 5) != LUA_TBOOLEAN || lua_toboolean(L, 5);
	if (!lua_isnil(L, 6))
		lua_pushvalue(L, 6), d.max = decl_field(L, name, "max"), lua_pop(L, 1);
	const char *wm = lua_type(L, 7) == LUA_TSTRING ? lua_tostring(L, 7) : NULL;
	d.where = wm && !strcmp(wm, "live_at_peak") ? 1 : wm && !strcmp(wm, "live_at_end") ? 2 : 0;
	if (!lua_isnil(L, 7) && !lua_isfunction(L, 7) && !(wm && (d.where || !strcmp(wm, "all"))))
		return luaL_error(L, "aggregate: where must be \"all\", \"live_at_peak\", \"live_at_end\" or a function(row)");
	if (!lua_isnil(L, 8) && (!lua_isinteger(L, 8) || lua_tointeger(L, 8) < 1))
		return luaL_error(L, "aggregate: top must be a positive integer");
	d.top = lua_isnil(L, 8) ? 0 : lua_tointeger(L, 8);
	/* Checked: now the copy (references, then the name; the stack still holds everything). */
	hm_lua_charge(L, nlen + 1 + sizeof d);
	for (int j = 0; j < d.nby; j++) {
		if (d.by_ref[j]) {
			lua_pushvalue(L, d.by_ref[j]);
			d.by_ref[j] = luaL_ref(L, LUA_REGISTRYINDEX);
		} else {
			d.by_ref[j] = LUA_NOREF;
		}
	}
	d.where_ref = LUA_NOREF;
	if (lua_isfunction(L, 7)) {
		lua_pushvalue(L, 7);
		d.where_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	}
	d.name = hm_xstrdup(name);
	hm_grow(&ds->v, &ds->cap, ds->n + 1, sizeof *ds->v);
	ds->v[ds->n++] = d;
	/* What was declared, as a new table (changing it changes nothing). */
	lua_createtable(L, 0, 7);
	lua_pushvalue(L, 2);
	lua_setfield(L, -2, "name");
	lua_createtable(L, d.nby, 0);
	for (int j = 0; j < d.nby; j++) {
		if (d.by_ref[j] != LUA_NOREF)
			lua_rawgeti(L, LUA_REGISTRYINDEX, d.by_ref[j]);
		else
			lua_pushstring(L, hm_field_name(d.by_field[j]));
		lua_rawseti(L, -2, j + 1);
	}
	lua_setfield(L, -2, "by");
	if (d.sum)
		lua_pushstring(L, hm_field_name(d.sum)), lua_setfield(L, -2, "sum");
	if (d.max)
		lua_pushstring(L, hm_field_name(d.max)), lua_setfield(L, -2, "max");
	lua_pushboolean(L, d.count);
	lua_setfield(L, -2, "count");
	if (d.where_ref != LUA_NOREF)
		lua_pushvalue(L, 7);
	else
		lua_pushstring(L, d.where == 1 ? "live_at_peak" : d.where == 2 ? "live_at_end" : "all");
	lua_setfield(L, -2, "where");
	if (d.top)
		lua_pushinteger(L, d.top), lua_setfield(L, -2, "top");
	lua_pushstring(L, d.per_series ? "series" : "all");
	lua_setfield(L, -2, "per");
	return 1;
}

/* Refuses a key with a NUL byte (every output writes keys as C strings, which would
 * cut it short), at the by function that returned it. [-0, +0, v] */
static void nul_key(lua_State *L, const hm_aggdecl *d, int j, int fn)
{
	lua_Debug ar;
	if (!fn)
		luaL_error(L, "aggregate '%s': a value of %s holds a NUL byte (aggregation keys cannot)", d->name,
			   hm_field_name(d->by_field[j]));
	lua_pushvalue(L, fn);
	lua_getinfo(L, ">S", &ar);
	luaL_error(L, "%s:%d: aggregate '%s': the by function returned a key with a NUL byte (aggregation keys cannot "
		      "hold one)", ar.short_src, ar.linedefined, d->name);
}

/* Compute the aggregation d into out (owned by the report, so it is freed even if this
 * raises). Everything about d was checked when it was declared. [-0, +0, e] */
static void aggregate(lua_State *L, const hm_aggdecl *d, hm_report *rep, hm_agg *out)
{
	int top0 = lua_gettop(L);
	int by_fn[16] = {0}, where_fn = 0;
	out->name = hm_xstrdup(d->name);
	out->per_series = d->per_series;
	for (int j = 0; j < d->nby; j++)
		if (d->by_ref[j] != LUA_NOREF) {
			lua_rawgeti(L, LUA_REGISTRYINDEX, d->by_ref[j]);
			by_fn[j] = lua_gettop(L);
		}
	if (d->where_ref != LUA_NOREF) {
		lua_rawgeti(L, LUA_REGISTRYINDEX, d->where_ref);
		where_fn = lua_gettop(L);
	}

	agg_work *w = lua_newuserdatauv(L, sizeof *w, 0);
	memset(w, 0, sizeof *w);
	if (luaL_newmetatable(L, AGG_META)) {
		lua_pushcfunction(L, agg_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	w->nkeys = (size_t)d->nby;
	for (size_t fi = 0; fi < rep->nfiles; fi++) {
		const hm_file *f = rep->files[fi];
		const hm_mem *m = &f->t->mem;
		for (size_t si = 0; si < f->nseries; si++) {
			const hm_series *s = &f->series[si];
			for (size_t k = 0; k < s->n; k++) {
				int64_t b = hm_mem_bytes(m, s->ev[k]);
				if (!(b > 0 || (b < 0 && s->partner[k] < 0)) || !where_ok(s, k, d->where))
					continue;
				hm_rowref r = {f, s, (uint32_t)k};
				if (where_fn) {
					lua_pushvalue(L, where_fn);
					hm_lua_row_push(L, f, s, (uint32_t)k, rep->cats);
					lua_call(L, 1, 1);
					int keep = lua_toboolean(L, -1);
					lua_pop(L, 1);
					if (!keep)
						continue;
				}
				size_t n = 0, str[16];
				int pushed = 0;
				hm_value kv[16];
				for (int j = 0; j < d->nby; j++) {
					if (by_fn[j]) {
						lua_pushvalue(L, by_fn[j]);
						hm_lua_row_push(L, f, s, (uint32_t)k, rep->cats);
						lua_call(L, 1, 1);
						lua_key(L, &kv[j]);
						pushed++; /* its string stays valid while on the stack */
					} else {
						hm_field_get(&r, d->by_field[j], rep->cats, &kv[j]);
						if (kv[j].type == HM_V_LIST)
							list_key(w, &r, d->by_field[j], &kv[j], &w->tmp, &w->tmpcap);
					}
					/* Names are C strings in every output: a NUL would cut them short. */
					if (kv[j].type == HM_V_STR && memchr(kv[j].s, 0, kv[j].len))
						nul_key(L, d, j, by_fn[j]);
					key_add(L, w, &n, &kv[j], &str[j]);
				}
				if (n > UINT32_MAX)
					luaL_error(L, "aggregate '%s': a row's keys take more than 4 GiB", d->name);
				uint32_t g = hm_strtab_intern(&w->keys, w->buf ? w->buf : "", n);
				if (g == w->ngroups) {
					charge(L, w, n + 1 + 4 * sizeof(void *));
					if (w->ngroups == w->cap) {
						size_t c = w->cap ? w->cap * 2 : 64;
						charge(L, w, (c - w->cap) * (5 * sizeof(int64_t) + 1 + w->nkeys * sizeof *w->keyvals));
						w->count = hm_xrealloc(w->count, c * sizeof *w->count);
						w->isum = hm_xrealloc(w->isum, c * sizeof *w->isum);
						w->imax = hm_xrealloc(w->imax, c * sizeof *w->imax);
						w->dsum = hm_xrealloc(w->dsum, c * sizeof *w->dsum);
						w->dmax = hm_xrealloc(w->dmax, c * sizeof *w->dmax);
						w->has_max = hm_xrealloc(w->has_max, c);
						w->keyvals = hm_xrealloc(w->keyvals, c * w->nkeys * sizeof *w->keyvals);
						w->cap = c;
					}
					w->count[g] = 0, w->isum[g] = 0, w->dsum[g] = 0, w->has_max[g] = 0;
					for (size_t j = 0; j < w->nkeys; j++) {
						hm_cell *c = &w->keyvals[g * w->nkeys + j];
						c->type = kv[j].type, c->i = kv[j].i, c->d = kv[j].d, c->s = NULL;
					}
					w->ngroups++;
					for (size_t j = 0; j < w->nkeys; j++)
						if (kv[j].type == HM_V_STR) {
							charge(L, w, kv[j].len + 1);
							w->keyvals[g * w->nkeys + j].s = cell_str(w->buf + str[j], kv[j].len);
						}
				}
				lua_pop(L, pushed);
				w->count[g]++;
				int64_t iv;
				double dv;
				if (d->sum && numeric(L, &r, d->sum, rep, out->name, "sum", &iv, &dv, &w->sum_float))
					w->isum[g] += iv, w->dsum[g] += dv;
				if (d->max && numeric(L, &r, d->max, rep, out->name, "max", &iv, &dv, &w->max_float) &&
				    (!w->has_max[g] || dv > w->dmax[g]))
					w->imax[g] = iv, w->dmax[g] = dv, w->has_max[g] = 1;
			}
		}
	}
	/* Sorted by the sum (or the count), largest first; the top N. */
	size_t *order = lua_newuserdatauv(L, (w->ngroups + 1) * sizeof *order, 0);
	for (size_t g = 0; g < w->ngroups; g++)
		order[g] = g;
	group_order go = {w, !d->sum};
	if (w->ngroups)
		qsort_r(order, w->ngroups, sizeof *order, cmp_group, &go);
	size_t nrows = d->top > 0 && (size_t)d->top < w->ngroups ? (size_t)d->top : w->ngroups;
	out->nkeys = w->nkeys;
	out->ncols = w->nkeys + (d->count ? 1 : 0) + (d->sum ? 1 : 0) + (d->max ? 1 : 0);
	out->cols = hm_xcalloc(out->ncols, sizeof *out->cols);
	size_t c = 0;
	for (int j = 0; j < d->nby; j++) {
		char name[32];
		snprintf(name, sizeof name, "by%d", d->by_pos[j]);
		out->cols[c++] = hm_xstrdup(by_fn[j] ? name : hm_field_name(d->by_field[j]));
	}
	if (d->count)
		out->cols[c++] = hm_xstrdup("count");
	if (d->sum)
		out->cols[c++] = hm_xstrdup(hm_field_name(d->sum));
	if (d->max) {
		char name[64];
		snprintf(name, sizeof name, "max_%s", hm_field_name(d->max));
		out->cols[c++] = hm_xstrdup(name);
	}
	out->cells = hm_xcalloc(nrows * out->ncols + 1, sizeof *out->cells);
	for (size_t i = 0; i < nrows; i++) {
		size_t g = order[i];
		hm_cell *row = &out->cells[i * out->ncols];
		for (size_t j = 0; j < w->nkeys; j++) {
			row[j] = w->keyvals[g * w->nkeys + j];
			w->keyvals[g * w->nkeys + j].s = NULL; /* moved */
		}
		c = w->nkeys;
		if (d->count)
			row[c].type = HM_V_INT, row[c++].i = (int64_t)w->count[g];
		if (d->sum) {
			if (w->sum_float)
				row[c].type = HM_V_NUM, row[c++].d = w->dsum[g];
			else
				row[c].type = HM_V_INT, row[c++].i = w->isum[g];
		}
		if (d->max) {
			if (!w->has_max[g])
				row[c++].type = HM_V_NIL;
			else if (w->max_float)
				row[c].type = HM_V_NUM, row[c++].d = w->dmax[g];
			else
				row[c].type = HM_V_INT, row[c++].i = w->imax[g];
		}
	}
	out->nrows = nrows;
	agg_free(L, w); /* now, not at the next collection: its bytes leave the count */
	lua_settop(L, top0);
}

/* Compute every aggregation declared with hmem.aggregate. [-0, +0, e] */
void hm_lua_aggregate_all(lua_State *L, hm_report *rep)
{
	const hm_decls *ds = hm_lua_decls(L);
	rep->aggs = hm_xcalloc(ds->n + 1, sizeof *rep->aggs);
	for (size_t i = 0; i < ds->n; i++)
		aggregate(L, &ds->v[i], rep, &rep->aggs[rep->naggs++]);
}
