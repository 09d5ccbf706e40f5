-- Prints hmem.version as a rule file sees it (issue 17: the binary's, defined once).
local hmem = require "hmem"
print("hmem.version " .. tostring(hmem.version))
function classify(row)
  return "x"
end
