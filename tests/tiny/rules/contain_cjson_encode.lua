-- Issue 12: the same for encoding, and for instances made with cjson.new and cjson.safe.
local cjson = require "cjson"
local safe = require "cjson.safe"
local deep = {}
for _ = 1, 300000 do deep = {deep} end
for _, c in ipairs({cjson, cjson.new(), safe, safe.new()}) do
  assert(not pcall(c.encode_max_depth, 1e9))
  assert(not pcall(c.decode_max_depth, 1001))
end
assert(not pcall(cjson.encode, deep))
assert(safe.encode(deep) == nil)
function classify(row)
  return "c"
end
