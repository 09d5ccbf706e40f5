-- hmem.extend (issue 28): a pack made of another keeps what the inner pack needs (its view,
-- cache_by, categories and colours, hooks, helpers) without knowing them; and a cache_by on
-- view with no view function is an error when the pack loads, in hmem.testing as in hmem.
local hmem = require "hmem"
local testing = require "hmem.testing"

local function inner()
  local calls = 0
  local p = {
    name = "inner", description = "d",
    categories = { { name = "a", color = "#112233" }, "b" },
    cache_by = { "view", "bytes" },
    view = function(name) return name:sub(1, 1) end,
    classify = function(row) calls = calls + 1 return row.bytes > 100 and "a" or "b" end,
    done = function() end, init = function() end,
    helper = function() return 42 end,
  }
  return p, function() return calls end
end

describe("hmem.extend", function()
  it("inherits view, cache_by, categories, colours, hooks and helpers", function()
    local p = inner()
    local e = hmem.extend(p, { name = "outer" })
    assert.are.equal("outer", e.name)
    assert.are.equal("d", e.description)
    assert.are.equal(p.view, e.view)
    assert.are.same({ "view", "bytes" }, e.cache_by)
    assert.are.same(p.categories, e.categories)
    assert.are.equal(p.done, e.done)
    assert.are.equal(p.init, e.init)
    assert.are.equal(42, e.helper())
    assert.are.equal(p.classify, e.classify)
  end)

  it("gives the override's classify the inner one, and lists its categories first", function()
    local p = inner()
    local e = hmem.extend(p, {
      categories = { "c", { name = "a", color = "#445566" } },
      classify = function(row, in_) if row.bytes == 7 then return "c" end return in_(row) end,
    })
    assert.are.same({ "c", { name = "a", color = "#445566" }, "b" }, e.categories)
    assert.are.equal("c", e.classify(testing.row { bytes = 7 }))
    assert.are.equal("a", e.classify(testing.row { bytes = 700 }))
    assert.are.equal("b", e.classify(testing.row { bytes = 70 }))
  end)

  it("adds the override's cache_by fields to the inner's; false or an inner without one is no memo", function()
    local p = inner()
    assert.are.same({ "view", "bytes", "device" }, hmem.extend(p, { cache_by = { "device", "bytes" } }).cache_by)
    assert.is_nil(hmem.extend(p, { cache_by = false }).cache_by)
    p.cache_by = nil
    assert.is_nil(hmem.extend(p, { cache_by = { "device" } }).cache_by)
  end)

  it("loads through hmem.testing with the inner memo: one classify call per key", function()
    local p, calls = inner()
    local e = testing.load(hmem.extend(p, { classify = function(row, in_) return in_(row) end }))
    for _ = 1, 5 do e.classify(testing.row { bytes = 500, op = "aten::mm" }) end
    assert.are.equal(1, calls())
  end)

  it("refuses what is not a pack", function()
    assert.has_error(function() hmem.extend({}, {}) end,
      "hmem.extend: expected a pack table with a classify function, got table")
    assert.has_error(function() hmem.extend(inner(), 3) end,
      "hmem.extend: the override must be a table of pack entries, not a number")
    assert.has_error(function() hmem.extend(inner(), { classify = "x" }) end,
      "hmem.extend: classify must be a function(row, inner), not a string")
  end)
end)

describe("a cache_by on view without a view function", function()
  it("fails when the pack loads, naming the way out (the old testing.load failed at the first row)", function()
    local p = inner()
    p.view = nil
    local ok, err = pcall(testing.load, p)
    assert.is_false(ok)
    assert.is_truthy(err:find("cache_by names view, but the rules declare no view function", 1, true), err)
    assert.is_truthy(err:find("hmem.extend(inner, {...})", 1, true), err)
  end)
end)
