#!/usr/bin/env python3
"""Who made the memory live at the peak of real snapshots (issue 25).

Usage: tests/snapshots/who.py HMEM [SNAPSHOT...]  (TAP lines; -v also prints the shares)
Without SNAPSHOT: the real snapshots of tests/data/snapshots and of the folders named in
HMEM_REAL_SNAPSHOTS (colon-separated; tests/data/snapshots/README.md lists those found).

From each pickle alone (Python's stdlib, refusing any class), this replays every device:
the live bytes at the start (the segments' live blocks minus what the entries changed),
each alloc and free_completed in time order, the peak (first reached), and the blocks live
there: allocations of the trace, and frees of memory allocated before recording (a
free_completed with no alloc before it at its address). Each block with a stack gets the
"who" the rule below gives, and the share of those stacked bytes whose who is meaningful
(not "-") must be at least 95%. Then hmem's --json live_at_peak must say the same who for
the same bytes: a block hmem lists must be one of these, with this who.

The rule, written from the issue, not from hmem's code: the innermost frame in a .py file
that is the user's (a path split at / and \\; not under a torch, site-packages,
dist-packages or torchinductor_* directory, nor the interpreter's lib/python3.x or a
Windows Python*\\Lib), as "file(line): name"; else, for a stack of C++ frames, the autograd
node and op ("backward: BmmBackward0 > bmm", "backward: NODE", "backward: OP" when the
engine runs it, else "op: OP": the outermost at::_ops::OP::call below the node); else "-".
A block made before recording says so: "made before recording", then ", freed at WHO" for a
free of it; a live block no entry made, without a stack, is "made before recording" too.
"""
import collections
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile

GOAL = 0.95


class Data(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("a snapshot holds no classes: %s.%s" % (module, name))


def load(path):
    with open(path, "rb") as f:
        s = Data(f).load()
    if isinstance(s, list):  # 1.13: a list of segments
        s = {"segments": s, "device_traces": []}
    return s


def library_dirs(path):
    dirs = [d.lower() for d in re.split(r"[/\\]", path)[:-1]]
    for i, d in enumerate(dirs):
        if d in ("torch", "site-packages", "dist-packages") or d.startswith("torchinductor_"):
            return True
        if d == "lib" and ((i + 1 < len(dirs) and dirs[i + 1].startswith("python3"))
                           or (i > 0 and dirs[i - 1].startswith(("python", "cpython")))):
            return True
    return False


def user_file(path):
    return path.endswith(".py") and not path.startswith("<") and not library_dirs(path)


NODE = re.compile(r"^torch::autograd::(?:.*::)?(\w+)::apply\(")
OP = re.compile(r"^at::_ops::(?:.*::)?(\w+)::call\(")


def who_of(frames):
    for f in frames:
        if user_file(f["filename"]):
            return "%s(%d): %s" % (f["filename"], f["line"], f["name"])
    node, op, engine = None, None, False
    for f in frames:
        n = f["name"]
        if "autograd::Engine::evaluate_function" in n or "autograd::Engine::thread_main" in n:
            engine = True
        if node:
            continue
        m = NODE.match(n)
        if m:
            node = m.group(1)
            continue
        m = OP.match(n)
        if m:
            op = m.group(1)
    if node or engine:
        return "backward" + (": " + " > ".join(x for x in (node, op) if x) if node or op else "")
    return "op: " + op if op else "-"


def block_frames(b):
    if "frames" in b:
        return b["frames"] or []
    h = b.get("history") or []
    return (h[0].get("frames") or []) if h else []


def live_at_peak(s):
    """Per device: (peak bytes, [(bytes, who, stacked)] of the blocks live at the peak that the
    trace allocated or freed, the same for the live blocks no entry made: live from the start,
    with the segments' frames, which hmem lists as rows since every live block is one)."""
    out = {}
    traces = s.get("device_traces") or []
    for dev, entries in enumerate(traces):
        live_end = 0
        ends = []
        for seg in s["segments"]:
            if seg.get("device", 0) != dev:
                continue
            addr = seg["address"]
            for b in seg["blocks"]:
                if b["state"] in ("active_allocated", "active_pending_free", "active_awaiting_free"):
                    live_end += b.get("requested_size", b["size"])
                    ends.append(dict(b, address=b.get("address", addr)))
                addr += b["size"]
        evs = [(e.get("time_us", i), i, e) for i, e in enumerate(entries)
               if e["action"] in ("alloc", "free_completed")]
        evs.sort(key=lambda x: (x[0], x[1]))
        total = live_end - sum(e["size"] if e["action"] == "alloc" else -e["size"] for _, _, e in evs)
        at = {}  # addr -> [alloc entries live there]
        peak, peak_k = total, -1
        for k, (_, _, e) in enumerate(evs):
            if e["action"] == "alloc":
                at.setdefault(e["addr"], []).append((k, e))
                total += e["size"]
            else:
                live = at.get(e["addr"])
                if live and live[-1][1]["size"] == e["size"]:
                    live.pop()
                total -= e["size"]
            if total > peak:
                peak, peak_k = total, k
        rows = []
        live = {}
        for k, (_, _, e) in enumerate(evs):
            if e["action"] == "alloc":
                live.setdefault(e["addr"], []).append((k, e))
            else:
                mine = live.get(e["addr"])
                if mine and mine[-1][1]["size"] == e["size"]:
                    ka, a = mine.pop()
                    if ka <= peak_k < k:
                        rows.append(a)
                elif k > peak_k:
                    rows.append(dict(e, before=True))
        rows += [a for v in live.values() for k, a in v if k <= peak_k]
        blocks = []
        for e in rows:
            fr = e.get("frames") or []
            who = who_of(fr)
            if e.get("before"):
                who = "made before recording" + (", freed at " + who if who != "-" else "")
            blocks.append((e["size"], who, bool(fr)))
        made = {a["addr"] for v in live.values() for _, a in v}
        untraced = []
        for b in ends:
            size = b.get("requested_size", b["size"])
            if b["address"] not in made and size > 0:
                fr = block_frames(b)
                untraced.append((size, who_of(fr) if fr else "made before recording", bool(fr)))
        out["cuda:%d" % dev] = (peak, blocks, untraced)
    return out


def frame(filename, line, name):
    return {"name": name, "filename": filename, "line": line}  # PyTorch's order of the keys


UNWIND = [frame("??", 0, "torch::unwind::unwind()"), frame("??", 0, "torch::CapturedTraceback::gather(bool, bool, bool)")]
ENGINE = [frame("??", 0, "torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&)"),
          frame("??", 0, "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)")]
USER = frame("/home/u/train.py", 40, "main")
# paths longer than 64 bytes, as real ones are (/root/autodl-tmp/assignment2-systems/...)
HOME = "/home/someone/projects/assignment2-systems/cs336_systems/"
# (stack, the who the issue asks for): each kind of stack the real files hold, and those they do not
# (generated code, frozen modules, dist-packages, an op outside backward).
SYNTHETIC = [
    ([frame("D:\\env\\Lib\\site-packages\\torch\\functional.py", 373, "einsum"),
      frame("D:\\work\\model.py", 39, "forward")], "D:\\work\\model.py(39): forward"),
    ([frame("/tmp/torchinductor_u/z3/cz3v.py", 1647, "call"),
      frame("/usr/lib/python3/dist-packages/torch/_inductor/output_code.py", 460, "__call__"),
      frame(HOME + "trace_peak_memory.py", 22, "forward"), USER], HOME + "trace_peak_memory.py(22): forward"),
    ([frame("<eval_with_key>.5", 12, "forward"), frame("<frozen runpy>", 88, "_run_code"), USER],
     "/home/u/train.py(40): main"),
    ([frame("C:\\Users\\u\\AppData\\Roaming\\uv\\python\\cpython-3.10.19-windows\\lib\\copy.py", 153,
            "deepcopy"),
      frame("/opt/conda/lib/python3.11/contextlib.py", 81, "inner"), frame("C:\\work\\client.py", 176, "reset")],
     "C:\\work\\client.py(176): reset"),
    (UNWIND + [frame("??", 0, "at::_ops::bmm::call(at::Tensor const&, at::Tensor const&)"),
               frame("??", 0, "torch::autograd::generated::BmmBackward0::apply(std::vector<at::Tensor>&&)")] + ENGINE,
     "backward: BmmBackward0 > bmm"),
    (UNWIND + [frame("??", 0, "at::_ops::sum_dim_IntList::call(at::Tensor const&)"),
               frame("??", 0, "torch::autograd::InputMetadata::reduce_grad(at::Tensor&) const")] + ENGINE,
     "backward: sum_dim_IntList"),
    (UNWIND + [frame("??", 0, "at::_ops::empty_strided::call(c10::ArrayRef<long>)"),
               frame("??", 0, "at::_ops::_to_copy::call(at::Tensor const&)")], "op: _to_copy"),
    (UNWIND, "-"),
]


def synthetic(path):
    """A snapshot of one allocation per stack of SYNTHETIC, all live at its end, and one free of
    memory allocated before recording (at its peak, as the live bytes then)."""
    entries, blocks, addr = [], [], 1 << 30
    for i, (stack, _) in enumerate(SYNTHETIC):
        size = (i + 1) << 20
        entries.append({"action": "alloc", "addr": addr, "size": size, "stream": 0, "time_us": 100 + i,
                        "frames": stack})
        blocks.append({"address": addr, "size": size, "requested_size": size, "state": "active_allocated",
                       "frames": stack})
        addr += size
    old = addr
    entries.append({"action": "free_completed", "addr": old, "size": 64 << 20, "stream": 0, "time_us": 200,
                    "frames": [frame("/home/u/train.py", 55, "main")]})
    blocks.append({"address": old, "size": 64 << 20, "requested_size": 0, "state": "inactive", "frames": []})
    seg = {"device": 0, "address": 1 << 30, "total_size": old + (64 << 20) - (1 << 30), "stream": 0,
           "segment_type": "large", "blocks": blocks}
    with open(path, "wb") as f:
        pickle.dump({"segments": [seg], "device_traces": [entries]}, f, protocol=4)
    want = [w for _, w in SYNTHETIC] + ["made before recording, freed at /home/u/train.py(55): main"]
    return want


class Checks(list):
    """TAP lines: check(ok, name, detail) records one, done() prints the plan and them."""

    def __call__(self, ok, name, detail=None):
        self.append(("ok - " if ok else "not ok - ") + name + ("" if ok or not detail else " (%s)" % detail))

    def done(self):
        print("1..%d" % len(self))
        for r in self:
            print(r)
        return 0


def real_snapshots():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "snapshots")
    dirs = [root] + [d for d in os.environ.get("HMEM_REAL_SNAPSHOTS", "").split(":") if d]
    seen, out = set(), []
    for d in dirs:
        for name in sorted(os.listdir(d)):
            if name.endswith(".pickle") and name not in seen:
                seen.add(name)
                out.append(os.path.join(d, name))
    return out


def hmem_rows(hmem, path):
    r = subprocess.run([hmem, "run", "size", path, "--top", "1000000", "--json", "-", "-q"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return {x["device"]: x for x in json.loads(r.stdout)["series"]}, None


def main(argv):
    verbose = "-v" in argv
    argv = [a for a in argv if a != "-v"]
    hmem, paths = argv[0], argv[1:] or real_snapshots()
    check = Checks()

    gib = 2 ** 30
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stacks.pickle")
        want = synthetic(path)
        check([w if i >= len(SYNTHETIC) else who_of(SYNTHETIC[i][0]) for i, w in enumerate(want)] == want,
              "the rule gives the who the issue asks for on each kind of stack")
        series, err = hmem_rows(hmem, path)
        got = sorted((r["bytes"], r["who"]) for r in series["cuda:0"]["live_at_peak"]) if series else err
        exp = sorted([((i + 1) << 20, w) for i, w in enumerate(want[:-1])] + [(64 << 20, want[-1])])
        check(got == exp, "hmem says who on each kind of stack as the rule does (Windows paths, generated code, "
              "frozen modules, the interpreter's library, C++ backward and op stacks, before recording)",
              "; ".join("%s: %s" % (w[1], g[1] if isinstance(g, tuple) else g)
                        for w, g in zip(exp, got if isinstance(got, list) else [got] * len(exp)) if w != g))
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        devices = live_at_peak(load(path))
        series, err = hmem_rows(hmem, path)
        check(series is not None, name + ": hmem reads it", err)
        for dev, (peak, blocks, untraced) in sorted(devices.items()):
            every = blocks + untraced
            stacked = sum(b for b, _, st in every if st)
            meant = sum(b for b, w, st in every if st and w != "-")
            share = meant / stacked if stacked else 1.0
            if verbose:
                print("# %s %s: peak %.2f GiB, with a stack at the peak %.2f GiB (of them live from the start, no entry "
                      "made them: %.2f GiB), a meaningful who %.1f%%" % (name, dev, peak / gib, stacked / gib,
                                                                         sum(b for b, _, st in untraced if st) / gib,
                                                                         100 * share))
                by = collections.Counter()
                for b, w, st in every:
                    if st:
                        by[w if w == "-" or w.startswith(("backward", "op:", "made")) else "(a user frame)"] += b
                for w, b in by.most_common(6):
                    print("#   %8.3f GiB  %s" % (b / gib, w))
            check(share >= GOAL, "%s %s: %.1f%% of the %.2f GiB with a stack live at the peak have a meaningful who"
                  % (name, dev, 100 * share, stacked / gib), "goal %d%%" % (100 * GOAL))
            s = (series or {}).get(dev)
            if s is None:
                check(not blocks, name + " " + dev + ": hmem has the series")
                continue
            check(s["peak_bytes"] == peak, "%s %s: hmem's peak is the replay's" % (name, dev),
                  "%s, expected %s" % (s["peak_bytes"], peak))
            want = collections.Counter((b, w) for b, w, _ in blocks)
            may = collections.Counter((b, w) for b, w, _ in untraced)
            got = collections.Counter((r["bytes"], r["who"]) for r in s["live_at_peak"])
            bad = list((want - got) + (got - want - may))
            check(not bad, "%s %s: hmem says who made each of the %d blocks live at the peak as the rule does"
                  % (name, dev, len(blocks) + len(untraced)),
                  "; ".join("%d B: %s" % k for k in bad[:3]) + (" and %d more" % (len(bad) - 3) if len(bad) > 3 else "")
                  + "; hmem said: " + "; ".join("%d B: %s" % k for k in list(got - want)[:3]))
            # the share over what hmem lists: the blocks no entry made are rows once every live block is one
            left, got_meant, mine = collections.Counter(got), 0, 0
            for b, w, st in every:
                if st and (b, w) in got:
                    mine += b
                    if w != "-" and left[(b, w)] > 0:
                        left[(b, w)] -= 1
                        got_meant += b
            unlisted = stacked - mine
            if unlisted and verbose:
                print("# %s %s: hmem lists no row for %.2f GiB of them" % (name, dev, unlisted / gib))
            hshare = got_meant / mine if mine else 1.0
            check(hshare >= GOAL, "%s %s: hmem's who is meaningful (and the rule's) for %.1f%% of the bytes with a "
                  "stack live at the peak" % (name, dev, 100 * hshare), "goal %d%%" % (100 * GOAL))
    return check.done()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
