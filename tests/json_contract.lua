-- The JSON contract (issue 14): every key hmem's --json writes, at any depth, is documented in
-- README.md (as `key` or "key"), on traces that have steps, OOMs, a leak and modules.
-- Usage: lua5.4 tests/json_contract.lua   (hmem in the repository root)
local cjson = require "cjson"
local readme = io.open("README.md"):read("a")
local outputs = readme

local keys = {}
local function walk(v, where)
  if type(v) ~= "table" then return end
  for k, x in pairs(v) do
    if type(k) == "string" and where ~= "aggregations" then
      keys[k] = keys[k] or where
      walk(x, k)
    else
      walk(x, where)
    end
  end
end

-- and a memory snapshot with an OOM (issue 18: its segments and the failing allocation's stack)
local T = assert(io.popen("mktemp -d")):read("l")
assert(os.execute("python3 tests/snapshots/gen.py hostile " .. T))
for _, trace in ipairs({ "tests/tiny/explain/y_oom.json", "tests/tiny/explain/y_leak.json",
  "tests/tiny/explain/y_who.json", "tests/tiny/y_pair_basic.json", "tests/tiny/ranks", T .. "/oom.pickle" }) do
  local p = io.popen(("./hmem run -q size %s --json -"):format(trace))
  walk(cjson.decode(p:read("a")), "top")
  p:close()
end
-- and budgets, broken and passed, from the command line and a rule file, with hmem.fail (issue 28)
do
  local p = io.popen("./hmem run -q tests/tiny/rules/decide_budget_pack.lua tests/tiny/y_pair_basic.json --set fail=no "
    .. "--set limit=1000 --fail-above 2KiB --fail-above activation=1 --json - 2>/dev/null")
  walk(cjson.decode(p:read("a")), "top")
  p:close()
end
os.execute("rm -rf '" .. T .. "'")
local names = {}
for k in pairs(keys) do names[#names + 1] = k end
table.sort(names)
print("1.." .. #names)
for _, k in ipairs(names) do
  local ok = outputs:find("`" .. k .. "`", 1, true) or outputs:find('"' .. k .. '"', 1, true)
  print((ok and "ok - " or "not ok - ") .. ("README documents the --json key %s (in %s)"):format(k, keys[k]))
end
