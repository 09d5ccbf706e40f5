-- Issue 12: a declaration is checked in full when it is made, at the line that makes it.
local hmem = require "hmem"
hmem.aggregate{name = "by op", by = {"op", 12345}}
function classify(row)
  return "c"
end
