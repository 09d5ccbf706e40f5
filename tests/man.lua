-- The man page hmem(1) (man/hmem.1) against the contract it is written from (issue 17):
-- every command and option of `hmem --help` and of the README's synopsis is in it, its exit
-- codes are the README's, and groff reads it without a warning.
local t = dofile("tests/testlib.lua")
local function slurp(cmd) return (t.sh(cmd)) end
local function read(path) return slurp("cat '" .. path .. "'") end
local man_src = read("man/hmem.1")
local man = man_src:gsub("\\%-", "-")
local pass, fail = 0, 0
local function check(ok, name)
  print((ok and "ok - " or "not ok - ") .. "man page: " .. name)
  if ok then pass = pass + 1 else fail = fail + 1 end
end
-- A word of the page: surrounded by what is not part of an option name.
local function has(word)
  return (" " .. man .. " "):find("[^%w%-]" .. word:gsub("%p", "%%%0") .. "[^%w%-]") ~= nil
end

local help = slurp("./hmem --help")
local opts, seen = {}, {}
for opt in help:gmatch("%f[%S](%-%-?[%a][%w%-]*)") do
  if not seen[opt] then
    seen[opt] = true
    opts[#opts + 1] = opt
  end
end
check(#opts > 10, ("hmem --help lists options (%d found)"):format(#opts))
for _, o in ipairs(opts) do
  check(has(o), "documents " .. o .. " (from hmem --help)")
end
for line in help:gmatch("[^\n]+") do
  local cmd = line:match("^usage: hmem (%l+) ") or line:match("^%s+hmem (%l+) ")
  if cmd then check(man:find("\n%.B " .. cmd .. "\n") ~= nil, "has the command " .. cmd .. " (from hmem --help)") end
end

local readme = read("README.md")
local synopsis = readme:match("## Running\n\n(.-)\n\n")
for o in synopsis:gmatch("%[(%-%-?[%a][%w%-]*)") do
  check(has(o), "documents " .. o .. " (from the README's synopsis)")
end
local codes_readme, codes_man = {}, {}
for code in readme:match("## Errors and exit codes\n(.-)\n## "):gmatch("\n| (%d+) |") do
  codes_readme[#codes_readme + 1] = code
end
for code in man:match("%.SH EXIT STATUS\n(.-)\n%.SH "):gmatch("%.TP\n%.B (%d+)\n") do
  codes_man[#codes_man + 1] = code
end
check(#codes_readme > 0 and table.concat(codes_readme, " ") == table.concat(codes_man, " "),
  ("the exit codes are the README's (%s; the page: %s)"):format(table.concat(codes_readme, " "), table.concat(codes_man, " ")))

if os.execute("command -v groff >/dev/null 2>&1") then
  local warnings = slurp("groff -man -ww -z man/hmem.1 2>&1")
  check(warnings == "", "groff -ww reads it without a warning" .. (warnings ~= "" and (": " .. warnings) or ""))
end
os.exit(fail == 0 and 0 or 1)
