-- hmem.rules.op: the innermost op that made the allocation.
local testing = require "hmem.testing"
local op = require "hmem.rules.op"

describe("hmem.rules.op", function()
  it("charges an allocation to its innermost op", function()
    assert.are.equal("aten::empty", testing.classify(op, { ops = { "aten::linear", "aten::empty" } }))
  end)

  it("names memory allocated outside any op", function()
    assert.are.equal("(no op)", testing.classify(op, { annotations = { "ProfilerStep#3" } }))
  end)

  it("does not take a 2021 ProfilerStep operator for an op", function()
    assert.are.equal("(no op)", testing.classify(op, { ops = { "ProfilerStep#5" } }))
    assert.are.equal("aten::add", testing.classify(op, { ops = { "ProfilerStep#5", "aten::add" } }))
  end)

  it("charges a free of memory allocated before the trace to no op", function()
    assert.are.equal("(allocated before the trace)",
      testing.classify(op, { before_trace = true, ops = { "Optimizer.zero_grad#SGD.zero_grad" } }))
  end)

  it("charges an unpaired free (2021 trace) to the op that freed it", function()
    assert.are.equal("aten::add_", testing.classify(op, { kind = "free", addr = testing.NIL, op = "aten::add_" }))
  end)

  it("finds the innermost op that is not a step marker", function()
    assert.are.equal("aten::mm", op.innermost({ "aten::matmul", "aten::mm", "ProfilerStep#1" }))
    assert.is_nil(op.innermost({ "ProfilerStep#1" }))
  end)

  it("declares that its category depends on op and before_trace alone, so hmem memoises it", function()
    assert.are.same({ "op", "before_trace" }, testing.load(op).cache_by)
    assert.are.equal("aten::empty", testing.classify(op, { ops = { "aten::conv2d", "aten::empty" }, annotations = { "## forward ##" } }))
    assert.are.equal("aten::empty", testing.classify(op, { ops = { "aten::empty" }, thread = "thread 7 (pt_autograd_0)" }))
  end)

  it("lists its fixed categories", function()
    local pack = testing.load(op)
    assert.are.same({ { name = "(no op)" }, { name = "(allocated before the trace)" } }, pack.categories)
  end)
end)
