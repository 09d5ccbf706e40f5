# hmem diff on memory snapshots (issue 25, item 7): a snapshot's rows have frames, no op, so
# what is live at the peak is grouped by who made it (its first user frame) and by that
# frame's file, not into one "(no op)". tests/snapshots/diff25.py writes the snapshots; by
# hand: before model.py(12) 1 MiB, model.py(30) 2 MiB, data.py(7) 1 MiB, after 3, 2 and 1 MiB,
# so model.py(12) grows by 2 MiB and the file model.py from 3 to 5 MiB.
$ python3 tests/snapshots/diff25.py $T/snap25diff && hmem diff size $T/snap25diff/before.pickle $T/snap25diff/after.pickle --format csv | cut -d, -f6- | grep -E '^(frame|file)_at_peak'
frame_at_peak,/home/u/model.py(12): forward,1048576,3145728,2097152,200.0
frame_at_peak,/home/u/data.py(7): load,1048576,1048576,0,0.0
frame_at_peak,/home/u/model.py(30): forward,2097152,2097152,0,0.0
file_at_peak,/home/u/model.py,3145728,5242880,2097152,66.7
file_at_peak,/home/u/data.py,1048576,1048576,0,0.0
? 0
# The same rows from two --json reports (their live_at_peak lists, with each row's frame).
$ cd $T/snap25diff && hmem run -q size before.pickle --json b.json && hmem run -q size after.pickle --json a.json && hmem diff b.json a.json --format csv | cut -d, -f6- | grep -E '^(frame|file)_at_peak' >j.csv && hmem diff size before.pickle after.pickle --format csv | cut -d, -f6- | grep -E '^(frame|file)_at_peak' >t.csv && wc -l <j.csv && cmp j.csv t.csv && echo same
5
same
? 0
# The pytorch pack's note, when most of a snapshot's peak was live as recording began (a 4 MiB
# block made before it, freed at 6 us; the peak is those 4 MiB): it names the call that starts
# a snapshot's history, not the profiler.
$ cd $T/snap25diff && hmem run pytorch early.pickle --summary 2>&1 >/dev/null | grep 'note: pytorch'
hmem: note: pytorch: early.pickle cuda:0: 4.00 MiB was live when recording began (100% of the 4.00 MiB peak): the snapshot has no history of it, so its categories come from the segments' frames at most; call torch.cuda.memory._record_memory_history() before the model and optimizer are built
? 0
