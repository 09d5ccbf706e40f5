# Pinned host memory of a 2026 snapshot (issue 18, README "Snapshots"): host_segments and
# host_traces are one more series, device cpu, marked pinned_host. tests/snapshots/gen.py
# writes host_only.pickle (no GPU keys, as record_cuda=False records): a 4 MiB segment whose
# live 2 MiB block asked for 1500000 bytes, a free of 1000 bytes without its alloc, a 2 MiB
# block allocated and freed. By hand: 1000 bytes before the trace, a peak of
# 1500000 + 2097152 = 3597152, an end of 1500000, 4194304 reserved, 2097152 - 1500000 = 597152
# of internal waste.
$ python3 tests/snapshots/gen.py hostile $T/s && hmem run size $T/s/host_only.pickle -q --json - | lua5.4 tests/jget.lua series.1.device series.1.snapshot.pinned_host series.1.before_trace_bytes series.1.peak_bytes series.1.end_bytes series.1.max_reserved_bytes series.1.snapshot.at_end.internal_waste_bytes series.1.allocs series.1.frees series.1.matched_frees
cpu
true
1000
3597152
1500000
4194304
597152
2
2
1
? 0
# The summary says which memory it is.
$ hmem run size $T/s/host_only.pickle -q | grep -E '^  cpu|pinned'
  cpu: peak 3.43 MiB at +0.020 ms (ts 110.0), end 1.43 MiB, max reserved 4.00 MiB
    pinned host memory (host_segments, host_traces), not the CPU allocator's
? 0
# The ring buffer overflowed: a warning naming the file, and the flag in --json inputs[].
$ hmem run size $T/s/host_only.pickle --json $T/o.json 2>&1 >/dev/null | sed "s#$T#T#" && lua5.4 tests/jget.lua inputs.1.trace_alloc_overflowed inputs.1.trace_alloc_max_entries < $T/o.json
hmem: warning: T/s/host_only.pickle: the snapshot's ring buffer overflowed (trace_alloc_max_entries 4): its earliest entries were dropped, so frees of what they allocated count as (before trace)
true
4
? 0
# -q keeps it quiet; a GPU series of a snapshot is not pinned_host; a trace has no such keys.
$ hmem run size $T/s/host_only.pickle -q --json - > /dev/null; hmem run size $T/s/oom.pickle --json - | lua5.4 tests/jget.lua series.1.snapshot.pinned_host inputs.1.trace_alloc_overflowed && hmem run size tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua inputs.1.trace_alloc_overflowed
false
null
nil
? 0
# host_traces with two lists of entries: hmem reads one host allocator and says so.
$ { hmem run size $T/s/host_two_lists.pickle; echo "exit $?"; } 2>&1 | sed "s#$T#T#"
hmem: T/s/host_two_lists.pickle:11: memory snapshot: 'host_traces' holds more than one list of entries (hmem reads one host allocator)
hmem: stopped; use --keep-going to skip traces that cannot be read
exit 4
? 0
