-- An independent reference for hmem's results on real traces (issue 11): it shares no code
-- with hmem (no hmem module, no hmem output) and computes, from the trace file alone (read
-- with gzip -dc and lua-cjson), what README "Semantics" promises for the size and op rules:
-- per series (file, device) the peak, its time, the end, the total before the trace, and per
-- category its peak, its bytes at the device's peak, its end and its allocations.
--
--   local ref = dofile("tests/reference.lua")
--   local trace = ref.load(path)          -- the trace's memory events and ops, decoded once
--   local series = ref.series(trace, "size")   -- or "op": a list, one table per device
--   lua5.4 tests/reference.lua TRACE RULE      -- prints the same as JSON
--
-- Written from README (Semantics, Inputs, The row) and the headers of the size and op packs:
-- - memory events are ph i/I named "[memory]"; per file they are stable-sorted by exact ts
--   (integer ns); a series is one Device Type / Device Id (0 cpu, 1 cuda:N, 6 hip:N, ...);
-- - an allocation is classified; a free pairs with the latest live allocation at its Addr of
--   the same size on the same device and takes its category; a free with an Addr and no such
--   allocation freed memory from before the trace: it is classified itself (before_trace) and
--   its category holds its size from the start; a free without Addr (2021 traces) is
--   classified itself and subtracted;
-- - "(before trace)" starts at Total Allocated minus the signed sizes up to the first event
--   that has it, minus the before-trace frees; without Total Allocated, at the least amount
--   (0 or more) that keeps the device total non-negative;
-- - op: the innermost cpu_op ("Operator" in 2021 traces) slice on the same pid and tid (as
--   integers) whose [ts, ts+dur] contains the event: latest start, then shorter, then later
--   in the file; "(no op)" outside any op or when it is a ProfilerStep#N marker.
local cjson = require "cjson"

local M = {}

local EXACT = 2 ^ 53

-- An integer from a decoded JSON number (cjson gives floats), or an error past 2^53 where
-- a float is no longer exact.
local function int(v, what)
  if v == nil or v == cjson.null then return nil end
  local i = math.tointeger(v)
  assert(i and i > -EXACT and i < EXACT, what .. " is not an exactly representable integer: " .. tostring(v))
  return i
end

-- Integer ns of a time in µs. A whole number of µs may be a float beyond 2^53 / 1000, so it
-- is scaled as an integer; a fraction (at most three decimals) rounds to the nearest ns.
function M.ns(us)
  local whole = math.tointeger(us)
  if whole then return whole * 1000 end
  return math.floor(us * 1000 + 0.5)
end
local ns = M.ns

-- pid and tid compare as integers where they are numbers or numeric strings.
local function id(v)
  local n = tonumber(v)
  if n and math.tointeger(n) then return tostring(math.tointeger(n)) end
  return "s:" .. tostring(v)
end

local device_names = { [0] = "cpu", [1] = "cuda", [6] = "hip", [12] = "xpu", [13] = "mps", [20] = "privateuseone" }
local function device(dtype, did)
  if dtype == 0 then return "cpu" end
  return (device_names[dtype] or ("type" .. dtype)) .. ":" .. did
end

local function read_trace(path)
  local f = assert(io.open(path, "rb"))
  local magic = f:read(2)
  local text
  if magic == "\31\139" then
    f:close()
    local p = assert(io.popen(("gzip -dc '%s'"):format(path:gsub("'", "'\\''"))))
    text = p:read("a")
    assert(p:close(), "gzip -dc failed on " .. path)
  else
    text = (magic or "") .. f:read("a")
    f:close()
  end
  return text
end

-- The memory events (sorted as hmem sorts them, each with its innermost op) of a trace file.
function M.load(path)
  local doc = cjson.decode(read_trace(path))
  local events = doc.traceEvents
  if events == nil and doc[1] ~= nil then events = doc end
  local mem, ops_by_thread = {}, {}
  for i, e in ipairs(events == cjson.null and {} or events or {}) do
    local ph = e.ph
    if (ph == "i" or ph == "I") and e.name == "[memory]" then
      local a = e.args
      mem[#mem + 1] = {
        i = i, ts = ns(e.ts), bytes = int(a.Bytes, "Bytes"), addr = int(a.Addr, "Addr"),
        ta = int(a["Total Allocated"], "Total Allocated"), tr = int(a["Total Reserved"], "Total Reserved"),
        device = device(int(a["Device Type"], "Device Type"), int(a["Device Id"], "Device Id")),
        thread = id(e.pid) .. "/" .. id(e.tid),
      }
    elseif ph == "X" and (e.cat == "cpu_op" or e.cat == "Operator") then
      local th = id(e.pid) .. "/" .. id(e.tid)
      local list = ops_by_thread[th] or {}
      ops_by_thread[th] = list
      local dur = e.dur and e.dur ~= cjson.null and ns(e.dur) or 0
      if dur < 0 then dur = 0 end
      local start = ns(e.ts)
      list[#list + 1] = { start = start, stop = start + dur, dur = dur, i = i, name = e.name }
    end
  end
  table.sort(mem, function(a, b)
    if a.ts ~= b.ts then return a.ts < b.ts end
    return a.i < b.i
  end)
  -- The innermost op of each event, thread by thread: ops in the order of preference (start,
  -- then longer first, then file order), events in time order; a stack holds the ops started
  -- so far, and ops that ended before the event are dropped from its top (they end before
  -- every later event too). What remains on top is the last-preferred op containing the event.
  local mem_by_thread = {}
  for _, m in ipairs(mem) do
    local list = mem_by_thread[m.thread] or {}
    mem_by_thread[m.thread] = list
    list[#list + 1] = m
  end
  for th, list in pairs(mem_by_thread) do
    local ops = ops_by_thread[th] or {}
    table.sort(ops, function(a, b)
      if a.start ~= b.start then return a.start < b.start end
      if a.dur ~= b.dur then return a.dur > b.dur end
      return a.i < b.i
    end)
    local stack, k = {}, 1
    for _, m in ipairs(list) do
      while ops[k] and ops[k].start <= m.ts do
        stack[#stack + 1] = ops[k]
        k = k + 1
      end
      while #stack > 0 and stack[#stack].stop < m.ts do stack[#stack] = nil end
      local top = stack[#stack]
      if top and top.start == m.ts then
        -- the tie rule (issue 15): the innermost op that started before the event wins
        -- when it ends at that very time
        local alt
        for j = #stack, 1, -1 do
          local o = stack[j]
          if o.start < m.ts and o.stop >= m.ts then
            alt = o
            break
          end
        end
        if alt and alt.stop == m.ts then top = alt end
      end
      m.op = top and top.name
    end
  end
  return { path = path, events = mem }
end

local GiB, MiB = 2 ^ 30, 2 ^ 20
M.rules = {
  size = function(ev)
    local b = math.abs(ev.bytes)
    if b > 5 * GiB then return "very big (> 5 GiB)" end
    if b > GiB then return "big (> 1 GiB)" end
    if b < MiB then return "small (< 1 MiB)" end
    return "normal"
  end,
  op = function(ev, before_trace)
    if before_trace then return "(allocated before the trace)" end
    if ev.op == nil or ev.op:find("^ProfilerStep#%d+$") then return "(no op)" end
    return ev.op
  end,
}

local BEFORE = "(before trace)"

-- One series: pairing, the category of every event, then the states (before the first
-- event and after each) replayed twice: once for the peaks, once for the values at the peak.
local function one_series(path, dev, evs, classify)
  local s = { path = path, device = dev, memory_events = #evs, allocs = 0, frees = 0, matched_frees = 0,
    zero_byte_events = 0, ta_events = 0, ta_mismatches = 0 }
  local live, delta_cat, start = {}, {}, {}
  local cats = { [BEFORE] = { allocs = 0, alloc_bytes = 0 } }
  local function cat(name)
    cats[name] = cats[name] or { allocs = 0, alloc_bytes = 0 }
    return name
  end
  local rule3 = 0
  for j, e in ipairs(evs) do
    if e.bytes > 0 then
      s.allocs = s.allocs + 1
      local c = cat(classify(e, false))
      cats[c].allocs, cats[c].alloc_bytes = cats[c].allocs + 1, cats[c].alloc_bytes + e.bytes
      delta_cat[j] = c
      if e.addr then
        live[e.addr] = live[e.addr] or {}
        table.insert(live[e.addr], { bytes = e.bytes, cat = c })
      end
    elseif e.bytes < 0 then
      s.frees = s.frees + 1
      local stack, found = e.addr and live[e.addr], nil
      for k = stack and #stack or 0, 1, -1 do
        if stack[k].bytes == -e.bytes then
          found = table.remove(stack, k)
          break
        end
      end
      if found then
        s.matched_frees = s.matched_frees + 1
        delta_cat[j] = found.cat
      elseif e.addr then
        local c = cat(classify(e, true))
        start[c] = (start[c] or 0) - e.bytes
        rule3 = rule3 - e.bytes
        delta_cat[j] = c
      else
        delta_cat[j] = cat(classify(e, false))
      end
    else
      s.zero_byte_events = s.zero_byte_events + 1
    end
  end
  -- The total before the first event.
  local before, sum, low = nil, 0, 0
  for _, e in ipairs(evs) do
    sum = sum + e.bytes
    if e.ta and not before then before = e.ta - sum end
    if sum < low then low = sum end
  end
  if before then
    start[BEFORE] = before - rule3
  else
    start[BEFORE] = math.max(0, -(rule3 + low))
    before = start[BEFORE] + rule3
  end
  s.before_trace_bytes = before
  -- Pass 1: the device total (from Bytes alone), its peak, and every category's peak and end.
  local cur = {}
  for name, c in pairs(cats) do
    cur[name] = start[name] or 0
    c.peak_bytes = cur[name]
  end
  local total, peak, peak_at = before, before, 0
  for j, e in ipairs(evs) do
    total = total + e.bytes
    if e.ta then s.ta_events = s.ta_events + 1 end
    if e.ta and e.ta ~= total then
      s.ta_mismatches = s.ta_mismatches + 1
      s.ta_first_mismatch = s.ta_first_mismatch or ("%s ts %.3f: Total Allocated %d, total before the trace %d + Bytes so far %d")
        :format(dev, e.ts / 1000, e.ta, before, total - before)
    end
    if e.tr and (s.max_reserved_bytes or e.tr - 1) < e.tr then s.max_reserved_bytes = e.tr end
    local c = delta_cat[j]
    if c then
      cur[c] = cur[c] + e.bytes
      if cur[c] > cats[c].peak_bytes then cats[c].peak_bytes = cur[c] end
    end
    if total > peak then peak, peak_at = total, j end
  end
  s.peak_bytes, s.end_bytes = peak, total
  s.peak_ts = evs[math.max(peak_at, 1)].ts
  for name, c in pairs(cats) do c.end_bytes = cur[name] end
  -- Pass 2: every category at the device's peak.
  for name in pairs(cats) do cur[name] = start[name] or 0 end
  for j = 1, peak_at do
    local c = delta_cat[j]
    if c then cur[c] = cur[c] + evs[j].bytes end
  end
  for name, c in pairs(cats) do c.bytes_at_peak = cur[name] end
  s.categories = cats
  -- for a check of every state: the events, the category each changes, the starting values
  s.replay = { events = evs, category = delta_cat, start = start }
  return s
end

-- The series of a loaded trace under a rule ("size" or "op"), ordered by device name.
function M.series(trace, rule)
  local classify = assert(M.rules[rule], "no reference for the rule " .. tostring(rule))
  local by_dev, order = {}, {}
  for _, e in ipairs(trace.events) do
    if not by_dev[e.device] then
      by_dev[e.device] = {}
      order[#order + 1] = e.device
    end
    table.insert(by_dev[e.device], e)
  end
  table.sort(order)
  local out = {}
  for _, dev in ipairs(order) do out[#out + 1] = one_series(trace.path, dev, by_dev[dev], classify) end
  return out
end

if arg and arg[0] and arg[0]:find("reference%.lua$") and arg[1] then
  local out = M.series(M.load(arg[1]), arg[2] or "size")
  for _, s in ipairs(out) do
    s.replay, s.peak_ts = nil, ("%.3f"):format(s.peak_ts / 1000) -- ts as exact text (cjson prints 14 digits)
  end
  print(cjson.encode(out))
end
return M
