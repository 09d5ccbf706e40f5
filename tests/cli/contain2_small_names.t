# Names from traces never reach the terminal raw, nor forge a line (issue 24, round 2 of
# issue 12's "terminal text: control characters shown as \xNN").
# tests/tiny/y_contain2_oom_names.json: four steps, each allocating 1 KiB never freed in an op
# named "aten::ESC[31mred LF forged op line", under the frame "evil.py(1): f ESC[2J LF forged
# frame line" of the module "Evil ESC]0;PWNED BEL LF forged module line", then an
# [OutOfMemory] inside that op; tests/tiny/rules/by_op_name.lua makes the op its category.

# --- the OUT OF MEMORY and LEAK parts of the summary ---
# No ESC or BEL anywhere in the summary, and no line begins with a name's forged text.
$ hmem run tests/tiny/rules/by_op_name.lua tests/tiny/y_contain2_oom_names.json --color never | tr -d -c '\033\007' | wc -c
0
? 0
$ hmem run tests/tiny/rules/by_op_name.lua tests/tiny/y_contain2_oom_names.json --color never | grep -c '^forged'
0
? 1
# The op of the OOM, the categories at the OOM, the allocations live at it (module @ frame)
# and the leak's makers (of steps 2 and 3: not the first, not the last, issue 26): each name
# escaped as in the rest of the summary.
$ hmem run tests/tiny/rules/by_op_name.lua tests/tiny/y_contain2_oom_names.json --color never | sed -n '/LEAK/,/^      live/p'
    LEAK: 1.00 KiB per step over 4 steps (allocated at each step's end grows every step); made by Evil\x1b]0;PWNED\x07\x0aforged module line 2.00 KiB
    OUT OF MEMORY at +0.330 ms (ts 430.0): asked for 80.00 GiB in aten::\x1b[31mred\x0aforged op line, step 4
      allocated 4.00 KiB, reserved 1.00 MiB (1020.00 KiB reserved but unallocated: cached by the allocator, which it could not release); 0 B freed after it
      at the OOM: aten::\x1b[31mred\x0aforged op line 4.00 KiB
      live     1.00 KiB  Evil\x1b]0;PWNED\x07\x0aforged module line @ evil.py(1): f\x1b[2J\x0aforged frame line
? 0

# --- hmem plan: one line per file, four tab-separated fields ---
# A file name holding a line break, tabs and a backslash ("evil LF 9 TAB 1 TAB forged\x.json")
# would forge a plan line of its own; with ESC, it would reach the terminal. The name is
# written with \n, \t, \\ and \xNN (README "Many machines").
$ mkdir "$T/plan" && cp tests/tiny/y_pair_basic.json "$T/plan/$(printf 'evil\n9\t1\tforged\\x\033[2J.json')" && cd "$T/plan" && hmem plan . | sed 1d
0	1251	./evil\n9\t1\tforged\\x\x1b[2J.json
? 0
$ cd "$T/plan" && hmem plan . --shard 0/2 | awk -F '\t' 'NR > 1 { print NF " fields" }'
4 fields
? 0
