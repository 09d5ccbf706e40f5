# Issue 26, windows: rows kept from classify name the same events in done. The window is cut
# before classify, so only events inside it are classified (ten allocations of
# tests/tiny/windows26/cut_steps.json between 50 and 550 µs; the 10 KiB leaked at 20 µs is
# carried in as the start, 10240 B) and each row done reads is the event classify saw. Steps 1
# and 6 are cut by the window: partial, from/to its edges, and left out of the verdict, which
# stays growth, 10 KiB per step over the whole steps 2 to 5 (before: "none", the cut step 6
# ending below step 5). Figures by hand: each step leaks 10240 B and makes a 1 MiB activation
# that the next step frees.
$ hmem run tests/tiny/windows26/keep_rows.lua tests/tiny/windows26/cut_steps.json --from 0.05 --to 0.55 -q --json /dev/null
rows kept 10, reading the same event in done 10
 row	80.0	alloc	1048576	activation
 row	120.0	alloc	10240	small
 row	180.0	alloc	1048576	activation
 row	220.0	alloc	10240	small
 row	280.0	alloc	1048576	activation
 row	320.0	alloc	10240	small
 row	380.0	alloc	1048576	activation
 row	420.0	alloc	10240	small
 row	480.0	alloc	1048576	activation
 row	520.0	alloc	10240	small
cuda:0	start	10240	end	61440	peak	1099776	480.0
 step	1	50.0	100.0	10240	1058816	1048576	partial
 step	2	100.0	200.0	1058816	1069056	10240	whole
 step	3	200.0	300.0	1069056	1079296	10240	whole
 step	4	300.0	400.0	1079296	1089536	10240	whole
 step	5	400.0	500.0	1089536	1099776	10240	whole
 step	6	500.0	550.0	1099776	61440	-1038336	partial
 leak	growth	4	10240
? 0
# --steps 2-4: from the start of ProfilerStep#2 (100 µs) to the end of #4 (400 µs); steps 1 and
# 5 only touch the window at its edges and are not in it.
$ hmem run tests/tiny/windows26/keep_rows.lua tests/tiny/windows26/cut_steps.json --steps 2-4 -q --json /dev/null | grep -v '^ row'
rows kept 6, reading the same event in done 6
cuda:0	start	1058816	end	1089536	peak	1089536	380.0
 step	2	100.0	200.0	1058816	1069056	10240	whole
 step	3	200.0	300.0	1069056	1079296	10240	whole
 step	4	300.0	400.0	1079296	1089536	10240	whole
 leak	growth	3	10240
? 0
# On the HTA trace, --from 60 --to 1000 ms: every row kept reads its own event in done (before:
# 14005 rows classified over the whole trace, 8132 of them reading another event).
$ hmem run tests/tiny/windows26/keep_rows.lua tests/data/hta/df_index_resolver_rank1_v100.json.gz --from 60 --to 1000 -q --json /dev/null | head -1
rows kept 8110, reading the same event in done 8110
? 0
# An allocation live past the window's end is "freed after the window" (step 5's activation,
# freed at 510 µs), never "never freed" (the leaks are); the step the window cuts is marked.
$ hmem run size tests/tiny/windows26/cut_steps.json --from 0.3 --to 0.49 --top 3 | sed -n '/largest/,/leak/p'
    largest allocations live at the peak (3 of 3):
           bytes  category             step  lifetime                who
        1.00 MiB  normal                  5  freed after the window  aten::linear
       10.00 KiB  small (< 1 MiB)         4  never freed             aten::cat
       10.00 KiB  small (< 1 MiB)         5  never freed             aten::cat
    reserved but unallocated (cached by the allocator): 974.00 KiB at the peak, at most 1.97 MiB (+0.310 ms)
    steps (2):
      step     start ms        start         peak          end       growth    survivors
         4        0.300     1.03 MiB     1.04 MiB     1.04 MiB    10.00 KiB    10.00 KiB
         5        0.400     1.04 MiB     1.05 MiB     1.05 MiB    10.00 KiB     1.01 MiB  partial (cut by the window)
    leak: no verdict on fewer than 3 whole steps (1 here; 1 cut by the window left out)
? 0
# Rows still tell when they are freed: live_at_peak's lifetime is 30 µs (freed at 510), and the
# lifetime pack calls that activation "outlives the step" as a run over the whole trace does,
# never "never freed".
$ hmem run size tests/tiny/windows26/cut_steps.json --from 0.3 --to 0.49 --json - | lua5.4 tests/jget.lua series.1.steps.2.partial series.1.steps.2.start_ts series.1.steps.2.end_ts series.1.live_at_peak.1.lifetime series.1.leak.steps
true
400
490
30
1
? 0
$ hmem run lifetime tests/tiny/windows26/cut_steps.json --from 0.3 --to 0.49 --top 1 | sed -n '/largest/,/aten/p'
    largest allocations live at the peak (1 of 3):
           bytes  category                 step  lifetime                who
        1.00 MiB  outlives the step           5  freed after the window  aten::linear
? 0
