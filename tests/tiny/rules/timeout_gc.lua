-- Issue 12: a __gc finalizer that loops, run by a collection during classify (hooks do
-- not run in finalizers).
function classify(row)
  setmetatable({}, {__gc = function() while true do end end})
  collectgarbage()
  return "c"
end
