# Inputs the reader got wrong (issue 11). Traces: tests/tiny (one event per line); the big ones
# are made here in a temporary directory.

# --- white space between events ---
# Three gzip members, the second a comma, 1 MiB of spaces and an event: read the same on one
# thread and on two or three (it aborted with "double free or corruption" on more than one).
$ for j in 1 2 3; do hmem events tests/tiny/y_ws_gzip_members.json.gz -j $j | md5sum; done | uniq -c | sed 's/^ *//'
3 6254dd6c666fee8271bd705659f67529  -
? 0
$ hmem events tests/tiny/y_ws_gzip_members.json.gz -j 2
path,rank,device,ts,kind,bytes,addr,total_allocated,total_reserved,ev_idx,pid,tid,op,paired,lifetime
tests/tiny/y_ws_gzip_members.json.gz,,cuda:0,1.0,alloc,100,4096,100,,,1,1,,no,
tests/tiny/y_ws_gzip_members.json.gz,,cuda:0,2.0,alloc,100,8192,200,,,1,1,,no,
? 0
# The same as plain JSON.
$ d=$(mktemp -d) && gzip -dc tests/tiny/y_ws_gzip_members.json.gz > "$d/t.json" && cd "$d" && for j in 1 2 3; do hmem events t.json -j $j | md5sum; done | uniq -c | sed 's/^ *//'; rc=$?; cd - >/dev/null; rm -rf "$d"; exit $rc
3 6116c444c7c294718e7900fb15a495da  -
? 0
# Memory grows with the events kept, never with the bytes between them: 64 MiB of spaces
# between two events (64 KB of gzip) raise the peak RSS (GNU time, KB) by less than those
# 64 MiB over the same two events without them (it was twice the gap: the spaces were held).
$ d=$(mktemp -d) && E='{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1, "args": {"Bytes": 100, "Addr": 4096, "Device Id": 0, "Device Type": 1}}' && { printf '{"traceEvents": [%s,' "$E"; printf '%s]}' "$E"; } | gzip > "$d/base.json.gz" && { printf '{"traceEvents": [%s,' "$E"; head -c 67108864 /dev/zero | tr '\0' ' '; printf '%s]}' "$E"; } | gzip > "$d/gap.json.gz" && for j in 1 2; do for f in base gap; do ASAN_OPTIONS=quarantine_size_mb=0 /usr/bin/time -f %M -o "$d/$f.rss" hmem run size "$d/$f.json.gz" -q -j $j --json "$d/out.json" || exit 1; done; b=$(tail -1 "$d/base.rss"); g=$(tail -1 "$d/gap.rss"); [ $((g - b)) -lt 65536 ] && echo "-j $j: less than the gap" || echo "-j $j: $b KB without the gap, $g KB with it"; done; rm -rf "$d"
-j 1: less than the gap
-j 2: less than the gap
? 0
# A long gap is checked in parts as it is read: an error after it is still at its offset
# (1 MiB of spaces after the first event's comma, then a second comma; then "nope").
$ d=$(mktemp -d) && { head -n 2 tests/tiny/y_pair_basic.json; head -c 1048576 /dev/zero | tr '\0' ' '; printf ', '; tail -n +3 tests/tiny/y_pair_basic.json; } > "$d/t.json" && cd "$d" && for j in 1 2; do hmem events t.json -j $j; tail -c +1048731 t.json | head -c 1; echo; done; rc=$?; cd - >/dev/null; rm -rf "$d"; exit $rc
hmem: t.json:1048730: two commas between events
hmem: stopped; use --keep-going to skip traces that cannot be read
,
hmem: t.json:1048730: two commas between events
hmem: stopped; use --keep-going to skip traces that cannot be read
,
? 0
$ d=$(mktemp -d) && { head -n 2 tests/tiny/y_pair_basic.json | tr -d '\n'; head -c 1048576 /dev/zero | tr '\0' ' '; printf 'nope]}'; } > "$d/t.json" && cd "$d" && hmem events t.json; rc=$?; cd - >/dev/null; rm -rf "$d"; exit $rc
hmem: t.json:1048728: an element of traceEvents is null, not an event object
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
# ... and the end of a file cut in a long gap is where it was.
$ d=$(mktemp -d) && { head -n 2 tests/tiny/y_pair_basic.json; head -c 1048576 /dev/zero | tr '\0' ' '; } > "$d/t.json" && cd "$d" && hmem events t.json; rc=$?; cd - >/dev/null; rm -rf "$d"; exit $rc
hmem: t.json:1048730: the file ends inside traceEvents (cut-off JSON: was the job killed while writing the trace?)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4

# --- JSON the reader read wrong without a word ---
# traceEvents that is neither an array nor null (it read as null: no events).
$ hmem events tests/tiny/n_trace_events_nope.json
hmem: tests/tiny/n_trace_events_nope.json:36: traceEvents is not valid JSON (expected an array or null)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ tail -c +37 tests/tiny/n_trace_events_nope.json | head -c 4; echo
nope
? 0
# Escapes in keys, ph, cat and names: "trace\u0045vents", "n\u0061me", "\u0058", "cpu\u005fop",
# "[m\u0065mory]", "B\u0079tes", "\u0041ddr", "Device\u0020Id", ... are the keys and names they
# spell (JSON says so): y_escaped.json is y_pair_basic.json written with them.
$ hmem events tests/tiny/y_escaped.json
path,rank,device,ts,kind,bytes,addr,total_allocated,total_reserved,ev_idx,pid,tid,op,paired,lifetime
tests/tiny/y_escaped.json,,cuda:0,101.25,alloc,1024,4096,1024,2097152,1,10,10,aten::empty,yes,8.75
tests/tiny/y_escaped.json,,cuda:0,102.5,alloc,512,8192,1536,2097152,2,10,10,aten::empty,no,
tests/tiny/y_escaped.json,,cuda:0,110.0,free,1024,4096,512,2097152,3,10,10,,yes,8.75
tests/tiny/y_escaped.json,,cuda:0,112.0,alloc,256,4096,768,4194304,4,10,10,aten::add,no,
? 0
$ HMEM_WALK=scanner hmem events tests/tiny/y_escaped.json -j 2 | cut -d, -f2- | md5sum; hmem events tests/tiny/y_pair_basic.json | cut -d, -f2- | md5sum
da0fa9aa14d42a0df13597600aa9e2a5  -
da0fa9aa14d42a0df13597600aa9e2a5  -
? 0
# A negative Addr is an error (it was read as its 64-bit pattern: -1 as 18446744073709551615).
$ hmem events tests/tiny/n_addr_negative.json
hmem: tests/tiny/n_addr_negative.json:318: [memory] event: "Addr": negative (an address is 0 or more)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ tail -c +319 tests/tiny/n_addr_negative.json | head -c 2; echo
-1
? 0
# "Addr": nan is not JSON (it was reported as null).
$ hmem events tests/tiny/n_addr_nan.json
hmem: tests/tiny/n_addr_nan.json:318: [memory] event: "Addr" is not valid JSON, expected an integer
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
