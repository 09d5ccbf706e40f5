# row.op and row.ops (issue 2, "The row"): the innermost cpu_op (ph X) on the same pid and tid
# whose closed interval [ts, ts+dur] contains the event; innermost = latest start, then shorter,
# then later in the file; ops = all enclosing ops, outermost first.
# tests/tiny/y_ops.json, thread pid 1 tid 1 unless noted (bytes = which memory event):
#   outer [0,100] > inner [10,20]; same_start_long [30,50] > same_start_short [30,40];
#   twin_first, twin_second both [60,65]; overlap_early [70,85], overlap_late [75,105];
#   zero_dur [120,120]; no_dur at 140 without "dur"; other_tid (tid 2) and other_pid (pid 2)
#   [0,200]; a python_function [0,300], a user_annotation [110,130] and a ph "i" cpu_op at 130
#   are not ops. Event 16 has pid "1" and tid "1" as strings.
$ SHOW="ts bytes pid tid op ops" hmem run --allow-io tests/tiny/rules/show.lua tests/tiny/y_ops.json --json - >/dev/null
ts=0.0 bytes=1 pid=1 tid=1 op=outer ops={outer}
ts=10.0 bytes=2 pid=1 tid=1 op=inner ops={outer>inner}
ts=15.0 bytes=16 pid=1 tid=1 op=inner ops={outer>inner}
ts=20.0 bytes=3 pid=1 tid=1 op=inner ops={outer>inner}
ts=21.0 bytes=4 pid=1 tid=1 op=outer ops={outer}
ts=35.0 bytes=5 pid=1 tid=1 op=same_start_short ops={outer>same_start_long>same_start_short}
ts=45.0 bytes=6 pid=1 tid=1 op=same_start_long ops={outer>same_start_long}
ts=50.0 bytes=15 pid=1 tid=2 op=other_tid ops={other_tid}
ts=62.0 bytes=7 pid=1 tid=1 op=twin_second ops={outer>twin_first>twin_second}
ts=80.0 bytes=8 pid=1 tid=1 op=overlap_late ops={outer>overlap_early>overlap_late}
ts=100.0 bytes=9 pid=1 tid=1 op=overlap_late ops={outer>overlap_late}
ts=103.0 bytes=10 pid=1 tid=1 op=overlap_late ops={overlap_late}
ts=115.0 bytes=11 pid=1 tid=1 op=nil ops={}
ts=120.0 bytes=12 pid=1 tid=1 op=zero_dur ops={zero_dur}
ts=130.0 bytes=13 pid=1 tid=1 op=nil ops={}
ts=140.0 bytes=14 pid=1 tid=1 op=no_dur ops={no_dur}
? 0

# The events CSV gives the same innermost op.
$ hmem events tests/tiny/y_ops.json | cut -d, -f4,6,11-13
ts,bytes,pid,tid,op
0.0,1,1,1,outer
10.0,2,1,1,inner
15.0,16,1,1,inner
20.0,3,1,1,inner
21.0,4,1,1,outer
35.0,5,1,1,same_start_short
45.0,6,1,1,same_start_long
50.0,15,1,2,other_tid
62.0,7,1,1,twin_second
80.0,8,1,1,overlap_late
100.0,9,1,1,overlap_late
103.0,10,1,1,overlap_late
115.0,11,1,1,
120.0,12,1,1,zero_dur
130.0,13,1,1,
140.0,14,1,1,no_dur
? 0

# Only cpu_op slices count: 12 ops (ph X, cat cpu_op), not the python_function, user_annotation,
# the instant, or the memory events.
$ hmem run tests/tiny/rules/by_op.lua tests/tiny/y_ops.json --json - | lua5.4 tests/jget.lua inputs.1.events inputs.1.ops inputs.1.memory_events
31
12
16
? 0

# 2021 traces: ops are cat "Operator" and carry tid "25738" (a string) while memory events
# carry tid 25738 (an integer); they are the same thread. The free at ts ...020 is in
# aten::zeros only; the "Runtime" slice cudaMalloc and the "Trace" span are not ops.
$ SHOW="device kind ts_ns tid op ops" hmem run --allow-io tests/tiny/rules/show.lua tests/tiny/y_2021.json --json - >/dev/null
device=cpu kind=alloc ts_ns=1623143089861003000 tid=25738 op=aten::empty ops={aten::zeros>aten::empty}
device=cpu kind=free ts_ns=1623143089861060000 tid=25738 op=nil ops={}
device=cuda:0 kind=alloc ts_ns=1623143089861002000 tid=25738 op=aten::empty ops={aten::zeros>aten::empty}
device=cuda:0 kind=free ts_ns=1623143089861020000 tid=25738 op=aten::zeros ops={aten::zeros}
device=cuda:0 kind=free ts_ns=1623143089861050000 tid=25738 op=nil ops={}
? 0
$ hmem events tests/tiny/y_2021.json | cut -d, -f3,5,11-13
device,kind,pid,tid,op
cpu,alloc,25738,25738,aten::empty
cpu,free,25738,25738,
cuda:0,alloc,25738,25738,aten::empty
cuda:0,free,25738,25738,aten::zeros
cuda:0,free,25738,25738,
? 0
