-- With a view declared, a cache_by key function is called once per view, not per context:
-- the three allocations of y_view_memo have three contexts and two views.
local hmem = require "hmem"
local keys = 0
function view(name, kind)
  return kind == "op" and "o" or nil
end
hmem.cache_by { function(row) keys = keys + 1; return #row.ops end }
function classify(row)
  return "x"
end
function done()
  print("key function calls: " .. keys)
end
