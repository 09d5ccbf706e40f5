-- hmem.write refuses names outside the --out directory.
local hmem = require "hmem"
function classify(row)
  return "all"
end
function done(report)
  hmem.write("../escape.txt", "no")
end
