# The shipped packs read a memory snapshot's stacks where a trace has ops (issue 25; README
# "Shipped packs"). A generated step with the stacks real snapshots write (tests/snapshots/packs.py):
# the forward's output the engine frees (Windows paths, nn.Module's _call_impl and forward), a
# scratch freed inside its op (_log_softmax), a gradient never freed and a buffer the engine frees
# (BmmBackward0 on the engine's thread, C++ frames only), optimizer state (torch/optim), a
# gradient zero_grad frees.
$ python3 tests/snapshots/packs.py --write $T/step.pickle && hmem run phase $T/step.pickle --top 0 | sed -n '/category/,/^    other/p'
    category               peak      at peak    allocs  live at end
    (before trace)          0 B          0 B         0          0 B
    backward          13.00 MiB    13.00 MiB         3     3.00 MiB
    forward            1.00 MiB     1.00 MiB         1          0 B
    optimizer          5.00 MiB          0 B         1     5.00 MiB
    other              2.00 MiB          0 B         1          0 B
? 0
$ hmem run pytorch $T/step.pickle --top 0 | sed -n '/category/,/^    temporary/p'
    category                peak      at peak    allocs  live at end
    (before trace)           0 B          0 B         0          0 B
    gradient            9.00 MiB     9.00 MiB         2     3.00 MiB
    autograd detail     4.00 MiB     4.00 MiB         1          0 B
    activation          1.00 MiB     1.00 MiB         1          0 B
    optimizer state     5.00 MiB          0 B         1     5.00 MiB
    temporary           2.00 MiB          0 B         1          0 B
? 0
$ hmem run lifetime $T/step.pickle --top 0 | sed -n '/category/,/^    freed in the same op/p'
    category                       peak      at peak    allocs  live at end
    (before trace)                  0 B          0 B         0          0 B
    freed later (no step)     11.00 MiB    11.00 MiB         3          0 B
    never freed                8.00 MiB     3.00 MiB         2     8.00 MiB
    freed in the same op       2.00 MiB          0 B         1          0 B
? 0
# A real snapshot (HMEM_REAL_SNAPSHOTS, tests/data/snapshots/README.md): silmont's attention
# benchmark, recorded with C++ stacks. Its backward allocations have no Python frame; they used
# to be "other" and "forward output". What the autograd engine or torch.autograd.backward
# allocated, summed by Python's pickle, is phase's backward.
$ f=$(python3 tests/snapshots/packs.py --find silmont_mem_snapshot.pickle); [ -n "$f" ] || { echo "SKIP: silmont_mem_snapshot.pickle is not in HMEM_REAL_SNAPSHOTS"; exit 0; }; python3 -c 'import pickle, sys; s = pickle.load(open(sys.argv[1], "rb")); b = [e["size"] for e in s["device_traces"][0] if e["action"] == "alloc" and any("autograd::Engine::" in f["name"] or (f["name"].startswith("torch::autograd::") and "::apply(" in f["name"]) or f["name"] == "_engine_run_backward" or (f["name"] == "backward" and "torch/autograd/__init__.py" in f["filename"]) for f in e.get("frames", []))]; print(len(b), sum(b))' "$f" && hmem run phase "$f" --json - | lua5.4 tests/jget.lua series.1.categories.2.name series.1.categories.2.allocs series.1.categories.2.alloc_bytes && hmem run phase "$f" --top 0 | sed -n '/category/,/^    other/p' && hmem run pytorch "$f" --top 0 | sed -n '/category/,/^    temporary/p' && hmem run lifetime "$f" --top 0 | sed -n '/category/,/^    freed in the same op/p'
20 5390073860
backward
20
5390073860
    category               peak      at peak    allocs  live at end
    (before trace)          0 B          0 B         0          0 B
    backward           2.51 GiB     2.51 GiB        20    14.12 MiB
    other              1.52 GiB   528.50 MiB        16    16.13 MiB
    category                peak      at peak    allocs  live at end
    (before trace)           0 B          0 B         0          0 B
    autograd detail     2.50 GiB     2.50 GiB        15          0 B
    activation          1.00 GiB   512.38 MiB         4          0 B
    forward output      1.01 GiB    14.12 MiB         7    14.12 MiB
    gradient           16.12 MiB    10.12 MiB         5    14.12 MiB
    unknown           512.00 MiB     2.00 MiB         3     2.00 MiB
    temporary              260 B          0 B         2          0 B
    category                       peak      at peak    allocs  live at end
    (before trace)                  0 B          0 B         0          0 B
    freed later (no step)      3.00 GiB     3.00 GiB        24          0 B
    never freed               30.25 MiB    26.25 MiB        10    30.25 MiB
    freed in the same op          260 B          0 B         2          0 B
? 0
# MAGMA27's benchmark, taken on Windows: its forward is found under nn.Module's call in
# D:\...\Lib\site-packages\torch\nn\modules\module.py (it used to be all "other"). Its 227
# blocks made before recording (997.77 MiB, their segments keep no frames) are rows, "other".
$ f=$(python3 tests/snapshots/packs.py --find magma27_memory_snapshot.pickle); [ -n "$f" ] || { echo "SKIP: magma27_memory_snapshot.pickle is not in HMEM_REAL_SNAPSHOTS"; exit 0; }; hmem run phase "$f" --top 0 | sed -n '/category/,/^    backward/p'
    category               peak      at peak    allocs  live at end
    (before trace)          0 B          0 B         0          0 B
    forward           11.08 GiB    11.08 GiB       644   312.50 MiB
    other              1.89 GiB     1.89 GiB      1303   997.77 MiB
    backward                4 B          0 B         1          0 B
? 0
