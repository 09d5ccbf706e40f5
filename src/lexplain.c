/* The explain results as done(report) tables (see lexplain.h). */
#include "lexplain.h"
#include "explain.h"

#include <string.h>

static void set_int(lua_State *L, const char *k, int64_t v)
{
	if (v == HM_NONE)
		return; /* nil: the field is absent */
	lua_pushinteger(L, (lua_Integer)v);
	lua_setfield(L, -2, k);
}

static void set_us(lua_State *L, const char *k, int64_t ns)
{
	if (ns == HM_NONE)
		return;
	lua_pushnumber(L, (lua_Number)ns / 1000.0);
	lua_setfield(L, -2, k);
}

static void set_str(lua_State *L, const char *k, const char *s, size_t n)
{
	lua_pushlstring(L, s, n);
	lua_setfield(L, -2, k);
}

/* {{name=, <key>=}, ...} of the used categories, "(before trace)" included. [-0, +1, m] */
static void push_cats(lua_State *L, const hm_strtab *cats, const hm_series *s, const int64_t *val, const char *key)
{
	lua_newtable(L);
	lua_Integer i = 0;
	for (size_t c = 0; c < s->ncats && c < cats->n; c++) {
		if (!s->cats[c].used)
			continue;
		lua_createtable(L, 0, 2);
		set_str(L, "name", cats->str[c], cats->len[c]);
		set_int(L, key, val[c]);
		lua_rawseti(L, -2, ++i);
	}
}

static void push_steps(lua_State *L, const hm_strtab *cats, const hm_series *s)
{
	lua_createtable(L, (int)s->nsteps, 0);
	for (size_t i = 0; i < s->nsteps; i++) {
		const hm_step *st = &s->steps[i];
		lua_createtable(L, 0, 12);
		set_int(L, "step", st->step);
		set_us(L, "start_ts", st->start_ts);
		set_us(L, "end_ts", st->end_ts);
		set_int(L, "start_bytes", st->start_bytes);
		set_int(L, "peak_bytes", st->peak_bytes);
		set_us(L, "peak_ts", st->peak_ts);
		set_int(L, "end_bytes", st->end_bytes);
		set_int(L, "growth_bytes", st->growth_bytes);
		set_int(L, "survivors_bytes", st->survivors_bytes);
		lua_pushboolean(L, st->partial);
		lua_setfield(L, -2, "partial");
		lua_pushboolean(L, st->open);
		lua_setfield(L, -2, "open");
		push_cats(L, cats, s, st->cat_end, "end_bytes");
		lua_setfield(L, -2, "categories");
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

static void push_ooms(lua_State *L, const hm_strtab *cats, const hm_file *f, const hm_series *s)
{
	const hm_trace *t = f->t;
	lua_createtable(L, (int)s->nooms, 0);
	for (size_t i = 0; i < s->nooms; i++) {
		const hm_oom *o = &s->ooms[i];
		lua_createtable(L, 0, 18);
		set_us(L, "ts", o->ts);
		set_str(L, "device", s->device, strlen(s->device));
		set_int(L, "bytes", o->bytes);
		set_int(L, "total_allocated", o->total_allocated);
		set_int(L, "total_reserved", o->total_reserved);
		set_int(L, "reserved_unallocated", o->reserved_unallocated);
		set_int(L, "capacity", o->capacity);
		set_int(L, "allocated", o->allocated);
		set_int(L, "freed_after", o->freed_after);
		set_int(L, "step", o->step < 0 ? HM_NONE : o->step);
		set_us(L, "step_ts", o->step_ts);
		if (o->nops) {
			uint32_t nm = t->sl.name[o->ops[o->nops - 1]];
			set_str(L, "op", t->names.str[nm], t->names.len[nm]);
		}
		lua_createtable(L, (int)o->nops, 0);
		for (size_t j = 0; j < o->nops; j++) {
			uint32_t nm = t->sl.name[o->ops[j]];
			lua_pushlstring(L, t->names.str[nm], t->names.len[nm]);
			lua_rawseti(L, -2, (lua_Integer)j + 1);
		}
		lua_setfield(L, -2, "ops");
		if (o->thread < t->thread_name_cap && t->thread_name[o->thread] != UINT32_MAX) {
			set_str(L, "thread", t->names.str[t->thread_name[o->thread]], t->names.len[t->thread_name[o->thread]]);
		} else { /* "pid/tid", as in --json */
			const char *key = t->threads.str[o->thread], *tid;
			size_t tl, pl = hm_thread_split(key, t->threads.len[o->thread], &tid, &tl);
			lua_pushlstring(L, key, pl);
			lua_pushliteral(L, "/");
			lua_pushlstring(L, tid, tl);
			lua_concat(L, 3);
			lua_setfield(L, -2, "thread");
		}
		push_cats(L, cats, s, o->cat_at, "bytes");
		lua_setfield(L, -2, "categories");
		if (t->snap) { /* what only a snapshot says, as in --json */
			const hm_snapoom *so = &t->snap->ooms[o->ev];
			set_int(L, "device_free", so->device_free);
			uint32_t fr = so->stack == UINT32_MAX ? UINT32_MAX : t->snap->stack_frame[so->stack];
			if (fr != UINT32_MAX)
				set_str(L, "frame", t->names.str[fr], t->names.len[fr]);
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

static void push_leak(lua_State *L, const hm_series *s)
{
	lua_createtable(L, 0, 4);
	const char *v = hm_leak_name(s->leak);
	set_str(L, "verdict", v, strlen(v));
	set_int(L, "steps", (int64_t)s->leak_steps);
	if (s->leak == HM_LEAK_GROWTH || s->leak == HM_LEAK_SURVIVORS)
		set_int(L, "per_step_bytes", s->leak_per_step);
	lua_createtable(L, (int)s->nmakers, 0);
	for (size_t i = 0; i < s->nmakers; i++) {
		lua_createtable(L, 0, 2);
		set_str(L, "name", s->makers[i].name, strlen(s->makers[i].name));
		set_int(L, "bytes", s->makers[i].bytes);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_setfield(L, -2, "made_by");
}

int hm_lua_explain_field(lua_State *L, const hm_strtab *cats, const hm_file *f, const hm_series *s, const char *key)
{
	int64_t v;
	if (!strcmp(key, "steps"))
		push_steps(L, cats, s);
	else if (!strcmp(key, "ooms"))
		push_ooms(L, cats, f, s);
	else if (!strcmp(key, "leak"))
		push_leak(L, s);
	else if (!strcmp(key, "steps_note")) {
		char note[512];
		if (hm_explain_steps_note(f, s, note, sizeof note))
			lua_pushstring(L, note);
		else
			lua_pushnil(L);
	}
	else if (!strcmp(key, "reserved_unallocated_at_peak") || !strcmp(key, "max_reserved_unallocated")) {
		v = key[0] == 'r' ? s->reserved_unallocated_at_peak : s->max_reserved_unallocated;
		if (v == HM_NONE)
			lua_pushnil(L);
		else
			lua_pushinteger(L, (lua_Integer)v);
	} else if (!strcmp(key, "max_reserved_unallocated_ts")) {
		if (s->max_reserved_unallocated_ts == HM_NONE)
			lua_pushnil(L);
		else
			lua_pushnumber(L, (lua_Number)s->max_reserved_unallocated_ts / 1000.0);
	} else
		return 0;
	return 1;
}
