#!/usr/bin/python3
"""hmem allocations RULES PATH... --csv FILE (issue 17), read with Python's csv module as pandas
would: names with commas, quotes and line breaks come back whole; and on every real trace, per
device, the bytes of the rows summed per category add up to the trace's own Total Allocated at
the end (read here from the trace itself): allocations never freed, less the frees of memory
allocated before the trace, take the device from its total before the first event to its total
after the last. Prints "ok - ..." / "not ok - ..." lines."""
import csv
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Tap  # noqa: E402

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
tap = Tap('allocations: ')
check = tap.check
COLUMNS = ["path", "rank", "device", "alloc_ts", "free_ts", "lifetime", "bytes", "category", "op", "module",
           "frame", "step", "context"]


def rows_of(rules, trace):
    """The CSV of hmem allocations as a list of dicts, or None (a failed check)."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "a.csv")
        p = subprocess.run(["./hmem", "allocations", rules, trace, "-q", "--csv", out], capture_output=True, text=True)
        if p.returncode != 0:
            check(False, "hmem allocations %s %s" % (rules, trace), "exit %d: %s" % (p.returncode, p.stderr[:500]))
            return None
        with open(out, newline="", encoding="utf-8") as f:
            r = csv.DictReader(f)
            if r.fieldnames != COLUMNS:
                check(False, "columns of %s" % trace, r.fieldnames)
                return None
            return list(r)


# Names that need quoting, read back whole.
rows = rows_of("op", "tests/tiny/y_polish_csv_names.json")
if rows is not None:
    check(len(rows) == 4, "one row per allocation, and one for the free of memory from before the trace")
    check([r["op"] for r in rows[1:]] == ['my::op, with "quotes"', 'my::op, with "quotes"', "two\nlines"],
          "op names with a comma, quotes and a line break come back whole", [r["op"] for r in rows])
    check(rows[1]["module"] == 'Linear, "fc1"' and rows[1]["step"] == "3"
          and rows[1]["context"] == 'ProfilerStep#3 > my::op, with "quotes"',
          "module, step and context (annotations and ops, outermost first)", rows[1])
    check((rows[0]["alloc_ts"], rows[0]["free_ts"], rows[0]["lifetime"]) == ("", "80.0", "")
          and (rows[1]["alloc_ts"], rows[1]["free_ts"], rows[1]["lifetime"]) == ("101.25", "110.0", "8.75")
          and (rows[2]["free_ts"], rows[2]["lifetime"]) == ("", ""),
          "alloc_ts, free_ts and lifetime in µs, empty where there is none", rows[:3])
    check(all(r["frame"] == "" for r in rows), "frame is a column from the start")


def open_trace(path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rt", encoding="utf-8") if gz else open(path, encoding="utf-8")


NAMES = {0: "cpu", 1: "cuda", 6: "hip", 12: "xpu", 13: "mps", 20: "privateuseone"}


def totals(path):
    """Per device: (Total Allocated before the first memory event, after the last), in ts order."""
    with open_trace(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    per = {}
    for i, e in enumerate(events):
        a = e.get("args") or {}
        if e.get("name") != "[memory]" or "Total Allocated" not in a:
            continue
        t = a["Device Type"]
        dev = "cpu" if t == 0 else "%s:%d" % (NAMES.get(t, "type%d" % t), a["Device Id"])
        per.setdefault(dev, []).append((float(e["ts"]), i, int(a["Total Allocated"]), int(a["Bytes"])))
    out = {}
    for dev, evs in per.items():
        evs.sort()
        out[dev] = (evs[0][2] - evs[0][3], evs[-1][2])
    return out


traces = sorted(glob.glob("tests/data/**/*.json*", recursive=True) + glob.glob("examples/traces/*.json*"))
checked = 0
for t in traces:
    if subprocess.run(["./hmem", "events", "-q", t, "--csv", os.devnull], capture_output=True).returncode != 0:
        continue
    want = totals(t)
    if not want:
        continue
    rows = rows_of("pytorch", t)
    if rows is None:
        continue
    per_cat = {}
    for r in rows:
        if r["free_ts"] == "" or r["alloc_ts"] == "":
            sign = 1 if r["alloc_ts"] != "" else -1  # never freed, or freed memory from before the trace
            key = (r["device"], r["category"])
            per_cat[key] = per_cat.get(key, 0) + sign * int(r["bytes"])
    bad = []
    for dev, (start, end) in sorted(want.items()):
        got = sum(v for (d, _), v in per_cat.items() if d == dev)
        if start + got != end:
            bad.append("%s: before %d + the categories' %d != Total Allocated at the end %d" % (dev, start, got, end))
    check(not bad, "%s: the bytes per category add up to the trace's Total Allocated at the end (%d devices)"
          % (t, len(want)), "\n".join(bad))
    checked += 1
check(checked >= 8, "%d real traces checked" % checked)

# The README's pandas snippet ("From hmem to a DataFrame") runs, on a bundled trace.
with open("README.md", encoding="utf-8") as f:
    readme = f.read()
snippet = readme.split("### From hmem to a DataFrame", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
try:
    import pandas  # noqa: F401 (python3-pandas, also what make bench installs)
except ImportError:
    print("# skipped: the README's pandas snippet (python3-pandas is not installed)")
else:
    code = snippet.replace('"hmem"', '"./hmem"').replace("trace.json.gz", "examples/traces/normalization_mi300.json.gz")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    check(p.returncode == 0 and "hip:0" in p.stdout, "the README's pandas snippet runs", p.stderr[-1500:])
tap.exit()
