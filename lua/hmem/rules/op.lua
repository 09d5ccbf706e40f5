-- hmem.rules.op: each allocation is charged to the innermost PyTorch op that made it.
--
--   hmem run op traces/              or, composed:  local op = require "hmem.rules.op"
--
-- Categories (one per op name, in the order they first allocate, plus two fixed ones):
--   "<op name>"        the innermost enclosing op (row.op), e.g. "aten::empty", "aten::addmm",
--                      "aten::_to_copy", "c10d::allreduce_"
--   "(no op)"          allocated outside any op: Python code between ops, a
--                      record_function range without an op under it, a compiled graph's
--                      direct allocations
--   "(allocated before the trace)"
--                      a free of memory allocated before the trace began (row.before_trace);
--                      the op that made it is not in the trace
--
-- How: row.op, the innermost cpu_op ("Operator" in 2021 traces) slice on the same thread that
-- encloses the event. "ProfilerStep#N" slices are step markers, not ops: 2021 traces record
-- them as "Operator", newer ones as user_annotation; here they never count as an op, so a
-- step's direct allocations are "(no op)" in every trace generation. The category depends
-- on row.op and row.before_trace only, so the pack declares cache_by (one classify call per
-- distinct op): 40-80 ns per allocation on a 1 GiB scripts/gen-trace trace.
--
-- Where it can be wrong: the innermost op is often a factory (aten::empty, aten::empty_strided)
-- called by the op that wanted the memory; compose with row.ops to charge the outermost or a
-- chosen level instead. In traces without addresses (2021) frees cannot be paired: a free is
-- charged to the op that freed it, so a category's curve is "allocated minus freed inside that
-- op" and can go below zero.
local op = {
  name = "op",
  description = "the innermost op that made the allocation, \"(no op)\" outside any op",
  categories = { "(no op)", "(allocated before the trace)" },
  -- The category depends on these fields alone: hmem calls classify once per distinct pair.
  cache_by = { "op", "before_trace" },
}

-- The innermost op of a list of op names that is not a ProfilerStep marker, or nil.
function op.innermost(ops)
  for i = #ops, 1, -1 do
    local name = ops[i]
    if not name:find("^ProfilerStep#%d+$") then
      return name
    end
  end
  return nil
end

function op.classify(row)
  if row.before_trace then
    return "(allocated before the trace)"
  end
  local name = row.op
  if name == nil or name:find("^ProfilerStep#%d+$") then
    return "(no op)"
  end
  return name
end

return op
