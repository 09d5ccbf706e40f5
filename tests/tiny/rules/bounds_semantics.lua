-- Issue 12: the bounded string.rep, table.insert/remove/move/concat and xpcall behave as
-- Lua's own (tests/cli/timeout_bounds.t runs this file with lua5.4 too and compares).
local out = {}
local function say(...)
  local t = table.pack(...)
  for i = 1, t.n do t[i] = tostring(t[i]) end
  out[#out + 1] = table.concat(t, " ", 1, t.n)
end
local function try(f, ...)
  local ok, err = pcall(f, ...)
  say(ok, ok and "" or (tostring(err):gsub("^[^:]*:%d+: ", "")))
end
say(string.rep("ab", 3), string.rep("ab", 3, ","), string.rep("x", 0), string.rep("x", -1), ("z"):rep(2))
say(#string.rep("", 1 << 20), #string.rep("", 3, ""), string.rep("", 3, "-"))
local t = {1, 2, 3}
table.insert(t, 4)
table.insert(t, 1, 0)
table.insert(t, #t + 1, 5)
say(table.concat(t, ","))
say(table.remove(t), table.remove(t, 1), table.remove(t, 2), table.concat(t, ","))
say(table.remove({}), table.remove({}, 0), table.remove({}, 1))
try(table.insert, {1}, 5, 1)
try(table.insert, {1}, 1, 2, 3)
try(table.insert, {1})
try(table.remove, {1, 2}, 7)
try(table.insert, 3, 1)
try(table.remove, "s")
local log = {}
local proxy = setmetatable({}, {__len = function() return 2 end,
  __index = function(_, k) log[#log + 1] = "get" .. k; return k * 10 end,
  __newindex = function(_, k, v) log[#log + 1] = "set" .. k .. "=" .. tostring(v) end})
say(table.remove(proxy, 1))
table.insert(proxy, 1, 7)
say(table.concat(log, " "))
say(table.concat({1, 2, 3}), table.concat({1, 2, 3}, "-", 2), table.concat({1, 2, 3}, "", 2, 3), table.concat({}, "x"))
try(table.concat, {1, {}, 3})
try(table.concat, 5)
say(table.concat(setmetatable({}, {__len = function() return 3 end, __index = function(_, k) return "k" .. k end}), "+"))
say(table.concat(table.move({1, 2, 3}, 1, 3, 2), ","), table.concat(table.move({1, 2}, 1, 2, 1, {9, 9, 9}), ","))
try(table.move, {}, 1, 2)
say(table.concat(table.move({1, 2, 3, 4}, 2, 4, 1), ","), table.concat({1, 2.5, "x"}, ";"))
try(table.move, {1, 2}, 1, 2, math.maxinteger)
try(table.move, {1, 2}, math.mininteger, 2, 1)
try(string.rep)
try(string.rep, "x", 1 << 40)
say(xpcall(function() error("e1") end, function(m) return "handled " .. m:gsub("^[^:]*:%d+: ", "") end))
say(xpcall(function(a, b) return a + b end, print, 1, 2))
try(xpcall, function() end)
say(select("#", xpcall(function() return 1, nil, 3 end, print)))
for _, l in ipairs(out) do print(l) end
function classify(row) return "c" end
