-- Issue 12: a __gc finalizer that loops when hmem closes the Lua state at the end of a
-- run that otherwise succeeds (the object is held by a global until then).
held = setmetatable({}, {__gc = function() while true do end end})
function classify(row)
  return "c"
end
