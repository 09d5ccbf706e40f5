# hmem with no command names every command it has, as --help does (issue 28): the commands
# hmem accepts are those its unknown-command error lists; each is in the usage error, in
# --help and in the man page.
$ hmem
hmem: missing command (run, events, allocations, packs, diff, plan or merge)
Try 'hmem --help'.
? 2
$ cmds=$(hmem nosuchcommand 2>&1 | sed -n 's/.*(commands: \(.*\))$/\1/p' | tr -d ','); echo $cmds; for c in $cmds; do hmem 2>&1 | head -1 | grep -q "[ (]$c[,) ]" || echo "the usage error lacks $c"; hmem --help | grep -q "hmem $c " || echo "--help lacks $c"; grep -q "^\.B $c\$" man/hmem.1 || echo "the man page lacks $c"; done
run events allocations packs diff plan merge
? 0
