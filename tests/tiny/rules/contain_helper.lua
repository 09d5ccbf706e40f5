-- A module that uses hmem.human, string methods and math (contain_poison.lua, issue 12).
local hmem = require "hmem"
return {
  label = function(row)
    local bytes = row.bytes
    return hmem.human(bytes) .. (" half %d"):format(math.floor(bytes / 2))
  end,
}
