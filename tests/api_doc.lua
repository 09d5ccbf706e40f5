-- The scripting API has one written contract, README.md "Scripting": everything hmem
-- registers for rule files must be named there. Checked: the hmem and hmem.testing
-- modules' public keys, the row's fields (src/fields.c), the series' fields and methods
-- and the report's keys (src/lreport.c), every luaL_Reg entry in src/, and the hooks.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
local readme = io.open("README.md"):read("a")
local scripting = readme:match("\n## Scripting\n(.-)\n## ") or ""

local function check(ok, name)
  print((ok and "ok - " or "not ok - ") .. name)
end

local function documented(text)
  return scripting:find(text, 1, true) ~= nil
end

local function source(path)
  local f = assert(io.open(path))
  local s = f:read("a")
  f:close()
  return s
end

for _, mod in ipairs({ { "hmem", "hmem." }, { "hmem.testing", "testing." } }) do
  local keys = {}
  for k in pairs(require(mod[1])) do
    if not k:match("^_") then keys[#keys + 1] = k end
  end
  table.sort(keys)
  for _, k in ipairs(keys) do
    check(documented(mod[2] .. k), ("README documents %s%s"):format(mod[2], k))
  end
end

for name in source("src/fields.c"):gmatch('%[HM_F_[%w_]+%] = "([%w_]+)"') do
  check(documented("`" .. name .. "`"), ("README documents the row field %s"):format(name))
end

local lreport = source("src/lreport.c")
for name in lreport:gmatch('{"([%w_]+)", series_[%w_]+}') do
  check(documented("series:" .. name .. "("), ("README documents series:%s"):format(name))
end
for name in lreport:gmatch('!strcmp%(k, "([%w_]+)"%)') do
  check(documented("`" .. name .. "`"), ("README documents the series field %s"):format(name))
end
-- the explain fields of a series (issue 14) are answered by src/lexplain.c
for name in source("src/lexplain.c"):gmatch('!strcmp%(key, "([%w_]+)"%)') do
  check(documented("`" .. name .. "`"), ("README documents the series field %s"):format(name))
end
local report = lreport:match("void hm_lua_report_push(.-)\n}")
for _, key in ipairs({ "rules", "categories", "inputs", "series", "aggregations", "ranks" }) do
  check(report:find('"' .. key .. '"', 1, true) and documented("`" .. key .. "`"), ("README documents report.%s"):format(key))
end

local p = io.popen("ls src/*.c")
for path in p:lines() do
  -- the Lua functions registered (luaL_Reg tables); run.c's table of stages is no Lua API
  local text = source(path)
  for name in (text:find("luaL_Reg", 1, true) and text or ""):gmatch('{"([%w_]+)", [%a_][%w_]*}') do
    check(documented(name), ("README names %s, registered in %s"):format(name, path))
  end
end
p:close()

for _, hook in ipairs({ "classify(row)", "init()", "done(report)" }) do
  check(documented("`" .. hook .. "`"), "README documents the hook " .. hook)
end
