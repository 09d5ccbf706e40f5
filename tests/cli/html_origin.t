# The time origin (issue 17): the trace's first timed event that is not metadata. On
# tests/tiny/y_meta_ts0.json, two "ph": "M" events at ts 0 (as scripts/gen-trace writes
# them), then an op at ts 5000100.0 and a 1024-byte alloc (5000101.25) and its free
# (5000110.0): "+ms" counts from 5000100.0, not from 0.
$ hmem run size tests/tiny/y_meta_ts0.json | grep ": peak"
  cuda:0: peak 1.00 KiB at +0.001 ms (ts 5000101.25), end 0 B, max reserved 2.00 MiB
? 0
$ hmem run size tests/tiny/y_meta_ts0.json --html - | grep -o '"t0":"[^"]*"\|"t":\[[^]]*\]'
"t0":"5000100.0"
"t":[0,1250,10000]
? 0
