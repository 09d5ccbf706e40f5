-- Issue 12 (review): cjson's depths raised to a billion, then a document and a table a few
-- hundred thousand levels deep: the C stack overflowed.
local cjson = require "cjson"
pcall(cjson.decode_max_depth, 1e9)
pcall(cjson.encode_max_depth, 1e9)
pcall(cjson.decode, string.rep("[", 400000) .. string.rep("]", 400000))
local deep = {}
for _ = 1, 300000 do deep = {deep} end
pcall(cjson.encode, deep)
local c = cjson.new()
pcall(c.decode_max_depth, 1e9)
pcall(c.decode, string.rep("[", 400000) .. string.rep("]", 400000))
function classify(row) return "c" end
