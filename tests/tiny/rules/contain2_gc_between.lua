-- Issue 24: a __gc finalizer that loops only when it runs outside classify. The GC is
-- stopped while the rules load and restarted as classify returns, with a step size that
-- collects all at once: the next allocation, hmem's own (the next row), runs a whole
-- cycle, and the object classify dropped is finalized there. The old code made that row
-- before arming the call: nobody watched, and hmem hung.
local inside = false
collectgarbage()
collectgarbage("stop")
collectgarbage("incremental", 100, 100, 40)
local mt = {__gc = function() if not inside then while true do end end end}
function classify(row)
  inside = true
  setmetatable({}, mt)
  inside = false
  collectgarbage("restart")
  return "c"
end
