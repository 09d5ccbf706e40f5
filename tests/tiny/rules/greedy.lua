-- A classify that keeps allocating: --lua-mem must stop it.
local keep = {}
function classify(row)
  for i = 1, 1e9 do keep[#keep + 1] = string.rep("x", 1000) .. i end
end
