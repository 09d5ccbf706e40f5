-- README "Inside hmem" lists every file of src/ once, and only files that exist (issue 13):
-- a newcomer finds the room for a change in one look only while the table is whole.
--   lua5.4 tests/inside.lua   (prints a plan, then ok / not ok lines)
local readme = assert(io.open("README.md")):read("a")
local section = readme:match("\n## Inside hmem\n(.-)\n## ") or readme:match("\n## Inside hmem\n(.*)$")

local listed, order = {}, {}
for row in (section or ""):gmatch("\n(|[^\n]*)") do
  local first = row:match("^|%s*([^|]-)%s*|")
  if first and first ~= "file" and not first:match("^%-+$") then
    for name in first:gmatch("`([^`]+)`") do
      if not listed[name] then order[#order + 1] = name end
      listed[name] = (listed[name] or 0) + 1
    end
  end
end

local files = {}
local p = assert(io.popen("ls src"))
for f in p:lines() do files[#files + 1] = f end
p:close()

print("1.." .. (#files + #order + 1))
print((section and "ok" or "not ok") .. " - README has an \"Inside hmem\" section")
local present = {}
for _, f in ipairs(files) do
  present[f] = true
  local n = listed[f] or 0
  print((n == 1 and "ok" or "not ok") .. (" - src/%s is listed in README \"Inside hmem\"%s"):format(f,
    n == 1 and "" or n == 0 and " (it is not: add a line for it)" or (" (%d times)"):format(n)))
end
for _, name in ipairs(order) do
  print((present[name] and "ok" or "not ok") .. (" - README \"Inside hmem\" names %s, which is in src/%s"):format(name,
    present[name] and "" or " (it is not: remove or rename the line)"))
end
