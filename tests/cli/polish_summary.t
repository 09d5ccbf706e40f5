# The text summary (issue 17). --top N lists N allocations live at the peak in the text too,
# as in --json and --help (it was cut at 10): this hip:0 peak has 44 live.
$ hmem run size examples/traces/normalization_mi300.json.gz --top 12 | grep -A14 'live at the peak (12 of 44)' | grep -c ' KiB  '
12
? 0
$ hmem run size examples/traces/normalization_mi300.json.gz --top 12 --json - | lua5.4 tests/jget.lua series.2.live_at_peak.#
12
? 0
# By default 20, as --help says.
$ hmem --help | grep -- '--top N *allocations'
  --top N           allocations listed as live at each peak (default 20)
? 0
$ hmem run size examples/traces/normalization_mi300.json.gz | grep 'live at the peak'
    largest allocations live at the peak (3 of 3):
    largest allocations live at the peak (20 of 44):
? 0

# Long category names are cut with an ellipsis, and two names never print alike: the column
# widens until they differ (here they share their first 70 characters).
$ hmem run tests/tiny/rules/polish_long_names.lua tests/tiny/y_pair_basic.json | grep -o 'a category name[^ ]*\( [^ ]*\)*…' | sort -u
a category name long enough to be cut by the summary table, ending in b…
a category name long enough to be cut by the summary table, ending in s…
? 0
# Short names are not cut.
$ hmem run size tests/tiny/y_pair_basic.json | grep -c '…'
0
? 1

# Several traces: a blank line between them and a last line saying how many traces and
# devices were read and where the highest peak is.
$ hmem run size examples/traces/ | grep -B1 '^examples/traces/normalization'

examples/traces/normalization_mi300.json.gz  (8500 events, 475 memory events)
? 0
$ hmem run size examples/traces/ | grep -B1 ' traces, '

2 traces, 4 devices, highest peak 96.61 MiB on cuda:0 of examples/traces/bert-small_h100.json.gz
? 0
# One trace: no such line.
$ hmem run size examples/traces/bert-small_h100.json.gz | grep -c 'traces,'
0
? 1

# An empty category name is an error, like a name that is not a string (exit 3).
$ hmem run tests/tiny/rules/polish_empty.lua tests/tiny/y_pair_basic.json
...
? 3
$ hmem run tests/tiny/rules/polish_empty.lua tests/tiny/y_pair_basic.json 2>&1 | head -n 1
hmem: tests/tiny/rules/polish_empty.lua:2: classify returned an empty string; it must return a category name (a non-empty string) or nil
? 0

# A trace without memory events: a bare array of events is what PyTorch's profiler writes
# without Kineto, where profile_memory=True records nothing; hmem says so instead of
# advising it (issue 17). A Kineto trace without memory events still gets that advice.
$ hmem run size tests/tiny/i_polish_no_kineto.json
hmem: note: tests/tiny/i_polish_no_kineto.json has no [memory] events (a bare array of events, as PyTorch's profiler writes without Kineto: it records no memory even with profile_memory=True; use a PyTorch built with Kineto)
tests/tiny/i_polish_no_kineto.json  (1 events, 0 memory events)
  no [memory] events: a bare array of events, as PyTorch's profiler writes without Kineto;
  it records no memory even with profile_memory=True: use a PyTorch built with Kineto
? 0
$ hmem run size tests/data/hta/no_memory/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz 2>/dev/null | tail -n 1
  no [memory] events: record with torch.profiler.profile(profile_memory=True)
? 0
