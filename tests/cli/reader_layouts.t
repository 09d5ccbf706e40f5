# Events and the args of [memory] events read through the layouts PyTorch writes (issue 29):
# the reader matches those literally and hands anything else to the general walk from the
# start of the event or the args. Each case differs from a layout in one way; the values below
# are written by hand, and the errors and offsets are the general walk's (the build before the
# layouts gave the same).

# tests/tiny/y_args_layouts.json, one [memory] event at each ts: 1 the CUDA layout of PyTorch
# 2.6+; 2 two keys swapped; 3 a key escaped; 4 other white space; 5 no Ev Idx; 6 no Addr; 7 a
# negative Bytes; 8 an exponent and a whole fraction; 9 a duplicate Bytes (the last wins); 10
# the 2022 layout; 11 the 2021 one; 12, 13 ROCm's ("finished" false, true); 14 numbers of 8, 9
# and 16 digits, Addr 0; 15 Bytes -0 and a 15-digit Addr; 16 one member a line; 17 a new line
# before the layout and a space before its brace; 18 "total reserved" (another key); 19 an
# extra member inside; 20 "finished" in the CUDA order; 21 ROCm's order without "finished".
$ hmem events tests/tiny/y_args_layouts.json | cut -d, -f3-10
device,ts,kind,bytes,addr,total_allocated,total_reserved,ev_idx
cuda:0,1.0,alloc,1024,4096,1024,2097152,1
cuda:0,2.0,alloc,512,8192,1536,2097152,2
cuda:0,3.0,alloc,256,12288,1792,2097152,3
cuda:0,4.0,alloc,128,16384,1920,2097152,4
cuda:0,5.0,alloc,64,20480,1984,2097152,
cuda:0,6.0,alloc,32,,2016,2097152,6
cuda:0,7.0,free,1024,4096,992,2097152,7
cuda:0,8.0,alloc,2008,24576,3000,2097152,8
cuda:0,9.0,alloc,8,28672,3008,2097152,9
cuda:0,10.0,alloc,4,32768,3012,2097152,10
cuda:0,11.0,alloc,2,,,,
cuda:0,14.0,alloc,12345678,0,12348692,1234567890123456,123456789
cuda:0,15.0,zero,0,140235048550400,12348692,2097152,15
cuda:0,16.0,alloc,2,40960,12348694,2097152,16
cuda:0,17.0,alloc,1,45056,12348695,2097152,17
cuda:0,18.0,alloc,1,49152,12348696,,18
cuda:0,19.0,alloc,1,53248,12348697,2097152,19
cuda:0,20.0,alloc,1,57344,12348698,2097152,20
hip:0,12.0,alloc,4096,36864,4096,4194304,12
hip:0,13.0,free,4096,36864,0,4194304,13
hip:0,21.0,alloc,1,61440,1,4194304,21
? 0

# tests/tiny/args_layout_errors.txt, one args object a line, each in an event of its own: a
# Bytes of 1.5 and 1.5e0, an Addr beyond 2^64 and one beyond 2^63 (which loads), a Device Id
# "0", an Addr of -4096 and -0 (which loads), Bytes 01024, "-", 17 digits (loads), a Total
# Allocated beyond 2^60 and one of 15 digits with a Bytes of -15 digits (loads), a Device Type
# and a Device Id out of range, Device Id -1 (loads), a comma before the brace, no Bytes, an Ev
# Idx true, a Total Reserved null, a comma missing, Bytes NaN, a second Addr of -1, Bytes an
# object, an escaped Bytes of 1.5, a ']' for the brace, an Ev Idx 1e and of 20 digits, a
# "finished" of maybe, ROCm's layout with an Ev Idx "-", the 2022 layout with a fraction, the
# 2021 layout with a Bytes x and without Bytes.
$ n=0; while IFS= read -r a; do n=$((n + 1)); printf '{"traceEvents": [\n{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1, "args": %s}\n]}\n' "$a" > "$T/$n.json"; (cd "$T" && hmem events $n.json >/dev/null 2>err; r=$?; head -1 err; echo "$n: exit $r"); done < tests/tiny/args_layout_errors.txt
hmem: 1.json:149: [memory] event: "Bytes": expected an integer
1: exit 4
hmem: 2.json:149: [memory] event: "Bytes": expected an integer
2: exit 4
hmem: 3.json:163: [memory] event: "Addr": number out of 64-bit range
3: exit 4
4: exit 0
hmem: 5.json:182: [memory] event: "Device Id" is a string, expected an integer
5: exit 4
hmem: 6.json:163: [memory] event: "Addr": negative (an address is 0 or more)
6: exit 4
7: exit 0
hmem: 8.json:149: [memory] event: "Bytes": invalid number (leading zero)
8: exit 4
hmem: 9.json:149: [memory] event: "Bytes": invalid number
9: exit 4
10: exit 0
hmem: 11.json:134: [memory] event: "Total Allocated": beyond 2^60 bytes (1 EiB)
11: exit 4
12: exit 0
hmem: 13.json:200: [memory] event: device type or id out of range
13: exit 4
hmem: 14.json:209: [memory] event: device type or id out of range
14: exit 4
15: exit 0
hmem: 16.json:215: invalid JSON in the args of a [memory] event
16: exit 4
hmem: 17.json:18: [memory] event without "Bytes" in its args
17: exit 4
hmem: 18.json:213: [memory] event: "Ev Idx" is a boolean, expected an integer
18: exit 4
hmem: 19.json:106: [memory] event: "Total Reserved" is null, expected an integer
19: exit 4
hmem: 20.json:154: invalid JSON in the args of a [memory] event
20: exit 4
hmem: 21.json:149: [memory] event: "Bytes": invalid number
21: exit 4
hmem: 22.json:224: [memory] event: "Addr": negative (an address is 0 or more)
22: exit 4
hmem: 23.json:149: [memory] event: "Bytes" is an object, expected an integer
23: exit 4
hmem: 24.json:154: [memory] event: "Bytes": expected an integer
24: exit 4
hmem: 25.json:215: invalid JSON in the args of a [memory] event
25: exit 4
hmem: 26.json:213: [memory] event: "Ev Idx": invalid number
26: exit 4
hmem: 27.json:213: [memory] event: "Ev Idx": number out of 64-bit range
27: exit 4
28: exit 0
hmem: 29.json:232: [memory] event: "Ev Idx": invalid number
29: exit 4
hmem: 30.json:207: [memory] event: "Total Reserved": expected an integer
30: exit 4
hmem: 31.json:131: [memory] event: "Bytes": invalid number
31: exit 4
hmem: 32.json:18: [memory] event without "Bytes" in its args
32: exit 4
? 0

# tests/tiny/y_kineto_layout.json, pretty-printed as Kineto writes it (thread name, slices,
# [memory] events and flows, four spaces deep): at 100 the layout (a slice, a [memory] event,
# flows "s" and "f" with "bp"); 200 the slice's "name" escaped; 300 "pid" before "name"; 400 a
# second space before ts; 500 an escaped quote in the name, pid and tid strings, an instant of
# "s": "p"; 600 args an array and a ts after args (the last wins); 700 a flow whose id is an
# object and a flow with "bp" first, a slice with args {}.
$ hmem events tests/tiny/y_kineto_layout.json | cut -d, -f3-15
device,ts,kind,bytes,addr,total_allocated,total_reserved,ev_idx,pid,tid,op,paired,lifetime
cuda:0,101.0,alloc,1024,4096,1024,2097152,101,10,10,aten::empty,yes,100.0
cuda:0,201.0,free,1024,4096,0,2097152,201,10,10,aten::zeros,yes,100.0
cuda:0,301.0,alloc,512,8192,512,2097152,301,10,10,aten::ones,no,
cuda:0,401.0,alloc,256,12288,768,2097152,401,10,10,aten::full,no,
cuda:0,501.0,alloc,128,16384,896,2097152,501,10,10,"aten::""q""",no,
cuda:0,601.0,alloc,64,20480,960,2097152,601,10,10,aten::neg,no,
cuda:0,702.0,alloc,32,24576,992,2097152,702,10,10,aten::relu,no,
? 0
$ hmem run -q size tests/tiny/y_kineto_layout.json --json - | lua5.4 tests/jget.lua inputs.1.events inputs.1.memory_events inputs.1.ops
19
7
7
? 0

# tests/tiny/kineto_layout_errors.txt, events in that layout with one thing wrong each (split
# at the "--" lines, each in a trace of its own): 1 an empty ts; 2 a space before a comma
# (loads); 3 ph a number; 4 ts a string; 5 ts 1e400; 6 a comma missing; 7 args {}; 8 the "bp"
# of a flow empty; 9 a comma after args; 10 a second ph after args (loads: the last wins, M);
# 11 a negative dur (loads); 12 a number after args; 13 cat an object; 14 args a string; 15 a
# ']' for the event's brace.
$ awk -v d="$T" 'BEGIN { n = 1 } /^--$/ { n++; next } { print > (d "/" n ".ev") }' tests/tiny/kineto_layout_errors.txt; n=1; while [ -e "$T/$n.ev" ]; do { printf '{"traceEvents": [\n'; cat "$T/$n.ev"; printf ']}\n'; } > "$T/$n.json"; (cd "$T" && hmem events $n.json >/dev/null 2>err; r=$?; head -1 err; echo "$n: exit $r"); n=$((n + 1)); done
hmem: 1.json:109: invalid JSON in an event
1: exit 4
hmem: note: 2.json has no [memory] events (record with torch.profiler.profile(profile_memory=True))
2: exit 0
hmem: 3.json:32: event "ph" is a number, expected a string
3: exit 4
hmem: 4.json:109: slice (ph X): "ts" is a string, expected a number of microseconds
4: exit 4
hmem: 5.json:131: [memory] event: "ts": number out of 64-bit range
5: exit 4
hmem: 6.json:53: invalid JSON in an event
6: exit 4
hmem: 7.json:20: [memory] event without "Bytes" in its args
7: exit 4
hmem: 8.json:122: invalid JSON in an event
8: exit 4
hmem: 9.json:151: invalid JSON in an event
9: exit 4
hmem: note: 10.json has no [memory] events (record with torch.profiler.profile(profile_memory=True))
10: exit 0
hmem: note: 11.json has no [memory] events (record with torch.profiler.profile(profile_memory=True))
11: exit 0
hmem: 12.json:148: invalid JSON in an event
12: exit 4
hmem: 13.json:44: event "cat" is an object, expected a string
13: exit 4
hmem: 14.json:20: [memory] event without an args object
14: exit 4
hmem: 15.json:149: invalid JSON in an event
15: exit 4
? 0

# tests/tiny/y_indented_layout.json, the events of a trace written again by a tool with an
# indent (json.dumps(indent=4): one member a line, eight spaces before an event): a thread
# name, three slices (aten::ones written before aten::zeros, which starts earlier), [memory]
# events in CUDA's order and in ROCm's with "finished", flows and a kernel. The reader
# matches this layout too (issue 29); what it reads is what the events say.
$ hmem events tests/tiny/y_indented_layout.json | cut -d, -f3-15
device,ts,kind,bytes,addr,total_allocated,total_reserved,ev_idx,pid,tid,op,paired,lifetime
cuda:0,101.0,alloc,1024,4096,1024,2097152,101,10,10,aten::empty,yes,100.0
cuda:0,201.0,free,1024,4096,0,2097152,201,10,10,aten::zeros,yes,100.0
cuda:0,301.0,alloc,512,8192,512,2097152,301,10,10,aten::ones,no,
? 0
$ hmem run -q size tests/tiny/y_indented_layout.json --json - | lua5.4 tests/jget.lua inputs.1.events inputs.1.memory_events inputs.1.ops
10
3
3
? 0

# The same events written by Python's json.dumps with compact separators (no white space at
# all) and with its default ones (one line, ", " and ": "): the same values (the checksum is
# of the four lines below, as written here).
$ for f in compact oneline; do hmem events tests/tiny/y_${f}_layout.json | cut -d, -f3-15 | md5sum; done; hmem events tests/tiny/y_compact_layout.json | cut -d, -f3-15
b2545b877124c18d856db18ae28a4020  -
b2545b877124c18d856db18ae28a4020  -
device,ts,kind,bytes,addr,total_allocated,total_reserved,ev_idx,pid,tid,op,paired,lifetime
cuda:0,101.0,alloc,1024,4096,1024,2097152,101,10,10,aten::empty,yes,100.0
cuda:0,201.0,free,1024,4096,0,2097152,201,10,10,aten::zeros,yes,100.0
cuda:0,301.0,alloc,512,8192,512,2097152,301,10,10,aten::ones,no,
? 0
