#!/bin/sh
# Whether two hmem binaries read memory snapshots alike (a change to the snapshot reader meant
# to keep every output as it is): per snapshot, the summary, --json, --timeline, --html,
# --perfetto, the events CSV and the allocations CSV of the size and pytorch packs, with the
# exit code and standard error.
#
#   tests/snapshots/same.sh OLD_HMEM NEW_HMEM SNAPSHOT...
#
# Prints one line per difference and "N compared, N differ"; exits 1 when any differ.
set -u
[ $# -ge 3 ] || { echo "usage: tests/snapshots/same.sh OLD_HMEM NEW_HMEM SNAPSHOT..." >&2; exit 2; }
old=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") new=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
compared=0 differ=0
for s in "$@"; do
	sa=$(cd "$(dirname "$s")" && pwd)/$(basename "$s")
	for p in size pytorch; do
		for side in old new; do
			bin=$old
			[ $side = new ] && bin=$new
			d="$work/$side"
			rm -rf "$d" && mkdir -p "$d"
			(
				cd "$d" || exit 1
				"$bin" run "$p" "$sa" --summary --json j.json --timeline t.csv --html r.html --perfetto p.json > run.out 2> run.err
				echo $? > run.rc
				"$bin" allocations "$p" "$sa" > alloc.csv 2> alloc.err
				echo $? >> run.rc
				"$bin" events "$p" "$sa" > events.csv 2> events.err
				echo $? >> run.rc
			)
		done
		for f in $(cd "$work/old" && ls); do
			compared=$((compared + 1))
			if ! cmp -s "$work/old/$f" "$work/new/$f"; then
				differ=$((differ + 1))
				echo "differs: $s $p $f"
			fi
		done
	done
done
echo "$compared compared, $differ differ"
[ $differ -eq 0 ]
