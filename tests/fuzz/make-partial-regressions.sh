#!/bin/sh
# Remakes tests/fuzz/regressions-partial/ (issue 24) from the seeds of make-partial-seeds.sh:
# each a partial damaged as its name says, sealed again with its checksum where the damage
# is in a trace (tests/partial_tool.lua), so that the check behind the checksum meets it.
# Run it when the partial's format changes (a partial of another format is refused at open,
# and the regressions would test only that).
# tests/run also makes them afresh in a temporary folder for hmem merge: a partial names the
# digest of the rule file and of hmem's own modules it was made with, so the merge of a
# committed one stops at that check as soon as lua/ changes.
# Usage: tests/fuzz/make-partial-regressions.sh [DIR]   (default tests/fuzz/regressions-partial;
# needs ./hmem, python3, sqlite3)
set -eu
out=${1:-tests/fuzz/regressions-partial}
seeds=$out.seeds
tests/fuzz/make-partial-seeds.sh "$seeds"
rm -f "$out"/*.db
mkdir -p "$out"
# damage NAME SEED partial_tool.lua ARGS... (the file is NAME.db, made from SEED.db)
damage() {
	name=$1 seed=$2 cmd=$3
	shift 3
	cp "$seeds/$seed.db" "$out/$name.db"
	lua5.4 tests/partial_tool.lua "$cmd" "$out/$name.db" "$@"
}
damage partial-mem-thread traces fill 0 mem.thread 7f7f7f7f
damage partial-mem-category traces fill 0 mem.category 7f7f7f7f
damage partial-sl-name traces fill 0 sl.name ffffff7f
damage partial-sl-thread traces fill 0 sl.thread 7f7f7f7f
damage partial-thread-name traces fill 0 thread_name 7f7f7f7f
damage partial-thread-key traces poke 1 threads 5 00
damage partial-oom-thread traces fill 1 oom.thread 7f7f7f7f
damage partial-snap-stack snap-1.13 fill 0 snap.stack 7f7f7f7f
damage partial-snap-stack-frame snap-1.13 poke 0 snap.stacks 4 7f7f7f7f
damage partial-snap-frame-name snap-1.13 poke 0 snap.frames 4 7f7f7f7f
damage partial-snap-first-frame snap-1.13 fill 0 snap.stack_frame 7f7f7f7f
damage partial-snap-oom-stack snap-2.0 poke 0 snap.ooms 28 7f7f7f7f
damage partial-snap-lives snap-docubox fill 0 snap.lives 7f7f7f7f
damage partial-path-null traces sql 0 "UPDATE files SET path = NULL WHERE idx = 0"
damage partial-count-negative traces sql 1 "UPDATE files SET memory_events = -5 WHERE idx = 1"
damage partial-count-null traces sql 1 "UPDATE files SET oom_events = NULL WHERE idx = 1"
damage partial-name-twice traces sql 1 \
	"UPDATE store SET data = CAST(data || data AS BLOB) WHERE idx = 1 AND name = 'threads'"
cp "$seeds/traces.db" "$out/partial-category-twice.db"
sqlite3 "$out/partial-category-twice.db" "UPDATE categories SET name = 'normal' WHERE id = 2"
cp "$seeds/traces.db" "$out/partial-store-view.db"
sqlite3 "$out/partial-store-view.db" "DROP TABLE store; CREATE VIEW store(idx, name, data) AS WITH RECURSIVE
	r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r) SELECT 0, 'mem.ts', x'00' FROM r"
for f in "$out"/*.db; do
	sqlite3 "$f" "VACUUM" # no old bytes left in free pages
done
rm -rf "$seeds"
