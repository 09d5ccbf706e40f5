#!/usr/bin/env python3
"""The pytorch pack against ground truth (issue 15): writes the traces of tests/truth/gen.py,
runs `hmem run pytorch` on each, and checks every category's peak against the truth: within 1%
of it, or, for a category the truth does not have, within 1% of the device's peak. Prints the
table and one "ok - ..." / "not ok - ..." line per case and category.

    python3 tests/truth/check.py [HMEM]      (default: hmem on PATH)
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402


def run(hmem, trace, out):
    # the pack's note goes to standard error (hmem.note), so that --json - stays JSON
    p = subprocess.run([hmem, "run", "pytorch", trace, "--json", out], check=True, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    with open(out) as f:
        series = json.load(f)["series"]
    assert len(series) == 1, "one device expected"
    s = series[0]
    return {c["name"]: c["peak_bytes"] for c in s["categories"]}, s["peak_bytes"], p.stderr


def main():
    hmem = sys.argv[1] if len(sys.argv) > 1 else "hmem"
    failed = 0
    with tempfile.TemporaryDirectory() as d:
        gen.main(d)
        print("# %-28s %-17s %12s %12s %8s" % ("case", "category", "truth", "hmem", "off"))
        for case in gen.CASES:
            with open(os.path.join(d, case + ".truth.json")) as f:
                truth = json.load(f)
            got, peak, text = run(hmem, os.path.join(d, case + ".json"), os.path.join(d, case + ".out.json"))
            for cat in sorted(set(truth) | {c for c, v in got.items() if v}):
                want, have = truth.get(cat, 0), got.get(cat, 0)
                limit = (want if want else peak) / 100
                off = "%+.2f%%" % (100 * (have - want) / want) if want else "%+d B" % have
                print("# %-28s %-17s %12d %12d %8s" % (case, cat, want, have, off))
                ok = abs(have - want) <= limit
                failed += not ok
                print("%s - truth: %s, %s within 1%%" % ("ok" if ok else "not ok", case, cat))
            # (before trace) is 57% of the inference trace's peak, 20% of the training ones'
            note = "allocated before the trace began" in text and "start the profiler before" in text
            ok = note == (case == "inference_default")
            failed += not ok
            print("%s - truth: %s, the (before trace) note %s" % ("ok" if ok else "not ok", case,
                                                                   "printed" if note else "not printed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
