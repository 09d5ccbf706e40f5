# Steps on memory snapshots (issue 25, item 5). tests/snapshots/steps25.py writes steps.pickle:
# ProfilerStep#1 to #4 in external_annotations (START 100 * N, END 100 * N + 90, in µs), each
# step allocating 1000 bytes never freed (train.py(12)) and 5000 bytes freed in the step
# (model.py(5)), with an Optimizer.zero_grad range inside each step that is no step. By hand:
# step N starts with 1000 * (N - 1) bytes, peaks at 1000 * N + 5000 at 100 * N + 20 and ends
# with 1000 * N, so the end of every step grows by 1000 bytes: a leak of 1000 bytes per step,
# made by train.py(12). The summary's step table and verdict, as for a trace:
$ python3 tests/snapshots/steps25.py $T/s && hmem run size $T/s/steps.pickle | sed -n '/steps (/,$p'
    steps (4):
      step     start ms        start         peak          end       growth    survivors
         1        0.000          0 B     5.86 KiB       1000 B       1000 B       1000 B
         2        0.100       1000 B     6.84 KiB     1.95 KiB       1000 B       1000 B
         3        0.200     1.95 KiB     7.81 KiB     2.93 KiB       1000 B       1000 B
         4        0.300     2.93 KiB     8.79 KiB     3.91 KiB       1000 B       1000 B
...
? 0
# The same in --json (times in the snapshot's µs); steps_note is null when there are steps. A
# snapshot's rows have no op: who made the surviving bytes (of steps 2 and 3: neither the first
# nor the last) is their first user frame.
$ hmem run size $T/s/steps.pickle --json - | lua5.4 tests/jget.lua series.1.steps.# series.1.steps.1.step series.1.steps.1.start_ts series.1.steps.1.end_ts series.1.steps.4.start_bytes series.1.steps.4.peak_bytes series.1.steps.4.peak_ts series.1.steps.4.end_bytes series.1.steps.4.growth_bytes series.1.steps.4.survivors_bytes series.1.leak.verdict series.1.leak.per_step_bytes series.1.leak.made_by.1.name series.1.leak.made_by.1.bytes series.1.steps_note
4
1
100
190
3000
9000
420
4000
1000
1000
growth
1000
/home/u/train.py(12): train
2000
null
? 0
# --steps on a snapshot: steps 2 and 3 are the window from 200 to 390 µs: step 1's 1000 bytes
# live when it opens, their 4 allocations, the peak of 8000 bytes at 320 µs, two steps and no
# verdict on fewer than three.
$ hmem run size $T/s/steps.pickle --steps 2-3 --json - | lua5.4 tests/jget.lua series.1.before_trace_bytes series.1.allocs series.1.peak_bytes series.1.peak_ts series.1.steps.# series.1.steps.1.step series.1.steps.2.step series.1.leak.verdict
1000
4
8000
320
2
2
3
unknown
? 0
# row.step in a rule: each allocation's step, two a step.
$ printf 'function classify(row) return "step " .. tostring(row.step) end\n' > $T/r.lua && hmem run $T/r.lua $T/s/steps.pickle --json - | lua5.4 tests/jget.lua series.1.categories.2.name series.1.categories.2.allocs series.1.categories.3.name series.1.categories.4.name series.1.categories.5.name series.1.categories.5.allocs
step 1
2
step 2
step 3
step 4
2
? 0
# nosteps.pickle has the same entries and 12 record_function ranges, none a ProfilerStep#N
# (Optimizer.zero_grad#AdamW.zero_grad, enumerate(DataLoader)#..., train_step): no steps, no
# verdict, and why, in the summary, --json and done.
$ hmem run size $T/s/nosteps.pickle | grep -E ' steps|leak|LEAK'
    no steps: none of the snapshot's 12 record_function ranges (such as 'enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__') is a ProfilerStep#N, which torch.profiler.profile opens at each prof.step() when it has a schedule
? 0
$ printf 'function classify(r) return "x" end\nfunction done(rep) print(#rep.series[1].steps, rep.series[1].leak.verdict, rep.series[1].steps_note) end\n' > $T/d.lua && hmem run $T/d.lua $T/s/nosteps.pickle --json $T/o.json && lua5.4 tests/jget.lua series.1.steps.# series.1.steps_note < $T/o.json
0	unknown	none of the snapshot's 12 record_function ranges (such as 'enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__') is a ProfilerStep#N, which torch.profiler.profile opens at each prof.step() when it has a schedule
0
none of the snapshot's 12 record_function ranges (such as 'enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__') is a ProfilerStep#N, which torch.profiler.profile opens at each prof.step() when it has a schedule
? 0
# A real snapshot whose external_annotations is empty (DocuBox's, PyTorch 2.5 or later).
$ hmem run size tests/data/snapshots/docubox_dump_snapshot.pickle | grep 'steps'
    no steps: the snapshot has no record_function range (external_annotations, PyTorch 2.5 on, is absent or empty; ranges of other threads than _record_memory_history's need global_record_annotations=True)
? 0
# A window between two steps holds none of them, and says so.
$ hmem run size $T/s/steps.pickle --from ts:195 --to ts:198 --json - | lua5.4 tests/jget.lua series.1.steps.# series.1.steps_note
0
none of the snapshot's 4 ProfilerStep#N ranges overlaps the window
? 0
# open.pickle is steps.pickle taken during step 4 (ProfilerStep#4 has no END): the step lasts to
# the last entry (430 µs), is marked open (and partial) and left out of the verdict, which
# steps 1 to 3 make; who made the surviving bytes: step 2's (neither the first nor the last).
$ hmem run size $T/s/open.pickle | sed -n '/^         4 /,$p'
         4        0.300     2.93 KiB     8.79 KiB     3.91 KiB       1000 B       1000 B  open (the snapshot ends in it)
    LEAK: 1000 B per step over 3 steps (allocated at each step's end grows every step); made by /home/u/train.py(12): train 1000 B
    (step 4, which the snapshot ends in, left out of the verdict)
? 0
$ hmem run size $T/s/open.pickle --json - | lua5.4 tests/jget.lua series.1.steps.4.end_ts series.1.steps.4.open series.1.steps.4.partial series.1.steps.3.open series.1.leak.verdict series.1.leak.steps series.1.leak.per_step_bytes
430
true
true
false
growth
3
1000
? 0
