# Memory stays bounded (issue 6, "Nothing lost"; README "Inputs": memory use grows with the
# memory events and ops kept, not file size). tests/bounded.lua makes a trace with
# build/gen-trace (8 MB), the same trace padded to about 10x the bytes (a 3.8 KB string at the
# start of every event's args: the same memory events and ops), and the same trace with 12 KB
# added to every op name (names are kept: the control that shows the measure sees what hmem
# holds), and compares the peak RSS of hmem run on each (/usr/bin/time, Debian package time).
$ lua5.4 tests/bounded.lua
padded file: about 10x the bytes of base
padded: the same memory events and ops as base
peak RSS of padded: within 1.25x base, plus a 2 MiB huge page per column
named: the same memory events and ops as base
peak RSS of named (the extra bytes are kept): more than 2x base
? 0
