# Rows keep their identity (issue 11): the row classify got for an event is the very row
# series:allocations(), series:live_at(), aggregation key and where functions and
# report.series[i].live_at_peak give for it later, as == and as a table key, across garbage
# collections (tests/tiny/rules/row_identity.lua stores each row classify sees and counts
# hits later; every allocation must be a hit). Before the fix: 0 hits.
# y_pair_basic.json: 3 allocations, 2 live at the peak.
$ d=$(mktemp -d) && hmem run tests/tiny/rules/row_identity.lua tests/tiny/y_pair_basic.json --json "$d/r.json"; rm -rf "$d"
classify 3, allocations 3: 3 table keys, 3 ==
live at peak 2: 2 table keys
aggregation: where 3, by 3
category read in done: big
cjson.null: userdata: ..., tests/tiny/rules/row_identity.lua:43: attempt to index a userdata value (field 'null')
getmetatable(cjson.null): nil, getmetatable(row): hmem.row
? 0
# a real trace: 14005 allocations, 726 live at the peak
$ d=$(mktemp -d) && hmem run tests/tiny/rules/row_identity.lua tests/data/hta/df_index_resolver_rank1_v100.json.gz --json "$d/r.json"; rm -rf "$d"
classify 14005, allocations 14005: 14005 table keys, 14005 ==
live at peak 726: 726 table keys
aggregation: where 14005, by 14005
category read in done: small
cjson.null: userdata: ..., tests/tiny/rules/row_identity.lua:43: attempt to index a userdata value (field 'null')
getmetatable(cjson.null): nil, getmetatable(row): hmem.row
? 0

# No light userdata gets the row metatable (issue 11): cjson.null in a rule file prints as
# any light userdata and is not a row, in classify as in done; a row's type is userdata.
$ d=$(mktemp -d) && hmem run tests/tiny/rules/cjson_null.lua tests/tiny/y_pair_basic.json --json "$d/r.json"; rm -rf "$d"
load: userdata: (nil) light userdata
classify: userdata: (nil) true userdata
? 0
