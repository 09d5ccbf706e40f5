#!/usr/bin/env python3
"""The pandas way (as Holistic Trace Analysis does it): json.load the whole trace, a
DataFrame of every event, keep the [memory] rows, sort by time, classify each row by size
(the buckets of hmem's size pack), and a cumulative sum per (device, category). Prints the
peak of the device total per device as JSON, so the benchmark can check both tools agree.

usage: pandas_baseline.py TRACE.json[.gz]
"""
import gzip
import json
import sys

import pandas as pd

GIB, MIB = 1 << 30, 1 << 20


def load(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        return json.load(f)


def main():
    trace = load(sys.argv[1])
    df = pd.DataFrame(trace["traceEvents"])
    mem = df[(df["name"] == "[memory]") & (df["ph"].isin(["i", "I"]))].copy()
    args = pd.DataFrame(mem["args"].tolist(), index=mem.index)
    mem = mem.join(args)
    mem = mem.sort_values("ts", kind="stable")
    size = mem["Bytes"].abs()
    mem["category"] = "normal"
    mem.loc[size < MIB, "category"] = "small (< 1 MiB)"
    mem.loc[size > GIB, "category"] = "big (> 1 GiB)"
    mem.loc[size > 5 * GIB, "category"] = "very big (> 5 GiB)"
    out = {}
    for (dtype, did), g in mem.groupby(["Device Type", "Device Id"]):
        start = g["Total Allocated"].iloc[0] - g["Bytes"].iloc[0]
        per_cat = g.pivot_table(index=g.index, columns="category", values="Bytes", aggfunc="sum").fillna(0)
        per_cat = per_cat.loc[g.index].cumsum()
        total = per_cat.sum(axis=1) + start
        out[f"{int(dtype)}:{int(did)}"] = int(max(total.max(), start))
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
