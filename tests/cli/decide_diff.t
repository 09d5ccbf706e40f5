# hmem diff (issue 15). tests/tiny/diff/ holds two runs of one hand-made model, rank 0:
#   before.json, cuda:0: +1000 B (aten::linear, in nn.Module Linear_0) at 10, +3000 B
#     (aten::mm, Linear_0) at 20, both freed by 35, then +500 B (aten::add) at 40, never
#     freed: peak 4000 B at 20, end 500 B.
#   after.json, cuda:0: the same with aten::mm 4000 B, and +200 B (aten::add, no module) at
#     125 while both are live: peak 5200 B at 125, end 700 B; and cuda:1, 64 B (no partner).
# By hand, with examples/by_op.lua (category = op): peak +1200 (+30.0%), end +200 (+40.0%);
# peak of aten::mm 3000 -> 4000 (+33.3%), of aten::add 500 -> 700 (+40.0%), aten::linear 0;
# at the peak aten::add 0 -> 200 (new); live at the peak by module Linear_0 4000 -> 5000
# (+25.0%), (no module) 0 -> 200.

$ hmem diff examples/by_op.lua tests/tiny/diff/before.json tests/tiny/diff/after.json --format csv
before_path,before_rank,after_path,after_rank,device,what,name,before,after,change,change_pct
tests/tiny/diff/before.json,0,tests/tiny/diff/after.json,0,cuda:0,peak,,4000,5200,1200,30.0
tests/tiny/diff/before.json,0,tests/tiny/diff/after.json,0,cuda:0,end_bytes,,500,700,200,40.0
tests/tiny/diff/before.json,0,tests/tiny/diff/after.json,0,cuda:0,category_peak,aten::mm,3000,4000,1000,33.3
tests/tiny/diff/before.json,0,tests/tiny/diff/after.json,0,cuda:0,category_peak,aten::add,500,700,200,40.0
tests/tiny/diff/before.json,0,tests/tiny/diff/after.json,0,cuda:0,category_peak,(before trace),0,0,0,
tests/tiny/diff/before.json,0,tests/tiny/diff/after.json,0,cuda:0,category_peak,aten::linear,1000,1000,0,0.0
tests/tiny/diff/before.json,0,tests/tiny/diff/after.json,0,cuda:0,category_at_peak,aten::mm,3000,4000,1000,33.3
tests/tiny/diff/before.json,0,tests/tiny/diff/after.json,0,cuda:0,category_at_peak,aten::add,0,200,200,
tests/tiny/diff/before.json,0,tests/tiny/diff/after.json,0,cuda:0,category_at_peak,(before trace),0,0,0,
tests/tiny/diff/before.json,0,tests/tiny/diff/after.json,0,cuda:0,category_at_peak,aten::linear,1000,1000,0,0.0
tests/tiny/diff/before.json,0,tests/tiny/diff/after.json,0,cuda:0,op_at_peak,aten::mm,3000,4000,1000,33.3
tests/tiny/diff/before.json,0,tests/tiny/diff/after.json,0,cuda:0,op_at_peak,aten::add,0,200,200,
tests/tiny/diff/before.json,0,tests/tiny/diff/after.json,0,cuda:0,op_at_peak,aten::linear,1000,1000,0,0.0
tests/tiny/diff/before.json,0,tests/tiny/diff/after.json,0,cuda:0,module_at_peak,Linear_0,4000,5000,1000,25.0
tests/tiny/diff/before.json,0,tests/tiny/diff/after.json,0,cuda:0,module_at_peak,(no module),0,200,200,
? 0

# The text: side by side, largest change first, and the series with no partner.
$ hmem diff examples/by_op.lua tests/tiny/diff/before.json tests/tiny/diff/after.json --top 1
before: tests/tiny/diff/before.json (traces, rules examples/by_op.lua)
after:  tests/tiny/diff/after.json (traces, rules examples/by_op.lua)

peak of each pair, by rank (details below, largest change first):
  rank  device       before        after        change
     0  cuda:0     3.91 KiB     5.08 KiB     +1.17 KiB   +30.0%  before.json -> after.json

tests/tiny/diff/before.json rank 0 cuda:0  ->  tests/tiny/diff/after.json rank 0 cuda:0
                                                 before        after        change
  peak                                         3.91 KiB     5.08 KiB     +1.17 KiB   +30.0%
  end                                             500 B        700 B        +200 B   +40.0%
  peak of aten::mm                             2.93 KiB     3.91 KiB       +1000 B   +33.3%
  peak of aten::add                               500 B        700 B        +200 B   +40.0%
  peak of (before trace)                            0 B          0 B           0 B     0.0%
  peak of aten::linear                           1000 B       1000 B           0 B     0.0%
  at the peak: aten::mm                        2.93 KiB     3.91 KiB       +1000 B   +33.3%
  at the peak: aten::add                            0 B        200 B        +200 B      new
  at the peak: (before trace)                       0 B          0 B           0 B     0.0%
  at the peak: aten::linear                      1000 B       1000 B           0 B     0.0%
  live at the peak, op aten::mm                2.93 KiB     3.91 KiB       +1000 B   +33.3%
  live at the peak, module Linear_0            3.91 KiB     4.88 KiB       +1000 B   +25.0%

series without a partner (matched by rank and device, then by rank and device index):
  after  tests/tiny/diff/after.json rank 0 cuda:1  peak 64 B
? 0

# A run against itself: every change is 0, no series without a partner (23 rows: on cuda:0
# peak, end, 4 categories x 2, 3 ops, 2 modules; on cuda:1 peak, end, 2 x 2, 1 op, 1 module).
$ hmem diff examples/by_op.lua tests/tiny/diff/after.json tests/tiny/diff/after.json --json - | lua5.4 -e 'local d = require("cjson").decode(io.read("a")) local n, bad = 0, 0 for _, p in ipairs(d.pairs) do for _, r in ipairs(p.rows) do n = n + 1 if r.change ~= 0 then bad = bad + 1 end end end print(#d.pairs, n, bad, #d.unmatched)'
2	23	0	0
? 0

# One side a --json report of an earlier run (found by its first bytes): the same figures
# (its live_at_peak lists every allocation here; modules need traces on both sides).
$ hmem run examples/by_op.lua tests/tiny/diff/before.json --json $T/before.json && hmem diff examples/by_op.lua $T/before.json tests/tiny/diff/after.json --format csv | cut -d, -f5- | head -6
device,what,name,before,after,change,change_pct
cuda:0,peak,,4000,5200,1200,30.0
cuda:0,end_bytes,,500,700,200,40.0
cuda:0,category_peak,aten::mm,3000,4000,1000,33.3
cuda:0,category_peak,aten::add,500,700,200,40.0
cuda:0,category_peak,(before trace),0,0,0,
? 0
$ hmem run examples/by_op.lua tests/tiny/diff/after.json --json $T/after.json && hmem diff $T/before.json $T/after.json --json - | lua5.4 tests/jget.lua pairs.# pairs.1.rows.1.change unmatched.1.device unmatched.1.side before.kind
1
1200
cuda:1
after
report
? 0

# Traces need rules; a file that is neither fails with where.
$ hmem diff tests/tiny/diff/before.json tests/tiny/diff/after.json
hmem: tests/tiny/diff/before.json is traces, not an hmem --json report: give the rules first, hmem diff RULES BEFORE AFTER
Try 'hmem --help'.
? 2

# --fail-above-delta: the peak grew by 1200 B (30.0%); a limit is exceeded only when the
# growth is more than it. Every output is written first.
$ hmem diff examples/by_op.lua tests/tiny/diff/before.json tests/tiny/diff/after.json --fail-above-delta 1200 --fail-above-delta 30% --json /dev/null
? 0
$ hmem diff examples/by_op.lua tests/tiny/diff/before.json tests/tiny/diff/after.json --fail-above-delta 1199 --fail-above-delta 'aten::add=39.9%' --fail-above-delta 'aten::mm=1000' --json $T/d.json; echo $?; lua5.4 tests/jget.lua breaks.# < $T/d.json
hmem: grew too much: tests/tiny/diff/before.json rank 0 cuda:0 -> tests/tiny/diff/after.json rank 0 cuda:0: peak 3.91 KiB -> 5.08 KiB, +1.17 KiB (+30.0%), limit +1.17 KiB (--fail-above-delta 1199)
hmem: grew too much: tests/tiny/diff/before.json rank 0 cuda:0 -> tests/tiny/diff/after.json rank 0 cuda:0: peak of aten::add 500 B -> 700 B, +200 B (+40.0%), limit +39.9% (--fail-above-delta aten::add=39.9%)
6
2
? 0
$ hmem diff examples/by_op.lua tests/tiny/diff/before.json tests/tiny/diff/after.json --fail-above-delta 'cuda:*=5%' --fail-above-delta activation=1 --json /dev/null
hmem: warning: --fail-above-delta activation=1 matches no series found on both sides
hmem: grew too much: tests/tiny/diff/before.json rank 0 cuda:0 -> tests/tiny/diff/after.json rank 0 cuda:0: peak 3.91 KiB -> 5.08 KiB, +1.17 KiB (+30.0%), limit +5% (--fail-above-delta cuda:*=5%)
? 6
$ hmem diff examples/by_op.lua tests/tiny/diff/before.json tests/tiny/diff/after.json --fail-above-delta 5percent
hmem: --fail-above-delta needs SIZE or PCT% (10MiB, 5%), optionally after DEVICE= or CATEGORY=, not '5percent'
Try 'hmem --help'.
? 2

# --html: one page, both timelines (4 categories each, stacked) and the change per
# category, nothing fetched (its only links go to its own pairs: href="#p1").
$ hmem diff examples/by_op.lua tests/tiny/diff/before.json tests/tiny/diff/after.json --html $T/d.html && grep -o '<polygon' $T/d.html | wc -l && grep -c 'src=\|href="[^#]' $T/d.html
8
0
? 1

# An output never replaces a side; a side that begins like a report but is not one is a bad
# input (exit 4).
$ hmem run examples/by_op.lua tests/tiny/diff/before.json --json $T/b.json && cd $T && hmem diff b.json b.json --json b.json
hmem: b.json would replace a side being compared: write elsewhere
Try 'hmem --help'.
? 2
$ printf '{"version": 3' > $T/bad.json; cd $T && hmem diff bad.json bad.json
hmem: bad.json: not an hmem --json report (Expected comma or object end but found T_END at character 14)
? 4
