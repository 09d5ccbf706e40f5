#!/usr/bin/env python3
"""The shipped packs on real snapshots' stacks (issue 25).

Usage: tests/snapshots/packs.py HMEM [SNAPSHOT...]  (TAP lines; -v also prints the GiB per category)
       tests/snapshots/packs.py --write FILE          (writes the generated step below)
       tests/snapshots/packs.py --find NAME           (prints the real snapshot's path, or nothing)
Without SNAPSHOT: those of tests/data/snapshots and HMEM_REAL_SNAPSHOTS, as who.py.

From each pickle alone (Python's stdlib), every alloc entry of the trace gets the category the
issue's rules give, and hmem allocations must give the same to the allocation of that time and
size:
  phase     a record_function range around it (external_annotations) decides first, as on a
            trace (Optimizer.* optimizer; *backward*, AccumulateGrad backward; *forward*,
            compiled regions forward); else its stack: a torch/optim/ file optimizer; the
            autograd engine (Engine::evaluate_function, thread_main), a node's ::apply, or
            torch/autograd backward, _engine_run_backward backward; nn.Module's _call_impl with
            a forward frame forward; else other;
  lifetime  never freed; freed in the same op when its free's stack holds its maker (the
            innermost at::_ops::OP::call that is not a factory's, else the outermost factory's)
            and every frame outside it; else freed later (no step);
  pytorch   for what backward makes and is not freed in its op: a gradient when never freed,
            made in AccumulateGrad, or freed by zero_grad, the optimizer or Python code; autograd
            detail when the engine frees it (its frames, or an empty stack); what the optimizer
            keeps is optimizer state. Other rows are not checked here (the busted specs are).
"""
import collections
import csv
import io
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import who  # noqa: E402  (the loader and the list of real snapshots)

FACTORIES = {"empty", "empty_strided", "empty_like", "new_empty", "new_empty_strided", "zeros", "zeros_like",
             "new_zeros", "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "empty_permuted",
             "resize_"}


def norm(path):
    return path.replace("\\", "/")


def stack_phase(frames):
    names = [(norm(f["filename"]), f["name"]) for f in frames]
    if any("torch/optim/" in p for p, _ in names):
        return "optimizer"
    for p, n in names:
        if n.startswith("torch::autograd::") and ("::apply(" in n or "Engine::evaluate_function" in n
                                                  or "Engine::thread_main" in n):
            return "backward"
        if n == "_engine_run_backward" or (n == "backward" and ("torch/autograd/__init__.py" in p
                                                                or "torch/_tensor.py" in p)):
            return "backward"
    if any(n in ("_call_impl", "_wrapped_call_impl") and "torch/nn/modules/module.py" in p for p, n in names) \
            and any(n == "forward" for _, n in names):
        return "forward"
    return None


def annotation_phase(names):
    if any(n.startswith("Optimizer.") for n in names):
        return "optimizer"
    if any("backward" in n.lower() or "AccumulateGrad" in n or n.startswith("autograd::engine::evaluate_function")
           for n in names):
        return "backward"
    if any("forward" in n.lower() or n == "CompiledFunction" or n.startswith("## Call CompiledFxGraph")
           or n.startswith("Torch-Compiled Region") for n in names):
        return "forward"
    return None


def is_factory(op):
    while True:
        if op in FACTORIES:
            return True
        if "_" not in op[1:]:
            return False
        op = op.rsplit("_", 1)[0]


def maker(frames):
    outer = None
    for i, f in enumerate(frames):
        m = re.match(r"at::_ops::(\w+)::call\(", f["name"])
        if m:
            if not is_factory(m.group(1)):
                return i
            outer = i
    return outer


def key(f):
    return (f["filename"], f["line"], f["name"])


def same_op(frames, free_frames):
    m = maker(frames)
    if m is None:
        return False
    k = len(frames) - m
    return len(free_frames) >= k and [key(f) for f in frames[m:]] == [key(f) for f in free_frames[len(free_frames) - k:]]


def expected(s):
    """(ts, bytes, free ts) -> [(phase, lifetime, pytorch or None)] for every alloc entry of the
    trace (the free's time tells an entry from the blocks made before recording, which hmem lists
    at the first entry's time, never freed)."""
    ranges, open_ = [], {}
    for a in s.get("external_annotations") or []:
        if a["stage"] == "START":
            open_.setdefault(a["name"], []).append(a["time_us"])
        elif open_.get(a["name"]):
            ranges.append((open_[a["name"]].pop(), a["time_us"], a["name"]))
    last = max((e.get("time_us", 0) for t in s.get("device_traces") or [] for e in t), default=0)
    ranges += [(t0, last, n) for n, ts in open_.items() for t0 in ts]
    out = collections.defaultdict(list)
    for entries in s.get("device_traces") or []:
        if any("time_us" not in e for e in entries):
            continue  # before 2.2: hmem numbers the entries; no real one of them has an alloc
        evs = sorted((e for e in entries if e["action"] in ("alloc", "free_completed")), key=lambda e: e["time_us"])
        live = {}
        allocs = []
        for e in evs:
            if e["action"] == "alloc":
                a = dict(e, free=None)
                live.setdefault(e["addr"], []).append(a)
                allocs.append(a)
            else:
                mine = live.get(e["addr"])
                if mine and mine[-1]["size"] == e["size"]:
                    mine.pop()["free"] = e
        for a in allocs:
            fr = a.get("frames") or []
            ffr = (a["free"] or {}).get("frames") or []
            names = [n for t0, t1, n in ranges if t0 <= a["time_us"] <= t1]
            p = annotation_phase(names) or stack_phase(fr) or "other"
            freed = a["free"] is not None
            same = freed and same_op(fr, ffr)
            life = "never freed" if not freed else "freed in the same op" if same else "freed later (no step)"
            torch = None
            if not same and p == "backward" and not annotation_phase(names):
                if not freed or any("AccumulateGrad" in f["name"] for f in fr):
                    torch = "gradient"
                else:
                    fp = stack_phase(ffr)
                    zero = any(f["name"] == "zero_grad" or "AccumulateGrad" in f["name"] for f in ffr)
                    torch = "gradient" if zero or fp == "optimizer" or (ffr and fp != "backward") else "autograd detail"
            elif p == "optimizer" and not freed:
                torch = "optimizer state"
            out[(a["time_us"], a["size"], a["free"]["time_us"] if freed else None)].append((p, life, torch))
    return out


def synthetic(path):
    """A snapshot of one step with the stacks real ones write (who.py's), each kind of row the
    rules decide: a forward activation the engine frees, a gradient never freed, a buffer the
    engine frees, optimizer state, a scratch freed inside its op, a gradient zero_grad frees."""
    f = who.frame
    engine = who.UNWIND + who.ENGINE
    backward = who.UNWIND + [f("??", 0, "at::_ops::bmm::call(at::Tensor const&, at::Tensor const&)"),
                             f("??", 0, "torch::autograd::generated::BmmBackward0::apply(std::vector<at::Tensor>&&)")] \
        + who.ENGINE
    lib = "C:\\env\\Lib\\site-packages\\torch\\"
    forward = [f("C:\\work\\model.py", 39, "forward"), f(lib + "nn\\modules\\module.py", 1762, "_call_impl"),
               f("C:\\work\\train.py", 20, "main")]
    optimizer = [f("/home/u/optim.py", 82, "step"), f("/env/lib/python3.13/site-packages/torch/optim/optimizer.py", 485,
                                                     "wrapper"), f("/home/u/train.py", 30, "main")]
    zero_grad = [f("/env/lib/python3.13/site-packages/torch/optim/optimizer.py", 960, "zero_grad"),
                 f("/home/u/train.py", 25, "main")]
    softmax = [f("??", 0, "at::_ops::empty_memory_format::call(c10::ArrayRef<c10::SymInt>)"),
               f("??", 0, "at::_ops::_log_softmax::call(at::Tensor const&, long, bool)"),
               f("/home/u/loss.py", 5, "cross_entropy")]
    inside = [f("??", 0, "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::free(void*)")] + softmax[1:]
    mib = 1 << 20
    # (alloc time, size, stack, free time or None, free stack)
    rows = [(100, 1, forward, 300, engine), (110, 2, softmax, 111, inside), (200, 3, backward, None, None),
            (210, 4, backward, 250, engine), (400, 5, optimizer, None, None), (220, 6, backward, 500, zero_grad)]
    entries, blocks, addr = [], [], 1 << 30
    for t, n, stack, tf, fstack in rows:
        e = {"action": "alloc", "addr": addr, "size": n * mib, "stream": 0, "time_us": t, "frames": stack}
        entries.append(e)
        if tf is not None:
            entries.append(dict(e, action="free_completed", time_us=tf, frames=fstack))
        blocks.append({"address": addr, "size": n * mib, "requested_size": n * mib if tf is None else 0,
                       "state": "inactive" if tf is not None else "active_allocated", "frames": [] if tf else stack})
        addr += n * mib
    entries.sort(key=lambda e: e["time_us"])
    seg = {"device": 0, "address": 1 << 30, "total_size": addr - (1 << 30), "stream": 0, "segment_type": "large",
           "blocks": blocks}
    with open(path, "wb") as out:
        who.pickle.dump({"segments": [seg], "device_traces": [entries]}, out, protocol=4)


def categories(hmem, pack, path):
    r = subprocess.run([hmem, "allocations", pack, path, "-q"], capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    got = collections.defaultdict(list)
    for row in csv.DictReader(io.StringIO(r.stdout)):
        if not row["alloc_ts"]:
            continue  # a free of memory allocated before recording
        free = float(row["free_ts"]) if row["free_ts"] else None
        got[(float(row["alloc_ts"]), int(row["bytes"]), free)].append(row["category"])
    return got, None


def main(argv):
    if argv[:1] == ["--write"]:
        synthetic(argv[1])
        return 0
    if argv[:1] == ["--find"]:
        print("\n".join(p for p in who.real_snapshots() if os.path.basename(p) == argv[1]))
        return 0
    verbose = "-v" in argv
    argv = [a for a in argv if a != "-v"]
    hmem, paths = argv[0], argv[1:] or who.real_snapshots()
    check = who.Checks()

    tmp = tempfile.TemporaryDirectory()
    synthetic(os.path.join(tmp.name, "one_step.pickle"))
    for path in [os.path.join(tmp.name, "one_step.pickle")] + paths:
        name = os.path.basename(path)
        want = expected(who.load(path))
        if not want:
            continue  # no alloc entry: nothing the packs decide from a trace's stacks
        for i, pack in enumerate(("phase", "lifetime", "pytorch")):
            got, err = categories(hmem, pack, path)
            if got is None:
                check(False, "%s: hmem allocations %s" % (name, pack), err)
                continue
            bad, n, gib = [], 0, collections.Counter()
            for k, rows in want.items():
                exp = sorted(r[i] for r in rows if r[i] is not None)  # pytorch: the rows the rule decides
                have = sorted(got.get((float(k[0]), k[1], None if k[2] is None else float(k[2])), []))
                for c in exp:
                    gib[c] += k[1] / 2 ** 30
                n += len(exp)
                missing = collections.Counter(exp) - collections.Counter(have)
                # never freed at the first entry's time: blocks made before recording share the key
                extra_ok = k[2] is None and float(k[0]) == min(got)[0]
                if missing or (pack != "pytorch" and len(have) != len(exp) and not extra_ok):
                    bad.append("%s %d B: %s, expected %s" % (k[0], k[1], have, exp))
            if verbose:
                print("# %s %s: %s" % (name, pack, ", ".join("%s %.2f GiB" % kv for kv in sorted(gib.items()))))
            check(not bad, "%s: %s gives each of %d allocations what its stacks say" % (name, pack, n),
                  "; ".join(bad[:3]) + (" and %d more" % (len(bad) - 3) if len(bad) > 3 else ""))
    tmp.cleanup()
    return check.done()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
