-- Issue 12 (review): a `by` that is a number, written into hmem's own list; hmem read it
-- as a table (lua_rawgeti on an integer) and could be made to call any address.
local hmem = require "hmem"
pcall(function() hmem._aggregations[1] = {name = "x", by = 12345} end)
local d = hmem.aggregate{name = "y", by = {"op", function(row) return row.kind end}}
d.by = 12345
d.by = {12345, {}, "nope"}
setmetatable(d, {__index = function() error("trap") end})
function classify(row) return "c" end
