-- hmem.testing.report: testing.report{...}, a fake report to test a pack's done(report) and
-- its aggregations without a trace (issue 17). Loaded by hmem.testing when first used.
--
--   local testing = require "hmem.testing"
--   local pack = testing.load("rules/team.lua")
--   local report = testing.report{pack = pack, rows = {
--     {bytes = 4 * hmem.GiB, ts = 10, lifetime = 5, op = "aten::empty"},
--     {bytes = 512, ts = 12, device = "cpu"}}}
--   pack.done(report)
--
-- spec.rows: rows (testing.row tables or plain tables, which become testing.row); an
--   allocation's free is its free_ts (or ts + lifetime), a row without one is never freed.
-- spec.pack: a pack as testing.load returns it (or anything testing.load takes): rows without
--   a category get classify's, and its aggregations (hmem.aggregate) are computed as hmem
--   computes them: per series by default (file and device the first keys) or per = "all",
--   where "all", "live_at_peak", "live_at_end" or a function, by fields and functions (a list
--   field is its names joined by " > "), count, sum and max, sorted by the sum (else the count),
--   largest first, the first top.
-- spec.top: how many rows live_at_peak lists (default 20, as --top).
-- The report: rules (the pack's name), categories (in the order first seen), inputs
--   ({path=, rank=, events=, memory_events=} per file), series (per file and device, in the
--   order first seen) and aggregations ([name] = {columns=, rows=, per=}). A series has path,
--   rank, device, memory_events, allocs, frees, peak_bytes, peak_ts, end_bytes, categories
--   ({name=, peak_bytes=, bytes_at_peak=, end_bytes=, allocs=, alloc_bytes=}, largest peak
--   first), live_at_peak (rows, largest first), and the methods allocations() (every row, in
--   time order), live_at(ts) (the rows live at ts, largest first) and timeline(category) (ts
--   and bytes arrays: before the first event and after every event). The peak is the first
--   state with the most bytes, as in hmem.
local M = {}

local function live(row, ts)
  return row.ts <= ts and (row.free_ts == nil or row.free_ts > ts)
end

local function by_size(a, b)
  if a.bytes ~= b.bytes then return a.bytes > b.bytes end
  return a.ts < b.ts
end

-- The states of a series: every alloc and free as (ts, delta, row), in time order.
local function events_of(rows)
  local ev = {}
  for i, r in ipairs(rows) do
    ev[#ev + 1] = { ts = r.ts, d = r.bytes, row = r, i = i }
    if r.free_ts ~= nil then ev[#ev + 1] = { ts = r.free_ts, d = -r.bytes, row = r, i = i } end
  end
  table.sort(ev, function(a, b)
    if a.ts ~= b.ts then return a.ts < b.ts end
    if a.i ~= b.i then return a.i < b.i end
    return a.d > b.d
  end)
  return ev
end

local function make_series(key, rows, top)
  local s = { path = key.path, rank = key.rank, device = key.device, memory_events = 0, allocs = #rows,
              frees = 0, peak_bytes = 0, peak_ts = nil, end_bytes = 0 }
  local ev = events_of(rows)
  s.memory_events = #ev
  local total, cat, cats, order = 0, {}, {}, {}
  for _, e in ipairs(ev) do
    local c = e.row.category or "unclassified"
    if not cats[c] then
      cats[c] = { name = c, peak_bytes = 0, bytes_at_peak = 0, end_bytes = 0, allocs = 0, alloc_bytes = 0 }
      order[#order + 1] = c
      cat[c] = 0
    end
    total, cat[c] = total + e.d, cat[c] + e.d
    if e.d > 0 then
      cats[c].allocs, cats[c].alloc_bytes = cats[c].allocs + 1, cats[c].alloc_bytes + e.d
    else
      s.frees = s.frees + 1
    end
    if cat[c] > cats[c].peak_bytes then cats[c].peak_bytes = cat[c] end
    if total > s.peak_bytes then
      s.peak_bytes, s.peak_ts = total, e.ts
      for n, v in pairs(cat) do cats[n].bytes_at_peak = v end
    end
  end
  s.end_bytes = total
  s.categories = {}
  for _, n in ipairs(order) do
    cats[n].end_bytes = cat[n]
    s.categories[#s.categories + 1] = cats[n]
  end
  table.sort(s.categories, function(a, b) return a.peak_bytes > b.peak_bytes end)
  local function live_at(_, ts)
    local out = {}
    for _, r in ipairs(rows) do
      if live(r, ts) then out[#out + 1] = r end
    end
    table.sort(out, by_size)
    return out
  end
  s.live_at_peak = s.peak_ts and live_at(s, s.peak_ts) or {}
  for i = #s.live_at_peak, top + 1, -1 do s.live_at_peak[i] = nil end
  s.live_at = live_at
  function s.allocations()
    local out = {}
    for i, r in ipairs(rows) do out[i] = r end
    table.sort(out, function(a, b) return a.ts < b.ts end)
    return out
  end
  function s.timeline(_, category)
    local ts, bytes, v = { ev[1] and ev[1].ts or 0.0 }, { 0 }, 0
    for _, e in ipairs(ev) do
      if (e.row.category or "unclassified") == category then v = v + e.d end
      ts[#ts + 1], bytes[#bytes + 1] = e.ts, v
    end
    return ts, bytes
  end
  return s
end

-- A key of a row for one by entry: a field (a list field joined by " > ") or a function's value.
local function key_of(row, by)
  local v
  if type(by) == "function" then
    v = by(row)
  else
    v = row[by]
    if type(v) == "table" then
      local names = {}
      for i, e in ipairs(v) do names[i] = type(e) == "table" and e.name or e end
      v = table.concat(names, " > ")
    end
  end
  return v
end

local function aggregate(decl, series)
  local cols, groups, index = {}, {}, {}
  local fn = 0
  for j, by in ipairs(decl.by) do
    if type(by) == "function" then fn = fn + 1 end
    cols[j] = type(by) == "function" and ("by" .. j - (decl.per == "series" and 2 or 0)) or by
  end
  local nkeys = #cols
  if decl.count then cols[#cols + 1] = "count" end
  if decl.sum then cols[#cols + 1] = decl.sum end
  if decl.max then cols[#cols + 1] = "max_" .. decl.max end
  for _, s in ipairs(series) do
    local peak_ts, end_ts = s.peak_ts, math.huge
    for _, r in ipairs(s.allocations()) do
      local keep = decl.where == "all" or (decl.where == "live_at_peak" and peak_ts ~= nil and live(r, peak_ts))
        or (decl.where == "live_at_end" and r.free_ts == nil and r.addr ~= nil)
        or (type(decl.where) == "function" and decl.where(r))
      if keep then
        local keys, parts = {}, {}
        for j, by in ipairs(decl.by) do
          keys[j] = key_of(r, by)
          parts[j] = ("%q"):format(keys[j])
        end
        local id = table.concat(parts, "\0")
        local g = index[id]
        if not g then
          g = { keys = keys, count = 0, sum = 0 }
          index[id], groups[#groups + 1] = g, g
        end
        g.count = g.count + 1
        if decl.sum then g.sum = g.sum + (r[decl.sum] or 0) end
        local m = decl.max and r[decl.max]
        if m ~= nil and (g.max == nil or m > g.max) then g.max = m end
      end
    end
  end
  table.sort(groups, function(a, b)
    if decl.sum then return a.sum > b.sum end
    return a.count > b.count
  end)
  local rows = {}
  for i, g in ipairs(groups) do
    if decl.top and i > decl.top then break end
    local row = {}
    for j = 1, nkeys do row[cols[j]] = g.keys[j] end
    if decl.count then row.count = g.count end
    if decl.sum then row[decl.sum] = g.sum end
    if decl.max then row["max_" .. decl.max] = g.max end
    rows[#rows + 1] = row
  end
  return { columns = cols, rows = rows, per = decl.per or "series" }
end

function M.build(testing, spec)
  if type(spec) ~= "table" then
    error("testing.report: expected a table {rows=, pack=, top=}", 3)
  end
  local pack = spec.pack
  if pack ~= nil and (type(pack) ~= "table" or type(pack.classify) ~= "function") then
    pack = testing.load(pack)
  end
  local top = spec.top or 20
  local series, by_key, inputs, by_path, categories, seen = {}, {}, {}, {}, {}, {}
  for i, t in ipairs(spec.rows or {}) do
    local r = testing.row(t)
    if (r.category == nil and pack) or r.file == nil then
      -- the category classify gives, and a file as every hmem row has one
      local fields = {}
      for _, f in ipairs(testing.fields) do fields[f] = r[f] end
      fields.file = fields.file or "trace.json"
      if fields.category == nil and pack then fields.category = pack.classify(r) or "unclassified" end
      for _, f in ipairs({ "addr", "step", "module", "op", "free_op", "free_step" }) do
        if fields[f] == nil then fields[f] = testing.NIL end
      end
      r = testing.row(fields)
    end
    if r.kind ~= "alloc" then
      error(("testing.report: rows[%d] is a free; give allocations (with free_ts or lifetime)"):format(i), 3)
    end
    local c = r.category or "unclassified"
    if not seen[c] then seen[c], categories[#categories + 1] = true, c end
    local path = r.file
    local key = path .. "\0" .. r.device
    if not by_key[key] then
      by_key[key] = { key = { path = path, rank = r.rank, device = r.device }, rows = {} }
      series[#series + 1] = by_key[key]
    end
    local rows = by_key[key].rows
    rows[#rows + 1] = r
    if not by_path[path] then
      by_path[path] = { path = path, rank = r.rank, events = 0, memory_events = 0 }
      inputs[#inputs + 1] = by_path[path]
    end
    local inp = by_path[path]
    local n = r.free_ts ~= nil and 2 or 1
    inp.events, inp.memory_events = inp.events + n, inp.memory_events + n
  end
  local report = { rules = pack and pack.name or "pack", categories = categories, inputs = inputs, series = {},
                   aggregations = {} }
  for i, s in ipairs(series) do
    report.series[i] = make_series(s.key, s.rows, top)
  end
  for _, decl in ipairs(pack and pack.aggregations or {}) do
    report.aggregations[decl.name] = aggregate(decl, report.series)
  end
  return report
end

return M
