-- hmem.rules.phase: forward / backward / optimizer / other. Names are those of the real
-- traces in tests/data.
local testing = require "hmem.testing"
local phase = require "hmem.rules.phase"

local function classify(t)
  return testing.classify(phase, t)
end

describe("hmem.rules.phase", function()
  before_each(phase.reset)

  describe("optimizer", function()
    it("inside an Optimizer.step annotation", function()
      assert.are.equal("optimizer", classify {
        annotations = { "ProfilerStep#2", "Optimizer.step#SGD.step" }, ops = { "aten::_foreach_add_" },
      })
    end)

    it("inside an Optimizer.zero_grad operator (2021 trace)", function()
      assert.are.equal("optimizer", classify { ops = { "ProfilerStep#5", "Optimizer.zero_grad#SGD.zero_grad", "aten::zero_" } })
    end)

    it("wins over backward (an optimizer run from a backward hook)", function()
      assert.are.equal("optimizer", classify {
        thread = "thread 108 (pt_autograd_0)", annotations = { "Optimizer.step#AdamW.step" },
      })
    end)
  end)

  describe("backward", function()
    it("on the autograd thread, even outside any op", function()
      assert.are.equal("backward", classify { thread = "thread 2300680 (pt_autograd_0)" })
    end)

    it("inside autograd::engine::evaluate_function", function()
      assert.are.equal("backward", classify {
        thread = "thread 785244 (python3.8)",
        ops = { "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", "aten::empty" },
      })
    end)

    it("inside a ## backward ## annotation", function()
      assert.are.equal("backward", classify { annotations = { "ProfilerStep#6", "## backward ##" }, op = "aten::mm" })
    end)

    it("inside a *Backward op (2021 trace, no evaluate_function)", function()
      assert.are.equal("backward", classify {
        ops = { "CudnnBatchNormBackward", "aten::cudnn_batch_norm_backward", "aten::empty" },
      })
    end)

    it("inside AccumulateGrad", function()
      assert.are.equal("backward", classify { ops = { "torch::autograd::AccumulateGrad", "aten::detach" } })
    end)

    it("wins over forward markers", function()
      assert.are.equal("backward", classify {
        annotations = { "DistributedDataParallel.forward" }, ops = { "CompiledFunctionBackward" },
      })
    end)
  end)

  describe("forward", function()
    it("inside ## forward ##", function()
      assert.are.equal("forward", classify { annotations = { "ProfilerStep#6", "## forward ##" }, op = "aten::addmm" })
    end)

    it("inside a .forward annotation", function()
      assert.are.equal("forward", classify { annotations = { "FullyShardedDataParallel.forward" } })
    end)

    it("inside an nn.Module frame", function()
      assert.are.equal("forward", classify { python = { "nn.Module: BertModel_0", "nn.Module: Linear_3" } })
    end)

    it("inside a compiled graph", function()
      assert.are.equal("forward", classify { annotations = { "## Call CompiledFxGraph f4ii27ddivzklxr54hd4 ##" } })
      assert.are.equal("forward", classify { annotations = { "Torch-Compiled Region: 0/0" } })
      assert.are.equal("forward", classify { ops = { "CompiledFunction", "aten::mm" } })
    end)

    it("not because of an op named *_forward", function()
      assert.are.equal("other", classify { ops = { "aten::nll_loss_forward" } })
    end)
  end)

  describe("the ProfilerStep fallback (traces without forward markers)", function()
    local file = "resnet50_2021.json"
    local function row(ts, t)
      t.ts, t.file = ts, file
      return classify(t)
    end

    it("is forward inside a step before its first backward allocation, other after it", function()
      assert.are.equal("forward", row(10, { ops = { "ProfilerStep#5", "aten::conv2d" } }))
      assert.are.equal("backward", row(20, { ops = { "CudnnConvolutionBackward" } }))
      assert.are.equal("other", row(30, { ops = { "ProfilerStep#5", "aten::add" } }))
    end)

    it("starts again in the next step", function()
      assert.are.equal("backward", row(20, { ops = { "CudnnConvolutionBackward" } }))
      assert.are.equal("forward", row(40, { ops = { "ProfilerStep#6", "aten::conv2d" } }))
    end)

    it("is other outside any step", function()
      assert.are.equal("other", row(10, { ops = { "aten::conv2d" } }))
    end)

    it("stops once the series has shown a forward marker", function()
      assert.are.equal("forward", row(10, { ops = { "ProfilerStep#5", "aten::conv2d" }, annotations = { "## forward ##" } }))
      assert.are.equal("other", row(11, { ops = { "ProfilerStep#5", "aten::to" } }))
    end)

    it("keeps one state per (file, device)", function()
      assert.are.equal("forward", row(10, { ops = { "ProfilerStep#5", "aten::conv2d" } }))
      assert.are.equal("backward", row(20, { ops = { "CudnnConvolutionBackward" } }))
      assert.are.equal("forward", row(30, { ops = { "ProfilerStep#5", "aten::add" }, device = "cpu" }))
      assert.are.equal("forward", classify { ts = 30, file = "other.json", ops = { "ProfilerStep#5", "aten::add" } })
      assert.are.equal("other", row(31, { ops = { "ProfilerStep#5", "aten::add" } }))
    end)

    it("starts afresh when a series goes back in time (a new run)", function()
      assert.are.equal("forward", row(10, { ops = { "ProfilerStep#5", "aten::conv2d" } }))
      assert.are.equal("backward", row(20, { ops = { "CudnnConvolutionBackward" } }))
      assert.are.equal("other", row(30, { ops = { "ProfilerStep#5", "aten::add" } }))
      assert.are.equal("forward", row(5, { ops = { "ProfilerStep#5", "aten::add" } }))
    end)
  end)

  it("is other without any marker or step", function()
    assert.are.equal("other", classify { ops = { "aten::to", "aten::_to_copy", "aten::empty_strided" } })
  end)

  it("gives explicit phases without state", function()
    assert.are.equal("backward", phase.explicit(testing.row { ops = { "AddmmBackward0" } }))
    assert.is_nil(phase.explicit(testing.row { ops = { "ProfilerStep#5", "aten::conv2d" } }))
    local p, explicit = phase.detect(testing.row { ops = { "ProfilerStep#5", "aten::conv2d" } })
    assert.are.equal("forward", p)
    assert.is_false(explicit)
  end)

  it("declares its four categories", function()
    local declared = {}
    for _, c in ipairs(testing.load(phase).categories) do
      declared[c.name] = true
    end
    assert.are.same({ forward = true, backward = true, optimizer = true, other = true }, declared)
  end)
end)
