#!/usr/bin/env python3
"""What issue 25 holds hmem to, from a snapshot alone (Python's standard library, no hmem code).

  replay25.py FILE [--device N] [--from TS]

Reads FILE with pickle (refusing any class: a snapshot is plain data) and prints one figure a
line, "name value", for device N (0 by default):

  rows            alloc entries + live blocks (allocated, or pending a free) that no unfreed
                  alloc entry made: every live block is a row (hmem's allocs)
  baseline        bytes live before the first entry: live requested bytes at the end minus the
                  entries' net change (alloc + size, free_completed - size)
  peak            the largest allocated state (the baseline, then after each entry), first reached
  peak_us         its time: the entry's time_us, its index without one, the first entry's for the
                  baseline
  gap_at_peak     reserved - allocated there; reserved replays segment_alloc/map (+) and
                  segment_free/unmap (-) from the segments' total minus their net change
  max_gap         the largest reserved - allocated, and max_gap_us when it is first reached
  ooms            reserved - allocated at each oom entry, comma-separated
  memviz_internal memory_viz stats' internal free (torch/cuda/_memory_viz.py segsum: over blocks
                  active_allocated, size - requested_size)
  memviz_external its external free (the size of every other block)

With --from TS (µs), the window from TS: `open` the state after the last entry before TS, then
`peak` and `peak_us` over the entries from TS on (the opening state included, at TS).
"""
import gzip
import pickle
import sys

LIVE = ("active_allocated", "active_pending_free", "active_awaiting_free")


class Data(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("not a snapshot: names %s.%s" % (module, name))


def load(path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open if gz else open)(path, "rb") as f:
        return Data(f).load()


def asked(b):
    if "requested_size" in b:
        return b["requested_size"]
    return b["history"][0]["real_size"] if b.get("history") else b["size"]


def main(argv):
    args = argv[1:]
    dev, frm = 0, None
    if "--device" in args:
        i = args.index("--device")
        dev = int(args[i + 1])
        del args[i:i + 2]
    if "--from" in args:
        i = args.index("--from")
        frm = int(args[i + 1])
        del args[i:i + 2]
    snap = load(args[0])
    segs = snap if isinstance(snap, list) else snap.get("segments", [])
    traces = [] if isinstance(snap, list) else snap.get("device_traces", [])
    entries = traces[dev] if dev < len(traces) else []
    segs = [s for s in segs if s.get("device", 0) == dev]
    live, reserved, internal, external = [], 0, 0, 0
    for s in segs:
        reserved += s["total_size"]
        at = s["address"]
        for b in s["blocks"]:
            addr = b.get("address", at)
            at = addr + b["size"]
            if b["state"] in LIVE:
                live.append((addr, asked(b)))
            if b["state"] == "active_allocated":
                internal += b["size"] - asked(b)
            else:
                external += b["size"]
    sign = {"alloc": 1, "free_completed": -1}
    rsign = {"segment_alloc": 1, "segment_map": 1, "segment_free": -1, "segment_unmap": -1}
    net = sum(sign.get(e["action"], 0) * e["size"] for e in entries)
    rnet = sum(rsign.get(e["action"], 0) * e["size"] for e in entries)
    a, r = sum(x for _, x in live) - net, reserved - rnet
    open_ = {}  # address -> unfreed alloc entries there
    for e in entries:
        if e["action"] == "alloc":
            open_[e["addr"]] = open_.get(e["addr"], 0) + 1
        elif e["action"] == "free_completed" and open_.get(e["addr"]):
            open_[e["addr"]] -= 1
    made = sum(1 for addr, x in live if x and not open_.get(addr))
    allocs = sum(1 for e in entries if e["action"] == "alloc")

    def t(i):
        return entries[max(i, 0)].get("time_us", max(i, 0)) if entries else 0

    out = [("rows", allocs + made), ("baseline", a)]
    states = [(-1, a, r)]
    ooms = []
    for i, e in enumerate(entries):
        a += sign.get(e["action"], 0) * e["size"]
        r += rsign.get(e["action"], 0) * e["size"]
        states.append((i, a, r))
        if e["action"] == "oom":
            ooms.append(r - a)
    if frm is not None:
        before = [s for s in states if s[0] < 0 or t(s[0]) < frm]
        inside = [before[-1]] + [s for s in states if s[0] >= 0 and t(s[0]) >= frm]
        best = max(inside, key=lambda s: s[1])
        best = next(s for s in inside if s[1] == best[1])
        print("open", before[-1][1])
        print("peak", best[1])
        print("peak_us", frm if best is inside[0] else t(best[0]))
        return 0
    peak = next(s for s in states if s[1] == max(x[1] for x in states))
    gap = next(s for s in states if s[2] - s[1] == max(x[2] - x[1] for x in states))
    out += [("peak", peak[1]), ("peak_us", t(peak[0])), ("gap_at_peak", peak[2] - peak[1]),
            ("max_gap", gap[2] - gap[1]), ("max_gap_us", t(gap[0])), ("ooms", ",".join(map(str, ooms)) or "-"),
            ("memviz_internal", internal), ("memviz_external", external)]
    for k, v in out:
        print(k, v)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
