# hmem merge given what is not a set of partials of one split (issue 24): each refused with
# a message that says what to give instead. Each check runs in a fresh temporary directory.

# No file at all: a usage error of the merge (the old one said "run: no trace file ...").
$ hmem merge
hmem: merge needs the rule file the shards ran and their partials: hmem merge RULES PARTIAL... [output options] (README "Many machines")
Try 'hmem --help'.
? 2
$ hmem merge --json -
hmem: merge needs the rule file the shards ran and their partials: hmem merge RULES PARTIAL... [output options] (README "Many machines")
Try 'hmem --help'.
? 2
# A rule file and no partial.
$ hmem merge size
hmem: merge: no partial given after the rule file size: hmem merge RULES PARTIAL... (the files of hmem run RULES PATH... --shard I/N --partial FILE)
Try 'hmem --help'.
? 2
# A FIFO (or anything not a regular file) is not opened: the old merge waited on it
# forever (timeout stops it here: exit 124). A directory is refused the same way.
$ d=$(mktemp -d) && mkfifo $d/p.db && timeout 10 hmem merge size $d/p.db --json $d/o.json > $d.log 2>&1; echo "exit $?"; sed "s|$d|D|g" $d.log; ls $d; rm -rf $d $d.log
exit 2
hmem: merge: D/p.db is a FIFO, not a partial: give the files that 'hmem run ... --partial FILE' wrote
Try 'hmem --help'.
p.db
? 0
# The same with the old command line (no rule file): refused before anything is read.
$ d=$(mktemp -d) && mkfifo $d/p.db && timeout 10 hmem merge $d/p.db --json $d/o.json > $d.log 2>&1; echo "exit $?"; sed "s|$d|D|g" $d.log; rm -rf $d $d.log
exit 2
hmem: merge: D/p.db is a FIFO, not a partial: give the files that 'hmem run ... --partial FILE' wrote
Try 'hmem --help'.
? 0
$ d=$(mktemp -d) && mkdir $d/parts && timeout 10 hmem merge size $d/parts --json $d/o.json > $d.log 2>&1; echo "exit $?"; sed "s|$d|D|g" $d.log; rm -rf $d $d.log
exit 2
hmem: merge: D/parts is a directory, not a partial: give the files that 'hmem run ... --partial FILE' wrote
Try 'hmem --help'.
? 0
# Shards of two splits (--shard 0/2 and --shard 1/3): refused, exit 4, both files named,
# nothing written.
$ d=$(mktemp -d) && hmem run -q size tests/tiny/scale --shard 0/2 --partial $d/a.db && hmem run -q size tests/tiny/scale --shard 1/3 --partial $d/b.db && hmem merge size $d/a.db $d/b.db --json $d/o.json > $d.log 2>&1; echo "exit $?"; sed "s|$d|D|g" $d.log; ls $d; rm -rf $d $d.log
exit 4
hmem: merge: D/a.db is part 0/2 and D/b.db is part 1/3: the traces were split in two ways (--shard I/N with another N): refused; merge the parts of one split
a.db
b.db
? 0
