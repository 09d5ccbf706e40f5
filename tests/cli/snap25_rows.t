# Issue 25, item 1: every live block of a snapshot is a row. tests/snapshots/gen.py writes
# ring25.pickle, worked out by hand: A (500000 bytes asked in a 512 KiB block of the 1 MiB
# segment at 1048576, frames a.py) and D (1000000 in 1 MiB, pending its free, no frames, in the
# segment at 4194304 on stream 3) were live before the ring buffer's first entry; B (200000 in
# 256 KiB, b.py) is allocated by an alloc entry; C (1500000, c.py) is allocated and freed. So 4
# allocation rows (the 2 entries, A and D), 1504096 bytes live before the first entry (A, D and
# the 4096 bytes of a free whose alloc the ring buffer dropped), B is its entry's row with its
# block, not a second row; and every row reaches classify with its block size, segment and
# stream. replay25.py counts the rows from the pickle alone (Python's pickle, no hmem).
$ python3 tests/snapshots/gen.py hostile $T/h && python3 tests/snapshots/replay25.py $T/h/ring25.pickle | sed -n 1,2p
rows 4
baseline 1504096
? 0
$ hmem run -q size $T/h/ring25.pickle --json - | lua5.4 tests/snapshots/figures25.lua | sed -n 1,2p
rows 4
baseline 1504096
? 0
$ hmem run tests/snapshots/block25.lua $T/h/ring25.pickle --json - | lua5.4 tests/jget.lua series.1.categories.1.end_bytes series.1.categories.2.name series.1.categories.2.end_bytes series.1.categories.3.name series.1.categories.3.end_bytes series.1.categories.5.name series.1.categories.5.end_bytes
0
/home/u/a.py(1): f block=524288 segment=1048576 stream=0
500000
- block=1048576 segment=4194304 stream=3
1000000
/home/u/b.py(7): g block=262144 segment=1048576 stream=0
200000
? 0
# A snapshot with segments and no trace entry (history not recorded, include_traces=False, a
# cleared ring buffer): its three live blocks are rows at the start, (before trace) holds
# nothing, each block is classified by its frames, and the summary says why the timeline is
# flat and how to record entries (not "this trace has no Addr").
$ hmem run tests/snapshots/by_frame.lua $T/h/segonly25.pickle | sed -n 3,8p
  3 allocs, 0 frees (0 matched)
  (the snapshot recorded no trace entries for this device, only its segments (its live blocks are the rows, at the start): record entries with torch.cuda.memory._record_memory_history() before the work)
    category                   peak      at peak    allocs  live at end
    (before trace)              0 B          0 B         0          0 B
    (no user frame)      976.56 KiB   976.56 KiB         1   976.56 KiB
    /home/u/a.py(1): f   488.28 KiB   488.28 KiB         1   488.28 KiB
? 0
# A real one: sketchkv2's ring buffer holds one entry (a free of 8 bytes whose alloc it
# dropped), so its 839 live blocks (the file's own segments[], counted by Python) are 839
# rows; the two largest, 250 MiB each (262144000 bytes asked), head the allocations live at
# the peak, where they were "(before trace)" with who "-" before; without a stack, who says
# they were made before recording.
$ python3 -c 'import pickle,sys; s=pickle.load(open(sys.argv[1],"rb")); b=sorted((x["requested_size"] for g in s["segments"] for x in g["blocks"] if x["state"].startswith("active")), reverse=True); print(len(b), b[:3])' tests/data/snapshots/sketchkv2_my_snapshot.pickle
839 [262144000, 262144000, 90177536]
? 0
$ hmem run size tests/data/snapshots/sketchkv2_my_snapshot.pickle --top 3 | sed -n '3p;/allocations live at the peak/,+4p'
  839 allocs, 1 frees (0 matched)
    largest allocations live at the peak (3 of 840):
           bytes  category             step  lifetime        who
      250.00 MiB  normal                  -  before trace    made before recording
      250.00 MiB  normal                  -  before trace    made before recording
       86.00 MiB  normal                  -  before trace    made before recording
? 0
