# Issue 24: a report given to `hmem diff` is data from elsewhere. The comparison runs under
# the run's --timeout and --lua-mem, with no io, os, debug, package or load, and with
# algorithms linear in the reports (a glob matched piece by piece, not by a backtracking
# Lua pattern; series matched through queues with a head index, not table.remove(q, 1)).

# A 1 MB category name and a two-star glob: the old code's Lua pattern ^.*a.*b$ backtracked
# for hours (here killed: exit 137); now the glob costs a pass over the name.
$ d=$(mktemp -d); lua5.4 -e 'io.write(("{\"version\": 1, \"series\": [{\"path\": \"t.json\", \"device\": \"cuda:0\", \"peak_bytes\": 10, \"categories\": [{\"name\": \"%s\", \"peak_bytes\": 10}]}]}\n"):format(string.rep("a", 1 << 20)))' > "$d/r.json"; timeout -s KILL 60 hmem diff "$d/r.json" "$d/r.json" --timeout 30 --fail-above-delta '*a*b=1%' --json /dev/null; echo "exit $?"; rm -rf "$d"
hmem: warning: --fail-above-delta *a*b=1% matches no series found on both sides
exit 0
? 0

# The same glob still matches what it should, with ? and stars anywhere.
$ d=$(mktemp -d); printf '{"version": 1, "series": [{"path": "t.json", "device": "cuda:0", "peak_bytes": 10, "categories": [{"name": "act.layer*1", "peak_bytes": 10}]}]}\n' > "$d/a.json"; sed 's/"peak_bytes": 10}]/"peak_bytes": 20}]/' "$d/a.json" > "$d/b.json"; for g in 'act*' '*layer?1' 'a*.*r*1' '*1' 'act.layer*1' '*x*'; do hmem diff "$d/a.json" "$d/b.json" --fail-above-delta "$g=1%" --json /dev/null 2>&1 | cut -c1-60; done; rm -rf "$d"
hmem: grew too much: t.json cuda:0 -> t.json cuda:0: peak of
hmem: grew too much: t.json cuda:0 -> t.json cuda:0: peak of
hmem: grew too much: t.json cuda:0 -> t.json cuda:0: peak of
hmem: grew too much: t.json cuda:0 -> t.json cuda:0: peak of
hmem: grew too much: t.json cuda:0 -> t.json cuda:0: peak of
hmem: warning: --fail-above-delta *x*=1% matches no series f
? 0

# --lua-mem bounds the comparison (the old code had no limit: exit 0).
$ d=$(mktemp -d); lua5.4 -e 'local t = {} for i = 1, 5000 do t[i] = ("{\"path\": \"a.json\", \"rank\": 0, \"device\": \"cuda:0\", \"peak_bytes\": %d}"):format(i) end io.write("{\"version\": 1, \"series\": [", table.concat(t, ","), "]}\n")' > "$d/r.json"; hmem diff "$d/r.json" "$d/r.json" --lua-mem 1 --json /dev/null 2>&1 | sed "s|$d|DIR|g"; echo "exit $?"; rm -rf "$d"
hmem: diff: comparing DIR/r.json and DIR/r.json used more than --lua-mem 1 MB of Lua memory (--lua-mem MB raises the limit)
exit 0
? 0

$ d=$(mktemp -d); lua5.4 -e 'local t = {} for i = 1, 5000 do t[i] = ("{\"path\": \"a.json\", \"rank\": 0, \"device\": \"cuda:0\", \"peak_bytes\": %d}"):format(i) end io.write("{\"version\": 1, \"series\": [", table.concat(t, ","), "]}\n")' > "$d/r.json"; hmem diff "$d/r.json" "$d/r.json" --lua-mem 1 --json /dev/null 2>/dev/null; echo "exit $?"; rm -rf "$d"
exit 3
? 0

# --timeout bounds it too (the hook stops it, or, inside cjson's decoder, the watchdog ends
# the run): exit 3 either way.
$ d=$(mktemp -d); lua5.4 -e 'local t = {} for i = 1, 5000 do t[i] = ("{\"path\": \"a.json\", \"rank\": 0, \"device\": \"cuda:0\", \"peak_bytes\": %d}"):format(i) end io.write("{\"version\": 1, \"series\": [", table.concat(t, ","), "]}\n")' > "$d/r.json"; timeout -s KILL 20 hmem diff "$d/r.json" "$d/r.json" --timeout 0.01 --json /dev/null 2>&1 | grep -o -- '--timeout SEC raises the limit'; timeout -s KILL 20 hmem diff "$d/r.json" "$d/r.json" --timeout 0.01 --json /dev/null 2>/dev/null; echo "exit $?"; rm -rf "$d"
--timeout SEC raises the limit
exit 3
? 0

# A value of the wrong type in a report is "FILE: what" (exit 4), not a Lua error inside
# hmem's own diff.lua (the old code: "lua/hmem/diff.lua:60: attempt to compare number
# with string", or a number taken for a name).
$ d=$(mktemp -d); for v in '"series": [{"path": "t.json", "device": 0, "peak_bytes": 10}]' '"series": [{"path": "t.json", "device": "cuda:0", "peak_bytes": "10"}]' '"series": [{"path": "t.json", "device": "cuda:0", "categories": [{"name": {}}]}]' '"series": [7]' '"series": [{"path": "t.json", "device": "cuda:0", "live_at_peak": [{"op": 1, "bytes": 2}]}]' '"rules": [], "series": []' '"series": [{"path": "t.json", "device": "cuda:0", "categories": [{"name": "x", "end_bytes": true}]}]'; do echo "{\"version\": 1, $v}" > "$d/r.json"; hmem diff "$d/r.json" "$d/r.json" --json /dev/null 2>&1 | sed "s|$d|DIR|"; echo "exit $?"; done | sed 's/^exit 0$//' | grep .; hmem diff "$d/r.json" "$d/r.json" --json /dev/null 2>/dev/null; echo "exit $?"; rm -rf "$d"
hmem: DIR/r.json: not an hmem --json report (series[1].device: expected a string, not number)
hmem: DIR/r.json: not an hmem --json report (series[1].peak_bytes: expected a number, not string)
hmem: DIR/r.json: not an hmem --json report (series[1].categories[1].name: expected a string, not table)
hmem: DIR/r.json: not an hmem --json report (series[1]: expected a table, not number)
hmem: DIR/r.json: not an hmem --json report (series[1].live_at_peak[1].op: expected a string, not number)
hmem: DIR/r.json: not an hmem --json report (rules: expected a string, not table)
hmem: DIR/r.json: not an hmem --json report (series[1].categories[1].end_bytes: expected a number, not boolean)
exit 4
? 0

# Every allocation of the comparison's Lua state is inside its armed call.
$ HMEM_CHECK_ARMED=1 hmem diff examples/by_op.lua tests/tiny/diff/before.json tests/tiny/diff/after.json --format csv >/dev/null; echo "exit $?"
exit 0
? 0
