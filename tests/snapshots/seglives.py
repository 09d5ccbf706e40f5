#!/usr/bin/env python3
"""The segments' lives the --html page draws a snapshot's allocator state from (issue 27),
against a replay of the pickle alone.

Usage: tests/snapshots/seglives.py HMEM [SNAPSHOT...]  (TAP lines)
Without SNAPSHOT: the real snapshots of tests/data/snapshots and of the folders named in
HMEM_REAL_SNAPSHOTS (colon-separated), and synthetic ones made here.

From each pickle (Python's stdlib, refusing any class), each device's trace is replayed
forwards, written from the issue and PyTorch's documentation, not from hmem's code: a
segment_alloc (or segment_map) entry makes a segment at its address, alive until the
segment_free (or segment_unmap) of that address and size; a segment given back that no
entry made was made before recording; a segment of the snapshot's `segments` is alive at
the end, made by the entry that made it at its address and size, else before recording,
with its stream and segment_pool_id. Where that does not hold together (an expandable
segment mapped in parts and given back in others, a segment made twice, one made and
neither given back nor at the end) the page must say the entries do not replay and show
only the end's segments. The page's table (its data's "segview" per series) must hold
exactly these lives: address, size, stream, pool, and the times of the entries that made
and gave back each (µs since the epoch, as time_us; compared only when every entry has
one).
"""
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile

from who import load, real_snapshots  # the pickle read with no class allowed; the real snapshots


def pool_of(seg):
    p = seg.get("segment_pool_id")
    return "%d,%d" % tuple(p) if isinstance(p, (tuple, list)) and len(p) == 2 else None


def lives(snap):
    """{device: (replays, [(addr, size, stream, pool, made_us, gone_us)])}, in address order,
    then the earlier life first."""
    out = {}
    traces = snap.get("device_traces") or []
    devices = {g.get("device", 0) for g in snap.get("segments", [])}
    for dev in sorted(devices):
        ends = [g for g in snap.get("segments", []) if g.get("device", 0) == dev]
        entries = traces[dev] if dev < len(traces) else []
        made, done, ok = {}, [], True
        for e in entries:
            a = e.get("action")
            if a in ("segment_alloc", "segment_map"):
                if e["addr"] in made:
                    ok = False
                made[e["addr"]] = [e["addr"], e["size"], e.get("stream"), None, e.get("time_us"), None]
            elif a in ("segment_free", "segment_unmap"):
                life = made.pop(e["addr"], None)
                if life is None:
                    life = [e["addr"], e["size"], e.get("stream"), None, None, None]
                elif life[1] != e["size"]:
                    ok = False
                life[5] = e.get("time_us")
                done.append(life)
        end_lives = []
        for g in ends:
            life = made.pop(g["address"], None)
            if life is not None and life[1] != g["total_size"]:
                ok = False
            born = life[4] if life else None
            end_lives.append([g["address"], g["total_size"], g.get("stream"), pool_of(g), born, None])
        if made:  # made, never given back, yet not at the end
            ok = False
        if not ok:
            end_lives = [[l[0], l[1], l[2], l[3], None, None] for l in end_lives]
            done = []
        all_lives = sorted((tuple(l) for l in end_lives + done),
                           key=lambda l: (l[0], -1 if l[4] is None else l[4]))
        out[dev] = (ok, all_lives)
    return out


def timed(snap):
    return all("time_us" in e for t in snap.get("device_traces") or [] for e in t)


def page_lives(hmem, path, tmp):
    page = os.path.join(tmp, "p.html")
    r = subprocess.run([hmem, "run", "-q", "size", path, "--html", page], capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    with open(page, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'<script id=hmem-data type="application/json">\n(.*?)\n</script>', text, re.S)
    data = json.loads(m.group(1))
    out = {}
    for s in data["series"]:
        if not s["device"].startswith("cuda:") or "segview" not in s:
            continue
        v, t0 = s["segview"], s["t0"]
        whole, _, frac = t0.partition(".")
        t0_ns = int(whole) * 1000 + int((frac + "000")[:3]) * (-1 if whole.startswith("-") else 1)

        def us(ns):
            return None if ns is None else (t0_ns + ns) // 1000
        out[int(s["device"][5:])] = (v["replay"], [
            (v["a"][i], v["z"][i], v["st"][i], v["pl"][i], us(v["bt"][i]), us(v["dt"][i])) for i in range(len(v["a"]))])
    return out, None


def synthetic(tmp):
    """Snapshots whose segment entries make, give back and remake segments, one whose
    expandable segment is mapped in parts, one with a free of a segment made before."""
    MiB = 1 << 20

    def seg(addr, size, blocks=(), pool=(0, 0), stream=0):
        return {"device": 0, "address": addr, "total_size": size, "stream": stream, "segment_pool_id": pool,
                "segment_type": "large", "allocated_size": 0, "active_size": 0, "requested_size": 0,
                "blocks": list(blocks) or [{"size": size, "state": "inactive", "address": addr, "frames": []}]}

    def ent(action, addr, size, t, stream=0):
        return {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": t}
    cases = {}
    base = 0x7f0000000000
    # made, given back, remade at the same address; another made before recording and given
    # back; a third made in the trace and live at the end, in pool (0, 2) on stream 7
    cases["remade"] = {
        "segments": [seg(base, 20 * MiB), seg(base + 64 * MiB, 2 * MiB, pool=(0, 2), stream=7)],
        "device_traces": [[
            ent("segment_alloc", base, 20 * MiB, 1000), ent("alloc", base, 4 * MiB, 1001), ent("free_completed", base, 4 * MiB, 1002),
            ent("segment_free", base, 20 * MiB, 1003), ent("segment_free", base + 32 * MiB, 20 * MiB, 1004),
            ent("segment_alloc", base, 20 * MiB, 1005), ent("segment_alloc", base + 64 * MiB, 2 * MiB, 1006, stream=7)]]}
    # an expandable segment mapped in two parts, one part unmapped: the end holds the first
    cases["expandable"] = {
        "segments": [seg(base, 2 * MiB)],
        "device_traces": [[ent("segment_map", base, 4 * MiB, 2000), ent("segment_unmap", base + 2 * MiB, 2 * MiB, 2001)]]}
    paths = []
    for name, s in cases.items():
        p = os.path.join(tmp, name + ".pickle")
        with open(p, "wb") as f:
            pickle.dump(s, f, protocol=4)
        paths.append(p)
    return paths


def main(argv):
    hmem, paths = argv[0], argv[1:]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        if not paths:
            paths = synthetic(tmp) + real_snapshots()
        for path in paths:
            name = path.rsplit("/", 1)[-1]
            snap = load(path)
            want = lives(snap)
            got, err = page_lives(hmem, path, tmp)
            if got is None:
                results.append((False, "%s: hmem writes the page" % name, err))
                continue
            for dev, (ok, lv) in sorted(want.items()):
                g_ok, g_lv = got.get(dev, (None, None))
                if not timed(snap):  # entry numbers, not times: compare which are known
                    lv = [l[:4] + (l[4] is not None, l[5] is not None) for l in lv]
                    g_lv = g_lv and [l[:4] + (l[4] is not None, l[5] is not None) for l in g_lv]
                made = sum(1 for l in lv if l[4] is not None and l[4] is not False)
                gone = sum(1 for l in lv if l[5] is not None and l[5] is not False)
                detail = None
                if g_ok != ok or g_lv != lv:
                    diff = [(w, g) for w, g in zip(lv, g_lv or []) if w != g][:3]
                    detail = "replays: page %s, pickle %s; %d lives on the page, %d from the pickle; first differences %s" % (
                        g_ok, ok, len(g_lv or []), len(lv), diff)
                results.append((detail is None, "%s cuda:%d: the page's %d segment lives (%d made in the trace, %d given back%s) "
                                "are the pickle's" % (name, dev, len(lv), made, gone, "" if ok else "; not replayable, said so"),
                                detail))
    print("1..%d" % len(results))
    failed = 0
    for ok, name, detail in results:
        print(("ok - " if ok else "not ok - ") + name + ("" if ok or not detail else " (%s)" % detail))
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
