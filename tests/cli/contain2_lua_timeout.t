# Issue 24: a __gc finalizer that loops only when it runs outside a call into the rule
# file. hmem made each row (for classify, or for a cache_by key function) before arming
# the call: a GC step in that allocation ran the finalizer, nobody watched, and hmem hung
# under --timeout 1 until it was killed (here: exit 137 from `timeout -s KILL 20`). Now
# every allocation made on behalf of a call is inside the armed call: exit 3, no output.

# The row made for classify.
$ d=$(mktemp -d); timeout -s KILL 20 hmem run tests/tiny/rules/contain2_gc_between.lua tests/tiny/y_pair_basic.json --timeout 1 --json "$d/r.json"; echo "exit $?"; ls -A "$d"; rm -rf "$d"
hmem: tests/tiny/rules/contain2_gc_between.lua: stopped: classify ran longer than 1 s and did not stop when asked (--timeout SEC raises the limit)
  the run is ended, no output written (hooks cannot stop a loop in a __gc finalizer, a coroutine or a C library function such as a backtracking string.find)
exit 3
? 0

# The row made for a cache_by key function.
$ d=$(mktemp -d); timeout -s KILL 20 hmem run tests/tiny/rules/contain2_gc_cache_by.lua tests/tiny/y_pair_basic.json --timeout 1 --json "$d/r.json"; echo "exit $?"; ls -A "$d"; rm -rf "$d"
hmem: tests/tiny/rules/contain2_gc_cache_by.lua: stopped: classify ran longer than 1 s and did not stop when asked (--timeout SEC raises the limit)
  the run is ended, no output written (hooks cannot stop a loop in a __gc finalizer, a coroutine or a C library function such as a backtracking string.find)
exit 3
? 0

# Every other place: with HMEM_CHECK_ARMED set, an allocation in a rule file's Lua state
# outside an armed call (once the rule file has started to load) aborts hmem. The old code
# allocated unarmed after loading (the category cache), for each row, and in hmem diff.
$ HMEM_CHECK_ARMED=1 hmem run examples/size_buckets.lua tests/tiny/y_pair_basic.json -q --json /dev/null; echo "exit $?"
exit 0
? 0

$ HMEM_CHECK_ARMED=1 hmem run tests/tiny/rules/row_identity.lua tests/tiny/y_pair_basic.json -q --json /dev/null >/dev/null; echo "exit $?"
exit 0
? 0

$ d=$(mktemp -d); HMEM_CHECK_ARMED=1 hmem run tests/tiny/rules/write.lua tests/tiny/y_pair_basic.json -q --out "$d" --json /dev/null; echo "exit $?"; ls "$d"; rm -rf "$d"
exit 0
peak.json
? 0

$ HMEM_CHECK_ARMED=1 hmem run size tests/tiny/y_context.json -q --json /dev/null; echo "exit $?"
exit 0
? 0

$ HMEM_CHECK_ARMED=1 hmem packs >/dev/null; echo "exit $?"
exit 0
? 0
