# Issue 12: seven ways past --timeout. Each hung hmem until it was killed (here: exit 137
# from `timeout -s KILL 20`). Hooks do not run inside C library loops, finalizers, error
# handlers entered from the hook, other coroutines or lua_close; when the call does not
# stop once asked, the watchdog ends the run: exit 3, a message naming the rule file and
# the limit, and no output (the --json file does not exist, nor any temporary file).

# A loop in an xpcall message handler: the timeout's own error skips the handler.
$ d=$(mktemp -d); timeout -s KILL 20 hmem run tests/tiny/rules/timeout_handler.lua tests/tiny/y_pair_basic.json --timeout 1 --json "$d/r.json"; echo "exit $?"; ls -A "$d"; rm -rf "$d"
hmem: tests/tiny/rules/timeout_handler.lua: stopped at tests/tiny/rules/timeout_handler.lua:4: a call into the rule file ran longer than 1 s (--timeout SEC raises the limit)
  while classifying the allocation of 1024 bytes on cuda:0 at ts 101.25 (op aten::empty) in tests/tiny/y_pair_basic.json
exit 3
? 0

# A __gc finalizer that loops, during classify.
$ d=$(mktemp -d); timeout -s KILL 20 hmem run tests/tiny/rules/timeout_gc.lua tests/tiny/y_pair_basic.json --timeout 1 --json "$d/r.json"; echo "exit $?"; ls -A "$d"; rm -rf "$d"
hmem: tests/tiny/rules/timeout_gc.lua: stopped: classify ran longer than 1 s and did not stop when asked (--timeout SEC raises the limit)
  the run is ended, no output written (hooks cannot stop a loop in a __gc finalizer, a coroutine or a C library function such as a backtracking string.find)
exit 3
? 0

# A __gc finalizer that loops at exit: the Lua state is closed under the watchdog, before
# any output is written (the old code had written r.json, then hung in lua_close).
$ d=$(mktemp -d); timeout -s KILL 20 hmem run tests/tiny/rules/timeout_gc_exit.lua tests/tiny/y_pair_basic.json --timeout 1 --json "$d/r.json"; echo "exit $?"; ls -A "$d"; rm -rf "$d"
hmem: tests/tiny/rules/timeout_gc_exit.lua: stopped: closing its Lua state (running its __gc finalizers) ran longer than 1 s and did not stop when asked (--timeout SEC raises the limit)
  the run is ended, no output written (hooks cannot stop a loop in a __gc finalizer, a coroutine or a C library function such as a backtracking string.find)
exit 3
? 0

# lua_close after a rule error runs under the watchdog too.
$ d=$(mktemp -d); timeout -s KILL 20 hmem run tests/tiny/rules/timeout_gc_error.lua tests/tiny/y_pair_basic.json --timeout 1 --json "$d/r.json" 2>"$d.err"; echo "exit $?"; grep -v '^	' "$d.err"; ls -A "$d"; rm -rf "$d" "$d.err"
exit 3
hmem: tests/tiny/rules/timeout_gc_error.lua:5: no category for this row
  while classifying the allocation of 1024 bytes on cuda:0 at ts 101.25 (op aten::empty) in tests/tiny/y_pair_basic.json
stack traceback:
hmem: tests/tiny/rules/timeout_gc_error.lua: stopped: closing its Lua state (running its __gc finalizers) ran longer than 1 s and did not stop when asked (--timeout SEC raises the limit)
  the run is ended, no output written (hooks cannot stop a loop in a __gc finalizer, a coroutine or a C library function such as a backtracking string.find)
? 0

# Pattern matching that backtracks for ever, in C.
$ d=$(mktemp -d); timeout -s KILL 20 hmem run tests/tiny/rules/timeout_pattern.lua tests/tiny/y_pair_basic.json --timeout 1 --json "$d/r.json"; echo "exit $?"; ls -A "$d"; rm -rf "$d"
hmem: tests/tiny/rules/timeout_pattern.lua: stopped: classify ran longer than 1 s and did not stop when asked (--timeout SEC raises the limit)
  the run is ended, no output written (hooks cannot stop a loop in a __gc finalizer, a coroutine or a C library function such as a backtracking string.find)
exit 3
? 0

# string.rep("", 1 << 62) is the empty string at once: the run completes.
$ d=$(mktemp -d); timeout -s KILL 20 hmem run tests/tiny/rules/timeout_rep.lua tests/tiny/y_pair_basic.json --timeout 1 --json "$d/r.json"; echo "exit $?"; lua5.4 tests/jget.lua series.1.categories.2.name < "$d/r.json"; rm -rf "$d"
exit 0
c
? 0

# table.move of 2^50 elements: more than a table can hold under --lua-mem, an error.
$ d=$(mktemp -d); timeout -s KILL 20 hmem run tests/tiny/rules/timeout_move.lua tests/tiny/y_pair_basic.json --timeout 1 --json "$d/r.json"; echo "exit $?"; ls -A "$d"; rm -rf "$d"
hmem: tests/tiny/rules/timeout_move.lua:3: table.move: 1125899906842624 elements, more than a table holds under --lua-mem 4096 MB (268435456)
  while classifying the allocation of 1024 bytes on cuda:0 at ts 101.25 (op aten::empty) in tests/tiny/y_pair_basic.json
stack traceback:
	[C]: in function 'table.move'
	tests/tiny/rules/timeout_move.lua:3: in function <tests/tiny/rules/timeout_move.lua:2>
exit 3
? 0

# A loop in a coroutine (--allow-io): the hook set on the main thread does not reach it.
$ d=$(mktemp -d); timeout -s KILL 20 hmem run tests/tiny/rules/timeout_coroutine.lua tests/tiny/y_pair_basic.json --allow-io --timeout 1 --json "$d/r.json"; echo "exit $?"; ls -A "$d"; rm -rf "$d"
hmem: tests/tiny/rules/timeout_coroutine.lua: stopped: classify ran longer than 1 s and did not stop when asked (--timeout SEC raises the limit)
  the run is ended, no output written (hooks cannot stop a loop in a __gc finalizer, a coroutine or a C library function such as a backtracking string.find)
exit 3
? 0

# A __len claiming 2^50 elements: table.insert, table.remove and table.concat would loop
# over them in C; each is an error the rule file can catch.
$ d=$(mktemp -d); timeout -s KILL 20 hmem run tests/tiny/rules/timeout_len.lua tests/tiny/y_pair_basic.json --timeout 1 --lua-mem 64 --json "$d/r.json"; echo "exit $?"; rm -rf "$d"
false	table.insert: 1125899906842624 elements, more than a table holds under --lua-mem 64 MB (4194304)
false	table.remove: 1125899906842623 elements, more than a table holds under --lua-mem 64 MB (4194304)
false	table.concat: 1125899906842623 elements, more than a table holds under --lua-mem 64 MB (4194304)
exit 0
? 0

# string.rep bigger than --lua-mem says so before it tries.
$ printf 'function classify(row)\n  return "c" .. #string.rep("x", 100 << 20)\nend\n' > "$T/hm_rep_big.lua"; hmem run "$T/hm_rep_big.lua" tests/tiny/y_pair_basic.json --lua-mem 32 2>&1 | sed -n 1p | sed 's|^hmem: .*hm_rep_big.lua:|hmem: RULES:|'; rm -f "$T/hm_rep_big.lua"
hmem: RULES:2: string.rep: the result would be 104857600 bytes, more than --lua-mem 32 MB
? 0

# The bounded functions (and xpcall) behave as Lua's own: the same file gives the same
# lines under lua5.4 (this is a check of the replacements, not a regression test).
$ d=$(mktemp -d); hmem run tests/tiny/rules/bounds_semantics.lua tests/tiny/y_pair_basic.json --json "$d/r.json" > "$d/hmem.txt"; lua5.4 tests/tiny/rules/bounds_semantics.lua > "$d/lua.txt"; diff "$d/lua.txt" "$d/hmem.txt" && wc -l < "$d/lua.txt"; rm -rf "$d"
28
? 0
