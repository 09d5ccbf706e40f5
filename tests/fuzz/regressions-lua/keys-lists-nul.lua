-- Issue 12 (review): two list fields in one key (the second overwrote the first's text
-- before it was copied), keys with a NUL byte, and a key function returning each type.
local hmem = require "hmem"
hmem.aggregate{name = "lists", by = {"ops", "annotations", "stack"}, sum = "bytes", max = "lifetime"}
hmem.aggregate{name = "types", by = {function(r) return r.bytes > 600 end, function(r) return r.ts end,
                                    function(r) return r.bytes end, function() return nil end}}
hmem.aggregate{name = "nul", by = function(r) return "a\0" .. r.kind end}
function classify(row) return "c" end
