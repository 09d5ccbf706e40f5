-- done(report) reads everything computed (issue 3).
function init()
  print("init")
end

function classify(row)
  return row.op or "(no op)"
end

function done(report)
  print("rules", report.rules, "series", #report.series, "categories", table.concat(report.categories, ","))
  local s = report.series[1]
  print("series", s.path, s.device, s.rank, s.memory_events, s.allocs, s.frees, s.peak_bytes, s.peak_ts, s.end_bytes)
  for _, c in ipairs(s.categories) do
    print("category", c.name, c.peak_bytes, c.bytes_at_peak, c.end_bytes, c.allocs, c.alloc_bytes)
  end
  local ts, bytes = s:timeline("aten::empty")
  for i = 1, #ts do print("timeline", ts[i], bytes[i]) end
  for _, row in ipairs(s:live_at(111.0)) do print("live at 111", row.bytes, row.category, row.op) end
  for _, row in ipairs(s.live_at_peak) do print("live at peak", row.bytes, row.category) end
  print("allocations", #s:allocations())
  -- rows of the same event are equal, also as table keys; rows of other events are not
  local a, b, seen = s:allocations(), s:allocations(), {}
  seen[a[1]] = true
  print("same event equal", a[1] == b[1], seen[b[1]], a[1] == a[2], type(a[1]))
end
