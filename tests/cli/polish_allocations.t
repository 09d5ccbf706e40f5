# hmem allocations RULES PATH... (issue 17): one CSV row per allocation, classified; to
# standard output by default, or --csv FILE. tests/allocations.py reads it with Python's csv.
$ hmem allocations size tests/tiny/y_pair_basic.json
path,rank,device,alloc_ts,free_ts,lifetime,bytes,category,op,module,frame,step,context
tests/tiny/y_pair_basic.json,,cuda:0,101.25,110.0,8.75,1024,small (< 1 MiB),aten::empty,,,,aten::empty
tests/tiny/y_pair_basic.json,,cuda:0,102.5,,,512,small (< 1 MiB),aten::empty,,,,aten::empty
tests/tiny/y_pair_basic.json,,cuda:0,112.0,,,256,small (< 1 MiB),aten::add,,,,aten::add
? 0
$ hmem allocations op tests/tiny/y_pair_basic.json --csv $T/a.csv && wc -l < $T/a.csv
4
? 0
# The rank of a distributed trace, and a trace without addresses: every free is a row of
# its own (alloc_ts empty), as hmem classifies it.
$ hmem allocations size tests/tiny/y_rank-3.json tests/tiny/y_2021.json | cut -d, -f1-7
path,rank,device,alloc_ts,free_ts,lifetime,bytes
tests/tiny/y_rank-3.json,3,cuda:0,1.0,,,64
...
tests/tiny/y_2021.json,,cpu,1623143089861003.0,,,16
tests/tiny/y_2021.json,,cpu,,1623143089861060.0,,16
...
? 0
# Its options: those of run about the rule file, not --top nor run's outputs.
$ hmem allocations tests/tiny/y_pair_basic.json
hmem: allocations: no trace file or directory given
Try 'hmem --help'.
? 2
$ hmem allocations size tests/tiny/y_pair_basic.json --top 3
hmem: --top belongs to 'hmem run'
Try 'hmem --help'.
? 2
$ hmem allocations size tests/tiny/y_pair_basic.json --json -
hmem: --json belongs to 'hmem run'
Try 'hmem --help'.
? 2
$ hmem allocations tests/tiny/rules/polish_empty.lua tests/tiny/y_pair_basic.json --timeout 5 -I tests/tiny
...
? 3
# --csv still belongs to events and allocations, not run.
$ hmem run size tests/tiny/y_pair_basic.json --csv -
hmem: --csv belongs to 'hmem events'; 'hmem run' writes --json and --timeline
Try 'hmem --help'.
? 2
