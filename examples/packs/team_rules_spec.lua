-- How a team tests its pack without traces: build rows from tables with hmem.testing, classify,
-- assert. Run: busted --lpath='lua/?.lua;lua/?/init.lua;examples/packs/?.lua' examples/packs
local hmem = require "hmem"
local testing = require "hmem.testing"
local phase = require "hmem.rules.phase"
local team = require "team_rules"

describe("team_rules", function()
  before_each(phase.reset)

  it("puts the KV cache apart, whatever its size and phase", function()
    assert.are.equal("kv cache", testing.classify(team, {
      bytes = 40 * hmem.GiB, thread = "thread 851 (VLLM::EngineCor)",
      python = { "vllm/v1/worker/gpu_model_runner.py(2650): _allocate_kv_cache_tensors" }, op = "aten::zeros",
    }))
    assert.are.equal("kv cache", testing.classify(team, { annotations = { "init kv cache" } }))
  end)

  it("splits big allocations by phase", function()
    assert.are.equal("backward: big (> 1 GiB)", testing.classify(team, {
      bytes = 2 * hmem.GiB, thread = "thread 2300680 (pt_autograd_0)",
      ops = { "autograd::engine::evaluate_function: AddmmBackward0", "AddmmBackward0", "aten::mm" },
    }))
    assert.are.equal("forward: very big (> 5 GiB)", testing.classify(team, {
      bytes = 6 * hmem.GiB, annotations = { "ProfilerStep#3", "## forward ##" }, op = "aten::empty",
    }))
    assert.are.equal("optimizer: big (> 1 GiB)", testing.classify(team, {
      bytes = 3 * hmem.GiB, annotations = { "Optimizer.step#AdamW.step" }, op = "aten::zeros_like",
    }))
  end)

  it("keeps the rest by phase alone", function()
    assert.are.equal("forward", testing.classify(team, { bytes = hmem.GiB, python = { "nn.Module: Linear_0" } }))
    assert.are.equal("other", testing.classify(team, { bytes = 512, op = "aten::to" }))
  end)

  it("declares every category it can return, each once", function()
    local pack = testing.load("examples/packs/team_rules.lua")
    local declared = {}
    for _, c in ipairs(pack.categories) do
      declared[c.name] = true
    end
    for _, p in ipairs({ "forward", "backward", "optimizer", "other" }) do
      assert.is_true(declared[p], p)
      assert.is_true(declared[p .. ": big (> 1 GiB)"], p)
      assert.is_true(declared[p .. ": very big (> 5 GiB)"], p)
    end
    assert.is_true(declared["kv cache"])
    assert.are.equal(13, #pack.categories)
  end)

  it("loads by path as hmem loads it, with the same answers", function()
    local row = testing.row { bytes = 2 * hmem.GiB, annotations = { "## backward ##" } }
    assert.are.equal("team_rules", testing.load("examples/packs/team_rules.lua").name)
    assert.are.equal(team.classify(row), testing.classify("examples/packs/team_rules.lua", row))
  end)
end)
