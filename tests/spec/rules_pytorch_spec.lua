-- hmem.rules.pytorch: PyTorch's memory categories guessed from op context and lifetimes.
-- One case per rule branch, with the op, annotation and thread names of real traces.
local testing = require "hmem.testing"
local pytorch = require "hmem.rules.pytorch"
local phase = require "hmem.rules.phase"
local BACKWARD_ROW = { ts = 0, thread = "thread 2300680 (pt_autograd_0)", op = "aten::mm" }

local function classify(t)
  return testing.classify(pytorch, t)
end

local AUTOGRAD = "thread 2300680 (pt_autograd_0)"
local STEP = { "ProfilerStep#6" }
local FWD = { "ProfilerStep#6", "## forward ##" }

describe("hmem.rules.pytorch", function()
  before_each(function()
    phase.reset()
    pytorch.reset()
  end)

  describe("unknown", function()
    it("for every row of a trace without addresses", function()
      assert.are.equal("unknown", classify { addr = testing.NIL, ops = { "ProfilerStep#5", "Optimizer.step#SGD.step", "aten::zeros_like" } })
      assert.are.equal("unknown", classify { addr = testing.NIL, kind = "free", ops = { "CudnnBatchNormBackward" } })
    end)
  end)

  describe("frees of memory allocated before the trace", function()
    it("are gradients when zero_grad frees them", function()
      assert.are.equal("gradient", classify { before_trace = true, annotations = { "ProfilerStep#2", "Optimizer.zero_grad#SGD.zero_grad" } })
    end)

    it("are gradients when AccumulateGrad frees them", function()
      assert.are.equal("gradient", classify {
        before_trace = true, thread = AUTOGRAD,
        ops = { "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", "torch::autograd::AccumulateGrad" },
      })
    end)

    it("are activations when backward frees them", function()
      assert.are.equal("activation", classify {
        before_trace = true, thread = AUTOGRAD, ops = { "autograd::engine::evaluate_function: NativeLayerNormBackward0" },
      })
    end)

    it("are unknown elsewhere", function()
      assert.are.equal("unknown", classify { before_trace = true, annotations = FWD, op = "aten::add" })
    end)
  end)

  describe("FSDP", function()
    it("all-gathered parameters are parameters", function()
      assert.are.equal("parameter", classify {
        ts = 1, free_ts = 50, annotations = { "ProfilerStep#3", "FullyShardedDataParallel.forward", "FullyShardedDataParallel._pre_forward" },
        ops = { "c10d::_allgather_base_", "aten::empty" },
      })
      assert.are.equal("parameter", classify {
        ts = 1, free_ts = 50, annotations = { "FSDP::pre_forward", "FSDP::all_gather_copy_in" }, op = "aten::empty",
      })
    end)

    it("reduce-scattered gradients are gradients", function()
      assert.are.equal("gradient", classify {
        ts = 1, free_ts = 50, thread = AUTOGRAD, annotations = { "FSDP::post_backward_reduce" },
        ops = { "c10d::reduce_scatter_tensor_coalesced_", "aten::empty" }, free_ops = { "aten::add_" },
      })
    end)

    it("an all-gather outside FSDP (tensor parallel) is not a parameter", function()
      assert.are.equal("forward output", classify {
        ts = 1, free_ts = 50, free_step = 6, annotations = FWD, ops = { "c10d::_allgather_base_", "aten::empty" },
      })
    end)
  end)

  it("an allocation freed inside the op that made it is temporary, in any phase", function()
    assert.are.equal("temporary", classify {
      ts = 1, free_ts = 2, annotations = FWD, ops = { "aten::layer_norm", "aten::empty" }, free_ops = { "aten::layer_norm" },
    })
    assert.are.equal("temporary", classify {
      ts = 3, free_ts = 4, thread = AUTOGRAD, ops = { "autograd::engine::evaluate_function: NativeGroupNormBackward0", "aten::empty" },
      free_ops = { "autograd::engine::evaluate_function: NativeGroupNormBackward0" },
    })
  end)

  describe("optimizer", function()
    local OPT = { "ProfilerStep#6", "Optimizer.step#AdamW.step" }

    it("never freed is optimizer state", function()
      assert.are.equal("optimizer state", classify { ts = 1, annotations = OPT, ops = { "aten::zeros_like", "aten::empty_like" } })
    end)

    it("outliving its step is optimizer state", function()
      assert.are.equal("optimizer state", classify { ts = 1, free_ts = 900, free_step = 7, annotations = OPT, op = "aten::zeros_like" })
    end)

    it("freed within its step is temporary", function()
      assert.are.equal("temporary", classify { ts = 1, free_ts = 2, free_step = 6, annotations = OPT, op = "aten::_foreach_sqrt" })
    end)
  end)

  describe("backward", function()
    it("never freed is a gradient", function()
      assert.are.equal("gradient", classify { ts = 1, thread = AUTOGRAD, ops = { "autograd::engine::evaluate_function: AddmmBackward0", "aten::mm" } })
    end)

    it("made inside AccumulateGrad is a gradient", function()
      assert.are.equal("gradient", classify {
        ts = 1, free_ts = 9, step = 2, free_step = 2, thread = "thread 785244 (python3.8)",
        ops = { "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", "torch::autograd::AccumulateGrad", "aten::clone" },
        free_ops = { "c10d::allreduce_" },
      })
    end)

    it("freed inside AccumulateGrad is a gradient", function()
      assert.are.equal("gradient", classify {
        ts = 1, free_ts = 9, thread = AUTOGRAD, ops = { "autograd::engine::evaluate_function: RepeatBackward0", "aten::sum" },
        free_ops = { "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", "torch::autograd::AccumulateGrad" },
      })
    end)

    it("freed outside any op (zero_grad(set_to_none=True) in Python) is a gradient", function()
      assert.are.equal("gradient", classify {
        ts = 1, free_ts = 9, free_step = 6, step = 6, thread = AUTOGRAD,
        ops = { "autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward0", "aten::mm" },
      })
    end)

    it("freed by the optimizer is a gradient", function()
      assert.are.equal("gradient", classify {
        ts = 1, free_ts = 9, ops = { "CudnnConvolutionBackward", "aten::cudnn_convolution_backward_weight" },
        free_ops = { "ProfilerStep#6", "Optimizer.zero_grad#SGD.zero_grad" },
      })
    end)

    it("outliving its step is a gradient", function()
      assert.are.equal("gradient", classify {
        ts = 60, free_ts = 150, step = 6, free_step = 7, annotations = { "ProfilerStep#6", "## backward ##" }, op = "aten::mm",
        free_ops = { "aten::add" },
      })
    end)

    it("other backward allocations freed in their step are autograd detail", function()
      assert.are.equal("autograd detail", classify {
        ts = 1, free_ts = 9, step = 6, free_step = 6, thread = AUTOGRAD,
        ops = { "autograd::engine::evaluate_function: NativeGroupNormBackward0", "aten::empty" },
        free_ops = { "autograd::engine::evaluate_function: NativeLayerNormBackward0" },
      })
    end)
  end)

  describe("forward", function()
    it("freed in backward is an activation", function()
      assert.are.equal("activation", classify {
        ts = 1, free_ts = 9, python = { "nn.Module: LayerNorm_0" }, ops = { "aten::layer_norm", "aten::empty" },
        free_ops = { "autograd::engine::evaluate_function: NativeLayerNormBackward0" },
      })
    end)

    it("freed later in the forward is an activation", function()
      classify(BACKWARD_ROW)
      assert.are.equal("activation", classify { ts = 1, free_ts = 3, annotations = { "## Call CompiledFxGraph f4ii27ddivzklxr54hd4 ##" }, op = "aten::addmm" })
    end)

    it("never freed is unknown", function()
      classify(BACKWARD_ROW)
      assert.are.equal("unknown", classify { ts = 1, python = { "nn.Module: RMSNorm_1" }, op = "aten::empty" })
    end)

    it("freed in backward of its step is an activation, outliving its step is unknown (issue 15)", function()
      local t = { ts = 10, free_ts = 50, annotations = FWD, op = "aten::addmm", free_op = "autograd::engine::evaluate_function: AddmmBackward0" }
      t.free_step = 6
      assert.are.equal("activation", classify(t))
      t.free_step = 7
      assert.are.equal("unknown", classify(t))
    end)
  end)

  describe("without phase markers", function()
    it("a copy to the device freed later is an input", function()
      assert.are.equal("input", classify { ts = 1, free_ts = 90, annotations = STEP, ops = { "aten::to", "aten::_to_copy", "aten::empty_strided" } })
    end)

    it("synthetic data freed later is an input", function()
      assert.are.equal("input", classify { ts = 1, free_ts = 90, ops = { "aten::randn", "aten::empty" } })
    end)

    it("never freed outside any step is a parameter", function()
      assert.are.equal("parameter", classify { ts = 1, ops = { "aten::empty" } })
    end)

    it("never freed from aten::to inside ProfilerStep#0 is a parameter (model.to)", function()
      assert.are.equal("parameter", classify { ts = 1, annotations = { "ProfilerStep#0" }, ops = { "aten::to", "aten::_to_copy", "aten::empty_strided" } })
    end)

    it("never freed from aten::to inside a later step is an input: the last batch (issue 15)", function()
      assert.are.equal("input", classify { ts = 1, annotations = STEP, ops = { "aten::to", "aten::_to_copy", "aten::empty_strided" } })
    end)

    it("never freed from a factory under no other op is a parameter, without a Python stack (issue 15)", function()
      assert.are.equal("parameter", classify { ts = 1, annotations = { "ProfilerStep#0" }, ops = { "aten::empty" } })
      classify(BACKWARD_ROW)
      assert.are.equal("unknown", classify { ts = 1, annotations = STEP, ops = { "aten::linear", "aten::empty" } })
    end)

    it("never freed under a module's __init__ frame is a parameter", function()
      assert.are.equal("parameter", classify {
        ts = 1, annotations = STEP, python = { "train.py(20): main", "torch/nn/modules/linear.py(106): __init__" }, op = "aten::empty",
      })
    end)

    it("never freed inside a step otherwise is unknown", function()
      classify(BACKWARD_ROW)
      assert.are.equal("unknown", classify { ts = 1, annotations = STEP, op = "aten::add" })
    end)

    it("freed later inside a step, in a file whose backward ran, is an activation", function()
      classify(BACKWARD_ROW)
      assert.are.equal("activation", classify { ts = 1, free_ts = 5, free_step = 5, ops = { "ProfilerStep#5", "aten::conv2d", "aten::empty" } })
    end)

    it("outliving its step inside a step, in a file whose backward ran, is unknown", function()
      classify(BACKWARD_ROW)
      assert.are.equal("unknown", classify { ts = 10, free_ts = 500, annotations = { "ProfilerStep#5" }, op = "aten::conv2d" })
    end)

    it("forward memory before any backward is a forward output; once the backward ran, an activation (issue 15)", function()
      assert.are.equal("forward output", classify { ts = 1, free_ts = 5, free_step = 6, file = "t.json", annotations = STEP, op = "aten::conv2d" })
      assert.are.equal("autograd detail", classify {
        ts = 2, free_ts = 3, file = "t.json", ops = { "CudnnConvolutionBackward", "aten::empty" }, free_ops = { "ReluBackward1" },
      })
      assert.are.equal("activation", classify { ts = 4, free_ts = 5, free_step = 6, file = "t.json", annotations = STEP, op = "aten::add" })
      assert.are.equal("forward output", classify { ts = 4, free_ts = 5, free_step = 6, file = "u.json", annotations = STEP, op = "aten::add" })
    end)
  end)

  it("declares PyTorch's categories in PyTorch's order and colours", function()
    local cats = testing.load(pytorch).categories
    assert.are.same({
      { name = "parameter", color = "#006400" },
      { name = "optimizer state", color = "#daa520" },
      { name = "input", color = "#000000" },
      { name = "temporary", color = "#9370db" },
      { name = "activation", color = "#ff0000" },
      { name = "gradient", color = "#0000cd" },
      { name = "autograd detail", color = "#4169e1" },
      { name = "forward output", color = "#ff8c00" },
      { name = "unknown", color = "#808080" },
    }, cats)
  end)
end)
