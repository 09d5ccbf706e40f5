# Issue 24: hmem merge loads a partial like any input it did not make itself. Every id in a
# trace's stored columns must point inside its table; one that does not makes that trace
# damaged: named on standard error, listed under "skipped", the other traces merged, exit 4.
# (Before: a read out of bounds, SIGSEGV, or heap bytes in --json with exit 0.) The damage is
# done by someone who knows the layout: tests/partial_tool.lua seals the trace again with its
# checksum, so what is met is the check of the ids, not the checksum.

# One partial of a snapshot (stacks, frames, OOMs), a trace with host slices and thread
# names, and a trace with an OOM.
$ mkdir -p $T/ids && python3 tests/snapshots/gen.py $T/ids/s >/dev/null && cp $T/ids/s/2026_p5.pickle $T/ids/snap.pickle && cp tests/tiny/y_context.json tests/tiny/i_oom.json $T/ids/ && cd $T/ids && hmem run -q size snap.pickle y_context.json i_oom.json --partial good.db && hmem merge size good.db -q --json good.json; echo "exit $?"
exit 0
? 0
# The thread of a memory event.
$ R=$PWD; cd $T/ids && cp good.db x.db && lua5.4 $R/tests/partial_tool.lua fill x.db 1 mem.thread 7f7f7f7f && hmem merge size x.db --json x.json 2>&1 | grep -v "^hmem: note"; lua5.4 $R/tests/jget.lua skipped.# skipped.1.path inputs.# < x.json
hmem: skipped x.db: the store of y_context.json is damaged: memory event 0: thread id 2139062143 of 2 threads (0 events read before the error are not used)
hmem: 1 of 3 traces skipped (see above)
1
y_context.json
2
? 0
$ R=$PWD; cd $T/ids && cp good.db x.db && lua5.4 $R/tests/partial_tool.lua fill x.db 1 mem.thread 7f7f7f7f && hmem merge size x.db -q --json x.json; echo "exit $?"
exit 4
? 0
# The category of a memory event (an id in the partial's categories).
$ R=$PWD; cd $T/ids && cp good.db x.db && lua5.4 $R/tests/partial_tool.lua fill x.db 1 mem.category 7f7f7f7f && hmem merge size x.db --json x.json 2>&1 | grep -v "^hmem: note"
hmem: skipped x.db: the store of y_context.json is damaged: memory event 0: category id 2139062143 of 5 categories (0 events read before the error are not used)
hmem: 1 of 3 traces skipped (see above)
? 0
# The name, category and thread of a host slice, and a thread's name.
$ R=$PWD; cd $T/ids && cp good.db x.db && lua5.4 $R/tests/partial_tool.lua fill x.db 1 sl.name 7f7f7f7f && hmem merge size x.db --json x.json 2>&1 | grep damaged
hmem: skipped x.db: the store of y_context.json is damaged: host slice 0: name id 2139062143, category id 3 of 15 names (0 events read before the error are not used)
? 0
$ R=$PWD; cd $T/ids && for c in sl.cat sl.thread thread_name; do cp good.db x.db && lua5.4 $R/tests/partial_tool.lua fill x.db 1 $c 7f7f7f7f && hmem merge size x.db --json x.json 2>&1 | grep damaged; done
hmem: skipped x.db: the store of y_context.json is damaged: host slice 0: name id 2, category id 2139062143 of 15 names (0 events read before the error are not used)
hmem: skipped x.db: the store of y_context.json is damaged: host slice 0: thread id 2139062143 of 2 threads (0 events read before the error are not used)
hmem: skipped x.db: the store of y_context.json is damaged: thread 0: name id 2139062143 of 15 names (0 events read before the error are not used)
? 0
# The thread of an OOM event, in a trace and in a snapshot.
$ R=$PWD; cd $T/ids && for i in 2 0; do cp good.db x.db && lua5.4 $R/tests/partial_tool.lua fill x.db $i oom.thread 7f7f7f7f && hmem merge size x.db --json x.json 2>&1 | grep damaged; done
hmem: skipped x.db: the store of i_oom.json is damaged: OOM event 0: thread id 2139062143 of 1 threads (0 events read before the error are not used)
hmem: skipped x.db: the store of snap.pickle is damaged: OOM event 0: thread id 2139062143 of 1 threads (0 events read before the error are not used)
? 0
# A snapshot entry's stack, a stack's frame, a frame's names, a stack's first user frame,
# and the stack of a snapshot's OOM.
$ R=$PWD; cd $T/ids && cp good.db x.db && lua5.4 $R/tests/partial_tool.lua fill x.db 0 snap.stack 7f7f7f7f && hmem merge size x.db --json x.json 2>&1 | grep damaged
hmem: skipped x.db: the store of snap.pickle is damaged: snapshot entry 0: stack id 2139062143 of 181 stacks (0 events read before the error are not used)
? 0
$ R=$PWD; cd $T/ids && cp good.db x.db && lua5.4 $R/tests/partial_tool.lua poke x.db 0 snap.stacks 4 7f7f7f7f && hmem merge size x.db --json x.json 2>&1 | grep damaged
hmem: skipped x.db: the store of snap.pickle is damaged: snapshot stack 0: frame id 2139062143 of 7 frames (0 events read before the error are not used)
? 0
$ R=$PWD; cd $T/ids && cp good.db x.db && lua5.4 $R/tests/partial_tool.lua poke x.db 0 snap.frames 4 7f7f7f7f && hmem merge size x.db --json x.json 2>&1 | grep damaged
hmem: skipped x.db: the store of snap.pickle is damaged: snapshot frame 0: a name id beyond its 22 names (0 events read before the error are not used)
? 0
$ R=$PWD; cd $T/ids && cp good.db x.db && lua5.4 $R/tests/partial_tool.lua fill x.db 0 snap.stack_frame 7f7f7f7f && hmem merge size x.db --json x.json 2>&1 | grep damaged
hmem: skipped x.db: the store of snap.pickle is damaged: snapshot stack 0: a name id beyond its 22 names (0 events read before the error are not used)
? 0
$ R=$PWD; cd $T/ids && cp good.db x.db && lua5.4 $R/tests/partial_tool.lua poke x.db 0 snap.ooms 28 7f7f7f7f && hmem merge size x.db --json x.json 2>&1 | grep damaged
hmem: skipped x.db: the store of snap.pickle is damaged: snapshot OOM 0: its time, stack id or event index is out of range (0 events read before the error are not used)
? 0
# The traces left whole are merged as they were: their inputs and series are those of a run
# over them alone.
$ R=$PWD; cd $T/ids && cp good.db x.db && lua5.4 $R/tests/partial_tool.lua fill x.db 0 snap.stack 7f7f7f7f && hmem merge size x.db -q --json x.json; lua5.4 $R/tests/jget.lua inputs.# inputs.1.path inputs.2.path skipped.1.path < x.json; hmem run -q size y_context.json i_oom.json --json r.json; for f in x r; do lua5.4 $R/tests/jget.lua series.# series.1.peak_bytes series.2.peak_bytes < $f.json | tr '\n' ' '; echo; done
2
y_context.json
i_oom.json
snap.pickle
2 2560 100 
2 2560 100 
? 0
