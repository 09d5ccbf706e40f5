-- Tries to reach the debug library (not in the sandbox).
local debug = require "debug"
function classify(row)
  return type(debug.getinfo)
end
