# Issue 24: --partial writes a checksum of each trace (a store row named "checksum": a 64-bit
# hash of its row in files, the categories it introduced, the partial's categories and every
# column of its store), and the merge computes it again: a byte changed since it was written
# is named, not merged (before: merged, exit 0, a report that no run would give).

$ mkdir -p $T/sum && cp tests/tiny/y_context.json tests/tiny/i_oom.json $T/sum/ && cd $T/sum && hmem run -q size y_context.json i_oom.json --partial good.db && hmem merge size good.db -q --json good.json; echo "exit $?"; sqlite3 good.db "SELECT idx, length(data) FROM store WHERE name = 'checksum'"
exit 0
0|8
1|8
? 0
# One byte of a column (an allocation's size, a time, a thread id).
$ R=$PWD; cd $T/sum && for c in "mem.bytes 0 01" "mem.ts 3 80" "sl.thread 0 01"; do cp good.db x.db && lua5.4 $R/tests/partial_tool.lua poke x.db 0 $c unsealed && timeout 60 hmem merge size x.db --json x.json; echo "exit $?"; done
hmem: skipped x.db: the store of y_context.json is damaged: the checksum does not match: a byte of it changed since it was written (0 events read before the error are not used)
hmem: 1 of 2 traces skipped (see above)
exit 4
hmem: skipped x.db: the store of y_context.json is damaged: the checksum does not match: a byte of it changed since it was written (0 events read before the error are not used)
hmem: 1 of 2 traces skipped (see above)
exit 4
hmem: skipped x.db: the store of y_context.json is damaged: the checksum does not match: a byte of it changed since it was written (0 events read before the error are not used)
hmem: 1 of 2 traces skipped (see above)
exit 4
? 0
# The same change, sealed again: a valid size, so the report changes with it (the checksum
# finds damage, not intent).
$ R=$PWD; cd $T/sum && cp good.db x.db && lua5.4 $R/tests/partial_tool.lua poke x.db 1 mem.bytes 1 02 && timeout 60 hmem merge size x.db -q --json x.json; echo "exit $?"
exit 0
? 0
# Its row in files, and a category's name.
$ R=$PWD; cd $T/sum && cp good.db x.db && sqlite3 x.db "UPDATE files SET first_ts_ns = first_ts_ns + 1 WHERE idx = 1" && timeout 60 hmem merge size x.db -q --json x.json; echo "exit $?"; lua5.4 $R/tests/jget.lua skipped.1.error < x.json
exit 4
x.db: the store of i_oom.json is damaged: the checksum does not match: a byte of it changed since it was written
? 0
$ R=$PWD; cd $T/sum && cp good.db x.db && sqlite3 x.db "UPDATE categories SET name = 'Small (< 1 MiB)' WHERE name = 'small (< 1 MiB)'" && timeout 60 hmem merge size x.db -q --json x.json; echo "exit $?"; lua5.4 $R/tests/jget.lua skipped.# inputs.# < x.json
exit 4
2
0
? 0
# A partial without checksums (or a trace's row gone).
$ cd $T/sum && cp good.db x.db && sqlite3 x.db "DELETE FROM store WHERE idx = 0 AND name = 'checksum'" && timeout 60 hmem merge size x.db --json x.json; echo "exit $?"
hmem: skipped x.db: the store of y_context.json is damaged: it has no checksum (0 events read before the error are not used)
hmem: 1 of 2 traces skipped (see above)
exit 4
? 0
