# Issue 25, item 3: a window of a snapshot keeps the memory live when it opens. ring25.pickle
# (tests/cli/snap25_rows.t) from +35 us: 1700000 bytes are live then (A, B and D), carried in as
# (before window); the peak is 3200000 at +40 us. replay25.py replays the pickle in Python.
$ python3 tests/snapshots/gen.py hostile $T/h && python3 tests/snapshots/replay25.py $T/h/ring25.pickle --from 35
open 1700000
peak 3200000
peak_us 40
? 0
$ hmem run -q size $T/h/ring25.pickle --from ts:35 --json - | lua5.4 tests/snapshots/figures25.lua --from
open 1700000
peak 3200000
peak_us 40
? 0
$ hmem run size $T/h/ring25.pickle --from 0.025 | sed -n 2,5p
  cuda:0: peak 3.05 MiB at +0.030 ms (ts 40.0), end 1.62 MiB, max reserved 5.00 MiB
  1 allocs, 1 frees (1 matched)
    category                   peak      at peak    allocs  live at end
    (before window)        1.62 MiB     1.62 MiB         0     1.62 MiB
? 0
# sketchkv2 after its first instant: nothing happens in the window, which opens with the
# 16380108168 bytes live then (the segments' live blocks less the 8 bytes freed at the
# instant), at its own time, +0.001 ms (it read 0 B at +-1729931410850.299 ms).
$ python3 tests/snapshots/replay25.py tests/data/snapshots/sketchkv2_my_snapshot.pickle --from 1729931410850300
open 16380108168
peak 16380108168
peak_us 1729931410850300
? 0
$ hmem run size tests/data/snapshots/sketchkv2_my_snapshot.pickle --from 0.001 | sed -n 2,5p
  cuda:0: peak 15.26 GiB at +0.001 ms (ts 1729931410850300.0), end 15.26 GiB
  0 allocs, 0 frees (0 matched)
    category                   peak      at peak    allocs  live at end
    (before window)       15.26 GiB    15.26 GiB         0    15.26 GiB
? 0
$ hmem run -q size tests/data/snapshots/sketchkv2_my_snapshot.pickle --from 0.001 --json - | lua5.4 tests/snapshots/figures25.lua --from
open 16380108168
peak 16380108168
peak_us 1729931410850300
? 0
# The same holds for a trace (the bug was not only a snapshot's): a window after the last
# event of y_pair_basic.json opens with the 768 bytes still live, at its start.
$ hmem run size tests/tiny/y_pair_basic.json --from 100000 | sed -n 2,5p
  cuda:0: peak 768 B at +100000.000 ms (ts 100000100.0), end 768 B
  0 allocs, 0 frees (0 matched)
    category                   peak      at peak    allocs  live at end
    (before window)           768 B        768 B         0        768 B
? 0
