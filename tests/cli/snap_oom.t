# Memory snapshots (issue 18): an oom entry reaches the same OOM report as a trace's
# [OutOfMemory], with what only a snapshot has. tests/snapshots/gen.py writes oom.pickle, whose
# figures are worked out by hand: segments A (1 MiB, 2 MiB long) and B (4 MiB, 2 MiB long);
# at the OOM A holds a block asking 1000000 bytes and B one asking 1500000 (freed after it):
# 2 segments, 4194304 reserved, 2500000 asked for, nothing reclaimable, 4194304 - 2500000 =
# 1694304 stranded; cudaMemGetInfo said 3 MiB free; the failing allocation came from b.py(7).
$ python3 tests/snapshots/gen.py hostile $T/s && hmem run size $T/s/oom.pickle --json - | lua5.4 tests/jget.lua series.1.ooms.1.bytes series.1.ooms.1.device_free series.1.ooms.1.allocated series.1.ooms.1.total_reserved series.1.ooms.1.freed_after series.1.ooms.1.frame series.1.ooms.1.segments.segments series.1.ooms.1.segments.reserved_bytes series.1.ooms.1.segments.requested_bytes series.1.ooms.1.segments.reclaimable_bytes series.1.ooms.1.segments.stranded_bytes
4194304
3145728
2500000
4194304
1500000
/home/u/b.py(7): g
2
4194304
2500000
0
1694304
? 0
# Its stack, innermost first, without the unwinding frame (as memory_viz shows it).
$ hmem run size $T/s/oom.pickle --json - | lua5.4 tests/jget.lua series.1.ooms.1.frames.1.name series.1.ooms.1.frames.2.file series.1.ooms.1.frames.2.line series.1.ooms.1.frames.3.file series.1.ooms.1.frames.4
_call_impl
/home/u/b.py
7
/home/u/a.py
nil
? 0
# At the end: A holds its block of 1 MiB (asked 1000000: 48576 bytes of internal waste) and a
# free 1 MiB; B is wholly free (2 MiB reclaimable); 2097152 - 1000000 = 1097152 stranded in A.
$ hmem run size $T/s/oom.pickle --json - | lua5.4 tests/jget.lua series.1.snapshot.at_end.segments series.1.snapshot.at_end.reserved_bytes series.1.snapshot.at_end.requested_bytes series.1.snapshot.at_end.allocated_bytes series.1.snapshot.at_end.pending_free_bytes series.1.snapshot.at_end.free_bytes series.1.snapshot.at_end.largest_free_bytes series.1.snapshot.at_end.reclaimable_bytes series.1.snapshot.at_end.stranded_bytes series.1.snapshot.at_end.internal_waste_bytes series.1.snapshot.segments.2.address series.1.snapshot.segments.2.free_bytes series.1.snapshot.segments.2.blocks
2
4194304
1000000
1048576
0
3145728
2097152
2097152
1097152
48576
4194304
2097152
1
? 0
# The summary: the OOM section says what the snapshot adds, and no longer that a trace
# cannot tell it.
$ hmem run size $T/s/oom.pickle | sed -n '/segments at the end/,$p'
    segments at the end: 2 holding 4.00 MiB = 976.56 KiB requested by live blocks + 47.44 KiB their rounding + 1.00 MiB free blocks in segments holding one + 2.00 MiB reclaimable (segments holding none)
    blocks at the end: 1.00 MiB allocated, 0 B pending a free, 3.00 MiB free (the largest 2.00 MiB); memory_viz stats: internal free 47.44 KiB, external free 3.00 MiB (1.00 MiB of it in segments holding an allocated block)
    no steps: the snapshot has no record_function range (external_annotations, PyTorch 2.5 on, is absent or empty; ranges of other threads than _record_memory_history's need global_record_annotations=True)
    OUT OF MEMORY at +0.040 ms (ts 140.0): asked for 4.00 MiB
      allocated 2.38 MiB, reserved 4.00 MiB (1.62 MiB reserved but unallocated: cached by the allocator, which it could not release); 1.43 MiB freed after it
      at the OOM: normal 1.43 MiB, small (< 1 MiB) 976.56 KiB
      live     1.43 MiB  /home/u/b.py(7): g
      live   976.56 KiB  /home/u/a.py(1): f
      device free (cudaMemGetInfo) 3.00 MiB
      segments at the OOM: 2 holding 4.00 MiB = 2.38 MiB requested by live blocks + 1.62 MiB free in segments holding one (their rounding and free blocks) + 0 B reclaimable (segments holding none)
      asked by /home/u/b.py(7): g
      stack /usr/lib/python3/dist-packages/torch/nn/modules/module.py(1): _call_impl
            /home/u/b.py(7): g
            /home/u/a.py(1): f
? 0
# An expandable segment the trace maps in two parts, the OOM between them: the end's one
# segment does not replay to the OOM, so its segments are unknown (null), not made up.
$ hmem run size $T/s/oom_expandable.pickle --json - | lua5.4 tests/jget.lua series.1.ooms.1.segments series.1.snapshot.at_end.segments series.1.snapshot.at_end.reclaimable_bytes series.1.ooms.1.frames.1 && hmem run size $T/s/oom_expandable.pickle | grep 'segments at the OOM'
null
1
4194304
nil
      segments at the OOM: unknown (the trace's entries do not replay from the end's segments)
? 0

# done(report) sees what only a snapshot says about its OOM: device_free and the failing frame.
$ python3 tests/snapshots/gen.py hostile $T/s && printf 'function classify(r) return "x" end\nfunction done(rep) local o = rep.series[1].ooms[1]; print(o.device_free, o.frame) end\n' > $T/d.lua && hmem run $T/d.lua $T/s/oom.pickle --json $T/o.json
3145728	/home/u/b.py(7): g
? 0
