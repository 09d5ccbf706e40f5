# Issue 25, item 2: a snapshot's events carry the device's totals, so what the allocator holds
# unused (reserved minus allocated, allocated being requested bytes: README "Snapshots") is
# exact at the peak, at its most (with its time) and at each OOM. ring25.pickle by hand
# (tests/cli/snap25_rows.t): before the first entry 1504096 allocated, 3145728 reserved
# (segments 1 and 2); +20 us B (200000); +30 us segment 3 (2 MiB) is allocated: the gap is
# then 5242880 - 1700000 = 3542880, its most, reached at a segment event; +40 us C (1500000)
# makes the peak, 3200000, gap 2042880; C is freed; the OOM at +60 us finds 3542880 unused.
# replay25.py replays the pickle in Python, hmem's --json must say the same.
$ python3 tests/snapshots/gen.py hostile $T/h && python3 tests/snapshots/replay25.py $T/h/ring25.pickle > $T/want && hmem run -q size $T/h/ring25.pickle --json - | lua5.4 tests/snapshots/figures25.lua | diff $T/want - && sed -n 3,8p $T/want
peak 3200000
peak_us 40
gap_at_peak 2042880
max_gap 3542880
max_gap_us 30
ooms 3542880
? 0
# The summary, the OOM section, and done(report) agree; the OOM's total_allocated is the
# replay's (it was null).
$ hmem run size $T/h/ring25.pickle | grep 'reserved but\|allocated 1.62'
    reserved but unallocated (cached by the allocator): 1.95 MiB at the peak, at most 3.38 MiB (+0.020 ms)
      allocated 1.62 MiB, reserved 5.00 MiB (3.38 MiB reserved but unallocated: cached by the allocator, which it could not release); 0 B freed after it
? 0
$ printf 'function classify(r) return "x" end\nfunction done(rep) local s = rep.series[1]; print(s.reserved_unallocated_at_peak, s.max_reserved_unallocated, s.max_reserved_unallocated_ts, s.ooms[1].reserved_unallocated) end\n' > $T/done.lua && hmem run $T/done.lua $T/h/ring25.pickle --json $T/r.json && lua5.4 tests/jget.lua series.1.ooms.1.total_allocated series.1.ooms.1.reserved_unallocated < $T/r.json
2042880	3542880	30.0	3542880
1700000
3542880
? 0
# Real snapshots: sketchkv2's peak is before its one entry; the gap there is its segments'
# size minus its live blocks' requested bytes (17133731840 - 16380108176, from the file's own
# segments[]), no longer null; its one entry frees 8 bytes, so the gap is at its most after it.
$ python3 tests/snapshots/replay25.py tests/data/snapshots/sketchkv2_my_snapshot.pickle | sed -n '5,7p'
gap_at_peak 753623664
max_gap 753623672
max_gap_us 1729931410850299
? 0
$ hmem run -q size tests/data/snapshots/sketchkv2_my_snapshot.pickle --json - | lua5.4 tests/snapshots/figures25.lua | sed -n '5,7p'
gap_at_peak 753623664
max_gap 753623672
max_gap_us 1729931410850299
? 0
# Every generation gen.py writes (segment events, pending frees, OOMs, a ring buffer that
# dropped entries, no time_us before 2.2), both devices: hmem agrees with the Python replay.
$ python3 tests/snapshots/gen.py $T/g > /dev/null && for f in $T/g/*_p4.pickle; do for d in 0 1; do python3 tests/snapshots/replay25.py $f --device $d > $T/want && hmem run -q size $f --json - | lua5.4 tests/snapshots/figures25.lua cuda:$d | diff -q $T/want - > /dev/null || echo "differs: $f cuda:$d"; done; done; echo checked
checked
? 0
