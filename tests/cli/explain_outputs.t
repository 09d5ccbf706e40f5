# Issue 14, out of memory: an [OutOfMemory] inside an op (aten::mm inside aten::linear, step 3),
# with its totals, deviceProperties capacity (8 GiB), frees after it (5000 B) and what is live
# then. Figures by hand from tests/tiny/explain/y_oom.json.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/explain/y_oom.json --json - | lua5.4 tests/jget.lua series.1.ooms.# series.1.ooms.1.ts series.1.ooms.1.device series.1.ooms.1.bytes series.1.ooms.1.total_allocated series.1.ooms.1.total_reserved series.1.ooms.1.reserved_unallocated series.1.ooms.1.capacity series.1.ooms.1.allocated series.1.ooms.1.freed_after series.1.ooms.1.op series.1.ooms.1.ops.1 series.1.ooms.1.ops.2 series.1.ooms.1.step series.1.ooms.1.step_ts series.1.ooms.1.thread
1
300
cuda:0
4194304
5000
6000
1000
8589934592
5000
5000
aten::mm
aten::linear
aten::mm
3
0
1/1
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/explain/y_oom.json --json - | lua5.4 tests/jget.lua series.1.ooms.1.categories.# series.1.ooms.1.categories.1.name series.1.ooms.1.categories.1.bytes series.1.ooms.1.categories.2.name series.1.ooms.1.categories.2.bytes series.1.ooms.1.categories.3.name series.1.ooms.1.categories.3.bytes series.1.ooms.1.live.# series.1.ooms.1.live.1.bytes series.1.ooms.1.live.1.who series.1.ooms.1.live.2.bytes series.1.ooms.1.live.2.who
3
(before trace)
0
1000
1000
4000
4000
2
4000
aten::linear
1000
-
? 0
# What the allocator holds back (Total Reserved - Total Allocated): at the peak (5000 B at ts
# 150: 2097152 - 5000) and its maximum (ts 50: 2097152 - 1000); one step, so no leak verdict.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/explain/y_oom.json --json - | lua5.4 tests/jget.lua series.1.reserved_unallocated_at_peak series.1.max_reserved_unallocated series.1.max_reserved_unallocated_ts series.1.leak.verdict series.1.leak.steps series.1.leak.per_step_bytes series.1.steps.# series.1.steps.1.step series.1.steps.1.start_ts series.1.steps.1.end_ts series.1.steps.1.peak_bytes series.1.steps.1.peak_ts series.1.steps.1.end_bytes
2092152
2096152
50
unknown
1
null
1
3
0
1000
5000
150
0
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/explain/y_oom.json
tests/tiny/explain/y_oom.json  (8 events, 4 memory events)
  cuda:0: peak 4.88 KiB at +0.150 ms (ts 150.0), end 0 B, max reserved 2.00 MiB
  2 allocs, 2 frees (2 matched)
    category               peak      at peak    allocs  live at end
    (before trace)          0 B          0 B         0          0 B
    4000               3.91 KiB     3.91 KiB         1          0 B
    1000                 1000 B       1000 B         1          0 B
    largest allocations live at the peak (2 of 2):
           bytes  category         step  lifetime        who
        3.91 KiB  4000                3  0.450 ms        aten::linear
          1000 B  1000                3  0.650 ms        -
    reserved but unallocated (cached by the allocator): 2.00 MiB at the peak, at most 2.00 MiB (+0.050 ms)
    steps (1):
      step     start ms        start         peak          end       growth    survivors
         3        0.000          0 B     4.88 KiB          0 B          0 B          0 B
    leak: no verdict on fewer than 3 steps (1 here)
    OUT OF MEMORY at +0.300 ms (ts 300.0): asked for 4.00 MiB in aten::mm, step 3
      allocated 4.88 KiB, reserved 5.86 KiB (1000 B reserved but unallocated: cached by the allocator, which it could not release), capacity 8.00 GiB; 4.88 KiB freed after it
      at the OOM: 4000 3.91 KiB, 1000 1000 B
      live     3.91 KiB  aten::linear
      live       1000 B  -
    (a trace cannot tell segments, fragmentation inside blocks or the failing allocation's stack: record a memory snapshot (torch.cuda.memory._record_memory_history, _dump_snapshot))
? 0
# Two OOMs on one device come in time order (the file has them the other way round); a CPU OOM
# has no totals (null, not 0); OOMs on a device without memory events, or without a device,
# are counted in ooms_elsewhere.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/explain/y_two_ooms.json --json - | lua5.4 tests/jget.lua inputs.1.oom_events inputs.1.ooms_elsewhere series.2.device series.2.ooms.# series.2.ooms.1.ts series.2.ooms.1.bytes series.2.ooms.1.reserved_unallocated series.2.ooms.1.freed_after series.2.ooms.2.ts series.2.ooms.2.bytes series.2.ooms.2.reserved_unallocated series.2.ooms.2.capacity
5
2
cuda:0
2
10
4194304
2097088
64
20
2097152
0
null
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/explain/y_two_ooms.json --json - | lua5.4 tests/jget.lua series.1.device series.1.ooms.# series.1.ooms.1.bytes series.1.ooms.1.total_allocated series.1.ooms.1.total_reserved series.1.ooms.1.reserved_unallocated series.1.ooms.1.capacity series.1.ooms.1.allocated series.1.ooms.1.op series.1.ooms.1.step series.1.reserved_unallocated_at_peak
cpu
1
140737488355328
null
null
null
null
8
null
null
null
? 0
# Steps, growth and leaks: 10 KiB per step never freed over four steps (plus 5000 B made and
# freed in each): end_bytes grows by 10240 each step, the verdict says so and names aten::cat,
# blamed for what survives steps 2 and 3 only: not the first (one-time state), not the last
# (its results) (issue 26).
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/explain/y_leak.json --json - | lua5.4 tests/jget.lua series.1.steps.# series.1.steps.1.step series.1.steps.1.start_ts series.1.steps.1.start_bytes series.1.steps.1.peak_bytes series.1.steps.1.peak_ts series.1.steps.1.end_bytes series.1.steps.1.growth_bytes series.1.steps.1.survivors_bytes series.1.steps.4.end_bytes series.1.steps.4.categories.2.name series.1.steps.4.categories.2.end_bytes series.1.leak.verdict series.1.leak.per_step_bytes series.1.leak.made_by.1.name series.1.leak.made_by.1.bytes
4
1
100
0
15240
121
10240
10240
10240
40960
10240
40960
growth
10240
aten::cat
20480
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/explain/y_leak.json | grep -A6 "steps (4)"
    steps (4):
      step     start ms        start         peak          end       growth    survivors
         1        0.000          0 B    14.88 KiB    10.00 KiB    10.00 KiB    10.00 KiB
         2        0.100    10.00 KiB    24.88 KiB    20.00 KiB    10.00 KiB    10.00 KiB
         3        0.200    20.00 KiB    34.88 KiB    30.00 KiB    10.00 KiB    10.00 KiB
         4        0.300    30.00 KiB    44.88 KiB    40.00 KiB    10.00 KiB    10.00 KiB
    LEAK: 10.00 KiB per step over 4 steps (allocated at each step's end grows every step); made by aten::cat 20.00 KiB
? 0
# PyTorch 1.13 writes ProfilerStep#0 twice: two steps numbered 0, told apart by start_ts. End of
# step 100, 200, 200 B is no steady growth, but every step but the last leaves 100 B that is
# never freed: the survivors verdict, blamed on the second step's 100 B (issue 26).
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/explain/y_steps_113.json --json - | lua5.4 tests/jget.lua series.1.steps.# series.1.steps.1.step series.1.steps.1.start_ts series.1.steps.2.step series.1.steps.2.start_ts series.1.steps.2.start_bytes series.1.steps.2.end_bytes series.1.steps.2.survivors_bytes series.1.steps.3.step series.1.steps.3.end_bytes series.1.steps.3.survivors_bytes series.1.leak.verdict series.1.leak.per_step_bytes series.1.leak.made_by.1.name series.1.leak.made_by.1.bytes
3
0
0
0
100
100
200
100
1
200
0
survivors
100
(no op)
100
? 0
# done(report) gets the same figures: reserved but unallocated, leak, steps, and each OOM with
# its op path, step, thread, bytes freed after it, categories and live rows (with their ops).
$ hmem run tests/tiny/explain/done.lua tests/tiny/explain/y_oom.json -q --json $T/done.json
cuda:0	2092152	2096152	50.0	unknown	1	nil	1	1
 oom	300.0	4194304	aten::mm	aten::linear>aten::mm	3	0.0	1/1	5000	2	4000	aten::linear	1000	1000
 step	3	0.0	0	(before trace)
? 0
# The HTML page's data has the step bands and OOM markers in ns since the trace's first event
# (the step slice at 0 µs; the OOM at 300 µs asking 4 MiB), and its live table says who.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/explain/y_oom.json -q --html $T/r.html && grep -o '"steps":[^]]*\]\],"ooms":[^]]*\]\]' $T/r.html && grep -o '<td class=who>[^<]*' $T/r.html
"steps":[[0,1000000,3]],"ooms":[[300000,4194304]]
<td class=who>aten::linear
<td class=who>-
? 0
# An [OutOfMemory] event is read as strictly as a [memory] event: a bad Bytes stops with its
# position (exit 4).
$ hmem run size tests/tiny/explain/n_oom_bytes_string.json
hmem: tests/tiny/explain/n_oom_bytes_string.json:174: [OutOfMemory] event: "Bytes" is a string, expected an integer
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
