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
--   "never freed"            an allocation still live at the end of the trace
--   "freed in the same op"   freed before the op that made it returned (a temporary)
--   "freed in the same step" freed during the ProfilerStep#N that made it
--                            (row.same_step)
--   "outlives the step"      made during ProfilerStep#N, freed in a later step or between
--                            steps (row.same_step false)
--   "freed later (no step)"  made outside any ProfilerStep (no profiler schedule: inference
--                            captures, unit tests, the warm-up before the schedule) and freed
--                            after its op returned
--
-- How "the same op" is decided (lifetime.same_op): freed while the op that made it was still
-- running. The op that made it is the innermost enclosing op (row.ops, ProfilerStep excluded)
-- that is not a factory (aten::empty, aten::empty_strided, aten::zeros_like, ...: a factory
-- hands its result to its caller), or the outermost factory when only factories enclose it:
-- an aten::empty inside aten::layer_norm freed before aten::layer_norm returned is in the
-- same op; an aten::mm result inside a compiled backward that is one long op is not (issue
-- 15: a 56 MiB aten::mm result that lived 223 ms was called "freed in the same op" when any
-- enclosing op counted). Times are compared in C, in integer ns (row.ops_open_at_free).
-- The step is hmem's: the ProfilerStep#N slice the process was running at the allocation and
-- at its free, on any of its threads (so the autograd thread has steps too); row.same_step
-- compares the slices, not only their numbers.
-- Memory snapshots have no ops and no steps: an allocation is "freed in the same op" when
-- its free's stack (row.free_frames) still holds the op that made it (lifetime.stack_same_op:
-- the maker's at::_ops::NAME::call frame, as lifetime.maker picks it, and every frame outside
-- it), which needs stacks recorded with C++ frames (_record_memory_history(stacks="all"));
-- anything else freed is "freed later (no step)". A free of memory allocated before
-- recording began is "before trace", as on a trace.
-- Cost: the category depends on the cache_by fields alone (lifetime.view: each op a factory
-- or not, in order), so hmem calls classify once per distinct combination, whatever the op
-- names. Figures per trace shape: README Performance.
--
-- Where it can be wrong:
--   * An allocation freed on another thread while its op was still running counts as freed
--     in the same op (by time), which is rare: ops wait for their own work.
--   * A tensor made by a sub-op (aten::clone inside aten::matmul) and freed by its caller
--     before the caller returned is not "the same op" (PyTorch's own tool, which groups
--     ops under the outermost one, calls it temporary).
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

-- Ops that only make memory for their caller.
local factory = {}
for _, n in ipairs({ "aten::empty", "aten::empty_strided", "aten::empty_like", "aten::new_empty",
  "aten::new_empty_strided", "aten::zeros", "aten::zeros_like", "aten::new_zeros", "aten::ones",
  "aten::ones_like", "aten::new_ones", "aten::full", "aten::full_like", "aten::new_full",
  "aten::empty_permuted", "aten::resize_" }) do
  factory[n] = true
end
lifetime.factory = factory

-- A ProfilerStep#N marker, told as hmem tells them (it leaves them out of row.context and
-- row.view); packs that compose lifetime use it too.
local function is_step(name)
  return find(name, "ProfilerStep#", 1, true) == 1
end
lifetime.is_step = is_step

-- The position of the op that made an allocation in a list of ops walked from the innermost
-- (list[first], by step): the innermost that is not a factory, else the outermost factory;
-- 0 for none. op(entry) says whether an entry is an op (nil: not one) and a factory.
local function maker_in(list, first, step, op)
  local outer_factory = 0
  for i = first, first + step * (#list - 1), step do
    local is_factory = op(list[i])
    if is_factory == false then
      return i
    elseif is_factory then
      outer_factory = i
    end
  end
  return outer_factory
end

local function trace_op(name)
  if is_step(name) then
    return nil
  end
  return factory[name] == true
end

-- The position in ops (outermost first) of the op that made the allocation, 0 for none.
function lifetime.maker(ops)
  return maker_in(ops, #ops, -1, trace_op)
end

-- The ops as lifetime sees them: factories and other ops (row.view; a pack that composes
-- lifetime keeps these apart in its own view).
function lifetime.view(name, kind)
  if kind ~= "op" then
    return nil
  end
  return factory[name] and "f" or "o" -- ProfilerStep#N markers are never asked
end

-- lifetime.maker of a row's ops. Not remembered per context: a context leaves the
-- ProfilerStep#N markers out, and the maker's place in row.ops counts them (classify runs
-- once per cache_by key, so this is asked rarely).
function lifetime.maker_of(row)
  return lifetime.maker(row.ops)
end

-- For a freed allocation: "same" when freed in the ProfilerStep that made it, "outlives"
-- when freed in a later step or between steps, nil when it was made outside any step or is
-- not freed.
function lifetime.step_relation(row)
  local same = row.same_step
  if same == nil or row.ops_open_at_free == nil then
    return nil
  end
  return same and "same" or "outlives"
end

-- A factory of lifetime.factory named as a snapshot's C++ frames name it, at::_ops::NAME
-- with the overload after the op's name (empty_memory_format, zeros_like, new_empty_strided):
-- the name, then the name without each trailing _part.
local function factory_op(name)
  while true do
    if factory["aten::" .. name] then
      return true
    end
    local shorter = name:match("^(.+)_[^_]*$")
    if not shorter then
      return false
    end
    name = shorter
  end
end

local function frame_op(frame)
  local op = frame.name:match("^at::_ops::([%w_]+)::call%(")
  if op then
    return factory_op(op)
  end
end

-- The position in a snapshot's stack (innermost first) of the op that made an allocation,
-- as lifetime.maker tells it from ops (its at::_ops::NAME::call frames), or 0 when the stack
-- shows no op (a stack recorded without C++ frames).
function lifetime.stack_maker(frames)
  return maker_in(frames, 1, 1, frame_op)
end

local function same_frame(a, b)
  return a.name == b.name and a.file == b.file and a.line == b.line
end

-- Whether a snapshot's allocation was freed before the op that made it returned: the
-- free's stack (row.free_frames) holds the maker's frame (lifetime.stack_maker) and every
-- frame outside it, as the allocation's stack does. The same op called again from the same
-- line has the same frames, but what it frees there is what its earlier call returned to
-- Python, which Python frees outside the op.
function lifetime.stack_same_op(row)
  local frames = row.frames
  local m = #frames > 0 and lifetime.stack_maker(frames) or 0
  if m == 0 then
    return false
  end
  local free = row.free_frames
  local k = #frames - m + 1 -- the maker's frame and those outside it
  if #free < k then
    return false
  end
  for j = 0, k - 1 do
    if not same_frame(frames[#frames - j], free[#free - j]) then
      return false
    end
  end
  return true
end

-- Whether a freed allocation was freed before the op that made it returned: by the ops'
-- times on a trace, by the stacks of a snapshot (which has no ops).
function lifetime.same_op(row)
  local open = row.ops_open_at_free
  if open == nil then
    return false
  end
  if open == 0 then -- no op ran at its free, or a snapshot: its stacks say
    return lifetime.stack_same_op(row)
  end
  local k = lifetime.maker_of(row)
  return k > 0 and open >= k
end

-- frames and free_frames: hmem keys them on the interned stack (equal stacks, one key; every
-- row of a trace, which has no stacks, the same key).
lifetime.cache_by = { "before_trace", "has_addr", "kind", "view", "ops_open_at_free", "same_step", "frames", "free_frames" }

function lifetime.classify(row)
  if row.before_trace then
    return "before trace"
  end
  if not row.has_addr or row.kind == "free" then
    return "unpaired (no address)"
  end
  if row.ops_open_at_free == nil then
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
