#!/usr/bin/env python3
"""hmem against the independent reference (tests/snapshots/reference.py) on every snapshot: the
real ones of tests/data/snapshots and those tests/snapshots/gen.py and steps25.py write (issue 25).

  compare.py [HMEM]        (HMEM: the hmem to run, default ./hmem)

For each snapshot and device it runs `hmem run size FILE --json -` and `hmem allocations size
FILE`, and compares each figure of FIGURES: hmem's field (second column) against the
reference's (third). The figures in HARD are checks ("ok - ..." / "not ok - ...", planned with
"1..N"); the others are what hmem gets wrong today: they are printed apart, as "# TODO" lines
with both numbers, and fail nothing. When a TODO figure agrees on every snapshot, the last line
says so: move it to HARD.
"""
import csv
import io
import json
import os
import pickle
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import reference  # noqa: E402
import who  # noqa: E402

HMEM = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "hmem")


def at_end(s, key):
    snap = s.get("snapshot") or {}
    return (snap.get("at_end") or {}).get(key)


def time_of(dev, state):
    """The time hmem gives a state: the entry's time_us, else its index (1 µs apart from 0);
    the baseline's is the first entry's."""
    if dev["entries"] == 0:
        return None
    if dev["time"] is None:
        return None
    i = max(state["index"], 0)
    return state["time_us"] if dev["time"] == "time_us" else i


def before_trace_end(dev):
    """(before trace) after the last entry: nothing. Every live block is a row of its own
    (issue 25: an alloc entry's, or one allocated before the trace, with or without frames),
    so no live byte is left to it at the end; only frees of memory the ring buffer no longer
    shows take bytes from it, and those are gone by the end."""
    return 0


def rows(dev):
    """Allocations that are rows: every alloc entry, and each live block allocated before the
    trace (issue 25: every live block is a row, whatever it says of where it comes from)."""
    return dev["actions"].get("alloc", 0) + sum(1 for b in dev["live_blocks"] if not b["in_trace"])


def category(s, name, key):
    for c in s.get("categories", []):
        if c["name"] == name:
            return c.get(key)
    return 0


def num(v):
    return None if v is None else (int(v) if isinstance(v, float) and v == int(v) else v)


# (figure, hmem field as written in the report, reference value, hmem value)
FIGURES = [
    ("segments at end", "series[].snapshot.at_end.segments", lambda d: d["end"]["segments"], lambda s: at_end(s, "segments")),
    ("reserved at end", "series[].snapshot.at_end.reserved_bytes", lambda d: d["end"]["reserved_bytes"], lambda s: at_end(s, "reserved_bytes")),
    ("live requested at end", "series[].snapshot.at_end.requested_bytes", lambda d: d["end"]["live_requested_bytes"], lambda s: at_end(s, "requested_bytes")),
    ("active_allocated block sizes at end", "series[].snapshot.at_end.allocated_bytes", lambda d: d["end"]["allocated_size_bytes"], lambda s: at_end(s, "allocated_bytes")),
    ("pending-free block sizes at end", "series[].snapshot.at_end.pending_free_bytes", lambda d: d["end"]["pending_free_size_bytes"], lambda s: at_end(s, "pending_free_bytes")),
    ("free (inactive) blocks at end", "series[].snapshot.at_end.free_bytes", lambda d: d["end"]["free_bytes"], lambda s: at_end(s, "free_bytes")),
    ("largest free block at end", "series[].snapshot.at_end.largest_free_bytes", lambda d: d["end"]["largest_free_bytes"], lambda s: at_end(s, "largest_free_bytes")),
    ("rounding of live blocks at end", "series[].snapshot.at_end.internal_waste_bytes", lambda d: d["end"]["internal_bytes"], lambda s: at_end(s, "internal_waste_bytes")),
    ("reclaimable at end", "series[].snapshot.at_end.reclaimable_bytes", lambda d: d["end"]["reclaimable_bytes"], lambda s: at_end(s, "reclaimable_bytes")),
    ("stranded at end", "series[].snapshot.at_end.stranded_bytes", lambda d: d["end"]["stranded_bytes"], lambda s: at_end(s, "stranded_bytes")),
    ("allocated at end", "series[].end_bytes", lambda d: d["end_allocated_bytes"], lambda s: s.get("end_bytes")),
    ("allocated before the first entry", "series[].before_trace_bytes", lambda d: d["baseline"]["allocated_bytes"], lambda s: s.get("before_trace_bytes")),
    ("peak allocated", "series[].peak_bytes", lambda d: d["peak"]["allocated_bytes"], lambda s: s.get("peak_bytes")),
    ("peak time", "series[].peak_ts", lambda d: time_of(d, d["peak"]), lambda s: num(s.get("peak_ts"))),
    ("largest reserved", "series[].max_reserved_bytes", lambda d: d["max_reserved"]["bytes"], lambda s: s.get("max_reserved_bytes")),
    ("reserved - allocated at the peak", "series[].reserved_unallocated_at_peak", lambda d: d["peak"]["reserved_unallocated_bytes"], lambda s: s.get("reserved_unallocated_at_peak")),
    ("largest reserved - allocated", "series[].max_reserved_unallocated", lambda d: d["max_reserved_unallocated"]["bytes"], lambda s: s.get("max_reserved_unallocated")),
    ("its time", "series[].max_reserved_unallocated_ts", lambda d: time_of(d, d["max_reserved_unallocated"]), lambda s: num(s.get("max_reserved_unallocated_ts"))),
    ("OOMs", "len(series[].ooms)", lambda d: len(d["ooms"]), lambda s: len(s.get("ooms") or [])),
    ("each OOM's request", "series[].ooms[].bytes", lambda d: [o["size"] for o in d["ooms"]], lambda s: [o.get("bytes") for o in s.get("ooms") or []]),
    ("each OOM's device_free", "series[].ooms[].device_free", lambda d: [o["device_free"] for o in d["ooms"]], lambda s: [o.get("device_free") for o in s.get("ooms") or []]),
    ("reserved at each OOM", "series[].ooms[].total_reserved", lambda d: [o["reserved_bytes"] for o in d["ooms"]], lambda s: [o.get("total_reserved") for o in s.get("ooms") or []]),
    ("allocated at each OOM", "series[].ooms[].allocated", lambda d: [o["allocated_bytes"] for o in d["ooms"]], lambda s: [o.get("allocated") for o in s.get("ooms") or []]),
    ("reserved - allocated at each OOM", "series[].ooms[].reserved_unallocated", lambda d: [o["reserved_unallocated_bytes"] for o in d["ooms"]], lambda s: [o.get("reserved_unallocated") for o in s.get("ooms") or []]),
    ("(before trace) at end", "series[].categories[(before trace)].end_bytes", before_trace_end, lambda s: category(s, "(before trace)", "end_bytes")),
    ("rows (allocations)", "series[].allocs", rows, lambda s: s.get("allocs")),
    ("ProfilerStep steps [step, start, end, start bytes, peak bytes, peak time, end bytes]", "series[].steps[]",
     lambda d: [[x["step"], x["start_us"], x["end_us"], x["start_bytes"], x["peak_bytes"], x["peak_us"], x["end_bytes"]] for x in d["steps"]],
     lambda s: [[x.get("step"), num(x.get("start_ts")), num(x.get("end_ts")), x.get("start_bytes"), x.get("peak_bytes"),
                 num(x.get("peak_ts")), x.get("end_bytes")] for x in s.get("steps") or []]),
    ("ProfilerStep steps' growth and survivors [step, growth bytes, survivors bytes]", "series[].steps[]",
     lambda d: [[x["step"], x["growth_bytes"], x["survivors_bytes"]] for x in d["steps"]],
     lambda s: [[x.get("step"), x.get("growth_bytes"), x.get("survivors_bytes")] for x in s.get("steps") or []]),
    ("leak verdict [verdict, steps, per step bytes]", "series[].leak",
     lambda d: [d["leak"]["verdict"], d["leak"]["steps"], d["leak"]["per_step_bytes"]],
     lambda s: [(s.get("leak") or {}).get(k) for k in ("verdict", "steps", "per_step_bytes")]),
    ("steps, or why there are none (exactly one of steps[] and steps_note)", "series[].steps_note",
     lambda d: "steps" if d["steps"] else "a reason",
     lambda s: "steps" if s.get("steps") and s.get("steps_note") is None else
     "a reason" if not s.get("steps") and isinstance(s.get("steps_note"), str) else "both or neither"),
    ("memory_viz stats internal free", "series[].snapshot.at_end.internal_free_bytes", lambda d: d["memviz_stats"]["free_internal"], lambda s: at_end(s, "internal_free_bytes")),
    ("memory_viz stats external free", "series[].snapshot.at_end.external_free_bytes", lambda d: d["memviz_stats"]["free_external"], lambda s: at_end(s, "external_free_bytes")),
    ("external free in partly used segments", "series[].snapshot.at_end.external_free_in_used_segments_bytes", lambda d: d["memviz_stats"]["external_free_in_used_segments"], lambda s: at_end(s, "external_free_in_used_segments_bytes")),
]

# The same file with `--from ts:TS`, TS the time of its middle entry of device 0 (item 3 of issue 25).
WINDOW_FIGURES = [
    ("window: allocated at its opening", "series[].before_trace_bytes (--from ts:TS)", lambda d: d["window"]["start_bytes"], lambda s: s.get("before_trace_bytes")),
    ("window: peak", "series[].peak_bytes (--from ts:TS)", lambda d: d["window"]["peak_bytes"], lambda s: s.get("peak_bytes")),
    ("window: peak time", "series[].peak_ts (--from ts:TS)", lambda d: d["window"]["peak_us"], lambda s: num(s.get("peak_ts"))),
    ("window: allocated at end", "series[].end_bytes (--from ts:TS)", lambda d: d["window"]["end_bytes"], lambda s: s.get("end_bytes")),
]

# What hmem gets right today on every snapshot; the rest are TODO.
HARD = {"segments at end", "reserved at end", "live requested at end", "active_allocated block sizes at end",
        "pending-free block sizes at end", "free (inactive) blocks at end", "largest free block at end",
        "rounding of live blocks at end", "reclaimable at end", "stranded at end", "allocated at end",
        "peak allocated", "peak time", "largest reserved", "allocated at each OOM", "OOMs", "each OOM's request", "each OOM's device_free", "reserved at each OOM",
        "ProfilerStep steps [step, start, end, start bytes, peak bytes, peak time, end bytes]", "window: peak time",
        # issue 25 item 5: steps on snapshots
        "ProfilerStep steps' growth and survivors [step, growth bytes, survivors bytes]",
        "leak verdict [verdict, steps, per step bytes]", "steps, or why there are none (exactly one of steps[] and steps_note)",
        # issue 25 (items 2, 3 and 7), held since the totals ride on every event
        "allocated before the first entry", "its time", "largest reserved - allocated", "reserved - allocated at the peak",
        "reserved - allocated at each OOM", "window: allocated at end", "window: allocated at its opening", "window: peak",
        "memory_viz stats internal free", "memory_viz stats external free", "external free in partly used segments",
        # issue 25 item 1: every live block is a row
        "rows (allocations)", "(before trace) at end"}


def middle_time(path):
    snap = reference.load(path)
    entries = snap["device_traces"][0] if isinstance(snap, dict) and snap.get("device_traces") else []
    if len(entries) < 2 or not all("time_us" in e for e in entries):
        return None
    return entries[len(entries) // 2]["time_us"]


def compare(label_of, ref, out, figures, results, todo, agree_everywhere):
    series = {s["device"]: s for s in json.loads(out)["series"]}
    for dev in ref["devices"]:
        s = series.get("cuda:%d" % dev["device"])
        label = label_of(dev)
        if s is None:
            results.append("not ok - %s: hmem has no series" % label)
            continue
        for fig, field, want_fn, got_fn in figures:
            want, got = want_fn(dev), got_fn(s)
            if want is None and field.endswith("_ts"):
                continue  # no entries, no time: nothing to hold hmem to
            if fig in HARD:
                line = "%s: %s (%s) = %s" % (label, fig, field, want)
                results.append(("ok - " if got == want else "not ok - ") + line + ("" if got == want else ", hmem %s" % got))
            elif got != want:
                agree_everywhere[fig] = False
                todo.append("# TODO %s: %s: %s = %s, reference %s" % (label, fig, field, got, want))


def who_pairs(path, dev):
    """(reference who, hmem frame) of every alloc entry of device `dev`, matched by (time, size,
    free time) in order; `None` when hmem has no row for it. The free time tells an entry from
    the blocks made before recording that hmem lists at the first entry's time with the same
    size (never freed: they are live at the end), as a real snapshot has them."""
    snap = reference.load(path)
    entries = snap["device_traces"][dev] if isinstance(snap, dict) and dev < len(snap.get("device_traces", [])) else []
    out = subprocess.run([HMEM, "allocations", "-q", "size", path], capture_output=True, text=True)
    hm = {}
    for r in csv.DictReader(io.StringIO(out.stdout)):
        if r["device"] != "cuda:%d" % dev or r["alloc_ts"] == "":
            continue
        free = float(r["free_ts"]) if r["free_ts"] else None
        hm.setdefault((float(r["alloc_ts"]), int(r["bytes"]), free), []).append(r["frame"] or None)
    live, freed = {}, {}
    for i, e in enumerate(entries):
        t = float(e.get("time_us", i))
        if e["action"] == "alloc":
            live.setdefault(e["addr"], []).append(i)
        elif e["action"] == "free_completed" and live.get(e["addr"]) and entries[live[e["addr"]][-1]]["size"] == e["size"]:
            freed[live[e["addr"]].pop()] = t
    pairs = []
    for i, e in enumerate(entries):
        if e["action"] != "alloc" or not e.get("frames"):
            continue
        t = float(e.get("time_us", i))
        got = hm.get((t, e["size"], freed.get(i)))
        # never freed at the first time: the entry's row follows the blocks made before it
        pairs.append((reference.who(e["frames"]), got.pop() if got else "(no row)"))
    return pairs


def snapshots(tmp):
    # the committed real snapshots, and those of HMEM_REAL_SNAPSHOTS (folders, colon-separated):
    # real files a developer has but the repository may not carry (tests/data/snapshots/README.md)
    real = who.real_snapshots()
    subprocess.run([sys.executable, os.path.join(HERE, "gen.py"), tmp], check=True, capture_output=True)
    gen = sorted(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith("_p4.pickle"))
    # and the hand-made ones of tests/cli/snap25_steps.t: four steps that leak, and ranges none a step
    subprocess.run([sys.executable, os.path.join(HERE, "steps25.py"), os.path.join(tmp, "steps25")], check=True)
    hand = [os.path.join(tmp, "steps25", f) for f in ("steps.pickle", "nosteps.pickle", "open.pickle")]
    return real + gen + [with_steps(os.path.join(tmp, "2.5_p4.pickle"), os.path.join(tmp, "steps_2.5_p4.pickle"))] + hand


def with_steps(src, dst):
    """A copy of a snapshot whose record_function annotations add three ProfilerStep#N ranges
    splitting device 0's entries in three (the annotations torch.profiler.schedule's steps
    leave; no real snapshot found has them)."""
    snap = reference.load(src)
    times = [e["time_us"] for e in snap["device_traces"][0]]
    lo, hi = min(times), max(times)
    cut = [lo + (hi - lo) * k // 3 for k in range(4)]
    ann = list(snap.get("external_annotations", []))
    for n in range(3):
        ann.append({"name": "ProfilerStep#%d" % (n + 4), "stage": "START", "device": 0, "time_us": cut[n]})
        ann.append({"name": "ProfilerStep#%d" % (n + 4), "stage": "END", "device": 0, "time_us": cut[n + 1] - 1})
    snap["external_annotations"] = sorted(ann, key=lambda a: a["time_us"])
    with open(dst, "wb") as f:
        pickle.dump(snap, f, protocol=4)
    return dst


def main():
    results, todo = [], []
    agree_everywhere = {f[0]: True for f in FIGURES + WINDOW_FIGURES if f[0] not in HARD}
    with tempfile.TemporaryDirectory() as tmp:
        for path in snapshots(tmp):
            name = os.path.relpath(path, ROOT) if path.startswith(ROOT) else ("gen.py " if path.startswith(tmp) else "") + os.path.basename(path)
            ref = json.loads(subprocess.run([sys.executable, os.path.join(HERE, "reference.py"), path],
                                            capture_output=True, text=True, check=True).stdout)
            out = subprocess.run([HMEM, "run", "-q", "size", path, "--json", "-"], capture_output=True, text=True)
            if out.returncode != 0:
                results.append("not ok - %s: hmem run exits %d: %s" % (name, out.returncode, out.stderr.strip()[:200]))
                continue
            compare(lambda d: "%s cuda:%d" % (name, d["device"]), ref, out.stdout, FIGURES, results, todo, agree_everywhere)
            series = {s["device"]: s for s in json.loads(out.stdout)["series"]}
            for dev in ref["devices"]:
                if "cuda:%d" % dev["device"] not in series:
                    continue
                pairs = who_pairs(path, dev["device"])
                wrong = [p for p in pairs if p[0] != p[1]]
                # issue 25 item 4: held to the reference's rule (reference.who)
                results.append("%s - %s cuda:%d: who of each alloc entry (allocations' frame column): %d of %d agree%s"
                               % ("not ok" if wrong else "ok", name, dev["device"], len(pairs) - len(wrong), len(pairs),
                                  ", e.g. hmem %r, reference %r" % (wrong[0][1], wrong[0][0]) if wrong else ""))
            ts = middle_time(path)
            if ts is None:
                continue
            wref = json.loads(subprocess.run([sys.executable, os.path.join(HERE, "reference.py"), path, "--from", str(ts)],
                                             capture_output=True, text=True, check=True).stdout)
            wout = subprocess.run([HMEM, "run", "-q", "size", path, "--from", "ts:%d" % ts, "--json", "-"], capture_output=True, text=True)
            if wout.returncode != 0:
                results.append("not ok - %s --from ts:%d: hmem run exits %d" % (name, ts, wout.returncode))
                continue
            compare(lambda d: "%s cuda:%d --from ts:%d" % (name, d["device"], ts), wref, wout.stdout, WINDOW_FIGURES, results, todo, agree_everywhere)
    print("1..%d" % len(results))
    for line in results:
        print(line)
    if todo:
        print("# hmem's figures that differ from the reference today (not failures; issue 25):")
    for line in todo:
        print(line)
    flips = sorted(f for f, ok in agree_everywhere.items() if ok)
    if flips:
        print("# TODO figures that now agree on every snapshot (move them to HARD): " + "; ".join(flips))


if __name__ == "__main__":
    main()
