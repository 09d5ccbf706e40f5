-- Issue 12 (review): a rule file changing the string metatable, string, math and hmem
-- while other modules use them.
local hmem = require "hmem"
local size = require "hmem.rules.size"
string.format = nil
math.floor = nil
hmem.human = nil
pcall(function() getmetatable("").__index = nil end)
pcall(function() getmetatable("").__index.format = nil end)
function classify(row)
  pcall(function() getmetatable(row).__index = nil end)
  return size.classify(row)
end
function done(report)
  assert(hmem.human == nil and size ~= nil)
end
