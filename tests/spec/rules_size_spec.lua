-- hmem.rules.size: the size buckets of the original request, the same as examples/size_buckets.lua.
local hmem = require "hmem"
local testing = require "hmem.testing"
local size = require "hmem.rules.size"

describe("hmem.rules.size", function()
  local cases = {
    { 6 * hmem.GiB, "very big (> 5 GiB)" },
    { 5 * hmem.GiB + 1, "very big (> 5 GiB)" },
    { 5 * hmem.GiB, "big (> 1 GiB)" },
    { hmem.GiB + 1, "big (> 1 GiB)" },
    { hmem.GiB, "normal" },
    { hmem.MiB, "normal" },
    { hmem.MiB - 1, "small (< 1 MiB)" },
    { 1, "small (< 1 MiB)" },
  }
  for _, c in ipairs(cases) do
    it(("puts %d bytes in %q"):format(c[1], c[2]), function()
      assert.are.equal(c[2], testing.classify(size, { bytes = c[1] }))
    end)
  end

  it("agrees with examples/size_buckets.lua", function()
    local example = testing.load("examples/size_buckets.lua")
    for _, c in ipairs(cases) do
      local row = testing.row { bytes = c[1] }
      assert.are.equal(example.classify(row), size.classify(row))
    end
  end)

  it("buckets a free of memory allocated before the trace by its size", function()
    assert.are.equal("big (> 1 GiB)", testing.classify(size, { before_trace = true, bytes = 2 * hmem.GiB }))
  end)

  it("lists its categories from the largest, with the example's names", function()
    local pack = testing.load("hmem.rules.size")
    local names = {}
    for i, c in ipairs(pack.categories) do
      names[i] = c.name
      assert.matches("^#%x%x%x%x%x%x$", c.color)
    end
    assert.are.same({ "very big (> 5 GiB)", "big (> 1 GiB)", "normal", "small (< 1 MiB)" }, names)
    assert.are.equal("size", pack.name)
  end)

  it("declares that its category depends on bytes alone, so hmem memoises it", function()
    assert.are.same({ "bytes" }, testing.load(size).cache_by)
    assert.are.equal(size.classify(testing.row { bytes = 2 * hmem.GiB }),
      size.classify(testing.row { bytes = 2 * hmem.GiB, kind = "free", before_trace = true, device = "cpu", op = "aten::add" }))
  end)

  it("buckets a bare size", function()
    assert.are.equal("normal", size.bucket(512 * hmem.MiB))
    assert.are.equal("small (< 1 MiB)", size.bucket(512))
  end)
end)
