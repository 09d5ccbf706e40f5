# hmem merge and partials from elsewhere (issue 24; README "Bad input": a partial is data).
# A partial names the rule file and options of its shard; the old merge ran that file with
# those options (--allow-io, -I, --out, --timeout 0, --lua-mem 0 included) and said nothing.
# Each check runs in a fresh temporary directory; tests/tiny/rules/contain2_merge_io.lua
# writes the file "marker" there when it has io, and prints whether it had io and its k.

# --- the rule file is the one the merge names ---
# A merge given partials only runs nothing: exit 2, naming the rule file and digest they
# were made with and the command to run. Here the partial's meta also asks for --allow-io
# (the old format): the old merge ran rules.lua with io and the marker appeared.
$ d=$(mktemp -d) && cp tests/tiny/rules/contain2_merge_io.lua $d/rules.lua && r=$PWD && cd $d && hmem run -q rules.lua $r/tests/tiny/y_pair_basic.json --partial p.db && sqlite3 p.db "INSERT OR REPLACE INTO meta VALUES('options', '--allow-io' || char(10))" && h=$(sqlite3 p.db "SELECT value FROM meta WHERE key = 'rules_hash'") && { hmem merge p.db --json o.json; echo "exit $?"; } 2>&1 | sed "s/$h/RULES_HASH/g"; ls; cd $r; rm -rf $d
hmem: merge: no rule file given. p.db was made with the rule file rules.lua (digest RULES_HASH).
hmem: a merge runs only the rule file you name, with only the options you give it: a partial is data.
hmem: if you trust that file, name it first (it must have that digest, with the modules it requires):
  hmem merge rules.lua p.db --json o.json
Try 'hmem --help'.
exit 2
p.db
rules.lua
? 0
# Named on the command line, the rule file runs sandboxed: the partial's meta asking for
# --allow-io gives it nothing.
$ d=$(mktemp -d) && cp tests/tiny/rules/contain2_merge_io.lua $d/rules.lua && r=$PWD && cd $d && hmem run -q rules.lua $r/tests/tiny/y_pair_basic.json --partial p.db && sqlite3 p.db "INSERT OR REPLACE INTO meta VALUES('options', '--allow-io' || char(10))" && hmem merge rules.lua p.db --json o.json; echo "exit $?"; ls; cd $r; rm -rf $d
io: false, k="(none)"
exit 0
o.json
p.db
rules.lua
? 0
# A shard run with --allow-io (its machine, its choice) does not give it to the merge; the
# merge's own --allow-io does.
$ d=$(mktemp -d) && cp tests/tiny/rules/contain2_merge_io.lua $d/rules.lua && r=$PWD && cd $d && hmem run -q --allow-io rules.lua $r/tests/tiny/y_pair_basic.json --partial p.db && hmem merge rules.lua p.db --json o.json; echo "exit $?"; ls; hmem merge rules.lua p.db --json o.json --allow-io; echo "exit $?"; ls; cd $r; rm -rf $d
io: false, k="(none)"
exit 0
o.json
p.db
rules.lua
io: true, k="(none)"
exit 0
marker
o.json
p.db
rules.lua
? 0
# An options row that is not one a partial gives (--allow-io put there by hand): refused,
# exit 4, nothing written.
$ d=$(mktemp -d) && cp tests/tiny/rules/contain2_merge_io.lua $d/rules.lua && r=$PWD && cd $d && hmem run -q rules.lua $r/tests/tiny/y_pair_basic.json --partial p.db && sqlite3 p.db "INSERT INTO options VALUES(7, '--allow-io', '')" && hmem merge rules.lua p.db --json o.json; echo "exit $?"; ls; cd $r; rm -rf $d
hmem: merge: p.db gives the option '--allow-io': refused; a partial gives only --set, --top, --steps, --from and --to (capabilities and limits come from the merge's command line)
exit 4
p.db
rules.lua
? 0
# A partial without its options table is not merged as if it had none: refused, exit 4.
$ d=$(mktemp -d) && r=$PWD && cd $d && hmem run -q size $r/tests/tiny/y_pair_basic.json --set k=v --partial p.db && sqlite3 p.db "DROP TABLE options" && hmem merge size p.db --json o.json; echo "exit $?"; ls; cd $r; rm -rf $d
hmem: p.db: not a partial of hmem's: no table options as hmem writes it: give the files that 'hmem run ... --partial FILE' wrote
exit 4
p.db
? 0
# --out and --timeout are the merge's own: a shard's --out DIR is not where the merge's
# rule file writes (without --out, hmem.write fails: exit 3), and a shard's --timeout 0 does
# not lift the merge's limit (done loops; the merge's --timeout 0.3 stops it: exit 3).
$ d=$(mktemp -d) && cp tests/tiny/rules/contain2_merge_io.lua $d/rules.lua && r=$PWD && cd $d && mkdir shard mine && hmem run -q rules.lua $r/tests/tiny/y_pair_basic.json --set write=1 --out shard --partial p.db && hmem merge rules.lua p.db --json o.json > $d.log 2>&1; echo "exit $?"; head -2 $d.log; hmem merge rules.lua p.db --json o.json --out mine; echo "exit $?"; ls shard mine; cd $r; rm -rf $d $d.log
exit 3
io: false, k="(none)"
hmem: rules.lua:19: hmem.write works inside 'hmem run ... --out DIR'
io: false, k="(none)"
exit 0
mine:
done.txt

shard:
? 0
$ d=$(mktemp -d) && cp tests/tiny/rules/contain2_merge_io.lua $d/rules.lua && r=$PWD && cd $d && hmem run -q rules.lua $r/tests/tiny/y_pair_basic.json --set spin=1 --timeout 0 --lua-mem 0 --partial p.db && hmem merge rules.lua p.db --json o.json --timeout 0.3; echo "exit $?"; ls; cd $r; rm -rf $d
io: false, k="(none)"
hmem: rules.lua: stopped at rules.lua:21: a call into the rule file ran longer than 0.3 s (--timeout SEC raises the limit)
exit 3
p.db
rules.lua
? 0
# -I is the merge's own too: the module the shard found on its -I is not looked for there
# (exit 3) until the merge's command line says so.
$ d=$(mktemp -d) && r=$PWD && cd $d && mkdir mods && printf 'return {name = "helped"}\n' > mods/helper.lua && printf 'local h = require "helper"\nfunction classify(row) return h.name end\n' > rules.lua && hmem run -q rules.lua -I mods $r/tests/tiny/y_pair_basic.json --partial p.db && hmem merge rules.lua p.db --json o.json 2>&1 | head -1; hmem merge rules.lua -I mods p.db --json - | lua5.4 $r/tests/jget.lua series.1.categories.2.name; cd $r; rm -rf $d
hmem: rules.lua:1: module 'helper' not found (looked in the rule file's directory, -I directories, HMEM_PATH and the modules built into hmem)
helped
? 0
# Another rule file than the shards' (its digest differs): refused, exit 4, both named.
$ d=$(mktemp -d) && cp tests/tiny/rules/contain2_merge_io.lua $d/rules.lua && r=$PWD && cd $d && hmem run -q rules.lua $r/tests/tiny/y_pair_basic.json --partial p.db && echo '-- changed' >> rules.lua && h=$(sqlite3 p.db "SELECT value FROM meta WHERE key = 'rules_hash'") && { hmem merge rules.lua p.db --json o.json; echo "exit $?"; } 2>&1 | sed "s/$h/RULES_HASH/g; s/digest [0-9a-f]\{16\}, with/digest OTHER, with/"; ls; cd $r; rm -rf $d
hmem: merge: the rule file rules.lua (digest OTHER, with the modules it requires) is not the one the partials were made with (rules.lua, digest RULES_HASH): refused; name the rule file the shards ran (and -I DIR where it requires modules from there)
exit 4
p.db
rules.lua
? 0

# --- options are rows, never a string split again ---
# A --set value with a newline stays one value: the merge's rule file gets it exactly and
# no --allow-io (the old merge split "k=a\n--allow-io" into --set k=a --allow-io); the
# merge's --db holds it byte for byte, as one run's --db does.
$ d=$(mktemp -d) && cp tests/tiny/rules/contain2_merge_io.lua $d/rules.lua && r=$PWD && cd $d && hmem run -q rules.lua $r/tests/tiny/y_pair_basic.json --set "$(printf 'k=a\n--allow-io')" --partial p.db && hmem merge rules.lua p.db --db m.db; echo "exit $?"; ls; sqlite3 m.db "SELECT pos, name, hex(value) FROM options"; hmem run -q rules.lua $r/tests/tiny/y_pair_basic.json --set "$(printf 'k=a\n--allow-io')" --db one.db >/dev/null && sqlite3 one.db "SELECT pos, name, hex(value) FROM options"; cd $r; rm -rf $d
io: false, k="a\
--allow-io"
exit 0
m.db
p.db
rules.lua
0|--set|6B3D610A2D2D616C6C6F772D696F
0|--set|6B3D610A2D2D616C6C6F772D696F
? 0
# Options that shape results still come from the partials, and on the merge's command line
# are refused (exit 2).
$ d=$(mktemp -d) && r=$PWD && cd $d && hmem run -q size $r/tests/tiny/y_pair_basic.json --partial p.db && hmem merge size p.db --set k=b; echo "exit $?"; cd $r; rm -rf $d
hmem: --set is an option of the shards' hmem run: the merge takes it from the partials
Try 'hmem --help'.
exit 2
? 0
