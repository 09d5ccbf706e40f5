/* A rule file's life: its state made under the limits (lctx.c), the rule file or pack
 * found and loaded in the sandbox (lsandbox.c), its hooks held by reference and its
 * categories declared; classify (lclassify.c), then the aggregations and done
 * (lreport.c); and `hmem packs`. */
#include "script.h"
#include "lclassify.h"
#include "lctx.h"
#include "lreport.h"
#include "lsandbox.h"
#include "plan.h"

#include <dirent.h>
#include <inttypes.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct hm_script {
	hm_lctx *ctx;   /* the state and its limits (lctx.h) */
	hm_classify cls; /* the classify loop's memo and counts (lclassify.h) */
	char *name;     /* as reported */
	char *path;     /* the file loaded (for shipped packs, its path in lua/) */
	int classify_ref, init_ref, done_ref; /* LUA_NOREF when absent */
	const hm_script_opts *o;
	int pack;        /* loaded by pack name */
	char *pack_name; /* the pack table's name field */
	char (*colors)[8]; /* category id -> declared "#rrggbb", "" if none */
	size_t ncolors;
	hm_sandbox sb;   /* what the sandbox reads from o, and the rule file's directory (lsandbox.h) */
	hm_budgets verdict; /* hmem.budget and hmem.fail (budget.h) */
	uint64_t digest;    /* of the rule file and the modules it required (lsandbox.c) */
	char digest_hex[17]; /* as it was once the rules had loaded */
};

/* The host's data, from a C function of its own. */
static hm_script *host_of(lua_State *L)
{
	return hm_lctx_of(L)->host;
}

/* The directory of a rule file or pack file, for require ("." for a bare file name). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d = hm_xstrdup(slash ? path : ".");
	if (slash)
		d[slash == path ? 1 : slash - path] = 0;
	return d;
}

/* Before each call into the rules, and after it. */
static void limits_arm(hm_script *s, const char *what)
{
	hm_lctx_arm(s->ctx, what);
}

static void limits_done(hm_script *s)
{
	hm_lctx_done(s->ctx);
}

/* After a failed call: a message for the limit that stopped it, or NULL. */
static const char *limits_report(hm_script *s, char *buf, size_t n)
{
	return hm_lctx_limit_report(s->ctx, s->path ? s->path : s->o->rules, buf, n);
}

/* ---- loading the rules ---- */

typedef struct open_ctx {
	hm_script *s;
	hm_strtab *cats;
} open_ctx;

/* A declared category's colour: "#rrggbb" (as hmem.testing checks), kept for --html.
 * [-0, +0, e] */
static void declare_color(lua_State *L, hm_script *s, lua_Integer i, uint32_t id)
{
	lua_getfield(L, -2, "color");
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		return;
	}
	size_t n = 0;
	const char *c = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &n) : NULL;
	int ok = c && n == 7 && c[0] == '#';
	for (size_t k = 1; ok && k < 7; k++)
		ok = strchr("0123456789abcdefABCDEF", c[k]) != NULL;
	if (!ok)
		luaL_error(L, "categories[%d]: color must be \"#rrggbb\"", (int)i);
	if (id >= s->ncolors) {
		size_t cap = s->ncolors;
		hm_grow(&s->colors, &cap, (size_t)id + 1, sizeof *s->colors);
		memset(s->colors + s->ncolors, 0, (cap - s->ncolors) * sizeof *s->colors);
		s->ncolors = cap;
	}
	memcpy(s->colors[id], c, 8);
	lua_pop(L, 1);
}

/* A declared category list: names or {name=, color=}. [-0, +0, e] */
static void declare_categories(lua_State *L, int idx, hm_script *s, hm_strtab *cats)
{
	if (lua_isnil(L, idx))
		return;
	luaL_argexpected(L, lua_istable(L, idx), idx, "categories: a list of names");
	for (lua_Integer i = 1; lua_rawgeti(L, idx, i) != LUA_TNIL; i++) {
		if (lua_istable(L, -1))
			lua_getfield(L, -1, "name");
		else
			lua_pushvalue(L, -1);
		if (lua_type(L, -1) != LUA_TSTRING)
			luaL_error(L, "categories[%d]: expected a name or {name=, color=}", (int)i);
		size_t n;
		const char *name = lua_tolstring(L, -1, &n);
		uint32_t id = hm_strtab_intern(cats, name, n);
		if (lua_istable(L, -2))
			declare_color(L, s, i, id);
		lua_pop(L, 2);
	}
	lua_pop(L, 1);
}

static int ref_function(lua_State *L, int idx, const char *what, const char *where)
{
	int t = lua_type(L, idx);
	if (t == LUA_TNIL)
		return LUA_NOREF;
	if (t != LUA_TFUNCTION)
		luaL_error(L, "%s: %s must be a function, not a %s", where, what, lua_typename(L, t));
	lua_pushvalue(L, idx);
	return luaL_ref(L, LUA_REGISTRYINDEX);
}

/* Runs in protected mode: a failure anywhere raises, never panics. [-1, +0, e] */
static int open_protected(lua_State *L)
{
	open_ctx *c = lua_touserdata(L, 1);
	hm_script *s = c->s;
	const hm_script_opts *o = s->o;
	hm_sandbox_open_libs(L, &s->sb);

	/* The rules: a file, or a pack by name. */
	const hm_embedded *m = NULL;
	if (hm_sandbox_is_file(o->rules)) {
		lua_pushstring(L, o->rules);
	} else if (strchr(o->rules, '/') || strstr(o->rules, ".lua")) {
		return luaL_error(L, "%s: no such rule file", o->rules);
	} else {
		lua_pushfstring(L, "hmem.rules.%s", o->rules);
		m = hm_sandbox_find(L, &s->sb, lua_tostring(L, -1), NULL);
		if (lua_isnil(L, -1)) {
			lua_pop(L, 2);
			m = hm_sandbox_find(L, &s->sb, o->rules, NULL); /* a plain NAME.lua on -I / HMEM_PATH */
			if (lua_isnil(L, -1) || m)
				return luaL_error(L, "%s: no such rule file or pack (shipped packs: size, op, phase, lifetime, "
						     "pytorch; 'hmem packs' lists all)", o->rules);
		}
		s->pack = 1;
	}
	s->path = hm_xstrdup(lua_tostring(L, -1));
	s->name = hm_xstrdup(s->pack ? o->rules : s->path);
	s->sb.rule_dir = m ? NULL : dir_of(s->path);
	hm_sandbox_load(L, &s->sb, s->path, m ? m->source : NULL);
	lua_getupvalue(L, -1, 1);
	int env = lua_gettop(L);
	lua_pushvalue(L, env - 1);
	lua_call(L, 0, 1);
	int ret = lua_gettop(L);
	const char *where = s->path;
	int src = ret;
	if (!lua_istable(L, ret)) {
		src = env; /* hooks are globals of the rule file */
		lua_pushliteral(L, "classify");
		if (lua_rawget(L, env) != LUA_TFUNCTION)
			return luaL_error(L, "%s: defines no function classify(row) (it must return a category name for one "
					     "allocation), and returns no pack table", where);
		lua_pop(L, 1);
	}
	const char *hooks[] = {"classify", "init", "done"};
	int *refs[] = {&s->classify_ref, &s->init_ref, &s->done_ref};
	for (int i = 0; i < 3; i++) {
		lua_pushstring(L, hooks[i]);
		lua_rawget(L, src);
		if (i == 0 && !lua_isfunction(L, -1))
			return luaL_error(L, "%s: the returned pack has no classify function", where);
		*refs[i] = ref_function(L, -1, hooks[i], where);
		lua_pop(L, 1);
	}
	lua_pushliteral(L, "categories");
	lua_rawget(L, src);
	declare_categories(L, lua_gettop(L), s, c->cats);
	lua_pop(L, 1);
	lua_pushliteral(L, "view");
	int vt = lua_rawget(L, src);
	if (vt == LUA_TFUNCTION)
		hm_view_set(&s->cls.view, L, -1);
	else if (vt != LUA_TNIL)
		return luaL_error(L, "%s: view must be a function(name, kind), not a %s", where, lua_typename(L, vt));
	lua_pop(L, 1);
	lua_pushliteral(L, "cache_by");
	if (lua_rawget(L, src) != LUA_TNIL) {
		hm_lua_push_cache_by(L, &s->cls);
		lua_insert(L, -2);
		lua_call(L, 1, 0);
	} else {
		lua_pop(L, 1);
	}
	const char *needs = hm_classify_view_missing(&s->cls);
	if (needs)
		return luaL_error(L, "%s: cache_by names %s, but the rules declare no view function: a pack made of another "
				     "loses the inner pack's view; build it with hmem.extend(inner, {...}), or add "
				     "view = inner.view (README \"Composing packs\")", where, needs);
	if (src == ret) {
		lua_getfield(L, ret, "name");
		if (lua_isstring(L, -1)) {
			free(s->pack_name);
			s->pack_name = hm_xstrdup(lua_tostring(L, -1));
		}
		lua_pop(L, 1);
	}

	if (s->init_ref != LUA_NOREF) {
		lua_rawgeti(L, LUA_REGISTRYINDEX, s->init_ref);
		lua_call(L, 0, 0);
	}
	return 0;
}

/* A traceback through no Lua file (a syntax error, a missing file) says nothing. */
static void error_text(lua_State *L, char *err, size_t errsz)
{
	const char *msg = lua_tostring(L, -1), *tb = strstr(msg, "\nstack traceback:");
	int useful = tb && strstr(tb, ".lua:");
	snprintf(err, errsz, "%.*s", useful || !tb ? (int)strlen(msg) : (int)(tb - msg), msg);
}

/* A Lua state under the limits of o (memory counted, the watchdog started): what runs
 * rule files, for hmem run and hmem packs alike. NULL with err if it cannot be made. */
static hm_script *state_new(const hm_script_opts *o, char *err, size_t errsz)
{
	hm_script *s = hm_xcalloc(1, sizeof *s);
	s->o = o;
	s->sb = (hm_sandbox){o->inc, o->ninc, o->allow_io, o->out_dir, NULL, &s->cls, &s->verdict, o->set, o->nset, 0, o->quiet, NULL, 0};
	s->ctx = hm_lctx_new(o->mem_limit, o->timeout_s, o->rules, s, err, errsz);
	if (!s->ctx) {
		free(s);
		return NULL;
	}
	s->classify_ref = s->init_ref = s->done_ref = LUA_NOREF;
	return s;
}

hm_script *hm_script_open(const hm_script_opts *o, hm_strtab *cats, char *err, size_t errsz)
{
	hm_script *s = state_new(o, err, errsz);
	if (!s)
		return NULL;
	lua_State *L = s->ctx->L;
	s->digest = HM_FNV_START;
	s->sb.digest = &s->digest;
	open_ctx c = {s, cats};
	lua_pushcfunction(L, open_protected);
	lua_pushlightuserdata(L, &c);
	limits_arm(s, "loading the rule file");
	int status = hm_lua_docall(L, 1, 0);
	if (status != LUA_OK) {
		if (!limits_report(s, err, errsz))
			error_text(L, err, errsz);
		hm_script_close(s);
		return NULL;
	}
	s->ctx->decls.closed = 1; /* hmem.aggregate and cache_by declare while the rules load */
	hm_classify_init(&s->cls, L); /* allocates: still armed */
	limits_done(s);
	s->ctx->rows.view = &s->cls.view;
	snprintf(s->digest_hex, sizeof s->digest_hex, "%016" PRIx64, s->digest);
	return s;
}

const char *hm_script_digest(const hm_script *s)
{
	return s->digest_hex;
}

const char *hm_script_name(const hm_script *s)
{
	return s->name;
}

/* Whether anything after classify pushes rows: done (the report's rows) or an
 * aggregation's function. If not, no event's row is ever pushed twice. */
static int rows_seen_later(const hm_script *s)
{
	const hm_decls *ds = &s->ctx->decls;
	int later = s->done_ref != LUA_NOREF;
	for (size_t i = 0; i < ds->n && !later; i++) {
		const hm_aggdecl *d = &ds->v[i];
		later = d->where_ref != LUA_NOREF;
		for (int j = 0; j < d->nby; j++)
			later |= d->by_ref[j] != LUA_NOREF;
	}
	return later;
}

int hm_script_classify(hm_script *s, hm_file *f, hm_strtab *cats, char *err, size_t errsz)
{
	/* The cache_by memo answers within one trace: what a trace costs in classify calls
	 * is then the same whichever traces were read before it, so shards add up to one
	 * run (README "Many machines"). */
	hm_classify_forget(&s->cls);
	hm_view_next_trace(&s->cls.view);
	for (size_t i = 0; i < f->nseries; i++)
		hm_stage_enter(&f->series[i], HM_STAGE_CLASSIFIED);
	return hm_classify_run(&s->cls, s->ctx, s->classify_ref, rows_seen_later(s), f, cats,
			       s->path ? s->path : s->o->rules, err, errsz);
}

typedef struct finish_ctx {
	hm_script *s;
	hm_report *rep;
} finish_ctx;

/* [-1, +0, e] */
static int finish_protected(lua_State *L)
{
	finish_ctx *c = lua_touserdata(L, 1);
	hm_lua_aggregate_all(L, c->rep);
	if (c->s->done_ref != LUA_NOREF) {
		lua_rawgeti(L, LUA_REGISTRYINDEX, c->s->done_ref);
		hm_lua_report_push(L, c->rep);
		c->s->sb.in_done = 1;
		lua_call(L, 1, 0);
		c->s->sb.in_done = 0;
	}
	return 0;
}

/* done's message handler: hmem.fail's value passes as it is (no traceback: the rule file
 * failed the run on purpose), any other error gets the usual one. [-1, +1, m] */
static int finish_msghandler(lua_State *L)
{
	return hm_sandbox_is_fail(L, 1) ? 1 : hm_lua_msghandler(L);
}

int hm_script_finish(hm_script *s, hm_report *rep, char *err, size_t errsz)
{
	finish_ctx c = {s, rep};
	lua_State *L = s->ctx->L;
	rep->colors = (const char(*)[8])s->colors;
	rep->ncolors = s->ncolors;
	lua_pushcfunction(L, finish_msghandler);
	lua_pushcfunction(L, finish_protected);
	lua_pushlightuserdata(L, &c);
	limits_arm(s, "done");
	int status = lua_pcall(L, 1, 0, -3);
	limits_done(s);
	s->sb.in_done = 0;
	if (status != LUA_OK && hm_sandbox_is_fail(L, -1) && !limits_report(s, err, errsz))
		lua_pop(L, 1), status = LUA_OK;
	lua_remove(L, status == LUA_OK ? -1 : -2); /* the handler */
	if (status != LUA_OK) {
		if (!limits_report(s, err, errsz))
			error_text(L, err, errsz);
		lua_pop(L, 1);
		return -1;
	}
	hm_lctx_close_lua(s->ctx);
	return 0;
}

/* The description of the rule file at path (arg 1, a built-in module's source at 2), or
 * nil if it is not a rule file (a module it requires, say). Raises if it fails to load.
 * [-2, +1, e] */
static int describe_pack(lua_State *L)
{
	hm_script *s = host_of(L);
	const char *path = luaL_checkstring(L, 1);
	const char *source = lua_touserdata(L, 2);
	hm_sandbox_open_libs(L, &s->sb);
	hm_sandbox_load(L, &s->sb, path, source);
	lua_getupvalue(L, -1, 1);
	int env = lua_gettop(L);
	lua_pushvalue(L, env - 1);
	lua_call(L, 0, 1);
	if (lua_istable(L, -1)) {
		lua_pushliteral(L, "classify");
		lua_rawget(L, -2);
		lua_pushliteral(L, "description");
		lua_rawget(L, -3);
		if (!lua_isfunction(L, -2))
			lua_pushnil(L);
		else if (lua_type(L, -1) != LUA_TSTRING)
			lua_pushliteral(L, "(no description)");
		return 1;
	}
	lua_pushliteral(L, "classify");
	if (lua_rawget(L, env) == LUA_TFUNCTION)
		lua_pushliteral(L, "(a rule file with global hooks)");
	else
		lua_pushnil(L);
	return 1;
}

/* One pack loaded as hmem run would (its own state, the sandbox, --timeout and
 * --lua-mem), then printed with its description or the first line of its error; a file
 * that is not a rule file is left out. */
static void list_pack(const hm_script_opts *o, FILE *out, const char *name, const char *path, const char *source)
{
	char err[1024] = "", desc[1024] = "";
	hm_script *s = state_new(o, err, sizeof err);
	int listed = 1;
	if (s) {
		lua_State *L = s->ctx->L;
		s->path = hm_xstrdup(path);
		s->sb.rule_dir = source ? NULL : dir_of(path);
		lua_pushcfunction(L, describe_pack);
		lua_pushstring(L, path);
		lua_pushlightuserdata(L, (void *)source);
		limits_arm(s, "loading the pack");
		int status = hm_lua_docall(L, 2, 1);
		limits_done(s);
		if (status != LUA_OK) {
			if (!limits_report(s, err, sizeof err))
				error_text(L, err, sizeof err);
		} else if (lua_isnil(L, -1)) {
			listed = 0;
		} else {
			snprintf(desc, sizeof desc, "%s", lua_tostring(L, -1));
		}
		hm_script_close(s);
	}
	if (!listed)
		return;
	if (err[0]) {
		size_t n = strlen(path);
		const char *e = !strncmp(err, path, n) && !strncmp(err + n, ": ", 2) ? err + n + 2 : err; /* a limit */
		snprintf(desc, sizeof desc, "(fails to load: %.*s)", (int)strcspn(e, "\n"), e);
	}
	/* A pack's description and file name are terminal text (hm_esc): never control bytes. */
	char *ename = hm_esc(name, strlen(name), 0, NULL), *edesc = hm_esc(desc, strlen(desc), 0, NULL);
	char *epath = hm_esc(path, strlen(path), 0, NULL);
	fprintf(out, "  %-12s %s\n  %-12s (%s)\n", ename, edesc, "", source ? "shipped with hmem" : epath);
	free(ename), free(edesc), free(epath);
}

static int shipped(const char *name)
{
	for (const hm_embedded *m = hm_embedded_modules; m->name; m++)
		if (!strncmp(m->name, "hmem.rules.", 11) && !strcmp(m->name + 11, name))
			return 1;
	return 0;
}

/* Lists each pack name once, as hmem run would find it: NAME.lua on -I and HMEM_PATH
 * (the first of a name), then the shipped packs, whose names always mean them. */
int hm_script_list_packs(const hm_script_opts *o, FILE *out)
{
	fprintf(out, "rule packs (use a name in place of a rule file: hmem run NAME PATH...):\n");
	hm_sandbox sb = {.inc = o->inc, .ninc = o->ninc, .allow_io = o->allow_io, .out_dir = o->out_dir};
	char dir[4096], (*seen)[256] = NULL;
	size_t nseen = 0, cap = 0;
	for (int i = 0; hm_sandbox_search_dir(&sb, i, dir, sizeof dir); i++) {
		struct dirent **names;
		int n = scandir(dir, &names, NULL, alphasort), specs = 0;
		for (int j = 0; j < n; j++) {
			const char *f = names[j]->d_name;
			size_t len = strlen(f);
			char name[256] = "";
			if (len > 4 && len - 4 < sizeof name && !strcmp(f + len - 4, ".lua") && f[0] != '.')
				memcpy(name, f, len - 4);
			/* A busted spec beside its pack (team_rules_spec.lua) tests it: not a pack (issue 28). */
			if (len > 9 && !strcmp(f + len - 9, "_spec.lua") && f[0] != '.')
				name[0] = 0, specs++;
			int dup = !name[0] || shipped(name) || hm_sandbox_reserved(name);
			for (size_t k = 0; k < nseen && !dup; k++)
				dup = !strcmp(seen[k], name);
			if (!dup) {
				char path[5000];
				snprintf(path, sizeof path, "%s/%s", dir, f);
				hm_grow(&seen, &cap, nseen + 1, sizeof *seen);
				memcpy(seen[nseen++], name, sizeof name);
				list_pack(o, out, name, path, NULL);
			}
			free(names[j]);
		}
		if (n >= 0)
			free(names);
		if (specs) {
			char *edir = hm_esc(dir, strlen(dir), 0, NULL);
			fprintf(out, "  (%d busted spec%s in %s skipped: *_spec.lua files are tests, not packs)\n", specs,
				specs == 1 ? "" : "s", edir);
			free(edir);
		}
	}
	free(seen);
	for (const hm_embedded *m = hm_embedded_modules; m->name; m++)
		if (!strncmp(m->name, "hmem.rules.", 11))
			list_pack(o, out, m->name + 11, m->path, m->source);
	return HM_EXIT_OK;
}

const hm_budgets *hm_script_verdict(const hm_script *s)
{
	return &s->verdict;
}

uint64_t hm_script_calls(const hm_script *s)
{
	return s->cls.calls;
}

uint64_t hm_script_cache_hits(const hm_script *s)
{
	return s->cls.cache_hits;
}

void hm_script_close(hm_script *s)
{
	if (!s)
		return;
	hm_lctx_free(s->ctx);
	free(s->path);
	free(s->name);
	free(s->pack_name);
	free(s->sb.rule_dir);
	if (s->sb.out_fd)
		close(s->sb.out_fd - 1);
	free(s->colors);
	hm_classify_free(&s->cls);
	hm_budgets_free(&s->verdict);
	free(s);
}
