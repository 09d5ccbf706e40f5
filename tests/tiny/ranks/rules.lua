-- Cross-rank tests (issue 16): 100 bytes or more is "big", less is "small"; done(report)
-- prints report.ranks, a line per row.
function classify(row)
  return row.bytes >= 100 and "big" or "small"
end

function done(report)
  for _, w in ipairs(report.ranks) do
    print(("%s %s %d max %d %s %s %s min %d median %d mean %d imbalance %s"):format(w.device_kind,
      w.category or "-", w.series, w.max_bytes, w.max_path, tostring(w.max_rank), w.max_device, w.min_bytes,
      w.median_bytes, w.mean_bytes, w.imbalance and ("%.3f"):format(w.imbalance) or "nil"))
  end
end
