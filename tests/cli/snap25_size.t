# Issue 25, item 8: a snapshot of 50 MB in PyTorch's _dump_snapshot layout (build/gen-snapshot:
# 403,827 entries, frames shared through the memo) is read, analysed and reported with a peak
# RSS under 1.2 times its size (0.92 measured since each entry is a record as its dict completes
# and the snapshot's sparse columns are packed; 2.0 when the pickle's whole tree was kept, 4.2
# before frames lists and keys were kept once). At this size what every run costs weighs (hmem,
# Lua, a huge page begun per column): a 1 GB snapshot takes 0.45 times (make bench).
# RSS, not time: the machine's load does not move it (a sanitizer build's allocator does: skipped).
$ command -v /usr/bin/time > /dev/null || { echo "SKIP: no /usr/bin/time"; exit 0; }; ! ldd "$(command -v hmem)" | grep -q -E 'libasan|libubsan' || { echo "SKIP: a sanitizer build (its allocator's RSS is not hmem's)"; exit 0; }; build/gen-snapshot --mb 50 > $T/s.pickle 2> $T/gen && cat $T/gen && /usr/bin/time -f "%M" -o $T/rss hmem run -q size $T/s.pickle --json $T/r.json && awk -v f=$(stat -c %s $T/s.pickle) '{ print ($1 * 1024 < 1.2 * f) ? "peak RSS under 1.2 times the file" : "peak RSS " $1 " KiB, the file " f " bytes" }' $T/rss
gen-snapshot: 50047860 bytes, 403827 entries
peak RSS under 1.2 times the file
? 0
# The entries and the bytes live at the end as Python counts them (403,827; 684,162,568: the
# allocs whose free_completed the trace does not hold).
$ [ -f $T/s.pickle ] || build/gen-snapshot --mb 50 > $T/s.pickle 2> /dev/null; hmem run -q size $T/s.pickle --json - | lua5.4 tests/jget.lua inputs.1.entries series.1.end_bytes
403827
684162568
? 0
