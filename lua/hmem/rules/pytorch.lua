-- hmem.rules.pytorch: an approximation of PyTorch's own memory categories
-- (torch.profiler's export_memory_timeline: parameter, optimizer state, input, temporary,
-- activation, gradient, autograd detail, unknown), from op context and lifetimes only, so it
-- runs on any trace: FSDP, torch.compile, inference engines, old traces, where PyTorch's own
-- tool fails or was not recorded.
--
--   hmem run pytorch traces/         or, composed:  local pytorch = require "hmem.rules.pytorch"
--
-- PyTorch's tool follows tensor identities and versions through every op (which tensor is a
-- parameter, which is passed to AccumulateGrad, which the optimizer keeps in its state). The
-- trace has none of that: only where each allocation was made and freed, and when. Each
-- category below is therefore a guess from that context, tested in this order:
--
--   "unknown"          a trace without addresses (2021, row.addr nil): allocations and
--                      frees cannot be paired, so both go here and the category stays exact;
--   "parameter"        (FSDP) made inside an all-gather or unshard ("all_gather",
--                      "allgather", "unshard" in an op or annotation name) under an FSDP
--                      annotation ("FSDP::...", "FullyShardedDataParallel...."): the
--                      unsharded parameters;
--   "gradient"         (FSDP) made inside a reduce-scatter ("reduce_scatter") under an FSDP
--                      annotation: the sharded gradients;
--   "temporary"        freed before the op that made it returned (hmem.rules.lifetime's
--                      "freed in the same op"): an op's scratch space;
--   then by hmem.rules.phase's explicit markers (Optimizer.*, the autograd thread, *Backward*,
--   forward / compiled regions / nn.Module frames):
--   "optimizer state"  optimizer: never freed in the trace, or outliving its step (freed in
--                      a later step or between steps: row.free_step ~= row.step);
--                      "temporary" otherwise (the step's scratch tensors);
--   "gradient"         backward: never freed, outliving its step, made or freed inside
--                      AccumulateGrad, freed inside an Optimizer.* op, or freed outside any
--                      op (by Python code: zero_grad(set_to_none=True) frees .grad there,
--                      while the autograd engine frees its buffers inside its nodes);
--   "autograd detail"  backward: any other allocation freed during the trace (gradients of
--                      activations flowing between autograd nodes, backward buffers);
--   "activation"       forward: freed later, within its step or without any step (saved for
--                      backward and freed there, or an intermediate freed during the
--                      forward, as PyTorch counts them);
--                      forward allocations never freed or outliving their step are "unknown"
--                      (outputs kept by the caller, caches, a forward the trace cut short);
--   without markers:
--   "input"            freed in the trace, outside any nn.Module, and the outermost op is a
--                      copy to the device or synthetic data (aten::to, aten::_to_copy,
--                      aten::copy_, aten::pin_memory, aten::randn, aten::rand, aten::randint,
--                      aten::randperm, aten::normal);
--   "parameter"        never freed, and made outside any ProfilerStep, or by aten::to /
--                      aten::_to_copy (model.to(device)), or under a module's __init__,
--                      reset_parameters or _apply Python frame;
--   "activation"       the phase fallback says forward (inside a ProfilerStep before the
--                      first backward allocation) and it is freed within its step;
--   "unknown"          everything else, and a free of memory allocated before the trace
--                      unless it is freed in zero_grad or AccumulateGrad ("gradient") or
--                      in backward ("activation": saved by a forward the trace missed).
--
-- Where it can be wrong:
--   * Parameters and optimizer state allocated before the trace began are in hmem's own
--     "(before trace)" category: no rule sees them. Profile from the first step to see them.
--   * "never freed" means live when the trace stopped: a trace cut inside the forward turns
--     activations into "unknown", one cut after backward keeps gradients as "gradient".
--   * Same-op and same-step decisions are hmem.rules.lifetime's (by slice times and steps);
--     without a profiler schedule (no ProfilerStep) nothing outlives a step, so optimizer
--     state freed during the trace is "temporary" and a forward output kept for later is an
--     "activation".
--   * A backward allocation freed by Python code that is not a gradient (a tensor the user
--     kept from a backward hook) is a "gradient"; a gradient freed inside some op other than
--     AccumulateGrad or the optimizer in its own step is "autograd detail".
--   * In-place updates, views and storage sharing are invisible: a gradient written into a
--     DDP bucket is the bucket's allocation; a KV cache allocated outside the step and never
--     freed is a "parameter"; activations recomputed by checkpointing are "autograd detail"
--     when made in backward.
--   * A whole graph run as one op is one op: what the forward of an AOTAutograd
--     "CompiledFunction" op allocates and frees before it returns is "temporary" (PyTorch's
--     tool would see the graph's ops), likewise inside one compiled backward node.
--   * The gradient seed of loss.backward() (aten::ones_like on the main thread) is counted
--     by where it is made (forward or unknown), not as autograd detail.
--   * Custom autograd Functions and hooks follow the thread and op names they run under.
local phase = require "hmem.rules.phase"
local lifetime = require "hmem.rules.lifetime"

local pytorch = {
  name = "pytorch",
  description = "PyTorch's memory categories (parameter, optimizer state, input, temporary, activation, gradient, autograd detail), guessed from op context and lifetimes",
  -- PyTorch's own order and colours (torch/profiler/_memory_profiler.py).
  categories = {
    { name = "parameter", color = "#006400" },
    { name = "optimizer state", color = "#daa520" },
    { name = "input", color = "#000000" },
    { name = "temporary", color = "#9370db" },
    { name = "activation", color = "#ff0000" },
    { name = "gradient", color = "#0000cd" },
    { name = "autograd detail", color = "#4169e1" },
    { name = "unknown", color = "#808080" },
  },
}

local find, lower = string.find, string.lower

local function any(list, pred)
  for i = 1, #list do
    if pred(list[i]) then
      return true
    end
  end
  return false
end

local function has(s)
  return function(name)
    return find(name, s, 1, true) ~= nil
  end
end

local is_accumulate_grad = has("AccumulateGrad")
local is_zero_grad = has("Optimizer.zero_grad")
local is_optimizer = has("Optimizer.")

local function is_fsdp(name)
  return find(name, "FSDP", 1, true) ~= nil or find(name, "FullyShardedDataParallel", 1, true) ~= nil
end

local function is_gather(name)
  local l = lower(name)
  return find(l, "all_gather", 1, true) ~= nil or find(l, "allgather", 1, true) ~= nil or find(l, "unshard", 1, true) ~= nil
end

local function is_reduce_scatter(name)
  local l = lower(name)
  return find(l, "reduce_scatter", 1, true) ~= nil or find(l, "reducescatter", 1, true) ~= nil
end

local input_ops = {
  ["aten::to"] = true, ["aten::_to_copy"] = true, ["aten::copy_"] = true, ["aten::pin_memory"] = true,
  ["aten::randn"] = true, ["aten::rand"] = true, ["aten::randint"] = true, ["aten::randperm"] = true,
  ["aten::normal"] = true,
}
local param_ops = { ["aten::to"] = true, ["aten::_to_copy"] = true }

local function is_init_frame(name)
  return find(name, "): __init__", 1, true) ~= nil or find(name, "): reset_parameters", 1, true) ~= nil
      or find(name, "): _apply", 1, true) ~= nil
end

-- The outermost op that is not a ProfilerStep marker, or nil.
local function outermost(ops)
  for i = 1, #ops do
    if not find(ops[i], "^ProfilerStep#%d+$") then
      return ops[i]
    end
  end
  return nil
end

local function freed_before_trace(p, ops, ann)
  if any(ops, is_zero_grad) or any(ann, is_zero_grad) or any(ops, is_accumulate_grad) then
    return "gradient"
  end
  if p == "backward" then
    return "activation"
  end
  return "unknown"
end

function pytorch.classify(row)
  if row.addr == nil or (row.kind == "free" and not row.before_trace) then
    return "unknown"
  end
  local p, explicit = phase.detect(row)
  local ops, ann = row.ops, row.annotations
  if row.before_trace then
    return freed_before_trace(explicit and p, ops, ann)
  end
  if any(ann, is_fsdp) then
    if any(ops, is_gather) or any(ann, is_gather) then
      return "parameter"
    end
    if any(ops, is_reduce_scatter) or any(ann, is_reduce_scatter) then
      return "gradient"
    end
  end
  local free_ts = row.free_ts
  if free_ts ~= nil and lifetime.same_op(row) then
    return "temporary"
  end
  if explicit then
    if p == "optimizer" then
      if free_ts == nil or lifetime.step_relation(row) == "outlives" then
        return "optimizer state"
      end
      return "temporary"
    elseif p == "backward" then
      if free_ts == nil or any(ops, is_accumulate_grad) then
        return "gradient"
      end
      -- Freed outside any op: by Python code, such as zero_grad(set_to_none=True); the
      -- autograd engine frees its own buffers inside the nodes (evaluate_function).
      local fops = row.free_ops
      if #fops == 0 or any(fops, is_accumulate_grad) or any(fops, is_optimizer) then
        return "gradient"
      end
      if lifetime.step_relation(row) == "outlives" then
        return "gradient"
      end
      return "autograd detail"
    end
    -- forward
    if free_ts == nil or lifetime.step_relation(row) == "outlives" then
      return "unknown"
    end
    return "activation"
  end
  -- no explicit marker
  local top = outermost(ops)
  if free_ts == nil then
    if row.step == nil or param_ops[top] or any(row.python, is_init_frame) then
      return "parameter"
    end
    return "unknown"
  end
  if row.module == nil and input_ops[top] then
    return "input"
  end
  if p == "forward" and lifetime.step_relation(row) ~= "outlives" then
    return "activation"
  end
  return "unknown"
end

return pytorch
