# A Lua error raised while a row's long list (row.ops, 150 ops) or its view is being made, and
# caught by the rule's pcall, leaks no C memory (issue 26: both held a malloc'd buffer across
# calls that raise). Under a sanitizer build LeakSanitizer prints the leak here; make test
# also runs both under valgrind.
$ hmem run tests/tiny/tidy26/list_oom.lua tests/tiny/tidy26/y_deep_ops.json --lua-mem 2 -q --json $T/l.json
lists made before the memory ran out: many; out of memory inside pcall: 1
? 0
$ hmem run tests/tiny/tidy26/view_raises.lua tests/tiny/tidy26/y_deep_ops.json -q --json $T/v.json
the view raised inside pcall: 1
? 0
