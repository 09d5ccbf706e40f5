-- hmem.testing against hmem (issue 11): every shipped pack (lua/hmem/rules/*.lua) runs inside
-- hmem on each real trace of tests/data/expected.lua; a done() hook dumps every field of the
-- first MAX classified rows, in the order hmem classified them, with the category hmem gave
-- each. The same pack then runs under hmem.testing on testing.row copies of those rows, in
-- the same order, and each row must get the same category. A difference means hmem.testing
-- (rows, sandbox, require, cache_by) is not faithful, or a pack depends on something a row
-- copy cannot carry.
-- Usage: lua5.4 tests/differential.lua [PATTERN]  (hmem on PATH; prints ok / not ok lines)
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
local testing = require "hmem.testing"
local expected = dofile("tests/data/expected.lua")
local pattern = arg[1] or ""
-- HMEM_TEST_SHORT=1 (.ci/run's sanitizer pass): the first 300 rows of each trace, not 1500.
local MAX = os.getenv("HMEM_TEST_SHORT") == "1" and 300 or 1500

local function check(ok, name, detail)
  print((ok and "ok - " or "not ok - ") .. name)
  if not ok and detail then
    print("#   " .. detail:gsub("\n", "\n#   "))
  end
end

-- A rule file that is the pack, plus a done() that writes the rows as a Lua chunk (exact:
-- integers as integers, floats with 17 digits, strings quoted), through hmem.write.
local wrapper = [==[
local pack = require "hmem.rules.%s"
local hmem = require "hmem"
local fields = %s
local MAX = %d

local function value(v)
  local t = type(v)
  if t == "string" then
    return ("%%q"):format(v)
  elseif math.type(v) == "integer" or t == "boolean" then
    return tostring(v)
  elseif math.type(v) == "float" then
    if v ~= v then return "0/0" end
    if v == math.huge then return "1/0" end
    if v == -math.huge then return "-1/0" end
    local s = ("%%.17g"):format(v)
    return s:find("[.eni]") and s or s .. ".0"
  elseif t == "table" then
    local out = {}
    for i, x in ipairs(v) do out[i] = value(x) end
    for k, x in pairs(v) do
      if type(k) == "string" then out[#out + 1] = ("[%%q] = %%s"):format(k, value(x)) end
    end
    return "{" .. table.concat(out, ", ") .. "}"
  end
  error("cannot write a " .. t)
end

local function done(report)
  local out, n = { "return {" }, 0
  for _, s in ipairs(report.series) do
    for _, row in ipairs(s:allocations()) do
      if n == MAX then break end
      n = n + 1
      local parts = {}
      for _, f in ipairs(fields) do
        local v = row[f]
        if v ~= nil then parts[#parts + 1] = ("[%%q] = %%s"):format(f, value(v)) end
      end
      out[#out + 1] = ("{ fields = {%%s}, category = %%q },"):format(table.concat(parts, ", "), row.category)
    end
  end
  out[#out + 1] = "}"
  hmem.write("rows.lua", table.concat(out, "\n"))
  if pack.done then pack.done(report) end
end

return { name = pack.name, categories = pack.categories, classify = pack.classify, init = pack.init,
  cache_by = pack.cache_by, view = pack.view, done = done }
]==]

local packs = {}
for name in io.popen("ls lua/hmem/rules"):lines() do
  packs[#packs + 1] = name:match("^(.+)%.lua$")
end

local fields = {}
for _, f in ipairs(testing.fields) do
  if f ~= "category" then fields[#fields + 1] = ("%q"):format(f) end
end
local field_list = "{" .. table.concat(fields, ", ") .. "}"

local function fresh_packs()
  for k in pairs(package.loaded) do
    if k:match("^hmem%.rules%.") then package.loaded[k] = nil end
  end
end

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))

-- The plan first (issue 26): a run that dies before its last result fails in tests/suite.
local planned = 0
for _, e in ipairs(expected) do
  if (e.memory or 0) > 0 and ("tests/data/" .. e.path):find(pattern, 1, true) then planned = planned + #packs end
end
print("1.." .. planned)

for _, e in ipairs(expected) do
  local trace = "tests/data/" .. e.path
  if (e.memory or 0) > 0 and trace:find(pattern, 1, true) then
    local short = e.path
    for _, pack in ipairs(packs) do
      local name = ("differential: %s on %s"):format(pack, short)
      local rule = ("%s/%s.lua"):format(dir, pack)
      local f = assert(io.open(rule, "w"))
      f:write(wrapper:format(pack, field_list, MAX))
      f:close()
      os.remove(dir .. "/rows.lua")
      local cmd = ("hmem run %s '%s' -q --out %s --json %s/r.json 2>&1"):format(rule, trace, dir, dir)
      local p = io.popen(cmd)
      local said = p:read("a")
      local ok = p:close()
      local chunk = ok and loadfile(dir .. "/rows.lua")
      if not chunk then
        check(false, name, "hmem run failed: " .. cmd .. "\n" .. said)
      else
        local rows = chunk()
        fresh_packs()
        local loaded = testing.load("hmem.rules." .. pack)
        local bad, first
        for i, r in ipairs(rows) do
          local t = {}
          for _, fq in ipairs(testing.fields) do
            if fq ~= "category" then
              local v = r.fields[fq]
              if v == nil then v = testing.NIL end
              t[fq] = v
            end
          end
          local okr, row = pcall(testing.row, t)
          local cat
          if okr then
            local okc, c = pcall(loaded.classify, row)
            cat = okc and (c == nil and "unclassified" or c) or ("error: " .. tostring(c))
          else
            cat = "testing.row refused it: " .. tostring(row)
          end
          if cat ~= r.category then
            bad = (bad or 0) + 1
            first = first or ("row %d (%s %d bytes at ts %s, op %s): hmem %q, testing %q"):format(i,
              tostring(r.fields.kind), r.fields.bytes, tostring(r.fields.ts), tostring(r.fields.op), r.category, cat)
          end
        end
        if #rows == 0 then
          check(false, name, "no rows dumped")
        else
          check(bad == nil, ("%s: %d rows, the same categories"):format(name, #rows),
            bad and ("%d rows differ; the first: %s"):format(bad, first))
        end
      end
    end
  end
end
os.execute("rm -rf " .. dir)
