# A trace without Addr (2021) pairs no allocation with its free, so nothing can be said to
# survive a step: survivors_bytes is null and the leak verdict rests on end_bytes alone. This
# resnet50 trace frees everything it allocates each step (its Total Allocated is back at the
# same value at every step's end), so it must not be called a leak (it was: 9.89 GiB "per step").
$ hmem run size tests/data/kineto_tb_plugin/resnet50_num_workers_0_worker0.1623143089861.pt.trace.json.gz --json - | lua5.4 tests/jget.lua series.2.device series.2.steps.1.survivors_bytes series.2.leak.verdict
cuda:0
null
none
? 0
