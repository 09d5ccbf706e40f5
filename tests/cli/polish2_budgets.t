# Budgets in the outputs (issue 28): besides the lines on standard error, the text summary
# ends with a verdict line a CI log shows, --json has budgets[] and failures[], the HTML
# report a line per limit. tests/tiny/y_pair_basic.json peaks at 1536 B on cuda:0;
# y_per_device.json at 100 B on cuda:0 and on cuda:1.
$ hmem run size tests/tiny/y_pair_basic.json --fail-above cuda=1KiB --fail-above 2KiB 2>/dev/null | tail -1
budgets: 1 of 2 passed; cuda:0 peak 1.50 KiB > 1.00 KiB (--fail-above cuda=1KiB)
? 0
# Every limit holding says so; a run without limits has no such line.
$ hmem run size tests/tiny/y_pair_basic.json --fail-above 2KiB | tail -1
budgets: 1 of 1 passed
? 0
$ hmem run size tests/tiny/y_pair_basic.json | grep -c budgets
0
? 1
# Several peaks above one limit: the highest, and how many; a limit naming nothing is in the
# line too (it passes, with a warning).
$ hmem run size tests/tiny/y_per_device.json --fail-above 'cuda:*=99' --fail-above activation=1 2>/dev/null | tail -1
budgets: 1 of 2 passed; cuda:0 peak 100 B > 99 B (--fail-above cuda:*=99; 2 peaks above); --fail-above activation=1 matches no category of a series
? 0
# A rule file's limits say where they were declared; hmem.fail's message is in the line.
$ hmem run tests/tiny/rules/decide_budget_pack.lua tests/tiny/y_pair_basic.json --set limit=1000 --set fail=stop 2>/dev/null | tail -1
budgets: 1 of 2 passed; cuda:0 peak 1.50 KiB > 1000 B (hmem.budget at tests/tiny/rules/decide_budget_pack.lua:6); failed by the rule file: the rule file says no: stop
? 0
# --json: one entry per limit, command line first, then the rule file's.
$ hmem run tests/tiny/rules/decide_budget_pack.lua tests/tiny/y_pair_basic.json --set limit=1000 --set fail=stop --fail-above cuda:0=2KiB --json - 2>/dev/null | lua5.4 tests/jget.lua budgets.# budgets.1.device budgets.1.limit_bytes budgets.1.declared budgets.1.declared_in budgets.1.actual_bytes budgets.1.passed budgets.2.declared budgets.2.declared_in budgets.2.at.device budgets.2.checked budgets.2.broken budgets.2.passed budgets.3.category budgets.3.at.category failures.1
3
cuda:0
2048
--fail-above cuda:0=2KiB
command line
1536
true
tests/tiny/rules/decide_budget_pack.lua:6
rule file
cuda:0
1
1
false
big
big
the rule file says no: stop
? 0
$ hmem run size tests/tiny/y_pair_basic.json --fail-above activation=1 -q --json - | lua5.4 tests/jget.lua budgets.1.actual_bytes budgets.1.at budgets.1.checked budgets.1.passed
null
null
0
true
? 0
$ hmem run size tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua budgets.# failures.#
0
0
? 0
# --html: a line per limit under the title, broken ones marked.
$ hmem run size tests/tiny/y_per_device.json --fail-above 'cuda:*=99' --fail-above 1KiB --html - 2>/dev/null | sed -n '/<section id=budgets>/,/<\/section>/p' | grep -E '^<(h2>|li )'
<h2>Budgets: 1 of 2 passed</h2>
<li class=broken>over: cuda:0 peak 100 B &gt; 99 B (--fail-above cuda:*=99; 2 peaks above)</li>
<li class=passed>passed: cuda:0 peak 100 B &lt;= 1.00 KiB (--fail-above 1KiB)</li>
? 0
# A trace skipped (exit 4) still shows the verdict on what was read.
$ hmem run size tests/tiny/y_pair_basic.json tests/tiny/n_bad_json.json --keep-going -q --fail-above 1KiB 2>/dev/null | tail -1
budgets: 0 of 1 passed; cuda:0 peak 1.50 KiB > 1.00 KiB (--fail-above 1KiB)
? 0
