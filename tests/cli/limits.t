# Issue 6: a rule file from another team cannot hang or eat the machine, and a trace cut
# off by a killed job still gives what it holds (with --keep-going), saying what was lost.

# --timeout: a runaway classify that wraps its loop in pcall is still stopped, with the
# line it was running and the event it was classifying; exit 3.
$ hmem run tests/tiny/rules/runaway_pcall.lua tests/tiny/y_pair_basic.json --timeout 0.5
hmem: tests/tiny/rules/runaway_pcall.lua: stopped at tests/tiny/rules/runaway_pcall.lua:4: a call into the rule file ran longer than 0.5 s (--timeout SEC raises the limit)
  while classifying the allocation of 1024 bytes on cuda:0 at ts 101.25 (op aten::empty) in tests/tiny/y_pair_basic.json
? 3
# The limit is per call: while the rule file loads, and in done().
$ hmem run tests/tiny/rules/runaway_load.lua tests/tiny/y_pair_basic.json --timeout 0.2
hmem: tests/tiny/rules/runaway_load.lua: stopped at tests/tiny/rules/runaway_load.lua:3: a call into the rule file ran longer than 0.2 s (--timeout SEC raises the limit)
? 3
$ hmem run tests/tiny/rules/runaway_done.lua tests/tiny/y_pair_basic.json --timeout 0.2 --json /dev/null
hmem: tests/tiny/rules/runaway_done.lua: stopped at tests/tiny/rules/runaway_done.lua:6: a call into the rule file ran longer than 0.2 s (--timeout SEC raises the limit)
? 3
# 16 calls of 30 ms each take longer than the limit together, but none does alone (each has
# thirteen times its time, so a busy machine does not stop one).
$ hmem run tests/tiny/rules/slow_rows.lua tests/tiny/y_ops.json --timeout 0.4 --json - | lua5.4 tests/jget.lua series.1.categories.2.name series.1.categories.2.allocs
slow
16
? 0

# --lua-mem: a classify that keeps allocating is stopped at the cap; exit 3.
$ hmem run tests/tiny/rules/greedy.lua tests/tiny/y_pair_basic.json --lua-mem 32
hmem: tests/tiny/rules/greedy.lua: the rule file used more than 32 MB of Lua memory (--lua-mem MB raises the limit)
  while classifying the allocation of 1024 bytes on cuda:0 at ts 101.25 (op aten::empty) in tests/tiny/y_pair_basic.json
? 3

# Bad limit values are usage errors.
$ hmem run size tests/tiny/y_pair_basic.json --timeout soon
hmem: --timeout needs seconds, a number from 0 (no limit) to 1000000, not 'soon'
Try 'hmem --help'.
? 2
$ hmem run size tests/tiny/y_pair_basic.json --lua-mem -1
hmem: --lua-mem needs megabytes, a number from 1 to 100000000 or 0 (no limit), not '-1'
Try 'hmem --help'.
? 2

# Cut-off JSON (a killed job): without --keep-going it is an error naming file and offset;
# with it, every complete event before the cut is kept, the loss is said and is in --json,
# and the exit code still says something went wrong (4).
$ d=$(mktemp -d) && head -c 800 tests/tiny/y_pair_basic.json > "$d/cut.json" && cd "$d" && hmem run size cut.json --json /dev/null; echo "exit $?"; cd - >/dev/null; rm -rf "$d"
hmem: cut.json:759: the file ends inside the value that starts here (cut-off JSON: was the job killed while writing the trace?)
hmem: stopped; use --keep-going to skip traces that cannot be read
exit 4
? 0
$ d=$(mktemp -d) && head -c 800 tests/tiny/y_pair_basic.json > "$d/cut.json" && cd "$d" && hmem run size cut.json --keep-going --json r.json; echo "exit $?"; lua5.4 "$OLDPWD/tests/jget.lua" inputs.1.events inputs.1.memory_events inputs.1.cut_at inputs.1.lost_bytes series.1.allocs < r.json; cd - >/dev/null; rm -rf "$d"
hmem: warning: cut.json:759: the file ends inside the event that starts here (cut-off JSON: was the job killed while writing the trace?)
hmem: kept the 4 complete events before byte 759; the 41 bytes after it are lost
exit 4
4
2
759
41
2
? 0

# A truncated gzip stream is the same case.
$ d=$(mktemp -d) && gzip -c tests/tiny/y_pair_basic.json | head -c 300 > "$d/cut.json.gz" && cd "$d" && hmem run size cut.json.gz --keep-going --json r.json 2>&1 | sed 's/[0-9][0-9]*/N/g'; lua5.4 "$OLDPWD/tests/jget.lua" inputs.1.memory_events < r.json; cd - >/dev/null; rm -rf "$d"
hmem: warning: cut.json.gz:N: gzip stream is truncated (the file ends inside compressed data at byte N)
hmem: kept the N complete events before byte N; the N bytes after it are lost
2
? 0

# Counts reconcile: every element of traceEvents is used or not used, by reason, and the
# reasons add up to the events read (--verbose and --json).
$ hmem run size tests/tiny/y_context.json --json /dev/null -v 2>&1 | grep 'events read'
hmem: events read 17 = used (memory 5, host slices 9, thread names 2) + not used (oom 0, device slices 1, flows 0, metadata 0, other 0)
? 0
$ hmem run size tests/data/hta/df_index_resolver_rank1_v100.json.gz --json - | lua5.4 -e 'local d = require("cjson").decode(io.read("a")).inputs[1]; local s = 0; for _, n in pairs(d.counts) do s = s + n end; print(d.events, s, d.counts.memory == d.memory_events)'
216092.0	216092.0	true
? 0

# --annotate copies the trace: a cut-off one cannot give a valid copy, so it refuses (4) and
# writes nothing; --perfetto (the counters alone) still works.
$ d=$(mktemp -d) && head -c 800 tests/tiny/y_pair_basic.json > "$d/cut.json" && cd "$d" && hmem run size cut.json --keep-going -q --annotate a.json; echo "exit $?"; ls; hmem run size cut.json --keep-going -q --perfetto p.json; echo "exit $?"; ls; cd - >/dev/null; rm -rf "$d"
hmem: --annotate: cut.json is cut off at byte 759; an annotated copy would be cut off too (--perfetto writes the counters alone)
exit 4
cut.json
exit 4
cut.json
p.json
? 0
