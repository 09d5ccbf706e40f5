# Rule files and packs (issue 3): context fields, the sandbox, packs by name, cache_by,
# aggregations, done(report), hmem.write.
#
# tests/tiny/y_context.json: main thread 1 ("thread 1 (python)") runs ProfilerStep#3
# [100, 200] > "## forward ##" [105, 145] > nn.Module: Linear_0 [110, 130] > a python frame
# [112, 127] > aten::linear [114, 124] > aten::empty [115, 117] > cudaMalloc [115.5, 116.5];
# a kernel on the GPU at 115 (device-side: never context). Thread 2 ("pt_autograd_0") runs
# evaluate_function: AddmmBackward0 [150, 170] > AddmmBackward0 [152, 162]. Memory: 1024 B
# allocated at 116 (thread 1), freed at 155 (thread 2); 2048 B at 160 (thread 2, inside the
# step's time though on another thread), never freed; 512 B at 250 (outside everything),
# freed at 260.
$ hmem run tests/tiny/rules/context.lua tests/tiny/y_context.json --json /dev/null
alloc 1024 at 116.0: op=aten::empty ops={aten::linear | aten::empty} annotations={ProfilerStep#3 | ## forward ##} step=3 module=Linear_0 python={nn.Module: Linear_0 | torch/nn/functional.py(123): linear} thread=thread 1 (python) free_op=AddmmBackward0 free_ops={autograd::engine::evaluate_function: AddmmBackward0 | AddmmBackward0}
  stack={ProfilerStep#3@user_annotation | ## forward ##@user_annotation | nn.Module: Linear_0@python_function | torch/nn/functional.py(123): linear@python_function | aten::linear@cpu_op | aten::empty@cpu_op | cudaMalloc@cuda_runtime}
alloc 2048 at 160.0: op=AddmmBackward0 ops={autograd::engine::evaluate_function: AddmmBackward0 | AddmmBackward0} annotations={} step=3 module=nil python={} thread=pt_autograd_0 free_op=nil free_ops={}
  stack={autograd::engine::evaluate_function: AddmmBackward0@cpu_op | AddmmBackward0@cpu_op}
alloc 512 at 250.0: op=nil ops={} annotations={} step=nil module=nil python={} thread=thread 1 (python) free_op=nil free_ops={}
  stack={}
? 0

# Strict sandbox: no commands, no files, no debug library, no bytecode; a typo in a global
# is an error at its line. --allow-io gives the whole standard library.
$ hmem run tests/tiny/rules/sandbox_exec.lua tests/tiny/y_pair_basic.json --json /dev/null
hmem: tests/tiny/rules/sandbox_exec.lua:3: attempt to call a nil value (field 'execute')
  while classifying the allocation of 1024 bytes on cuda:0 at ts 101.25 (op aten::empty) in tests/tiny/y_pair_basic.json
stack traceback:
	tests/tiny/rules/sandbox_exec.lua:3: in function <tests/tiny/rules/sandbox_exec.lua:2>
? 3
$ hmem run tests/tiny/rules/sandbox_io.lua tests/tiny/y_pair_basic.json --json /dev/null
hmem: tests/tiny/rules/sandbox_io.lua:2: undefined global 'io'
stack traceback:
	[C]: in metamethod 'index'
	tests/tiny/rules/sandbox_io.lua:2: in main chunk
	[C]: in ?
? 3
$ hmem run --allow-io tests/tiny/rules/sandbox_io.lua tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua series.1.categories.2.name
opened
? 0
$ hmem run tests/tiny/rules/sandbox_debug.lua tests/tiny/y_pair_basic.json --json /dev/null
hmem: tests/tiny/rules/sandbox_debug.lua:2: module 'debug' not found (looked in the rule file's directory, -I directories, HMEM_PATH and the modules built into hmem)
stack traceback:
	[C]: in global 'require'
	tests/tiny/rules/sandbox_debug.lua:2: in main chunk
	[C]: in ?
? 3
$ hmem run --allow-io tests/tiny/rules/sandbox_debug.lua tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua series.1.categories.2.name
function
? 0
$ hmem run tests/tiny/rules/sandbox_bytecode.lua tests/tiny/y_pair_basic.json --json /dev/null
hmem: tests/tiny/rules/sandbox_bytecode.lua:3: attempt to load a binary chunk (mode is 't')
stack traceback:
	[C]: in function 'assert'
	tests/tiny/rules/sandbox_bytecode.lua:3: in main chunk
	[C]: in ?
? 3
$ hmem run --allow-io tests/tiny/rules/sandbox_bytecode.lua tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua series.1.categories.2.name
from bytecode
? 0
$ hmem run tests/tiny/rules/undefined_global.lua tests/tiny/y_pair_basic.json --json /dev/null
hmem: tests/tiny/rules/undefined_global.lua:4: undefined global 'categroy'
  while classifying the allocation of 1024 bytes on cuda:0 at ts 101.25 (op aten::empty) in tests/tiny/y_pair_basic.json
stack traceback:
	[C]: in metamethod 'index'
	tests/tiny/rules/undefined_global.lua:4: in function <tests/tiny/rules/undefined_global.lua:2>
? 3

# cache_by{"kind"}: six allocations in two traces, one classify call per trace (the memo answers
# within a trace, so shards add up: issue 16), four answered from it; the categories are those
# classify would give.
$ d=$(mktemp -d) && hmem run tests/tiny/rules/cache_kind.lua tests/tiny/y_pair_basic.json tests/tiny/y_context.json --json "$d/r.json" && lua5.4 tests/jget.lua classify_calls cache_hits series.2.categories.2.name series.2.categories.2.allocs < "$d/r.json"; rm -rf "$d"
classify alloc 1024
classify alloc 1024
2
4
alloc
3
? 0

# Aggregations: y_pair_basic allocates 1024 B (aten::empty, freed 8.75 us later), 512 B
# (aten::empty) and 256 B (aten::add), never freed; the peak (1536 B at 102.5) holds the
# first two.
$ hmem run tests/tiny/rules/agg.lua tests/tiny/y_pair_basic.json | tail -n 18
aggregation by op (3 rows, per series)
  file                         device category op          count bytes    max_lifetime
  tests/tiny/y_pair_basic.json cuda:0 big      aten::empty     1 1.00 KiB        8.750
  tests/tiny/y_pair_basic.json cuda:0 small    aten::empty     1    512 B            -
  tests/tiny/y_pair_basic.json cuda:0 small    aten::add       1    256 B            -

aggregation at peak (1 rows, per series)
  file                         device op          count bytes
  tests/tiny/y_pair_basic.json cuda:0 aten::empty     2 1.50 KiB

aggregation by size (1 rows, per series)
  file                         device by1 count bytes
  tests/tiny/y_pair_basic.json cuda:0 big     1 1.00 KiB

aggregation never freed (2 rows, per series)
  file                         device op          count
  tests/tiny/y_pair_basic.json cuda:0 aten::empty     1
  tests/tiny/y_pair_basic.json cuda:0 aten::add       1
? 0
$ hmem run tests/tiny/rules/agg.lua tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua aggregations.by\ op.columns.7 aggregations.by\ op.rows.1.max_lifetime aggregations.at\ peak.rows.1.bytes aggregations.by\ size.rows.# aggregations.never\ freed.rows.#
max_lifetime
8.75
1536
1
2
? 0

# done(report): the series, its categories, a category's timeline, rows live at a time and
# at the peak; init runs once before classification.
$ hmem run tests/tiny/rules/done.lua tests/tiny/y_pair_basic.json --json /dev/null
init
rules	tests/tiny/rules/done.lua	series	1	categories	(before trace),aten::empty,aten::add
series	tests/tiny/y_pair_basic.json	cuda:0	nil	4	3	1	1536	102.5	768
category	(before trace)	0	0	0	0	0
category	aten::empty	1536	1536	512	2	1536
category	aten::add	256	0	256	1	256
timeline	101.25	0
timeline	101.25	1024
timeline	102.5	1536
timeline	110.0	512
timeline	112.0	512
live at 111	512	aten::empty	aten::empty
live at peak	1024	aten::empty
live at peak	512	aten::empty
allocations	3
same event equal	true	true	false	userdata
? 0

# hmem.write writes into --out DIR (whole or not at all), and nowhere else.
$ d=$(mktemp -d) && hmem run tests/tiny/rules/write.lua tests/tiny/y_pair_basic.json --out "$d" --json /dev/null && ls "$d" && cat "$d/peak.json"; echo; rm -rf "$d"
peak.json
{"peak":1536}
? 0
$ hmem run tests/tiny/rules/write.lua tests/tiny/y_pair_basic.json --json /dev/null 2>&1 | head -1
hmem: tests/tiny/rules/write.lua:8: hmem.write works inside 'hmem run ... --out DIR'
? 0
$ d=$(mktemp -d) && hmem run tests/tiny/rules/write_escape.lua tests/tiny/y_pair_basic.json --out "$d" --json /dev/null 2>&1 | head -1 | sed "s|$d|DIR|"; ls "$d"; rm -rf "$d"
hmem: tests/tiny/rules/write_escape.lua:7: hmem.write: '../escape.txt' must be a plain file name (it goes into DIR)
? 0

# Packs: by name from -I or HMEM_PATH, composing a shipped pack and a module of their own;
# declared categories come first (in order) in the timeline, even unused ones.
$ hmem run mypack -I tests/tiny/packs tests/tiny/y_context.json --timeline -
mypack done with 1 series
path,rank,device,ts,kind,bytes,allocated,reserved,(before trace),unused first,small (< 1 MiB),small (< 1 MiB) in aten::empty,small (< 1 MiB) in AddmmBackward0
tests/tiny/y_context.json,,cuda:0,116.0,alloc,1024,1024,1048576,0,0,0,1024,0
tests/tiny/y_context.json,,cuda:0,155.0,free,1024,0,1048576,0,0,0,0,0
tests/tiny/y_context.json,,cuda:0,160.0,alloc,2048,2048,1048576,0,0,0,0,2048
tests/tiny/y_context.json,,cuda:0,250.0,alloc,512,2560,1048576,0,0,512,0,2048
tests/tiny/y_context.json,,cuda:0,260.0,free,512,2048,1048576,0,0,0,0,2048
? 0
$ d=$(mktemp -d) && HMEM_PATH=tests/tiny/packs hmem run mypack tests/tiny/y_context.json --json "$d/r.json" && lua5.4 tests/jget.lua rules series.1.categories.# series.1.categories.2.name < "$d/r.json"; rm -rf "$d"
mypack done with 1 series
mypack
4
small (< 1 MiB)
? 0
$ HMEM_PATH=tests/tiny/packs hmem packs | head -3
rule packs (use a name in place of a rule file: hmem run NAME PATH...):
  mypack       test pack: size buckets, with the op for small ones
               (tests/tiny/packs/mypack.lua)
? 0
$ hmem run nosuchpack tests/tiny/y_context.json
hmem: nosuchpack: no such rule file or pack (shipped packs: size, op, phase, lifetime, pytorch; 'hmem packs' lists all)
? 3
$ hmem run size tests/tiny/y_pair_basic.json --json - | lua5.4 tests/jget.lua rules series.1.categories.2.name
size
small (< 1 MiB)
? 0
