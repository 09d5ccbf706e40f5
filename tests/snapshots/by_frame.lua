-- Snapshot rows by their innermost user frame (tests/snapshots/check.lua, issue 18).
function classify(row)
  return row.frame or "(no user frame)"
end
