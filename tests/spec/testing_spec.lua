-- hmem.testing: rows built from tables behave like hmem's rows; packs load from module
-- tables, module names and paths (globals or a returned table), in a strict sandbox.
local hmem = require "hmem"
local testing = require "hmem.testing"

-- Writes src to a fresh file name ending in ".lua" in the temporary directory; returns the
-- path and the module name a sibling would require it by.
local temp_files = {}
local function temp_lua(src)
  local base = os.tmpname()
  os.remove(base)
  local path = base .. ".lua"
  local f = assert(io.open(path, "w"))
  f:write(src)
  f:close()
  temp_files[#temp_files + 1] = path
  return path, base:match("([^/]+)$")
end

teardown(function()
  for _, p in ipairs(temp_files) do
    os.remove(p)
  end
end)

describe("testing.row defaults", function()
  local row = testing.row { bytes = 1024 }

  it("is an allocation on cuda:0 at ts 0", function()
    assert.are.equal("alloc", row.kind)
    assert.is_false(row.before_trace)
    assert.are.equal("cuda:0", row.device)
    assert.are.equal(1, row.device_type)
    assert.are.equal(0, row.device_id)
    assert.are.equal(0, row.ts)
    assert.are.equal(0, row.ts_ns)
    assert.are.equal(1024, row.bytes)
  end)

  it("has empty context lists", function()
    for _, f in ipairs({ "ops", "annotations", "python", "free_ops", "stack" }) do
      assert.are.same({}, row[f], f)
    end
  end)

  it("reads every field of the contract, nil where not given", function()
    for _, f in ipairs({ "rank", "file", "pid", "tid", "ev_idx", "total_allocated", "total_reserved",
      "free_ts", "lifetime", "op", "step", "module", "thread", "free_op", "free_step", "category" }) do
      assert.is_nil(row[f], f)
    end
    for _, f in ipairs(testing.fields) do
      assert.has_no.errors(function() return row[f] end, f)
    end
  end)

  it("has an address, unless told it has none", function()
    assert.are.equal("number", type(row.addr))
    assert.is_nil(testing.row({ addr = testing.NIL }).addr)
    assert.are.equal(4096, testing.row({ addr = 4096 }).addr)
  end)

  it("defaults bytes to 512", function()
    assert.are.equal(512, testing.row({}).bytes)
  end)

  it("prints like hmem's row", function()
    assert.are.equal("hmem.row(alloc 1024 bytes on cuda:0 at ts 0.0)", tostring(row))
    assert.are.equal("hmem.row(free 8 bytes on cpu at ts 1419247333708.044)",
      tostring(testing.row { kind = "free", bytes = 8, device = "cpu", ts = 1419247333708.044 }))
  end)
end)

describe("testing.row derived fields", function()
  it("derives op from the last of ops", function()
    local row = testing.row { ops = { "aten::linear", "aten::addmm" } }
    assert.are.equal("aten::addmm", row.op)
  end)

  it("derives ops from op", function()
    assert.are.same({ "aten::empty" }, testing.row({ op = "aten::empty" }).ops)
  end)

  it("rejects an op that is not the innermost of ops", function()
    assert.has_error(function()
      testing.row { op = "aten::linear", ops = { "aten::linear", "aten::addmm" } }
    end, 'testing.row: op "aten::linear" must be the last of ops (the innermost)')
  end)

  it("derives free_op and free_ops from each other", function()
    assert.are.equal("aten::add", testing.row({ free_ts = 1, free_ops = { "aten::sum", "aten::add" } }).free_op)
    assert.are.same({ "aten::mul" }, testing.row({ free_ts = 1, free_op = "aten::mul" }).free_ops)
  end)

  it("takes free_step as given, or from a ProfilerStep in free_ops", function()
    assert.are.equal(7, testing.row({ ts = 1, free_ts = 2, step = 6, free_step = 7 }).free_step)
    assert.are.equal(5, testing.row({ ts = 1, free_ts = 2, free_ops = { "ProfilerStep#5", "aten::add" } }).free_step)
    assert.is_nil(testing.row({ ts = 1, free_ts = 2, step = 6 }).free_step)
  end)

  it("rejects the context of a free for an allocation never freed", function()
    assert.has_error(function() testing.row { free_step = 3 } end,
      "testing.row: free_step and free_op(s) describe a free: give free_ts or lifetime too")
    assert.has_error(function() testing.row { free_op = "aten::add" } end)
  end)

  it("derives ts_ns from ts and ts from ts_ns", function()
    local a = testing.row { ts = 1419247334163.201 }
    assert.are.equal(1419247334163201, a.ts_ns)
    assert.are.equal("integer", math.type(a.ts_ns))
    local b = testing.row { ts_ns = 2500 }
    assert.are.equal(2.5, b.ts)
  end)

  it("rejects ts and ts_ns that disagree", function()
    assert.has_error(function() testing.row { ts = 1, ts_ns = 5000 } end)
  end)

  it("derives lifetime from free_ts and free_ts from lifetime", function()
    assert.are.equal(15, testing.row({ ts = 10, free_ts = 25 }).lifetime)
    assert.are.equal(25, testing.row({ ts = 10, lifetime = 15 }).free_ts)
    assert.is_nil(testing.row({ ts = 10 }).lifetime)
  end)

  it("rejects an allocation freed before it was made", function()
    assert.has_error(function() testing.row { ts = 10, free_ts = 5 } end)
  end)

  it("gives a free its own time as free_ts, its own ops and step as free_ops and free_step, and no lifetime", function()
    local row = testing.row { kind = "free", ts = 7, ops = { "aten::add" }, step = 4 }
    assert.are.equal(7, row.free_ts)
    assert.is_nil(row.lifetime)
    assert.are.equal("aten::add", row.free_op)
    assert.are.same({ "aten::add" }, row.free_ops)
    assert.are.equal(4, row.free_step)
  end)

  it("has exactly hmem's row fields (src/fields.c), in its order", function()
    local f = assert(io.open("src/fields.c"))
    local src = f:read("a")
    f:close()
    local names = {}
    for name in src:gmatch('%[HM_F_[%w_]+%] = "([%w_]+)"') do
      names[#names + 1] = name
    end
    assert.are.same(names, testing.fields)
  end)

  it("lists the fields in hmem's order", function()
    assert.are.same({ "ts", "ts_ns", "bytes", "kind", "before_trace", "addr", "device", "device_type", "device_id",
      "rank", "file", "pid", "tid", "ev_idx", "total_allocated", "total_reserved", "free_ts", "lifetime", "op",
      "ops", "annotations", "step", "module", "python", "thread", "free_op", "free_ops", "free_step", "stack",
      "category", "modules", "frame", "step_ts",
      "context", "free_context", "ops_open_at_free", "same_step", "has_addr", "series_id",
      "frames", "block_bytes", "stream", "compile_context", "user_metadata", "segment", "free_frames" }, testing.fields)
  end)

  it("makes a before-trace row a free", function()
    local row = testing.row { before_trace = true }
    assert.are.equal("free", row.kind)
    assert.has_error(function() testing.row { before_trace = true, kind = "alloc" } end,
      'testing.row: before_trace rows are frees (kind "free")')
  end)

  it("derives device_type and device_id from the device name", function()
    local hip = testing.row { device = "hip:1" }
    assert.are.equal(6, hip.device_type)
    assert.are.equal(1, hip.device_id)
    local cpu = testing.row { device = "cpu" }
    assert.are.equal(0, cpu.device_type)
    assert.are.equal(-1, cpu.device_id)
    assert.has_error(function() testing.row { device = "gpu0" } end)
  end)

  it("derives the device name from device_type and device_id, as hmem names them", function()
    assert.are.equal("cpu", testing.row({ device_type = 0 }).device)
    assert.are.equal("cuda:3", testing.row({ device_type = 1, device_id = 3 }).device)
    assert.are.equal("xpu:0", testing.row({ device_type = 12 }).device)
    assert.are.equal("type9:2", testing.row({ device_type = 9, device_id = 2 }).device)
  end)

  it("derives step from the innermost ProfilerStep in annotations or ops", function()
    assert.are.equal(6, testing.row({ annotations = { "ProfilerStep#6", "## forward ##" } }).step)
    assert.are.equal(5, testing.row({ ops = { "ProfilerStep#5", "aten::add" } }).step)
    assert.is_nil(testing.row({ annotations = { "## forward ##" } }).step)
  end)

  it("derives module from the innermost nn.Module frame", function()
    local row = testing.row { python = { "train.py(10): main", "nn.Module: BertModel_0", "nn.Module: Linear_3" } }
    assert.are.equal("Linear_3", row.module)
  end)

  it("derives ops, annotations and python from stack", function()
    local row = testing.row {
      stack = {
        { name = "ProfilerStep#2", cat = "user_annotation" },
        { name = "nn.Module: Linear_0", cat = "python_function" },
        { name = "aten::linear", cat = "cpu_op" },
        { name = "aten::addmm", cat = "cpu_op" },
        { name = "cudaMalloc", cat = "cuda_runtime" },
      },
    }
    assert.are.same({ "aten::linear", "aten::addmm" }, row.ops)
    assert.are.equal("aten::addmm", row.op)
    assert.are.same({ "ProfilerStep#2" }, row.annotations)
    assert.are.equal(2, row.step)
    assert.are.equal("Linear_0", row.module)
    assert.are.equal(5, #row.stack)
    assert.are.same({ name = "cudaMalloc", cat = "cuda_runtime" }, row.stack[5])
  end)

  it("takes 2021 Operator slices as ops", function()
    local row = testing.row { stack = { { name = "ProfilerStep#5", cat = "Operator" }, { name = "aten::add", cat = "Operator" } } }
    assert.are.same({ "ProfilerStep#5", "aten::add" }, row.ops)
    assert.are.equal(5, row.step)
  end)

  it("gives a fresh copy of a list on every read", function()
    local row = testing.row { ops = { "aten::linear", "aten::addmm" } }
    local ops = row.ops
    table.remove(ops)
    assert.are.same({ "aten::linear", "aten::addmm" }, row.ops)
  end)
end)

describe("testing.row errors", function()
  local row = testing.row { bytes = 1 }

  it("raises on reading a field that does not exist", function()
    local ok, err = pcall(function() return row.byts end)
    assert.is_false(ok)
    assert.matches("row has no field 'byts' (fields: ts, ts_ns, bytes,", err, 1, true)
  end)

  it("names the caller's line", function()
    local ok, err = pcall(function() return row.nope end)
    assert.is_false(ok)
    assert.matches("testing_spec.lua:%d+: row has no field 'nope'", err)
  end)

  it("raises on writing any field", function()
    assert.has_error(function() row.bytes = 5 end, "rows are read-only (tried to set 'bytes')")
    assert.has_error(function() row.category = "x" end, "rows are read-only (tried to set 'category')")
    assert.are.equal(1, row.bytes)
  end)

  it("raises on an unknown field in the table it is built from", function()
    assert.has_error(function() testing.row { byts = 1 } end, "testing.row: unknown field 'byts'")
  end)

  it("rejects sizes that are not positive integers", function()
    assert.has_error(function() testing.row { bytes = 0 } end)
    assert.has_error(function() testing.row { bytes = -4 } end)
    assert.has_error(function() testing.row { bytes = 1.5 } end)
    assert.are.equal(3 * hmem.GiB, testing.row({ bytes = 1.5 * 2 * hmem.GiB }).bytes)
  end)

  it("rejects a kind other than alloc or free", function()
    assert.has_error(function() testing.row { kind = "zero" } end)
  end)

  it("rejects fields of the wrong type", function()
    assert.has_error(function() testing.row { ops = "aten::add" } end, "testing.row: ops must be a table, got string")
    assert.has_error(function() testing.row { ts = "5" } end)
  end)

  it("is recognised as a row, a plain table is not", function()
    assert.is_true(testing.is_row(row))
    assert.is_false(testing.is_row({ bytes = 1 }))
    assert.are.equal(row, testing.row(row))
  end)
end)

describe("testing.load", function()
  it("loads a rule file with globals, named after the file, described by its header", function()
    local pack = testing.load("examples/size_buckets.lua")
    assert.are.equal("size_buckets", pack.name)
    assert.matches("^Size buckets: where do the very big allocations come from%?", pack.description)
    assert.are.equal("function", type(pack.classify))
    assert.are.same({}, pack.categories)
    assert.are.equal("big (> 1 GiB)", pack.classify(testing.row { bytes = 2 * hmem.GiB }))
  end)

  it("calls a global init once and keeps done", function()
    local path = temp_lua [[
      local n = 0
      function init() n = n + 1 end
      function classify(row) return "init " .. n end
      function done() end
    ]]
    local pack = testing.load(path)
    assert.are.equal("init 1", pack.classify(testing.row {}))
    assert.are.equal("function", type(pack.done))
    assert.are.equal("function", type(pack.init))
  end)

  it("loads a rule file that returns a pack table, and normalises its categories", function()
    local path = temp_lua [[
      return {
        name = "mine", description = "by kind",
        categories = { "alloc", { name = "free", color = "#00ff00" } },
        classify = function(row) return row.kind end,
      }
    ]]
    local pack = testing.load(path)
    assert.are.equal("mine", pack.name)
    assert.are.equal("by kind", pack.description)
    assert.are.same({ { name = "alloc" }, { name = "free", color = "#00ff00" } }, pack.categories)
    assert.is_nil(pack.done)
    assert.are.equal("free", testing.classify(path, { kind = "free" }))
  end)

  it("runs rule files in a strict sandbox", function()
    local path = temp_lua [[
      function classify(row) return undefined_thing or "x" end
    ]]
    local ok, err = pcall(testing.classify, path, {})
    assert.is_false(ok)
    assert.matches("undefined global 'undefined_thing'", err, 1, true)
    for _, lib in ipairs({ "io", "debug", "dofile", "loadfile", "package", "cjson" }) do
      local p = temp_lua(("function classify(row) return type(%s) end"):format(lib))
      assert.has_error(function() testing.classify(p, {}) end, nil, lib)
    end
    local p = temp_lua [[
      function classify(row)
        return ("%s %s %s %d %s %s"):format(type(string), type(table), type(utf8), math.max(1, 2),
          type(os.time), type(os.execute))
      end
    ]]
    assert.are.equal("table table table 2 function nil", testing.classify(p, {}))
  end)

  it("gives load for text only, in the rule file's environment, and cjson through require", function()
    local p = temp_lua [[
      local cjson = require "cjson"
      x = 41
      function classify(row)
        local f = load("return x + 1")
        return cjson.encode({ f(), (load(string.dump(function() end))) == nil })
      end
    ]]
    assert.are.equal("[42,true]", testing.classify(p, {}))
  end)

  it("calls the init of a returned pack table too", function()
    local p = temp_lua [[
      local ready = "no"
      return { init = function() ready = "yes" end, classify = function() return ready end }
    ]]
    assert.are.equal("yes", testing.classify(p, {}))
  end)

  it("refuses a rule file without classify", function()
    local path = temp_lua "function classyfy(row) return 'x' end"
    assert.has_error(function() testing.load(path) end, path .. ": no classify function")
  end)

  it("refuses malformed categories", function()
    local dup = temp_lua "return { categories = {'a', 'a'}, classify = function() return 'a' end }"
    assert.has_error(function() testing.load(dup) end, dup .. ': category "a" is listed twice')
    local col = temp_lua "return { categories = {{name = 'a', color = 'red'}}, classify = function() return 'a' end }"
    assert.has_error(function() testing.load(col) end, col .. ': category "a": color must be "#rrggbb"')
  end)

  it("checks cache_by names single-valued row fields", function()
    assert.are.same({ "op", "bytes" }, testing.load({ cache_by = { "op", "bytes" }, classify = function() end }).cache_by)
    assert.has_error(function() testing.load({ cache_by = { "opp" }, classify = function() end }) end,
      "pack: cache_by: 'opp' is not a single-valued row field")
    assert.has_error(function() testing.load({ cache_by = { "ops" }, classify = function() end }) end,
      "pack: cache_by: 'ops' is not a single-valued row field")
  end)

  it("loads a module table and a module name", function()
    local size = require "hmem.rules.size"
    local by_table = testing.load(size)
    local by_name = testing.load("hmem.rules.size")
    assert.are.equal("size", by_table.name)
    assert.are.same(size.cache_by, by_name.cache_by)
    assert.are.equal("normal", by_name.classify(testing.row { bytes = 2 * hmem.MiB }))
    assert.are.equal("very big (> 5 GiB)", by_table.categories[1].name)
  end)

  it("lets a rule file compose shipped packs and a module next to it with require", function()
    local _, helper_name = temp_lua [[
      return { prefix = function(s) return "team: " .. s end }
    ]]
    local path = temp_lua(([[
      local size = require "hmem.rules.size"
      local helper = require %q
      assert(require %q == helper, "a module is loaded once")
      return { name = "composed", classify = function(row) return helper.prefix(size.classify(row)) end }
    ]]):format(helper_name, helper_name))
    assert.are.equal("team: small (< 1 MiB)", testing.classify(path, { bytes = 100 }))
    assert.are.equal("team: big (> 1 GiB)", testing.classify(path, { bytes = 2 * hmem.GiB }))
    package.loaded[helper_name] = nil
  end)
end)

describe("testing.classify", function()
  it("classifies a table and a row", function()
    local row = testing.row { bytes = 6 * hmem.GiB }
    assert.are.equal("very big (> 5 GiB)", testing.classify("hmem.rules.size", row))
    assert.are.equal("normal", testing.classify("hmem.rules.size", { bytes = 2 * hmem.MiB }))
  end)

  it("returns nil for unclassified", function()
    assert.is_nil(testing.classify({ classify = function() return nil end }, {}))
  end)

  it("raises when classify returns something other than a string or nil", function()
    assert.has_error(function()
      testing.classify({ classify = function() return 42 end }, {})
    end, "classify returned a number, expected a category name (a string) or nil")
  end)

  it("raises when a pack reads a field the row does not have", function()
    local ok, err = pcall(testing.classify, { classify = function(row) return row.catgory end }, {})
    assert.is_false(ok)
    assert.matches("row has no field 'catgory'", err, 1, true)
  end)
end)

-- issue 11: hmem.testing is faithful to the row and the sandbox hmem gives.
describe("testing is faithful to hmem (issue 11)", function()
  it("makes rows of hmem's type: userdata, whose metatable reads hmem.row", function()
    local row = testing.row { bytes = 1 }
    assert.are.equal("userdata", type(row))
    assert.are.equal("hmem.row", getmetatable(row))
    assert.is_true(testing.is_row(row))
  end)

  it("makes a new row each time: never == to another, each its own table key", function()
    local a, b = testing.row { bytes = 1 }, testing.row { bytes = 1 }
    local seen = { [a] = true }
    assert.is_false(a == b)
    assert.is_nil(seen[b])
    assert.is_true(seen[a])
  end)

  it("gives ts, free_ts, lifetime and the stack's times as floats, as hmem does", function()
    local row = testing.row { ts = 5, lifetime = 2, stack = { { name = "a", cat = "cpu_op", ts = 4, dur = 3 } } }
    assert.are.equal("float", math.type(row.ts))
    assert.are.equal("float", math.type(row.free_ts))
    assert.are.equal("float", math.type(row.lifetime))
    assert.are.equal("float", math.type(row.stack[1].ts))
    assert.are.equal("float", math.type(row.stack[1].dur))
    assert.are.equal("float", math.type(testing.row({}).ts))
    assert.are.equal(7.0, row.free_ts)
  end)

  it("leaves the caller's stack table as it was", function()
    local stack = { { name = "a", cat = "cpu_op", ts = 4 } }
    testing.row { stack = stack }
    assert.are.equal("integer", math.type(stack[1].ts))
  end)

  it("lets a rule file require only what hmem gives: no standard library, nothing else on package.path", function()
    for _, name in ipairs({ "io", "os", "debug", "string", "busted", "hmem.rules.nope", "hmem.nope" }) do
      local p = temp_lua(("local m = require %q\nfunction classify() return 'x' end"):format(name))
      local ok, err = pcall(testing.load, p)
      assert.is_false(ok, name)
      assert.matches("module '" .. name .. "' not found (looked in the rule file's directory, -I directories, HMEM_PATH "
        .. "and the modules built into hmem)", err, 1, true)
    end
    local p = temp_lua [[
      local a, b, c = require "hmem", require "hmem.rules.size", require "hmem.testing"
      local j = require "cjson.safe"
      function classify() return type(a.human) .. type(b.classify) .. type(c.row) .. type(j.encode) end
    ]]
    assert.are.equal("functionfunctionfunctionfunction", testing.classify(p, {}))
  end)

  it("gives the built-in hmem.* even when a file of that name sits next to the rule file, as hmem does (issue 12)", function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute("mkdir -p '" .. dir .. "/hmem/rules'"))
    local f = assert(io.open(dir .. "/hmem/rules/lifetime.lua", "w"))
    f:write("return {classify = 'not the built-in'}\n")
    f:close()
    f = assert(io.open(dir .. "/rules.lua", "w"))
    f:write("local p = require 'hmem.rules.lifetime'\nfunction classify() return type(p.classify) end\n")
    f:close()
    local saved = package.loaded["hmem.rules.lifetime"]
    package.loaded["hmem.rules.lifetime"] = nil
    local ok, got = pcall(testing.classify, dir .. "/rules.lua", {})
    package.loaded["hmem.rules.lifetime"] = saved
    os.execute("rm -rf '" .. dir .. "'")
    assert.is_true(ok, got)
    assert.are.equal("function", got)
  end)

  it("honours a pack's cache_by as hmem does: classify once per distinct combination", function()
    local calls = 0
    local pack = testing.load {
      cache_by = { "bytes" },
      classify = function(row) calls = calls + 1; return row.op end, -- reads a field cache_by leaves out
    }
    assert.are.equal("aten::a", pack.classify(testing.row { bytes = 8, op = "aten::a" }))
    assert.are.equal("aten::a", pack.classify(testing.row { bytes = 8, op = "aten::b" }))
    assert.are.equal("aten::c", pack.classify(testing.row { bytes = 9, op = "aten::c" }))
    assert.are.equal(2, calls)
  end)

  it("remembers nil (unclassified) too; ts 1 and 1.0 are one float, one key", function()
    local calls = 0
    local pack = testing.load { cache_by = { "op" }, classify = function() calls = calls + 1 end }
    assert.is_nil(pack.classify(testing.row {}))
    assert.is_nil(pack.classify(testing.row {}))
    assert.are.equal(1, calls)
    local seen = {}
    local keyed = testing.load { cache_by = { "ts" }, classify = function(row) seen[#seen + 1] = row.ts; return "x" end }
    keyed.classify(testing.row { ts = 1 })
    keyed.classify(testing.row { ts = 1.0 })
    assert.are.equal(1, #seen) -- both are the float 1.0, as in hmem
  end)

  it("honours hmem.cache_by in a rule file with global hooks", function()
    local p = temp_lua [[
      local hmem = require "hmem"
      hmem.cache_by { "bytes" }
      local n = 0
      function classify(row) n = n + 1; return "call " .. n end
    ]]
    local pack = testing.load(p)
    assert.are.same({ "bytes" }, pack.cache_by)
    assert.are.equal("call 1", pack.classify(testing.row { bytes = 1 }))
    assert.are.equal("call 1", pack.classify(testing.row { bytes = 1, op = "other" }))
    assert.are.equal("call 2", pack.classify(testing.row { bytes = 2 }))
    local plain = testing.load(temp_lua "function classify() return 'x' end")
    assert.is_nil(plain.cache_by)
  end)
end)
