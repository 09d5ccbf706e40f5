-- Budgets, parameters and failures from plain Lua, and hmem.diff's comparison on hand-made
-- reports (issue 15). Figures are written by hand here, never taken from hmem.
local hmem = require "hmem"
local testing = require "hmem.testing"
local diff = require "hmem.diff"
local cjson = require "cjson"

describe("hmem.budget outside hmem run", function()
  before_each(function() testing.budgets() end)

  it("records each limit with max in bytes, sizes as --fail-above reads them", function()
    hmem.budget{device = "cuda:*", category = "activation", max = 12 * hmem.GiB}
    hmem.budget{max = "1.5 kB"}
    hmem.budget{max = "2KiB"}
    local b = testing.budgets()
    assert.are.same({ device = "cuda:*", category = "activation", max = 12884901888 }, b[1])
    assert.are.equal(1500, b[2].max)
    assert.are.equal(2048, b[3].max)
    assert.are.same({}, testing.budgets())
  end)

  it("refuses what hmem refuses", function()
    assert.has_error(function() hmem.budget{devise = "cuda:0", max = 1} end,
      "hmem.budget: unknown key 'devise' (keys: device, category, max)")
    assert.has_error(function() hmem.budget{max = "lots"} end)
    assert.has_error(function() hmem.budget{max = -1} end)
    assert.has_error(function() hmem.budget{category = 3, max = 1} end)
  end)
end)

describe("testing.args and testing.done", function()
  after_each(function() testing.args{} end)

  it("gives a pack its parameters as strings and reports hmem.fail", function()
    testing.args{fail = "too big", limit = 1000}
    assert.are.equal("1000", hmem.args.limit)
    local p = testing.load("tests/tiny/rules/decide_budget_pack.lua")
    assert.are.equal(1000, testing.budgets()[1].max)
    assert.are.equal("the rule file says no: too big", testing.done(p, {}))
    testing.args{}
    assert.is_nil(testing.done(p, {}))
  end)
end)

-- A --json report with one series, as hmem writes it (only the fields diff reads).
local function report(peak, cats, live, device)
  local c = {}
  for _, x in ipairs(cats) do
    c[#c + 1] = { name = x[1], peak_bytes = x[2], bytes_at_peak = x[3], end_bytes = x[4] }
  end
  return cjson.encode{ version = "0.1.0", rules = "r.lua", series = {
    { path = "t.json", rank = cjson.null, device = device or "cuda:0", peak_bytes = peak, end_bytes = 0,
      categories = c, live_at_peak = live } } }
end

describe("hmem.diff", function()
  local before = report(1000, { { "(before trace)", 0, 0, 0 }, { "weights", 600, 600, 0 }, { "act", 400, 400, 0 } },
    { { bytes = 600, op = "aten::empty" }, { bytes = 400, op = "aten::mm" } })
  local after = report(1500, { { "(before trace)", 0, 0, 0 }, { "weights", 600, 600, 0 }, { "act", 900, 900, 0 } },
    { { bytes = 600, op = "aten::empty" }, { bytes = 500, op = "aten::mm" } })

  it("gives each change in bytes and percent, largest first", function()
    local out = diff.run(before, after, { formats = { json = true } })
    local d = cjson.decode(out.json)
    local rows = d.pairs[1].rows
    assert.are.same({ "peak", 1000, 1500, 500, 50 },
      { rows[1].what, rows[1].before, rows[1].after, rows[1].change, rows[1].change_pct })
    assert.are.same({ "category_peak", "act", 500 }, { rows[3].what, rows[3].name, rows[3].change })
    -- the --json lists 1100 of the 1500 bytes live at the peak: the rest is one group
    local missing
    for _, r in ipairs(rows) do
      if r.name == "(not listed in the --json)" then missing = r end
    end
    assert.are.same({ 0, 400 }, { missing.before, missing.after })
  end)

  it("lists series without a partner and checks --fail-above-delta", function()
    local other = report(10, { { "(before trace)", 0, 0, 0 } }, {}, "cuda:1")
    local _, breaks = diff.run(before, other, { formats = {} })
    assert.are.same({}, breaks)
    local out = diff.run(before, other, { formats = { json = true } })
    local d = cjson.decode(out.json)
    assert.are.equal(0, #d.pairs)
    assert.are.same({ "before", "cuda:0" }, { d.unmatched[1].side, d.unmatched[1].device })
    local _, b2 = diff.run(before, after, { formats = {}, deltas = {
      { pct = 50, from = "50%" }, { pct = 49.9, from = "49.9%" }, { key = "act", bytes = 499, from = "act=499" } } })
    assert.are.equal(2, #b2)
    assert.truthy(b2[1]:find("limit +49.9%", 1, true))
    assert.truthy(b2[2]:find("peak of act", 1, true))
  end)

  it("refuses a side that is not a report", function()
    assert.has_error(function() diff.run("[1]", after, {}) end,
      "before: not an hmem --json report (no \"series\" list)")
  end)
end)
