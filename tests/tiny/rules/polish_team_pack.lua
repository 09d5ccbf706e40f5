-- A team pack as busted tests it (issue 17): an aggregation, a helper and done.
local hmem = require "hmem"
hmem.aggregate{name = "by op", by = "op", sum = "bytes"}
local last
function is_big(row)
  return row.bytes >= hmem.MiB
end
function classify(row)
  return is_big(row) and "big" or "small"
end
function done(report)
  last = report
end
function last_report()
  return last
end
