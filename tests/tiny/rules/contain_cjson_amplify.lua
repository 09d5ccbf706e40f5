-- Issue 12: cjson.encode writes into a buffer of its own, outside the Lua heap; a table
-- that holds one 1 MB string 100 times makes a 100 MB text from 1 MB of Lua memory.
local cjson = require "cjson"
local s, t = string.rep("x", 1000000), {}
for i = 1, 100 do t[i] = s end
local text = cjson.encode(t)
function classify(row)
  return "c"
end
