# Issue 24: the counts of a trace's row in the partial's files table (memory events, host
# slices, OOM events, events) say how long its columns are; NULL, negative, or not what the
# column holds is damage, found before anything is allocated from it (before: SIGSEGV, an
# allocation of 2^64 bytes, or a report with exit 0 that read past the columns). So is a name
# stored twice (ids after it would shift). Each damaged trace is named and listed under
# "skipped", the others merged, exit 4. tests/partial_tool.lua seals each again, so the
# checksum does not stand in front of these checks.

$ mkdir -p $T/counts && cp tests/tiny/y_context.json tests/tiny/i_oom.json $T/counts/ && cd $T/counts && hmem run -q size y_context.json i_oom.json --partial good.db; echo "exit $?"
exit 0
? 0
# NULL counts.
$ R=$PWD; cd $T/counts && for c in memory_events host_slices oom_events events; do cp good.db x.db && lua5.4 $R/tests/partial_tool.lua sql x.db 0 "UPDATE files SET $c = NULL WHERE idx = 0" && timeout 60 hmem merge size x.db -q --json x.json; echo "exit $?"; lua5.4 $R/tests/jget.lua skipped.1.error < x.json; done
exit 4
x.db: the store of y_context.json is damaged: its row in files has memory_events NULL
exit 4
x.db: the store of y_context.json is damaged: its row in files has host_slices NULL
exit 4
x.db: the store of y_context.json is damaged: its row in files has oom_events NULL
exit 4
x.db: the store of y_context.json is damaged: its row in files has events NULL
? 0
# A NULL path (before: SIGSEGV).
$ R=$PWD; cd $T/counts && cp good.db x.db && lua5.4 $R/tests/partial_tool.lua sql x.db 0 "UPDATE files SET path = NULL WHERE idx = 0" && timeout 60 hmem merge size x.db --json x.json; echo "exit $?"
hmem: skipped x.db: the store of trace 0 is damaged: its row in files has path NULL (0 events read before the error are not used)
hmem: 1 of 2 traces skipped (see above)
exit 4
? 0
# Negative counts (before: an allocation from (size_t)-5, or columns read as empty).
$ R=$PWD; cd $T/counts && for c in memory_events host_slices oom_events; do cp good.db x.db && lua5.4 $R/tests/partial_tool.lua sql x.db 1 "UPDATE files SET $c = -5 WHERE idx = 1" && timeout 60 hmem merge size x.db -q --json x.json; echo "exit $?"; lua5.4 $R/tests/jget.lua skipped.1.error < x.json; done
exit 4
x.db: the store of i_oom.json is damaged: its row in files has memory_events negative
exit 4
x.db: the store of i_oom.json is damaged: its row in files has host_slices negative
exit 4
x.db: the store of i_oom.json is damaged: its row in files has oom_events negative
? 0
# Counts that are not what the columns hold.
$ R=$PWD; cd $T/counts && for c in memory_events host_slices oom_events events; do cp good.db x.db && lua5.4 $R/tests/partial_tool.lua sql x.db 1 "UPDATE files SET $c = $c + 1 WHERE idx = 1" && timeout 60 hmem merge size x.db -q --json x.json; echo "exit $?"; lua5.4 $R/tests/jget.lua skipped.1.error < x.json; done
exit 4
x.db: the store of i_oom.json is damaged: the column mem.ts does not hold the memory events its trace's row says
exit 4
x.db: the store of i_oom.json is damaged: the column sl.ts does not hold the host slices its trace's row says
exit 4
x.db: the store of i_oom.json is damaged: the column oom.ts does not hold the OOM events its trace's row says
exit 4
x.db: the store of i_oom.json is damaged: its event counts do not add up to its 3 events
? 0
# A column cut short, one stored twice under another name, and one hmem does not write.
$ R=$PWD; cd $T/counts && cp good.db x.db && lua5.4 $R/tests/partial_tool.lua sql x.db 1 "UPDATE store SET data = substr(data, 1, 3) WHERE idx = 1 AND name = 'mem.bytes'" && timeout 60 hmem merge size x.db -q --json x.json; echo "exit $?"; lua5.4 $R/tests/jget.lua skipped.1.error < x.json
exit 4
x.db: the store of i_oom.json is damaged: the column mem.bytes does not hold the memory events its trace's row says
? 0
$ R=$PWD; cd $T/counts && cp good.db x.db && lua5.4 $R/tests/partial_tool.lua sql x.db 1 "INSERT INTO store SELECT idx, 'extra', data FROM store WHERE idx = 1 AND name = 'mem.ts'" && timeout 60 hmem merge size x.db -q --json x.json; echo "exit $?"; lua5.4 $R/tests/jget.lua skipped.1.error < x.json
exit 4
x.db: the store of i_oom.json is damaged: a column extra that hmem does not write
? 0
# A thread key stored twice in a trace's table of threads (ids after it would shift).
$ R=$PWD; cd $T/counts && cp good.db x.db && lua5.4 $R/tests/partial_tool.lua sql x.db 1 "UPDATE store SET data = CAST(data || data AS BLOB) WHERE idx = 1 AND name = 'threads'" && timeout 60 hmem merge size x.db -q --json x.json; echo "exit $?"; lua5.4 $R/tests/jget.lua skipped.1.error < x.json
exit 4
x.db: the store of i_oom.json is damaged: a column is cut short, or a table of names has a name twice
? 0
# A category stored twice in the partial's categories: every trace of the partial points
# into that table, so every one is damaged (before: category ids past the table, exit 0).
$ R=$PWD; cd $T/counts && cp good.db x.db && sqlite3 x.db "UPDATE categories SET name = 'normal' WHERE id = 2" && timeout 60 hmem merge size x.db --json x.json; echo "exit $?"; lua5.4 $R/tests/jget.lua skipped.# inputs.# < x.json
hmem: skipped x.db: the store of trace 0 is damaged: the category normal is stored twice (0 events read before the error are not used)
hmem: skipped x.db: the store of trace 1 is damaged: the category normal is stored twice (0 events read before the error are not used)
hmem: 2 of 2 traces skipped (see above)
exit 4
2
0
? 0
