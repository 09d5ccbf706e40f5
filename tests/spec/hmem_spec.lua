-- The Lua side of hmem, tested from plain Lua with busted: the helper module and the
-- example rule files, fed rows built from tables (a rule only reads fields).
local hmem = require "hmem"

-- Load a rule file the way hmem does (its globals in their own environment).
local function load_rules(path)
  local env = setmetatable({}, { __index = _G })
  local chunk = assert(loadfile(path, "t", env))
  chunk()
  return env
end

describe("hmem helpers", function()
  it("has binary units", function()
    assert.are.equal(1024, hmem.KiB)
    assert.are.equal(1024 * 1024, hmem.MiB)
    assert.are.equal(1024 * 1024 * 1024, hmem.GiB)
  end)

  it("formats bytes in binary units", function()
    assert.are.equal("512 B", hmem.human(512))
    assert.are.equal("1.50 KiB", hmem.human(1536))
    assert.are.equal("1.00 MiB", hmem.human(hmem.MiB))
    assert.are.equal("6.17 GiB", hmem.human(6629508096))
    assert.are.equal("-2.00 GiB", hmem.human(-2 * hmem.GiB))
  end)

  it("rejects a non-number with the caller's line", function()
    local ok, err = pcall(hmem.human, "big")
    assert.is_false(ok)
    assert.matches("expected a number of bytes, got string", err)
  end)

  it("buckets sizes by decreasing limits", function()
    local limits = { { 5 * hmem.GiB, "very big" }, { hmem.GiB, "big" } }
    assert.are.equal("very big", hmem.bucket(6 * hmem.GiB, limits, "normal"))
    assert.are.equal("big", hmem.bucket(2 * hmem.GiB, limits, "normal"))
    assert.are.equal("normal", hmem.bucket(hmem.GiB, limits, "normal"))
  end)
end)

describe("examples/size_buckets.lua", function()
  local rules = load_rules("examples/size_buckets.lua")
  local cases = {
    { 6 * hmem.GiB, "very big (> 5 GiB)" },
    { 5 * hmem.GiB + 1, "very big (> 5 GiB)" },
    { 5 * hmem.GiB, "big (> 1 GiB)" },
    { hmem.GiB + 1, "big (> 1 GiB)" },
    { hmem.GiB, "normal" },
    { hmem.MiB, "normal" },
    { hmem.MiB - 1, "small (< 1 MiB)" },
    { 512, "small (< 1 MiB)" },
  }
  for _, c in ipairs(cases) do
    it(("puts %d bytes in %q"):format(c[1], c[2]), function()
      assert.are.equal(c[2], rules.classify({ bytes = c[1], kind = "alloc" }))
    end)
  end
end)

describe("examples/by_op.lua", function()
  local rules = load_rules("examples/by_op.lua")
  it("charges an allocation to its innermost op", function()
    assert.are.equal("aten::empty", rules.classify({ op = "aten::empty", ops = { "aten::linear", "aten::empty" } }))
  end)
  it("names memory allocated outside any op", function()
    assert.are.equal("(no op)", rules.classify({ ops = {} }))
  end)
end)
