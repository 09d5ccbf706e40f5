# Names from traces and rule files are data, never commands (issue 12, README "Outputs").
# tests/tiny/y_formula_names.json has ops named =HYPERLINK("http://x","y"), -2+3,
# ESC]0;TITLE BEL ESC[31mRED (retitles a terminal, then turns it red), @SUM(1,2) and -5,
# pid -5 and tid "=tid"; tests/tiny/rules/by_op_name.lua makes each op name a category.

# --- CSV: a text cell a spreadsheet would run as a formula starts with ' ---
# The events CSV: op and tid guarded; the pid -5 and the op named -5 are numbers and stay.
# (CSV is data: the ESC and BEL bytes stay as they are, shown here by cat -v.)
$ hmem events tests/tiny/y_formula_names.json | cut -d, -f11- | cat -v
pid,tid,op,paired,lifetime
-5,'=tid,"'=HYPERLINK(""http://x"",""y"")",no,
-5,'=tid,'-2+3,no,
-5,'=tid,^[]0;TITLE^G^[[31mRED,no,
-5,'=tid,"'@SUM(1,2)",no,
-5,'=tid,-5,no,
? 0
# The --timeline header (category names) and the --format csv summary's category column.
$ hmem run tests/tiny/rules/by_op_name.lua tests/tiny/y_formula_names.json --timeline - | head -1 | cut -d, -f9- | cat -v
(before trace),"'=HYPERLINK(""http://x"",""y"")",'-2+3,^[]0;TITLE^G^[[31mRED,"'@SUM(1,2)",-5
? 0
$ hmem run tests/tiny/rules/by_op_name.lua tests/tiny/y_formula_names.json --format csv | cut -d, -f7 | sed 1,2d | cat -v
"'=HYPERLINK(""http://x""
'-2+3
^[]0;TITLE^G^[[31mRED
"'@SUM(1
-5
? 0
# A file name starting with = or @ is guarded too (the path column).
$ d=$(mktemp -d) && cp tests/tiny/y_pair_basic.json $d/=cmd.json && cd $d && hmem events =cmd.json | cut -d, -f1 | sed -n 2p; rm -rf $d
'=cmd.json
? 0

# --- terminal text: control characters shown as \xNN ---
# The summary, even with --color never, carries no ESC or BEL: the op name is escaped in
# the category column and the op column.
$ hmem run tests/tiny/rules/by_op_name.lua tests/tiny/y_formula_names.json --color never | tr -d -c '\033\007' | wc -c
0
? 0
$ hmem run tests/tiny/rules/by_op_name.lua tests/tiny/y_formula_names.json --color never | grep -F 'TITLE'
    \x1b]0;TITLE\x07\x1b[31mRED     1.00 KiB     1.00 KiB         1     1.00 KiB
        1.00 KiB  \x1b]0;TITLE\x07\x1b[31mRED      -  never freed     \x1b]0;TITLE\x07\x1b[31mRED
? 0
# A trace file name with ESC[2J (clear the screen), in the summary.
$ d=$(mktemp -d) && cp tests/tiny/y_pair_basic.json "$d/$(printf 'x\033[2Jy.json')" && cd $d && hmem run size . --color never | head -1
./x\x1b[2Jy.json  (6 events, 4 memory events)
? 0
# Errors that quote names: a rule error naming the op (and the op in its context), and a
# missing file.
$ hmem run tests/tiny/rules/fail_on_red.lua tests/tiny/y_formula_names.json 2>&1 | head -2
hmem: tests/tiny/rules/fail_on_red.lua:4: cannot place \x1b]0;TITLE\x07\x1b[31mRED
  while classifying the allocation of 1024 bytes on cuda:0 at ts 107.0 (op \x1b]0;TITLE\x07\x1b[31mRED) in tests/tiny/y_formula_names.json
? 0
$ hmem run size "$(printf 'no\033]0;T\007such.json')"
hmem: no\x1b]0;T\x07such.json: No such file or directory
? 4
# DEL and C1 controls too (U+009B, a CSI to terminals that take C1; as UTF-8 C2 9B), while
# other UTF-8 (é, Û = C3 9B) passes.
$ d=$(mktemp -d) && cp tests/tiny/y_pair_basic.json "$d/$(printf 'a\177b\302\233c\303\251\303\233.json')" && cd $d && hmem run size . --color never | head -1
./a\x7fb\xc2\x9bcéÛ.json  (6 events, 4 memory events)
? 0
# hmem packs: a pack's description reaches the terminal escaped too (issue 12).
$ d=$(mktemp -d) && printf 'return {description = "evil \\27]0;TITLE\\7 pack", classify = function(r) return "x" end}\n' > "$d/evil.lua" && hmem packs -I "$d" | grep '^  evil'; rc=$?; rm -rf "$d"; exit $rc
  evil         evil \x1b]0;TITLE\x07 pack
? 0
