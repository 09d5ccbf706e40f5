-- Rows keep their identity (issue 11): the row classify saw for an event is the row done,
-- aggregations and live_at give for it, as == and as a table key, even after garbage
-- collections; cjson.null keeps no row metatable.
local hmem = require "hmem"
local cjson = require "cjson"

local seen, list, n = {}, {}, 0
local where_hits, by_hits = 0, 0

hmem.aggregate{name = "seen", by = {function(row) if seen[row] then by_hits = by_hits + 1 end return row.kind end},
  where = function(row) if seen[row] then where_hits = where_hits + 1 end return true end}

function classify(row)
  n = n + 1
  seen[row] = n
  list[n] = row
  if n % 50 == 0 then collectgarbage() end
  return row.bytes > 1000 and "big" or "small"
end

function done(report)
  collectgarbage()
  local key_hits, eq_hits, total = 0, 0, 0
  local live_hits, live_total = 0, 0
  for _, s in ipairs(report.series) do
    for _, row in ipairs(s:allocations()) do
      total = total + 1
      local i = seen[row]
      if i then key_hits = key_hits + 1 end
      if i and list[i] == row and rawequal(list[i], row) then eq_hits = eq_hits + 1 end
    end
    for _, row in ipairs(s:live_at(s.peak_ts)) do
      live_total = live_total + 1
      if seen[row] then live_hits = live_hits + 1 end
    end
  end
  print(("classify %d, allocations %d: %d table keys, %d =="):format(n, total, key_hits, eq_hits))
  print(("live at peak %d: %d table keys"):format(live_total, live_hits))
  print(("aggregation: where %d, by %d"):format(where_hits, by_hits))
  local row = list[1]
  print(("category read in done: %s"):format(row.category))
  print(("cjson.null: %s, %s"):format(tostring(cjson.null):match("^userdata: ") and "userdata: ..." or tostring(cjson.null),
    select(2, pcall(function() return cjson.null.bytes end))))
  print(("getmetatable(cjson.null): %s, getmetatable(row): %s"):format(tostring(getmetatable(cjson.null)), getmetatable(row)))
end
