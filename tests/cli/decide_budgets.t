# Budgets (issue 15): --fail-above SIZE (each device's peak), DEVICE=SIZE (globs too) and
# CATEGORY=SIZE, and hmem.budget in a rule file. A broken budget is listed after the summary
# (series, what, actual, limit, who set it, by how much) and the run exits 6 with every output
# written. The figures come from the trace itself: tests/tiny/y_pair_basic.json allocates
# 1024 B then 512 B (Total Allocated 1536 at ts 102.5); y_per_device.json holds 100 B on cuda:0
# and frees 100 B from before the trace on cuda:1.

$ hmem run size tests/tiny/y_pair_basic.json --fail-above 1KiB --format csv
path,rank,device,peak_bytes,peak_ts,max_reserved_bytes,category,category_peak_bytes,bytes_at_peak,allocs,alloc_bytes,end_bytes,what,device_kind,series,max_bytes,min_bytes,median_bytes,mean_bytes,imbalance
tests/tiny/y_pair_basic.json,,cuda:0,1536,102.5,4194304,(before trace),0,0,0,0,0,series,,,,,,,
tests/tiny/y_pair_basic.json,,cuda:0,1536,102.5,4194304,small (< 1 MiB),1536,1536,3,1792,768,series,,,,,,,
hmem: over budget: tests/tiny/y_pair_basic.json cuda:0: peak 1.50 KiB, limit 1.00 KiB (--fail-above 1KiB), over by 512 B (+50.0%)
? 6
# A budget equal to the peak holds; SI units are powers of 1000 (1.536 kB is 1536 B).
$ hmem run size tests/tiny/y_pair_basic.json --fail-above 1536 --fail-above '1.536 kB' --json /dev/null
? 0
$ hmem run size tests/tiny/y_pair_basic.json --fail-above 1535B --json /dev/null
hmem: over budget: tests/tiny/y_pair_basic.json cuda:0: peak 1536 B, limit 1535 B (--fail-above 1535B), over by 1 B (+0.1%)
? 6

# Per device: only cuda:0 is over 99 B; a glob names every GPU.
$ hmem run size tests/tiny/y_per_device.json --fail-above cuda:0=99 --fail-above cuda:1=100 --json /dev/null
hmem: over budget: tests/tiny/y_per_device.json cuda:0: peak 100 B, limit 99 B (--fail-above cuda:0=99), over by 1 B (+1.0%)
? 6
$ hmem run size tests/tiny/y_per_device.json --fail-above 'cuda:*=99' --json /dev/null
hmem: over budget: tests/tiny/y_per_device.json cuda:0: peak 100 B, limit 99 B (--fail-above cuda:*=99), over by 1 B (+1.0%)
hmem: over budget: tests/tiny/y_per_device.json cuda:1: peak 100 B, limit 99 B (--fail-above cuda:*=99), over by 1 B (+1.0%)
? 6

# Per category: its own peak. A budget that names nothing in the run is said (a typo would
# otherwise pass every time).
$ hmem run size tests/tiny/y_pair_basic.json --fail-above 'small (< 1 MiB)=1KiB' --fail-above activation=1 --json /dev/null
hmem: over budget: tests/tiny/y_pair_basic.json cuda:0: small (< 1 MiB) peak 1.50 KiB, limit 1.00 KiB (--fail-above small (< 1 MiB)=1KiB), over by 512 B (+50.0%)
hmem: warning: the budget of --fail-above activation=1 matches no category of a series in this run
? 6

# Outputs are still written, whole.
$ hmem run size tests/tiny/y_pair_basic.json --fail-above 1KiB --json $T/o.json --timeline $T/t.csv 2>/dev/null; echo $?; lua5.4 tests/jget.lua series.1.peak_bytes < $T/o.json; wc -l < $T/t.csv
6
1536
5
? 0

# A size that is not one is a usage error, before anything is read.
$ hmem run size tests/tiny/y_pair_basic.json --fail-above 12XB
hmem: --fail-above needs SIZE, DEVICE=SIZE or CATEGORY=SIZE with a size such as 40GiB, 12GB or 1048576, not '12XB'
Try 'hmem --help'.
? 2
$ hmem run size tests/tiny/y_pair_basic.json --fail-above =1GiB
hmem: --fail-above =1GiB: the name before '=' must be a device or a category
Try 'hmem --help'.
? 2
$ hmem run size tests/tiny/y_pair_basic.json --set nokey
hmem: --set needs KEY=VALUE (read as hmem.args.KEY), not 'nokey'
Try 'hmem --help'.
? 2

# A pack carries its own limits (hmem.budget, with where it was declared), takes --set
# parameters as strings (hmem.args) and fails the run on purpose from done (hmem.fail: no
# traceback, done stops there, outputs kept, the summary first).
$ hmem run tests/tiny/rules/decide_budget_pack.lua tests/tiny/y_pair_basic.json --json /dev/null
? 0
$ hmem run tests/tiny/rules/decide_budget_pack.lua tests/tiny/y_pair_basic.json --set limit=1000 --json /dev/null
hmem: over budget: tests/tiny/y_pair_basic.json cuda:0: peak 1.50 KiB, limit 1000 B (hmem.budget at tests/tiny/rules/decide_budget_pack.lua:6), over by 536 B (+53.6%)
? 6
$ hmem run tests/tiny/rules/decide_budget_pack.lua tests/tiny/y_pair_basic.json --set fail=stop --format csv
path,rank,device,peak_bytes,peak_ts,max_reserved_bytes,category,category_peak_bytes,bytes_at_peak,allocs,alloc_bytes,end_bytes,what,device_kind,series,max_bytes,min_bytes,median_bytes,mean_bytes,imbalance
tests/tiny/y_pair_basic.json,,cuda:0,1536,102.5,4194304,(before trace),0,0,0,0,0,series,,,,,,,
tests/tiny/y_pair_basic.json,,cuda:0,1536,102.5,4194304,big,1024,1024,1,1024,0,series,,,,,,,
tests/tiny/y_pair_basic.json,,cuda:0,1536,102.5,4194304,small,768,512,2,768,768,series,,,,,,,
hmem: failed by the rule file: the rule file says no: stop
? 6

# hmem.fail belongs to done; hmem.budget checks its table whole.
$ printf 'local hmem = require "hmem"\nfunction classify(row) hmem.fail("no") end\n' > $T/f.lua; cd $T && hmem run f.lua $OLDPWD/tests/tiny/y_pair_basic.json --json /dev/null 2>&1 | head -1
hmem: f.lua:2: hmem.fail works in done(report) (classify and init cannot fail the run)
? 0
$ printf 'local hmem = require "hmem"\nhmem.budget{max = "lots"}\nfunction classify(row) return "x" end\n' > $T/b.lua; cd $T && hmem run b.lua $OLDPWD/tests/tiny/y_pair_basic.json --json /dev/null
hmem: b.lua:2: hmem.budget: max must be bytes, a number from 0 to 2^62 or a size such as "12GiB"
...
? 3
$ printf 'local hmem = require "hmem"\nhmem.budget{devise = "cuda:0", max = 1}\nfunction classify(row) return "x" end\n' > $T/c.lua; cd $T && hmem run c.lua $OLDPWD/tests/tiny/y_pair_basic.json --json /dev/null
hmem: c.lua:2: hmem.budget: unknown key 'devise' (keys: device, category, max)
...
? 3

# Exit codes: a trace skipped with --keep-going (4) wins over a broken budget (6); the
# broken budget is still listed.
$ hmem run size tests/tiny/y_pair_basic.json tests/tiny/n_bad_json.json --keep-going -q --fail-above 1KiB --json /dev/null
hmem: over budget: tests/tiny/y_pair_basic.json cuda:0: peak 1.50 KiB, limit 1.00 KiB (--fail-above 1KiB), over by 512 B (+50.0%)
? 4
