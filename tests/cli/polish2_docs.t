# What the README says of frames and of freed_after, held to hmem (issue 28).
# hmem allocations fills the frame column wherever a user Python frame encloses the
# allocation: every row of the example trace (recorded with_stack) has one.
$ hmem allocations size examples/traces/bert-small_h100.json.gz | awk -F, 'NR > 1 { n++; if ($11 != "") f++ } END { print f " of " n " rows have a frame" }'
118 of 118 rows have a frame
? 0
# A trace's frame line is where the function was entered: different statements of one
# forward (projections, attention buffers) share its line.
$ hmem allocations size examples/traces/bert-small_h100.json.gz | awk -F, '$11 ~ /bert.py.364/ { print $9 }' | sort -u
aten::addmm
aten::empty
aten::empty_strided
? 0
# freed_after counts every free after the OOM to the end of the trace or window, not only
# the unwinding: the OOM of step 3 unwinds 4000 B; step 4 allocates and frees 2000 B.
$ hmem run size tests/tiny/explain/y_oom_then_step.json --json - | lua5.4 tests/jget.lua series.1.ooms.1.freed_after
6000
? 0
$ hmem run size tests/tiny/explain/y_oom_then_step.json --steps 3-3 -q --json - | lua5.4 tests/jget.lua series.1.ooms.1.freed_after
4000
? 0
$ hmem run size tests/tiny/explain/y_oom_then_step.json | grep 'freed after'
      allocated 4.88 KiB, reserved 5.86 KiB (1000 B reserved but unallocated: cached by the allocator, which it could not release), capacity 8.00 GiB; 5.86 KiB freed after it
? 0
