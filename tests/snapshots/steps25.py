#!/usr/bin/env python3
"""Hand-made snapshots for steps on snapshots (issue 25, tests/cli/snap25_steps.t).

  steps25.py DIR

steps.pickle: one device, one segment of 2 MiB at 0x10000000. Four steps, ProfilerStep#1 to #4
as torch.profiler.profile(schedule=...) leaves them in external_annotations (START at 100 * N,
END at 100 * N + 90, time_us); in step N, at 100 * N + 10, train.py(12) allocates 1000 bytes
that are never freed (the leak), and at 100 * N + 20, model.py(5) allocates 5000 bytes freed at
100 * N + 30. A record_function range that is not a step (Optimizer.zero_grad#AdamW.zero_grad)
runs inside each step. Nothing is live before the first entry. So step N starts with
1000 * (N - 1) bytes, peaks at 1000 * N + 5000 (at 100 * N + 20) and ends with 1000 * N: it
grows by 1000 bytes and 1000 bytes of it survive.

nosteps.pickle: the same entries, with record_function ranges of three names and none a
ProfilerStep#N: Optimizer.zero_grad#AdamW.zero_grad, enumerate(DataLoader)#_SingleProcess
DataLoaderIter.__next__ and train_step, once per step each (12 ranges).

open.pickle: steps.pickle taken during step 4: ProfilerStep#4 has no END, so it lasts to the last
entry (430) and is left out of the verdict, which steps 1 to 3 make: growth, 1000 bytes a step.
"""
import os
import pickle
import sys

BASE = 0x1000_0000
MiB = 1 << 20
TRAIN = [{"filename": "/home/u/train.py", "line": 12, "name": "train"}]
MODEL = [{"filename": "/home/u/model.py", "line": 5, "name": "forward"}]


def entries():
    out = []
    for n in range(1, 5):
        t = 100 * n
        leak, tmp = BASE + 1024 * (n - 1), BASE + 4096
        out.append({"action": "alloc", "addr": leak, "size": 1000, "stream": 0, "time_us": t + 10, "frames": TRAIN})
        out.append({"action": "alloc", "addr": tmp, "size": 5000, "stream": 0, "time_us": t + 20, "frames": MODEL})
        out.append({"action": "free_requested", "addr": tmp, "size": 5000, "stream": 0, "time_us": t + 30, "frames": MODEL})
        out.append({"action": "free_completed", "addr": tmp, "size": 5000, "stream": 0, "time_us": t + 30, "frames": MODEL})
    return out


def segments():
    blocks = [{"address": BASE + 1024 * i, "size": 1024, "requested_size": 1000, "state": "active_allocated",
               "frames": TRAIN} for i in range(4)]
    blocks.append({"address": BASE + 4096, "size": 2 * MiB - 4096, "requested_size": 0, "state": "inactive", "frames": []})
    return [{"device": 0, "address": BASE, "total_size": 2 * MiB, "allocated_size": 4096, "active_size": 4096,
             "requested_size": 4000, "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
             "is_expandable": False, "frames": [], "blocks": blocks}]


def ranges(names_at):
    out = []
    for name, start, end in names_at:
        out.append({"name": name, "stage": "START", "device": 0, "time_us": start})
        out.append({"name": name, "stage": "END", "device": 0, "time_us": end})
    return sorted(out, key=lambda a: a["time_us"])


def main(out):
    os.makedirs(out, exist_ok=True)
    steps = [("ProfilerStep#%d" % n, 100 * n, 100 * n + 90) for n in range(1, 5)]
    steps += [("Optimizer.zero_grad#AdamW.zero_grad", 100 * n + 40, 100 * n + 50) for n in range(1, 5)]
    other = [(name, 100 * n + k, 100 * n + k + 5) for n in range(1, 5)
             for name, k in (("Optimizer.zero_grad#AdamW.zero_grad", 40),
                             ("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 1), ("train_step", 50))]
    taken_in_4 = [a for a in ranges(steps) if not (a["name"] == "ProfilerStep#4" and a["stage"] == "END")]
    for name, ann in (("steps.pickle", ranges(steps)), ("nosteps.pickle", ranges(other)), ("open.pickle", taken_in_4)):
        snap = {"segments": segments(), "device_traces": [entries()], "external_annotations": ann}
        with open(os.path.join(out, name), "wb") as f:
            pickle.dump(snap, f, protocol=4)


if __name__ == "__main__":
    main(sys.argv[1])
