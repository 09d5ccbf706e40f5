# Outputs (issue 2, "Outputs"; README "Outputs"): --json, --timeline, the events CSV, the
# summary table, and how files are written (temporary name, renamed only on success).
# Mostly on tests/tiny/y_pair_basic.json: allocs of 1024 (ts 101.25, in aten::empty), 512
# (102.5, in aten::empty), free of the 1024 (110.0, no op), alloc of 256 (112.0, in aten::add).

# --- --json ---
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua rules classify_calls inputs.# inputs.1.path inputs.1.rank inputs.1.events inputs.1.memory_events inputs.1.ops inputs.1.oom_events skipped.#
tests/tiny/rules/by_size.lua
3
1
tests/tiny/y_pair_basic.json
null
6
4
2
0
0
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua series.# series.1.path series.1.rank series.1.device series.1.memory_events series.1.allocs series.1.frees series.1.matched_frees series.1.zero_byte_events series.1.before_trace_bytes series.1.peak_bytes series.1.peak_ts series.1.end_bytes series.1.max_reserved_bytes series.1.mismatches
1
tests/tiny/y_pair_basic.json
null
cuda:0
4
3
1
1
0
0
1536
102.5
768
4194304
0
? 0
# Categories: (before trace) first, then in the order classify first returned them.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua series.1.categories.# series.1.categories.1.name series.1.categories.1.peak_bytes series.1.categories.1.bytes_at_peak series.1.categories.1.end_bytes series.1.categories.1.allocs series.1.categories.1.alloc_bytes series.1.categories.2.name series.1.categories.2.peak_bytes series.1.categories.2.bytes_at_peak series.1.categories.2.end_bytes series.1.categories.2.allocs series.1.categories.2.alloc_bytes series.1.categories.4.name series.1.categories.4.peak_bytes series.1.categories.4.bytes_at_peak series.1.categories.4.end_bytes
4
(before trace)
0
0
0
0
0
1024
1024
1024
0
1
1024
256
256
0
256
? 0
# "version" is hmem's version.
$ test "$(hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua version)" = "$(hmem --version | cut -d' ' -f2)" && echo same
same
? 0
# ts values are printed exactly as µs with up to 3 decimals (not through a double).
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json tests/tiny/y_ts_exact.json tests/tiny/y_2021.json --json - | grep -o '"peak_ts": [^,]*'
"peak_ts": 102.5
"peak_ts": 1669783687464300.125
"peak_ts": 1623143089861003.0
"peak_ts": 1623143089861002.0
? 0
# Names that need escaping stay valid JSON (a byte that is not UTF-8 becomes U+FFFD).
$ hmem run tests/tiny/rules/odd_names.lua tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua series.1.categories.2.name series.1.categories.4.name
a, "quoted" name
bad � byte
? 0
$ hmem run tests/tiny/rules/odd_names.lua tests/tiny/y_pair_basic.json --json - | lua5.4 -e 'local d = require("cjson").decode(io.read("a")); print(d.series[1].categories[3].name == "back\\slash\ttab\nnewline")'
true
? 0
# Several files: categories are shared by name; each series lists those it uses.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json tests/tiny/y_peak.json --json - | lua5.4 tests/jget.lua series.# series.2.path series.2.categories.# series.2.categories.2.name series.2.categories.3.name classify_calls
2
tests/tiny/y_peak.json
3
300
200
7
? 0

# --- --timeline ---
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --timeline -
path,rank,device,ts,kind,bytes,allocated,reserved,(before trace),1024,512,256
tests/tiny/y_pair_basic.json,,cuda:0,101.25,alloc,1024,1024,2097152,0,1024,0,0
tests/tiny/y_pair_basic.json,,cuda:0,102.5,alloc,512,1536,2097152,0,1024,512,0
tests/tiny/y_pair_basic.json,,cuda:0,110.0,free,1024,512,2097152,0,0,512,0
tests/tiny/y_pair_basic.json,,cuda:0,112.0,alloc,256,768,4194304,0,0,512,256
? 0
# reserved is empty without Total Reserved; rank is filled in; one column per category of the
# whole run, (before trace) first; a series starts from its own before-trace state.
$ hmem run tests/tiny/rules/by_kind.lua tests/tiny/y_rank-3.json tests/tiny/y_before_free.json --timeline -
path,rank,device,ts,kind,bytes,allocated,reserved,(before trace),alloc,free before trace
tests/tiny/y_rank-3.json,3,cuda:0,1.0,alloc,64,64,,0,64,0
tests/tiny/y_before_free.json,,cuda:0,1.0,alloc,100,1100,,500,100,500
tests/tiny/y_before_free.json,,cuda:0,2.0,free,200,900,,500,100,300
tests/tiny/y_before_free.json,,cuda:0,3.0,free,100,800,,500,0,300
tests/tiny/y_before_free.json,,cuda:0,4.0,free,300,500,,500,0,0
? 0
# Category names are quoted as RFC 4180 asks.
$ hmem run tests/tiny/rules/odd_names.lua tests/tiny/y_pair_basic.json --timeline - | head -1
path,rank,device,ts,kind,bytes,allocated,reserved,(before trace),"a, ""quoted"" name","back\slash	tab
? 0
# Exact ts in the timeline too.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_ts_exact.json --timeline - | cut -d, -f4 | tail -3
1419116105360.746
1669783687464300.123
1669783687464300.125
? 0

# --- hmem events ---
$ hmem events tests/tiny/y_pair_basic.json
path,rank,device,ts,kind,bytes,addr,total_allocated,total_reserved,ev_idx,pid,tid,op,paired,lifetime
tests/tiny/y_pair_basic.json,,cuda:0,101.25,alloc,1024,4096,1024,2097152,1,10,10,aten::empty,yes,8.75
tests/tiny/y_pair_basic.json,,cuda:0,102.5,alloc,512,8192,1536,2097152,2,10,10,aten::empty,no,
tests/tiny/y_pair_basic.json,,cuda:0,110.0,free,1024,4096,512,2097152,3,10,10,,yes,8.75
tests/tiny/y_pair_basic.json,,cuda:0,112.0,alloc,256,4096,768,4194304,4,10,10,aten::add,no,
? 0
# An op name with quotes and a comma is quoted; a large Addr is exact.
$ hmem events tests/tiny/y_extra_keys.json | tail -1
tests/tiny/y_extra_keys.json,1,cuda:0,11.0,alloc,512,94555840000000,512,2097152,7,1,1,"aten::empty ""quoted"", with comma",no,
? 0
# Series order within a file (device type, then id), each in time order.
$ hmem events tests/tiny/y_2021.json | cut -d, -f3,4
device,ts
cpu,1623143089861003.0
cpu,1623143089861060.0
cuda:0,1623143089861002.0
cuda:0,1623143089861020.0
cuda:0,1623143089861050.0
? 0
# Zero-byte events are listed with kind "zero".
$ hmem events tests/tiny/i_zero_bytes.json | cut -d, -f4-6,14
ts,kind,bytes,paired
1.0,alloc,100,yes
2.0,zero,0,no
3.0,free,100,yes
? 0
# --csv FILE: nothing on standard output, the file complete, no temporary file left.
$ d=$(mktemp -d) && hmem events tests/tiny/y_pair_basic.json --csv "$d/e.csv" && ls "$d" && wc -l < "$d/e.csv" && head -1 "$d/e.csv"; rm -rf "$d"
e.csv
5
path,rank,device,ts,kind,bytes,addr,total_allocated,total_reserved,ev_idx,pid,tid,op,paired,lifetime
? 0

# --- summary table (no --json / --timeline) ---
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json
tests/tiny/y_pair_basic.json  (6 events, 4 memory events)
  cuda:0: peak 1.50 KiB at +0.003 ms (ts 102.5), end 768 B, max reserved 4.00 MiB
  3 allocs, 1 frees (1 matched)
    category               peak      at peak    allocs  live at end
    (before trace)          0 B          0 B         0          0 B
    1024               1.00 KiB     1.00 KiB         1          0 B
    512                   512 B        512 B         1        512 B
    256                   256 B          0 B         1        256 B
    largest allocations live at the peak (2 of 2):
           bytes  category         step  lifetime        who
        1.00 KiB  1024                -  0.009 ms        aten::empty
           512 B  512                 -  never freed     aten::empty
    reserved but unallocated (cached by the allocator): 2.00 MiB at the peak, at most 4.00 MiB (+0.012 ms)
? 0
# Rank, mismatches (and the warning on standard error), several devices, a trace without
# memory events (its note on standard error).
$ hmem run tests/tiny/rules/by_kind.lua tests/tiny/y_rank-3.json tests/tiny/y_mismatch.json tests/tiny/y_2021.json tests/tiny/i_empty_trace_events.json 2>/dev/null
tests/tiny/y_rank-3.json  rank 3  (1 events, 1 memory events)
  cuda:0: peak 64 B at +0.000 ms (ts 1.0), end 64 B
  1 allocs, 0 frees (0 matched)
    category               peak      at peak    allocs  live at end
    (before trace)          0 B          0 B         0          0 B
    alloc                  64 B         64 B         1         64 B
    largest allocations live at the peak (1 of 1):
           bytes  category         step  lifetime        who
            64 B  alloc               -  never freed     -

tests/tiny/y_mismatch.json  (3 events, 3 memory events)
  cuda:0: peak 200 B at +0.001 ms (ts 2.0), end 100 B
  2 allocs, 1 frees (1 matched), 2 MISMATCHES with Total Allocated
    category               peak      at peak    allocs  live at end
    (before trace)          0 B          0 B         0          0 B
    alloc                 200 B        200 B         2        100 B
    largest allocations live at the peak (2 of 2):
           bytes  category         step  lifetime        who
           100 B  alloc               -  0.002 ms        -
           100 B  alloc               -  never freed     -

tests/tiny/y_2021.json  (9 events, 5 memory events)
  cpu: peak 16 B at +0.013 ms (ts 1623143089861003.0), end 0 B
  1 allocs, 1 frees (0 matched)
    category               peak      at peak    allocs  live at end
    (before trace)          0 B          0 B         0          0 B
    alloc                  16 B         16 B         1         16 B
    free                    0 B          0 B         0        -16 B
    (this trace has no Addr: allocations live at the peak cannot be known)
  cuda:0: peak 4.98 KiB at +0.012 ms (ts 1623143089861002.0), end 0 B
  1 allocs, 2 frees (0 matched)
    category               peak      at peak    allocs  live at end
    (before trace)       1000 B       1000 B         0       1000 B
    alloc              4.00 KiB     4.00 KiB         1     4.00 KiB
    free                    0 B          0 B         0    -4.98 KiB
    (this trace has no Addr: allocations live at the peak cannot be known)

tests/tiny/i_empty_trace_events.json  (0 events, 0 memory events)
  no [memory] events: record with torch.profiler.profile(profile_memory=True)

4 traces, 4 devices, highest peak 4.98 KiB on cuda:0 of tests/tiny/y_2021.json

across ranks: cuda, 3 series (imbalance = max/mean)
    category                max          min       median         mean  max/mean  max at
    (device peak)      4.98 KiB         64 B        200 B     1.74 KiB     2.852  cuda:0 tests/tiny/y_2021.json
    alloc              4.00 KiB         64 B        200 B     1.42 KiB     2.818  cuda:0 tests/tiny/y_2021.json
    (before trace)       1000 B          0 B          0 B        333 B     3.000  cuda:0 tests/tiny/y_2021.json
? 0
# Columns stay aligned with names of multi-byte UTF-8 characters: every line of the table has
# the same width in characters.
$ hmem run tests/tiny/rules/utf8_names.lua tests/tiny/y_pair_basic.json | sed -n '4,7p' | lua5.4 -e 'local w = {} for l in io.lines() do w[utf8.len(l)] = true end local n = 0 for _ in pairs(w) do n = n + 1 end print(n .. " width")'
1 width
? 0
$ hmem run tests/tiny/rules/utf8_names.lua tests/tiny/y_pair_basic.json | sed -n '4,7p'
    category                 peak      at peak    allocs  live at end
    (before trace)            0 B          0 B         0          0 B
    größer (≥ 1 KiB)     1.00 KiB     1.00 KiB         1          0 B
    klein                   768 B        512 B         2        768 B
? 0
# --summary adds the table to --json FILE.
$ d=$(mktemp -d) && hmem run tests/tiny/rules/by_size.lua tests/tiny/y_peak.json --json "$d/r.json" --summary | head -2 && lua5.4 tests/jget.lua series.1.peak_bytes < "$d/r.json"; rm -rf "$d"
tests/tiny/y_peak.json  (7 events, 7 memory events)
  cuda:0: peak 400 B at +0.003 ms (ts 4.0), end 200 B
400
? 0

# --- files: temporary name, renamed only when the whole run succeeded ---
# --json and --timeline to files: nothing on standard output, no temporary file left.
$ d=$(mktemp -d) && hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --json "$d/r.json" --timeline "$d/t.csv" && ls "$d" && lua5.4 tests/jget.lua series.1.peak_bytes < "$d/r.json" && wc -l < "$d/t.csv"; rm -rf "$d"
r.json
t.csv
1536
5
? 0
# An existing output is replaced by a successful run.
$ d=$(mktemp -d) && echo old > "$d/r.json" && hmem run tests/tiny/rules/by_size.lua tests/tiny/y_peak.json --json "$d/r.json" && ls "$d" && lua5.4 tests/jget.lua series.1.peak_bytes < "$d/r.json"; rm -rf "$d"
r.json
400
? 0
# A script error: no output written, no temporary file left.
$ d=$(mktemp -d) && hmem run tests/tiny/rules/number.lua tests/tiny/y_pair_basic.json --json "$d/r.json" --timeline "$d/t.csv"; echo "exit $?"; ls -A "$d"; rm -rf "$d"
hmem: tests/tiny/rules/number.lua:2: classify returned a number; it must return a category name (a string) or nil
  while classifying the allocation of 1024 bytes on cuda:0 at ts 101.25 (op aten::empty) in tests/tiny/y_pair_basic.json
exit 3
? 0
# A script error (in the second file): earlier outputs are not replaced.
$ d=$(mktemp -d) && echo old > "$d/r.json" && echo old > "$d/t.csv" && hmem run tests/tiny/rules/runtime_error.lua tests/tiny/y_peak.json tests/tiny/y_pair_basic.json --json "$d/r.json" --timeline "$d/t.csv" >/dev/null 2>&1; echo "exit $?"; ls -A "$d"; cat "$d/r.json" "$d/t.csv"; rm -rf "$d"
exit 3
r.json
t.csv
old
old
? 0
# A bad trace: same.
$ d=$(mktemp -d) && echo old > "$d/e.csv" && hmem events tests/tiny/y_pair_basic.json tests/tiny/n_bytes_string.json --csv "$d/e.csv" >/dev/null 2>&1; echo "exit $?"; ls -A "$d"; cat "$d/e.csv"; rm -rf "$d"
exit 4
e.csv
old
? 0
# One output cannot be written: the other is not written either.
$ d=$(mktemp -d) && hmem run tests/tiny/rules/by_size.lua tests/tiny/y_peak.json --json "$d/r.json" --timeline "$d/no/such/dir/t.csv"; echo "exit $?"; ls -A "$d"; rm -rf "$d"
...
exit 5
? 0
