#!/usr/bin/env python3
"""Hand-made snapshots for tests/cli/snap25_diff.t (issue 25, item 7): hmem diff groups a
snapshot's memory by who made it (its first user frame) and by that frame's file, and the
pytorch pack's note names _record_memory_history when a snapshot's peak was mostly live as
recording began. Usage: tests/snapshots/diff25.py DIR (writes before, after and early.pickle).

before: model.py(12) 1 MiB, model.py(30) 2 MiB, data.py(7) 1 MiB; after: 3, 2 and 1 MiB; every
block live at the end, so each is live at the peak. early: a 4 MiB block made before recording,
freed at 6 us, then model.py(12) 1 MiB."""
import os
import pickle
import sys


def frame(f, line, name):
    return {"filename": f, "line": line, "name": name}


def snap(path, allocs, pre=None):
    blocks, entries, t = [], [], 10
    if pre:
        for action, ts in (("free_requested", 5), ("free_completed", 6)):
            entries.append({"action": action, "addr": 0, "size": pre, "stream": 0, "time_us": ts, "frames": []})
    for addr, size, frames in allocs:
        entries.append({"action": "alloc", "addr": addr, "size": size, "stream": 0, "time_us": t, "frames": frames})
        blocks.append({"address": addr, "size": size, "requested_size": size, "state": "active_allocated",
                       "frames": frames})
        t += 10
    used, top = sum(b["size"] for b in blocks), 1 << 24
    seg = {"device": 0, "address": 0, "total_size": top, "stream": 0, "segment_type": "large",
           "allocated_size": used, "active_size": used, "requested_size": used,
           "blocks": blocks + [{"address": 1 << 23, "size": top - (1 << 23), "state": "inactive"}]}
    with open(path, "wb") as f:
        pickle.dump({"segments": [seg], "device_traces": [entries]}, f, protocol=4)


M = 1 << 20
A = [frame("/home/u/model.py", 12, "forward"), frame("/home/u/train.py", 40, "main")]
B = [frame("/home/u/model.py", 30, "forward"), frame("/home/u/train.py", 40, "main")]
C = [frame("/home/u/data.py", 7, "load"), frame("/home/u/train.py", 38, "main")]
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
snap(os.path.join(out, "before.pickle"), [(1 * M, 1 * M, A), (2 * M, 2 * M, B), (4 * M, 1 * M, C)])
snap(os.path.join(out, "after.pickle"), [(1 * M, 3 * M, A), (4 * M, 2 * M, B), (6 * M, 1 * M, C)])
snap(os.path.join(out, "early.pickle"), [(2 * M, 1 * M, A)], pre=4 * M)
