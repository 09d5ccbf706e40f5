-- Team packs under busted (issue 17): a pack declaring aggregations loads twice, its helpers
-- are kept, testing.report builds the report done(report) and aggregations see, and its
-- aggregations are hmem's (compared with hmem run on the same allocations).
local testing = require "hmem.testing"
local hmem = require "hmem"
local cjson = require "cjson"

local pack_path = "tests/tiny/rules/polish_team_pack.lua"

describe("issue 17: testing.load of a team pack", function()
  it("loads a pack that declares aggregations twice in one run", function()
    local a = testing.load(pack_path)
    local b = testing.load(pack_path)
    assert.are.equal(1, #a.aggregations)
    assert.are.equal(1, #b.aggregations)
    assert.are.equal("by op", b.aggregations[1].name)
  end)
  it("keeps the pack's helper functions", function()
    local p = testing.load(pack_path)
    assert.is_function(p.is_big)
    assert.is_true(p.is_big(testing.row{ bytes = 2 * hmem.MiB }))
    assert.is_false(p.is_big(testing.row{ bytes = 10 }))
  end)
  it("refuses an empty category name, as hmem does", function()
    assert.has_error(function()
      testing.classify({ classify = function() return "" end }, {})
    end, "classify returned an empty string, expected a category name (a non-empty string) or nil")
  end)
end)

describe("issue 17: testing.report", function()
  local rows = {
    { file = "t.json", bytes = 2 * hmem.MiB, ts = 1, lifetime = 5, op = "aten::mm" },
    { file = "t.json", bytes = 100, ts = 2, op = "aten::add" },
    { file = "t.json", bytes = 8, ts = 2, device = "cpu", op = "aten::add" },
  }
  it("gives done a report with series per device, peaks and live rows", function()
    local p = testing.load(pack_path)
    local report = testing.report{ pack = p, rows = rows }
    p.done(report)
    assert.are.equal(report, p.last_report())
    assert.are.same({ "big", "small" }, report.categories)
    assert.are.equal(2, #report.series)
    local gpu = report.series[1]
    assert.are.equal("cuda:0", gpu.device)
    assert.are.equal(2 * hmem.MiB + 100, gpu.peak_bytes)
    assert.are.equal(2.0, gpu.peak_ts)
    assert.are.equal(100, gpu.end_bytes)
    assert.are.equal(2, #gpu.live_at_peak)
    assert.are.equal(1, #gpu:live_at(10))
    local ts, bytes = gpu:timeline("big")
    assert.are.same({ 1.0, 1.0, 2.0, 6.0 }, ts)
    assert.are.same({ 0, 2 * hmem.MiB, 2 * hmem.MiB, 0 }, bytes)
  end)
  it("groups aggregations per series: a CPU's bytes never add to a GPU's", function()
    local report = testing.report{ pack = pack_path, rows = rows }
    local agg = report.aggregations["by op"]
    assert.are.equal("series", agg.per)
    assert.are.same({ "file", "device", "op", "count", "bytes" }, agg.columns)
    assert.are.equal(3, #agg.rows)
  end)
  it("computes aggregations as hmem run does on the same allocations", function()
    -- tests/tiny/y_pair_basic.json holds these three allocations.
    local p = io.popen("./hmem run tests/tiny/rules/agg.lua tests/tiny/y_pair_basic.json --json -")
    local real = cjson.decode(p:read("a"))
    p:close()
    local f = "tests/tiny/y_pair_basic.json"
    local report = testing.report{ pack = "tests/tiny/rules/agg.lua", rows = {
      { file = f, bytes = 1024, ts = 101.25, free_ts = 110, op = "aten::empty" },
      { file = f, bytes = 512, ts = 102.5, op = "aten::empty" },
      { file = f, bytes = 256, ts = 112, op = "aten::add" },
    } }
    for name, want in pairs(real.aggregations) do
      local got = report.aggregations[name]
      assert.are.same(want.columns, got.columns, name)
      assert.are.equal(#want.rows, #got.rows, name)
      for i, row in ipairs(want.rows) do
        for _, c in ipairs(want.columns) do
          local w = row[c] ~= cjson.null and row[c] or nil
          assert.are.equal(w, got.rows[i][c], ("%s row %d %s"):format(name, i, c))
        end
      end
    end
  end)
end)
