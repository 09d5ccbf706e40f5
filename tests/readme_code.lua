-- Every ```lua block of README.md is the body of a file in examples/ (so what the manual
-- shows is what the tests run).
local readme = io.open("README.md"):read("a")
local examples = {}
local p = io.popen("ls examples/*.lua")
for f in p:lines() do examples[f] = io.open(f):read("a") end
p:close()
local n = 0
for block in readme:gmatch("```lua\n(.-)```") do
  n = n + 1
  local found
  for f, text in pairs(examples) do
    if text:find(block, 1, true) then found = f end
  end
  print((found and "ok - " or "not ok - ") .. ("README lua example %d is in %s"):format(n, found or "no examples/*.lua file"))
end
