# hmem with no command explains itself and exits with the usage code
$ hmem
hmem: missing command (run, events, allocations, packs, diff, plan or merge)
Try 'hmem --help'.
? 2
$ hmem --version
hmem 0.1.0
? 0
$ hmem frobnicate x
hmem: unknown command 'frobnicate' (commands: run, events, allocations, packs, diff, plan, merge)
Try 'hmem --help'.
? 2
