-- What makes the shipped packs cheap (issue 19), as hmem.testing mirrors it: cache_by key
-- functions, hmem.cache_clear, row.series_id, and the phase pack memoised on them.
local testing = require "hmem.testing"
local hmem = require "hmem"
local phase = require "hmem.rules.phase"

describe("cache_by key functions", function()
  it("key the memo on the function's answer", function()
    local calls = 0
    local pack = testing.load {
      cache_by = { function(row) return row.op == "aten::add" end },
      classify = function(row) calls = calls + 1; return row.op end,
    }
    assert.are.equal("aten::mm", pack.classify(testing.row { op = "aten::mm" }))
    assert.are.equal("aten::mm", pack.classify(testing.row { op = "aten::bmm" })) -- same answer: false
    assert.are.equal("aten::add", pack.classify(testing.row { op = "aten::add" }))
    assert.are.equal(2, calls)
  end)

  it("must answer a scalar", function()
    local pack = testing.load { cache_by = { function() return {} end }, classify = function() return "x" end }
    assert.has_error(function() pack.classify(testing.row {}) end,
      "cache_by: a key function returned a table; it must return a string, number, boolean or nil")
  end)
end)

describe("hmem.cache_clear", function()
  it("empties the memo: the next row is classified again", function()
    local calls = 0
    local pack = testing.load { cache_by = { "op" }, classify = function() calls = calls + 1; return "x" end }
    pack.classify(testing.row { op = "aten::mm" })
    pack.classify(testing.row { op = "aten::mm" })
    assert.are.equal(1, calls)
    hmem.cache_clear()
    pack.classify(testing.row { op = "aten::mm" })
    assert.are.equal(2, calls)
  end)
end)

describe("row.series_id", function()
  it("is equal for rows of one file and device, different otherwise", function()
    local a = testing.row { file = "a.json", device = "cuda:0" }
    assert.are.equal(a.series_id, testing.row { file = "a.json", device = "cuda:0", bytes = 7 }.series_id)
    assert.are_not.equal(a.series_id, testing.row { file = "a.json", device = "cuda:1" }.series_id)
    assert.are_not.equal(a.series_id, testing.row { file = "b.json", device = "cuda:0" }.series_id)
    assert.are.equal("integer", math.type(a.series_id))
  end)
end)

describe("hmem.rules.phase through its memo", function()
  before_each(phase.reset)

  local function step(name, ts, t)
    t.stack = t.stack or {}
    table.insert(t.stack, 1, { name = name, cat = "user_annotation", ts = 0, dur = 1e6 })
    t.ts = ts
    return testing.row(t)
  end

  it("sees a backward row while it can still change the step's answers (issue 19)", function()
    phase.reset()
    local pack = testing.load(phase)
    local mm = { name = "aten::mm", cat = "cpu_op" }
    local bwd = { name = "autograd::engine::evaluate_function: MmBackward0", cat = "cpu_op" }
    -- a backward before the step's first unmarked allocation settles nothing
    assert.are.equal("backward", pack.classify(step("ProfilerStep#1", 10, { stack = { bwd } })))
    assert.are.equal("forward", pack.classify(step("ProfilerStep#1", 11, { stack = { mm } })))
    -- the same key as the first row: it must be seen, and turn the step's answers to other
    assert.are.equal("backward", pack.classify(step("ProfilerStep#1", 12, { stack = { bwd } })))
    assert.are.equal("other", pack.classify(step("ProfilerStep#1", 13, { stack = { mm } })))
  end)

  it("turns the fallback's remembered forward into other once backward runs in the step", function()
    local pack = testing.load(phase)
    local ops = { { name = "aten::mm", cat = "cpu_op" } }
    assert.are.equal("forward", pack.classify(step("ProfilerStep#1", 10, { stack = { ops[1] } })))
    assert.are.equal("forward", pack.classify(step("ProfilerStep#1", 11, { stack = { ops[1] } })))
    assert.are.equal("backward", pack.classify(step("ProfilerStep#1", 12, {
      stack = { { name = "autograd::engine::evaluate_function: MmBackward0", cat = "cpu_op" } } })))
    -- the same key as the first two rows: the memo must not answer forward
    assert.are.equal("other", pack.classify(step("ProfilerStep#1", 13, { stack = { ops[1] } })))
  end)

  it("keys on its markers (a key function of its view); a backward row that can still move the state is not remembered", function()
    assert.are.equal(phase.explicit, phase.cache_by[1])
    assert.are.equal("function", type(phase.view))
    local _, remember = phase.classify(testing.row { ops = { "autograd::engine::evaluate_function: MmBackward0" } })
    assert.is_false(remember)
  end)
end)

describe("a pack's view (row.view, row.free_view)", function()
  local asked
  local function pack(calls)
    asked = {}
    return testing.load {
      view = function(name, kind)
        asked[#asked + 1] = kind .. " " .. name
        if kind == "op" then return name:find("empty", 1, true) and "f" or "o" end
        return nil
      end,
      cache_by = { "view", "free_view" },
      classify = function(row) calls[1] = calls[1] + 1; return #row.ops .. " ops" end,
    }
  end

  it("gives rows whose names have the same codes one view, and asks once per name", function()
    local calls = { 0 }
    local p = pack(calls)
    local a = testing.row { ops = { "aten::add" }, python = { "model.py(3): forward" } }
    local b = testing.row { ops = { "aten::mul" }, python = { "model.py(9): forward" } }
    local c = testing.row { ops = { "aten::mul", "aten::empty" } }
    assert.are.equal("1 ops", p.classify(a))
    assert.are.equal("1 ops", p.classify(b))
    assert.are.equal("2 ops", p.classify(c))
    assert.are.equal(2, calls[1])
    assert.are.equal(a.view, b.view)
    assert.are_not.equal(a.view, c.view)
    table.sort(asked)
    assert.are.same({ "op aten::add", "op aten::empty", "op aten::mul", "python model.py(3): forward",
      "python model.py(9): forward" }, asked)
  end)

  it("keeps the order and the kind of each name", function()
    local p = pack({ 0 })
    local fo = testing.row { ops = { "aten::empty", "aten::add" } }
    local of = testing.row { ops = { "aten::add", "aten::empty" } }
    p.classify(fo)
    p.classify(of)
    assert.are_not.equal(fo.view, of.view)
  end)

  it("has free_view nil when the allocation is not freed in the trace", function()
    local p = pack({ 0 })
    local kept = testing.row { ops = { "aten::add" } }
    local freed = testing.row { ops = { "aten::add" }, free_ts = 5, free_ops = { "aten::mul" } }
    p.classify(kept)
    p.classify(freed)
    assert.is_nil(kept.free_view)
    assert.are.equal("number", type(freed.free_view))
  end)

  it("is an error without a view, as in hmem", function()
    local p = testing.load { classify = function(row) return row.view and "x" or "y" end }
    assert.has_error(function() p.classify(testing.row {}) end)
  end)

  it("must answer a string or nil", function()
    local p = testing.load { view = function() return 3 end, classify = function(row) return row.view and "x" end }
    assert.has_error(function() p.classify(testing.row { ops = { "aten::add" } }) end)
  end)
end)
