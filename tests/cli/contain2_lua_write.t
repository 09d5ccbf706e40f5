# Issue 24: hmem.write follows no link planted in --out. The old code followed a symlink
# at the file's name and replaced (or created) the file it pointed at, outside --out. Now
# the directory is opened once and each file is made in it under a new temporary name
# (O_EXCL|O_NOFOLLOW) and renamed over the name: a link there is replaced, as a link,
# and what it pointed at is untouched.

# A link to an existing file outside --out: the file keeps its text, the link is replaced.
$ d=$(mktemp -d); mkdir "$d/out"; echo precious > "$d/victim"; ln -s "$d/victim" "$d/out/r.txt"; hmem run tests/tiny/rules/contain2_write.lua tests/tiny/y_pair_basic.json -q --set name=r.txt --out "$d/out" --json /dev/null; echo "exit $?"; cat "$d/victim"; test -L "$d/out/r.txt" && echo "still a link" || cat "$d/out/r.txt"; ls -A "$d/out"; rm -rf "$d"
exit 0
precious
written by the rule file
r.txt
? 0

# A dangling link: nothing is created where it points.
$ d=$(mktemp -d); mkdir "$d/out"; ln -s "$d/made" "$d/out/r.txt"; hmem run tests/tiny/rules/contain2_write.lua tests/tiny/y_pair_basic.json -q --set name=r.txt --out "$d/out" --json /dev/null; echo "exit $?"; ls -A "$d"; cat "$d/out/r.txt"; rm -rf "$d"
exit 0
out
written by the rule file
? 0

# A file there already keeps its mode.
$ d=$(mktemp -d); echo old > "$d/r.txt"; chmod 600 "$d/r.txt"; hmem run tests/tiny/rules/contain2_write.lua tests/tiny/y_pair_basic.json -q --set name=r.txt --out "$d" --json /dev/null; echo "exit $?"; stat -c %a "$d/r.txt"; cat "$d/r.txt"; rm -rf "$d"
exit 0
600
written by the rule file
? 0

# A name with a NUL byte is refused, not cut short (the old code wrote "a").
$ d=$(mktemp -d); hmem run tests/tiny/rules/contain2_write.lua tests/tiny/y_pair_basic.json -q --set nul=1 --out "$d" --json /dev/null 2>&1 | head -1; ls -A "$d"; rm -rf "$d"
hmem: tests/tiny/rules/contain2_write.lua:9: hmem.write: 'a\0...' holds a NUL byte: a file name cannot
? 0

# '..', '/' and '.' are refused as before.
$ d=$(mktemp -d); mkdir "$d/out"; hmem run tests/tiny/rules/contain2_write.lua tests/tiny/y_pair_basic.json -q --set name=.. --out "$d/out" --json /dev/null 2>&1 | head -1 | sed "s|$d|DIR|"; ls -A "$d/out"; rm -rf "$d"
hmem: tests/tiny/rules/contain2_write.lua:9: hmem.write: '..' must be a plain file name (it goes into DIR/out)
? 0

# A directory planted at the name is an error; it stays as it was.
$ d=$(mktemp -d); mkdir "$d/r.txt"; hmem run tests/tiny/rules/contain2_write.lua tests/tiny/y_pair_basic.json -q --set name=r.txt --out "$d" --json /dev/null 2>&1 | head -1 | sed "s|$d|DIR|"; ls -A "$d"; rm -rf "$d"
hmem: tests/tiny/rules/contain2_write.lua:9: hmem.write: DIR/r.txt: write failed: Is a directory
r.txt
? 0

# --out DIR itself may be a link (you named it): it is followed, once, when the first file
# is written.
$ d=$(mktemp -d); mkdir "$d/real"; ln -s "$d/real" "$d/out"; hmem run tests/tiny/rules/contain2_write.lua tests/tiny/y_pair_basic.json -q --set name=r.txt --out "$d/out" --json /dev/null; echo "exit $?"; ls "$d/real"; rm -rf "$d"
exit 0
r.txt
? 0
