-- A module a pack requires from its own directory.
local M = {}
function M.tag(category, row)
  if category == "small (< 1 MiB)" and row.op then
    return category .. " in " .. row.op
  end
  return category
end
return M
