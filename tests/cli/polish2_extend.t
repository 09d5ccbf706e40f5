# Issue 28: composing packs. A pack that wraps pytorch by hand (require it, call its
# classify) loses the pytorch pack's view and memo; given pytorch's cache_by alone it failed
# at its first row ("row.view: the rules declare no view", a traceback into pytorch.lua),
# or, with no allocation to classify, not at all. Now it fails as it loads, and says how to
# compose instead.
$ printf 'local p = require "hmem.rules.pytorch"\nreturn { name = "wrap", cache_by = p.cache_by,\n  classify = function(row) return p.classify(row) end }\n' > $T/wrap.lua; hmem run $T/wrap.lua tests/tiny/y_pair_basic.json 2>&1 | sed "s|$T|T|"
hmem: T/wrap.lua: cache_by names view, but the rules declare no view function: a pack made of another loses the inner pack's view; build it with hmem.extend(inner, {...}), or add view = inner.view (README "Composing packs")
? 0
$ printf 'local hmem = require "hmem"\nhmem.cache_by{"free_view"}\nfunction classify(row) return "x" end\n' > $T/g.lua; hmem run $T/g.lua tests/tiny/y_pair_basic.json 2>&1 | sed "s|$T|T|"; hmem run $T/g.lua tests/tiny/y_pair_basic.json >/dev/null 2>&1; echo "exit $?"
hmem: T/g.lua: cache_by names free_view, but the rules declare no view function: a pack made of another loses the inner pack's view; build it with hmem.extend(inner, {...}), or add view = inner.view (README "Composing packs")
exit 3
? 0

# hmem.extend (examples/packs/pytorch_host.lua): pytorch's answers on the GPU, host memory
# apart, and the memo kept: 19 classify calls for 1,225 allocations (pytorch alone: 18).
$ hmem run -I examples/packs pytorch_host tests/data/tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz --format csv 2>/dev/null | cut -d, -f3,7,8
device,category,category_peak_bytes
cpu,(before trace),0
cpu,host,16
cuda:0,(before trace),984742400
cuda:0,temporary,1048576
cuda:0,forward output,1103766016
? 0
$ hmem run -v -I examples/packs pytorch_host tests/data/tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz 2>&1 >/dev/null | grep -o '[0-9]* classify calls'
19 classify calls
? 0
