# Large plain traces are mapped, not read (issue 19, README "Performance"): hmem reports the
# same as when it reads them (HMEM_MAP=0), for several traces at once (each mapping let go
# part by part while others come and go), on one thread per trace and on two.
$ build/gen-trace --shape mixed --mb 2 > $T/a.json && build/gen-trace --shape memory --mb 3 > $T/b.json && build/gen-trace --shape long --mb 2 > $T/c.json && build/gen-trace --shape host --mb 2 > $T/d.json && for j in 1 2 4; do HMEM_MAP=0 hmem run size $T/a.json $T/b.json $T/c.json $T/d.json -j $j --json $T/read.json > $T/read.txt 2>&1; echo "read $?"; hmem run size $T/a.json $T/b.json $T/c.json $T/d.json -j $j --json $T/map.json > $T/map.txt 2>&1; echo "map $?"; cmp $T/read.json $T/map.json && cmp $T/read.txt $T/map.txt && echo same; done
read 0
map 0
same
read 0
map 0
same
read 0
map 0
same
? 0

# Every tiny trace and fuzz regression, mapped even when small (HMEM_MAP=1): the same output,
# errors and their byte offsets included.
$ for f in tests/tiny/*.json tests/fuzz/regressions/*.json; do a=$(HMEM_MAP=0 hmem run size "$f" -q --json - 2>&1; echo "exit $?"); b=$(HMEM_MAP=1 hmem run size "$f" -q --json - 2>&1; echo "exit $?"); [ "$a" = "$b" ] || echo "differs: $f"; done; echo checked
checked
? 0

# A mapped trace under the reader's tightest hand-off (two batches, each handed back before the
# next) and with either thread walking the members: the same report as one thread.
$ build/gen-trace --shape mixed --mb 3 > $T/m.json && hmem run size $T/m.json -j 1 --json $T/one.json > /dev/null && for w in scanner handler; do HMEM_TEST_SCHEDULE=lockstep HMEM_WALK=$w hmem run size $T/m.json -j 2 --json $T/two.json > /dev/null; cmp $T/one.json $T/two.json && echo "$w same"; done
scanner same
handler same
? 0
