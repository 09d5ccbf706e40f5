-- hmem.rules.phase: the training phase that made each allocation.
--
--   hmem run phase traces/           or, composed:  local phase = require "hmem.rules.phase"
--
-- Categories, tested in this order (the first that matches wins):
--   "optimizer"  inside an op or annotation whose name starts with "Optimizer." (PyTorch's
--                profiler hooks name every optimizer's step and zero_grad so:
--                "Optimizer.step#AdamW.step", "Optimizer.zero_grad#SGD.zero_grad")
--   "backward"   on the autograd engine's thread (thread name containing "autograd", e.g.
--                "thread 2300680 (pt_autograd_0)"), or inside an op or annotation whose name
--                contains "backward" in any case ("autograd::engine::evaluate_function:
--                AddmmBackward0", "CudnnBatchNormBackward", "## backward ##",
--                "FSDP::post_backward_reduce", "CompiledFunctionBackward",
--                "aten::threshold_backward"), starts with "autograd::engine::evaluate_function"
--                or contains "AccumulateGrad"
--   "forward"    inside an annotation whose name contains "forward" in any case
--                ("## forward ##", "DistributedDataParallel.forward",
--                "FullyShardedDataParallel.forward", "FSDP::pre_forward"), a compiled region
--                (op or annotation "CompiledFunction", "## Call CompiledFxGraph ... ##",
--                "Torch-Compiled Region: 0/0"), or an nn.Module frame (row.module, traces
--                recorded with_modules/with_stack); op names such as aten::nll_loss_forward
--                are not markers (they occur in any phase);
--                or, when the series has shown none of these forward markers so far, inside a
--                ProfilerStep (row.step) before the first backward allocation of that step
--   "other"      everything else: data loading and input copies outside the forward, the loss
--                and metrics after backward, memory allocated outside any step
--
-- Memory snapshots have no ops, threads or module slices, only record_function annotations
-- (Optimizer.step#... when recorded): a row that no annotation marks takes the phase its
-- stack shows (row.frames, phase.stack_facts): a frame under torch/optim/ "optimizer"; the
-- autograd engine's C++ frames, a node's apply (BmmBackward0::apply) or the Python entry
-- to backward (torch/autograd/__init__.py backward, _engine_run_backward) "backward"; an
-- nn.Module call (torch/nn/modules/module.py _call_impl) with a forward frame "forward";
-- else "other" (no ProfilerStep, so no fallback). hmem keys its memo on the stack
-- (cache_by "frames": one key for every row of a trace, which has no frames).
--
-- How: row.ops, row.annotations, row.thread and row.module (the explicit markers, no state),
-- worked out once per row.context (phase.explicit, for packs that compose phase); the ProfilerStep fallback keeps, per series
-- (row.series_id: file and device), when each step's first unmarked allocation and the latest
-- backward allocation were seen (integer ns). It relies on hmem classifying a series' rows in
-- time order (it does); a backward or unmarked row earlier than the previous one starts that
-- series' state afresh. phase.reset() forgets all state (for tests).
-- Cost: cache_by keys on the markers (phase.explicit, a key function hmem calls once per
-- phase.view: the markers of each name, the autograd thread, module frames), the step and
-- the series, so hmem calls classify for every backward allocation (it
-- moves the state) and about once per step and view otherwise; a backward allocation after
-- the step's fallback "forward" clears the memo (hmem.cache_clear). Figures per trace shape:
-- README Performance.
--
-- Where it can be wrong:
--   * Traces without markers (no annotations, modules or autograd thread name) depend on the
--     fallback: everything in a step before its first backward allocation is "forward",
--     including the input copy and zero_grad; without ProfilerStep (no schedule) it is "other".
--   * The autograd thread is recognised by its name or by its ops; hmem's thread names come
--     from the trace metadata, and some traces name the backward thread like any Python
--     thread ("thread 785244 (python3.8)"): its allocations are still found by their ops
--     ("autograd::engine::evaluate_function: ...", "...Backward0"), but an allocation on that
--     thread outside any op is "other".
--   * Optimizer-in-backward (an optimizer step run from a backward hook) counts as "optimizer";
--     gradient hooks, DDP/FSDP communication in backward count as "backward".
--   * Frees that cannot be paired (2021 traces, no addresses) are charged to the phase in
--     which they happen, so a phase's curve is "allocated minus freed in it" and can go below
--     zero; a free of memory allocated before the trace (row.before_trace) is classified by
--     where it was freed.
local phase = {
  name = "phase",
  description = "forward / backward / optimizer / other, from annotations, ops, the autograd thread and modules",
  categories = {
    { name = "forward", color = "#2ca02c" },
    { name = "backward", color = "#1f77b4" },
    { name = "optimizer", color = "#ff7f0e" },
    { name = "other", color = "#7f7f7f" },
  },
}

local hmem = require "hmem"
local find, lower = string.find, string.lower

local function is_optimizer(name)
  return find(name, "Optimizer.", 1, true) == 1
end

local function is_backward(name)
  return find(lower(name), "backward", 1, true) ~= nil
      or find(name, "AccumulateGrad", 1, true) ~= nil
      or find(name, "autograd::engine::evaluate_function", 1, true) == 1
end

local function is_compiled(name)
  return name == "CompiledFunction"
      or find(name, "## Call CompiledFxGraph", 1, true) == 1
      or find(name, "Torch-Compiled Region", 1, true) == 1
end

-- Op names like aten::nll_loss_forward say nothing about the phase; annotations do.
local function is_forward(name)
  return find(lower(name), "forward", 1, true) ~= nil or is_compiled(name)
end

local function any(list, pred)
  for i = 1, #list do
    if pred(list[i]) then
      return true
    end
  end
  return false
end

-- Names repeat (a trace has a few hundred distinct op names): remember each answer, so a
-- row costs table lookups, not string searches.
local function memo(pred)
  local known = {}
  return function(name)
    local v = known[name]
    if v == nil then
      v = pred(name)
      known[name] = v
    end
    return v
  end
end
is_optimizer, is_backward, is_compiled, is_forward = memo(is_optimizer), memo(is_backward), memo(is_compiled), memo(is_forward)

-- Name tests, for packs that compose this one.
phase.is_optimizer, phase.is_backward, phase.is_forward, phase.is_compiled = is_optimizer, is_backward, is_forward, is_compiled

-- Whether the thread name is the autograd engine's.
function phase.is_autograd_thread(thread)
  return thread ~= nil and find(lower(thread), "autograd", 1, true) ~= nil
end

-- What a memory snapshot's stack says (row.frames or row.free_frames: {file=, line=, name=},
-- innermost first), where a snapshot has no ops, threads or module slices: the phase its
-- frames show, whether the optimizer's or a module's zero_grad, AccumulateGrad, or a
-- module's __init__, reset_parameters or _apply is on it. Paths split at / and \.
--   optimizer  a frame of a file under torch/optim/ (an optimizer's step, zero_grad, its
--              hooks: PyTorch wraps every Optimizer subclass's step there)
--   backward   the autograd engine's C++ frames (torch::autograd::Engine::evaluate_function,
--              thread_main), a node's apply (torch::autograd::generated::BmmBackward0::apply,
--              torch::autograd::AccumulateGrad::apply), or the Python entry to it:
--              torch/autograd/__init__.py backward, _engine_run_backward, torch/_tensor.py
--              backward
--   forward    an nn.Module call (torch/nn/modules/module.py _call_impl or
--              _wrapped_call_impl) with a frame named forward
-- Tested in that order. A stack recorded without C++ frames (stacks="python") shows nothing
-- for what the autograd engine's thread allocates: its stack is empty.
function phase.stack_facts(frames)
  local optimizer, backward, call, fwd, zero, acc, init = false, false, false, false, false, false, false
  for i = 1, #frames do
    local f = frames[i]
    local file, name = f.file, f.name
    if find(file, "\\", 1, true) then
      file = file:gsub("\\", "/")
    end
    if find(file, "torch/optim/", 1, true) then
      optimizer = true
    elseif find(name, "torch::autograd::", 1, true) == 1 and (find(name, "::apply(", 1, true)
          or find(name, "Engine::evaluate_function", 1, true) or find(name, "Engine::thread_main", 1, true)) then
      backward = true
    elseif name == "_engine_run_backward" or (name == "backward" and (find(file, "torch/autograd/__init__.py", 1, true)
          or find(file, "torch/_tensor.py", 1, true))) then
      backward = true
    elseif name == "_call_impl" or name == "_wrapped_call_impl" then
      call = call or find(file, "torch/nn/modules/module.py", 1, true) ~= nil
    elseif name == "forward" then
      fwd = true
    end
    if name == "zero_grad" then
      zero = true
    elseif name == "__init__" or name == "reset_parameters" or name == "_apply" then
      init = true
    end
    acc = acc or find(name, "AccumulateGrad", 1, true) ~= nil
  end
  local p = optimizer and "optimizer" or backward and "backward" or (call and fwd) and "forward" or nil
  return { phase = p, zero_grad = zero, accumulate = acc, init = init, empty = #frames == 0 }
end

-- The phase a row's stack shows (phase.stack_facts), or nil: traces have no frames.
function phase.of_frames(row)
  local frames = row.frames
  return #frames > 0 and phase.stack_facts(frames).phase or nil
end

local function explicit(row)
  local ops, ann = row.ops, row.annotations
  if any(ops, is_optimizer) or any(ann, is_optimizer) then
    return "optimizer"
  end
  if phase.is_autograd_thread(row.thread) or any(ops, is_backward) or any(ann, is_backward) then
    return "backward"
  end
  if row.module ~= nil or any(ann, is_forward) or any(ops, is_compiled) then
    return "forward"
  end
  return false
end

-- The context as phase sees it (row.view): the markers of each name, the autograd thread,
-- module frames; every other name is left out.
function phase.view(name, kind)
  if kind == "thread" then
    return phase.is_autograd_thread(name) and "T" or nil
  elseif kind == "python" then
    return #name > 11 and find(name, "nn.Module: ", 1, true) == 1 and "M" or nil -- row.module
  end
  local code = (is_optimizer(name) and "Q" or "") .. (is_backward(name) and "B" or "")
      .. (kind == "op" and is_compiled(name) and "C" or "") .. (kind == "annotation" and is_forward(name) and "W" or "")
  return code ~= "" and code or nil
end

-- The phase given by explicit markers only ("optimizer", "backward", "forward"), or nil.
-- No state: the same row always gives the same answer. It depends on the context alone
-- (op names, annotations, thread, module), so it is worked out once per row.context.
local by_context = {}
function phase.explicit(row)
  local c = row.context
  local p = by_context[c]
  if p == nil then
    p = explicit(row)
    by_context[c] = p
  end
  return p or nil
end

-- Per series (row.series_id: file and device): whether it has shown a forward marker, when each step's
-- first unmarked allocation and the latest backward allocation were seen (ts_ns).
local state = {}

-- Whether hmem's memo (phase.cache_by) may hold a "forward" answered by the ProfilerStep
-- fallback: a backward allocation or a first forward marker turns those into "other".
local fallback_remembered = false

local function forget_fallback()
  if fallback_remembered then
    hmem.cache_clear()
    fallback_remembered = false
  end
end

function phase.reset()
  state = {}
  forget_fallback()
end

-- The series' state; a row earlier than the series' previous one starts it afresh.
local function series_state(row, ts)
  local id = row.series_id
  local s = state[id]
  if s == nil or (ts ~= nil and ts < s.last_ts) then
    s = { last_ts = ts or 0, step_start = {}, backward_ts = nil, marked = false }
    state[id] = s
  end
  if ts ~= nil then
    s.last_ts = ts
  end
  return s
end

-- The phase of a row and whether explicit markers gave it (false when the ProfilerStep
-- fallback or "other" did); for a backward row also whether later backward rows of its step
-- and series can change any answer no more (true: they need not be seen). Updates the series
-- state: call it once for every row, in order. Only backward rows and rows without markers
-- read their time.
function phase.detect(row)
  local p = phase.explicit(row) or phase.of_frames(row)
  if p == "optimizer" then
    return p, true
  elseif p == "backward" then
    local ts = row.ts_ns
    local s = series_state(row, ts)
    s.backward_ts = ts
    forget_fallback()
    -- Later backward rows of the step change no answer once the series has forward markers
    -- (no fallback) or a backward came after the step's first unmarked allocation: the
    -- third value says the answer may then be remembered.
    local step = row.step_ts or row.step
    local start = step ~= nil and s.step_start[step] or nil
    return p, true, s.marked or (start ~= nil and ts >= start)
  elseif p == "forward" then
    local s = series_state(row)
    if not s.marked then
      s.marked = true
      forget_fallback()
    end
    return p, true
  end
  -- a step is its ProfilerStep slice (step_ts), not its number: PyTorch 1.13 writes #0 twice
  local step = row.step_ts or row.step
  if step ~= nil then
    local ts = row.ts_ns
    local s = series_state(row, ts)
    local start = s.step_start[step]
    if start == nil then
      start = ts
      s.step_start[step] = ts
    end
    if not s.marked and (s.backward_ts == nil or s.backward_ts < start) then
      fallback_remembered = true
      return "forward", false
    end
  end
  return "other", false
end

-- The answer depends on the explicit markers (phase.explicit, worked out by hmem once per
-- context), a snapshot's stack (frames: hmem keys it on the interned stack, one key for
-- every trace row), the step slice and the series (file and device), and on the series' state,
-- which only backward rows and a series' first forward marker change: backward rows are
-- never remembered, and both clear the memo when it holds a fallback "forward" that they
-- turn into "other". So hmem calls classify about once per step, series and marker, and for
-- each backward allocation.
phase.cache_by = { phase.explicit, "step_ts", "step", "series_id", "frames" }

function phase.classify(row)
  local p, _, settled = phase.detect(row)
  return p, p ~= "backward" or settled
end

return phase
