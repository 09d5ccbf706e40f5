/* Pinned host memory and the ring buffer's overflow flag of 2026 snapshots (snaphost.h). */
#include "snaphost.h"

int hm_snaphost_is(int32_t dev_type, int32_t dev_id)
{
	return dev_type == 0 && dev_id == HM_SNAPHOST_ID;
}

/* PyTorch's documentation names host_traces without saying its shape: the host allocator
 * is one, so a flat list of entries is what its device_traces[d] analogue would be; a list
 * of per-device lists is taken too, as long as only one of them holds entries (joining
 * several would mix clocks and addresses of lists hmem cannot tell apart). */
int hm_snaphost_entries(const hm_pk *p, hm_pkv traces, hm_pkv *list, const char **why)
{
	*list = HM_PK_ABSENT;
	if (traces == HM_PK_ABSENT || hm_pk_type(traces) == HM_PK_NONE)
		return 0;
	if (hm_pk_type(traces) != HM_PK_LIST) {
		*why = "'host_traces' is not a list";
		return -1;
	}
	size_t n = hm_pk_len(p, traces);
	if (!n || hm_pk_type(hm_pk_item(p, traces, 0)) != HM_PK_LIST) {
		*list = traces;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		hm_pkv l = hm_pk_item(p, traces, i);
		if (hm_pk_type(l) != HM_PK_LIST) {
			*why = "'host_traces' mixes lists and entries";
			return -1;
		}
		if (!hm_pk_len(p, l))
			continue;
		if (*list != HM_PK_ABSENT) {
			*why = "'host_traces' holds more than one list of entries (hmem reads one host allocator)";
			return -1;
		}
		*list = l;
	}
	return 0;
}

void hm_snaphost_settings(const hm_pk *p, hm_pkv root, int *overflowed, int64_t *max_entries)
{
	*overflowed = -1, *max_entries = HM_NONE;
	hm_pkv set = hm_pk_type(root) == HM_PK_DICT ? hm_pk_get(p, root, hm_pk_atom(p, "allocator_settings")) : HM_PK_ABSENT;
	if (set == HM_PK_ABSENT || hm_pk_type(set) != HM_PK_DICT)
		return;
	hm_pkv o = hm_pk_get(p, set, hm_pk_atom(p, "trace_alloc_overflowed"));
	int64_t v;
	if (o != HM_PK_ABSENT && hm_pk_type(o) == HM_PK_BOOL && hm_pk_int(p, o, &v) == 0)
		*overflowed = v != 0;
	hm_pkv m = hm_pk_get(p, set, hm_pk_atom(p, "trace_alloc_max_entries"));
	if (m != HM_PK_ABSENT && hm_pk_int(p, m, &v) == 0 && hm_pk_type(m) != HM_PK_BOOL)
		*max_entries = v;
}
