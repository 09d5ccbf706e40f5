-- Issue 12: the keys a by function returns are kept by hmem in C, one copy per group;
-- they count against --lua-mem like the rule file's own memory.
local hmem = require "hmem"
hmem.aggregate{name = "huge keys", by = function(row) return string.rep("k", 8 * 1024 * 1024) .. row.ts end}
function classify(row)
  return "c"
end
