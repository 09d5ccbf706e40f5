#!/bin/sh
# Seeds for fuzz_partial (issue 24): partials that ./hmem run --partial writes, of a trace
# with host slices and thread names and one with an OOM (tests/tiny), of memory snapshots
# with stacks, frames and OOMs (tests/snapshots/gen.py) and of the real snapshots in
# tests/data, each copied with 512-byte pages (VACUUM) so that it is small and most of its
# bytes are SQLite's structures and the columns, not free space. Paths are relative: the
# canonical names (absolute) are replaced by them, and each trace sealed again.
# Usage: tests/fuzz/make-partial-seeds.sh DIR   (needs ./hmem, python3, sqlite3)
set -eu
out=$1
root=$(pwd)
rm -rf "$out"
mkdir -p "$out/src"
python3 tests/snapshots/gen.py "$out/src/gen" >/dev/null
cp tests/tiny/y_context.json tests/tiny/i_oom.json tests/data/snapshots/*.pickle "$out/src/"
cp "$out/src/gen/1.13_p4.pickle" "$out/src/gen/2.0_p5.pickle" "$out/src/gen/2026_p5.pickle" "$out/src/"
cd "$out/src"
seed() {
	name=$1
	shift
	"$root/hmem" run -q size "$@" --partial "../$name.db"
	sqlite3 "../$name.db" "UPDATE plan SET canonical = path; UPDATE files SET canonical = path"
	for idx in $(sqlite3 "../$name.db" "SELECT idx FROM files"); do
		(cd "$root" && lua5.4 tests/partial_tool.lua reseal "$out/$name.db" "$idx")
	done
	sqlite3 "../$name.db" "PRAGMA page_size = 512; VACUUM"
}
seed traces y_context.json i_oom.json
seed snap-1.13 1.13_p4.pickle
seed snap-2.0 2.0_p5.pickle
seed snap-2026 2026_p5.pickle
seed snap-docubox docubox_dump_snapshot.pickle
seed mixed y_context.json 1.13_p4.pickle i_oom.json
cd "$root"
rm -rf "$out/src"
