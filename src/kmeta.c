/* The run's metadata in a Kineto trace's header (see kmeta.h). */
#include "kmeta.h"

#include <stdio.h>
#include <string.h>

typedef struct meta {
	hm_trace *t;
	hm_jscan_scratch *sc;
	const char *bad; /* the first bad value */
	char *why;
	size_t n;
	int64_t id, mem; /* one deviceProperties element */
} meta;

/* A key as JSON means it: "r\u0061nk" is "rank" (issue 11). */
static int key_is(meta *m, const char *key, size_t klen, const char *lit)
{
	size_t n = strlen(lit), dn;
	if (klen == n && memcmp(key, lit, n) == 0)
		return 1;
	if (!memchr(key, '\\', klen))
		return 0;
	const char *d = hm_jscan_unescape(m->sc, key - 1, key + klen + 1, &dn);
	return d && dn == n && memcmp(d, lit, n) == 0;
}

static void rank_member(void *ud, const char *key, size_t klen, hm_slice v)
{
	meta *m = ud;
	int64_t x;
	if (!key_is(m, key, klen, "rank"))
		return;
	const char *s = v.p;
	size_t n = (size_t)(v.q - v.p);
	if (*s == '"')
		s = hm_jscan_str(m->sc, v.p, v.q, &n);
	if (s && !hm_num_i64(s, n, 0, 0, &x))
		m->t->rank = x;
	else if (!m->bad)
		m->bad = v.p, snprintf(m->why, m->n, "distributedInfo.rank is %s, expected an integer", hm_jscan_kind_of(v));
}

const char *hm_kmeta_rank(hm_trace *t, hm_jscan_scratch *sc, const char *p, const char *e, char *why, size_t n)
{
	meta m = {t, sc, NULL, why, n, 0, 0};
	const char *bad = hm_jscan_members(p, e, rank_member, &m);
	if (bad)
		snprintf(why, n, "invalid JSON in distributedInfo");
	return bad ? bad : m.bad;
}

static void device_member(void *ud, const char *key, size_t klen, hm_slice v)
{
	meta *m = ud;
	int64_t *to = key_is(m, key, klen, "id") ? &m->id : key_is(m, key, klen, "totalGlobalMem") ? &m->mem : NULL;
	if (to && (hm_jscan_not_number(v.p) || hm_jscan_int(v.p, v.q, to)))
		*to = HM_NONE;
}

const char *hm_kmeta_devices(hm_trace *t, hm_jscan_scratch *sc, const char *p, const char *e, char *why, size_t n)
{
	snprintf(why, n, "invalid JSON in deviceProperties");
	p = hm_jscan_past_ws(p + 1);
	while (p < e && *p != ']') {
		const char *q = hm_jscan_skip(p, e);
		if (q == p || q > e)
			return p;
		if (*p == '{') {
			meta m = {t, sc, NULL, why, n, HM_NONE, HM_NONE};
			const char *bad = hm_jscan_members(p, q, device_member, &m);
			if (bad)
				return bad;
			if (m.id != HM_NONE && m.mem != HM_NONE && m.mem >= 0)
				hm_store_set_capacity(t, m.id, m.mem);
		}
		p = hm_jscan_past_ws(q);
		if (p < e && *p == ',')
			p = hm_jscan_past_ws(p + 1);
		else if (p < e && *p != ']')
			return p;
	}
	return NULL;
}
