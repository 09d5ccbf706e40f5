-- The op hmem gives each memory event agrees with a brute-force search of the trace
-- file itself: the innermost cpu_op/Operator slice (ph X) on the same pid and tid whose
-- closed interval [ts, ts+dur] contains the event (latest start, then shorter, then
-- later in the file). pid/tid compared as integers, so string tids (2021) match too.
local cjson = require "cjson"
local cases = {
  { "tests/data/tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz", 1 },
  { "tests/data/tracelens/perf_model/normalization_layer_test.json.gz", 1 },
  { "tests/data/tracelens/mi300_training/train_resnet18.json.gz", 1 },
  { "tests/data/kineto_tb_plugin/resnet50_num_workers_4_worker0.1623212756351.pt.trace.json.gz", 25 },
}

local function ns(ts)
  if math.type(ts) == "integer" then return ts * 1000 end
  return math.floor(ts * 1000 + 0.5)
end

local function id(v)
  return tostring(math.tointeger(tonumber(v)) or v)
end

local function dev_key(dt, di)
  dt = math.tointeger(dt)
  if dt == 0 then return "cpu" end
  local names = { [1] = "cuda", [6] = "hip", [12] = "xpu", [13] = "mps", [20] = "privateuseone" }
  return (names[dt] or ("type" .. dt)) .. ":" .. math.tointeger(di)
end

for _, case in ipairs(cases) do
  local path, every = case[1], case[2]
  local name = path:match("[^/]+$")
  local p = io.popen("gzip -dc " .. path)
  local doc = cjson.decode(p:read("a"))
  p:close()
  local ops, mem = {}, {}
  for i, e in ipairs(doc.traceEvents) do
    local thread = id(e.pid) .. "/" .. id(e.tid)
    if e.ph == "X" and (e.cat == "cpu_op" or e.cat == "Operator") then
      local list = ops[thread] or {}
      ops[thread] = list
      list[#list + 1] = { s = ns(e.ts), e = ns(e.ts) + ns(e.dur or 0), i = i, name = e.name }
    elseif (e.ph == "i" or e.ph == "I") and e.name == "[memory]" then
      local a = e.args
      mem[#mem + 1] = { t = ns(e.ts), i = i, thread = thread, dt = a["Device Type"], di = a["Device Id"] }
    end
  end
  -- hmem's order: device type, device id, ts, file order
  table.sort(mem, function(x, y)
    if x.dt ~= y.dt then return x.dt < y.dt end
    if x.di ~= y.di then return x.di < y.di end
    if x.t ~= y.t then return x.t < y.t end
    return x.i < y.i
  end)
  local got = {}
  p = io.popen("./hmem events -q " .. path .. " | lua5.4 tests/csvcol.lua op device")
  for line in p:lines() do got[#got + 1] = line end
  p:close()
  local bad, checked, enclosed, first = 0, 0, 0, nil
  for k = 1, #mem, every do
    local m, best = mem[k], nil
    for _, o in ipairs(ops[m.thread] or {}) do
      if o.s <= m.t and m.t <= o.e then
        if not best or o.s > best.s or (o.s == best.s and (o.e - o.s < best.e - best.s
            or (o.e - o.s == best.e - best.s and o.i > best.i))) then
          best = o
        end
      end
    end
    local want = (best and best.name or "") .. "\t" .. dev_key(m.dt, m.di)
    checked = checked + 1
    if best then enclosed = enclosed + 1 end
    if got[k] ~= want then
      bad = bad + 1
      first = first or ("event %d: hmem %q, trace %q"):format(k, tostring(got[k]), want)
    end
  end
  local ok = bad == 0 and #got == #mem
  print((ok and "ok - " or "not ok - ") .. ("%s: op of %d memory events (%d inside an op) matches a brute-force search")
    :format(name, checked, enclosed))
  if not ok then print("#   " .. (first or ("%d rows from hmem, %d memory events"):format(#got, #mem))) end
end
