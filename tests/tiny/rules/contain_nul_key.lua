-- Issue 12: a key with a NUL byte is refused (before, "x\0alloc" and "x\0free" were both
-- printed as "x", as two groups).
local hmem = require "hmem"
hmem.aggregate{name = "by kind", by = function(row) return "x\0" .. row.kind end}
function classify(row)
  return "c"
end
