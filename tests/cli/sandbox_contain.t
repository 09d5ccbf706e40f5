# Issue 12: a rule file, a pack or a folder of traces can never run code, crash hmem, or
# change what other packs see (README "Rule files from other teams are contained").

# hmem.aggregate checks a declaration and copies it when it is made: changing the table it
# returns, or hmem's own list, changes nothing and crashes nothing.
$ hmem run tests/tiny/rules/contain_decl_changed.lua tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua aggregations.by\ op.columns.3 aggregations.by\ op.rows.1.op aggregations.by\ op.rows.1.count
op
aten::empty
2
? 0
$ hmem run tests/tiny/rules/contain_decl_table.lua tests/tiny/y_pair_basic.json --json /dev/null
hmem: tests/tiny/rules/contain_decl_table.lua:4: attempt to index a nil value (field '_aggregations')
stack traceback:
	tests/tiny/rules/contain_decl_table.lua:4: in main chunk
	[C]: in ?
? 3
$ hmem run tests/tiny/rules/contain_decl_bad.lua tests/tiny/y_pair_basic.json --json /dev/null
hmem: tests/tiny/rules/contain_decl_bad.lua:3: aggregate: each by entry must be a field name or a function(row)
stack traceback:
	[C]: in field 'aggregate'
	tests/tiny/rules/contain_decl_bad.lua:3: in main chunk
	[C]: in ?
? 3

# A NUL byte in an aggregation's name or in a key is refused, not cut short.
$ hmem run tests/tiny/rules/contain_nul_name.lua tests/tiny/y_pair_basic.json --json /dev/null
hmem: tests/tiny/rules/contain_nul_name.lua:3: aggregate: name must not hold a NUL byte
stack traceback:
	[C]: in field 'aggregate'
	tests/tiny/rules/contain_nul_name.lua:3: in main chunk
	[C]: in ?
? 3
$ hmem run tests/tiny/rules/contain_nul_key.lua tests/tiny/y_pair_basic.json --json /dev/null
hmem: tests/tiny/rules/contain_nul_key.lua:4: aggregate 'by kind': the by function returned a key with a NUL byte (aggregation keys cannot hold one)
? 3

# The keys hmem keeps in C for an aggregation count against --lua-mem (3 groups of 8 MiB
# keys: more than 48 MB).
$ hmem run tests/tiny/rules/agg_huge_keys.lua tests/tiny/y_pair_basic.json --lua-mem 48 --json /dev/null
hmem: tests/tiny/rules/agg_huge_keys.lua: the rule file used more than 48 MB of Lua memory (--lua-mem MB raises the limit)
? 3

# A folder of downloaded traces holding hmem.lua and cjson.lua: hmem loads neither (the
# fake cjson.lua would leave a file OWNED), for a shipped pack as for a rule file's require.
$ d=$(mktemp -d) && cp tests/tiny/y_pair_basic.json "$d/rank0.json" && cp tests/tiny/contain/fake_hmem.lua "$d/hmem.lua" && cp tests/tiny/contain/fake_cjson.lua "$d/cjson.lua" && cd "$d" && hmem run size . --json r.json -q; echo "exit $?"; ls; cd - >/dev/null; lua5.4 tests/jget.lua series.1.categories.2.name < "$d/r.json"; rm -rf "$d"
exit 0
cjson.lua
hmem.lua
r.json
rank0.json
small (< 1 MiB)
? 0
# The same on -I, HMEM_PATH and next to the rule file; and LUA_PATH does not lead require
# "cjson" to a Lua file.
$ d=$(mktemp -d) && cp tests/tiny/contain/fake_hmem.lua "$d/hmem.lua" && cp tests/tiny/contain/fake_cjson.lua "$d/cjson.lua" && cp tests/tiny/rules/contain_require_cjson.lua "$d/rules.lua" && r=$PWD && cd "$d" && hmem run size -I . "$r/tests/tiny/y_pair_basic.json" --json "$d.1"; HMEM_PATH=. hmem run size "$r/tests/tiny/y_pair_basic.json" --json "$d.2"; LUA_PATH="$d/?.lua;;" hmem run rules.lua "$r/tests/tiny/y_pair_basic.json" --json "$d.3"; LUA_PATH="$d/?.lua;;" hmem run --allow-io rules.lua "$r/tests/tiny/y_pair_basic.json" --json "$d.4"; ls; cd "$r"; for i in 1 2 3 4; do lua5.4 tests/jget.lua series.1.categories.2.name < "$d.$i"; rm -f "$d.$i"; done; rm -rf "$d"
cjson.lua
hmem.lua
rules.lua
small (< 1 MiB)
small (< 1 MiB)
["alloc"]
["alloc"]
? 0

# cjson: nesting depths capped at 1000 (deeper recursion overflowed the C stack), for every
# instance; each chunk has its own settings.
$ hmem run tests/tiny/rules/contain_cjson_depth.lua tests/tiny/y_pair_basic.json --json /dev/null
hmem: tests/tiny/rules/contain_cjson_depth.lua:4: bad argument #1 to 'decode_max_depth' (a depth from 1 to 1000: hmem caps it, deeper nesting overflows the C stack)
stack traceback:
	[C]: in field 'decode_max_depth'
	tests/tiny/rules/contain_cjson_depth.lua:4: in main chunk
	[C]: in ?
? 3
$ hmem run tests/tiny/rules/contain_cjson_encode.lua tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua series.1.categories.2.name
c
? 0
$ hmem run tests/tiny/rules/contain_cjson_config.lua tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua series.1.categories.2.name
[1.5]
? 0

# What a rule file does to string, math, hmem, the string metatable or the row's metatable
# changes nothing for the module it requires (1024 B is "1.00 KiB half 512").
$ hmem run tests/tiny/rules/contain_poison.lua tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua series.1.categories.2.name series.1.categories.3.name
1.00 KiB half 512
512 B half 256
? 0
$ hmem run tests/tiny/rules/contain_poison.lua tests/tiny/y_pair_basic.json --allow-io --json - | lua5.4 tests/jget.lua series.1.categories.2.name series.1.categories.3.name
1.00 KiB half 512
512 B half 256
? 0

# hmem packs loads each pack as hmem run would, under --timeout and --lua-mem: a pack that
# loops, one that allocates without end and one that raises are listed with their errors,
# and the others still listed. (timeout 60 only ends a hang.)
$ d=$(mktemp -d) && printf 'while true do end\n' > "$d/loop.lua" && printf 'local t, s = {}, string.rep("x", 1e6)\nfor i = 1, 1e9 do t[i] = s .. i end\n' > "$d/greedy.lua" && printf 'error("broken on purpose")\n' > "$d/broken.lua" && cp tests/tiny/packs/mypack.lua tests/tiny/packs/mypack_helper.lua "$d/" && timeout 60 hmem packs -I "$d" --timeout 0.5 --lua-mem 32 | sed "s|$d|DIR|g" | head -11; rm -rf "$d"
rule packs (use a name in place of a rule file: hmem run NAME PATH...):
  broken       (fails to load: DIR/broken.lua:1: broken on purpose)
               (DIR/broken.lua)
  greedy       (fails to load: the rule file used more than 32 MB of Lua memory (--lua-mem MB raises the limit))
               (DIR/greedy.lua)
  loop         (fails to load: stopped at DIR/loop.lua:1: a call into the rule file ran longer than 0.5 s (--timeout SEC raises the limit))
               (DIR/loop.lua)
  mypack       test pack: size buckets, with the op for small ones
               (DIR/mypack.lua)
  lifetime     freed in the same op / in the same step / outlives the step / never freed / before trace
               (shipped with hmem)
? 0

# Two list fields in one aggregation key keep their own text (the first column showed the
# second's: both were built in one scratch buffer).
$ hmem run tests/tiny/rules/contain_two_lists.lua tests/tiny/y_context.json --json - | lua5.4 tests/jget.lua aggregations.lists.rows.1.ops aggregations.lists.rows.1.annotations
aten::linear > aten::empty
ProfilerStep#3 > ## forward ##
? 0

# cjson.encode's text (in a buffer outside the Lua heap, which doubles as it grows) must fit
# in what --lua-mem leaves, three times over: 100 MB of text from a 1 MB string is refused
# under --lua-mem 200.
$ hmem run tests/tiny/rules/contain_cjson_amplify.lua tests/tiny/y_pair_basic.json --lua-mem 200 --json /dev/null
hmem: tests/tiny/rules/contain_cjson_amplify.lua:6: cjson.encode: the text would not fit in the memory --lua-mem leaves
stack traceback:
	[C]: in field 'encode'
	tests/tiny/rules/contain_cjson_amplify.lua:6: in main chunk
	[C]: in ?
? 3

# A pack run by name requires its modules from next to its own file, not from the working
# directory (here a folder whose mypack_helper.lua would raise).
$ d=$(mktemp -d) && r=$PWD && printf 'error("the working directory was searched")\n' > "$d/mypack_helper.lua" && cd "$d" && HMEM_PATH="$r/tests/tiny/packs" hmem run mypack "$r/tests/tiny/y_context.json" -q --json r.json; cd "$r"; lua5.4 tests/jget.lua rules series.1.categories.2.name < "$d/r.json"; rm -rf "$d"
mypack done with 1 series
mypack
small (< 1 MiB)
? 0
