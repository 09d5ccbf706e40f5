# hmem -V and --version print the version (issue 17); a rule file's hmem.version is the
# same string, taken from the binary (the Makefile's VERSION, defined nowhere else).
$ hmem -V
hmem 0.1.0
? 0
$ hmem --version
hmem 0.1.0
? 0
$ test "$(hmem -V)" = "hmem $(sed -n 's/^VERSION *:= *//p' Makefile)" && echo the Makefile\'s
the Makefile's
? 0
$ hmem run tests/tiny/rules/polish_version.lua tests/tiny/y_pair_basic.json --json $T/v.json
hmem.version 0.1.0
? 0
# From plain Lua (busted), hmem.version is asked of the hmem on PATH.
$ lua5.4 -e 'package.path = "lua/?.lua;lua/?/init.lua;" .. package.path; print(require("hmem").version == io.popen("hmem -V"):read("l"):sub(6))'
true
? 0
# The version is written in one place: no Lua file or C source holds it.
$ grep -rn --include='*.lua' --include='*.c' --include='*.h' -e '"0\.1\.0"' lua src | wc -l
0
? 0
