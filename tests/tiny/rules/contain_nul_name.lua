-- Issue 12: an aggregation name with a NUL byte is refused (before, it was cut at the NUL).
local hmem = require "hmem"
hmem.aggregate{name = "by op\0hidden", by = "op"}
function classify(row)
  return "c"
end
