-- hmem.rules.lifetime: freed in the same op / in the same step / outlives the step /
-- freed later (no step) / never freed / before trace / unpaired (no address).
local testing = require "hmem.testing"
local lifetime = require "hmem.rules.lifetime"

local function classify(t)
  return testing.classify(lifetime, t)
end

local function op(name, ts, dur)
  return { name = name, cat = "cpu_op", ts = ts, dur = dur }
end

local STEP6 = { name = "ProfilerStep#6", cat = "user_annotation", ts = 100, dur = 100 }

describe("hmem.rules.lifetime", function()
  it("puts a free of memory allocated before the trace in before trace", function()
    assert.are.equal("before trace", classify { before_trace = true, ops = { "aten::add_" } })
  end)

  it("puts allocations and frees of a trace without addresses in unpaired", function()
    assert.are.equal("unpaired (no address)", classify { addr = testing.NIL, ops = { "ProfilerStep#5", "aten::add" } })
    assert.are.equal("unpaired (no address)", classify { addr = testing.NIL, kind = "free" })
    -- any free hmem classifies itself that is not before the trace could not be paired
    assert.are.equal("unpaired (no address)", classify { kind = "free", op = "aten::add_" })
  end)

  it("puts an allocation live at the end of the trace in never freed", function()
    assert.are.equal("never freed", classify { ts = 5, op = "aten::empty", step = 6 })
  end)

  describe("the same op, by slice times (as hmem's stack gives them)", function()
    it("freed before the enclosing op ended is the same op", function()
      assert.are.equal("freed in the same op", classify {
        ts = 110, free_ts = 115, free_step = 6,
        stack = { STEP6, op("aten::linear", 105, 10), op("aten::empty", 110, 1) },
      })
    end)

    it("freed exactly when the op ends is the same op, despite rounding", function()
      -- 1419247334163.264 + 10.618 < 1419247334173.882 in doubles
      assert.is_true(1419247334163.264 + 10.618 < 1419247334173.882)
      assert.are.equal("freed in the same op", classify {
        ts = 1419247334163.264, free_ts = 1419247334173.882,
        stack = { op("aten::layer_norm", 1419247334163.264, 10.618) },
      })
    end)

    it("freed after it ended is not, even in an op of the same name", function()
      assert.are.equal("freed in the same step", classify {
        ts = 110, free_ts = 150, free_step = 6, free_ops = { "aten::linear" },
        stack = { STEP6, op("aten::linear", 105, 10) },
      })
    end)

    it("a ProfilerStep slice is not an op", function()
      assert.are.equal("freed in the same step", classify {
        ts = 110, free_ts = 150, free_step = 6,
        stack = { { name = "ProfilerStep#6", cat = "Operator", ts = 100, dur = 100 }, op("aten::add", 110, 1) },
      })
    end)
  end)

  describe("the same op, by names (rows without slice times)", function()
    it("freed inside the op that made it (the innermost op that is not a factory) is the same op", function()
      assert.are.equal("freed in the same op", classify {
        ts = 1, free_ts = 2, ops = { "aten::layer_norm", "aten::native_layer_norm", "aten::empty" },
        free_ops = { "aten::layer_norm", "aten::native_layer_norm" },
      })
    end)

    it("freed after the innermost op returned is not, though an outer op still runs (issue 15)", function()
      assert.are.equal("freed later (no step)", classify {
        ts = 1, free_ts = 2, ops = { "aten::layer_norm", "aten::native_layer_norm", "aten::empty" },
        free_ops = { "aten::layer_norm" },
      })
      assert.are.equal("freed later (no step)", classify {
        ts = 10, free_ts = 200,
        stack = { op("autograd::engine::evaluate_function: CompiledFunctionBackward", 0, 229000), op("aten::mm", 9, 2) },
      })
    end)

    it("freed in another op is not", function()
      assert.are.equal("freed later (no step)", classify {
        ts = 1, free_ts = 2, ops = { "aten::linear", "aten::addmm" },
        free_ops = { "autograd::engine::evaluate_function: AddmmBackward0" },
      })
    end)

    it("freed outside any op is not", function()
      assert.are.equal("freed later (no step)", classify { ts = 1, free_ts = 2, op = "aten::mul" })
    end)

    it("a ProfilerStep operator (2021 style) is a step, not an op", function()
      assert.are.equal("freed in the same step", classify {
        ts = 1, free_ts = 2, ops = { "ProfilerStep#5", "aten::add" }, free_ops = { "ProfilerStep#5" },
      })
    end)

    it("equal op names in different steps are not the same op", function()
      assert.are.equal("outlives the step", classify {
        ts = 1, free_ts = 2, ops = { "ProfilerStep#5", "CompiledFunction", "aten::mm" },
        free_ops = { "ProfilerStep#6", "CompiledFunction" },
      })
    end)
  end)

  describe("the step", function()
    it("freed in the step that made it is the same step", function()
      assert.are.equal("freed in the same step", classify { ts = 1, free_ts = 9, step = 6, free_step = 6, op = "aten::addmm" })
    end)

    it("freed in a later step outlives the step", function()
      assert.are.equal("outlives the step", classify { ts = 1, free_ts = 900, step = 6, free_step = 7, op = "aten::addmm" })
    end)

    it("freed between steps outlives the step", function()
      assert.are.equal("outlives the step", classify { ts = 1, free_ts = 210, step = 6, op = "aten::addmm" })
    end)

    it("made outside any step and freed later has no step", function()
      assert.are.equal("freed later (no step)", classify { ts = 1, free_ts = 9, free_step = 3, op = "aten::mm" })
    end)
  end)

  it("declares every category it returns, in order", function()
    local names = {}
    for i, c in ipairs(testing.load(lifetime).categories) do
      names[i] = c.name
    end
    assert.are.same({ "freed in the same op", "freed in the same step", "outlives the step", "freed later (no step)",
      "never freed", "before trace", "unpaired (no address)" }, names)
  end)

  it("exposes same_op and step_relation for other packs", function()
    local row = testing.row { ts = 1, free_ts = 2, ops = { "ProfilerStep#5", "aten::add" }, free_ops = { "ProfilerStep#5" } }
    assert.is_false(lifetime.same_op(row))
    assert.are.equal("same", lifetime.step_relation(row))
    assert.is_nil(lifetime.step_relation(testing.row { ts = 1, step = 5 }))
    assert.is_nil(lifetime.step_relation(testing.row { ts = 1, free_ts = 3 }))
  end)
end)
