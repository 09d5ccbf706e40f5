-- Aggregations computed by hmem after the timeline (issue 3).
local hmem = require "hmem"
hmem.aggregate{name = "by op", by = {"category", "op"}, sum = "bytes", count = true, max = "lifetime"}
hmem.aggregate{name = "at peak", by = {"op"}, sum = "bytes", where = "live_at_peak"}
hmem.aggregate{name = "by size", by = {function(row) return row.bytes >= 1024 and "big" or "small" end},
               sum = "bytes", top = 1}
hmem.aggregate{name = "never freed", by = {"op"}, count = true, where = function(row) return row.free_ts == nil end}
function classify(row)
  return row.bytes >= 1024 and "big" or "small"
end
