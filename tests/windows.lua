-- Windows (issue 14): on every real trace (tests/data and examples/traces) hmem run op with
-- --from ts:A --to ts:B, a window that cuts allocations (A and B are the times of the
-- series' events at a third and two thirds of the first series with memory events), and
-- its --timeline must, after every event inside the window: have exactly the trace's events
-- of the window (tests/reference.lua reads them, sharing no code with hmem), carry what was
-- live at the opening as "(before window)", give the categories' sum equal to the device
-- total, and that total equal to the trace's own Total Allocated wherever it has one. The sum
-- is an identity of the replay; what a window carries in, its steps, OOMs and verdicts are
-- checked against an independent replay by tests/window_reference.py (issue 26).
local ref = dofile("tests/reference.lua")
local split = dofile("tests/csv.lua").split
local tmp = os.tmpname()

local function check(ok, name, detail)
  print((ok and "ok - " or "not ok - ") .. name)
  if not ok and detail then print("#   " .. tostring(detail):gsub("\n", "\n#   ")) end
end

local traces = {}
local p = io.popen("find tests/data examples/traces -type f \\( -name '*.json' -o -name '*.json.gz' \\) | sort")
for path in p:lines() do traces[#traces + 1] = path end
p:close()

-- ns as the trace's µs text, exactly: 1234567 -> "1234.567"
local function us(ns)
  local s = ns < 0 and "-" or ""
  ns = math.abs(ns)
  return ("%s%d.%03d"):format(s, ns // 1000, ns % 1000)
end

local function window_diff(path)
  local trace = ref.load(path)
  local series = ref.series(trace, "op")
  local first
  for _, s in ipairs(series) do
    if #s.replay.events >= 3 then first = s break end
  end
  if not first then return nil, 0 end
  local evs = first.replay.events
  local a, b = evs[#evs // 3].ts, evs[2 * #evs // 3].ts
  local tl = tmp .. ".csv"
  local cmd = ("./hmem run -q op %q --from ts:%s --to ts:%s --timeline %s 2>&1"):format(path, us(a), us(b), tl)
  local pr = io.popen(cmd)
  local said = pr:read("a")
  if not pr:close() then return cmd .. ": " .. said end
  local rows, header = {}, nil
  for line in io.lines(tl) do
    if header then rows[#rows + 1] = split(line) else header = split(line) end
  end
  os.remove(tl)
  if header[9] ~= "(before window)" then return "column 9 is " .. tostring(header[9]) .. ", not (before window)" end
  local by_dev = {}
  for _, r in ipairs(rows) do
    by_dev[r[3]] = by_dev[r[3]] or {}
    table.insert(by_dev[r[3]], r)
  end
  local n = 0
  for _, s in ipairs(series) do
    local want = {}
    for _, e in ipairs(s.replay.events) do
      if e.ts >= a and e.ts <= b then want[#want + 1] = e end
    end
    local got = by_dev[s.device] or {}
    if #got ~= #want then return ("%s: %d rows in the window, the trace has %d events there"):format(s.device, #got, #want) end
    for j, e in ipairs(want) do
      local r = got[j]
      local sum = 0
      for k = 9, #header do sum = sum + math.tointeger(r[k]) end
      local where = ("%s: row %d (ts %s)"):format(s.device, j, r[4])
      if ref.ns(tonumber(r[4])) ~= e.ts or math.tointeger(r[6]) ~= math.abs(e.bytes) then
        return where .. ": not the trace's event " .. us(e.ts)
      end
      if sum ~= math.tointeger(r[7]) then return ("%s: categories sum to %d, allocated %s"):format(where, sum, r[7]) end
      if e.ta and e.ta ~= math.tointeger(r[7]) then
        return ("%s: allocated %s, the trace's Total Allocated %d"):format(where, r[7], e.ta)
      end
      n = n + 1
    end
  end
  return nil, n
end

local plan = #traces
print("1.." .. plan)
for _, path in ipairs(traces) do
  local d, n = window_diff(path)
  check(not d, ("%s: a window (--from ts: --to ts:) sums to the trace's Total Allocated after each of its %d events")
    :format(path:match("[^/]+$"), n or 0), d)
end
