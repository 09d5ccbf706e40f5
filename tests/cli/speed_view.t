# A pack's view (issue 19): hmem asks view(name, kind) once per name and kind, and rows whose
# names give the same codes share row.view, so cache_by{"view"} calls classify once for
# them: here two allocations in one op each (aten::add, aten::mul) and one in two ops.
$ hmem run tests/tiny/rules/view_ops.lua tests/tiny/y_view_memo.json -q --json $T/view.json
asked: op aten::add, op aten::addmm, op aten::linear, op aten::mul, python nn.Module: Linear_0
? 0
$ lua5.4 tests/jget.lua classify_calls < $T/view.json
2
? 0
2
# On every real trace: equal codes give equal views, other codes other views, and the view
# is asked about each name once (the rule checks it in Lua from row.ops, row.python, ...).
$ hmem run tests/tiny/rules/view_check.lua tests/data/hta -q --json $T/v1.json
view_check: ok
? 0
$ hmem run tests/tiny/rules/view_check.lua tests/data/kineto_tb_plugin -q --json $T/v2.json
view_check: ok
? 0
$ hmem run tests/tiny/rules/view_check.lua tests/data/tracelens -q --json $T/v3.json
view_check: ok
? 0
# A view answers a string or nil; anything else stops the run where it was asked.
$ hmem run tests/tiny/rules/view_bad.lua tests/tiny/y_view_memo.json --json $T/bad.json
hmem: tests/tiny/rules/view_bad.lua:3: view: returned a table for the op 'aten::add'; return a string (the name's code) or nil (left out)
  while classifying the allocation of 1024 bytes on cuda:0 at ts 101.0 (op aten::add) in tests/tiny/y_view_memo.json
...
? 3
# Reading row.view without a view says what to add.
$ hmem run tests/tiny/rules/view_none.lua tests/tiny/y_view_memo.json --json $T/none.json
hmem: tests/tiny/rules/view_none.lua:3: row.view: the rules declare no view; add view = function(name, kind) ... end to the pack (see The row in the README), or build a pack that wraps another with hmem.extend(inner, {...}), which keeps its view
...
? 3
$ hmem run tests/tiny/rules/view_number.lua tests/tiny/y_view_memo.json
hmem: tests/tiny/rules/view_number.lua: view must be a function(name, kind), not a number
? 3
# With a view, a cache_by key function is called once per view (two here), not per context.
$ hmem run tests/tiny/rules/view_keyfn.lua tests/tiny/y_view_memo.json -q --json $T/keyfn.json
key function calls: 2
? 0
# A view that raised is asked again (a rule that went on after pcall gets no code that was
# never given), even after other names were asked.
$ hmem run tests/tiny/rules/view_pcall.lua tests/tiny/y_view_memo.json -q --json $T/pcall.json
error view view aten::add view; aten::add asked 2 times
? 0
