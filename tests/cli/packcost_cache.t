# Issue 19: what makes the shipped packs cheap. A cache_by entry may be a function of the
# row's context: hmem calls it once per context (y_pair_basic: aten::empty twice, aten::add
# once: two contexts) and classify once per distinct answer.
$ d=$(mktemp -d) && hmem run tests/tiny/rules/cache_key_function.lua tests/tiny/y_pair_basic.json --json "$d/r.json" && lua5.4 tests/jget.lua classify_calls cache_hits < "$d/r.json"; rm -rf "$d"
classify aten::empty 1024
classify aten::add 256
key function calls 2
2
1
? 0

# hmem.cache_clear(): after aten::add clears the memo, y_context's aten::empty allocation
# (1024 B) is classified again instead of answered from y_pair_basic's.
$ d=$(mktemp -d) && hmem run tests/tiny/rules/cache_clear.lua tests/tiny/y_pair_basic.json tests/tiny/y_context.json --json "$d/r.json" && lua5.4 tests/jget.lua classify_calls cache_hits < "$d/r.json"; rm -rf "$d"
classify aten::empty 1024
classify aten::add 256
classify aten::empty 1024
classify AddmmBackward0 2048
classify nil 512
5
1
? 0

# A key function answers a string, number, boolean or nil; anything else stops the run.
$ hmem run tests/tiny/rules/cache_key_table.lua tests/tiny/y_pair_basic.json 2>&1 | head -n 2
hmem: tests/tiny/rules/cache_key_table.lua:3: cache_by: the key function returned a table; it must return a string, number, boolean or nil
  while classifying the allocation of 1024 bytes on cuda:0 at ts 101.25 (op aten::empty) in tests/tiny/y_pair_basic.json
? 0

# row.series_id: one integer per series (file and device), the same for all its rows and
# different for every other series (the rule checks both): y_pair_basic has one device,
# y_devices eight.
$ hmem run tests/tiny/rules/series_id.lua tests/tiny/y_pair_basic.json tests/tiny/y_devices.json | head -n 1
9 series
? 0
