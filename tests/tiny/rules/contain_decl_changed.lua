-- Issue 12: a declaration changed after hmem.aggregate returns changes nothing (hmem kept
-- its own checked copy); before, hmem read the changed table and crashed (strlen(NULL)).
local hmem = require "hmem"
local d = hmem.aggregate{name = "by op", by = "op"}
d.name = nil
d.by[1] = 12345
function classify(row)
  return "c"
end
