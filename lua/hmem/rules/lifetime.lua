-- hmem.rules.lifetime: how long each allocation lived, relative to its op and its step.
--
--   hmem run lifetime traces/        or, composed:  local lifetime = require "hmem.rules.lifetime"
--
-- Categories, tested in this order:
--   "before trace"           a free of memory allocated before the trace began
--                            (row.before_trace); it is held from the start of the series
--   "unpaired (no address)"  a trace without addresses (2021, PyTorch < 1.10: row.addr is nil):
--                            no free can be paired with its allocation, so allocations and
--                            their frees both land here and the category stays exact
--   "never freed"            an allocation still live at the end of the trace (row.free_ts nil)
--   "freed in the same op"   freed before the op that made it returned (a temporary)
--   "freed in the same step" freed during the ProfilerStep#N that made it
--                            (row.free_step == row.step)
--   "outlives the step"      made during ProfilerStep#N, freed in a later step or between
--                            steps (row.free_step ~= row.step)
--   "freed later (no step)"  made outside any ProfilerStep (no profiler schedule: inference
--                            captures, unit tests, the warm-up before the schedule) and freed
--                            after its op returned
--
-- How "the same op" is decided (lifetime.same_op):
--   * by time: freed at or before the end (ts + dur) of an op slice that encloses the
--     allocation (row.stack entries of cat cpu_op or Operator, ProfilerStep excluded), i.e.
--     freed while that very op instance was running;
--   * by names, when the stack entries carry no ts/dur (rows built in tests): the ops around
--     the free (row.free_ops) are a non-empty leading part of the ops around the allocation
--     (row.ops), e.g. an aten::empty inside aten::layer_norm freed inside aten::layer_norm,
--     and the steps do not differ. On the real traces in tests/data the two agree on every
--     freed allocation (23,500, checked outside hmem).
-- step and free_step are hmem's: the ProfilerStep#N the process was running at the
-- allocation and at its free, on any of its threads (so the autograd thread has steps too).
--
-- Where it can be wrong:
--   * An allocation freed on another thread while its op was still running counts as freed
--     in the same op (by time), which is rare: ops wait for their own work.
--   * By names (tests only), two instances of equally named ops are one op: a gradient made
--     in one "evaluate_function: AddmmBackward0" and freed in the next counts as the same op.
--   * "never freed" only means not freed before the trace stopped: parameters and optimizer
--     state, but also whatever was live when the profiler's window closed; likewise
--     "outlives the step" includes what the next step frees early (gradients zeroed with
--     set_to_none, the previous batch).
--   * 2021 traces (no addresses) get nothing but "unpaired (no address)".
local lifetime = {
  name = "lifetime",
  description = "freed in the same op / in the same step / outlives the step / never freed / before trace",
  categories = {
    { name = "freed in the same op", color = "#9467bd" },
    { name = "freed in the same step", color = "#2ca02c" },
    { name = "outlives the step", color = "#d62728" },
    { name = "freed later (no step)", color = "#bcbd22" },
    { name = "never freed", color = "#1f77b4" },
    { name = "before trace", color = "#7f7f7f" },
    { name = "unpaired (no address)", color = "#c7c7c7" },
  },
}

local find = string.find

-- Slice times are µs from integer ns; half a ns absorbs the rounding of ts + dur.
local EPS = 0.0005

local function is_step(name)
  return find(name, "^ProfilerStep#%d+$") ~= nil
end

local function is_op_entry(e)
  return (e.cat == "cpu_op" or e.cat == "Operator") and not is_step(e.name)
end

local function without_steps(ops)
  local out = {}
  for i = 1, #ops do
    if not is_step(ops[i]) then
      out[#out + 1] = ops[i]
    end
  end
  return out
end

-- For a freed allocation: "same" when freed in the ProfilerStep that made it, "outlives"
-- when freed in a later step or between steps, nil when it was made outside any step.
function lifetime.step_relation(row)
  if row.kind ~= "alloc" or row.free_ts == nil then
    return nil
  end
  local step = row.step
  if step == nil then
    return nil
  end
  return row.free_step == step and "same" or "outlives"
end

-- Whether a freed allocation was freed before the op that made it returned. stack is
-- row.stack when the caller has read it already.
function lifetime.same_op(row, stack)
  local free_ts = row.free_ts
  if free_ts == nil or row.kind ~= "alloc" then
    return false
  end
  stack = stack or row.stack
  local timed = false
  for i = 1, #stack do
    local e = stack[i]
    if e.ts and e.dur and is_op_entry(e) then
      timed = true
      if free_ts <= e.ts + e.dur + EPS then
        return true
      end
    end
  end
  if timed then
    return false
  end
  local fops = without_steps(row.free_ops)
  if #fops == 0 then
    return false
  end
  local ops = without_steps(row.ops)
  if #fops > #ops then
    return false
  end
  for i = 1, #fops do
    if fops[i] ~= ops[i] then
      return false
    end
  end
  local step, free_step = row.step, row.free_step
  return step == nil or free_step == nil or step == free_step
end

function lifetime.classify(row)
  if row.before_trace then
    return "before trace"
  end
  if row.addr == nil or row.kind == "free" then
    return "unpaired (no address)"
  end
  if row.free_ts == nil then
    return "never freed"
  end
  if lifetime.same_op(row) then
    return "freed in the same op"
  end
  local rel = lifetime.step_relation(row)
  if rel == "same" then
    return "freed in the same step"
  elseif rel == "outlives" then
    return "outlives the step"
  end
  return "freed later (no step)"
end

return lifetime
