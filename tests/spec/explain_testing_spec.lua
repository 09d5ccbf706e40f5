-- Issue 14: testing.row derives modules, frame and step_ts from a stack as hmem does (the
-- same stack as tests/tiny/explain/y_who.json, whose hmem rows tests/cli/explain_fields.t pins).
local testing = require "hmem.testing"

describe("testing.row who-allocated-it fields (issue 14)", function()
  local row = testing.row {
    bytes = 1024, ts = 110, step = 0,
    stack = {
      { name = "ProfilerStep#0", cat = "user_annotation", ts = 100, dur = 100 },
      { name = "train.py(12): <module>", cat = "python_function" },
      { name = "nn.Module: Model_0", cat = "python_function" },
      { name = "torch/nn/modules/module.py(1743): _call_impl", cat = "python_function" },
      { name = "models/attn.py(40): forward", cat = "python_function" },
      { name = "nn.Module: Attention_1", cat = "python_function" },
      { name = "/usr/lib/python3/dist-packages/torch/functional.py(9): f", cat = "python_function" },
      { name = "<built-in method bmm of type object at 0x1>", cat = "python_function" },
      { name = "aten::bmm", cat = "cpu_op" },
    },
  }

  it("lists the modules outermost first, module the innermost", function()
    assert.are.same({ "Model_0", "Attention_1" }, row.modules)
    assert.are.equal("Attention_1", row.module)
  end)

  it("takes the innermost user frame, past torch/ paths, built-ins and modules", function()
    assert.are.equal("models/attn.py(40): forward", row.frame)
  end)

  it("gives the start of the step slice as step_ts (a float, µs)", function()
    assert.are.equal(100.0, row.step_ts)
    assert.are.equal("float", math.type(row.step_ts))
  end)

  it("gives nil frame, step_ts and empty modules without a stack", function()
    local bare = testing.row { bytes = 1 }
    assert.is_nil(bare.frame)
    assert.is_nil(bare.step_ts)
    assert.are.same({}, bare.modules)
  end)
end)
