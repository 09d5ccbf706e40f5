# hmem.human prints every size as hmem's own outputs do (hm_fmt_bytes), in plain Lua and in a
# rule file alike (issue 26: it printed "1024.00 KiB" where the summary printed "1.00 MiB").
$ lua5.4 tests/human.lua hmem | grep -v '^ok'
1..901
? 0
