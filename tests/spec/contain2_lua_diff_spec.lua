-- hmem.diff's work grows with its input, not with its square (issue 24): 200,000 series of
-- one (rank, device) took 146 s when each match shifted the queue (table.remove(q, 1)), and
-- a two-star glob over a long name backtracked. Work is counted, not timed: Lua
-- instructions (a count hook) plus the elements table.insert and table.remove move in C.
local diff = require "hmem.diff"

local function report(n)
  local t = {}
  for i = 1, n do
    t[i] = ('{"path": "a.json", "rank": 0, "device": "cuda:0", "peak_bytes": %d, "categories": [{"name": "c", "peak_bytes": %d}]}'):format(i, i)
  end
  return '{"version": 1, "series": [' .. table.concat(t, ",") .. "]}"
end

local function work(f)
  local n, insert, remove = 0, table.insert, table.remove
  table.insert = function(t, ...)
    if select("#", ...) == 2 then n = n + #t - (...) + 1 end
    return insert(t, ...)
  end
  table.remove = function(t, pos)
    n = n + #t - (pos or #t)
    return remove(t, pos)
  end
  debug.sethook(function() n = n + 100 end, "", 100)
  local ok, err = pcall(f)
  debug.sethook()
  table.insert, table.remove = insert, remove
  assert(ok, err)
  return n
end

describe("hmem.diff's growth", function()
  it("matches series of one (rank, device) in work linear in their number (up to the sort's log)", function()
    local small, big = report(1000), report(10000)
    local w1 = work(function() diff.run(small, small, { formats = { json = true } }) end)
    local w10 = work(function() diff.run(big, big, { formats = { json = true } }) end)
    assert.is_true(w10 < 15 * w1, ("10x the series cost %.1fx the work"):format(w10 / w1))
  end)

  it("matches a two-star glob against a long name in work linear in the name", function()
    local function one(n)
      local name = string.rep("a", n)
      local r = ('{"version": 1, "series": [{"path": "t.json", "device": "cuda:0", "peak_bytes": 1, "categories": [{"name": "%s", "peak_bytes": 1}]}]}'):format(name)
      return work(function()
        diff.run(r, r, { deltas = { { key = "*a*b", pct = 1, from = "*a*b=1%" } }, formats = {} })
      end)
    end
    assert.is_false(diff.glob_match("*a*b", string.rep("a", 1 << 16)))
    assert.is_true(diff.glob_match("*a*b", string.rep("a", 1 << 16) .. "b"))
    -- the old pattern was quadratic in the name (in C, where no hook counts; it took seconds
    -- at 64 KiB): the matcher now runs in Lua, so its steps are counted
    local w1, w10 = one(1 << 12), one(10 << 12)
    assert.is_true(w10 < 15 * w1, ("10x the name cost %.1fx the work"):format(w10 / w1))
  end)

  it("matches globs as before", function()
    for _, c in ipairs({ { "*", "", true }, { "a*", "abc", true }, { "a*", "bc", false }, { "*c", "abc", true },
      { "a*c", "ac", true }, { "a*c", "a", false }, { "a?c", "abc", true }, { "a?c", "ac", false },
      { "a*b*c", "aXbYc", true }, { "a*b*c", "aXcYb", false }, { "a.c", "abc", false }, { "a%c", "a%c", true },
      { "a**a", "a", false }, { "a*a", "aa", true }, { "ab*ba", "aba", false }, { "*?", "", false },
      { "?*?", "a", false }, { "act*", "act", true } }) do
      assert.are.equal(c[3], diff.glob_match(c[1], c[2]), c[1] .. " ~ " .. c[2])
    end
  end)
end)
