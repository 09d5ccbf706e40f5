-- hmem.rules.lifetime: freed in the same op / in the same step / outlives the step /
-- freed (step unknown) / never freed / before trace / unpaired (no address).
local testing = require "hmem.testing"
local lifetime = require "hmem.rules.lifetime"

local function classify(t)
  return testing.classify(lifetime, t)
end

describe("hmem.rules.lifetime", function()
  before_each(lifetime.reset)

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
    assert.are.equal("never freed", classify { ts = 5, op = "aten::empty" })
  end)

  describe("by op and step names", function()
    it("freed inside the op chain that made it is freed in the same op", function()
      assert.are.equal("freed in the same op", classify {
        ts = 1, free_ts = 2, ops = { "aten::layer_norm", "aten::native_layer_norm", "aten::empty" },
        free_ops = { "aten::layer_norm" },
      })
    end)

    it("the same innermost op freeing it is the same op", function()
      assert.are.equal("freed in the same op", classify {
        ts = 1, free_ts = 2, op = "aten::mse_loss", free_op = "aten::mse_loss",
      })
    end)

    it("freed in another op is not the same op", function()
      assert.are.not_equal("freed in the same op", classify {
        ts = 1, free_ts = 2, ops = { "aten::linear", "aten::addmm" },
        free_ops = { "autograd::engine::evaluate_function: AddmmBackward0" },
      })
    end)

    it("freed outside any op is not the same op", function()
      assert.are.not_equal("freed in the same op", classify { ts = 1, free_ts = 2, op = "aten::mul" })
    end)

    it("a ProfilerStep operator (2021 style) is a step, not an op", function()
      local t = { ts = 1, free_ts = 2, ops = { "ProfilerStep#5", "aten::add" }, free_ops = { "ProfilerStep#5" } }
      assert.are.equal("freed in the same step", classify(t))
    end)

    it("freed in a later step named in free_ops outlives the step", function()
      assert.are.equal("outlives the step", classify {
        ts = 1, free_ts = 2, ops = { "ProfilerStep#5", "aten::add" }, free_ops = { "ProfilerStep#6", "aten::add" },
      })
    end)

    it("same op names in different steps are not the same op", function()
      assert.are.equal("outlives the step", classify {
        ts = 1, free_ts = 2, ops = { "ProfilerStep#5", "CompiledFunction", "aten::mm" },
        free_ops = { "ProfilerStep#6", "CompiledFunction" },
      })
    end)

    it("the step of a free that names none is unknown", function()
      assert.are.equal("freed (step unknown)", classify {
        ts = 1, free_ts = 2, annotations = { "ProfilerStep#6" }, op = "aten::addmm",
      })
    end)

    it("an allocation outside any step freed later is step unknown", function()
      assert.are.equal("freed (step unknown)", classify {
        ts = 1, free_ts = 2, thread = "thread 108 (pt_autograd_0)", op = "aten::mm",
        free_op = "autograd::engine::evaluate_function: ViewBackward0",
      })
    end)
  end)

  describe("with slice times in the stack", function()
    local step6 = { name = "ProfilerStep#6", cat = "user_annotation", ts = 100, dur = 100 }

    it("freed before the enclosing op ended is the same op", function()
      assert.are.equal("freed in the same op", classify {
        ts = 110, free_ts = 115,
        stack = { step6, { name = "aten::linear", cat = "cpu_op", ts = 105, dur = 10 }, { name = "aten::empty", cat = "cpu_op", ts = 110, dur = 1 } },
      })
    end)

    it("freed after it ended is not, even in an op of the same name", function()
      assert.are.equal("freed in the same step", classify {
        ts = 110, free_ts = 150,
        stack = { step6, { name = "aten::linear", cat = "cpu_op", ts = 105, dur = 10 } },
        free_ops = { "aten::linear" },
      })
    end)

    it("freed after the step slice ended outlives the step", function()
      assert.are.equal("outlives the step", classify {
        ts = 110, free_ts = 250,
        stack = { step6, { name = "aten::addmm", cat = "cpu_op", ts = 105, dur = 10 } },
      })
    end)

    it("a row outside the step (autograd thread) uses the step slice last seen in its series", function()
      classify { ts = 110, free_ts = 150, stack = { step6 } }
      assert.are.equal("freed in the same step", classify {
        ts = 160, free_ts = 170, thread = "thread 108 (pt_autograd_0)",
        stack = { { name = "autograd::engine::evaluate_function: MmBackward0", cat = "cpu_op", ts = 155, dur = 2 } },
      })
      assert.are.equal("outlives the step", classify {
        ts = 160, free_ts = 260, thread = "thread 108 (pt_autograd_0)",
        stack = { { name = "autograd::engine::evaluate_function: MmBackward0", cat = "cpu_op", ts = 155, dur = 2 } },
      })
      assert.are.equal("freed (step unknown)", classify {
        ts = 300, free_ts = 310, stack = { { name = "aten::mm", cat = "cpu_op", ts = 299, dur = 2 } },
      })
    end)
  end)

  it("declares every category it returns, in order", function()
    local names = {}
    for i, c in ipairs(testing.load(lifetime).categories) do
      names[i] = c.name
    end
    assert.are.same({ "freed in the same op", "freed in the same step", "outlives the step", "freed (step unknown)",
      "never freed", "before trace", "unpaired (no address)" }, names)
  end)

  it("exposes same_op and step_relation for other packs", function()
    local row = testing.row { ts = 1, free_ts = 2, ops = { "ProfilerStep#5", "aten::add" }, free_ops = { "ProfilerStep#5" } }
    assert.is_false(lifetime.same_op(row))
    assert.are.equal("same", lifetime.step_relation(row))
    assert.is_nil(lifetime.step_relation(testing.row { ts = 1 }))
  end)
end)
