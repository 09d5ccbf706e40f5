# Bad and odd traces (issue 6, "Bad traces"): each loads correctly or fails with
# "hmem: FILE:OFFSET: what" (OFFSET = byte offset in the decompressed JSON) and exit 4 (exit 5
# for a file that cannot be read). Cases already pinned elsewhere are not repeated here:
# truncated gzip, trailing garbage, cut-off JSON, missing Bytes, Bytes or ts as a string, an op
# name that is a number, Bytes of 2^63, an empty file and a directory without traces
# (errors.t); two gzip members, a UTF-8 BOM and the top-level array form (inputs.t).
# Traces: tests/tiny/{i,n}_* (one event per line); the big ones are made here in a temporary
# directory.

# --- gzip members ---
# Empty members (gzip of nothing) before, between and after the pieces of a trace cut in the
# middle of an event: read in turn, the same as the plain file.
$ d=$(mktemp -d) && head -c 300 tests/tiny/y_pair_basic.json | gzip -n > "$d/a.gz" && tail -c +301 tests/tiny/y_pair_basic.json | gzip -n > "$d/b.gz" && gzip -n < /dev/null > "$d/0.gz" && cat "$d/0.gz" "$d/a.gz" "$d/0.gz" "$d/0.gz" "$d/b.gz" "$d/0.gz" > "$d/t.json.gz" && hmem events "$d/t.json.gz" | cut -d, -f4-8; rc=$?; rm -rf "$d"; exit $rc
ts,kind,bytes,addr,total_allocated
101.25,alloc,1024,4096,1024
102.5,alloc,512,8192,1536
110.0,free,1024,4096,512
112.0,alloc,256,4096,768
? 0
# One member per line (the way a writer that flushes per event with gzip appends would do it).
$ d=$(mktemp -d) && while IFS= read -r l; do printf '%s\n' "$l" | gzip -n; done < tests/tiny/y_peak.json > "$d/t.json.gz" && hmem run tests/tiny/rules/by_size.lua "$d/t.json.gz" --json - | lua5.4 tests/jget.lua inputs.1.memory_events series.1.peak_bytes; rc=$?; rm -rf "$d"; exit $rc
7
400
? 0
# A second complete trace in a second member is a second JSON document: an error at the end
# of the first (1396 bytes).
$ d=$(mktemp -d) && gzip -n -c tests/tiny/y_peak.json > "$d/a.gz" && cat "$d/a.gz" "$d/a.gz" > "$d/t.json.gz" && cd "$d" && hmem events t.json.gz; rc=$?; cd - >/dev/null; rm -rf "$d"; exit $rc
hmem: t.json.gz:1396: unexpected data after the end of the JSON value
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4

# --- NaN and Infinity ---
# They are not JSON. Where hmem reads a number (Bytes, ts, dur, Total Allocated) they are an
# error at their offset...
$ hmem events tests/tiny/n_nan_bytes.json
hmem: tests/tiny/n_nan_bytes.json:355: [memory] event: "Bytes": invalid number
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ tail -c +356 tests/tiny/n_nan_bytes.json | head -c 3; echo
NaN
? 0
$ hmem events tests/tiny/n_infinity_ts.json
hmem: tests/tiny/n_infinity_ts.json:310: [memory] event: "ts": invalid number
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ hmem events tests/tiny/n_infinity_total.json
hmem: tests/tiny/n_infinity_total.json:341: [memory] event: "Total Allocated": invalid number
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ hmem events tests/tiny/n_nan_dur.json
hmem: tests/tiny/n_nan_dur.json:106: slice (ph X): "dur": invalid number
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
# ...but where hmem reads nothing (kernel and op args, other top-level keys: Python's json
# module writes NaN for a float nan) they are skipped like any other value.
$ hmem events tests/tiny/i_nan_in_args.json | cut -d, -f4-6,13
ts,kind,bytes,op
1.0,alloc,100,aten::empty
? 0

# --- exponents and negative zero ---
# An exponent is fine where an integer belongs when the value is an integer (1e3 Bytes,
# 4.096E3 Addr, 1E1 Ev Idx, 0e0 Device Id), and in times (1.25e0 us; 5E-1 us of dur);
# -0 is 0 (a zero-byte event, Addr 0).
$ hmem events tests/tiny/i_exponents.json | cut -d, -f4-10,13-
ts,kind,bytes,addr,total_allocated,total_reserved,ev_idx,op,paired,lifetime
1.25,alloc,1000,4096,1024,,10,aten::empty,yes,0.75
2.0,free,1000,4096,24,,,,yes,0.75
3.0,zero,0,0,24,,,,no,
? 0
# -0 and -0.0 as ts, Device Type, Device Id, Bytes, Addr and Total Allocated: all 0.
$ hmem events tests/tiny/i_negative_zero.json | cut -d, -f3-8
device,ts,kind,bytes,addr,total_allocated
cpu,0.0,zero,0,0,64
cuda:0,0.0,alloc,64,4096,64
cuda:0,1.0,free,64,4096,0
? 0
# A fraction is not an integer, exponent or not (1.5e0 Bytes).
$ hmem events tests/tiny/n_bytes_exponent.json
hmem: tests/tiny/n_bytes_exponent.json:355: [memory] event: "Bytes": expected an integer
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4

# --- beyond 64 bits: an error, never a wrapped value ---
# Addr 2^64, Total Allocated 2^63, Bytes -2^63-1, ts 1e400 us.
$ hmem events tests/tiny/n_addr_overflow.json
hmem: tests/tiny/n_addr_overflow.json:368: [memory] event: "Addr": number out of 64-bit range
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ hmem events tests/tiny/n_total_overflow.json
hmem: tests/tiny/n_total_overflow.json:341: [memory] event: "Total Allocated": number out of 64-bit range
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ hmem events tests/tiny/n_bytes_below.json
hmem: tests/tiny/n_bytes_below.json:353: [memory] event: "Bytes": number out of 64-bit range
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ hmem events tests/tiny/n_ts_exponent_range.json
hmem: tests/tiny/n_ts_exponent_range.json:310: [memory] event: "ts": number out of 64-bit range
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
# Values that fit 64 bits but that hmem's sums could not hold: times beyond 2^62 ns (146
# years) from zero (a slice at 5e15 us), sizes adding up to more than 2^60 bytes (1 EiB:
# here an allocation and its free of 6e17 bytes each), a Device Id beyond 32 bits.
$ hmem events tests/tiny/n_ts_range.json
hmem: tests/tiny/n_ts_range.json:198: slice (ph X): "ts": out of range (beyond 2^62 ns, 146 years, from zero)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ hmem events tests/tiny/n_bytes_sum.json
hmem: tests/tiny/n_bytes_sum.json:322: [memory] event: "Bytes": the sizes of the memory events add up to more than 2^60 bytes (1 EiB)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ hmem events tests/tiny/n_device_id_range.json
hmem: tests/tiny/n_device_id_range.json:414: [memory] event: device type or id out of range
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4

# --- strings where numbers belong, and the reverse ---
$ hmem events tests/tiny/n_addr_string.json
hmem: tests/tiny/n_addr_string.json:368: [memory] event: "Addr" is a string, expected an integer
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ hmem events tests/tiny/n_device_type_string.json
hmem: tests/tiny/n_device_type_string.json:405: [memory] event: "Device Type" is a string, expected an integer
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ hmem events tests/tiny/n_dur_string.json
hmem: tests/tiny/n_dur_string.json:106: slice (ph X): "dur" is a string, expected a number of microseconds
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ hmem events tests/tiny/n_ph_number.json
hmem: tests/tiny/n_ph_number.json:221: event "ph" is a number, expected a string
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ hmem events tests/tiny/n_args_string.json
hmem: tests/tiny/n_args_string.json:214: [memory] event without an args object
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
# pid and tid are the exception: numbers and strings holding the same integer name the same
# thread (the op "1"/"1" encloses the memory event 1/"1").
$ hmem events tests/tiny/i_numeric_strings.json | cut -d, -f11-13
pid,tid,op
1,1,aten::empty
? 0

# --- duplicate keys: the last wins ---
# In an event ("name": "first" ... "name": "second"; "ts": 9 ... "ts": 1), in args ("Bytes": 1
# ... "Bytes": 100), a whole second "args", and at the top level (distributedInfo {"rank": 1},
# later {"rank": 2, "rank": 3}: rank 3).
$ hmem events tests/tiny/i_duplicate_keys.json | cut -d, -f2,4-8,13
rank,ts,kind,bytes,addr,total_allocated,op
3,1.0,alloc,100,4096,100,second
3,2.0,alloc,50,8192,150,second
? 0
# Except traceEvents: its events are streamed as they come, so a second array is an error.
$ hmem events tests/tiny/n_duplicate_trace_events.json
hmem: tests/tiny/n_duplicate_trace_events.json:249: a second traceEvents array (the events of the first are read already)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4

# --- names: escapes and invalid UTF-8 ---
# Op names with \u00e9, a surrogate pair (U+1F600), lone surrogates (U+FFFD each), raw UTF-8,
# raw invalid bytes (FF FE, and C3 cut short), \u0000, a tab, and quotes with a comma. The
# events CSV has the decoded bytes (invalid bytes as they were; RFC 4180 quoting); shown here
# with every byte outside printable ASCII as \xHH.
$ hmem events tests/tiny/i_unicode_names.json --csv - | lua5.4 tests/csvcol.lua op | lua5.4 -e 'for l in io.lines() do print((l:gsub("[^ -~]", function(c) return ("\\x%02x"):format(c:byte()) end))) end'
aten::caf\xc3\xa9
emoji \xf0\x9f\x98\x80
lone high \xef\xbf\xbd end
lone low \xef\xbf\xbd end
high then A \xef\xbf\xbdA
raw caf\xc3\xa9
raw bad \xff\xfe
cut \xc3
nul \x00 inside
tab\x09, comma "q"
? 0
# In --json every name is valid UTF-8 (invalid bytes become \ufffd) and the output parses.
$ f=$(mktemp) && hmem run tests/tiny/rules/by_op.lua tests/tiny/i_unicode_names.json --json - > "$f" && iconv -f UTF-8 -t UTF-8 "$f" >/dev/null && echo "valid UTF-8" && lua5.4 tests/jget.lua series.1.categories.# < "$f" && grep -o '"name": "[^"]*\(emoji\|lone high\|raw bad\|cut\|nul\)[^"]*"' "$f"; rc=$?; rm -f "$f"; exit $rc
valid UTF-8
11
"name": "emoji 😀"
"name": "lone high � end"
"name": "raw bad \ufffd\ufffd"
"name": "cut \ufffd"
"name": "nul \u0000 inside"
? 0

# --- a 100 MB string ---
# One kernel event whose args hold a single 100 MB string, then a memory event: it loads, and
# the reader holds that one event once (peak RSS well under two copies of it; ASan builds
# keep freed blocks in quarantine, so that is turned off for them here).
$ d=$(mktemp -d) && lua5.4 -e 'io.write("{\"traceEvents\": [\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 1, \"dur\": 1, \"args\": {\"blob\": \"") local s = string.rep("x", 1 << 20) for i = 1, 100 do io.write(s) end io.write("\"}},\n{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 2, \"args\": {\"Bytes\": 64, \"Addr\": 4096, \"Device Id\": 0, \"Device Type\": 1}}\n]}\n")' > "$d/big.json" && ASAN_OPTIONS=quarantine_size_mb=0 /usr/bin/time -f %M -o "$d/rss" hmem events "$d/big.json" | cut -d, -f4-6 && kb=$(cat "$d/rss") && if [ "$kb" -lt 200000 ]; then echo "peak RSS under 200 MB"; else echo "peak RSS $kb KB"; fi; rm -rf "$d"
ts,kind,bytes
2.0,alloc,64
peak RSS under 200 MB
? 0

# --- deep nesting ---
# 100000 levels of [ in the args of a kernel, of an op and of a memory event, and in a
# top-level key: no recursion, so no stack overflow; they load.
$ d=$(mktemp -d) && o=$(head -c 100000 /dev/zero | tr '\0' '[') && c=$(head -c 100000 /dev/zero | tr '\0' ']') && printf '{"meta": %s%s, "traceEvents": [\n{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"deep": %s%s}},\n{"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 0, "dur": 5, "args": {"deep": %s%s}},\n{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1, "args": {"deep": %s%s, "Bytes": 64, "Addr": 4096, "Device Id": 0, "Device Type": 1}}\n]}\n' "$o" "$c" "$o" "$c" "$o" "$c" "$o" "$c" > "$d/deep.json" && hmem events "$d/deep.json" | cut -d, -f4-6,13; rc=$?; rm -rf "$d"; exit $rc
ts,kind,bytes,op
1.0,alloc,64,aten::empty
? 0
# 100000 levels of {"a": as well.
$ d=$(mktemp -d) && o=$(head -c 100000 /dev/zero | sed 's/\x0/{"a": /g') && c=$(head -c 100000 /dev/zero | tr '\0' '}') && printf '{"traceEvents": [\n{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": %s1%s}\n]}\n' "$o" "$c" > "$d/deep.json" && hmem run -q tests/tiny/rules/by_size.lua "$d/deep.json" --json - | lua5.4 tests/jget.lua inputs.1.events; rc=$?; rm -rf "$d"; exit $rc
1
? 0
# Never closed: cut-off JSON at the event that holds them (byte 18).
$ d=$(mktemp -d) && o=$(head -c 100000 /dev/zero | tr '\0' '[') && printf '{"traceEvents": [\n{"ph": "X", "cat": "kernel", "args": %s' "$o" > "$d/deep.json" && cd "$d" && hmem events deep.json; rc=$?; cd - >/dev/null; rm -rf "$d"; exit $rc
hmem: deep.json:18: the file ends inside the value that starts here (cut-off JSON: was the job killed while writing the trace?)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
# As elements of traceEvents they are not events.
$ d=$(mktemp -d) && o=$(head -c 100000 /dev/zero | tr '\0' '[') && c=$(head -c 100000 /dev/zero | tr '\0' ']') && printf '{"traceEvents": [%s%s]}\n' "$o" "$c" > "$d/deep.json" && cd "$d" && hmem events deep.json; rc=$?; cd - >/dev/null; rm -rf "$d"; exit $rc
hmem: deep.json:17: an element of traceEvents is an array, not an event object
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4

# A stray letter between events is no number (the byte it starts with says what it is).
$ d=$(mktemp -d) && printf '{"traceEvents": [\n        {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1},\n        x{"ph": "X"}]}\n' > "$d/x.json" && cd "$d" && hmem events x.json; rc=$?; cd - >/dev/null; rm -rf "$d"; exit $rc
hmem: x.json:116: an element of traceEvents is not valid JSON, not an event object
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4

# --- byte order marks ---
# A UTF-8 BOM inside gzip is skipped too, and before a top-level array.
$ d=$(mktemp -d) && gzip -n -c tests/tiny/i_bom.json > "$d/t.json.gz" && { printf '\357\273\277'; cat tests/tiny/y_top_array.json; } > "$d/a.json" && hmem events "$d/t.json.gz" "$d/a.json" | cut -d, -f4-6,13; rc=$?; rm -rf "$d"; exit $rc
ts,kind,bytes,op
1.0,alloc,100,
1.0,alloc,64,aten::empty
? 0
# A BOM split across two gzip members (EF BB, then BF and the JSON): the first read gives two
# bytes; the BOM is still seen whole.
$ hmem events tests/fuzz/regressions/bom-split-gzip-members.json.gz | cut -d, -f4-6
ts,kind,bytes
1.0,alloc,100
? 0
# A UTF-16 BOM (the file is UTF-16, which JSON traces never are): not JSON, at byte 0.
$ d=$(mktemp -d) && { printf '\377\376'; cat tests/tiny/y_peak.json; } > "$d/t.json" && cd "$d" && hmem events t.json; rc=$?; cd - >/dev/null; rm -rf "$d"; exit $rc
hmem: t.json:0: not a JSON trace: expected '{' or '[' at the start
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4

# --- top-level array ---
# Empty: no events, explained.
$ hmem events tests/tiny/i_top_array_empty.json
hmem: note: tests/tiny/i_top_array_empty.json has no [memory] events (a bare array of events, as PyTorch's profiler writes without Kineto: it records no memory even with profile_memory=True; use a PyTorch built with Kineto)
path,rank,device,ts,kind,bytes,addr,total_allocated,total_reserved,ev_idx,pid,tid,op,paired,lifetime
? 0
# A comma after the last event.
$ hmem events tests/tiny/n_top_array_comma.json
hmem: tests/tiny/n_top_array_comma.json:197: a comma after the last event (not valid JSON)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
# Never closed.
$ d=$(mktemp -d) && head -n 2 tests/tiny/y_top_array.json > "$d/t.json" && cd "$d" && hmem events t.json; rc=$?; cd - >/dev/null; rm -rf "$d"; exit $rc
hmem: t.json:106: the file ends inside traceEvents (cut-off JSON: was the job killed while writing the trace?)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4

# --- a file that cannot be read: exit 5 ---
# chmod 000 does not stop root, and CI runs as root: there hmem runs as user nobody
# (setpriv, util-linux), from a copy (the checkout may be closed to nobody).
$ d=$(mktemp -d) && chmod 755 "$d" && cp tests/tiny/y_peak.json "$d/t.json" && chmod 000 "$d/t.json" && cp hmem "$d/hmem" && cd "$d" && if [ "$(id -u)" = 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups ./hmem events t.json; else ./hmem events t.json; fi; rc=$?; cd - >/dev/null; rm -rf "$d"; exit $rc
hmem: t.json: cannot open: Permission denied
hmem: stopped; use --keep-going to skip traces that cannot be read
? 5
