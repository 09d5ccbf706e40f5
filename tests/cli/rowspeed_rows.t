# Rows keep their identity across files (issue 11): the rows made for each file are kept
# apart, so two copies of a trace (events at the same positions) still give done, for each
# event, the row classify got for that event of that file (tests/tiny/rules/rowspeed_files.lua
# checks every allocation against the file and event index classify saw).
$ d=$(mktemp -d) && cp tests/tiny/y_pair_basic.json "$d/a.json" && cp tests/tiny/y_pair_basic.json "$d/b.json" && hmem run tests/tiny/rules/rowspeed_files.lua "$d/a.json" "$d/b.json" -q --json "$d/r.json"; rm -rf "$d"
classify 6 rows (6 table keys); done: 6 of 6 allocations are the rows classify got for their file
? 0
# a real trace twice: 14005 allocations each, with collections in between
$ d=$(mktemp -d) && cp tests/data/hta/df_index_resolver_rank1_v100.json.gz "$d/a.json.gz" && cp "$d/a.json.gz" "$d/b.json.gz" && hmem run tests/tiny/rules/rowspeed_files.lua "$d/a.json.gz" "$d/b.json.gz" -q --json "$d/r.json"; rm -rf "$d"
classify 28010 rows (28010 table keys); done: 28010 of 28010 allocations are the rows classify got for their file
? 0

# Rows of a trace with many series (issue 11: an event's series was found by a search over
# the series, and each new one added with a memmove, so 100,000 devices took seconds): 20,000
# devices met in a scrambled order; each row's device is worked out from its ts alone and
# compared with row.device in classify, and done checks that every series' allocations are
# the rows classify got, on that series' device (tests/rows_many_series.lua says how).
$ lua5.4 tests/rows_many_series.lua 20000
classify: 40000 rows, 0 on another device than their ts says
done: 20000 series, 40000 of 40000 allocations are classify's rows on their series' device
every row on its device, as worked out by hand
? 0
