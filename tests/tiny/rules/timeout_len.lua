-- Issue 12: a __len that claims 2^50 elements makes table.insert and table.remove shift
-- 2^50 slots in C; both are bounded by what --lua-mem lets a table hold.
local huge = setmetatable({}, {__len = function() return 1 << 50 end})
print(pcall(table.insert, huge, 1, "x"))
print(pcall(table.remove, huge, 1))
print(pcall(table.concat, huge, ",", 2))
function classify(row)
  return "c"
end
