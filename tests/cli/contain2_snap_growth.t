# Snapshot reading is linear or n log n in what the file holds (issue 24): each input below
# grows 10 times, and the work hmem counts (HMEM_DEBUG_SNAPSHOT_WORK=1 prints it: dict
# look-ups, hash probes, and the steps of the loops over blocks, segments and annotations)
# may grow at most 15 times. The files are written by tests/snapshots/contain2.py. Before,
# the work of each grew as the square: 20,000 annotation ranges closed in the order they
# opened scanned every open range per END (0.01 s -> 0.55 s); 20,000 live blocks listed at
# falling addresses were inserted at the front of a sorted array (0.02 s -> 0.54 s); a 1.13
# snapshot of 20,000 devices walked every block for every device (0.14 s -> 3.5 s).
$ for k in annotations replay devices; do for n in 1000 10000; do python3 tests/snapshots/contain2.py $k $T/$k$n.pickle $n && HMEM_DEBUG_SNAPSHOT_WORK=1 hmem run size $T/$k$n.pickle -q 2>&1 >/dev/null | sed -n 's/.*snapshot work \([0-9]*\).*/\1/p' > $T/$k$n.work; done; echo "$k $(cat $T/${k}1000.work) $(cat $T/${k}10000.work)" | awk '$2 > 0 && $3 <= 15 * $2 { print $1 ": at most 15 times the work" } !($2 > 0 && $3 <= 15 * $2) { print $1 ": " $2 " -> " $3 }'; done
annotations: at most 15 times the work
replay: at most 15 times the work
devices: at most 15 times the work
? 0
# The same files give what they hold: every range an annotation, every block live at the
# OOM, every device a series.
$ hmem run size $T/annotations1000.pickle --json - | lua5.4 tests/jget.lua inputs.1.counts.host_slices && hmem run size $T/replay1000.pickle --json - | lua5.4 tests/jget.lua series.1.ooms.1.segments.segments series.1.ooms.1.segments.requested_bytes && hmem run size $T/devices10000.pickle --json - | lua5.4 tests/jget.lua series.10000.device series.10000.end_bytes
2000
1000
512000
cuda:9999
512
? 0
