-- One aggregation per series (the default) and one across series (issue 17: CPU and GPU
-- rows were summed together unless device was in by).
local hmem = require "hmem"
hmem.aggregate{name = "per series", by = "kind", sum = "bytes"}
hmem.aggregate{name = "across", by = "kind", sum = "bytes", per = "all"}
hmem.aggregate{name = "device named", by = {"device", "kind"}, sum = "bytes"}
function classify(row)
  return row.kind
end
