# Inputs (issue 2, "Inputs"): what hmem accepts. tests/tiny/y_* must load, i_* are tolerated
# oddities.

# Gzip is found by its magic bytes, not the name: gzip data named .json, and plain JSON named
# .json.gz, both read like the plain y_pair_basic.json.
$ hmem events tests/tiny/y_gzip_named.json | cut -d, -f4-8
ts,kind,bytes,addr,total_allocated
101.25,alloc,1024,4096,1024
102.5,alloc,512,8192,1536
110.0,free,1024,4096,512
112.0,alloc,256,4096,768
? 0
$ hmem events tests/tiny/i_plain_named.json.gz | cut -d, -f4-8
ts,kind,bytes,addr,total_allocated
101.25,alloc,1024,4096,1024
102.5,alloc,512,8192,1536
110.0,free,1024,4096,512
112.0,alloc,256,4096,768
? 0
# Two gzip members (cat a.gz b.gz), the cut in the middle of an event: read in turn.
$ hmem events tests/tiny/i_gzip_members.json.gz | cut -d, -f4-8
ts,kind,bytes,addr,total_allocated
101.25,alloc,1024,4096,1024
102.5,alloc,512,8192,1536
110.0,free,1024,4096,512
112.0,alloc,256,4096,768
? 0
# A gzip made on the fly, with the name of neither kind.
$ d=$(mktemp -d) && gzip -c tests/tiny/y_peak.json > "$d/trace.data" && hmem run tests/tiny/rules/by_size.lua "$d/trace.data" --json - | lua5.4 tests/jget.lua series.1.peak_bytes inputs.1.memory_events; rm -rf "$d"
400
7
? 0

# Directories: every *.json and *.json.gz below them (not notes.txt, c.json.bak, nor the
# hidden .hidden/), sorted by path as bytes (B < a.json.gz < a_sub/ < b.json).
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_dir --json - | lua5.4 tests/jget.lua inputs.# inputs.1.path inputs.2.path inputs.3.path inputs.4.path series.1.peak_bytes series.2.peak_bytes series.3.peak_bytes series.4.peak_bytes
4
tests/tiny/y_dir/B.json
tests/tiny/y_dir/a.json.gz
tests/tiny/y_dir/a_sub/c.json
tests/tiny/y_dir/b.json
400
200
300
100
? 0
# Paths keep the order given; a trailing slash adds no double slash.
$ hmem events tests/tiny/y_peak.json tests/tiny/y_dir/ | cut -d, -f1 | uniq
path
tests/tiny/y_peak.json
tests/tiny/y_dir/B.json
tests/tiny/y_dir/a.json.gz
tests/tiny/y_dir/a_sub/c.json
tests/tiny/y_dir/b.json
? 0

# The bare top-level array form of a Chrome trace (ops are found in it too).
$ hmem events tests/tiny/y_top_array.json | cut -d, -f4-6,13
ts,kind,bytes,op
1.0,alloc,64,aten::empty
? 0

# Extra top-level keys (before and after traceEvents, nested, with "traceEvents" inside a
# string and as a nested key, escapes, null, a big integer) are skipped; distributedInfo gives
# the rank; extra args ("finished") are ignored; the op name with quotes and a comma survives.
$ hmem run tests/tiny/rules/by_op.lua tests/tiny/y_extra_keys.json --json - | lua5.4 tests/jget.lua inputs.1.rank inputs.1.events inputs.1.memory_events inputs.1.ops series.1.categories.2.name series.1.max_reserved_bytes
1
4
1
1
aten::empty "quoted", with comma
2097152
? 0

# Missing, empty or null traceEvents: explained, not an error; no series.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/i_no_trace_events.json --json - | lua5.4 tests/jget.lua inputs.1.events series.#
hmem: note: tests/tiny/i_no_trace_events.json has no [memory] events (no traceEvents in it)
0
0
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/i_empty_trace_events.json --json - | lua5.4 tests/jget.lua inputs.1.events series.#
hmem: note: tests/tiny/i_empty_trace_events.json has no [memory] events (record with torch.profiler.profile(profile_memory=True))
0
0
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/i_null_trace_events.json -q --json - | lua5.4 tests/jget.lua series.#
0
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/i_empty_trace_events.json
hmem: note: tests/tiny/i_empty_trace_events.json has no [memory] events (record with torch.profiler.profile(profile_memory=True))
tests/tiny/i_empty_trace_events.json  (0 events, 0 memory events)
  no [memory] events: record with torch.profiler.profile(profile_memory=True)
? 0

# The 2021 format: no cat, Addr, totals or Ev Idx on memory events; pretty-printed; ints.
$ hmem events tests/tiny/y_2021.json
path,rank,device,ts,kind,bytes,addr,total_allocated,total_reserved,ev_idx,pid,tid,op,paired,lifetime
tests/tiny/y_2021.json,,cpu,1623143089861003.0,alloc,16,,,,,25738,25738,aten::empty,no,
tests/tiny/y_2021.json,,cpu,1623143089861060.0,free,16,,,,,25738,25738,,no,
tests/tiny/y_2021.json,,cuda:0,1623143089861002.0,alloc,4096,,,,,25738,25738,aten::empty,no,
tests/tiny/y_2021.json,,cuda:0,1623143089861020.0,free,4096,,,,,25738,25738,aten::zeros,no,
tests/tiny/y_2021.json,,cuda:0,1623143089861050.0,free,1000,,,,,25738,25738,,no,
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_2021.json --json - | lua5.4 tests/jget.lua inputs.1.events inputs.1.memory_events inputs.1.ops series.# series.1.device series.1.max_reserved_bytes series.1.mismatches
9
5
2
2
cpu
null
0
? 0

# Device names from c10's DeviceType (Device Id -1 of cpu is not shown).
$ hmem events tests/tiny/y_devices.json | cut -d, -f3,6 | LC_ALL=C sort
cpu,800
cuda:0,700
cuda:1,600
device,bytes
hip:0,500
mps:0,300
privateuseone:2,200
type9:3,100
xpu:1,400
? 0
$ SHOW="device device_type device_id" hmem run --allow-io tests/tiny/rules/show.lua tests/tiny/y_devices.json --json - 2>&1 >/dev/null | LC_ALL=C sort
device=cpu device_type=0 device_id=-1
device=cuda:0 device_type=1 device_id=0
device=cuda:1 device_type=1 device_id=1
device=hip:0 device_type=6 device_id=0
device=mps:0 device_type=13 device_id=0
device=privateuseone:2 device_type=20 device_id=2
device=type9:3 device_type=9 device_id=3
device=xpu:1 device_type=12 device_id=1
? 0
# One series per device, each with its own peak.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_devices.json --json - | lua5.4 tests/jget.lua series.#
8
? 0

# Rank: distributedInfo.rank (a number, or a numeric string), else the last rank-N / rank_N in
# the file name, else none (null in JSON, empty in CSV). distributedInfo wins over the name.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_rank-3.json tests/tiny/y_trace_rank_7.pt.trace.json tests/tiny/y_dist_rank-9.json tests/tiny/y_dist_rank_string.json tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua inputs.1.rank inputs.2.rank inputs.3.rank inputs.4.rank inputs.5.rank series.1.rank series.3.rank series.5.rank
3
7
5
2
null
3
5
null
? 0
$ hmem events tests/tiny/y_rank-3.json tests/tiny/y_dist_rank-9.json tests/tiny/y_pair_basic.json | cut -d, -f1,2 | uniq
path,rank
tests/tiny/y_rank-3.json,3
tests/tiny/y_dist_rank-9.json,5
tests/tiny/y_pair_basic.json,
? 0
$ SHOW="rank file" hmem run --allow-io tests/tiny/rules/show.lua tests/tiny/y_rank-3.json tests/tiny/y_gzip_named.json --json - 2>&1 >/dev/null | uniq
rank=3 file=tests/tiny/y_rank-3.json
rank=nil file=tests/tiny/y_gzip_named.json
? 0

# All the row fields of one allocation of the 2025 format (float ts, all args).
$ SHOW="ts ts_ns bytes kind before_trace addr device device_type device_id rank file pid tid ev_idx total_allocated total_reserved free_ts lifetime op" hmem run --allow-io tests/tiny/rules/show.lua tests/tiny/y_pair_basic.json --json - 2>&1 >/dev/null | head -1
ts=101.25 ts_ns=101250 bytes=1024 kind=alloc before_trace=false addr=4096 device=cuda:0 device_type=1 device_id=0 rank=nil file=tests/tiny/y_pair_basic.json pid=10 tid=10 ev_idx=1 total_allocated=1024 total_reserved=2097152 free_ts=110.0 lifetime=8.75 op=aten::empty
? 0

# A UTF-8 byte order mark is skipped; [OutOfMemory] events are counted, not used.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/i_bom.json tests/tiny/i_oom.json --json - | lua5.4 tests/jget.lua series.1.peak_bytes inputs.2.oom_events inputs.2.memory_events series.2.peak_bytes
100
1
1
100
? 0

# 64-bit values: Addr up to 2^64-1, Total Reserved up to 2^63-1, 8 GiB sizes, exact.
$ hmem events tests/tiny/i_big_numbers.json | cut -d, -f6-9,14
bytes,addr,total_allocated,total_reserved,paired
8589934592,18446744073709551615,8589934592,9223372036854775807,yes
8589934592,18446744073709551615,0,9223372036854775807,yes
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/i_big_numbers.json --json - | grep -o '"max_reserved_bytes": [0-9]*'
"max_reserved_bytes": 9223372036854775807
? 0
