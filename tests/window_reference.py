#!/usr/bin/env python3
"""An independent replay of windows, steps, OOMs, leak verdicts and allocator gaps (issue 26).

It shares no code with hmem (Python's standard library only; it reads the trace file, never
hmem's output, to compute) and is written from README (Running: windows; Reports and Outputs:
steps, leak, OOMs, reserved but unallocated; Semantics). For every trace given, and every
window form, it runs `hmem run size TRACE [window] --json -` and compares, per series:

  memory_events, before_trace_bytes, peak_bytes, peak_ts, end_bytes,
  reserved_unallocated_at_peak, max_reserved_unallocated(_ts),
  every step (step, start_ts, end_ts, start_bytes, peak_bytes, peak_ts, end_bytes,
  growth_bytes, survivors_bytes, partial), the leak verdict (verdict, steps, per_step_bytes,
  and the bytes made_by names), and every OOM (ts, bytes, total_allocated, total_reserved,
  reserved_unallocated, allocated, freed_after).

Definitions (this file's own, from the README):

- Memory events are ph i/I named "[memory]", stable-sorted by exact ts in integer ns (file
  order for ties); a series is one (Device Type, Device Id). A free with an Addr pairs with
  the latest live allocation at that Addr of the same size; one with an Addr and no such
  allocation freed memory from before the trace (it holds its size from the start).
- The start of the whole series (rule 5): Total Allocated of the first event that has it,
  minus the signed sizes up to and including it, minus the before-trace frees; plus those
  frees. Without Total Allocated: the least amount (0 or more) that keeps the total,
  before-trace frees included, non-negative.
- A window [from, to] (ns, closed; an open side is unbounded) keeps the series' events in it.
  Its start is the whole series' total just before its first event (what was live at the
  opening, whatever the trace records); the total then moves by each event's bytes. --steps
  A-B opens at the earliest start of a ProfilerStep#N slice with A <= N <= B and closes at
  the latest end of one; a trace without any keeps nothing (start 0). --from/--to T is ms
  since the trace's first timed event that is not metadata, ts:T the trace's own us.
- Peak: the largest of the start and the total after each event, first reached; its time
  is that event's, the first event's when it is the start, the window's opening (or the
  trace's first time) when the window has no event of the series.
- Steps: every host ProfilerStep#N slice (categories kernel, Kernel, Memcpy, Memset, Trace
  and gpu_* are device-side) inside the window or overlapping it by more than an edge (a
  step ending where the window opens is not in it), by start then longer first; one the
  window cuts is partial and runs from/to the window's edge. start_bytes: the total after the
  last event before its start; end_bytes: after the last event at or before its end; peak from
  its start over the events in between (peak_ts its start when the start); survivors: bytes of
  its allocations not freed in the window (null without Addr).
- Leak: over the whole (not partial) steps; fewer than 3: unknown. growth when end_bytes
  rises strictly at every step (per step: (last end - first end) / (steps - 1), truncated);
  else survivors when every whole step but the last has survivors > 0 (per step: their sum
  / (steps - 1), truncated); else none. made_by sums the survivors of the whole steps but the
  first and the last (nothing without Addr): its bytes must add up to that (at most, when
  5 names are listed).
- OOMs: the [OutOfMemory] events of the device inside the window, in time order. allocated:
  the total after the memory events before it, at its ts only those earlier in the file;
  freed_after: the bytes freed in the window after those; reserved_unallocated: Total
  Reserved - Total Allocated of the event, null when absent or negative.
- Allocator gaps (not on a CPU): Total Reserved - Total Allocated of each event of the window
  that has both, null when negative; the largest (first reached) and its ts, and the one at
  the peak event (when the peak is the start: the first of the zero-byte events before the
  first that changes the total, else null).

Usage: tests/window_reference.py [HMEM]   (default ./hmem; prints TAP, "1..N" last)
"""
import gzip
import json
import os
import subprocess
import sys
from decimal import Decimal

HMEM = sys.argv[1] if len(sys.argv) > 1 else "./hmem"
DEVICE_NAMES = {1: "cuda", 6: "hip", 12: "xpu", 13: "mps", 20: "privateuseone"}
DEVICE_SIDE = {"kernel", "Kernel", "Memcpy", "Memset", "Trace"}
results = []


def ns(v):
    """Integer ns of a time in us (an int, or a Decimal with at most three decimals)."""
    if v is None:
        return None
    return int(Decimal(v) * 1000)


def device(dtype, did):
    if dtype == 0:
        return "cpu"
    return "%s:%d" % (DEVICE_NAMES.get(dtype, "type%d" % dtype), did)


def trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def step_number(name):
    if not isinstance(name, str) or not name.startswith("ProfilerStep#"):
        return None
    d = name[13:]
    if not d.isdigit() or not d.isascii() or int(d) > 2**31 - 1:
        return None
    return int(d)


class Trace:
    def __init__(self, path):
        self.path = path
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as f:
            doc = json.loads(f.read(), parse_float=Decimal)
        events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
        self.first = None
        self.mem, self.ooms, self.steps = [], [], []
        for e in events or []:
            if not isinstance(e, dict):
                continue
            ph, ts = e.get("ph"), e.get("ts")
            if isinstance(ts, (int, Decimal)) and not isinstance(ts, bool) and ph != "M":
                t = ns(ts)
                self.first = t if self.first is None else min(self.first, t)
            if ph in ("i", "I") and e.get("name") in ("[memory]", "[OutOfMemory]"):
                a = e.get("args") or {}
                ev = {
                    "ts": ns(ts), "bytes": int(a.get("Bytes", 0)), "addr": a.get("Addr"),
                    "ta": a.get("Total Allocated"), "tr": a.get("Total Reserved"),
                    "dev": (int(a.get("Device Type", 0)), int(a.get("Device Id", -1))),
                }
                if e["name"] == "[memory]":
                    ev["file"] = len(self.mem)
                    self.mem.append(ev)
                else:
                    ev["mem_at"] = len(self.mem)
                    self.ooms.append(ev)
            elif ph == "X":
                cat = e.get("cat")
                if isinstance(cat, str) and (cat in DEVICE_SIDE or cat.startswith("gpu_")):
                    continue
                n = step_number(e.get("name"))
                if n is not None and ts is not None and e.get("dur") is not None:
                    self.steps.append((n, ns(ts), ns(ts) + ns(e["dur"])))
        self.steps.sort(key=lambda s: (s[1], -s[2]))
        self.series = {}
        for ev in sorted(self.mem, key=lambda x: (x["ts"], x["file"])):
            self.series.setdefault(ev["dev"], []).append(ev)
        for evs in self.series.values():
            pair(evs)


def pair(evs):
    """Rules 2-4 on one series: each event's partner (an index) and before-trace frees."""
    live = {}
    for k, ev in enumerate(evs):
        ev["partner"], ev["before"] = None, False
        if ev["addr"] is None or ev["bytes"] == 0:
            continue
        stack = live.setdefault(ev["addr"], [])
        if ev["bytes"] > 0:
            stack.append(k)
            continue
        for j in range(len(stack) - 1, -1, -1):
            if evs[stack[j]]["bytes"] == -ev["bytes"]:
                a = stack.pop(j)
                ev["partner"], evs[a]["partner"] = a, k
                break
        else:
            ev["before"] = True


def rule5(evs):
    held = sum(-e["bytes"] for e in evs if e["before"])
    run, low = 0, 0
    for e in evs:
        run += e["bytes"]
        low = min(low, run)
        if e["ta"] is not None:
            return int(e["ta"]) - run
    return max(0, -(held + low)) + held


def gap(reserved, allocated):
    if reserved is None or allocated is None:
        return None
    g = int(reserved) - int(allocated)
    return g if g >= 0 else None


def window_bounds(t, form):
    """[from, to] in ns for a window form, or None for none; "empty" when no steps match."""
    lo, hi = -(2**63), 2**63 - 1
    kind = form[0]
    if kind == "none":
        return None
    if kind == "steps":
        a, b = form[1], form[2]
        sel = [s for s in t.steps if a <= s[0] <= b]
        if not sel:
            return "empty"
        return (min(s[1] for s in sel), max(s[2] for s in sel))
    base = t.first or 0

    def side(v, default):
        if v is None:
            return default
        if v.startswith("ts:"):
            return ns(Decimal(v[3:]))
        return base + int(Decimal(v) * 1000000)
    return (side(form[1], lo), side(form[2], hi))


def expect(t, form):
    """The report per device, as this file defines it."""
    w = window_bounds(t, form)
    out = {}
    for dev, full in sorted(t.series.items()):
        has_addr = any(e["addr"] is not None and e["bytes"] != 0 for e in full)
        start = rule5(full)
        if w is None:
            evs, base_ts, lo, hi = list(full), None, None, None
            partner = [e["partner"] for e in full]
        elif w == "empty":
            evs, start, base_ts, lo, hi = [], 0, t.first or 0, 1, 0
            partner = []
        else:
            lo, hi = w
            ks = 0
            while ks < len(full) and full[ks]["ts"] < lo:
                start += full[ks]["bytes"]
                ks += 1
            ke = ks
            while ke < len(full) and full[ke]["ts"] <= hi:
                ke += 1
            evs = full[ks:ke]
            partner = [e["partner"] - ks if e["partner"] is not None and ks <= e["partner"] < ke else None for e in evs]
            first = t.first or 0
            base_ts = lo if lo > first else first
        tot = [start]
        for e in evs:
            tot.append(tot[-1] + e["bytes"])  # tot[k + 1]: after event k
        peak, peak_k = start, -1
        for k in range(len(evs)):
            if tot[k + 1] > peak:
                peak, peak_k = tot[k + 1], k
        s = {
            "memory_events": len(evs), "before_trace_bytes": start, "peak_bytes": peak,
            "peak_ts": evs[max(peak_k, 0)]["ts"] if evs else base_ts, "end_bytes": tot[-1],
        }
        # allocator gaps
        s["reserved_unallocated_at_peak"] = s["max_reserved_unallocated"] = s["max_reserved_unallocated_ts"] = None
        if dev[0] != 0:
            unchanged = True  # the events so far left the start state as it was
            for k, e in enumerate(evs):
                unchanged = unchanged and e["bytes"] == 0
                g = gap(e["tr"], e["ta"])
                if g is None:
                    continue
                if s["max_reserved_unallocated"] is None or g > s["max_reserved_unallocated"]:
                    s["max_reserved_unallocated"], s["max_reserved_unallocated_ts"] = g, e["ts"]
                if k == peak_k or (peak_k < 0 and unchanged and s["reserved_unallocated_at_peak"] is None):
                    s["reserved_unallocated_at_peak"] = g

        def last_before(ts, strict):
            k = -1
            while k + 1 < len(evs) and (evs[k + 1]["ts"] < ts if strict else evs[k + 1]["ts"] <= ts):
                k += 1
            return k
        steps = []
        for n, a, b in t.steps:
            if w == "empty" or (w is not None and not (lo <= a and b <= hi) and not (b > lo and a < hi)):
                continue
            part = w is not None and (a < lo or b > hi)
            if part:
                a, b = max(a, lo), min(b, hi)
            ks, ke = last_before(a, True), last_before(b, False)
            st = {"step": n, "start_ts": a, "end_ts": b, "start_bytes": tot[ks + 1], "end_bytes": tot[ke + 1],
                  "partial": part, "peak_bytes": tot[ks + 1], "peak_ts": a}
            surv = 0
            for k in range(ks + 1, ke + 1):
                if tot[k + 1] > st["peak_bytes"]:
                    st["peak_bytes"], st["peak_ts"] = tot[k + 1], evs[k]["ts"]
                if evs[k]["bytes"] > 0 and partner[k] is None:
                    surv += evs[k]["bytes"]
            st["growth_bytes"] = st["end_bytes"] - st["start_bytes"]
            st["survivors_bytes"] = surv if has_addr else None
            steps.append(st)
        s["steps"] = steps
        whole = [st for st in steps if not st["partial"]]
        leak = {"verdict": "unknown", "steps": len(whole), "per_step_bytes": None, "blamed": 0}
        if len(whole) >= 3:
            d = len(whole) - 1
            grows = all(whole[i]["end_bytes"] > whole[i - 1]["end_bytes"] for i in range(1, len(whole)))
            survives = all(st["survivors_bytes"] is not None and st["survivors_bytes"] > 0 for st in whole[:-1])
            if grows:
                leak["verdict"], leak["per_step_bytes"] = "growth", trunc_div(whole[-1]["end_bytes"] - whole[0]["end_bytes"], d)
            elif survives:
                leak["verdict"] = "survivors"
                leak["per_step_bytes"] = trunc_div(sum(st["survivors_bytes"] for st in whole[:-1]), d)
            else:
                leak["verdict"] = "none"
            if leak["verdict"] != "none" and has_addr:
                leak["blamed"] = sum(st["survivors_bytes"] for st in whole[1:-1])
        s["leak"] = leak
        ooms = []
        for o in sorted((o for o in t.ooms if o["dev"] == dev), key=lambda o: o["ts"]):
            if w == "empty" or (w is not None and not lo <= o["ts"] <= hi):
                continue
            k = -1
            while k + 1 < len(evs) and (evs[k + 1]["ts"] < o["ts"] or (evs[k + 1]["ts"] == o["ts"] and evs[k + 1]["file"] < o["mem_at"])):
                k += 1
            ooms.append({
                "ts": o["ts"], "bytes": o["bytes"],
                "total_allocated": None if o["ta"] is None else int(o["ta"]),
                "total_reserved": None if o["tr"] is None else int(o["tr"]),
                "reserved_unallocated": gap(o["tr"], o["ta"]), "allocated": tot[k + 1],
                "freed_after": sum(-e["bytes"] for e in evs[k + 1:] if e["bytes"] < 0),
            })
        s["ooms"] = ooms
        out[device(*dev)] = s
    return out


def hmem_report(path, args):
    p = subprocess.run([HMEM, "run", "-q", "size", path, "--top", "0", "--json", "-"] + args,
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None, "exit %d: %s" % (p.returncode, p.stderr.strip())
    doc = json.loads(p.stdout, parse_float=Decimal)
    return {s["device"]: s for s in doc["series"]}, None


STEP_KEYS = ("step", "start_bytes", "peak_bytes", "end_bytes", "growth_bytes", "survivors_bytes", "start_ts", "end_ts",
             "peak_ts", "partial")
TS_FIELDS = {"peak_ts", "max_reserved_unallocated_ts", "start_ts", "end_ts", "ts"}


def got_value(key, v):
    if key == "partial":
        return bool(v)  # an hmem without the field marks nothing partial
    return ns(v) if key in TS_FIELDS and v is not None else v


def compare(want, got):
    """The first difference, as text, or None; and how many values were compared."""
    n = 0
    if sorted(want) != sorted(got):
        return "devices %s, hmem has %s" % (sorted(want), sorted(got)), n
    for dev, w in want.items():
        g = got[dev]
        for key in ("memory_events", "before_trace_bytes", "peak_bytes", "peak_ts", "end_bytes",
                    "reserved_unallocated_at_peak", "max_reserved_unallocated", "max_reserved_unallocated_ts"):
            n += 1
            if got_value(key, g[key]) != w[key]:
                return "%s %s: %s, hmem %s" % (dev, key, w[key], g[key]), n
        if len(g["steps"]) != len(w["steps"]):
            return "%s: %d steps, hmem %d" % (dev, len(w["steps"]), len(g["steps"])), n
        for i, (ws, gs) in enumerate(zip(w["steps"], g["steps"])):
            for key in STEP_KEYS:  # bytes first: a difference there is the one to read
                v = ws[key]
                n += 1
                if got_value(key, gs.get(key)) != v:
                    return "%s step %d (#%d) %s: %s, hmem %s" % (dev, i + 1, ws["step"], key, v, gs.get(key)), n
        wl, gl = w["leak"], g["leak"]
        for key in ("verdict", "steps", "per_step_bytes"):
            n += 1
            if gl[key] != wl[key]:
                return "%s leak %s: %s, hmem %s" % (dev, key, wl[key], gl[key]), n
        blamed = sum(m["bytes"] for m in gl["made_by"])
        n += 1
        if (len(gl["made_by"]) < 5 and blamed != wl["blamed"]) or blamed > wl["blamed"]:
            return "%s leak made_by: %d B blamed, the survivors of the steps but the first and last are %d B" % (
                dev, blamed, wl["blamed"]), n
        if len(g["ooms"]) != len(w["ooms"]):
            return "%s: %d OOMs, hmem %d" % (dev, len(w["ooms"]), len(g["ooms"])), n
        for i, (wo, go) in enumerate(zip(w["ooms"], g["ooms"])):
            for key, v in wo.items():
                n += 1
                if got_value(key, go.get(key)) != v:
                    return "%s OOM %d %s: %s, hmem %s" % (dev, i + 1, key, v, go.get(key)), n
    return None, n


def ms_text(d):
    """ns as the ms text --from/--to read, exactly."""
    sign = "-" if d < 0 else ""
    d = abs(d)
    return "%s%d.%06d" % (sign, d // 1000000, d % 1000000)


def us_text(t):
    sign = "-" if t < 0 else ""
    t = abs(t)
    return "%s%d.%03d" % (sign, t // 1000, t % 1000)


def forms(t):
    """Every window form, with the arguments that ask hmem for it."""
    out = [("whole trace", ("none",), [])]
    nums = sorted({s[0] for s in t.steps})
    if nums:
        a, m = nums[0], nums[len(nums) // 2]
        out.append(("--steps %d-%d" % (a, m), ("steps", a, m), ["--steps", "%d-%d" % (a, m)]))
        out.append(("--steps %d" % m, ("steps", m, m), ["--steps", str(m)]))
    first = t.first or 0
    if len(t.steps) >= 3:
        s0, s1 = t.steps[0], t.steps[-1]
        f, to = (s0[1] + s0[2]) // 2 - first, (s1[1] + s1[2]) // 2 - first
        out.append(("steps cut at both ends (--from %s --to %s)" % (ms_text(f), ms_text(to)),
                    ("time", ms_text(f), ms_text(to)), ["--from", ms_text(f), "--to", ms_text(to)]))
    evs = sorted(t.mem, key=lambda e: (e["ts"], e["file"]))
    if len(evs) >= 3:
        a, b = evs[len(evs) // 3]["ts"], evs[2 * len(evs) // 3]["ts"]
        out.append(("edges on events (--from ts:%s --to ts:%s)" % (us_text(a), us_text(b)),
                    ("time", "ts:" + us_text(a), "ts:" + us_text(b)), ["--from", "ts:" + us_text(a), "--to", "ts:" + us_text(b)]))
        mid = evs[len(evs) // 2]["ts"] - first
        out.append(("--from %s alone" % ms_text(mid), ("time", ms_text(mid), None), ["--from", ms_text(mid)]))
        out.append(("--to %s alone" % ms_text(mid), ("time", None, ms_text(mid)), ["--to", ms_text(mid)]))
    out.append(("--from 100 --to 400", ("time", "100", "400"), ["--from", "100", "--to", "400"]))
    return out


def check(ok, name, detail=None):
    results.append(ok)
    print(("ok - " if ok else "not ok - ") + name)
    if not ok and detail:
        print("#   " + str(detail).replace("\n", "\n#   "))


def main():
    traces = []
    for root in ("tests/data", "examples/traces", "tests/tiny/windows26"):
        for d, _, files in os.walk(root):
            traces += [os.path.join(d, f) for f in files if f.endswith((".json", ".json.gz"))]
    compared = 0
    for path in sorted(traces):
        t = Trace(path)
        for label, form, args in forms(t):
            got, err = hmem_report(path, args)
            if err:
                check(False, "%s, %s: hmem failed" % (path, label), err)
                continue
            diff, n = compare(expect(t, form), got)
            compared += n
            check(diff is None, "%s, %s: %d values as the replay's" % (path, label, n), diff)
        nums = {s[0] for s in t.steps}
        missing = max(nums) + 1 if nums else 9
        p = subprocess.run([HMEM, "run", "-q", "size", path, "--steps", str(missing), "--json", "-"],
                           capture_output=True, text=True)
        have = "none" if not nums else None
        check(p.returncode == 2 and "ProfilerStep#%d" % missing in p.stderr and (have is None or have in p.stderr) and not p.stdout,
              "%s, --steps %d (not in it): exit 2 naming the steps there are" % (path, missing),
              "exit %d: %s" % (p.returncode, p.stderr.strip()))
    print("# %d values compared" % compared)
    print("1..%d" % len(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
