# Issue 25, item 7. A snapshot without time_us (before PyTorch 2.2) numbers its entries 1 us
# apart: the summary, the HTML report and --json (inputs[].time_source) say that its times are
# entry numbers, not milliseconds; time_source is "time_us" when entries have it, null without
# entries. gen.py's 2.1 snapshot has 1000 entries without time_us.
$ python3 tests/snapshots/gen.py $T/g > /dev/null && hmem run size $T/g/2.1_p4.pickle | sed -n 2p
  (this snapshot's entries have no time_us (PyTorch before 2.2): times are entry numbers, entry N at +N us (+0.001 ms each), not milliseconds)
? 0
$ hmem run size $T/g/2.1_p4.pickle --json - | lua5.4 tests/jget.lua inputs.1.time_source inputs.1.entries
entry_number
1000
? 0
$ hmem run size $T/g/2.1_p4.pickle --html $T/u.html && grep -c '<p class=note>Times: this snapshot.s entries have no time_us' $T/u.html
2
? 0
$ hmem run size tests/data/snapshots/sketchkv2_my_snapshot.pickle tests/data/snapshots/docubox_dump_snapshot.pickle --json - | lua5.4 tests/jget.lua inputs.1.time_source inputs.2.time_source inputs.2.entries
time_us
null
0
? 0
# A snapshot whose ring buffer is empty is not "a trace without Addr": the summary says that
# no trace entry was recorded and how to record them (docubox: 12 segments, no entry).
$ hmem run size tests/data/snapshots/docubox_dump_snapshot.pickle | grep -c 'has no Addr'; hmem run size tests/data/snapshots/docubox_dump_snapshot.pickle | sed -n 4p
0
  (the snapshot recorded no trace entries for this device, only its segments (its live blocks are the rows, at the start): record entries with torch.cuda.memory._record_memory_history() before the work)
? 0
# Free memory in memory_viz's terms (python -m torch.cuda._memory_viz stats, segsum in
# torch/cuda/_memory_viz.py): internal free over active_allocated blocks (ring25.pickle by
# hand: A 524288 - 500000 + B 262144 - 200000 = 86432; D is pending its free) and external
# free, every other block (C 262144 + D 1048576 + 1048576 free + segment 3's 2097152 =
# 4456448), as replay25.py computes them from the pickle. The summary splits the reserved
# 5.00 MiB once: requested, the live blocks' rounding, free blocks of segments holding a live
# block, reclaimable segments (it printed "stranded", rounding included, beside the rounding).
$ python3 tests/snapshots/gen.py hostile $T/h && python3 tests/snapshots/replay25.py $T/h/ring25.pickle | sed -n 9,10p
memviz_internal 86432
memviz_external 4456448
? 0
$ hmem run size $T/h/ring25.pickle --json - | lua5.4 tests/jget.lua series.1.snapshot.at_end.internal_free_bytes series.1.snapshot.at_end.external_free_bytes
86432
4456448
? 0
$ hmem run size $T/h/ring25.pickle | grep 'at the end'
    segments at the end: 3 holding 5.00 MiB = 1.62 MiB requested by live blocks + 131.84 KiB their rounding + 1.25 MiB free blocks in segments holding one + 2.00 MiB reclaimable (segments holding none)
    blocks at the end: 768.00 KiB allocated, 1.00 MiB pending a free, 3.25 MiB free (the largest 2.00 MiB); memory_viz stats: internal free 84.41 KiB, external free 4.25 MiB (256.00 KiB of it in segments holding an allocated block)
? 0
# The same on the real snapshots, against memory_viz's arithmetic in Python.
$ for f in tests/data/snapshots/docubox_dump_snapshot.pickle tests/data/snapshots/sketchkv2_my_snapshot.pickle; do python3 tests/snapshots/replay25.py $f | sed -n 9,10p > $T/want; hmem run -q size $f --json - | lua5.4 tests/snapshots/figures25.lua | sed -n 9,10p | diff $T/want - && cat $T/want; done
memviz_internal 0
memviz_external 18190848
memviz_internal 17470072
memviz_external 736153600
? 0
