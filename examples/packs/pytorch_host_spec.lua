-- How a pack made with hmem.extend is tested: the same rows through testing.load, which
-- memoises classify on the pack's cache_by as hmem does, so an inherited memo that gave
-- wrong answers would fail here as it would in hmem (issue 28).
-- Run: busted --lpath='lua/?.lua;lua/?/init.lua;examples/packs/?.lua' examples/packs
local hmem = require "hmem"
local testing = require "hmem.testing"
local pytorch = require "hmem.rules.pytorch"

describe("pytorch_host, pytorch extended with hmem.extend", function()
  before_each(pytorch.reset)

  local pack = testing.load("examples/packs/pytorch_host.lua")

  it("inherits the inner pack's view and memo, with the field it reads added", function()
    assert.are.equal(pytorch.view, pack.view)
    local want = {}
    for _, f in ipairs(pytorch.cache_by) do want[#want + 1] = f end
    want[#want + 1] = "device"
    assert.are.same(want, pack.cache_by)
  end)

  it("declares its category first, then every one of pytorch's with its colour", function()
    assert.are.same({ name = "host", color = "#7f7f7f" }, pack.categories[1])
    assert.are.equal(#pytorch.categories + 1, #pack.categories)
    for i, c in ipairs(pytorch.categories) do
      assert.are.equal(c.name, pack.categories[i + 1].name)
      assert.are.equal(c.color, pack.categories[i + 1].color)
    end
  end)

  it("puts host memory apart and answers as pytorch on a GPU, memo or not", function()
    local gpu = { device = "cuda:0", bytes = 4 * hmem.MiB, op = "aten::mm", annotations = { "ProfilerStep#2" },
                  free_ts = 2000, free_op = "aten::mm", free_ops = { "aten::mm" } }
    local cpu = {}
    for k, v in pairs(gpu) do cpu[k] = v end
    cpu.device = "cpu"
    -- the same context on both devices: one cache_by key each, so the memo tells them apart
    assert.are.equal("host", testing.classify(pack, cpu))
    assert.are.equal(testing.classify(pytorch, gpu), testing.classify(pack, gpu))
    assert.are.equal("host", testing.classify(pack, cpu))
  end)

  it("keeps pytorch's done (its note about memory from before the trace)", function()
    assert.are.equal(pytorch.done, pack.done)
  end)
end)
