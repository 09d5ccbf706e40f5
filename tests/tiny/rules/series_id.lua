-- row.series_id (issue 19): one integer per series (file and device).
local hmem = require "hmem"
local seen, n = {}, 0
function classify(row)
  local key = row.file .. " " .. row.device
  if seen[key] == nil then
    seen[key] = row.series_id
    n = n + 1
  elseif seen[key] ~= row.series_id then
    print("two ids for " .. key)
  end
  return "x"
end
function done()
  local ids = {}
  for key, id in pairs(seen) do
    if ids[id] then print("one id for two series") end
    ids[id] = true
    assert(math.type(id) == "integer")
  end
  print(n .. " series")
end
