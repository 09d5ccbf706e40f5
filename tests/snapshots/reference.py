#!/usr/bin/env python3
"""An independent reference for PyTorch memory snapshots (issue 25): what hmem should report,
computed from the snapshot alone with Python's standard library. It shares no code with hmem
(nor with tests/snapshots/gen.py) and is the ground truth tests/snapshots/compare.py holds hmem to.

  reference.py FILE [--device N] [--from TS]

FILE is a snapshot (`torch.cuda.memory._dump_snapshot`, or a pickled `_snapshot()`, plain or
gzipped). The JSON document on standard output has, per device (only N with --device):

Replay. `device_traces[N]` is replayed in file order. `alloc` adds its `size` (the requested
size) to `allocated`, `free_completed` subtracts its `size` (the block's requested size);
`free_requested` changes nothing (memory_viz pairs `alloc` with `free_completed` too).
`segment_alloc` and `segment_map` add their `size` to `reserved`, `segment_free` and
`segment_unmap` subtract it. `oom`, `snapshot` and any other action change nothing. A state is
the pair (allocated, reserved) before the first entry (index -1, the baseline) or after entry i.

Baseline. The snapshot's `segments` are the allocator as the snapshot was taken, i.e. after the
last entry. So the live requested bytes at the end (blocks of device N in state
`active_allocated`, `active_pending_free` or `active_awaiting_free`: a block pending its free is
still allocated) equal the baseline plus the net effect of the entries:
    baseline_allocated = live_requested_end - (sum of alloc sizes - sum of free_completed sizes)
    baseline_reserved  = sum(total_size of the device's segments) - (segment_alloc + segment_map
                         - segment_free - segment_unmap sizes)
The baseline is checked a second, independent way, by pairing (memory_viz's "initially
allocated"): each `free_completed` takes the newest unfreed `alloc` at its address; one with
none freed memory allocated before the trace. A live block at the end whose address holds no
unfreed `alloc` of the trace was allocated before the trace. baseline_allocated must equal the
sum of both (`baseline.paired_bytes`); `baseline.agree` says whether it does.

Figures over the states (the time of a state is the entry's `time_us`; before 2.2 files have
none and `time_us` is null, use `index`; the baseline's time is the first entry's):
  peak                      the largest `allocated`, first reached; `reserved` there, and
                            `reserved_unallocated_bytes` = reserved - allocated at that state
  max_reserved              the largest `reserved`, first reached
  max_reserved_unallocated  the largest reserved - allocated, first reached
  ooms[]                    each `oom` entry: its rounded `size`, `device_free`, and the state
                            it happened in (an oom changes nothing)
`allocated` here is requested bytes (what the entries record). PyTorch's own "reserved but
unallocated" subtracts rounded block sizes, so it is smaller by the rounding of the live blocks;
at the end both are known: `end.reserved_bytes - end.live_size_bytes` (rounded) and
`end.reserved_bytes - end.live_requested_bytes` (requested).

End state (`end`, from segments): segments, reserved, live blocks by state, free (inactive)
blocks, the largest free block, hmem's `reclaimable_bytes` (segments holding no live block) and
`stranded_bytes` (the rest: what the live blocks of the other segments do not ask for), and
`live_blocks[]` (address, size, requested_size, state, stream, segment, `top` frames after
memory_viz's frame filter, and `who`, defined at `who()` below).

memory_viz `stats` (`memviz_stats`, for the whole file and per device): see `memviz_stats()`.

Window (`--from TS`, TS in the entries' `time_us`, as hmem's `--from ts:TS`): `window` per
device holds `start_bytes` (allocated after the last entry before TS: everything live when the
window opens, whenever and by whom it was allocated, the baseline included), `peak_bytes` and
`peak_us` (the largest state from the opening to the end, first reached; TS when it is the
opening) and `end_bytes` (after the last entry). Null without `time_us`.

Steps: `annotations[]` pairs the `external_annotations` START/END records by name (a record
function range; an END without START is dropped, a START without END lasts to the last entry);
`steps[]` are the `ProfilerStep#N` ranges with, per device, `start_bytes` (allocated after the
last entry before `start_us`), `peak_bytes`/`peak_us` (the largest state from the start to
`end_us`), `end_bytes` (after the last entry at or before `end_us`), `growth_bytes` (end minus start) and
`survivors_bytes` (the sizes of the step's `alloc` entries, by time, that no `free_completed`
frees: each frees the newest unfreed alloc at its address) and `open` (no END: the snapshot was
taken during the step, whose `end_us` is then the last entry's time); `leak` is the verdict over
them, defined at `leak()` below.
"""
import gzip
import json
import pickle
import re
import sys

LIVE = ("active_allocated", "active_pending_free", "active_awaiting_free")
ALLOC_DELTA = {"alloc": 1, "free_completed": -1}
RESERVE_DELTA = {"segment_alloc": 1, "segment_map": 1, "segment_free": -1, "segment_unmap": -1}


class DataOnly(pickle.Unpickler):
    """A snapshot is plain data: refuse any class or function the pickle names."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError("the snapshot names %s.%s; a snapshot holds data only" % (module, name))


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        return DataOnly(f).load()


def requested(block):
    """What a block asked for: `requested_size`, else (2.0's chain) its newest history entry's
    `real_size`, else (1.13) its size."""
    if "requested_size" in block:
        return block["requested_size"]
    if block.get("history"):
        return block["history"][0]["real_size"]
    return block["size"]


def block_frames(block):
    if "frames" in block:
        return block["frames"]
    if block.get("history"):
        return block["history"][0].get("frames", [])
    return []


# memory_viz's `_frame_filter` (torch/cuda/_memory_viz.py), applied to the `top` frames only.
OMIT_FUNCTIONS = ("unwind::unwind", "CapturedTraceback::gather", "gather_with_cpp", "_start",
                  "__libc_start_main", "PyEval_", "PyObject_", "PyFunction_")
OMIT_FILES = ("core/boxing", "/Register", "/Redispatch", "pythonrun.c", "Modules/main.c",
              "Objects/call.c", "Objects/methodobject.c", "pycore_ceval.h", "ceval.c",
              "cpython/abstract.h")


def memviz_keep(f):
    return not any(o in f["name"] for o in OMIT_FUNCTIONS) and not any(o in f["filename"] for o in OMIT_FILES)


LIBRARY = ("/site-packages/", "/dist-packages/", "/torch/", "/torchinductor_", "/_inductor/",
           "<frozen ", "/lib/python3", "/lib64/python3")
NATIVE = (".c", ".h", ".cpp", ".cc", ".cu", ".cuh", ".hpp")


def stdlib(name):
    """Whether a path (lower case, `/` separators) is the interpreter's own library: under
    lib/python3.x (POSIX), or a `lib` folder inside a Python install on Windows
    (`.../python311/lib/copy.py`, `.../cpython-3.10.19-windows-x86_64-none/lib/copy.py`)."""
    parts = name.split("/")
    for i, p in enumerate(parts[:-1]):
        if p == "lib" and i > 0 and (parts[i - 1].startswith("python") or parts[i - 1].startswith("cpython")):
            return True
    return False


def who(frames):
    """Who made an allocation (issue 25, "Who, on real stacks"), innermost first:
    1. the innermost user Python frame: line > 0, a `.py` file, and, with `\\` read as `/`
       (Windows) and ignoring case, a path with none of /site-packages/, /dist-packages/,
       /torch/, /torchinductor_ (generated code of inductor's cache), /_inductor/, <frozen,
       /lib/python3 and no Windows Python install's lib (the standard library). Written
       `FILE(LINE): NAME` with FILE as the snapshot has it;
    2. else, on a C++-only (or library-only) stack, the innermost autograd node
       (`torch::autograd::generated::BmmBackward0::apply`) with the outermost dispatcher op
       it called (the last `at::_ops::bmm::call` inside it): `backward: BmmBackward0 > bmm`,
       `backward: BmmBackward0` when it called none;
    3. else the outermost dispatcher op: `op: index_Tensor` (`backward: sum_dim_IntList` on the
       autograd engine's thread, a frame of torch::autograd::Engine on the stack);
    4. else null."""
    for f in frames:
        name = f["filename"].replace("\\", "/").lower()
        if f["line"] <= 0 or f["line"] >= 1 << 63 or not name.endswith(".py"):
            continue
        if any(lib in name for lib in LIBRARY) or stdlib(name):
            continue
        return "%s(%d): %s" % (f["filename"], f["line"], f["name"])
    ops = []  # (index, op name), innermost first
    for i, f in enumerate(frames):
        m = re.search(r"at::_ops::(\w+)::(call|redispatch)", f["name"])
        if m:
            ops.append((i, m.group(1)))
    for i, f in enumerate(frames):
        m = re.search(r"torch::autograd::(?:generated::)?(\w+)::apply\b", f["name"])
        if m:
            inner = [op for j, op in ops if j < i]
            return "backward: %s > %s" % (m.group(1), inner[-1]) if inner else "backward: %s" % m.group(1)
    if ops:
        # on the autograd engine's thread, an op with no node above it is still backward's
        engine = any("torch::autograd::Engine::" in f["name"] for f in frames)
        return "%s: %s" % ("backward" if engine else "op", ops[-1][1])
    return None


def memviz_stats(segments):
    """memory_viz's `segsum` (`python -m torch.cuda._memory_viz stats`), torch/cuda/_memory_viz.py:

        for b in seg['blocks']:
            active = b['state'] == 'active_allocated'
            if active:
                _, allocated_size = _block_extra(b)     # requested_size (legacy: history[0].real_size)
                seg_allocated += allocated_size
                seg_free_internal += b['size'] - allocated_size
            else:
                seg_free_external += b['size']
        ...
        assert free_internal + free_external + total_allocated == total_reserved

    "internal free memory which occurs because the allocator rounds the allocation size, and
    external free memory, which are the gaps between allocations in a segment". Note that only
    `active_allocated` counts as allocated there: a block pending its free is external free, and
    so is every block of a segment with nothing allocated. `external_free_in_used_segments` is the
    part of external free in segments holding an `active_allocated` block (gaps proper), and
    `external_free_in_unused_segments` the rest (whole segments the allocator could release)."""
    out = {"segments": len(segments), "total_reserved": 0, "total_allocated": 0, "free_internal": 0,
           "free_external": 0, "external_free_in_used_segments": 0, "external_free_in_unused_segments": 0}
    for seg in segments:
        out["total_reserved"] += seg["total_size"]
        alloc = internal = external = 0
        used = False
        for b in seg["blocks"]:
            if b["state"] == "active_allocated":
                used = True
                if "frames" in b:
                    asked = b["requested_size"]
                elif "history" in b:
                    asked = b["history"][0]["real_size"]
                else:
                    asked = b.get("requested_size", b["size"])
                alloc += asked
                internal += b["size"] - asked
            else:
                external += b["size"]
        out["total_allocated"] += alloc
        out["free_internal"] += internal
        out["free_external"] += external
        out["external_free_in_used_segments" if used else "external_free_in_unused_segments"] += external
    out["consistent"] = out["free_internal"] + out["free_external"] + out["total_allocated"] == out["total_reserved"]
    return out


def end_state(segments):
    end = {"segments": len(segments), "reserved_bytes": 0, "live_blocks": 0, "live_size_bytes": 0,
           "live_requested_bytes": 0, "allocated_blocks": 0, "allocated_size_bytes": 0,
           "pending_free_blocks": 0, "pending_free_size_bytes": 0, "free_blocks": 0, "free_bytes": 0,
           "largest_free_bytes": 0, "internal_bytes": 0, "reclaimable_bytes": 0, "stranded_bytes": 0}
    blocks = []
    for seg in segments:
        end["reserved_bytes"] += seg["total_size"]
        offset = 0
        seg_live_req = 0
        live_here = False
        for b in seg["blocks"]:
            addr = b.get("address", seg["address"] + offset)
            offset += b["size"]
            if b["state"] in LIVE:
                live_here = True
                asked = requested(b)
                seg_live_req += asked
                end["live_blocks"] += 1
                end["live_size_bytes"] += b["size"]
                end["live_requested_bytes"] += asked
                end["internal_bytes"] += b["size"] - asked
                if b["state"] == "active_allocated":
                    end["allocated_blocks"] += 1
                    end["allocated_size_bytes"] += b["size"]
                else:
                    end["pending_free_blocks"] += 1
                    end["pending_free_size_bytes"] += b["size"]
                frames = block_frames(b)
                blocks.append({"address": addr, "size": b["size"], "requested_size": asked,
                               "state": b["state"], "stream": seg.get("stream"), "segment": seg["address"],
                               "top": ["%s:%d:%s" % (f["filename"], f["line"], f["name"])
                                       for f in frames if memviz_keep(f)][:3],
                               "frames": len(frames), "history": len(b.get("history") or []),
                               "who": who(frames)})
            else:
                end["free_blocks"] += 1
                end["free_bytes"] += b["size"]
                end["largest_free_bytes"] = max(end["largest_free_bytes"], b["size"])
        if live_here:
            end["stranded_bytes"] += seg["total_size"] - seg_live_req
        else:
            end["reclaimable_bytes"] += seg["total_size"]
    return end, blocks


def annotations(snap):
    """START/END records paired by name and device, in time order."""
    ranges, open_ = [], {}
    for a in snap.get("external_annotations", []) if isinstance(snap, dict) else []:
        key = (a.get("name"), a.get("device"))
        if a.get("stage") == "START":
            open_.setdefault(key, []).append(a.get("time_us"))
        elif a.get("stage") == "END" and open_.get(key):
            ranges.append({"name": key[0], "device": key[1], "start_us": open_[key].pop(), "end_us": a.get("time_us")})
    for (name, dev), starts in open_.items():
        for s in starts:
            ranges.append({"name": name, "device": dev, "start_us": s, "end_us": None})
    ranges.sort(key=lambda r: (r["start_us"] is None, r["start_us"] or 0))
    return ranges


def window(entries, states, since):
    """The states from `since` on (see the module's docstring)."""
    if since is None or not entries or not all("time_us" in e for e in entries):
        return None
    start = [st for st in states if st[0] < 0 or entries[st[0]]["time_us"] < since][-1]
    best, best_us = start, since
    for st in states:
        if st[0] >= 0 and entries[st[0]]["time_us"] >= since and st[1] > best[1]:
            best, best_us = st, entries[st[0]]["time_us"]
    return {"from_us": since, "start_bytes": start[1], "peak_bytes": best[1], "peak_us": best_us,
            "end_bytes": states[-1][1]}


def device_report(snap, dev, segments, entries, ranges, since=None):
    segs = [s for s in segments if s.get("device", 0) == dev]
    end, live = end_state(segs)
    actions = {}
    net_alloc = net_res = 0
    for e in entries:
        actions[e["action"]] = actions.get(e["action"], 0) + 1
        net_alloc += ALLOC_DELTA.get(e["action"], 0) * e.get("size", 0)
        net_res += RESERVE_DELTA.get(e["action"], 0) * e.get("size", 0)
    has_time = bool(entries) and all("time_us" in e for e in entries)
    base_alloc = end["live_requested_bytes"] - net_alloc
    base_res = end["reserved_bytes"] - net_res

    # The baseline again, by pairing.
    open_allocs, unpaired_frees, unpaired_free_bytes, size_mismatch = {}, 0, 0, 0
    for e in entries:
        if e["action"] == "alloc":
            open_allocs.setdefault(e["addr"], []).append(e["size"])
        elif e["action"] == "free_completed":
            stack = open_allocs.get(e["addr"])
            if stack:
                if stack.pop() != e["size"]:
                    size_mismatch += 1
            else:
                unpaired_frees += 1
                unpaired_free_bytes += e["size"]
    before_blocks = before_bytes = 0
    for b in live:
        stack = open_allocs.get(b["address"])
        if stack:
            stack.pop()
            b["in_trace"] = True
        else:
            b["in_trace"] = False
            before_blocks += 1
            before_bytes += b["requested_size"]
    trace_allocs_without_block = sum(len(s) for s in open_allocs.values())

    def when(i):
        if not entries:
            return None
        e = entries[max(i, 0)]
        return e.get("time_us") if has_time else None

    states = [(-1, base_alloc, base_res)]
    a, r = base_alloc, base_res
    ooms = []
    snapshots = []
    min_alloc, min_res = a, r
    for i, e in enumerate(entries):
        a += ALLOC_DELTA.get(e["action"], 0) * e.get("size", 0)
        r += RESERVE_DELTA.get(e["action"], 0) * e.get("size", 0)
        min_alloc, min_res = min(min_alloc, a), min(min_res, r)
        states.append((i, a, r))
        if e["action"] == "oom":
            ooms.append({"index": i, "time_us": when(i), "size": e.get("size"), "device_free": e.get("device_free"),
                         "allocated_bytes": a, "reserved_bytes": r, "reserved_unallocated_bytes": r - a})
        elif e["action"] == "snapshot":
            snapshots.append({"index": i, "size": e.get("size")})

    def first_max(key):
        best = None
        for s in states:
            if best is None or key(s) > key(best):
                best = s
        return best

    p = first_max(lambda s: s[1])
    mr = first_max(lambda s: s[2])
    mru = first_max(lambda s: s[2] - s[1])
    report = {
        "device": dev,
        "entries": len(entries),
        "actions": actions,
        "time": "time_us" if has_time else ("index" if entries else None),
        "time_decreases": sum(1 for x, y in zip(entries, entries[1:]) if has_time and y["time_us"] < x["time_us"]),
        "end": end,
        "baseline": {"allocated_bytes": base_alloc, "reserved_bytes": base_res,
                     "paired_bytes": unpaired_free_bytes + before_bytes,
                     "agree": unpaired_free_bytes + before_bytes == base_alloc,
                     "frees_without_alloc": unpaired_frees, "frees_without_alloc_bytes": unpaired_free_bytes,
                     "live_blocks_before_trace": before_blocks, "live_bytes_before_trace": before_bytes,
                     "trace_allocs_without_block": trace_allocs_without_block,
                     "free_size_mismatches": size_mismatch},
        "replay_min": {"allocated_bytes": min_alloc, "reserved_bytes": min_res},
        "peak": {"allocated_bytes": p[1], "index": p[0], "time_us": when(p[0]),
                 "reserved_bytes": p[2], "reserved_unallocated_bytes": p[2] - p[1]},
        "end_allocated_bytes": states[-1][1],
        "max_reserved": {"bytes": mr[2], "index": mr[0], "time_us": when(mr[0])},
        "max_reserved_unallocated": {"bytes": mru[2] - mru[1], "index": mru[0], "time_us": when(mru[0])},
        "ooms": ooms,
        "snapshot_entries": [dict(s, live_size_bytes_at_end=end["allocated_size_bytes"]) for s in snapshots],
        "memviz_stats": memviz_stats(segs),
        "live_blocks": live,
    }
    # the alloc entries never freed in the trace: each free_completed frees the newest unfreed
    # alloc at its address (as the baseline's pairing above)
    never_freed, open_at = set(), {}
    for i, e in enumerate(entries):
        if e["action"] == "alloc":
            open_at.setdefault(e["addr"], []).append(i)
            never_freed.add(i)
        elif e["action"] == "free_completed" and open_at.get(e["addr"]):
            never_freed.discard(open_at[e["addr"]].pop())
    steps = []
    for rg in ranges:
        m = re.match(r"ProfilerStep#(\d+)$", rg["name"] or "")
        if not m or not has_time:
            continue
        start, stop = rg["start_us"], rg["end_us"]
        is_open = stop is None  # the snapshot was taken during it: it lasts to the last entry
        if is_open and entries:
            stop = max(e["time_us"] for e in entries)
        before = [s for s in states if s[0] < 0 or entries[s[0]]["time_us"] < start]
        inside = [s for s in states if s[0] >= 0 and start <= entries[s[0]]["time_us"] and (stop is None or entries[s[0]]["time_us"] <= stop)]
        start_state = before[-1]
        best = start_state
        for s in inside:
            if s[1] > best[1]:
                best = s
        made = [i for i in range(len(entries)) if entries[i]["action"] == "alloc" and i in never_freed and
                start <= entries[i]["time_us"] and (stop is None or entries[i]["time_us"] <= stop)]
        end_bytes = (inside[-1] if inside else start_state)[1]
        steps.append({"step": int(m.group(1)), "start_us": start, "end_us": stop,
                      "start_bytes": start_state[1], "peak_bytes": best[1],
                      "peak_us": start if best is start_state else entries[best[0]]["time_us"],
                      "end_bytes": end_bytes, "growth_bytes": end_bytes - start_state[1],
                      "survivors_bytes": sum(entries[i]["size"] for i in made), "open": is_open})
    report["steps"] = steps
    report["leak"] = leak(steps)
    report["window"] = window(entries, states, since)
    return report


def leak(steps):
    """The leak verdict over the steps (in start order) but those the snapshot ends in (no END:
    no step's end to judge): "unknown" on fewer than three;
    "growth" when end_bytes grows from every step to the next (per step: from the first
    step's end to the last's, over the steps between, rounded toward zero); "survivors" when
    every step but the last leaves alloc entries never freed (per step: their mean); else
    "none"."""
    steps = [x for x in steps if not x["open"]]
    if len(steps) < 3:
        return {"verdict": "unknown", "steps": len(steps), "per_step_bytes": None}
    d = len(steps) - 1
    if all(y["end_bytes"] > x["end_bytes"] for x, y in zip(steps, steps[1:])):
        return {"verdict": "growth", "steps": len(steps), "per_step_bytes": int((steps[-1]["end_bytes"] - steps[0]["end_bytes"]) / d)}
    if all(x["survivors_bytes"] > 0 for x in steps[:-1]):
        return {"verdict": "survivors", "steps": len(steps), "per_step_bytes": sum(x["survivors_bytes"] for x in steps[:-1]) // d}
    return {"verdict": "none", "steps": len(steps), "per_step_bytes": None}


def main(argv):
    args = argv[1:]
    device = None
    if "--device" in args:
        i = args.index("--device")
        device = int(args[i + 1])
        del args[i:i + 2]
    since = None
    if "--from" in args:
        i = args.index("--from")
        since = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1:
        sys.stderr.write("usage: reference.py FILE [--device N] [--from TS]\n")
        return 2
    snap = load(args[0])
    if isinstance(snap, list):
        segments, traces, shape = snap, [], "list of segments (1.13)"
    else:
        segments, traces, shape = snap.get("segments", []), snap.get("device_traces", []), "dict"
    devices = sorted({s.get("device", 0) for s in segments} | {i for i, t in enumerate(traces) if t})
    if device is not None:
        devices = [device]
    ranges = annotations(snap)
    doc = {"file": args[0].rsplit("/", 1)[-1], "shape": shape,
           "keys": sorted(snap) if isinstance(snap, dict) else None,
           "memviz_stats": memviz_stats(segments),
           "annotations": ranges,
           "devices": [device_report(snap, d, segments, traces[d] if d < len(traces) else [], ranges, since)
                       for d in devices]}
    json.dump(doc, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
