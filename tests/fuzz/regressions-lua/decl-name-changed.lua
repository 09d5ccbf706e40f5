-- Issue 12 (review): the name of a declaration changed after hmem.aggregate returned
-- it; hmem ran strlen(NULL) at the aggregation.
local hmem = require "hmem"
local d = hmem.aggregate{name = "by op", by = "op"}
d.name = nil
function classify(row) return "c" end
