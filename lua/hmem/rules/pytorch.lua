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
--                      "freed in the same op": the innermost op that is not a factory);
--   then by hmem.rules.phase's explicit markers (Optimizer.*, the autograd thread, *Backward*,
--   forward / compiled regions / nn.Module frames):
--   "optimizer state"  optimizer: never freed in the trace, or outliving its step (freed in
--                      a later step or between steps: row.same_step false);
--                      "temporary" otherwise (the step's scratch tensors);
--   "gradient"         backward: never freed, outliving its step, made or freed inside
--                      AccumulateGrad, freed inside an Optimizer.* op, or freed outside any
--                      op (by Python code: zero_grad(set_to_none=True) frees .grad there,
--                      while the autograd engine frees its buffers inside its nodes);
--   "autograd detail"  backward: any other allocation freed during the trace (gradients of
--                      activations flowing between autograd nodes, backward buffers);
--   without a backward or optimizer marker (forward markers, or none):
--   "input"            outside any nn.Module, the outermost op a copy to the device or
--                      synthetic data (aten::to, aten::_to_copy, aten::copy_,
--                      aten::pin_memory, aten::randn, aten::rand, aten::randint,
--                      aten::randperm, aten::normal), and freed in the trace or made inside
--                      a ProfilerStep other than #0 (the last batch is never freed);
--   "parameter"        no forward marker, never freed, and made by aten::to / aten::_to_copy
--                      outside any ProfilerStep or in ProfilerStep#0 (model.to(device)
--                      after prof.start(), before the first prof.step()), under a module's
--                      __init__, reset_parameters or _apply Python frame, or by a factory
--                      (aten::empty, ...) called under no other op (nn.Linear(...,
--                      device="cuda") without with_stack: the factory, then an in-place init
--                      such as aten::uniform_, before the first forward);
--   "activation"       freed within its step (or made outside any step and freed) by a
--                      file whose backward runs: freed inside a backward (saved for it), or
--                      after a backward allocation was seen in the file;
--   "forward output"   the same in a file where no backward has run yet (inference, or the
--                      first forward of a trace before its backward): PyTorch has no
--                      activations without a backward; in such a file also what outlives
--                      its step or is never freed;
--   "unknown"          everything else, and a free of memory allocated before the trace
--                      unless it is freed in zero_grad or AccumulateGrad ("gradient") or
--                      in backward ("activation": saved by a forward the trace missed).
--
-- Memory snapshots have no ops, threads or module slices: a row without ops reads its stack
-- (row.frames) through hmem.rules.phase.stack_facts where the rules above read op names, and
-- its free's stack (row.free_frames) where they read the free's ops:
--   the phase: a record_function annotation first, else the stack's (torch/optim/ frames
--   optimizer; the autograd engine's frames, a node's apply or torch.autograd.backward
--   backward; nn.Module's _call_impl with a forward frame forward);
--   "temporary"       freed inside the op that made it (hmem.rules.lifetime.stack_same_op);
--   "gradient"        backward: never freed, made in AccumulateGrad, or freed by zero_grad,
--                     AccumulateGrad, the optimizer or other Python code (its free's stack has
--                     Python frames and no engine frame);
--   "autograd detail" backward: freed by the engine (engine frames, or an empty stack: the
--                     engine's thread has no Python frame);
--   "activation"      forward memory freed by the engine (saved for backward), which also
--                     tells that the file's backward runs;
--   "parameter"       never freed and made under a module's __init__, reset_parameters or
--                     _apply frame (model.to(device));
--   a free of memory allocated before recording is a "gradient" when its stack (the free's)
--   holds zero_grad or AccumulateGrad, an "activation" when it is backward's, else "unknown".
-- Without steps, what outlives a step cannot be told: freed optimizer memory is "temporary",
-- and a gradient freed by the next step's zero_grad needs the free's Python stack. Stacks
-- recorded without C++ frames (stacks="python") are empty on the engine's thread: those
-- allocations keep what the annotations say. cache_by keys frames and free_frames on the
-- interned stacks (one key for every row of a trace).
--
-- Checked against ground truth (tests/truth: an MLP 784-512-256-10 trained with Adam, and
-- its inference, with and without with_stack/with_modules, the model built inside and
-- before the trace): every category within 1% of the truth (the table: python3
-- tests/truth/check.py). When "(before trace)" holds more than half a series' peak (of a
-- snapshot: when what was live as recording began is more than half its peak), done() says so
-- and what to do (for a snapshot, torch.cuda.memory._record_memory_history() earlier).
--
-- Where it can be wrong:
--   * Parameters and optimizer state allocated before the trace began are in hmem's own
--     "(before trace)" category: no rule sees them. Profile from the first step to see them
--     (done() prints a note when they are most of the peak).
--   * "never freed" means live when the trace stopped: a trace cut inside the forward turns
--     activations into "unknown", one cut after backward keeps gradients as "gradient".
--   * Same-op and same-step decisions are hmem.rules.lifetime's (by slice times and steps);
--     without a profiler schedule (no ProfilerStep) nothing outlives a step, so optimizer
--     state freed during the trace is "temporary" and a forward output kept for later is an
--     "activation".
--   * The first forward of a training trace, before any backward allocation: what it frees
--     before the backward (intermediates not saved for backward) is "forward output", not
--     "activation" (in the truth traces: none; such intermediates are a few per layer).
--   * Without markers, allocations made in a step after its backward (the loss's .item(),
--     metrics) and freed in it are "activation".
--   * A top-level factory allocation never freed (torch.empty for a KV cache or a buffer) is
--     a "parameter"; the in-place init that follows a parameter's factory is not visible to
--     a rule (op inputs carry no address), so it is not checked.
--   * A backward allocation freed by Python code that is not a gradient (a tensor the user
--     kept from a backward hook) is a "gradient"; a gradient freed inside some op other than
--     AccumulateGrad or the optimizer in its own step is "autograd detail".
--   * In-place updates, views and storage sharing are invisible: a gradient written into a
--     DDP bucket is the bucket's allocation; activations recomputed by checkpointing are
--     "autograd detail" when made in backward.
--   * A whole graph run as one op is one op, but "the same op" is its innermost op: what a
--     compiled graph's aten ops make and free around each other is not "temporary".
--   * The gradient seed of loss.backward() (aten::ones_like on the main thread) is counted
--     by where it is made, not as autograd detail.
--   * Custom autograd Functions and hooks follow the thread and op names they run under.
--
-- Cost: pytorch.view gives hmem each name's letters (the tests below it passes), so
-- cache_by keys on row.view and row.free_view, not on the contexts: a model's layers, which
-- differ in module names and Python lines, share a view, and classify runs once per distinct
-- key (facts per view are worked out once). The memo is cleared once per trace, when its
-- backward first runs. Figures per trace shape: README Performance.
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
    { name = "forward output", color = "#ff8c00" },
    { name = "unknown", color = "#808080" },
  },
}

local hmem = require "hmem"
local find, lower = string.find, string.lower

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

local is_step = lifetime.is_step

-- What one name says, as bits, worked out once per distinct name: a context that is new
-- (a deep stack seen once) costs a table lookup per name, not a string search.
local FSDP, GATHER, RS, ZERO, ACC, OPT, BACKWARD, INIT, STEP = 1, 2, 4, 8, 16, 32, 64, 128, 256
local bits_of = setmetatable({}, { __index = function(t, name)
  local b = (is_fsdp(name) and FSDP or 0) | (is_gather(name) and GATHER or 0)
      | (is_reduce_scatter(name) and RS or 0) | (is_zero_grad(name) and ZERO or 0)
      | (is_accumulate_grad(name) and ACC or 0) | (is_optimizer(name) and OPT or 0)
      | (phase.is_backward(name) and BACKWARD or 0) | (is_init_frame(name) and INIT or 0)
      | (is_step(name) and STEP or 0)
  t[name] = b
  return b
end })

local function bits(list)
  local b = 0
  for i = 1, #list do
    b = b | bits_of[list[i]]
  end
  return b
end

-- The context as the pack sees it (row.view, row.free_view): each name as the letters of
-- the tests it passes, ops always kept (their place decides the outermost op and the op
-- that made the allocation), other names only when they pass a test. Rows of many contexts
-- (a new Python line or module name each time) share a view, and cache_by answers them.
local letters = {
  { FSDP, "D" }, { GATHER, "G" }, { RS, "R" }, { ZERO, "Z" }, { ACC, "A" }, { OPT, "O" }, { BACKWARD, "B" },
  { INIT, "N" },
}
function pytorch.view(name, kind)
  local p = phase.view(name, kind)
  if kind == "thread" then
    return p
  end
  local b, code = bits_of[name], p or ""
  for i = 1, #letters do
    if b & letters[i][1] ~= 0 then
      code = code .. letters[i][2]
    end
  end
  if kind == "op" then
    code = code .. "." .. (lifetime.view(name, kind) or "") .. (param_ops[name] and "p" or input_ops[name] and "i" or "")
  end
  return code ~= "" and code or nil
end

-- What the context of a row says (its op names, annotations, thread), once per row.view
-- (the view keeps all it reads): the explicit phase, FSDP collectives, the outermost op.
local facts_of = {}
local function facts(row)
  local c = row.view
  local f = facts_of[c]
  if f ~= nil then
    return f
  end
  local ops = row.ops
  local o, a = bits(ops), bits(row.annotations)
  local top, real = nil, 0
  for i = 1, #ops do
    if bits_of[ops[i]] & STEP == 0 then
      real = real + 1
      top = top or ops[i]
    end
  end
  local oa = o | a
  f = {
    phase = phase.explicit(row),
    fsdp = a & FSDP ~= 0,
    gather = oa & GATHER ~= 0,
    reduce_scatter = oa & RS ~= 0,
    grad_free = oa & ZERO ~= 0 or o & ACC ~= 0,
    accumulate = o & ACC ~= 0,
    optimizer = oa & OPT ~= 0,
    no_ops = real == 0,
    top = top,
    input = row.module == nil and input_ops[top] == true,
    bare_factory = real == 1 and lifetime.factory[top] == true,
  }
  facts_of[c] = f
  return f
end

-- Whether a module's __init__, reset_parameters or _apply frame encloses the row: asked
-- only of rows never freed, once per view.
local init_frame_of = {}
local function init_frame(row)
  local c = row.view
  local v = init_frame_of[c]
  if v == nil then
    v = bits(row.python) & INIT ~= 0
    init_frame_of[c] = v
  end
  return v
end

-- Files whose backward has run (a backward allocation was classified): forward memory there
-- is "activation", elsewhere "forward output".
local backward_seen = {}

function pytorch.reset()
  backward_seen = {}
end

-- The file's backward runs: the memo forgets its "forward output" answers (hmem
-- remembers them per trace until then).
local function backward_runs(file)
  if not backward_seen[file] then
    backward_seen[file] = true
    hmem.cache_clear()
  end
end

-- A free of memory allocated before the trace: where it was freed (its ops, or on a
-- snapshot its stack, which is the free's) says what it held.
local function freed_before_trace(row, f)
  if f.phase == nil and not f.grad_free then
    local frames = row.frames
    if #frames > 0 then
      local s = phase.stack_facts(frames)
      if s.zero_grad or s.accumulate then
        return "gradient"
      end
      return s.phase == "backward" and "activation" or "unknown"
    end
  end
  if f.grad_free then
    return "gradient"
  end
  if f.phase == "backward" then
    return "activation"
  end
  return "unknown"
end

-- What the ops around an allocation's free say, once per row.free_view.
local free_facts_of = {}
local function free_facts(row)
  local c = row.free_view
  local g = free_facts_of[c]
  if g == nil then
    local fops = row.free_ops
    local o, real = bits(fops), 0
    for i = 1, #fops do
      if bits_of[fops[i]] & STEP == 0 then
        real = real + 1
      end
    end
    g = { no_ops = real == 0, accumulate = o & ACC ~= 0, optimizer = o & OPT ~= 0, backward = o & BACKWARD ~= 0 }
    free_facts_of[c] = g
  end
  return g
end

local function backward(row, f, freed, outlives, stack)
  if not freed or f.accumulate or outlives or (stack and stack.accumulate) then
    return "gradient"
  end
  if stack then -- a snapshot: the free's stack, not its ops, says who freed it
    local s = phase.stack_facts(row.free_frames)
    if s.zero_grad or s.accumulate or s.phase == "optimizer" then
      return "gradient"
    end
    -- freed by the engine (its frames, or no stack: the engine's thread has no Python
    -- frame) or by Python code
    return (s.empty or s.phase == "backward") and "autograd detail" or "gradient"
  end
  -- Freed outside any op: by Python code, such as zero_grad(set_to_none=True); the
  -- autograd engine frees its own buffers inside its nodes (evaluate_function).
  local g = free_facts(row)
  if g.no_ops or g.accumulate or g.optimizer then
    return "gradient"
  end
  return "autograd detail"
end

-- Forward memory, or memory with no marker: whether the file's backward has run decides
-- between activation and forward output (backward_runs makes hmem forget the latter).
local function forward(row, f, freed, outlives, explicit, stack)
  local file = row.file or ""
  local in_backward = freed and free_facts(row).backward
  if stack and freed and not in_backward then -- a snapshot: freed by the engine (saved for backward)
    in_backward = phase.stack_facts(row.free_frames).phase == "backward"
  end
  if in_backward then
    backward_runs(file) -- saved for a backward: the file's backward runs
  end
  if not backward_seen[file] then
    return "forward output"
  end
  if not freed or outlives then
    return "unknown"
  end
  if not explicit and not in_backward and row.same_step == nil then
    return "unknown" -- made outside any step without markers, freed later: not known
  end
  return "activation"
end

-- frames and free_frames: a snapshot's stacks, which hmem keys on the interned stack (one key
-- for every row of a trace).
pytorch.cache_by = { "has_addr", "kind", "before_trace", "view", "ops_open_at_free", "same_step", "free_view", "frames",
  "free_frames" }

function pytorch.classify(row)
  if not row.has_addr or (row.kind == "free" and not row.before_trace) then
    return "unknown"
  end
  local f = facts(row)
  if row.before_trace then
    return freed_before_trace(row, f)
  end
  -- a snapshot's row: no ops, its stack says what the markers would
  local stack = f.no_ops and #row.frames > 0 and phase.stack_facts(row.frames) or nil
  if f.fsdp then
    if f.gather then
      return "parameter"
    end
    if f.reduce_scatter then
      return "gradient"
    end
  end
  local open = row.ops_open_at_free
  local freed = open ~= nil
  if freed and lifetime.same_op(row) then
    return "temporary"
  end
  local same = row.same_step
  local outlives = freed and same == false
  local p = f.phase or (stack and stack.phase)
  if p == "optimizer" then
    if not freed or outlives then
      return "optimizer state"
    end
    return "temporary"
  elseif p == "backward" then
    backward_runs(row.file or "")
    return backward(row, f, freed, outlives, stack)
  end
  if stack and not freed and stack.init then
    return "parameter" -- made under a module's __init__, reset_parameters or _apply (.to(device))
  end
  if p == nil then
    if f.input and freed then
      return "input"
    end
    if not freed and ((same == nil and param_ops[f.top]) or f.bare_factory or init_frame(row)) then
      return "parameter"
    end
    if not freed and f.input then
      -- never freed, in a step: model.to(device) in ProfilerStep#0 (after prof.start(),
      -- before the first prof.step()), else the last batch (rare rows: not remembered)
      return row.step == 0 and "parameter" or "input", false
    end
  end
  return forward(row, f, freed, outlives, p == "forward", stack)
end

-- A note when memory allocated before the trace is most of a peak: no rule can see it. A
-- snapshot lists every block made before recording as a row (classified from its frames, if
-- the segments kept any), so there the note counts what was live when recording began.
function pytorch.done(report)
  for _, s in ipairs(report.series) do
    if s.snapshot then
      local live = s.before_trace_bytes
      if s.peak_bytes > 0 and live * 2 > s.peak_bytes then
        hmem.note(("pytorch: %s %s: %s was live when recording began (%d%% of the %s peak): the snapshot"
          .. " has no history of it, so its categories come from the segments' frames at most; call"
          .. " torch.cuda.memory._record_memory_history() before the model and optimizer are built")
          :format(s.path, s.device, hmem.human(live), live * 100 // s.peak_bytes, hmem.human(s.peak_bytes)))
      end
    else
      for _, c in ipairs(s.categories) do
        if c.name == "(before trace)" and s.peak_bytes > 0 and c.bytes_at_peak * 2 > s.peak_bytes then
          hmem.note(("pytorch: %s %s: %s of the %s peak (%d%%) was allocated before the trace began, so no"
            .. " category sees it (parameters, optimizer state); start the profiler before the model and"
            .. " optimizer are built, or at step 0"):format(s.path, s.device, hmem.human(c.bytes_at_peak),
            hmem.human(s.peak_bytes), c.bytes_at_peak * 100 // s.peak_bytes))
        end
      end
    end
  end
end

return pytorch
