-- The shipped packs on memory snapshot rows (issue 25): no ops, threads or module slices,
-- only the stacks (row.frames, and the free's row.free_frames), as real snapshots write them:
-- C++ frames of the autograd engine's thread, Python frames with Windows paths.
local testing = require "hmem.testing"
local phase = require "hmem.rules.phase"
local pytorch = require "hmem.rules.pytorch"
local lifetime = require "hmem.rules.lifetime"

local function f(file, line, name)
  return { file = file, line = line, name = name }
end

local UNWIND = { f("??", 0, "torch::unwind::unwind()"), f("??", 0, "torch::CapturedTraceback::gather(bool, bool, bool)") }
local ENGINE = {
  f("", 0, "torch::autograd::Node::operator()(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)"),
  f("??", 0, "torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, torch::autograd::Node*)"),
  f("??", 0, "torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)"),
  f("thread48.o", 0, "execute_native_thread_routine"),
}
local function stack(...)
  local t = {}
  for _, part in ipairs({ ... }) do
    for _, fr in ipairs(part) do
      t[#t + 1] = fr
    end
  end
  return t
end

-- A weight's gradient made by BmmBackward0 on the autograd engine's thread (C++ only).
local BACKWARD = stack(UNWIND, {
  f("??", 0, "at::_ops::bmm::call(at::Tensor const&, at::Tensor const&)"),
  f("??", 0, "torch::autograd::generated::BmmBackward0::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)"),
}, ENGINE)
-- The engine freeing a buffer between two nodes.
local ENGINE_FREE = stack(UNWIND, ENGINE)
-- A forward on Windows: the user's module under nn.Module's call.
local LIB = "D:\\Dev\\a2\\.venv\\Lib\\site-packages\\torch\\"
local FORWARD = {
  f(LIB .. "functional.py", 373, "einsum"),
  f("D:\\Dev\\a2\\cs336_basics\\model.py", 39, "forward"),
  f(LIB .. "nn\\modules\\module.py", 1762, "_call_impl"),
  f(LIB .. "nn\\modules\\module.py", 1751, "_wrapped_call_impl"),
  f("D:\\Dev\\a2\\bench.py", 65, "main"),
}
-- A user optimizer (an Optimizer subclass: PyTorch wraps its step in torch/optim).
local OPT = "/env/lib/python3.13/site-packages/torch/optim/optimizer.py"
local OPTIMIZER = {
  f("/home/u/cs336_basics/optimizers.py", 82, "step"),
  f(OPT, 485, "wrapper"),
  f("/home/u/train.py", 30, "main"),
}
local ZERO_GRAD = { f(OPT, 960, "zero_grad"), f("/home/u/train.py", 25, "main") }
local MODULE = "/env/lib/python3.13/site-packages/torch/nn/modules/module.py"
local TO_DEVICE = {
  f(MODULE, 1341, "convert"), f(MODULE, 915, "_apply"), f(MODULE, 1355, "to"), f("/home/u/train.py", 12, "main"),
}
local USER_ONLY = { f("/home/u/train.py", 20, "main") }
-- A log_softmax's scratch: made by its factory inside _log_softmax, freed inside it, or
-- by the user's next line.
local SOFTMAX_OUT = {
  f("??", 0, "at::_ops::empty_memory_format::call(c10::ArrayRef<c10::SymInt>)"),
  f("??", 0, "at::_ops::_log_softmax::call(at::Tensor const&, long, bool)"),
  f("??", 0, "at::_ops::log_softmax_int::call(at::Tensor const&, long, std::optional<c10::ScalarType>)"),
  f("/home/u/loss.py", 5, "cross_entropy"),
}
local INSIDE_SOFTMAX = {
  f("??", 0, "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::free(void*)"),
  SOFTMAX_OUT[2], SOFTMAX_OUT[3], SOFTMAX_OUT[4],
}
local NEXT_LINE = { f("/home/u/loss.py", 6, "cross_entropy") }

local function row(t)
  t.ts = t.ts or 10
  return testing.row(t)
end

describe("packs on memory snapshots (issue 25)", function()
  before_each(function()
    phase.reset()
    pytorch.reset()
  end)

  describe("phase", function()
    local function classify(t)
      return testing.classify(phase, row(t))
    end

    it("is backward for the autograd engine's C++ stacks", function()
      assert.are.equal("backward", classify { frames = BACKWARD })
    end)

    it("is backward from Python's entry to it (torch/autograd backward)", function()
      assert.are.equal("backward", classify { frames = {
        f("/env/lib/python3.12/site-packages/torch/autograd/graph.py", 824, "_engine_run_backward"),
        f("/env/lib/python3.12/site-packages/torch/autograd/__init__.py", 347, "backward"),
        f("/home/u/train.py", 40, "main") } })
    end)

    it("is forward under an nn.Module's call with a forward frame, on Windows paths too", function()
      assert.are.equal("forward", classify { frames = FORWARD })
    end)

    it("is optimizer under torch/optim", function()
      assert.are.equal("optimizer", classify { frames = OPTIMIZER })
    end)

    it("lets a record_function annotation win over the stack", function()
      assert.are.equal("optimizer", classify { frames = BACKWARD, annotations = { "Optimizer.step#AdamW.step" } })
    end)

    it("is other for user code alone, and for a row without frames (as before)", function()
      assert.are.equal("other", classify { frames = USER_ONLY })
      assert.are.equal("other", classify {})
    end)

    it("answers each stack once through hmem's memo, keyed on the stack", function()
      local p = testing.load("hmem.rules.phase")
      local calls, classify_ = 0, p.classify
      p.classify = function(r)
        calls = calls + 1
        return classify_(r)
      end
      local memo = testing.load { categories = { "x" }, classify = function(r) return p.classify(r) end, cache_by = phase.cache_by }
      assert.are.equal("forward", memo.classify(row { frames = FORWARD }))
      assert.are.equal("optimizer", memo.classify(row { frames = OPTIMIZER }))
      assert.are.equal("forward", memo.classify(row { frames = FORWARD, ts = 20 }))
      assert.are.equal(2, calls)
    end)
  end)

  describe("pytorch", function()
    local function classify(t)
      return testing.classify(pytorch, row(t))
    end

    it("calls a backward allocation never freed a gradient (not a forward output)", function()
      assert.are.equal("gradient", classify { frames = BACKWARD })
    end)

    it("calls a backward allocation the engine frees autograd detail", function()
      assert.are.equal("autograd detail", classify { frames = BACKWARD, free_ts = 12, free_frames = ENGINE_FREE })
      assert.are.equal("autograd detail", classify { frames = BACKWARD, free_ts = 12 }) -- the engine's thread: no stack
    end)

    it("calls a backward allocation zero_grad frees a gradient", function()
      assert.are.equal("gradient", classify { frames = BACKWARD, free_ts = 900, free_frames = ZERO_GRAD })
    end)

    it("calls what the optimizer keeps optimizer state, what it frees temporary", function()
      assert.are.equal("optimizer state", classify { frames = OPTIMIZER })
      assert.are.equal("temporary", classify { frames = OPTIMIZER, free_ts = 12, free_frames = OPTIMIZER })
    end)

    it("calls a forward allocation freed in backward an activation", function()
      assert.are.equal("activation", classify { frames = FORWARD, free_ts = 50, free_frames = ENGINE_FREE })
    end)

    it("calls a forward allocation a forward output while no backward has run", function()
      assert.are.equal("forward output", classify { frames = FORWARD, free_ts = 12, free_frames = NEXT_LINE })
    end)

    it("calls what model.to(device) keeps a parameter", function()
      assert.are.equal("parameter", classify { frames = TO_DEVICE })
    end)

    it("calls what is freed inside the op that made it temporary", function()
      assert.are.equal("temporary", classify { frames = SOFTMAX_OUT, free_ts = 11, free_frames = INSIDE_SOFTMAX })
    end)

    it("tells frees of memory allocated before recording by their stack", function()
      assert.are.equal("gradient", classify { before_trace = true, frames = ZERO_GRAD })
      assert.are.equal("activation", classify { before_trace = true, frames = ENGINE_FREE })
      assert.are.equal("unknown", classify { before_trace = true, frames = NEXT_LINE })
    end)
  end)

  describe("lifetime", function()
    local function classify(t)
      return testing.classify(lifetime, row(t))
    end

    it("is freed in the same op when the free's stack still holds the op that made it", function()
      assert.are.equal("freed in the same op", classify { frames = SOFTMAX_OUT, free_ts = 11, free_frames = INSIDE_SOFTMAX })
    end)

    it("is freed later when Python frees it after the op returned", function()
      assert.are.equal("freed later (no step)", classify { frames = SOFTMAX_OUT, free_ts = 11, free_frames = NEXT_LINE })
    end)

    it("needs C++ frames: a Python-only stack shows no op", function()
      assert.are.equal("freed later (no step)", classify { frames = USER_ONLY, free_ts = 11, free_frames = USER_ONLY })
    end)

    it("keeps never freed and before trace", function()
      assert.are.equal("never freed", classify { frames = SOFTMAX_OUT })
      assert.are.equal("before trace", classify { before_trace = true, frames = ZERO_GRAD })
    end)

    it("names the maker as from ops: the innermost op that is not a factory", function()
      assert.are.equal(2, lifetime.stack_maker(SOFTMAX_OUT))
      assert.are.equal(1, lifetime.stack_maker({ SOFTMAX_OUT[1], SOFTMAX_OUT[4] }))
      assert.are.equal(0, lifetime.stack_maker(USER_ONLY))
    end)
  end)
end)
