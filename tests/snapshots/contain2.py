#!/usr/bin/env python3
"""Writes the hostile snapshots of tests/cli/contain2_snap*.t (issue 24): small files that
made hmem take gigabytes, minutes or a gigabyte of output before it bounded what a snapshot
can make it do. Python standard library only: pickle writes each shared object once and
refers to it through the memo, which is exactly the multiplication these files use.

  contain2.py KIND FILE [N]

KIND (N scales the ones that grow, for the tests that check work grows linearly):
  share_trace    one trace list of N alloc entries made the trace of 65,535 devices
  shared_dict    one entry dict of N keys in a trace of N/4 copies of it
  memo_far       a string of N MiB that nothing reads, then LONG_BINPUT at that offset
  strings        N distinct strings of 4 MiB under a key hmem does not read
  annotations    N record_function ranges opened, then closed in the order they opened
  replay         N live blocks listed at falling addresses, in N segments, and an oom entry
  devices        a 1.13 snapshot (a list of segments) of N devices, one block each
  shared_blocks  a 1.13 snapshot of N segments sharing one list of 8 blocks
  oom_frames     N oom entries sharing one stack of 20,000 frames
  clock          allocs at time_us -2^62 and 2^62 ns, N entries without time_us, a free of the first
  trailing       a valid snapshot, then N bytes after its STOP
  empty_dicts    a list of N million empty dicts (2 bytes each; gzip makes 150 million 290 KB)
A FILE ending in .gz is gzipped.

  contain2.py regressions DIR

writes small versions of each (a few hundred bytes to a few KB, not compressed) as
DIR/snap-contain2-KIND.pickle, for the unpickler's fuzz regressions (tests/fuzz/regressions).
"""
import gzip
import pickle
import struct
import sys


def alloc(addr, size=512, **more):
    e = {"action": "alloc", "addr": addr, "size": size, "stream": 0}
    e.update(more)
    return e


def frame(i=0):
    return {"filename": "/home/u/proj/train.py", "line": 10 + i, "name": "step"}


def snapshot(traces, segments=(), **more):
    s = {"segments": list(segments), "device_traces": traces}
    s.update(more)
    return pickle.dumps(s, protocol=4)


def segment(addr, size, blocks, device=0):
    return {"device": device, "address": addr, "total_size": size, "stream": 0, "segment_type": "large",
            "allocated_size": size, "active_size": size, "requested_size": size, "blocks": blocks}


def build(kind, n):
    if kind == "share_trace":
        trace = [alloc(0x7f0000000000 + 512 * i) for i in range(n)]
        return snapshot([trace] * 65535)
    if kind == "shared_dict":
        e = alloc(0x7f0000000000)
        for i in range(n):
            e["k%d" % i] = i
        return snapshot([[e] * max(1, n // 4)])
    if kind == "memo_far":
        # PROTO 4, EMPTY_DICT, a key and a value of n MiB hmem never reads, SETITEM, then
        # the dict memoized at an index as far as its own byte offset allows.
        key = b"\x8c\x04junk"
        body = b"\x80\x04}" + key + b"\x8d" + struct.pack("<Q", n << 20) + b"a" * (n << 20) + b"s"
        return body + b"r" + struct.pack("<I", len(body)) + b"."
    if kind == "strings":
        junk = ["%08d" % i + "x" * ((4 << 20) - 8) for i in range(n)]
        return snapshot([[alloc(0x7f0000000000, junk=junk)]])
    if kind == "annotations":
        anns = [{"name": "range%d" % i, "stage": "START", "device": 0, "time_us": 1000 + i} for i in range(n)]
        anns += [{"name": "range%d" % i, "stage": "END", "device": 0, "time_us": 1000 + n + i} for i in range(n)]
        return snapshot([[alloc(0x7f0000000000, time_us=1000)]], external_annotations=anns)
    if kind == "replay":
        base = 0x7f0000000000
        segs = [segment(base + 1024 * i, 1024, [{"address": base + 1024 * i, "size": 1024, "requested_size": 512,
                                                  "state": "active_allocated", "frames": []}])
                for i in reversed(range(n))]
        oom = {"action": "oom", "device_free": 0, "size": 1 << 30, "stream": 0, "addr": 0}
        return snapshot([[oom]], segs)
    if kind == "devices":
        return pickle.dumps([{"device": d, "address": 0x7f0000000000, "total_size": 1024, "stream": 0,
                              "blocks": [{"size": 1024, "state": "active_allocated",
                                          "history": [{"addr": 0x7f0000000000, "real_size": 512, "frames": [frame()]}]}]}
                             for d in range(n)], protocol=4)
    if kind == "shared_blocks":
        blocks = [{"size": 512, "state": "active_allocated",
                   "history": [{"addr": 0x7f0000000000 + 512 * i, "real_size": 500, "frames": [frame(i)]}]}
                  for i in range(8)]
        return pickle.dumps([{"device": d, "address": 0x7f0000000000, "total_size": 4096, "stream": 0, "blocks": blocks}
                             for d in range(n)], protocol=4)
    if kind == "oom_frames":
        stack = [frame()] * 20000
        ooms = [{"action": "oom", "device_free": 0, "size": 1 << 30, "stream": 0, "addr": 0, "frames": stack}
                for _ in range(n)]
        return snapshot([[alloc(0x7f0000000000)] + ooms])
    if kind == "clock":
        top = (1 << 62) // 1000  # the largest time_us within 2^62 ns
        trace = [alloc(0x7f0000000000, time_us=-top), alloc(0x7f0000001000, time_us=top)]
        trace += [alloc(0x7f0000002000 + 512 * i) for i in range(n)]
        return snapshot([trace + [{"action": "free_completed", "addr": 0x7f0000000000, "size": 512, "stream": 0}]])
    if kind == "empty_dicts":
        return b"\x80\x04]" + b"}a" * (n * 1000000) + b"."
    if kind == "trailing":
        return snapshot([[alloc(0x7f0000000000)]]) + b"\n" * n
    sys.exit("contain2.py: unknown kind " + kind)


SMALL = {"share_trace": 2, "shared_dict": 40, "memo_far": 0, "annotations": 20, "replay": 20, "devices": 20,
         "shared_blocks": 4, "clock": 3, "trailing": 3}


def regressions(out):
    for kind, n in SMALL.items():
        data = build(kind, n)
        if kind == "share_trace":  # 65,535 devices are 130 KB: 300 make the same point
            trace = [alloc(0x7f0000000000 + 512 * i) for i in range(n)]
            data = snapshot([trace] * 300)
        if kind == "memo_far":  # a string of 2 KB, so that the index is past the memo's array
            body = b"\x80\x04}\x8c\x04junkX" + struct.pack("<I", 2048) + b"a" * 2048 + b"s"
            data = body + b"r" + struct.pack("<I", len(body)) + b"."
        with open("%s/snap-contain2-%s.pickle" % (out, kind), "wb") as f:
            f.write(data)
    stack = [frame()] * 500
    with open(out + "/snap-contain2-oom_frames.pickle", "wb") as f:
        f.write(snapshot([[alloc(0x7f0000000000)] + [{"action": "oom", "size": 1 << 30, "frames": stack}
                                                      for _ in range(20)]]))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "regressions":
        return regressions(sys.argv[2])
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    data = build(sys.argv[1], int(sys.argv[3]) if len(sys.argv) == 4 else 1)
    out = sys.argv[2]
    with (gzip.open(out, "wb", 9) if out.endswith(".gz") else open(out, "wb")) as f:
        f.write(data)


if __name__ == "__main__":
    main()
