-- series:timeline with the largest point counts a rule can ask for (issue 11: 2 * points
-- overflowed): every state comes back, as with no points at all.
function classify(row) return row.bytes >= 1024 and "big" or "small" end
function done(report)
  local s = report.series[1]
  local ts0, b0 = s:timeline("big")
  for _, p in ipairs({math.maxinteger, math.maxinteger // 2 + 1, 1 << 62}) do
    local ts, b = s:timeline("big", {points = p})
    local same = #ts == #ts0
    for i = 1, #ts0 do same = same and ts[i] == ts0[i] and b[i] == b0[i] end
    print(("points %d: %d of %d states, %s"):format(p, #ts, #ts0, same and "the same" or "different"))
  end
end
