# Outputs that can be trusted (issue 11, README "Outputs"): what is not a regular file is
# written in place, never replaced; a symlink stays a symlink; a stopped run leaves no
# temporary file; a replaced file keeps its mode; an output never replaces an input or
# another output. Everything happens in a fresh temporary directory, never on /dev/null.

# --- written in place (issue 11) ---
# A FIFO: the reader gets the report and the FIFO is still a FIFO (the old code renamed a
# regular file over it). Should hmem not open it, the reader is released (3<> opens
# without blocking) or, were the FIFO replaced, stopped.
$ d=$(mktemp -d) && mkfifo $d/fifo && { cat $d/fifo > $d/got & c=$!; } && hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --json $d/fifo; echo "exit $?"; if test -p $d/fifo; then : 3<>$d/fifo; wait $c; else kill $c; fi; stat -c %F $d/fifo; lua5.4 tests/jget.lua series.1.peak_bytes < $d/got; rm -rf $d
exit 0
fifo
1536
? 0
# A character device (a null device made in the temporary directory; mknod needs root),
# given to two outputs at once: both are written to it, it stays a device, no file appears.
$ [ "$(id -u)" = 0 ] || { echo "SKIP: mknod needs root"; exit 0; }; d=$(mktemp -d) && mknod -m 666 $d/null c 1 3 && hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --json $d/null --timeline $d/null --perfetto $d/null; echo "exit $?"; stat -c '%F %t,%T' $d/null; ls $d; rm -rf $d
exit 0
character special file 1,3
null
? 0
# /dev/stdout, to a pipe and to a regular file (the shell's redirection, written through
# the same descriptor): the report arrives, /dev/stdout is still the link it was, and
# nothing is left in /dev.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --json /dev/stdout | lua5.4 tests/jget.lua series.1.peak_bytes; test -L /dev/stdout && echo "still a link"; ls /dev | grep 'tmp\.' | wc -l
1536
still a link
0
? 0
$ d=$(mktemp -d) && hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --json /dev/stdout > $d/out.json; echo "exit $?"; lua5.4 tests/jget.lua series.1.peak_bytes < $d/out.json; ls $d; rm -rf $d
exit 0
1536
out.json
? 0
# The summary and /proc/self/fd/1 share standard output when one of them is not "-".
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --json /proc/self/fd/1 | lua5.4 tests/jget.lua series.1.peak_bytes
1536
? 0
# A symlink to a regular file stays a symlink: its target is replaced, in its own
# directory (the temporary file is made there, so the rename cannot cross file systems).
$ d=$(mktemp -d) && mkdir $d/real && echo old > $d/real/r.json && ln -s real/r.json $d/link.json && hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --json $d/link.json && readlink $d/link.json && lua5.4 tests/jget.lua series.1.peak_bytes < $d/real/r.json && ls $d $d/real | sed "s|$d|D|"; rm -rf $d
real/r.json
1536
D:
link.json
real

D/real:
r.json
? 0
# A link to a name that does not exist yet: the file is made where it points.
$ d=$(mktemp -d) && ln -s new.json $d/link.json && hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --json $d/link.json && test -L $d/link.json && lua5.4 tests/jget.lua series.1.peak_bytes < $d/new.json; rm -rf $d
1536
? 0

# --- a stopped run, modes (issue 11) ---
# SIGTERM while outputs are written: the report's temporary file is removed and the
# signal still ends hmem (status 128 + 15; what sh says about it, "Terminated" or nothing,
# depends on when it looks, so it is dropped). The --perfetto FIFO has no reader, so hmem
# waits there with the --json temporary file written; the loop waits for that file.
$ (d=$(mktemp -d) && mkfifo $d/fifo && { hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --json $d/out.json --perfetto $d/fifo & p=$!; } && i=0; while ! ls $d | grep -q 'out\.json\.tmp\.' && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; ls $d | sed 's/tmp\..*/tmp.XXXXXX/'; kill -TERM $p; wait $p; echo "exit $?"; ls $d; rm -rf $d) 2>&1 | grep -v '^Terminated$'
fifo
out.json.tmp.XXXXXX
exit 143
fifo
? 0
# A file replaced keeps its mode (a private 0600 report stays private; the old code made
# it 0644); a new file gets 0666 less the umask, as any other program makes it.
$ d=$(mktemp -d) && umask 022 && echo old > $d/r.json && chmod 600 $d/r.json && hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --json $d/r.json --timeline $d/new.csv && stat -c '%a %n' $d/r.json $d/new.csv | sed "s|$d/||"; rm -rf $d
600 r.json
644 new.csv
? 0

# --- never over an input or another output (issue 11) ---
# The trace being read: refused, the trace untouched.
$ d=$(mktemp -d) && cp tests/tiny/y_pair_basic.json $d/in.json && cd $d && hmem run $OLDPWD/tests/tiny/rules/by_size.lua in.json --json in.json; echo "exit $?"; cmp in.json $OLDPWD/tests/tiny/y_pair_basic.json && echo unchanged; rm -rf $d
hmem: --json in.json would replace the trace in.json being read: write elsewhere
Try 'hmem --help'.
exit 2
unchanged
? 0
# ... also a trace found in a directory given as input, named another way, or through a link.
$ d=$(mktemp -d) && mkdir $d/traces && cp tests/tiny/y_pair_basic.json $d/traces/a.json && ln -s traces/a.json $d/link.json && cd $d && hmem run $OLDPWD/tests/tiny/rules/by_size.lua traces --timeline ./traces/../traces/a.json; echo "exit $?"; hmem events traces --csv link.json; echo "exit $?"; cmp traces/a.json $OLDPWD/tests/tiny/y_pair_basic.json && echo unchanged; rm -rf $d
hmem: --timeline ./traces/../traces/a.json would replace the trace traces/a.json being read: write elsewhere
Try 'hmem --help'.
exit 2
hmem: --csv link.json would replace the trace traces/a.json being read: write elsewhere
Try 'hmem --help'.
exit 2
unchanged
? 0
# The rule file is an input too.
$ d=$(mktemp -d) && cp tests/tiny/rules/by_size.lua $d/rules.lua && hmem run $d/rules.lua tests/tiny/y_pair_basic.json --html $d/rules.lua 2>&1 | sed "s|$d/||g"; cmp $d/rules.lua tests/tiny/rules/by_size.lua && echo unchanged; rm -rf $d
hmem: --html rules.lua would replace the rule file rules.lua being read: write elsewhere
Try 'hmem --help'.
unchanged
? 0
# Two outputs on one file (new or not, however named) would lose one: refused.
$ d=$(mktemp -d) && cd $d && hmem run $OLDPWD/tests/tiny/rules/by_size.lua $OLDPWD/tests/tiny/y_pair_basic.json --json out --perfetto ./out; echo "exit $?"; ls; echo old > out; hmem run $OLDPWD/tests/tiny/rules/by_size.lua $OLDPWD/tests/tiny/y_pair_basic.json --json out --timeline $d/out 2>&1 | sed "s|$d/||"; cat out; rm -rf $d
hmem: --json out and --perfetto ./out are the same file: give each output its own
Try 'hmem --help'.
exit 2
hmem: --json out and --timeline out are the same file: give each output its own
Try 'hmem --help'.
old
? 0
# Written in place, one device or FIFO may take several outputs (above: the null device);
# /dev/stdout twice gives both, one after the other.
$ hmem run tests/tiny/rules/by_size.lua tests/tiny/y_pair_basic.json --json /dev/stdout --timeline /dev/stdout | grep -c -e '^{"version"' -e '^path,rank,device,ts'
2
? 0
