-- cache_by with a key function (issue 19): hmem calls it once per context and classify once
-- per distinct answer; y_pair_basic has two contexts (aten::empty twice, aten::add).
local hmem = require "hmem"
local keys = 0
hmem.cache_by{ function(row) keys = keys + 1; return row.op end }
function classify(row)
  print("classify " .. row.op .. " " .. row.bytes)
  return row.op
end
function done()
  print("key function calls " .. keys)
end
