#!/usr/bin/env python3
"""Writes PyTorch memory snapshots of every generation (README "Snapshots"), with pickle
protocols 2 to 5, and the figures hmem must report for each, computed here from the
simulated allocator (never by hmem). Python standard library only: no torch.

  gen.py DIR            the snapshots (DIR/<gen>_p<protocol>.pickle) and DIR/expected.json
  gen.py hostile DIR    the hostile pickles of tests/cli/snap_hostile.t
  gen.py big FILE MB    one snapshot of about MB megabytes (make bench)

Each file is a seeded simulation of a caching allocator on two devices: allocations carved
from segments (rounded up to 512 bytes, new segments of 2 MiB multiples, released when
empty), frees requested then completed (some left pending, in both block-state spellings),
oom entries; the trace keeps only its newest entries (a ring buffer that wrapped), so some
frees have no allocation and some live blocks were allocated before the trace. 2026 files add
a pinned host allocator (host_segments, host_traces: the series "cpu"), say whether the ring
buffer overflowed (allocator_settings.trace_alloc_overflowed), and carry annotate entries,
pool_id, internal_metadata and frames with fx_node_* keys.
"""
import io
import json
import os
import pickle
import pickletools
import random
import sys

MiB = 1 << 20
GENS = ["1.13", "2.0", "2.1", "2.2", "2.3", "2.5", "2.8", "2.10", "2026"]
ROUTE = ["/home/u/proj/train.py", "/home/u/proj/model.py"]


def at_least(gen, v):
    return GENS.index(gen) >= GENS.index(v)


def size_category(b):
    """The size pack's rule (lua/hmem/rules/size.lua), written again here."""
    if b > 5 * 1024 * MiB:
        return "very big (> 5 GiB)"
    if b > 1024 * MiB:
        return "big (> 1 GiB)"
    if b < MiB:
        return "small (< 1 MiB)"
    return "normal"


class Frames:
    """A pool of frame dicts shared between stacks (the pickler writes each once, then
    refers to it through the memo), and which of them is the user's."""

    def __init__(self, rnd, gen):
        self.rnd = rnd
        cpp = at_least(gen, "2026")
        self.noise = [{"filename": "??", "line": 0, "name": "torch::unwind::unwind()"},
                      {"filename": "??", "line": 0, "name": "torch::CapturedTraceback::gather(bool, bool, bool)"},
                      {"filename": "/usr/lib/torch/nn/modules/module.py", "line": 1518, "name": "_call_impl"}]
        if not cpp:
            self.noise = self.noise[2:]
        self.user = [{"filename": ROUTE[i % 2], "line": 10 + i, "name": "step%d" % i} for i in range(6)]
        if at_least(gen, "2026"):
            self.user[0].update(fx_node_op="call_function", fx_node_name="mm_1", fx_node_target="aten.mm.default",
                                fx_original_trace="  File \"model.py\", line 11, in step1")

    def stack(self):
        """(frames innermost first, the user frame as hmem names it, or None)."""
        r = self.rnd
        k = r.randrange(0, 4)
        if k == 0:
            return [dict(self.noise[-1])] if r.random() < 0.5 else [], None
        inner = list(self.noise) if r.random() < 0.7 else []
        u = r.sample(self.user, min(k, len(self.user)))
        f = u[0]
        return inner + u, "%s(%d): %s" % (f["filename"], f["line"], f["name"])


class Device:
    def __init__(self, gen, idx, rnd, frames, clock, host=False):
        self.gen, self.idx, self.rnd, self.frames, self.clock = gen, idx, rnd, frames, clock
        self.host = host            # the pinned host allocator: no device key, no oom entries
        self.expandable = idx == 1 and at_least(gen, "2.1")
        self.segs = []              # dicts: address, total, top, blocks (address order)
        self.next_addr = 0x5500_0000_0000 if host else (0x7f00_0000_0000 + idx * 0x10_0000_0000)
        self.live = {}              # addr -> block
        self.freeable = []          # the active_allocated blocks, for a random choice
        self.hist = []              # (entry, total after, reserved after, kind)
        self.total = 0
        self.reserved = 0
        self.spelling = "active_pending_free" if idx == 0 else "active_awaiting_free"
        self.oom_info = {}          # hist index of an oom entry -> (user frame, segment figures)

    def entry(self, e, kind):
        if at_least(self.gen, "2.2"):
            self.clock[0] += self.rnd.randrange(1, 50)
            e["time_us"] = self.clock[0]
        self.hist.append((e, self.total, self.reserved, kind))

    def ctx(self, e):
        frames, user = self.frames.stack()
        if at_least(self.gen, "2.1") or self.rnd.random() < 0.5:
            e["frames"] = frames
        else:
            user = None
        if at_least(self.gen, "2.8") and self.rnd.random() < 0.2:
            e["compile_context"] = "Torch-Compiled Region: 0/0"
        if at_least(self.gen, "2.10") and self.rnd.random() < 0.2:
            e["user_metadata"] = "phase=fwd"
        if at_least(self.gen, "2026"):
            e["pool_id"] = (0, 0)
            if self.rnd.random() < 0.1:
                e["internal_metadata"] = {"note": "x"}   # a one-key dict: SETITEM
        return user if "frames" in e else None

    def alloc(self, req):
        size = max(512, (req + 511) // 512 * 512)
        seg = self.segs[-1] if self.segs and self.segs[-1]["total"] - self.segs[-1]["top"] >= size else None
        if seg is None:
            total = (size + 2 * MiB - 1) // (2 * MiB) * 2 * MiB
            seg = {"address": self.next_addr, "total": total, "top": 0, "blocks": []}
            self.next_addr += total + 2 * MiB
            self.segs.append(seg)
            self.reserved += total
            act = "segment_map" if self.expandable else "segment_alloc"
            self.entry({"action": act, "addr": seg["address"], "size": total, "stream": 0}, "seg")
        b = {"addr": seg["address"] + seg["top"], "size": size, "req": req, "state": "active_allocated", "seg": seg}
        seg["top"] += size
        seg["blocks"].append(b)
        self.live[b["addr"]] = b
        b["slot"] = len(self.freeable)
        self.freeable.append(b)
        self.total += req
        e = {"action": "alloc", "addr": b["addr"], "size": req, "stream": 0}
        b["user"] = self.ctx(e)
        b["frames"] = e.get("frames", [])
        self.entry(e, "alloc")
        b["entry"] = len(self.hist) - 1
        if at_least(self.gen, "2026") and self.rnd.random() < 0.1:
            self.entry({"action": "annotate", "addr": b["addr"], "size": 0, "stream": 0,
                        "user_metadata": "tagged"}, "other")

    def free(self, pending=False):
        if not self.freeable:
            return
        b = self.freeable[self.rnd.randrange(len(self.freeable))]
        last = self.freeable.pop()
        if last is not b:
            self.freeable[b["slot"]] = last
            last["slot"] = b["slot"]
        e = {"action": "free_requested", "addr": b["addr"], "size": b["req"], "stream": 0}
        self.ctx(e)
        self.entry(e, "other")
        if pending:
            b["state"] = self.spelling
            b["seg"]["used"] = b["seg"].get("used", 0) - 10**9  # never released
            return
        b["state"] = "inactive"
        del self.live[b["addr"]]
        self.total -= b["req"]
        self.entry({"action": "free_completed", "addr": b["addr"], "size": b["req"], "stream": 0}, "free")
        seg = b["seg"]
        seg["used"] = seg.get("used", 0) + 1
        if seg["used"] == len(seg["blocks"]) and seg is not self.segs[-1] and self.rnd.random() < 0.5:
            self.segs.remove(seg)
            self.reserved -= seg["total"]
            act = "segment_unmap" if self.expandable else "segment_free"
            self.entry({"action": act, "addr": seg["address"], "size": seg["total"], "stream": 0}, "seg")

    def oom(self):
        e = {"action": "oom", "device_free": self.rnd.randrange(0, 64) * MiB, "size": 20 * MiB, "stream": 0}
        user = self.ctx(e)
        self.entry(e, "oom")
        self.oom_info[len(self.hist) - 1] = (user, self.seg_figures())

    def seg_figures(self, end=False):
        """The segments now (README "Snapshots"): live blocks are those not inactive (a
        pending free is still live); a segment without one is reclaimable, the rest of a
        segment with one is stranded (free blocks and the live blocks' rounding)."""
        f = {"segments": len(self.segs), "reserved_bytes": self.reserved, "requested_bytes": 0,
             "reclaimable_bytes": 0, "stranded_bytes": 0}
        if end:
            f.update(allocated_bytes=0, pending_free_bytes=0, free_bytes=0, largest_free_bytes=0,
                     internal_waste_bytes=0)
        for s in self.segs:
            live = [b for b in s["blocks"] if b["state"] != "inactive"]
            req = sum(b["req"] for b in live)
            f["requested_bytes"] += req
            if live:
                f["stranded_bytes"] += s["total"] - req
            else:
                f["reclaimable_bytes"] += s["total"]
            if end:
                free = [b["size"] for b in s["blocks"] if b["state"] == "inactive"] + [s["total"] - s["top"]]
                f["allocated_bytes"] += sum(b["size"] for b in live if b["state"] == "active_allocated")
                f["pending_free_bytes"] += sum(b["size"] for b in live if b["state"] != "active_allocated")
                f["free_bytes"] += sum(free)
                f["largest_free_bytes"] = max([f["largest_free_bytes"]] + free)
                f["internal_waste_bytes"] += sum(b["size"] - b["req"] for b in live)
        return f

    def run(self, steps):
        r = self.rnd
        for _ in range(steps):
            x = r.random()
            if x < 0.5:
                self.alloc(r.randrange(1, 2048) * 4 if r.random() < 0.6 else r.randrange(1, 48) * MiB + r.randrange(0, 4096))
            elif x < 0.93:
                self.free()
            elif x < 0.96:
                self.free(pending=True)
            elif at_least(self.gen, "2.0") and not self.host:
                self.oom()

    def segments(self):
        out = []
        for s in self.segs:
            blocks = []
            for b in s["blocks"]:
                d = {"size": b["size"], "state": b["state"]}
                if at_least(self.gen, "2.0"):
                    d["requested_size"] = b["req"]
                if at_least(self.gen, "2.1"):
                    d["address"] = b["addr"]
                    d["frames"] = b["frames"] if b["state"] != "inactive" else []
                elif b["state"] != "inactive":
                    d["history"] = [{"addr": b["addr"], "real_size": b["req"], "frames": b["frames"]}]
                blocks.append(d)
            if s["top"] < s["total"]:
                tail = {"size": s["total"] - s["top"], "state": "inactive"}
                if at_least(self.gen, "2.0"):
                    tail["requested_size"] = 0
                if at_least(self.gen, "2.1"):
                    tail["address"] = s["address"] + s["top"]
                    tail["frames"] = []
                blocks.append(tail)
            g = {"device": self.idx, "address": s["address"], "total_size": s["total"], "stream": 0, "blocks": blocks}
            if self.host:
                del g["device"]
            if at_least(self.gen, "2.0"):
                act = [b for b in s["blocks"] if b["state"] != "inactive"]
                g.update(allocated_size=sum(b["size"] for b in act if b["state"] == "active_allocated"),
                         active_size=sum(b["size"] for b in act), requested_size=sum(b["req"] for b in act),
                         segment_type="large" if s["total"] > 2 * MiB else "small")
            if at_least(self.gen, "2.1"):
                g.update(segment_pool_id=(0, 0), is_expandable=self.expandable, frames=[])
            out.append(g)
        return out

    def expected(self, keep):
        """What hmem must say of this device when the trace keeps the newest `keep` entries
        (the state before the window is the simulation's own, not a difference hmem makes)."""
        w = max(0, len(self.hist) - keep)
        start_total = self.hist[w - 1][1] if w else 0
        start_res = self.hist[w - 1][2] if w else 0
        mem = [h for h in self.hist[w:] if h[3] in ("alloc", "free")]
        seg_events = [h for h in self.hist[w:] if h[3] == "seg"]
        # 1.13: no trace. Every live block is a row (issue 25): the alloc entry that made it,
        # or, made before the kept entries (or in 1.13, where its history's newest entry
        # gives real_size and frames), a row live from the start, never freed
        sized = not at_least(self.gen, "2.0")
        if sized:
            mem, seg_events, start_res, start_total = [], [], self.reserved, sum(b["req"] for b in self.live.values())
        end = sum(b["req"] for b in self.live.values())
        cats, frames = {}, {}
        for b in self.live.values():
            c = size_category(b["req"])
            cats[c] = cats.get(c, 0) + b["req"]
            f = b["user"] or "(no user frame)"
            frames[f] = frames.get(f, 0) + b["req"]
        block_rows = sum(1 for b in self.live.values() if (b["entry"] < w or sized) and b["req"])
        ooms = []
        for j in range(w, len(self.hist)):
            if self.hist[j][3] != "oom" or sized:
                continue
            e, total, reserved, _ = self.hist[j]
            user, segs = self.oom_info[j]
            ooms.append({"ts": e.get("time_us", j - w), "bytes": e["size"], "device_free": e["device_free"],
                         "allocated": total, "total_reserved": reserved, "frame": user,
                         "freed_after": sum(h[0]["size"] for h in self.hist[j:] if h[3] == "free"),
                         "segments": segs})
        return {"ooms": ooms, "at_end": self.seg_figures(end=True),
"before_trace_bytes": start_total, "end_bytes": end,
                "peak_bytes": max([start_total] + [h[1] for h in mem]),
                "max_reserved_bytes": max([start_res] + [h[2] for h in mem]),
                "memory_events": 1 + block_rows + len(mem) + len(seg_events), "oom": sum(1 for h in self.hist[w:] if h[3] == "oom"),
                "end_by_size": cats, "end_by_frame": frames}


def snapshot(gen, seed, steps=400, keep=500, nested=False):
    """(the object to pickle, the expected figures by device, record_function ranges, whether
    the ring buffer overflowed: None when the generation does not say)."""
    rnd = random.Random(seed)
    frames = Frames(rnd, gen)
    clock = [1_730_000_000_000_000]
    devs = [Device(gen, i, rnd, frames, clock) for i in range(2)]
    for d in devs:
        d.run(steps)
    segs = [g for d in devs for g in d.segments()]
    exp = {"cuda:%d" % d.idx: d.expected(keep) for d in devs}
    host = None
    if at_least(gen, "2026"):
        host = Device(gen, 2, rnd, frames, clock, host=True)
        host.run(steps)
        exp["cpu"] = host.expected(keep)
    if gen == "1.13":
        return segs, exp, 0, None
    snap = {"segments": segs, "device_traces": [[h[0] for h in d.hist[-keep:]] for d in devs]}
    if at_least(gen, "2.3"):
        snap["allocator_settings"] = {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                                      "garbage_collection_threshold": 0.0, "expandable_segments": False,
                                      "roundup_power2_divisions": {"1": 0}}
    nann = 0
    if at_least(gen, "2.5"):
        t0 = min(d.hist[-keep:][0][0].get("time_us", 0) for d in devs)
        snap["external_annotations"] = [{"name": "## forward ##", "stage": "START", "device": 0, "time_us": t0},
                                        {"name": "## forward ##", "stage": "END", "device": 0, "time_us": t0 + 5000},
                                        {"name": "optimizer", "stage": "START", "device": 0, "time_us": t0 + 6000}]
        nann = 2
    if at_least(gen, "2.10"):
        snap["allocator_settings"]["graph_capture_record_stream_reuse"] = False
    overflowed = None
    if at_least(gen, "2026"):
        # the host allocator's entries as one list, or (nested) one list among empty ones
        ht = [h[0] for h in host.hist[-keep:]]
        snap["host_segments"], snap["host_traces"] = host.segments(), [[], ht] if nested else ht
        overflowed = any(len(d.hist) > keep for d in devs + [host])
        snap["allocator_settings"].update(trace_alloc_overflowed=overflowed, trace_alloc_max_entries=keep)
    return snap, exp, nann, overflowed


def opcodes(data):
    return {op.name for op, _, _ in pickletools.genops(data)}


def write_all(out):
    os.makedirs(out, exist_ok=True)
    expected = {}
    seen = set()
    for i, gen in enumerate(GENS):
        for proto in (2, 3, 4, 5):
            # 2026 with protocol 5: a ring buffer large enough (trace_alloc_overflowed false)
            keep = 10**9 if gen == "2026" and proto == 5 else 500
            obj, exp, nann, over = snapshot(gen, 1000 + i, keep=keep, nested=proto % 2 == 1)
            data = pickle.dumps(obj, protocol=proto)
            seen |= opcodes(data)
            name = "%s_p%d.pickle" % (gen, proto)
            with open(os.path.join(out, name), "wb") as f:
                f.write(data)
            expected[name] = {"generation": gen, "protocol": proto, "annotations": nann, "devices": exp,
                              "overflowed": over}
    # What the files must exercise (else this generator has stopped testing it).
    for op in ("SETITEM", "SETITEMS", "APPEND", "APPENDS", "BINGET", "BINPUT", "MEMOIZE", "LONG1",
               "TUPLE2", "BINFLOAT", "NEWFALSE", "BININT", "BININT1", "BININT2", "FRAME"):
        assert op in seen, "no %s in the generated snapshots" % op
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)


def hostile(out):
    """Pickles hmem must refuse, each at a known byte offset."""
    os.makedirs(out, exist_ok=True)

    class Run:
        def __reduce__(self):
            return (os.system, ("touch " + os.path.join(out, "marker"),))

    def put(name, data):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)

    ok = pickle.dumps({"segments": [], "device_traces": [[{"action": "alloc", "addr": 1, "size": 2}]]}, protocol=4)
    put("os_system.pickle", pickle.dumps({"segments": [], "device_traces": [[{"action": "alloc", "frames": Run()}]]},
                                         protocol=4))
    body = b"\x80\x04}\x94("  # PROTO 4, EMPTY_DICT, MEMOIZE, MARK, then the opcode
    for name, op in [("global", b"cos\nsystem\n"), ("stack_global", b"\x93"), ("reduce", b"R"), ("build", b"b"),
                     ("inst", b"ios\nsystem\n"), ("obj", b"o"), ("newobj", b"\x81"), ("newobj_ex", b"\x92"),
                     ("persid", b"P1\n"), ("binpersid", b"Q"), ("ext1", b"\x82\x01"), ("ext2", b"\x83\x01\x00"),
                     ("ext4", b"\x84\x01\x00\x00\x00"), ("short_binbytes", b"C\x01x"), ("binbytes", b"B\x01\x00\x00\x00x"), ("binbytes8", b"\x8e"),
                     ("empty_set", b"\x8f"), ("frozenset", b"\x91"), ("bytearray8", b"\x96"),
                     ("next_buffer", b"\x97"), ("long4", b"\x8b"), ("string", b"S'x'\n"), ("pop", b"0"),
                     ("dup", b"2"), ("unknown", b"\xff")]:
        put("op_%s.pickle" % name, body + op + b"u.")
    put("truncated.pickle", ok[: len(ok) // 2])
    put("memo_range.pickle", b"\x80\x04]r\xff\xff\xff\x7f.")           # LONG_BINPUT 2^31-1
    put("memo_unset.pickle", b"\x80\x04]\x94h\x05.")                   # BINGET 5, never set
    put("mark_underflow.pickle", b"\x80\x04]\x94e.")                   # APPENDS without MARK
    put("huge_string.pickle", b"\x80\x04\x8d" + (1 << 62).to_bytes(8, "little") + b"x.")
    put("long_string.pickle", b"\x80\x04X\x00\x00\x00\x10abc.")        # 256 MiB declared, 3 there
    put("self_list.pickle", b"\x80\x04]\x94h\x00a.")                    # l = []; l.append(l)
    put("deep.pickle", b"\x80\x04" + b"]" * 100 + b"a" * 99 + b".")
    put("bad_utf8.pickle", b"\x80\x04\x8c\x03a\xffb.")
    put("long1_wide.pickle", b"\x80\x04\x8a\x0a" + b"\x01" * 10 + b".")
    put("proto1.pickle", b"\x80\x01N.")
    put("no_stop.pickle", b"\x80\x04N")
    # a valid pickle that is not a snapshot
    put("not_snapshot.pickle", pickle.dumps([1, 2], protocol=4))
    # every row field a snapshot adds, and a line of 2^64-1 (PyTorch's -1 written unsigned)
    user = {"filename": "/home/u/x.py", "line": (1 << 64) - 1, "name": "f"}
    torch = {"filename": "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", "line": 1, "name": "_call_impl"}
    unwind = {"filename": "??", "line": 0, "name": "torch::unwind::unwind()"}
    seg = {"device": 0, "address": 4096, "total_size": 2 * MiB, "stream": 0, "blocks": [
        {"address": 4096, "size": 512, "requested_size": 100, "state": "active_allocated", "frames": []},
        {"address": 4608, "size": 2 * MiB - 512, "requested_size": 0, "state": "inactive", "frames": []}]}
    entry = {"action": "alloc", "addr": 4096, "size": 100, "stream": 7, "time_us": 1000,
             "frames": [unwind, torch, user], "compile_context": "Torch-Compiled Region: 0/0", "user_metadata": "tag"}
    ann = [{"name": "## forward ##", "stage": "START", "device": 0, "time_us": 900},
           {"name": "## forward ##", "stage": "END", "device": 0, "time_us": 1100}]
    # an OOM whose figures are worked out by hand in tests/cli/snap_oom.t: segment A (1 MiB)
    # keeps a live block of 1 MiB that asked for 1000000 bytes, segment B (4 MiB) held a
    # block of 1500000 bytes at the OOM, freed after it
    seg_a = {"device": 0, "address": MiB, "total_size": 2 * MiB, "stream": 0, "blocks": [
        {"address": MiB, "size": MiB, "requested_size": 1000000, "state": "active_allocated", "frames": []},
        {"address": 2 * MiB, "size": MiB, "requested_size": 0, "state": "inactive", "frames": []}]}
    seg_b = {"device": 0, "address": 4 * MiB, "total_size": 2 * MiB, "stream": 0, "blocks": [
        {"address": 4 * MiB, "size": 2 * MiB, "requested_size": 0, "state": "inactive", "frames": []}]}
    fa = {"filename": "/home/u/a.py", "line": 1, "name": "f"}
    fb = {"filename": "/home/u/b.py", "line": 7, "name": "g"}
    tr = [{"action": "segment_alloc", "addr": MiB, "size": 2 * MiB, "stream": 0, "time_us": 100},
          {"action": "alloc", "addr": MiB, "size": 1000000, "stream": 0, "time_us": 110, "frames": [fa]},
          {"action": "segment_alloc", "addr": 4 * MiB, "size": 2 * MiB, "stream": 0, "time_us": 120},
          {"action": "alloc", "addr": 4 * MiB, "size": 1500000, "stream": 0, "time_us": 130, "frames": [fb]},
          {"action": "oom", "size": 4 * MiB, "device_free": 3 * MiB, "stream": 0, "time_us": 140,
           "frames": [unwind, torch, fb, fa]},
          {"action": "free_requested", "addr": 4 * MiB, "size": 1500000, "stream": 0, "time_us": 150},
          {"action": "free_completed", "addr": 4 * MiB, "size": 1500000, "stream": 0, "time_us": 160}]
    put("oom.pickle", pickle.dumps({"segments": [seg_a, seg_b], "device_traces": [tr]}, protocol=4))
    # an expandable segment mapped in two parts, the OOM between them: no replay to the OOM
    seg_x = {"device": 0, "address": 8 * MiB, "total_size": 4 * MiB, "stream": 0, "is_expandable": True, "blocks": [
        {"address": 8 * MiB, "size": 4 * MiB, "requested_size": 0, "state": "inactive", "frames": []}]}
    tr = [{"action": "segment_map", "addr": 8 * MiB, "size": 2 * MiB, "stream": 0, "time_us": 100},
          {"action": "oom", "size": 4 * MiB, "device_free": 0, "stream": 0, "time_us": 110},
          {"action": "segment_map", "addr": 10 * MiB, "size": 2 * MiB, "stream": 0, "time_us": 120}]
    put("oom_expandable.pickle", pickle.dumps({"segments": [seg_x], "device_traces": [tr]}, protocol=4))
    # 1.13: a list of segments; a live block whose history's newest (first) entry asked for
    # 3000 bytes from c.py, over an older entry of 5000 from d.py; a live block without history
    hist = [{"addr": 0x7000, "real_size": 3000, "frames": [{"filename": "/home/u/c.py", "line": 3, "name": "h"}]},
            {"addr": 0x7000, "real_size": 5000, "frames": [{"filename": "/home/u/d.py", "line": 4, "name": "k"}]}]
    put("legacy.pickle", pickle.dumps([{"device": 0, "address": 0x7000, "total_size": 2 * MiB, "stream": 0, "blocks": [
        {"size": 3072, "state": "active_allocated", "history": hist},
        {"size": 1024, "state": "active_allocated"},
        {"size": 2 * MiB - 4096, "state": "inactive"}]}], protocol=2))
    # pinned host memory only (record_cuda=False), figures worked out by hand in
    # tests/cli/snap3_host.t: one 4 MiB host segment whose first 2 MiB block asked for
    # 1500000 bytes and is live; a free of 1000 bytes the ring buffer kept without its alloc
    # (before trace); a 2 MiB block allocated and freed
    hseg = [{"address": 0x5000_0000, "total_size": 4 * MiB, "stream": 0, "blocks": [
        {"address": 0x5000_0000, "size": 2 * MiB, "requested_size": 1500000, "state": "active_allocated", "frames": []},
        {"address": 0x5000_0000 + 2 * MiB, "size": 2 * MiB, "requested_size": 0, "state": "inactive", "frames": []}]}]
    ht = [{"action": "free_completed", "addr": 0x6000_0000, "size": 1000, "stream": 0, "time_us": 90},
          {"action": "alloc", "addr": 0x5000_0000, "size": 1500000, "stream": 0, "time_us": 100,
           "frames": [{"filename": "/home/u/pin.py", "line": 3, "name": "pin"}]},
          {"action": "alloc", "addr": 0x5000_0000 + 2 * MiB, "size": 2 * MiB, "stream": 0, "time_us": 110},
          {"action": "free_completed", "addr": 0x5000_0000 + 2 * MiB, "size": 2 * MiB, "stream": 0, "time_us": 120}]
    settings = {"trace_alloc_overflowed": True, "trace_alloc_max_entries": 4}
    put("host_only.pickle", pickle.dumps({"host_segments": hseg, "host_traces": ht, "allocator_settings": settings},
                                         protocol=4))
    put("host_two_lists.pickle", pickle.dumps({"segments": [], "device_traces": [], "host_segments": hseg,
                                               "host_traces": [ht[:2], ht[2:]]}, protocol=4))
    put("fields.pickle", pickle.dumps({"segments": [seg], "device_traces": [[entry]], "external_annotations": ann},
                                      protocol=4))
    # issue 25, figures worked out by hand in tests/cli/snap25_*.t: segment 1 (1 MiB) holds A,
    # live since before the trace (500000 asked, block 512 KiB, frames a.py), B, allocated by
    # the trace (200000 in 256 KiB, b.py), and a free block; segment 2 (2 MiB, stream 3) holds D,
    # live since before the trace and pending its free (1000000 in 1 MiB, no frames), and a free
    # MiB; segment 3 (2 MiB) is made by the trace, holds 1500000 bytes from c.py for a while and
    # ends free. The ring buffer kept a free of 4096 bytes without its alloc, and an OOM.
    fc = {"filename": "/home/u/c.py", "line": 9, "name": "k"}
    seg1 = {"device": 0, "address": MiB, "total_size": MiB, "stream": 0, "blocks": [
        {"address": MiB, "size": MiB // 2, "requested_size": 500000, "state": "active_allocated", "frames": [fa]},
        {"address": MiB + MiB // 2, "size": MiB // 4, "requested_size": 200000, "state": "active_allocated", "frames": [fb]},
        {"address": MiB + 3 * MiB // 4, "size": MiB // 4, "requested_size": 0, "state": "inactive", "frames": []}]}
    seg2 = {"device": 0, "address": 4 * MiB, "total_size": 2 * MiB, "stream": 3, "blocks": [
        {"address": 4 * MiB, "size": MiB, "requested_size": 1000000, "state": "active_pending_free", "frames": []},
        {"address": 5 * MiB, "size": MiB, "requested_size": 0, "state": "inactive", "frames": []}]}
    seg3 = {"device": 0, "address": 8 * MiB, "total_size": 2 * MiB, "stream": 0, "blocks": [
        {"address": 8 * MiB, "size": 2 * MiB, "requested_size": 0, "state": "inactive", "frames": []}]}
    tr = [{"action": "free_completed", "addr": 9 * MiB, "size": 4096, "stream": 0, "time_us": 10},
          {"action": "alloc", "addr": MiB + MiB // 2, "size": 200000, "stream": 0, "time_us": 20, "frames": [fb]},
          {"action": "segment_alloc", "addr": 8 * MiB, "size": 2 * MiB, "stream": 0, "time_us": 30},
          {"action": "alloc", "addr": 8 * MiB, "size": 1500000, "stream": 0, "time_us": 40, "frames": [fc]},
          {"action": "free_requested", "addr": 8 * MiB, "size": 1500000, "stream": 0, "time_us": 50},
          {"action": "free_completed", "addr": 8 * MiB, "size": 1500000, "stream": 0, "time_us": 55},
          {"action": "oom", "size": 4 * MiB, "device_free": MiB, "stream": 0, "time_us": 60}]
    put("ring25.pickle", pickle.dumps({"segments": [seg1, seg2, seg3], "device_traces": [tr]}, protocol=4))
    # the same segments with no trace entry (history not recorded, or include_traces=False)
    put("segonly25.pickle", pickle.dumps({"segments": [seg1, seg2, seg3], "device_traces": [[]]}, protocol=4))


def big(path, mb):
    """One snapshot of about mb megabytes: many entries with shared frames."""
    steps = 1000
    obj = snapshot("2.10", 7, steps=steps, keep=10**9)[0]
    size = len(pickle.dumps(obj, protocol=4))
    steps = int(steps * mb * 1e6 / size)
    obj = snapshot("2.10", 7, steps=steps, keep=10**9)[0]
    with open(path, "wb") as f:
        pickle.dump(obj, f, protocol=4)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "hostile":
        hostile(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "big":
        big(sys.argv[2], float(sys.argv[3]))
    elif len(sys.argv) == 2:
        write_all(sys.argv[1])
    else:
        sys.exit(__doc__)
