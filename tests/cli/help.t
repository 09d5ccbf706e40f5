# hmem with no command explains itself and exits with the usage code
$ hmem
hmem: missing command (run or events)
Try 'hmem --help'.
? 2
$ hmem --version
hmem 0.1.0
? 0
$ hmem frobnicate x
hmem: unknown command 'frobnicate' (commands: run, events, packs, diff)
Try 'hmem --help'.
? 2
