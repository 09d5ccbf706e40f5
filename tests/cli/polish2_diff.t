# Issue 28: hmem diff as a new user meets it.
#
# An H100 run and an MI300 run of the same three models (tests/data/tracelens: one trace per
# model, rank 0, cuda:0 on one side, hip:0 on the other). The old code paired only the cpu
# series and listed the GPUs as six series without a partner. Now they pair by rank and
# device index across device kinds, and the text says so.
$ hmem diff pytorch tests/data/tracelens/h100 tests/data/tracelens/mi300 --json - 2>/dev/null | lua5.4 -e 'local d = require("cjson").decode(io.read("a")) local n = 0 for _, p in ipairs(d.pairs) do if p.across_kinds then n = n + 1 assert(p.before.device == "cuda:0" and p.after.device == "hip:0" and p.before.path:match("[^/]*$") == p.after.path:match("[^/]*$")) end end print(#d.pairs, n, #d.unmatched)'
6	3	0
? 0
$ hmem diff pytorch tests/data/tracelens/h100 tests/data/tracelens/mi300 2>/dev/null | sed -n 3,11p
paired across device kinds, by rank and device index (no series of the same kind for them): cuda:0 with hip:0 (3 pairs)

peak of each pair, by rank (details below, largest change first):
  rank  device                before        after        change
     -  cuda:0 -> hip:0     1.95 GiB     2.07 GiB   +124.49 MiB    +6.3%  Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz
     -  cuda:0 -> hip:0    96.61 MiB   139.61 MiB    +43.00 MiB   +44.5%  gaunernst_bert-small-uncased__1016001.json.gz
     -  cuda:0 -> hip:0     2.52 GiB     2.62 GiB    +96.00 MiB    +3.7%  google_owlv2-large-patch14-ensemble__1016001.json.gz
     -  cpu                     16 B          8 B          -8 B   -50.0%  Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz
     -  cpu                     16 B          8 B          -8 B   -50.0%  gaunernst_bert-small-uncased__1016001.json.gz
? 0

# 8 ranks (the Qwen trace of each vendor as ranks 0-7): 140 lines with the old code, the 8
# GPU series unpaired. Now 69: one line per pair first, then the rows of the GPU pairs and of
# the cpu pairs each once, since the 8 ranks' rows are the same to the byte.
$ for v in h100 mi300; do mkdir -p $T/p2_$v; for r in 0 1 2 3 4 5 6 7; do gzip -dc tests/data/tracelens/$v/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz | sed "1s/^{/{\"distributedInfo\": {\"rank\": $r, \"world_size\": 8},/" | gzip -1 > $T/p2_$v/rank$r.json.gz; done; done; hmem diff pytorch $T/p2_h100 $T/p2_mi300 2>/dev/null > $T/d.txt; wc -l < $T/d.txt; grep -c '^ *[0-7]  cuda:0 -> hip:0 ' $T/d.txt; grep 'more pairs' $T/d.txt
69
8
  and 7 more pairs with these rows to the byte: rank 1, rank 2, rank 3, rank 4, rank 5, rank 6, rank 7
  and 7 more pairs with these rows to the byte: rank 1, rank 2, rank 3, rank 4, rank 5, rank 6, rank 7
? 0

# --changed-only: the 8 ranks against themselves were 338 lines; now 65, and 4 with it.
$ cd $T && hmem diff pytorch p2_h100 p2_h100 2>/dev/null | wc -l; hmem diff pytorch p2_h100 p2_h100 --changed-only 2>/dev/null
65
before: p2_h100 (traces, rules pytorch)
after:  p2_h100 (traces, rules pytorch)

16 pairs of series with no change left out (--changed-only)
? 0

# The text prints names from traces and reports as the rest of hmem's text does: control
# characters (ESC, a line break, C1 controls) as \xNN, never as bytes a terminal obeys (the
# old code wrote them raw: a category named "act\x1b[2J\nx" cleared the screen).
$ printf '{"version": 1, "series": [{"path": "a\\u001b]0;T\\u0007.json", "rank": 0, "device": "cuda:0", "peak_bytes": 10, "categories": [{"name": "act\\u001b[2J\\nx", "peak_bytes": 10}], "live_at_peak": [{"op": "aten::\\u009bmm", "bytes": 10}]}]}\n' > $T/e1.json; sed 's/"peak_bytes": 10/"peak_bytes": 20/g' $T/e1.json > $T/e2.json; cd $T && hmem diff e1.json e2.json | grep -c "$(printf '\033')"; hmem diff e1.json e2.json | sed -n '6p;8p;12p;15p'
0
     0  cuda:0         10 B         20 B         +10 B  +100.0%  a\x1b]0;T\x07.json
a\x1b]0;T\x07.json rank 0 cuda:0  ->  a\x1b]0;T\x07.json rank 0 cuda:0
  peak of act\x1b[2J\x0ax                          10 B         20 B         +10 B  +100.0%
  live at the peak, op aten::\xc2\x9bmm            10 B         10 B           0 B     0.0%
? 0

# --changed-only in --json and --format csv: the 3 rows that changed (peak, the category's
# peak, the op group), the unchanged counted.
$ cd $T && hmem diff e1.json e2.json --changed-only --json - | lua5.4 $OLDPWD/tests/jget.lua pairs.1.rows.# changed_only unchanged_left_out; hmem diff e1.json e2.json --changed-only --format csv | grep -c ',cuda:0,'
3
true
0
3
? 0
