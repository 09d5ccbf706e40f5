-- The context hmem gives each memory event agrees with a brute-force search of the trace
-- file itself: op is the innermost cpu_op/Operator slice (ph X) on the same pid and tid
-- whose closed interval [ts, ts+dur] contains the event (latest start, then shorter, then
-- later in the file); annotations are the user_annotation slices there, outermost first;
-- step is the N of the ProfilerStep#N of the same pid that started last at or before the
-- event, if it still runs. pid/tid compared as integers, so string tids (2021) match too.
local cjson = require "cjson"
local cases = {
  { "tests/data/tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz", 1 },
  { "tests/data/tracelens/perf_model/normalization_layer_test.json.gz", 1 },
  { "tests/data/tracelens/mi300_training/train_resnet18.json.gz", 1 },
  { "tests/data/kineto_tb_plugin/resnet50_num_workers_4_worker0.1623212756351.pt.trace.json.gz", 25 },
  { "tests/data/hta/df_index_resolver_rank1_v100.json.gz", 40 },
}

-- Exact integer ns (a whole number of us may decode as a float of 1.6e15: multiplying
-- that float by 1000 would round).
local function ns(ts)
  local whole = math.tointeger(ts)
  if whole then return whole * 1000 end
  return math.floor(ts * 1000 + 0.5)
end

-- The tie rule (issue 15): an event at the time where the innermost op begins prefers the
-- innermost of the ops that started before it, when that one ends at that very time.
local function tie(list, t, best)
  if not best or best.s ~= t then return best end
  local alt
  for _, o in ipairs(list or {}) do
    if o.s < t and t <= o.e and (not alt or o.s > alt.s or (o.s == alt.s and (o.e - o.s < alt.e - alt.s
        or (o.e - o.s == alt.e - alt.s and o.i > alt.i)))) then
      alt = o
    end
  end
  return alt and alt.e == t and alt or best
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

print("1.." .. 2 * #cases) -- the plan: two checks per trace (tests/suite counts them)
for _, case in ipairs(cases) do
  local path, every = case[1], case[2]
  local name = path:match("[^/]+$")
  local p = io.popen("gzip -dc " .. path)
  local doc = cjson.decode(p:read("a"))
  p:close()
  local ops, mem, annots, steps = {}, {}, {}, {}
  for i, e in ipairs(doc.traceEvents) do
    local thread = id(e.pid) .. "/" .. id(e.tid)
    if e.ph == "X" and (e.cat == "cpu_op" or e.cat == "Operator") then
      local list = ops[thread] or {}
      ops[thread] = list
      list[#list + 1] = { s = ns(e.ts), e = ns(e.ts) + ns(e.dur or 0), i = i, name = e.name }
    end
    if e.ph == "X" and e.cat == "user_annotation" then
      local list = annots[thread] or {}
      annots[thread] = list
      list[#list + 1] = { s = ns(e.ts), e = ns(e.ts) + ns(e.dur or 0), i = i, name = e.name }
    end
    if e.ph == "X" and type(e.name) == "string" and e.name:match("^ProfilerStep#%d+$") then
      steps[#steps + 1] = { pid = id(e.pid), s = ns(e.ts), e = ns(e.ts) + ns(e.dur or 0),
                            n = math.tointeger(tonumber(e.name:match("%d+$"))) }
    elseif (e.ph == "i" or e.ph == "I") and e.name == "[memory]" then
      local a = e.args
      mem[#mem + 1] = { t = ns(e.ts), i = i, thread = thread, dt = a["Device Type"], di = a["Device Id"],
                        pid = id(e.pid), bytes = a.Bytes }
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
    best = tie(ops[m.thread], m.t, best)
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

  -- annotations and step of every allocation, as a rule file sees them
  local ctx = {}
  p = io.popen("./hmem run tests/tiny/rules/dump_context.lua " .. path .. " --json /dev/null")
  for line in p:lines() do ctx[#ctx + 1] = line end
  p:close()
  table.sort(steps, function(x, y) return x.s < y.s end)
  bad, checked, first = 0, 0, nil
  local k, with_step, with_annot = 0, 0, 0
  for _, m in ipairs(mem) do
    if m.bytes > 0 then
      k = k + 1
      if k % every == 0 or every == 1 then
        local best
        for _, o in ipairs(ops[m.thread] or {}) do
          if o.s <= m.t and m.t <= o.e and (not best or o.s > best.s or (o.s == best.s and (o.e - o.s < best.e - best.s
              or (o.e - o.s == best.e - best.s and o.i > best.i)))) then
            best = o
          end
        end
        best = tie(ops[m.thread], m.t, best)
        local enc = {}
        for _, a in ipairs(annots[m.thread] or {}) do
          if a.s <= m.t and m.t <= a.e then enc[#enc + 1] = a end
        end
        table.sort(enc, function(x, y)
          if x.s ~= y.s then return x.s < y.s end
          if x.e - x.s ~= y.e - y.s then return x.e - x.s > y.e - y.s end
          return x.i < y.i
        end)
        local names = {}
        for j, a in ipairs(enc) do names[j] = a.name end
        local step = ""
        local last
        for _, st in ipairs(steps) do
          if st.pid == m.pid and st.s <= m.t then last = st end
        end
        if last and last.e >= m.t then step = tostring(last.n) end
        if step ~= "" then with_step = with_step + 1 end
        if #names > 0 then with_annot = with_annot + 1 end
        local want = table.concat({ dev_key(m.dt, m.di), best and best.name or "", table.concat(names, " > "), step }, "\t")
        checked = checked + 1
        if ctx[k] ~= want then
          bad = bad + 1
          first = first or ("allocation %d: hmem %q, trace %q"):format(k, tostring(ctx[k]), want)
        end
      end
    end
  end
  ok = bad == 0 and #ctx == k
  print((ok and "ok - " or "not ok - ") .. ("%s: op, annotations and step of %d allocations (%d in a step, %d annotated) match the trace")
    :format(name, checked, with_step, with_annot))
  if not ok then print("#   " .. (first or ("%d rows from hmem, %d allocations"):format(#ctx, k))) end
end
