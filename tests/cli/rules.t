# Semantics 1-8 of issue 2 (README "Semantics"), one tiny hand-made trace per rule.
# Traces: tests/tiny/y_*.json; rule files: tests/tiny/rules/*.lua.

# Rule 1: the file lists free A (ts 20), alloc B (15), free B (30), alloc A (10). Sorted by ts
# both frees find their allocation; in file order the free of A would come before its alloc.
$ hmem events tests/tiny/y_unsorted.json | cut -d, -f4-7,14
ts,kind,bytes,addr,paired
10.0,alloc,100,4096,yes
15.0,alloc,200,8192,yes
20.0,free,100,4096,yes
30.0,free,200,8192,yes
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_unsorted.json --json - | lua5.4 tests/jget.lua series.1.matched_frees series.1.mismatches series.1.before_trace_bytes classify_calls
2
0
0
2
? 0

# Rule 1, ties: five events, four of them at ts 5. Ties keep file order: alloc A then free A
# pair; free B then alloc B do not (the free is before the trace's alloc, rule 3). The event at
# ts 4, last in the file, comes first.
$ hmem events tests/tiny/y_ties.json | cut -d, -f4-7,14
ts,kind,bytes,addr,paired
4.0,alloc,16,12288,no
5.0,alloc,64,4096,yes
5.0,free,64,4096,yes
5.0,free,32,8192,no
5.0,alloc,32,8192,no
? 0
$ hmem run tests/tiny/rules/by_kind.lua tests/tiny/y_ties.json --timeline - | cut -d, -f4-
ts,kind,bytes,allocated,reserved,(before trace),alloc,free before trace
4.0,alloc,16,48,,0,16,32
5.0,alloc,64,112,,0,80,32
5.0,free,64,48,,0,16,32
5.0,free,32,16,,0,16,0
5.0,alloc,32,48,,0,48,0
? 0

# Rule 1, exact ts: ns from the decimal text, never through a double. In a double,
# 1669783687464300.123 and .125 are the same number (the file lists .125 first), and 1.0005
# is 1.000499999..., i.e. 1000 ns; as decimal text it is 1000.5 ns, rounded to 1001 ns, a tie
# with 1.001 (which comes first in the file). bytes = position in the file.
$ hmem events tests/tiny/y_ts_exact.json | cut -d, -f4,6
ts,bytes
1.0,6
1.001,4
1.001,5
1419116105360.746,3
1669783687464300.123,2
1669783687464300.125,1
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_ts_exact.json --json - | grep -o '"peak_ts": [^,]*'
"peak_ts": 1669783687464300.125
? 0
$ SHOW="ts_ns bytes" hmem run --allow-io tests/tiny/rules/show.lua tests/tiny/y_ts_exact.json --json - >/dev/null
ts_ns=1000 bytes=6
ts_ns=1001 bytes=4
ts_ns=1001 bytes=5
ts_ns=1419116105360746 bytes=3
ts_ns=1669783687464300123 bytes=2
ts_ns=1669783687464300125 bytes=1
? 0

# Rule 2: a free inherits its allocation's category. by_ts.lua names the category after the
# event's own time, so a free classified by itself would make "at 20.000" / "at 30.000".
# classify runs once per allocation: 2 calls for 2 allocs and 2 frees.
$ hmem run tests/tiny/rules/by_ts.lua tests/tiny/y_unsorted.json --timeline - | cut -d, -f4-
ts,kind,bytes,allocated,reserved,(before trace),at 10.000,at 15.000
10.0,alloc,100,100,1048576,0,100,0
15.0,alloc,200,300,1048576,0,100,200
20.0,free,100,200,1048576,0,0,200
30.0,free,200,0,1048576,0,0,0
? 0
$ hmem run tests/tiny/rules/by_ts.lua tests/tiny/y_unsorted.json --json - | lua5.4 tests/jget.lua classify_calls series.1.categories.# series.1.categories.2.end_bytes series.1.categories.3.end_bytes
2
3
0
0
? 0

# Rule 2 with ops: the free at ts 110 is outside every op (its own op would be nil ->
# "unclassified"), but it frees memory allocated in aten::empty, so aten::empty drops to 512.
$ hmem run tests/tiny/rules/by_op.lua tests/tiny/y_pair_basic.json --timeline - | cut -d, -f4-
ts,kind,bytes,allocated,reserved,(before trace),aten::empty,aten::add
101.25,alloc,1024,1024,2097152,0,1024,0
102.5,alloc,512,1536,2097152,0,1536,0
110.0,free,1024,512,2097152,0,512,0
112.0,alloc,256,768,4194304,0,512,256
? 0

# Rule 2: classify only sees allocations (and unpaired frees), each exactly once.
$ SHOW="kind bytes ts before_trace" hmem run --allow-io tests/tiny/rules/show.lua tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua classify_calls
kind=alloc bytes=1024 ts=101.25 before_trace=false
kind=alloc bytes=512 ts=102.5 before_trace=false
kind=alloc bytes=256 ts=112.0 before_trace=false
3
? 0

# Rule 2 pairs per (file, device): the free on cuda:1 of cuda:0's address, and the free in
# y_free_only.json of the address y_rank-3.json allocated, are frees of memory from before the
# trace (rule 3), not pairs.
$ SHOW="file device kind bytes before_trace" hmem run --allow-io tests/tiny/rules/show.lua tests/tiny/y_per_device.json tests/tiny/y_rank-3.json tests/tiny/y_free_only.json --json - | lua5.4 tests/jget.lua series.1.matched_frees series.2.matched_frees series.2.before_trace_bytes series.4.matched_frees series.4.before_trace_bytes series.4.mismatches
file=tests/tiny/y_per_device.json device=cuda:0 kind=alloc bytes=100 before_trace=false
file=tests/tiny/y_per_device.json device=cuda:1 kind=free bytes=100 before_trace=true
file=tests/tiny/y_rank-3.json device=cuda:0 kind=alloc bytes=64 before_trace=false
file=tests/tiny/y_free_only.json device=cuda:0 kind=free bytes=64 before_trace=true
0
0
100
0
64
0
? 0

# Rule 2, oddity: two live allocations at one address (never seen in real traces); a free
# pairs with the latest one (README).
$ hmem run tests/tiny/rules/by_ts.lua tests/tiny/i_live_addr.json --timeline - | cut -d, -f4-
ts,kind,bytes,allocated,reserved,(before trace),at 1.000,at 2.000
1.0,alloc,100,100,,0,100,0
2.0,alloc,100,200,,0,100,100
3.0,free,100,100,,0,100,0
4.0,free,100,0,,0,0,0
? 0

# Rule 3: frees of 200 (ts 2) and 300 (ts 4) at addresses with no live allocation are
# classified themselves (kind "free", before_trace true) and their category holds +500
# from the start, dropping at each free. Rule 5: Total Allocated 1100 - Bytes 100 of the
# first event = 1000 before the trace, minus the 500 of those frees = 500 for (before trace).
$ SHOW="kind bytes before_trace addr free_ts lifetime" hmem run --allow-io tests/tiny/rules/show.lua tests/tiny/y_before_free.json --json - >/dev/null
kind=alloc bytes=100 before_trace=false addr=4096 free_ts=3.0 lifetime=2.0
kind=free bytes=200 before_trace=true addr=8192 free_ts=2.0 lifetime=nil
kind=free bytes=300 before_trace=true addr=12288 free_ts=4.0 lifetime=nil
? 0
$ hmem run tests/tiny/rules/by_kind.lua tests/tiny/y_before_free.json --timeline - | cut -d, -f4-
ts,kind,bytes,allocated,reserved,(before trace),alloc,free before trace
1.0,alloc,100,1100,,500,100,500
2.0,free,200,900,,500,100,300
3.0,free,100,800,,500,0,300
4.0,free,300,500,,500,0,0
? 0
$ hmem run tests/tiny/rules/by_kind.lua tests/tiny/y_before_free.json --json - | lua5.4 tests/jget.lua classify_calls series.1.before_trace_bytes series.1.matched_frees series.1.mismatches series.1.categories.3.name series.1.categories.3.peak_bytes series.1.categories.3.allocs series.1.categories.1.end_bytes
3
1000
1
0
free before trace
500
0
500
? 0

# Rule 4: a 2021 trace has no Addr: no free can be paired, each is classified itself
# (before_trace false) and subtracted from its own category at its time. On cuda:0 the
# frees (4096 + 1000) exceed the alloc (4096): rule 5 without Total Allocated gives
# (before trace) the least amount keeping the total non-negative, 1000.
$ SHOW="device kind bytes before_trace addr" hmem run --allow-io tests/tiny/rules/show.lua tests/tiny/y_2021.json --json - | lua5.4 tests/jget.lua classify_calls
device=cpu kind=alloc bytes=16 before_trace=false addr=nil
device=cpu kind=free bytes=16 before_trace=false addr=nil
device=cuda:0 kind=alloc bytes=4096 before_trace=false addr=nil
device=cuda:0 kind=free bytes=4096 before_trace=false addr=nil
device=cuda:0 kind=free bytes=1000 before_trace=false addr=nil
5
? 0
$ hmem run tests/tiny/rules/by_kind.lua tests/tiny/y_2021.json --timeline - | cut -d, -f3,5-
device,kind,bytes,allocated,reserved,(before trace),alloc,free
cpu,alloc,16,16,,0,16,0
cpu,free,16,0,,0,16,-16
cuda:0,alloc,4096,5096,,1000,4096,0
cuda:0,free,4096,1000,,1000,4096,-4096
cuda:0,free,1000,0,,1000,4096,-5096
? 0
# With a rule that puts both sides in one category, that category returns to 0.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_2021.json --json - | lua5.4 tests/jget.lua series.2.device series.2.matched_frees series.2.before_trace_bytes series.2.peak_bytes series.2.end_bytes series.2.categories.2.name series.2.categories.2.end_bytes series.2.mismatches series.2.max_reserved_bytes
cuda:0
0
1000
5096
0
4096
0
0
null
? 0

# Rule 5 without Total Allocated but with Addr: the rule 3 frees (300 + 50) are the memory
# from before the trace; (before trace) needs nothing more and stays 0.
$ hmem run tests/tiny/rules/by_kind.lua tests/tiny/y_no_totals.json --timeline - | cut -d, -f4-
ts,kind,bytes,allocated,reserved,(before trace),alloc,free before trace
1.0,alloc,100,450,,0,100,350
2.0,free,300,150,,0,100,50
3.0,free,100,50,,0,0,50
4.0,free,50,0,,0,0,0
? 0
$ hmem run tests/tiny/rules/by_kind.lua tests/tiny/y_no_totals.json --json - | lua5.4 tests/jget.lua series.1.before_trace_bytes series.1.peak_bytes series.1.mismatches series.1.max_reserved_bytes
350
450
0
null
? 0

# Rule 6: Total Allocated jumps by 400 at ts 2 (an event is missing): the sum of categories
# differs after 2 of the 3 events; counted and warned about (-q silences the warning).
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_mismatch.json --json - | lua5.4 tests/jget.lua series.1.mismatches series.1.peak_bytes
hmem: warning: tests/tiny/y_mismatch.json cuda:0: the sum of categories differs from the trace's Total Allocated after 2 of 3 events (first at ts 2.0)
2
200
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_mismatch.json --json - -q | lua5.4 tests/jget.lua series.1.mismatches
2
? 0
# Consistent traces: no mismatch, no warning.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json tests/tiny/y_peak.json tests/tiny/y_before_free.json tests/tiny/y_ties.json --json - | lua5.4 tests/jget.lua series.1.mismatches series.2.mismatches series.3.mismatches series.4.mismatches
0
0
0
0
? 0

# Rule 7: the total reaches 400 at ts 4 and again at ts 6: the peak time is the first.
# Category "300" peaked at 300 (ts 1) but holds 0 at the device's peak.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_peak.json --json - | lua5.4 tests/jget.lua series.1.peak_bytes series.1.peak_ts series.1.end_bytes series.1.categories.2.name series.1.categories.2.peak_bytes series.1.categories.2.bytes_at_peak series.1.categories.2.end_bytes series.1.categories.2.allocs series.1.categories.2.alloc_bytes series.1.categories.3.name series.1.categories.3.peak_bytes series.1.categories.3.bytes_at_peak series.1.categories.3.end_bytes series.1.categories.3.allocs series.1.categories.3.alloc_bytes
400
4
200
300
300
0
0
1
300
200
400
400
200
3
600
? 0

# Rule 7, peak at the initial state: 1000 bytes before the trace (800 + a rule 3 free of 200),
# then 800, then 850. The peak is the state before the first event, at the first event's time.
$ hmem run tests/tiny/rules/by_kind.lua tests/tiny/y_peak_initial.json --json - | lua5.4 tests/jget.lua series.1.peak_bytes series.1.peak_ts series.1.before_trace_bytes series.1.categories.1.bytes_at_peak series.1.categories.2.name series.1.categories.2.bytes_at_peak series.1.categories.3.name series.1.categories.3.peak_bytes series.1.categories.3.bytes_at_peak
1000
7
1000
800
free before trace
200
alloc
50
0
? 0

# Rule 8: nil puts every allocation in "unclassified".
$ hmem run tests/tiny/rules/nil.lua tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua series.1.categories.# series.1.categories.2.name series.1.categories.2.allocs series.1.categories.2.alloc_bytes series.1.categories.2.end_bytes
2
unclassified
3
1792
768
? 0
# Rule 8: a number is not a category name: a script error (exit 3) naming the rule file.
$ hmem run tests/tiny/rules/number.lua tests/tiny/y_pair_basic.json
hmem: tests/tiny/rules/number.lua:2: classify returned a number; it must return a category name (a string) or nil
  while classifying the allocation of 1024 bytes on cuda:0 at ts 101.25 (op aten::empty) in tests/tiny/y_pair_basic.json
? 3

# Zero-byte events change nothing and are not classified.
$ hmem run tests/tiny/rules/by_kind.lua tests/tiny/i_zero_bytes.json --json - | lua5.4 tests/jget.lua classify_calls series.1.zero_byte_events series.1.allocs series.1.frees series.1.matched_frees series.1.mismatches
1
1
1
1
1
0
? 0
# series:timeline with points near math.maxinteger: no overflow (issue 11), every state.
$ hmem run tests/tiny/rules/timeline_points_max.lua tests/tiny/y_pair_basic.json | head -3
points 9223372036854775807: 5 of 5 states, the same
points 4611686018427387904: 5 of 5 states, the same
points 4611686018427387904: 5 of 5 states, the same
? 0
