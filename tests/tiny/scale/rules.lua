-- Rules for the merge tests (issue 16): a category per op (so the order categories are
-- first seen in matters), an aggregation that keeps only its top 3 groups across series,
-- and a done(report) that writes what it saw, including a re-read of a series' timeline and
-- the cross-rank rows.
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
  for _, w in ipairs(report.ranks) do -- across ranks: the same from a merge as from one run
    out[#out + 1] = ("ranks %s %s max %d rank %s min %d median %d mean %d imbalance %s"):format(w.device_kind,
      w.category or "(device peak)", w.max_bytes, tostring(w.max_rank), w.min_bytes, w.median_bytes, w.mean_bytes,
      tostring(w.imbalance))
  end
  hmem.write("done.txt", table.concat(out, "\n") .. "\n")
end
