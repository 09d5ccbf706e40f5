# Issue 25, item 8: each trace entry is made a record of a few bytes as its dict completes
# (tests/snapshots/stream25.py). A device's list that reaches, through the memo, records made
# in another order (across the records that stand alone) reads as the same entries listed
# plainly: the same figures.
$ python3 tests/snapshots/stream25.py $T && for f in plain shared; do hmem run size $T/$f.pickle -q --json - | lua5.4 tests/jget.lua series.1.peak_bytes series.1.peak_ts series.1.allocs series.1.end_bytes series.1.categories.1.name series.1.categories.1.peak_bytes; done
46588
1286
150
43962
(before trace)
0
46588
1286
150
43962
(before trace)
0
? 0
# What a record cannot hold is refused, never read wrong: an entry listed twice (as before),
# a frames list an entry read that a hand-made APPEND changes afterwards, an entry dict
# given a second SETITEMS (Python's pickle sets a dict of fewer than 1000 keys at once).
$ for f in twice changed more; do hmem run size $T/$f.pickle -q 2>&1 | sed "s#$T#T#"; done
hmem: T/twice.pickle:48: memory snapshot: the trace entry made here is reached a second time through the memo (a memory snapshot shares only frames; each entry, trace list, segment and block is its own)
hmem: stopped; use --keep-going to skip traces that cannot be read
hmem: T/changed.pickle:180: a list read as a trace entry's frames (the container made at byte 12) is changed after the entry (hmem reads each entry as it completes)
hmem: stopped; use --keep-going to skip traces that cannot be read
hmem: T/more.pickle:111: a trace entry gets more items after its first SETITEMS (hmem reads each entry as it completes; Python's pickle fills a dict of fewer than 1000 keys at once)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 0
