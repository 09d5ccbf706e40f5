# Issue 29: the timeline's first pass over a trace's series (the one that needs no category)
# runs on a helper thread while the trace is classified (src/run.c, stage_classify).
# HMEM_TEST_SCHEDULE=helper-first and helper-last force it wholly before and wholly after
# classification (helper.h; the analysis's parts too), even on a small trace; each report and
# standard error equal those of a one-thread run (-j 1: no helper thread), with windows, OOMs,
# steps and a snapshot.
$ d=$(mktemp -d); for a in "tests/tiny/explain/y_oom.json" "tests/tiny/explain/y_leak.json --steps 2-3" "examples/traces/bert-small_h100.json.gz" "examples/traces/normalization_mi300.json.gz --from 1 --to 30" "tests/data/snapshots/docubox_dump_snapshot.pickle"; do hmem run pytorch $a -j 1 --json $d/ref.json 2>$d/ref.err; for s in helper-first helper-last; do HMEM_TEST_SCHEDULE=$s hmem run pytorch $a -j 2 --json $d/$s.json 2>$d/$s.err; cmp -s $d/ref.json $d/$s.json && cmp -s $d/ref.err $d/$s.err && echo "$s $a: same" || echo "$s $a: differs"; done; done; rm -rf $d
helper-first tests/tiny/explain/y_oom.json: same
helper-last tests/tiny/explain/y_oom.json: same
helper-first tests/tiny/explain/y_leak.json --steps 2-3: same
helper-last tests/tiny/explain/y_leak.json --steps 2-3: same
helper-first examples/traces/bert-small_h100.json.gz: same
helper-last examples/traces/bert-small_h100.json.gz: same
helper-first examples/traces/normalization_mi300.json.gz --from 1 --to 30: same
helper-last examples/traces/normalization_mi300.json.gz --from 1 --to 30: same
helper-first tests/data/snapshots/docubox_dump_snapshot.pickle: same
helper-last tests/data/snapshots/docubox_dump_snapshot.pickle: same
? 0
