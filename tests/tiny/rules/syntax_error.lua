-- Line 4 is not Lua.
function classify(row)
  return "ok"
  if then
end
