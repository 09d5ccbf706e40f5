# Snapshots are hostile input, round 2 (issue 24, README "Bad input", "A snapshot"): what a
# small file makes hmem do is bounded by its size. The files are written by
# tests/snapshots/contain2.py (each kind is described there).

# One trace list shared through the memo by 65,535 devices: a file of a few hundred bytes
# was 1.3 million events (152 MB, 1.4 s with 20 entries per list; 1.7 GB and 38 s with
# more). A trace list, entry, segment, block list or block reached twice is refused.
$ python3 tests/snapshots/contain2.py share_trace $T/st.pickle.gz 20 && test $(wc -c < $T/st.pickle.gz) -lt 600 && { hmem run size $T/st.pickle.gz; echo "exit $?"; } 2>&1 | sed "s#$T#T#"
hmem: T/st.pickle.gz:46: memory snapshot: the trace list made here is reached a second time through the memo (a memory snapshot shares only frames; each entry, trace list, segment and block is its own)
hmem: stopped; use --keep-going to skip traces that cannot be read
exit 4
? 0
# One entry dict of 20,000 keys, the trace of 5,000 entries (old: 2 s of key scans; 200,000
# keys shared 50,000 times took 56 s): refused at its second place. 1.13: 8,000 segments
# sharing one list of blocks (old: 5.5 s from 17 KB of gzip): refused too.
$ python3 tests/snapshots/contain2.py shared_dict $T/sd.pickle 20000 && python3 tests/snapshots/contain2.py shared_blocks $T/sb.pickle 8000 && for f in sd sb; do hmem run size $T/$f.pickle -q 2>&1 | sed "s#$T#T#"; done
hmem: T/sd.pickle:48: memory snapshot: the trace entry made here is reached a second time through the memo (a memory snapshot shares only frames; each entry, trace list, segment and block is its own)
hmem: stopped; use --keep-going to skip traces that cannot be read
hmem: T/sb.pickle:82: memory snapshot: the list of blocks made here is reached a second time through the memo (a memory snapshot shares only frames; each entry, trace list, segment and block is its own)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 0
# Real snapshots share only frame lists and frame dicts: they still read.
$ hmem run size tests/data/snapshots/docubox_dump_snapshot.pickle tests/data/snapshots/sketchkv2_my_snapshot.pickle -q > /dev/null; echo "exit $?"
exit 0
? 0
# A LONG_BINPUT at an index as far as its byte offset (after a string of 32 MiB that nothing
# reads): the memo took 8 bytes per index below it (old: 623 MB peak, 4.2 s). Now the memo
# costs what it holds and the string is checked in pieces, not kept: the peak stays small.
$ command -v /usr/bin/time > /dev/null || { echo "SKIP: no /usr/bin/time"; exit 0; }; python3 tests/snapshots/contain2.py memo_far $T/mf.pickle.gz 32 && /usr/bin/time -f "%M" -o $T/rss hmem run size $T/mf.pickle.gz -q 2>&1 | sed "s#$T#T#"; test $(cat $T/rss | tail -1) -lt 120000 && echo "peak under 120 MB"
hmem: T/mf.pickle.gz:2: memory snapshot: neither 'segments' nor 'device_traces' (not a memory snapshot?)
hmem: stopped; use --keep-going to skip traces that cannot be read
peak under 120 MB
? 0
# 32 distinct strings of 4 MiB under a key hmem never reads (128 MiB in 131 KB of gzip; old:
# 234 MB peak): dropped after their UTF-8 is checked.
$ command -v /usr/bin/time > /dev/null || { echo "SKIP: no /usr/bin/time"; exit 0; }; python3 tests/snapshots/contain2.py strings $T/s.pickle.gz 32 && HMEM_DEBUG_SNAPSHOT_WORK=1 /usr/bin/time -f "%M" -o $T/rss hmem run size $T/s.pickle.gz -q 2>&1 >/dev/null | sed 's/.*, dropped/dropped/'; test $(cat $T/rss | tail -1) -lt 120000 && echo "peak under 120 MB"
dropped string bytes 134217728
peak under 120 MB
? 0
# A gzip bomb of 150 million empty dicts (290 KB; 6 GB of tree before): the tree may take 256
# bytes per byte of the file read, plus 256 MiB.
$ python3 tests/snapshots/contain2.py empty_dicts $T/ed.pickle.gz 150 && { hmem run size $T/ed.pickle.gz; echo "exit $?"; } 2>&1 | sed "s#$T#T#; s/:[0-9]*: the values/:N: the values/; s/take [0-9]* MiB/take N MiB/; s/the [0-9]* bytes of input/the N bytes of input/"
hmem: T/ed.pickle.gz:N: the values read so far take N MiB, more than 256 times the N bytes of input read (a compression bomb?)
hmem: stopped; use --keep-going to skip traces that cannot be read
exit 4
? 0
# 1,000 oom entries sharing one stack of 20,000 frames (452 bytes of gzip; old: 1.26 GB of
# --json, 126 MB for 100 of them): --json writes the first 64 frames of each OOM and
# frames_total, the summary 4 and how many more.
$ python3 tests/snapshots/contain2.py oom_frames $T/of.pickle.gz 1000 && hmem run size $T/of.pickle.gz -q --json $T/of.json && test $(wc -c < $T/of.json) -lt 8000000 && echo "under 8 MB" && lua5.4 tests/jget.lua series.1.ooms.1000.frames_total series.1.ooms.1000.frames.64.line series.1.ooms.1000.frames.65 < $T/of.json && hmem run size $T/of.pickle.gz -q | grep -m1 'more frames'
under 8 MB
20000
10
nil
            (19996 more frames; --json has the first 64)
? 0
# Allocations at time_us -2^62 and 2^62 ns, entries without time_us after them (each 1 us
# later), and a free of the first: old, the clock passed 2^62 ns and `hmem allocations`
# printed a lifetime of -9223372036854773.616 ms. The clock is checked at each step.
$ python3 tests/snapshots/contain2.py clock $T/ck.pickle 3 && { hmem allocations size $T/ck.pickle; echo "exit $?"; } 2>&1 | sed "s#$T#T#"
hmem: T/ck.pickle:162: memory snapshot: an entry without 'time_us', 1 us after one at 4611686018427387000 ns, is past the clock's range (times within +-2^62 ns)
hmem: stopped; use --keep-going to skip traces that cannot be read
exit 4
? 0
# Bytes after the pickle's STOP are an error at their offset, as after a JSON trace's value
# (old: ignored).
$ python3 tests/snapshots/contain2.py trailing $T/tr.pickle 5 && { hmem run size $T/tr.pickle; echo "exit $?"; } 2>&1 | sed "s#$T#T#"
hmem: T/tr.pickle:108: unexpected data after the pickle's STOP opcode (a pickle holds one value)
hmem: stopped; use --keep-going to skip traces that cannot be read
exit 4
? 0
# Protocol 0 and 1 pickles are named as such, with how to re-save them (old: "not a JSON
# trace").
$ python3 -c 'import pickle,sys; s={"segments": [], "device_traces": [[]]}; [open(sys.argv[1] + str(p), "wb").write(pickle.dumps(s, protocol=p)) for p in (0, 1)]' $T/p && for p in 0 1; do hmem run size $T/p$p -q 2>&1 | sed "s#$T#T#"; done
hmem: T/p0:0: a pickle of protocol 0 or 1 (it starts without a PROTO opcode): hmem reads protocols 2 to 5; re-save it with pickle.dump(snapshot, f, protocol=4)
hmem: stopped; use --keep-going to skip traces that cannot be read
hmem: T/p1:0: a pickle of protocol 0 or 1 (it starts without a PROTO opcode): hmem reads protocols 2 to 5; re-save it with pickle.dump(snapshot, f, protocol=4)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 0
# --annotate copies a JSON trace with counters added; a snapshot is refused (exit 2) and
# nothing is written (old: a copy of the pickle, exit 0).
$ python3 tests/snapshots/contain2.py trailing $T/ok.pickle 0 && { hmem run size $T/ok.pickle -q --annotate $T/out.json; echo "exit $?"; } 2>&1 | sed "s#$T#T#"; test -e $T/out.json && echo written || echo "nothing written"
hmem: --annotate: T/ok.pickle is a memory snapshot (a pickle): only a JSON trace can be annotated; --perfetto writes the counter tracks alone
exit 2
nothing written
? 0
