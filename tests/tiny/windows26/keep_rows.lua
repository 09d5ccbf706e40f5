-- Rows kept from classify must name the same events in done, under a window (issue 26): each
-- row classify saw is kept with its ts, bytes and category, and done prints how many still
-- read them, then every row, the steps (partial ones marked) and the leak verdict.
local kept = {}

function classify(row)
  local cat = row.bytes >= 1048576 and "activation" or "small"
  kept[#kept + 1] = {row = row, ts = row.ts_ns, bytes = row.bytes, cat = cat}
  return cat
end

function done(report)
  local same = 0
  for _, k in ipairs(kept) do
    if k.row.ts_ns == k.ts and k.row.bytes == k.bytes and k.row.category == k.cat then same = same + 1 end
  end
  print(("rows kept %d, reading the same event in done %d"):format(#kept, same))
  for _, k in ipairs(kept) do print(" row", k.row.ts, k.row.kind, k.row.bytes, k.row.category) end
  for _, s in ipairs(report.series) do
    print(s.device, "start", s.before_trace_bytes, "end", s.end_bytes, "peak", s.peak_bytes, s.peak_ts)
    for _, st in ipairs(s.steps) do
      print(" step", st.step, st.start_ts, st.end_ts, st.start_bytes, st.end_bytes, st.growth_bytes, st.partial and "partial" or "whole")
    end
    print(" leak", s.leak.verdict, s.leak.steps, s.leak.per_step_bytes)
  end
end
