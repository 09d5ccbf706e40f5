"""Snapshots for the reader that makes each trace entry a record as its dict completes (issue
25, item 8), each holding what a record must not get wrong:

  stream25.py DIR

writes into DIR
  plain.pickle      300 alloc and free entries of one device, in a shuffled order
  shared.pickle     the same entries, first made in that order under a key hmem does not
                    read, then listed in the shuffled order through the memo (the device's
                    list reaches records made out of its order, across the records that
                    stand alone: it must read as plain.pickle does)
  twice.pickle      one entry listed twice in a device's trace (refused, as before)
  changed.pickle    a frames list read by an entry, changed after it by a hand-made APPEND
                    (refused: the entry was read as it completed)
  more.pickle       an entry dict given a second SETITEMS by hand (refused, same reason)
"""
import pickle
import random
import sys


def entry(action, addr, size, t, frames):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t, "frames": frames}


def s(x):
    b = x.encode()
    return b"X" + len(b).to_bytes(4, "little") + b


def main(out):
    rnd = random.Random(25)
    frames = [[{"filename": "/home/u/m%d.py" % k, "line": k, "name": "f%d" % k}] for k in range(7)]
    entries = []
    for i in range(150):
        addr = 0x7F0000000000 + 4096 * i
        entries.append(entry("alloc", addr, 512 + i, 1000 + 2 * i, frames[i % 7]))
        entries.append(entry("free_completed", addr, 512 + i, 1001 + 2 * i, frames[(i + 3) % 7]))
    order = list(entries)
    rnd.shuffle(order)
    for i, e in enumerate(order):  # times in list order, so both files read the same
        e["time_us"] = 1000 + i
    with open(out + "/plain.pickle", "wb") as f:
        pickle.dump({"segments": [], "device_traces": [order]}, f, protocol=4)
    with open(out + "/shared.pickle", "wb") as f:
        pickle.dump({"made_first": entries, "segments": [], "device_traces": [order]}, f, protocol=4)
    x = entry("alloc", 0x7F0000000000, 512, 1, frames[0])
    with open(out + "/twice.pickle", "wb") as f:
        pickle.dump({"segments": [], "device_traces": [[x, x]]}, f, protocol=4)
    frame = b"}(" + s("filename") + s("/home/u/a.py") + s("line") + b"K\x01" + s("name") + s("f") + b"u"
    # root["x"] = L (memo 1); an entry's frames fetch L; then root["y"] = L with a frame appended
    body = b"\x80\x02}q\x00(" + s("x") + b"]q\x01" + s("segments") + b"]" + s("device_traces") + b"]]("
    body += b"}(" + s("action") + s("alloc") + s("addr") + b"M\x00\x10" + s("size") + b"M\x00\x02" + s("frames")
    body += b"h\x01u" + b"ea" + s("y") + b"h\x01" + frame + b"a" + b"u."
    with open(out + "/changed.pickle", "wb") as f:
        f.write(body)
    # an entry dict (memo 1) filled, then fetched and given one more pair
    body = b"\x80\x02}(" + s("segments") + b"]" + s("device_traces") + b"]]}q\x01(" + s("action") + s("alloc")
    body += s("addr") + b"M\x00\x10" + s("size") + b"M\x00\x02" + b"ua" + b"a" + s("y") + b"h\x01" + s("stream")
    body += b"K\x00s" + b"u."
    with open(out + "/more.pickle", "wb") as f:
        f.write(body)


if __name__ == "__main__":
    main(sys.argv[1])
