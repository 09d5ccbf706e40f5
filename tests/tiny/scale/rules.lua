-- Rules for the merge tests (issue 16): a category per op (so the order categories are
-- first seen in matters), an aggregation that keeps only its top 3 groups across series,
-- and a done(report) that writes what it saw, including a re-read of a series' timeline.
local hmem = require "hmem"
hmem.aggregate{name = "top ops", by = {"op"}, sum = "bytes", per = "all", top = 3}
hmem.aggregate{name = "per series", by = {"category"}, sum = "bytes", max = "bytes", top = 2}

function classify(row)
  return row.op or "(no op)"
end

function done(report)
  local out = {"categories: " .. table.concat(report.categories, ", ")}
  for _, row in ipairs(report.aggregations["top ops"].rows) do
    out[#out + 1] = ("top %s %d %d"):format(row.op, row.count, row.bytes)
  end
  for _, s in ipairs(report.series) do
    local ts, bytes = s:timeline(report.categories[2] or "(before trace)", {points = 4})
    out[#out + 1] = ("%s %s peak %d points %d allocations %d"):format(s.path, s.device, s.peak_bytes, #ts,
      #s:allocations())
  end
  hmem.write("done.txt", table.concat(out, "\n") .. "\n")
end
