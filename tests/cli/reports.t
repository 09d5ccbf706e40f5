# Reports (issue 4; README "Reports"): --html, --perfetto, --annotate, and the summary's
# --format and --color. tests/html.lua, tests/browser.lua and tests/perfetto.lua check the
# contents against the --timeline CSV; these pin the command line and the error cases.
# On tests/tiny/y_pair_basic.json (pid 10, cuda:0): allocs of 1024 (ts 101.25) and 512
# (102.5), free of the 1024 (110.0), alloc of 256 (112.0); reserved 2 MiB, then 4 MiB.

# --- --perfetto: counter events on the trace's pid and timestamps ---
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --perfetto - | grep '"ph":"C"'
{"ph":"C","cat":"hmem","name":"hmem cuda:0","pid":10,"ts":100.0,"args":{"(before trace)":0,"1024":0,"512":0,"256":0}},
{"ph":"C","cat":"hmem","name":"hmem cuda:0 allocated","pid":10,"ts":100.0,"args":{"bytes":0}},
{"ph":"C","cat":"hmem","name":"hmem cuda:0","pid":10,"ts":101.25,"args":{"(before trace)":0,"1024":1024,"512":0,"256":0}},
{"ph":"C","cat":"hmem","name":"hmem cuda:0 allocated","pid":10,"ts":101.25,"args":{"bytes":1024}},
{"ph":"C","cat":"hmem","name":"hmem cuda:0 reserved","pid":10,"ts":101.25,"args":{"bytes":2097152}},
{"ph":"C","cat":"hmem","name":"hmem cuda:0","pid":10,"ts":102.5,"args":{"(before trace)":0,"1024":1024,"512":512,"256":0}},
{"ph":"C","cat":"hmem","name":"hmem cuda:0 allocated","pid":10,"ts":102.5,"args":{"bytes":1536}},
{"ph":"C","cat":"hmem","name":"hmem cuda:0 reserved","pid":10,"ts":102.5,"args":{"bytes":2097152}},
{"ph":"C","cat":"hmem","name":"hmem cuda:0","pid":10,"ts":110.0,"args":{"(before trace)":0,"1024":0,"512":512,"256":0}},
{"ph":"C","cat":"hmem","name":"hmem cuda:0 allocated","pid":10,"ts":110.0,"args":{"bytes":512}},
{"ph":"C","cat":"hmem","name":"hmem cuda:0 reserved","pid":10,"ts":110.0,"args":{"bytes":2097152}},
{"ph":"C","cat":"hmem","name":"hmem cuda:0","pid":10,"ts":112.0,"args":{"(before trace)":0,"1024":0,"512":512,"256":256}},
{"ph":"C","cat":"hmem","name":"hmem cuda:0 allocated","pid":10,"ts":112.0,"args":{"bytes":768}},
{"ph":"C","cat":"hmem","name":"hmem cuda:0 reserved","pid":10,"ts":112.0,"args":{"bytes":4194304}}
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --perfetto - | lua5.4 tests/jget.lua traceEvents.# traceEvents.1.name traceEvents.1.args.name displayTimeUnit otherData.rules
15
process_name
hmem: tests/tiny/y_pair_basic.json
ms
tests/tiny/rules/by_size.lua
? 0
# --- --annotate: the trace with the counters first in its events array ---
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --annotate $T/annot.json && head -c 200 $T/annot.json && echo && grep -c '"ph":"C"' $T/annot.json && tail -c 220 $T/annot.json
{"schemaVersion": 1, "traceEvents": [
{"ph":"C","cat":"hmem","name":"hmem cuda:0","pid":10,"ts":100.0,"args":{"(before trace)":0,"1024":0,"512":0,"256":0}},
{"ph":"C","cat":"hmem","name":"hmem cuda:0 
14
stant_event", "s": "t", "name": "[memory]", "pid": 10, "tid": 10, "ts": 112.000, "args": {"Total Reserved": 4194304, "Total Allocated": 768, "Bytes": 256, "Addr": 4096, "Device Id": 0, "Device Type": 1, "Ev Idx": 4}}
]}
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --annotate $T/annot.json.gz && gzip -t $T/annot.json.gz && gzip -dc $T/annot.json.gz | cmp - $T/annot.json && echo same as uncompressed; rm -f $T/annot.json $T/annot.json.gz
same as uncompressed
? 0
# An empty events array gets the counters and no stray comma; a trace without one is copied.
$ hmem run size tests/tiny/i_empty_trace_events.json --annotate - | cmp - tests/tiny/i_empty_trace_events.json && echo unchanged
hmem: note: tests/tiny/i_empty_trace_events.json has no [memory] events (record with torch.profiler.profile(profile_memory=True))
unchanged
? 0
$ hmem run size tests/tiny/i_no_trace_events.json --annotate - | cmp - tests/tiny/i_no_trace_events.json && echo unchanged
hmem: note: tests/tiny/i_no_trace_events.json has no [memory] events (no traceEvents in it)
unchanged
? 0
# One trace file only, never written over itself.
$ hmem run size tests/tiny/y_pair_basic.json tests/tiny/y_peak.json --annotate $T/x.json
hmem: --annotate needs exactly one trace file (not a directory)
Try 'hmem --help'.
? 2
$ hmem run size tests/tiny/y_dir --annotate $T/x.json
hmem: --annotate needs exactly one trace file (not a directory)
Try 'hmem --help'.
? 2
$ hmem run size tests/tiny/y_pair_basic.json --annotate tests/tiny/y_pair_basic.json
hmem: --annotate tests/tiny/y_pair_basic.json would replace the trace being read; write elsewhere
Try 'hmem --help'.
? 2
# A trace that changed between the analysis and the copy (done() rewrites it here).
$ cp tests/tiny/y_pair_basic.json $T/changed.json && cd $T && HMEM_TEST_TRACE=changed.json hmem run --allow-io $OLDPWD/tests/tiny/rules/change_trace.lua changed.json --annotate x.json; s=$?; rm -f changed.json; exit $s
hmem: changed.json: cannot annotate: the trace ended at byte 34, before the events array it had when it was read (a pipe cannot be read twice; did the file change?)
? 5
$ cp tests/tiny/y_pair_basic.json $T/changed.json && cd $T && HMEM_TEST_TRACE=changed.json HMEM_TEST_PAD=1 hmem run --allow-io $OLDPWD/tests/tiny/rules/change_trace.lua changed.json --annotate x.json; s=$?; rm -f changed.json; exit $s
hmem: changed.json: cannot annotate: the byte at offset 36 is no longer the '[' of the events array (did the file change since it was read?)
? 5
# A trace skipped with --keep-going leaves nothing to annotate.
$ hmem run -q size tests/tiny/n_bad_json.json --keep-going --annotate $T/x.json
hmem: --annotate: the trace was not read: nothing to annotate
? 4
# --- --html ---
# The page: the summary and live-at-peak tables, the data, the script (which draws the chart).
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --html - | grep -c '<table class=\|<script id=hmem-data\|^<script>$'
4
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --html - | grep -o '"t":\[[^]]*\]\|"res":\[[^]]*\]\|"peak":[0-9]*'
"peak":1536
"t":[0,1250,2500,10000,12000]
"res":[1,2097152,4,4194304]
? 0
$ hmem run tests/tiny/rules/html_names.lua tests/tiny/y_pair_basic.json --html - | grep -o '<td><span class=\(sw style="background:#[0-9a-f]*"\|"sw before"\)></span>[^<]*</td>\|<h3>&lt;i[^<]*'
<td><span class="sw before"></span>(before trace)</td>
<td><span class=sw style="background:#e69f00"></span>&lt;/script&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</td>
<td><span class=sw style="background:#123abc"></span>&quot;&gt;&lt;b&gt;bold&lt;/b&gt;</td>
<td><span class=sw style="background:#56b4e9"></span>a &amp; b &lt;!-- c --&gt;</td>
<td><span class=sw style="background:#e69f00"></span>&lt;/script&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</td>
<td><span class=sw style="background:#123abc"></span>&quot;&gt;&lt;b&gt;bold&lt;/b&gt;</td>
<h3>&lt;i&gt;by op&lt;/i&gt; 
? 0
# --- outputs that cannot be written: exit 5, and no other output appears ---
$ hmem run size tests/tiny/y_pair_basic.json --perfetto $T/ok.json --html /nonexistent/r.html; s=$?; ls $T/ok.json 2>&1 | sed 's/:.*//'; exit $s
hmem: /nonexistent/r.html: cannot write: No such file or directory
ls
? 5
$ hmem run size tests/tiny/y_pair_basic.json --annotate /nonexistent/a.json.gz
hmem: /nonexistent/a.json.gz: cannot write: No such file or directory
? 5
# Only one output may go to standard output.
$ hmem run size tests/tiny/y_pair_basic.json --html - --perfetto -
hmem: only one output can go to standard output
Try 'hmem --help'.
? 2
$ hmem run size tests/tiny/y_pair_basic.json --html - --format csv
hmem: only one output can go to standard output
Try 'hmem --help'.
? 2
$ hmem events tests/tiny/y_pair_basic.json --html r.html
hmem: --html belongs to 'hmem run'
Try 'hmem --help'.
? 2
# --- the summary: --format ---
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --format csv
path,rank,device,peak_bytes,peak_ts,max_reserved_bytes,category,category_peak_bytes,bytes_at_peak,allocs,alloc_bytes,end_bytes,what,device_kind,series,max_bytes,min_bytes,median_bytes,mean_bytes,imbalance
tests/tiny/y_pair_basic.json,,cuda:0,1536,102.5,4194304,(before trace),0,0,0,0,0,series,,,,,,,
tests/tiny/y_pair_basic.json,,cuda:0,1536,102.5,4194304,1024,1024,1024,1,1024,0,series,,,,,,,
tests/tiny/y_pair_basic.json,,cuda:0,1536,102.5,4194304,512,512,512,1,512,512,series,,,,,,,
tests/tiny/y_pair_basic.json,,cuda:0,1536,102.5,4194304,256,256,0,1,256,256,series,,,,,,,
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --format json | lua5.4 tests/jget.lua series.1.peak_bytes series.1.categories.#
1536
4
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --format json > $T/f.json && hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --json - | cmp - $T/f.json && echo same as --json; rm -f $T/f.json
same as --json
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --json $T/j.json --format csv | head -2; rm -f $T/j.json
path,rank,device,peak_bytes,peak_ts,max_reserved_bytes,category,category_peak_bytes,bytes_at_peak,allocs,alloc_bytes,end_bytes,what,device_kind,series,max_bytes,min_bytes,median_bytes,mean_bytes,imbalance
tests/tiny/y_pair_basic.json,,cuda:0,1536,102.5,4194304,(before trace),0,0,0,0,0,series,,,,,,,
? 0
$ hmem run size tests/tiny/y_pair_basic.json --format yaml
hmem: --format is text, csv or json, not 'yaml'
Try 'hmem --help'.
? 2
# --- the summary: --color (auto: a terminal and no NO_COLOR; off in a pipe) ---
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --color always | head -4 | cat -v
^[[1mtests/tiny/y_pair_basic.json^[[0m  (6 events, 4 memory events)
  ^[[1mcuda:0^[[0m: peak ^[[1m1.50 KiB^[[0m at +0.003 ms (ts 102.5), end 768 B, max reserved 4.00 MiB
  3 allocs, 1 frees (1 matched)
^[[2m    category               peak      at peak    allocs  live at end^[[0m
? 0
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json | head -2 | cat -v
tests/tiny/y_pair_basic.json  (6 events, 4 memory events)
  cuda:0: peak 1.50 KiB at +0.003 ms (ts 102.5), end 768 B, max reserved 4.00 MiB
? 0
$ script -qec "hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json" /dev/null | grep -a "memory events" | cat -v
^[[1mtests/tiny/y_pair_basic.json^[[0m  (6 events, 4 memory events)^M
? 0
$ NO_COLOR=1 script -qec "hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json" /dev/null | grep -a "memory events" | cat -v
tests/tiny/y_pair_basic.json  (6 events, 4 memory events)^M
? 0
$ NO_COLOR=1 script -qec "hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --color always" /dev/null | grep -a "memory events" | cat -v
^[[1mtests/tiny/y_pair_basic.json^[[0m  (6 events, 4 memory events)^M
? 0
$ hmem run size tests/tiny/y_pair_basic.json --color sometimes
hmem: --color is auto, always or never, not 'sometimes'
Try 'hmem --help'.
? 2
