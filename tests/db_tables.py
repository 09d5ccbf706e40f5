#!/usr/bin/python3
"""The --db tables steps, ooms and snapshot_segments (issue 28) hold what --json of the same
run says, field by field: each series' steps[], the scalar members of its ooms[] and its
snapshot.segments[], matched by (path, device) and position. A time of --json (us, three
decimals) is the ns of its _ns column; a JSON null is NULL; every scalar member of a JSON
object has its column, so a member added to --json and not to --db fails here. The inputs: a
real trace with ProfilerStep slices (CPU and CUDA series), a tiny trace with an OOM, a real
snapshot (segments) and snapshots with OOMs, their stacks and the segments at them. Then the same traces through
--shard 0/1 --partial and hmem merge --db: the merge (it opens the partial, whose schema
check lists these tables) writes the same rows. Prints a plan, then "ok - ..." lines."""
import decimal
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Tap  # noqa: E402

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
os.chdir(root)
hmem = os.path.abspath("hmem")
INPUTS = ["tests/data/hta/df_index_resolver_rank1_v100.json.gz", "tests/tiny/i_oom.json",
          "tests/data/snapshots/sketchkv2_my_snapshot.pickle", "tests/fuzz/regressions/snap-contain2-oom_frames.pickle",
          "tests/fuzz/regressions/snap-gen-2.0-p2.pickle"]
# table: (the JSON list of a series it mirrors, {JSON member: column} where they differ)
TABLES = {
    "steps": (lambda s: s.get("steps", []), {"start_ts": "start_ts_ns", "end_ts": "end_ts_ns", "peak_ts": "peak_ts_ns"}),
    "ooms": (lambda s: s.get("ooms", []), {"ts": "ts_ns", "step_ts": "step_ts_ns"}),
    "snapshot_segments": (lambda s: s.get("snapshot", {}).get("segments", []), {}),
}
TIMES = {"start_ts_ns", "end_ts_ns", "peak_ts_ns", "ts_ns", "step_ts_ns"}

print("1..%d" % (3 + 4 * len(TABLES) + len(TABLES)))
tap = Tap("--db tables: ")
check = tap.check


def table(con, name):
    cur = con.execute("SELECT f.path, t.* FROM %s AS t JOIN files AS f ON f.idx = t.idx ORDER BY t.idx, t.device, t.pos"
                      % name)
    cols = [c[0] for c in cur.description]
    return cols, [dict(zip(cols, r)) for r in cur.fetchall()]


def same(col, want, got):
    """A JSON value (Decimal for a number with a point) against the column's."""
    if want is None or got is None:
        return want is None and got is None
    if isinstance(want, bool):  # true and false are 1 and 0
        return got == int(want) and type(got) is int
    if col in TIMES:
        ns = decimal.Decimal(want) * 1000
        return ns == ns.to_integral_value() and int(ns) == got
    return want == got and type(want) is type(got)


with tempfile.TemporaryDirectory() as d:
    db_path, json_path = os.path.join(d, "report.db"), os.path.join(d, "report.json")
    p = subprocess.run([hmem, "run", "-q", "pytorch"] + INPUTS + ["--db", db_path, "--json", json_path],
                       capture_output=True, text=True)
    check(p.returncode == 0 and os.path.exists(db_path), "hmem run --db --json on %d inputs" % len(INPUTS),
          p.stderr[:500])
    if p.returncode != 0:
        tap.exit()
    with open(json_path) as f:
        report = json.load(f, parse_float=decimal.Decimal)
    con = sqlite3.connect(db_path)
    for name, (items, rename) in TABLES.items():
        try:
            cols, rows = table(con, name)
        except sqlite3.Error as e:
            for what in ("rows", "columns", "values", "inputs"):
                check(False, "%s: %s" % (name, what), e)
            continue
        by = {}
        for r in rows:
            by.setdefault((r["path"], r["device"]), []).append(r)
        want = [(s["path"], s["device"], i, o) for s in report["series"] for i, o in enumerate(items(s))]
        got_n = {k: len(v) for k, v in by.items()}
        want_n = {}
        for path, dev, _, _ in want:
            want_n[(path, dev)] = want_n.get((path, dev), 0) + 1
        check(got_n == want_n, "%s: one row per object of --json, per (trace, device) (%d rows)" % (name, len(rows)),
              "--db %s, --json %s" % (got_n, want_n))
        if name == "ooms":  # a snapshot's OOM: its segments object (or null) as columns segments_*
            for _, _, _, o in want:
                if "segments" in o:
                    g = o.pop("segments") or {}
                    o["segments"] = g.get("segments")
                    for k in ("reserved_bytes", "requested_bytes", "reclaimable_bytes", "stranded_bytes"):
                        o["segments_" + k] = g.get(k)
        missing = sorted({rename.get(k, k) for _, _, _, o in want for k, v in o.items()
                          if not isinstance(v, (list, dict)) and rename.get(k, k) not in cols})
        check(not missing, "%s: a column for every scalar member of --json" % name, "no column %s" % missing)
        bad = []
        for path, dev, i, o in want:
            r = by.get((path, dev), [])[i] if i < len(by.get((path, dev), [])) else None
            if r is None or r["pos"] != i:
                bad.append("%s %s #%d: no row" % (path, dev, i))
                continue
            for k, v in o.items():
                col = rename.get(k, k)
                if not isinstance(v, (list, dict)) and col in r and not same(col, v, r[col]):
                    bad.append("%s %s #%d %s: --json %r, --db %r" % (path, dev, i, col, v, r[col]))
            if name == "ooms":  # members only a snapshot's OOM has are NULL for a trace's
                for k in ("device_free", "frame", "frames_total", "segments", "segments_reserved_bytes"):
                    if k not in o and r[k] is not None:
                        bad.append("%s %s #%d %s: not in --json, --db %r" % (path, dev, i, k, r[k]))
        check(not bad and want, "%s: every value is --json's (%d objects)" % (name, len(want)), "\n".join(bad[:20]))
        inputs = {path for path, _, _, _ in want}
        check(len(inputs) >= 1 and (name != "ooms" or len(inputs) >= 2) and (name != "steps" or len(
            {dev for path, dev, _, _ in want if path == INPUTS[0]}) >= 2),
              "%s: the inputs give rows (%s)" % (name, ", ".join(sorted(os.path.basename(x) for x in inputs))))
    con.close()

    part, merged = os.path.join(d, "part-0.db"), os.path.join(d, "merged.db")
    p = subprocess.run([hmem, "run", "-q", "pytorch"] + INPUTS + ["--shard", "0/1", "--partial", part],
                       capture_output=True, text=True)
    check(p.returncode == 0, "hmem run --shard 0/1 --partial", p.stderr[:500])
    p = subprocess.run([hmem, "merge", "-q", "pytorch", part, "--db", merged], capture_output=True, text=True)
    check(p.returncode == 0, "hmem merge of that partial --db (its schema is hmem's)", p.stderr[:500])
    for name in TABLES:
        try:
            a = sqlite3.connect(db_path).execute("SELECT * FROM %s ORDER BY idx, device, pos" % name).fetchall()
            b = sqlite3.connect(merged).execute("SELECT * FROM %s ORDER BY idx, device, pos" % name).fetchall()
            check(a == b and a, "%s: the merge writes the run's rows (%d)" % (name, len(a)),
                  "run %d rows, merge %d" % (len(a), len(b)))
        except sqlite3.Error as e:
            check(False, "%s: the merge writes the run's rows" % name, e)
tap.exit()
