-- Issue 12: a rule file changes string, math, hmem, the string metatable and the row's
-- metatable; the module it requires (contain_helper.lua) still sees its own.
local hmem = require "hmem"
local helper = require "contain_helper"
string.format = function() return "poisoned" end
math.floor = function() return -1 end
hmem.human = function() return "poisoned" end
pcall(function() getmetatable("").__index.format = function() return "poisoned" end end)
pcall(function() getmetatable("").__index = {format = function() return "poisoned" end} end)
pcall(function() rawset(getmetatable(""), "__index", {format = function() return "poisoned" end}) end)
function classify(row)
  pcall(function() getmetatable(row).__index = function() return 0 end end)
  return helper.label(row)
end
