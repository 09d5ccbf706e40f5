# Memory snapshots (issue 18, README "Snapshots"): a pickle is recognised by its first byte
# (PROTO), gzip or not, and its rows carry the fields only snapshots have.

# Every snapshot row field, from one alloc entry: frame (the innermost user frame; the
# unwinding frame is filtered out, PyTorch's module.py is not the user's), frames (innermost
# first), a line of 2^64-1 read as -1, block_bytes from the segments, bytes (requested),
# stream, compile_context, user_metadata, the record_function range around it.
$ python3 tests/snapshots/gen.py hostile $T/s && hmem run tests/snapshots/fields.lua $T/s/fields.pickle --json - | lua5.4 tests/jget.lua series.1.categories.2.name series.1.categories.2.end_bytes
/home/u/x.py(-1): f|2|_call_impl|-1|/home/u/x.py|512|100|7|Torch-Compiled Region: 0/0|tag|## forward ##
100
? 0
# The same snapshot gzipped, under any name.
$ gzip -c $T/s/fields.pickle > $T/s/snap.data && hmem run tests/snapshots/fields.lua $T/s/snap.data --json - | lua5.4 tests/jget.lua series.1.categories.2.end_bytes inputs.1.memory_events series.1.zero_byte_events
100
2
1
? 0
# hmem events: the zero-byte event that opens each device with segments (the totals before the trace:
# nothing here) with the reserved bytes from the segments, then the alloc.
$ hmem events $T/s/fields.pickle | cut -d, -f3-9
device,ts,kind,bytes,addr,total_allocated,total_reserved
cuda:0,1000.0,zero,0,,0,2097152
cuda:0,1000.0,alloc,100,4096,100,2097152
? 0
# A directory (issue 18) lists memory snapshots named *.pickle and *.pickle.gz next to the
# traces; *.pkl, a name other pickles share, only when named on the command line.
$ mkdir -p $T/d/sub && cp $T/s/oom.pickle $T/d/a.pickle && gzip -c $T/s/fields.pickle > $T/d/sub/b.pickle.gz && cp $T/s/oom.pickle $T/d/c.pkl && cp tests/tiny/y_pair_basic.json $T/d/t.json && cd $T && hmem run size d --json - | lua5.4 "$OLDPWD/tests/jget.lua" inputs.1.path inputs.2.path inputs.3.path inputs.4
hmem: note: 2 memory snapshots and 1 trace are reported side by side, not joined (matching a snapshot's entries to a trace's events by address and time is unverified)
d/a.pickle
d/sub/b.pickle.gz
d/t.json
nil
? 0
# A 1.13 snapshot (issue 18): a live block with a history is a row at the start, never freed,
# with its history's newest (first) entry: 3000 bytes asked from c.py(3) in a block of 3072;
# the block without history is a row too (issue 25), of its 1024 bytes, and does not say what
# it asked for, so the internal waste of the device and of the segment is unknown (null). Both
# are live before the first event: before_trace_bytes is all 4024.
$ hmem run tests/snapshots/by_frame.lua $T/s/legacy.pickle --json - | lua5.4 tests/jget.lua series.1.before_trace_bytes series.1.end_bytes series.1.categories.2.name series.1.categories.2.end_bytes series.1.snapshot.at_end.internal_waste_bytes series.1.snapshot.segments.1.requested_bytes
4024
4024
/home/u/c.py(3): h
3000
null
null
? 0
# A trace and a snapshot in one run (issue 18) are reported side by side, never joined, and
# hmem says so on standard error; two snapshots, or -q, say nothing.
$ hmem run size tests/tiny/y_pair_basic.json $T/s/oom.pickle --json $T/mixed.json && lua5.4 tests/jget.lua series.1.path < $T/mixed.json | sed 's|.*/||'
hmem: note: 1 memory snapshot and 1 trace are reported side by side, not joined (matching a snapshot's entries to a trace's events by address and time is unverified)
y_pair_basic.json
? 0
$ hmem run size $T/s/oom.pickle $T/s/legacy.pickle --json $T/two.json && hmem run -q size tests/tiny/y_pair_basic.json $T/s/oom.pickle --json $T/q.json
? 0
