-- A view that keeps every op as "o" and nothing else: the first two allocations (one op
-- each, aten::add and aten::mul) share a view; the third (aten::linear > aten::addmm, under
-- a module frame) has its own. cache_by{"view"} then calls classify twice, not three times.
local hmem = require "hmem"
local asked = {}
function view(name, kind)
  asked[#asked + 1] = kind .. " " .. name
  return kind == "op" and "o" or nil
end
hmem.cache_by { "view" }
function classify(row)
  return "ops: " .. #row.ops
end
function done()
  table.sort(asked)
  print("asked: " .. table.concat(asked, ", "))
end
