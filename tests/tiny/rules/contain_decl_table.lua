-- Issue 12: hmem's list of declarations is not the rule file's to write (before, a `by`
-- that was a number was read as a table: a crash).
local hmem = require "hmem"
hmem._aggregations[1] = {name = "x", by = 12345}
function classify(row)
  return "c"
end
