-- Issue 24: the same finalizer, run as hmem makes the row a cache_by key function is
-- given (the old code made it before arming the key function's call). The second
-- classify call (the second allocation, in aten::empty as the first) drops the object and
-- restarts the GC; the next row is the third allocation's, in aten::add, a context the key
-- function has not seen: it is made for the key function.
local inside = false
collectgarbage()
collectgarbage("stop")
collectgarbage("incremental", 100, 100, 40)
local mt = {__gc = function() if not inside then while true do end end end}
local hmem = require "hmem"
hmem.cache_by{function(row) return row.op end}
local calls = 0
function classify(row)
  calls = calls + 1
  if calls == 2 then
    inside = true
    setmetatable({}, mt)
    inside = false
    collectgarbage("restart")
  end
  return "c", false
end
