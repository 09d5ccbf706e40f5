-- --perfetto and --annotate (issue 4, README "Outputs"): both outputs parse; every counter
-- series reproduces the --timeline CSV row by row (categories, allocated, reserved); and
-- --annotate keeps every original event intact: the annotated trace is the original, byte
-- for byte, with only counter events inserted at the start of the events array.
local cjson = require "cjson"
local dir = os.getenv("TMPDIR") or "/tmp"
local tmp = os.tmpname()
os.remove(tmp)
assert(os.execute("mkdir -p " .. tmp))

local function check(ok, name, detail)
  print((ok and "ok - " or "not ok - ") .. name)
  if not ok and detail then print("#   " .. tostring(detail)) end
  return ok
end

local function slurp(cmd)
  local p = assert(io.popen(cmd))
  local s = p:read("a")
  p:close()
  return s
end

local timeline = dofile("tests/timeline_csv.lua").read

-- The timestamp as the output wrote it, to compare with the CSV text exactly.
local function ts_text(raw, ev_start)
  return raw:match('"ts":([%d%.%-]+)', ev_start)
end

-- Counter events of one output, by name, in file order, with the raw ts text.
local function counters(text)
  local by = {}
  for start, ev in text:gmatch('()(\n{"ph":"C","cat":"hmem",[^\n]-}}),?') do
    local e = cjson.decode(ev:sub(2))
    e.ts_text = ts_text(ev, 1)
    by[e.name] = by[e.name] or {}
    table.insert(by[e.name], e)
  end
  return by
end

-- Every CSV row of a device has its counter event with the same ts and values; the state
-- before the first event may come first (at the trace's first timestamp).
local function same_series(rows, cat_ev, alloc_ev, res_ev, used)
  local off = #cat_ev - #rows
  if off ~= 0 and off ~= 1 then return false, ("%d counter events for %d rows"):format(#cat_ev, #rows) end
  if #alloc_ev ~= #cat_ev then return false, "allocated and category counters differ in count" end
  local ri = 1
  for i, r in ipairs(rows) do
    local c, a = cat_ev[i + off], alloc_ev[i + off]
    if c.ts_text ~= r.ts or a.ts_text ~= r.ts then return false, ("row %d: ts %s, counter %s"):format(i, r.ts, c.ts_text) end
    if a.args.bytes ~= r.allocated then return false, ("row %d: allocated %s vs %s"):format(i, r.allocated, a.args.bytes) end
    for name, v in pairs(c.args) do
      if r.cats[name] ~= v then return false, ("row %d: %s %s vs %s"):format(i, name, r.cats[name], v) end
    end
    for name, v in pairs(r.cats) do
      if v ~= 0 and c.args[name] == nil then return false, ("row %d: category %s missing"):format(i, name) end
    end
    if r.reserved then
      local e = res_ev and res_ev[ri]
      if not e or e.ts_text ~= r.ts or e.args.bytes ~= r.reserved then
        return false, ("row %d: reserved %s vs %s"):format(i, r.reserved, e and e.args.bytes)
      end
      ri = ri + 1
    end
  end
  if res_ev and ri - 1 ~= #res_ev then return false, "more reserved counters than rows with Total Reserved" end
  return true
end

local function deep_eq(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then return a == b end
  for k, v in pairs(a) do if not deep_eq(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

local traces = {
  { "examples/traces/bert-small_h100.json.gz", "size", ".json.gz" },
  { "examples/traces/normalization_mi300.json.gz", "pytorch", ".json" },
  { "tests/data/kineto_tb_plugin/resnet50_num_workers_4_worker0.1623212756351.pt.trace.json.gz", "op", ".json.gz" },
  { "tests/data/tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", "phase", ".json" },
  { "tests/tiny/y_pair_basic.json", "tests/tiny/rules/odd_names.lua", ".json" },
  { "tests/tiny/y_top_array.json", "size", ".json" },
  { "tests/tiny/y_bom.json", "size", ".json" },
  { "tests/tiny/i_empty_trace_events.json", "size", ".json.gz" },
  { "tests/tiny/i_no_trace_events.json", "size", ".json" },
}

for _, t in ipairs(traces) do
  local path, rules, ext = t[1], t[2], t[3]
  if io.open(path) == nil then path = path:gsub("y_bom", "i_bom") end
  local name = path:match("[^/]+$")
  local csv, pf, an = tmp .. "/t.csv", tmp .. "/p.json", tmp .. "/a" .. ext
  local cmd = ("hmem run -q %s %s --timeline %s --perfetto %s --annotate %s"):format(rules, path, csv, pf, an)
  if not check(os.execute(cmd), "perfetto: hmem writes --perfetto and --annotate" .. ext .. " for " .. name, cmd) then
    goto next
  end
  do
    local rows = timeline(csv)
    local ptext = io.open(pf):read("a")
    local ok, p = pcall(cjson.decode, ptext)
    check(ok and type(p.traceEvents) == "table", "perfetto: the --perfetto output of " .. name .. " parses", p)
    local by = counters(ptext)
    local series_ok, why = true, nil
    for dev, r in pairs(rows) do
      local base = "hmem " .. dev
      series_ok, why = same_series(r, by[base] or {}, by[base .. " allocated"] or {}, by[base .. " reserved"])
      if not series_ok then why = dev .. ": " .. why; break end
    end
    check(series_ok, "perfetto: every counter series of " .. name .. " reproduces the --timeline rows", why)

    local orig = slurp("gzip -dcf " .. path)
    local annot = slurp("gzip -dcf " .. an)
    local function nobom(x) return (x:gsub("^\239\187\191", "")) end
    local ok2, a = pcall(cjson.decode, nobom(annot))
    check(ok2, "annotate: the annotated " .. name .. " parses", a)
    local o = cjson.decode(nobom(orig))
    local oev = o.traceEvents or (o[1] ~= nil and o) or (next(o) == nil and o) or {}
    local aev = ok2 and (a.traceEvents or (a[1] ~= nil and a) or {}) or {}
    local kept, ncounters = {}, 0
    for _, e in ipairs(aev) do
      if e.ph == "C" and e.cat == "hmem" then ncounters = ncounters + 1 else kept[#kept + 1] = e end
    end
    check(#kept == #oev and deep_eq(kept, oev),
      ("annotate: %s keeps all %d original events, equal after decoding"):format(name, #oev),
      ("%d events kept, %d in the original"):format(#kept, #oev))
    -- Bytes: the annotated text is the original with one block of counters inserted.
    local at = annot:find('\n{"ph":"C","cat":"hmem",', 1, true)
    local same_bytes, only_counters = annot == orig, ncounters == 0
    if at then
      local p = at
      while annot:find('^\n{"ph":"C","cat":"hmem",[^\n]-}}', p) do
        local _, e = annot:find('^\n{"ph":"C","cat":"hmem",[^\n]-}}', p)
        p = e + 1
        if annot:sub(p, p) == "," then p = p + 1 end
      end
      only_counters = true
      same_bytes = annot:sub(1, at - 1) == orig:sub(1, at - 1) and annot:sub(p) == orig:sub(at)
    end
    check(same_bytes and only_counters and (ncounters > 0) == (next(rows) ~= nil),
      ("annotate: %s is the original byte for byte plus %d counter events at the start of its events"):format(name, ncounters),
      ("same bytes around the insertion %s"):format(same_bytes))
    if ext == ".json.gz" then
      check(slurp("head -c 2 " .. an .. " | od -An -tx1"):match("1f 8b") ~= nil, "annotate: " .. name .. " to .json.gz is gzip")
    end
  end
  ::next::
end
os.execute("rm -rf " .. tmp)
