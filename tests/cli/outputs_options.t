# Number options are checked whole (issue 11, README "Options"): "nan", "inf", out of range
# or trailing junk are usage errors (exit 2) saying what was given, never a limit quietly
# switched off (a NaN timeout compares as never reached) or undefined behaviour (inf MB as
# a size_t). And --top means the same in every output.

$ hmem run size tests/tiny/y_pair_basic.json --timeout nan
hmem: --timeout needs seconds, a number from 0 (no limit) to 1000000, not 'nan'
Try 'hmem --help'.
? 2
$ hmem run size tests/tiny/y_pair_basic.json --timeout inf
hmem: --timeout needs seconds, a number from 0 (no limit) to 1000000, not 'inf'
Try 'hmem --help'.
? 2
$ hmem run size tests/tiny/y_pair_basic.json --timeout 1e999
hmem: --timeout needs seconds, a number from 0 (no limit) to 1000000, not '1e999'
Try 'hmem --help'.
? 2
$ hmem run size tests/tiny/y_pair_basic.json --timeout ''
hmem: --timeout needs seconds, a number from 0 (no limit) to 1000000, not ''
Try 'hmem --help'.
? 2
$ hmem run size tests/tiny/y_pair_basic.json --lua-mem inf
hmem: --lua-mem needs megabytes, a number from 1 to 100000000 or 0 (no limit), not 'inf'
Try 'hmem --help'.
? 2
$ hmem run size tests/tiny/y_pair_basic.json --lua-mem NaN
hmem: --lua-mem needs megabytes, a number from 1 to 100000000 or 0 (no limit), not 'NaN'
Try 'hmem --help'.
? 2
# 1e300 MB overflows a size_t; 1e-9 MB is less than a byte, which would mean no limit.
$ hmem run size tests/tiny/y_pair_basic.json --lua-mem 1e300
hmem: --lua-mem needs megabytes, a number from 1 to 100000000 or 0 (no limit), not '1e300'
Try 'hmem --help'.
? 2
$ hmem run size tests/tiny/y_pair_basic.json --lua-mem 1e-9
hmem: --lua-mem needs megabytes, a number from 1 to 100000000 or 0 (no limit), not '1e-9'
Try 'hmem --help'.
? 2
# Counts take decimal digits only: an empty --top was 0, " 4" was 4.
$ hmem run size tests/tiny/y_pair_basic.json --top ''
hmem: --top needs a number from 0 to 1000000, not ''
Try 'hmem --help'.
? 2
$ hmem run size tests/tiny/y_pair_basic.json --top ' 4'
hmem: --top needs a number from 0 to 1000000, not ' 4'
Try 'hmem --help'.
? 2
$ hmem run size tests/tiny/y_pair_basic.json -j 99999999999999999999
hmem: -j needs a number of threads to read with, from 1 to 1024, not '99999999999999999999'
Try 'hmem --help'.
? 2
# Good values still pass: fractions, exponents, 0.
$ hmem run size tests/tiny/y_pair_basic.json --timeout 2.5e1 --lua-mem 64.5 --top 0 -j 1 --json - | lua5.4 tests/jget.lua series.1.peak_bytes
1536
? 0

# --top 0: no rows live at the peak, in --json and in done()'s report.series alike (Lua
# saw 20 before); --top 1 one, and by default all of this trace's 2.
$ d=$(mktemp -d) && hmem run tests/tiny/rules/live_count.lua tests/tiny/y_pair_basic.json --top 0 --json $d/o.json && lua5.4 tests/jget.lua series.1.live_at_peak.# < $d/o.json; rm -rf $d
0
0
? 0
$ d=$(mktemp -d) && hmem run tests/tiny/rules/live_count.lua tests/tiny/y_pair_basic.json --top 1 --json $d/o.json && lua5.4 tests/jget.lua series.1.live_at_peak.# < $d/o.json; rm -rf $d
1
1
? 0
$ hmem run tests/tiny/rules/live_count.lua tests/tiny/y_pair_basic.json
2
...
? 0

# --perfetto: a pid holding a NUL ("a\u0000b") is written whole, as a JSON string (it
# was "" when the pid was cut at the NUL).
$ hmem run size tests/tiny/y_pair_basic.json tests/tiny/y_pid_nul.json --perfetto - | lua5.4 -e 'local d = require("cjson").decode(io.read("a")); for _, e in ipairs(d.traceEvents) do if e.ph == "M" then print(type(e.pid) == "string" and ("%q"):format(e.pid) or math.tointeger(e.pid)) end end'
10
"a\0b"
? 0
