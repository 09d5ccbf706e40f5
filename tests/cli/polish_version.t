# hmem -V and --version print the version (issue 17); a rule file's hmem.version is the
# same string, taken from the binary (the Makefile's VERSION, read from lua/hmem/init.lua).
$ hmem -V
hmem 0.1.0
? 0
$ hmem --version
hmem 0.1.0
? 0
$ test "$(hmem -V)" = "hmem $(sed -n 's/^hmem\.version = "\(.*\)"$/\1/p' lua/hmem/init.lua)" && echo lua/hmem/init.lua\'s
lua/hmem/init.lua's
? 0
$ hmem run tests/tiny/rules/polish_version.lua tests/tiny/y_pair_basic.json --json $T/v.json
hmem.version 0.1.0
? 0
# From plain Lua (busted), hmem.version is the module's own, the binary's string, and no
# process is run for it (issue 26: it once ran hmem -V).
$ lua5.4 -e 'package.path = "lua/?.lua;lua/?/init.lua;" .. package.path; io.popen = function() error("a process was run") end; os.execute = io.popen; print(require("hmem").version)'
0.1.0
? 0
$ lua5.4 -e 'package.path = "lua/?.lua;lua/?/init.lua;" .. package.path; print(require("hmem").version == io.popen("hmem -V"):read("l"):sub(6))'
true
? 0
# The version is written in one place: the Makefile reads it from lua/hmem/init.lua, and no
# other Lua file, nor any C source, holds it.
$ grep -rln --include='*.lua' --include='*.c' --include='*.h' -e '"0\.1\.0"' lua src
lua/hmem/init.lua
? 0
