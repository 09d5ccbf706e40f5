#!/usr/bin/python3
"""hmem's --json against schema/hmem.schema.json (issue 17), with Debian's python3-jsonschema:
the output of every real trace (tests/data and examples/traces) with a shipped pack and with a
rule file declaring aggregations, a run over all of them with --keep-going (inputs cut short
and traces skipped), and documents the schema must refuse, so a schema that takes anything
fails. Prints "ok - ..." / "not ok - ..." lines."""
import copy
import glob
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Tap  # noqa: E402

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
with open("schema/hmem.schema.json") as f:
    schema = json.load(f)
jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema)
tap = Tap('schema: ')
check = tap.check


def errors(doc):
    return sorted(validator.iter_errors(doc), key=lambda e: list(e.path))


def run_json(args, name):
    """hmem run ARGS --json FILE: the document, or None (a failed check) when it wrote none."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        p = subprocess.run(["./hmem", "run"] + args + ["-q", "--json", out], capture_output=True, text=True)
        if not os.path.exists(out):
            check(False, name, "exit %d: %s" % (p.returncode, p.stderr[:500]))
            return None
        with open(out) as f:
            return json.load(f)


def validate(args, name):
    doc = run_json(args, name)
    if doc is not None:
        errs = errors(doc)
        check(not errs, name, "\n".join("%s: %s" % ("/".join(map(str, e.path)), e.message) for e in errs[:5]))
    return doc


traces = sorted(glob.glob("tests/data/**/*.json*", recursive=True) + glob.glob("examples/traces/*.json*"))
readable = []
for t in traces:
    p = subprocess.run(["./hmem", "events", "-q", t, "--csv", os.devnull], capture_output=True)
    if p.returncode == 0:
        readable.append(t)
check(len(readable) >= 10, "%d of the %d real traces read" % (len(readable), len(traces)))
for t in readable:
    validate(["pytorch", t], "--json of pytorch on " + t)
    validate(["tests/tiny/rules/agg.lua", t], "--json with aggregations on " + t)
# With a trace that cannot be read (skipped) and one cut short (cut_at, lost_bytes, cut_why).
everything = validate(["tests/tiny/rules/agg.lua", "--keep-going", "tests/data", "examples/traces",
                       "tests/tiny/n_bad_json.json", "tests/tiny/n_cut_off.json"],
                      "--json of every real trace at once, --keep-going, one skipped and one cut")
if everything is not None:
    check(len(everything["skipped"]) > 0 and any("cut_at" in i for i in everything["inputs"])
          and any(a["rows"] for a in everything["aggregations"].values()),
          "that run has a skipped trace, a cut one and aggregation rows to check")
    # Documents the schema must refuse: each a change of the real output's types.
    wrong = [
        ("a peak given as a string", lambda d: d["series"][0].__setitem__("peak_bytes", "1 GiB")),
        ("a byte count given as a float", lambda d: d["series"][0]["categories"][0].__setitem__("alloc_bytes", 1.5)),
        ("a series without its device", lambda d: d["series"][0].pop("device")),
        ("a live allocation of kind \"zero\"", lambda d: next(s for s in d["series"] if s["live_at_peak"])["live_at_peak"][0].__setitem__("kind", "zero")),
        ("an empty category name", lambda d: d["series"][0]["categories"][0].__setitem__("name", "")),
        ("an aggregation cell holding a list", lambda d: next(a for a in d["aggregations"].values() if a["rows"])["rows"][0].__setitem__("count", [1])),
        ("an input whose rank is a string", lambda d: d["inputs"][0].__setitem__("rank", "0")),
        ("a skipped trace without its error", lambda d: d["skipped"][0].pop("error")),
        ("no version", lambda d: d.pop("version")),
        ("a cut trace without cut_why", lambda d: next(i for i in d["inputs"] if "cut_at" in i).pop("cut_why")),
    ]
    for name, change in wrong:
        bad = copy.deepcopy(everything)
        change(bad)
        check(len(errors(bad)) > 0, "refuses " + name)
    extra = copy.deepcopy(everything)
    extra["series"][0]["ooms"] = []
    extra["inputs"][0]["steps"] = [1, 2]
    check(not errors(extra), "takes fields added after it (series[].ooms, inputs[].steps)")
# Budgets (issue 28): from the command line (one broken, one passed, one naming nothing) and
# from a rule file (hmem.budget), with a failure (hmem.fail).
doc = validate(["tests/tiny/rules/decide_budget_pack.lua", "tests/tiny/y_pair_basic.json", "--set", "limit=1000",
                "--set", "fail=stop", "--fail-above", "cuda:0=1KiB", "--fail-above", "2KiB",
                "--fail-above", "activation=1"], "--json with budgets broken, passed and naming nothing, and hmem.fail")
if doc is not None:
    b = doc["budgets"]
    check(len(b) == 5 and [x["passed"] for x in b] == [False, True, True, False, True]
          and b[2]["at"] is None and b[3]["declared_in"] == "rule file" and doc["failures"],
          "that run has each kind of budget to check", json.dumps(b)[:500])
    for name, change in [
            ("a budget without where it was declared", lambda d: d["budgets"][0].pop("declared")),
            ("a budget's verdict given as a string", lambda d: d["budgets"][0].__setitem__("passed", "no")),
            ("a budget declared somewhere else", lambda d: d["budgets"][0].__setitem__("declared_in", "env")),
            ("a failure that is not a string", lambda d: d["failures"].append(1))]:
        bad = copy.deepcopy(doc)
        change(bad)
        check(len(errors(bad)) > 0, "refuses " + name)
# Memory snapshots (issue 18): the real ones, and generated ones with OOMs and segments.
with tempfile.TemporaryDirectory() as d:
    subprocess.run(["python3", "tests/snapshots/gen.py", "hostile", d], check=True)
    subprocess.run(["python3", "tests/snapshots/gen.py", d], check=True, capture_output=True)
    snaps = sorted(glob.glob("tests/data/snapshots/*.pickle")) + [d + "/oom.pickle", d + "/2.10_p4.pickle"]
    for t in snaps:
        doc = validate(["size", t], "--json of a memory snapshot, " + os.path.basename(t))
    if doc is not None:
        s0 = doc["series"][0]
        check(s0["ooms"] and "snapshot" in s0, "that snapshot has OOMs and segments to check")
        for name, change in [
                ("device_free given as a string", lambda s: s["ooms"][0].__setitem__("device_free", "1 MiB")),
                ("segments at the end without stranded_bytes", lambda s: s["snapshot"]["at_end"].pop("stranded_bytes")),
                ("a segment's address as a float", lambda s: s["snapshot"]["segments"][0].__setitem__("address", 1.5)),
                ("a frame without its line", lambda s: next(o for o in s["ooms"] if o["frames"])["frames"][0].pop("line"))]:
            bad = copy.deepcopy(doc)
            change(bad["series"][0])
            check(len(errors(bad)) > 0, "refuses " + name)
tap.exit()
