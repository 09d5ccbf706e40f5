-- Raises an error on line 5 for allocations of 512 bytes, and only those.
local function check(row)
  if row.bytes == 512 then
    local why = "no rule for " .. row.bytes .. " bytes"
    error(why)
  end
end

function classify(row)
  check(row)
  return "ok"
end
