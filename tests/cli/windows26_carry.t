# Issue 26, what a window carries in and what steps, OOMs and leaks say.
#
# --steps 9 where no trace has ProfilerStep#9 is a usage error (exit 2) naming the steps there
# are (before: exit 0, every series at 0 B, peaks at "+-1669783687352 ms").
$ hmem run size tests/tiny/windows26/cut_steps.json --steps 9 -q
hmem: --steps 9: no trace has ProfilerStep#9 (tests/tiny/windows26/cut_steps.json: 1-6)
Try 'hmem --help'.
? 2
# A 2021 trace (no Addr, no Total Allocated): one step of resnet50 starts with what the whole
# replay has live at its opening, 19267844 B on the CPU (before: 4 B, peak 38.5 MB, end 0
# against 19.3 / 57.8 / 19.3 MB in the full run).
$ hmem run size tests/data/kineto_tb_plugin/resnet50_num_workers_0_worker0.1623143089861.pt.trace.json.gz --steps 6 --json - | lua5.4 tests/jget.lua series.1.device series.1.before_trace_bytes series.1.peak_bytes series.1.end_bytes series.1.steps.1.start_bytes series.1.steps.1.end_bytes
cpu
19267844
57803264
19267840
19267844
19267840
? 0
# A device with no memory event inside the window carries its memory in: the CPU of
# tests/tiny/windows26/silent.json holds 64 B from 5 to 900 µs; in a window from 310 to 590 µs
# it is at 64 B, its peak at the window's opening (before: 0 B at "+-0.100 ms").
$ hmem run size tests/tiny/windows26/silent.json --from ts:310 --to ts:590 --top 0 | sed -n 2,5p
  cpu: peak 64 B at +0.305 ms (ts 310.0), end 64 B
  0 allocs, 0 frees (0 matched)
    category                   peak      at peak    allocs  live at end
    (before window)            64 B         64 B         0         64 B
? 0
# --to alone cuts steps and OOMs too: of the six steps of cut_steps.json, --to 0.25 keeps 1, 2
# and 3 (3 partial: no verdict); before, all six were kept.
$ hmem run size tests/tiny/windows26/cut_steps.json --to 0.25 --json - | lua5.4 tests/jget.lua series.1.steps.# series.1.steps.3.partial series.1.steps.3.end_ts series.1.leak.verdict series.1.leak.steps
3
true
250
unknown
2
? 0
# An [OutOfMemory] at the same ts as allocations: those before it in the file were made (200 B
# at 100 µs, with 1000 B from 50 µs), the 3000 B after it were not: allocated 1200, as the
# event's own Total Allocated (before: 4200).
$ hmem run size tests/tiny/windows26/oom_tie.json --json - | lua5.4 tests/jget.lua series.1.ooms.1.total_allocated series.1.ooms.1.allocated series.1.ooms.1.freed_after
1200
1200
4200
? 0
# Leak blame: 4 B leak per step, and 7.57 MiB of optimizer state made once in step 1; only
# what survives the steps after the first (and before the last) is blamed: 8 B of aten::cat
# (before: aten::zeros 7.57 MiB, aten::cat 12 B).
$ hmem run size tests/tiny/windows26/blame.json --top 0 | grep LEAK
    LEAK: 4 B per step over 4 steps (allocated at each step's end grows every step); made by aten::cat 8 B
? 0
