-- Rows keep their identity across files (issue 11): the row done gets for an event is the one
-- classify got for that event of that file, even when two files have events at the same
-- positions. classify remembers each row's file (its series' path is known in done) and
-- event index; done checks every allocation of every series against it, after collections.
local seen, n = {}, 0

function classify(row)
  n = n + 1
  seen[row] = row.file .. "#" .. row.ev_idx
  if n % 50 == 0 then collectgarbage() end
  return row.bytes > 1000 and "big" or "small"
end

function done(report)
  collectgarbage()
  local keys, total, same = 0, 0, 0
  for _ in pairs(seen) do keys = keys + 1 end
  for _, s in ipairs(report.series) do
    for _, row in ipairs(s:allocations()) do
      total = total + 1
      if seen[row] == s.path .. "#" .. row.ev_idx then same = same + 1 end
    end
  end
  print(("classify %d rows (%d table keys); done: %d of %d allocations are the rows classify got for their file")
    :format(n, keys, same, total))
end
