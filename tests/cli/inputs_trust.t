# Inputs that are not plain files in a plain folder (issue 11, "Trust"): pipes, FIFOs and
# process substitution, links and FIFOs met in a folder walk, a folder that cannot be listed.

# A pipe cannot seek: the first two bytes (gzip or JSON?) are looked at and kept, not read
# again (issue 11: they were lost, "not a JSON trace" / "invalid gzip header").
$ cat tests/tiny/y_pair_basic.json | hmem events /dev/stdin | cut -d, -f1,4-8
path,ts,kind,bytes,addr,total_allocated
/dev/stdin,101.25,alloc,1024,4096,1024
/dev/stdin,102.5,alloc,512,8192,1536
/dev/stdin,110.0,free,1024,4096,512
/dev/stdin,112.0,alloc,256,4096,768
? 0
# Gzip through a pipe, two members (cat a.gz b.gz), with one reading thread and with several.
$ cat tests/tiny/i_gzip_members.json.gz | hmem events -j 1 /dev/stdin | cut -d, -f4-8 && cat tests/tiny/i_gzip_members.json.gz | hmem events -j 4 /dev/stdin | cut -d, -f4-8 | tail -n 1
ts,kind,bytes,addr,total_allocated
101.25,alloc,1024,4096,1024
102.5,alloc,512,8192,1536
110.0,free,1024,4096,512
112.0,alloc,256,4096,768
112.0,alloc,256,4096,768
? 0
# Process substitution (bash), gzip and plain, as one run of two traces.
$ bash -c 'hmem run tests/tiny/rules/by_size.lua <(gzip -c tests/tiny/y_peak.json) <(cat tests/tiny/y_pair_basic.json) --json -' | lua5.4 tests/jget.lua inputs.# inputs.1.memory_events series.1.peak_bytes inputs.2.memory_events series.2.peak_bytes
2
7
400
4
1536
? 0
# A FIFO named on the command line is read (here fed gzip data).
$ d=$(mktemp -d) && mkfifo "$d/p" && (timeout 20 sh -c "gzip -c tests/tiny/y_peak.json > $d/p" &) && hmem run tests/tiny/rules/by_size.lua "$d/p" --json - | lua5.4 tests/jget.lua inputs.1.memory_events series.1.peak_bytes; rc=$?; rm -rf "$d"; exit $rc
7
400
? 0

# A folder walk enters each folder once (issue 11: `ln -s . self` listed one trace 41 times,
# two such links never ended). It takes regular files and links to them (sub/link.json), not
# FIFOs (f.json: reading it would wait forever); a link that leads nowhere (gone.json) is
# reported like an unreadable file.
$ d=$(mktemp -d) && cp tests/tiny/y_pair_basic.json "$d/a.json" && mkdir "$d/sub" && ln -s . "$d/self" && ln -s . "$d/again" && ln -s .. "$d/sub/up" && ln -s ../a.json "$d/sub/link.json" && ln -s nothere "$d/sub/gone.json" && mkfifo "$d/f.json" && cd "$d" && timeout 20 hmem events --keep-going . | cut -d, -f1 | uniq -c; rc=$?; cd - >/dev/null; rm -rf "$d"; exit $rc
hmem: skipped ./sub/gone.json: cannot open: No such file or directory (0 events read before the error are not used)
hmem: 1 of 3 traces skipped (see above)
      1 path
      4 ./a.json
      4 ./sub/link.json
? 0
# Two links to one folder from outside it: its traces once, under the first of the two names.
$ d=$(mktemp -d) && mkdir "$d/runs" "$d/top" && cp tests/tiny/y_peak.json "$d/runs/r.json" && ln -s ../runs "$d/top/latest" && ln -s ../runs "$d/top/best" && cd "$d" && timeout 20 hmem events top | cut -d, -f1 | uniq -c; rc=$?; cd - >/dev/null; rm -rf "$d"; exit $rc
      1 path
      7 top/best/r.json
? 0

# A folder that cannot be listed is one more input that cannot be read (issue 11: it stopped a
# --keep-going run before anything was read): --keep-going skips it and says so, exit code 4;
# without, it stops the run like an unreadable file. Root reads any folder, so as root the
# command runs as the user nobody (setpriv).
$ d=$(mktemp -d) && chmod 755 "$d" && cp tests/tiny/y_pair_basic.json "$d/a.json" && chmod 644 "$d/a.json" && mkdir "$d/locked" && cp tests/tiny/y_peak.json "$d/locked/b.json" && chmod 000 "$d/locked" && as=$([ "$(id -u)" = 0 ] && echo "setpriv --reuid=65534 --regid=65534 --clear-groups") && cd "$d" && $as hmem events --keep-going . | cut -d, -f1 | uniq -c; $as hmem events --keep-going . >/dev/null 2>&1; echo "--keep-going: exit $?"; $as hmem events . >/dev/null; echo "without: exit $?"; cd - >/dev/null; rm -rf "$d"
hmem: skipped ./locked: cannot list directory: Permission denied (0 events read before the error are not used)
hmem: 1 of 2 traces skipped (see above)
      1 path
      4 ./a.json
--keep-going: exit 4
hmem: ./locked: cannot list directory: Permission denied
hmem: stopped; use --keep-going to skip traces that cannot be read
without: exit 5
? 0

# Many devices (issue 11: a search over the devices for each event made the analysis take
# time events x devices; 100,000 devices took over a minute). 20,000 devices, ids met in a
# scrambled order, the same addresses on every device: each series checked against numbers
# worked out by hand (tests/many_devices.lua says how).
$ lua5.4 tests/many_devices.lua 20000
20000 series for 20000 devices
every series as computed by hand
? 0

# Memory per file follows what the file holds (issue 11: about 50 KB a file whatever it held,
# the columns' first room for 1024 events and more). 2000 one-event traces against one of them,
# peak RSS by /usr/bin/time (tests/many_files.lua says how).
$ lua5.4 tests/many_files.lua 2000
inputs and series: 1 1 in one, 2000 2000 in many
peak RSS per file: under 20 KB
? 0
