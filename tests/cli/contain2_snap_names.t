# The OUT OF MEMORY part of a snapshot's summary shows its frames' file and function names
# escaped like every other name of the summary (issue 24): a frame named with ESC sequences
# and line breaks can neither drive the terminal nor forge a line. Every byte of the summary
# is then printable or a line break of hmem's own.
$ python3 -c 'import pickle,sys; fr=[{"filename": "evil\x1b[2J\nFORGED.py", "line": 7, "name": "fn\x1b]0;x\x07\nFAKE"}]; pickle.dump({"segments": [], "device_traces": [[{"action": "alloc", "addr": 4096, "size": 512, "stream": 0, "frames": fr}, {"action": "oom", "size": 1 << 30, "device_free": 0, "stream": 0, "addr": 0, "frames": fr}]]}, open(sys.argv[1], "wb"), protocol=4)' $T/names.pickle && hmem run size $T/names.pickle -q > $T/out; echo "exit $?"; grep -c '^FORGED\|^FAKE' $T/out; LC_ALL=C grep -c "$(printf '\033')" $T/out; grep -o 'evil[^ ]*FORGED.py(7): fn[^ ]*FAKE' $T/out | head -1
exit 0
0
0
evil\x1b[2J\x0aFORGED.py(7): fn\x1b]0;x\x07\x0aFAKE
? 0
