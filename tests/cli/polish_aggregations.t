# Aggregations group per series by default (issue 17): file and device are their first keys,
# so a CPU's 8-byte tensors never add to a GPU's; per = "all" sums across series, and the
# summary says which. This trace allocates 72 B on cpu and 47460864 B on cuda:0 (--json).
$ hmem run tests/tiny/rules/polish_per.lua examples/traces/bert-small_h100.json.gz | grep -A4 '^aggregation'
aggregation per series (2 rows, per series)
  file                                    device kind  count bytes
  examples/traces/bert-small_h100.json.gz cuda:0 alloc   109 45.26 MiB
  examples/traces/bert-small_h100.json.gz cpu    alloc     9      72 B

aggregation across (1 rows, across series: per = "all")
  kind  count bytes
  alloc   118 45.26 MiB

aggregation device named (2 rows, per series)
  file                                    device kind  count bytes
  examples/traces/bert-small_h100.json.gz cuda:0 alloc   109 45.26 MiB
  examples/traces/bert-small_h100.json.gz cpu    alloc     9      72 B
? 0
$ hmem run tests/tiny/rules/polish_per.lua examples/traces/bert-small_h100.json.gz --json - | lua5.4 tests/jget.lua series.1.categories.2.alloc_bytes series.2.categories.2.alloc_bytes aggregations.across.rows.1.bytes aggregations.across.per aggregations.per\ series.per
72
47460864
47460936
all
series
? 0
$ hmem run tests/tiny/rules/polish_per.lua tests/tiny/y_pair_basic.json --json $T/p.json && lua5.4 -e 'print(require("cjson").decode(io.read("a")).aggregations["per series"].columns[1])' < $T/p.json
file
? 0
