# Issue 24: a partial is opened read-only and defensively (SQLITE_DBCONFIG_DEFENSIVE, no
# trusted schema, triggers or views), its schema must be hmem's tables as hmem creates them
# and nothing else, and SQLite's work on it is bounded by its size. A recursive view in place
# of the store never returned before; now each trace of that partial is damaged (named,
# listed under "skipped", exit 4). Anything else in the schema refuses the partial.

$ mkdir -p $T/schema && cp tests/tiny/y_context.json tests/tiny/i_oom.json $T/schema/ && cd $T/schema && hmem run -q size y_context.json i_oom.json --partial good.db; echo "exit $?"
exit 0
? 0
# A recursive view in place of the store.
$ R=$PWD; cd $T/schema && cp good.db x.db && sqlite3 x.db "DROP TABLE store; CREATE VIEW store(idx, name, data) AS WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r) SELECT 0, 'mem.ts', x'00' FROM r" && timeout 60 hmem merge size x.db --json x.json; echo "exit $?"; lua5.4 $R/tests/jget.lua skipped.# inputs.# < x.json
hmem: skipped x.db: the store of trace 0 is damaged: its store is not hmem's table (a view, trigger or table of other columns) (0 events read before the error are not used)
hmem: skipped x.db: the store of trace 1 is damaged: its store is not hmem's table (a view, trigger or table of other columns) (0 events read before the error are not used)
hmem: 2 of 2 traces skipped (see above)
exit 4
2
0
? 0
# A store of other columns, and a trigger on it.
$ cd $T/schema && cp good.db x.db && sqlite3 x.db "ALTER TABLE store ADD COLUMN extra" && timeout 60 hmem merge size x.db -q; echo "exit $?"
exit 4
? 0
$ cd $T/schema && cp good.db x.db && sqlite3 x.db "CREATE TRIGGER t AFTER INSERT ON store BEGIN SELECT 1; END" && timeout 60 hmem merge size x.db; echo "exit $?"
hmem: skipped x.db: the store of trace 0 is damaged: its store is not hmem's table (a view, trigger or table of other columns) (0 events read before the error are not used)
hmem: skipped x.db: the store of trace 1 is damaged: its store is not hmem's table (a view, trigger or table of other columns) (0 events read before the error are not used)
hmem: 2 of 2 traces skipped (see above)
exit 4
? 0
# A recursive view in place of another table, an extra view, a trigger, an index, a table
# of hmem's missing or with other columns: refused.
$ cd $T/schema && cp good.db x.db && sqlite3 x.db "DROP TABLE meta; CREATE VIEW meta(key, value) AS WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r) SELECT 'format', i FROM r" && timeout 60 hmem merge size x.db; echo "exit $?"
hmem: x.db: not a partial of hmem's: the view meta is not hmem's: give the files that 'hmem run ... --partial FILE' wrote
exit 4
? 0
$ cd $T/schema && for s in "CREATE VIEW v AS SELECT 1" "CREATE TRIGGER t AFTER INSERT ON files BEGIN SELECT 1; END" "CREATE INDEX i ON plan(path)" "CREATE TABLE more(x)" "DROP TABLE aggregations" "ALTER TABLE files ADD COLUMN x"; do cp good.db x.db && sqlite3 x.db "$s" && timeout 60 hmem merge size x.db; echo "exit $?"; done
hmem: x.db: not a partial of hmem's: the view v is not hmem's: give the files that 'hmem run ... --partial FILE' wrote
exit 4
hmem: x.db: not a partial of hmem's: the trigger t is not hmem's: give the files that 'hmem run ... --partial FILE' wrote
exit 4
hmem: x.db: not a partial of hmem's: the index i is not hmem's: give the files that 'hmem run ... --partial FILE' wrote
exit 4
hmem: x.db: not a partial of hmem's: the table more is not hmem's: give the files that 'hmem run ... --partial FILE' wrote
exit 4
hmem: x.db: not a partial of hmem's: no table aggregations as hmem writes it: give the files that 'hmem run ... --partial FILE' wrote
exit 4
hmem: x.db: not a partial of hmem's: the table files is not hmem's: give the files that 'hmem run ... --partial FILE' wrote
exit 4
? 0
# Not a database at all.
$ cd $T/schema && head -c 5000 good.db > cut.db && timeout 60 hmem merge size cut.db; echo "exit $?"; printf 'not sqlite' > text.db && timeout 60 hmem merge size text.db; echo "exit $?"
hmem: cut.db: not a partial of hmem's: SQLite says: database disk image is malformed: give the files that 'hmem run ... --partial FILE' wrote
exit 4
hmem: text.db: not a partial of hmem's: SQLite says: file is not a database: give the files that 'hmem run ... --partial FILE' wrote
exit 4
? 0
