# Errors (issue 2, "Errors"; README "Errors and exit codes"): each bad input has a pinned
# message "hmem: FILE:OFFSET: what" (OFFSET = byte offset in the decompressed JSON) and exit code
# 4 (bad or missing trace), 3 (rule file), 2 (usage), 5 (a file that cannot be read or written).
# Traces: tests/tiny/n_*.

# --- gzip ---
# Truncated: the first 200 of 235 compressed bytes of y_peak.json, which inflate to 764 bytes.
$ hmem events tests/tiny/n_gzip_truncated.json.gz
hmem: tests/tiny/n_gzip_truncated.json.gz:764: gzip stream is truncated (the file ends inside compressed data at byte 200)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
# The same cut made here (the offset depends on the gzip in use, so it is masked).
$ d=$(mktemp -d) && gzip -c tests/tiny/y_pair_basic.json | head -c 150 > "$d/cut.json.gz" && cd "$d" && hmem events cut.json.gz 2>&1 | sed 's/gz:[0-9]*:/gz:N:/; s/byte [0-9]*)/byte M)/'; cd - >/dev/null; rm -rf "$d"
hmem: cut.json.gz:N: gzip stream is truncated (the file ends inside compressed data at byte M)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 0
$ d=$(mktemp -d) && gzip -c tests/tiny/y_pair_basic.json | head -c 150 > "$d/cut.json.gz" && hmem events "$d/cut.json.gz" >/dev/null 2>&1; rc=$?; rm -rf "$d"; exit $rc
? 4
# A gzip header and nothing else.
$ d=$(mktemp -d) && gzip -c tests/tiny/y_pair_basic.json | head -c 10 > "$d/h.json.gz" && cd "$d" && hmem events h.json.gz; rc=$?; cd - >/dev/null; rm -rf "$d"; exit $rc
hmem: h.json.gz:0: gzip stream is truncated (the file ends inside compressed data at byte 10)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
# Trailing garbage after a complete gzip stream of y_peak.json (1396 bytes of JSON, 235
# compressed): the error is at the end of the JSON, offset 1396.
$ hmem events tests/tiny/n_gzip_trailing.json.gz
hmem: tests/tiny/n_gzip_trailing.json.gz:1396: unexpected bytes after the end of the gzip stream (compressed byte 235)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ d=$(mktemp -d) && { gzip -c tests/tiny/y_peak.json; echo junk; } > "$d/t.json.gz" && cd "$d" && hmem events t.json.gz 2>&1 | sed 's/(compressed byte [0-9]*)/(compressed byte N)/'; cd - >/dev/null; rm -rf "$d"
hmem: t.json.gz:1396: unexpected bytes after the end of the gzip stream (compressed byte N)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 0
# Corrupt deflate data (8 bytes overwritten at compressed byte 60). The offset is where the
# decompressed JSON stops and the compressed byte where the damage is noticed depend on the
# inflate library (ISA-L or zlib); only the rest of the message is pinned.
$ hmem events tests/tiny/n_gzip_corrupt.json.gz 2>&1 | sed 's/gz:[0-9]*:/gz:N:/; s/compressed byte [0-9]*/compressed byte M/'
hmem: tests/tiny/n_gzip_corrupt.json.gz:N: corrupt gzip data near compressed byte M: invalid distance too far back
hmem: stopped; use --keep-going to skip traces that cannot be read
? 0

# --- JSON ---
# Cut off in the middle of the third event, which starts at byte 404.
$ hmem events tests/tiny/n_cut_off.json
hmem: tests/tiny/n_cut_off.json:404: the file ends inside the value that starts here (cut-off JSON: was the job killed while writing the trace?)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
# Cut off after a complete event (the file is 404 bytes).
$ hmem events tests/tiny/n_cut_between.json
hmem: tests/tiny/n_cut_between.json:404: the file ends inside traceEvents (cut-off JSON: was the job killed while writing the trace?)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
# y_pair_basic.json cut with head -c 700 here: inside the event that starts at byte 514.
$ d=$(mktemp -d) && head -c 700 tests/tiny/y_pair_basic.json > "$d/cut.json" && cd "$d" && hmem events cut.json; rc=$?; cd - >/dev/null; rm -rf "$d"; exit $rc
hmem: cut.json:514: the file ends inside the value that starts here (cut-off JSON: was the job killed while writing the trace?)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
# Syntax errors: a missing comma inside an event (at the key that follows "ts": 2), and a
# second JSON document after the first.
$ hmem events tests/tiny/n_bad_json.json
hmem: tests/tiny/n_bad_json.json:309: invalid JSON in an event
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ hmem events tests/tiny/n_two_documents.json
hmem: tests/tiny/n_two_documents.json:382: unexpected data after the end of the JSON value
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4

# --- memory events ---
# No "Bytes" (offset of the event).
$ hmem events tests/tiny/n_missing_bytes.json
hmem: tests/tiny/n_missing_bytes.json:211: [memory] event without "Bytes" in its args
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
# A string where a number belongs (offset of the value).
$ hmem events tests/tiny/n_bytes_string.json
hmem: tests/tiny/n_bytes_string.json:353: [memory] event: "Bytes" is a string, expected an integer
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ hmem events tests/tiny/n_ts_string.json
hmem: tests/tiny/n_ts_string.json:307: [memory] event: "ts" is a string, expected a number of microseconds
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ hmem events tests/tiny/n_bytes_fraction.json
hmem: tests/tiny/n_bytes_fraction.json:328: [memory] event: "Bytes": expected an integer
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
# Beyond 64 bits: 2^63 does not fit a signed size.
$ hmem events tests/tiny/n_bytes_overflow.json
hmem: tests/tiny/n_bytes_overflow.json:159: [memory] event: "Bytes": number out of 64-bit range
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
# A number where a string belongs: the name of a cpu_op (offset of the value).
$ hmem events tests/tiny/n_op_name_number.json
hmem: tests/tiny/n_op_name_number.json:248: event "name" is a number, expected a string
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4

# --- not a trace ---
# export_memory_timeline's raw output (a top-level array of arrays).
$ hmem events tests/tiny/n_memory_timeline.json
hmem: tests/tiny/n_memory_timeline.json:1: not a Chrome trace: the top-level array holds an array, not event objects (export_memory_timeline output is not a trace)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ hmem events tests/tiny/n_not_json.json
hmem: tests/tiny/n_not_json.json:0: not a JSON trace: expected '{' or '[' at the start
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ hmem events tests/tiny/n_trace_events_object.json
hmem: tests/tiny/n_trace_events_object.json:40: traceEvents is not an array
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
# Empty file, and a file of white space only.
$ hmem events tests/tiny/n_empty.json
hmem: tests/tiny/n_empty.json:0: the file is empty (no JSON in it)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/n_blank.json
hmem: tests/tiny/n_blank.json:0: the file is empty (no JSON in it)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4

# --- paths ---
# A directory without any *.json / *.json.gz below it.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/n_no_traces
hmem: no trace files (*.json, *.json.gz) found in tests/tiny/n_no_traces
? 4
$ d=$(mktemp -d) && hmem events "$d" >/dev/null 2>&1; rc=$?; rm -rf "$d"; exit $rc
? 4
# A path that does not exist: a missing trace (--help: "4 bad or missing trace").
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_peak.json tests/tiny/does_not_exist.json
hmem: tests/tiny/does_not_exist.json: No such file or directory
? 4
# The first bad file stops the run, before any output is written.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_peak.json tests/tiny/n_cut_off.json tests/tiny/y_pair_basic.json --json -
hmem: tests/tiny/n_cut_off.json:404: the file ends inside the value that starts here (cut-off JSON: was the job killed while writing the trace?)
hmem: stopped; use --keep-going to skip traces that cannot be read
? 4

# --- --keep-going ---
# A file cut off by a killed job (cut-off JSON, truncated gzip) keeps its complete events and
# says what was lost; a file that cannot be read at all is reported (with the events read
# before the error) and left out. The other traces' results are still written; the exit code
# (4) says something was lost.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_peak.json tests/tiny/n_cut_off.json tests/tiny/n_gzip_truncated.json.gz tests/tiny/y_pair_basic.json --keep-going --json - | lua5.4 tests/jget.lua inputs.# inputs.1.path inputs.2.path skipped.# skipped.1.path skipped.1.events_read skipped.2.path skipped.2.error series.# series.1.peak_bytes series.2.peak_bytes
hmem: warning: tests/tiny/n_cut_off.json:404: the file ends inside the event that starts here (cut-off JSON: was the job killed while writing the trace?)
hmem: kept the 2 complete events before byte 404; the 135 bytes after it are lost
hmem: warning: tests/tiny/n_gzip_truncated.json.gz:764: gzip stream is truncated (the file ends inside compressed data at byte 200)
hmem: kept the 3 complete events before byte 605; the 159 bytes after it are lost
hmem: warning: tests/tiny/n_cut_off.json cuda:0: the sum of categories differs from the trace's Total Allocated after 1 of 2 events (first at ts 2.0)
4
tests/tiny/y_peak.json
tests/tiny/n_cut_off.json
0
nil
nil
nil
nil
4
400
300
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_peak.json tests/tiny/n_cut_off.json --keep-going --json - >/dev/null 2>&1
? 4
# To a file: written despite the skip, with no temporary file left.
$ d=$(mktemp -d) && hmem run tests/tiny/rules/by_size.lua tests/tiny/n_empty.json tests/tiny/y_peak.json --keep-going -q --json "$d/r.json"; echo "exit $?"; ls "$d"; lua5.4 tests/jget.lua series.1.peak_bytes skipped.1.path < "$d/r.json"; rm -rf "$d"
exit 4
r.json
400
tests/tiny/n_empty.json
? 0
# events too.
$ hmem events tests/tiny/n_missing_bytes.json tests/tiny/y_rank-3.json --keep-going
hmem: skipped tests/tiny/n_missing_bytes.json:211: [memory] event without "Bytes" in its args (1 events read before the error are not used)
hmem: 1 of 2 traces skipped (see above)
path,rank,device,ts,kind,bytes,addr,total_allocated,total_reserved,ev_idx,pid,tid,op,paired,lifetime
tests/tiny/y_rank-3.json,3,cuda:0,1.0,alloc,64,4096,64,,,1,1,,no,
? 4

# --- rule files (exit 3) ---
# A runtime error: file:line: message, the event being classified (kind, size, device, ts, op,
# file), then a traceback through the rule file.
$ hmem run tests/tiny/rules/runtime_error.lua tests/tiny/y_pair_basic.json
hmem: tests/tiny/rules/runtime_error.lua:5: no rule for 512 bytes
  while classifying the allocation of 512 bytes on cuda:0 at ts 102.5 (op aten::empty) in tests/tiny/y_pair_basic.json
stack traceback:
	[C]: in function 'error'
	tests/tiny/rules/runtime_error.lua:5: in upvalue 'check'
	tests/tiny/rules/runtime_error.lua:10: in function <tests/tiny/rules/runtime_error.lua:9>
? 3
# Reading a field rows do not have is an error, not a silent nil.
$ hmem run tests/tiny/rules/bad_field.lua tests/tiny/y_pair_basic.json --json -
hmem: tests/tiny/rules/bad_field.lua:3: row has no field 'size' (fields: ts, ts_ns, bytes, kind, before_trace, addr, device, device_type, device_id, rank, file, pid, tid, ev_idx, total_allocated, total_reserved, free_ts, lifetime, op, ops, annotations, step, module, python, thread, free_op, free_ops, free_step, stack, category, modules, frame, step_ts, context, free_context, ops_open_at_free, same_step, has_addr, series_id, frames, block_bytes, stream, compile_context, user_metadata, segment, free_frames, view, free_view)
  while classifying the allocation of 1024 bytes on cuda:0 at ts 101.25 (op aten::empty) in tests/tiny/y_pair_basic.json
stack traceback:
	[C]: in metamethod 'index'
	tests/tiny/rules/bad_field.lua:3: in function <tests/tiny/rules/bad_field.lua:2>
? 3
# An error while a free of memory allocated before the trace is being classified.
$ hmem run tests/tiny/rules/number.lua tests/tiny/y_peak_initial.json
hmem: tests/tiny/rules/number.lua:2: classify returned a number; it must return a category name (a string) or nil
  while classifying the free of 200 bytes on cuda:0 at ts 7.0 (op none) in tests/tiny/y_peak_initial.json
? 3
# A syntax error, an error while the file runs, no classify, no such file: reported before
# any trace is read.
$ hmem run tests/tiny/rules/syntax_error.lua tests/tiny/y_pair_basic.json
hmem: tests/tiny/rules/syntax_error.lua:4: 'end' expected (to close 'function' at line 2) near 'if'
...
? 3
$ hmem run tests/tiny/rules/load_error.lua tests/tiny/y_pair_basic.json
hmem: tests/tiny/rules/load_error.lua:3: attempt to index a nil value (local 'cfg')
stack traceback:
	tests/tiny/rules/load_error.lua:3: in main chunk
...
? 3
$ hmem run tests/tiny/rules/no_classify.lua tests/tiny/y_pair_basic.json
hmem: tests/tiny/rules/no_classify.lua: defines no function classify(row) (it must return a category name for one allocation), and returns no pack table
? 3
$ hmem run tests/tiny/rules/does_not_exist.lua tests/tiny/y_pair_basic.json
hmem: tests/tiny/rules/does_not_exist.lua: no such rule file
? 3
$ hmem run tests/tiny/rules/syntax_error.lua tests/tiny/n_cut_off.json
hmem: tests/tiny/rules/syntax_error.lua:4: 'end' expected (to close 'function' at line 2) near 'if'
...
? 3

# --- usage (exit 2) ---
$ hmem run
hmem: run needs a rule file and at least one trace: hmem run RULES PATH...
Try 'hmem --help'.
? 2
$ hmem run tests/tiny/rules/by_size.lua
hmem: run: no trace file or directory given
Try 'hmem --help'.
? 2
$ hmem events
hmem: events: no trace file or directory given
Try 'hmem --help'.
? 2
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_peak.json --frobnicate
hmem: unknown option '--frobnicate'
Try 'hmem --help'.
? 2
$ hmem events tests/tiny/y_peak.json -x
hmem: unknown option '-x'
Try 'hmem --help'.
? 2
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_peak.json --json
hmem: --json needs an argument (see hmem --help)
Try 'hmem --help'.
? 2
$ hmem events tests/tiny/y_peak.json --csv
hmem: --csv needs an argument (see hmem --help)
Try 'hmem --help'.
? 2
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_peak.json --csv x.csv
hmem: --csv belongs to 'hmem events'; 'hmem run' writes --json and --timeline
Try 'hmem --help'.
? 2
$ hmem events tests/tiny/y_peak.json --timeline x.csv
hmem: --timeline belongs to 'hmem run'
Try 'hmem --help'.
? 2
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_peak.json --json - --timeline -
hmem: only one output can go to standard output
Try 'hmem --help'.
? 2
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_peak.json --timeline - --summary
hmem: only one output can go to standard output
Try 'hmem --help'.
? 2
# Usage errors come before anything is read (the trace does not exist).
$ hmem run tests/tiny/rules/does_not_exist.lua tests/tiny/nope.json --bogus
hmem: unknown option '--bogus'
Try 'hmem --help'.
? 2

# --- outputs (exit 5) ---
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_peak.json --json /nonexistent-dir/r.json
hmem: /nonexistent-dir/r.json: cannot write: No such file or directory
? 5
$ hmem events tests/tiny/y_peak.json --csv /nonexistent-dir/e.csv
hmem: /nonexistent-dir/e.csv: cannot write: No such file or directory
? 5
