-- Real traces (every *.json and *.json.gz of tests/data and examples/traces), checked against
-- what hmem did not compute:
-- - the counts of tests/data/SOURCES.md (tests/data/expected.lua, from an independent script);
-- - tests/reference.lua, which reads the trace file itself and shares no code with hmem: the
--   trace's own Total Allocated after every event equals the total before the trace plus the
--   running sum of Bytes; hmem's --json for the size and op rules equals the reference in every
--   series field and every category's peak, bytes at the peak, end and allocations; and the
--   --timeline of the op rule equals the reference's state after every event, column by column;
-- - every shipped pack leaves the device totals as the reference has them and returns only the
--   categories it declares;
-- - the same --json whatever -j, HMEM_WALK and HMEM_SIMD say.
-- The plan ("1..N") comes first; a failing hmem run shows its standard error.
local cjson = require "cjson"
local ref = dofile("tests/reference.lua")
local split = dofile("tests/csv.lua").split
local expected = dofile("tests/data/expected.lua")
local tmp = os.tmpname()

local function check(ok, name, detail)
  print((ok and "ok - " or "not ok - ") .. name)
  if not ok and detail then print("#   " .. tostring(detail):gsub("\n", "\n#   ")) end
end

-- Runs a shell command: true or false, its standard output, and its standard error (the
-- first lines of it, with the exit status, as a detail for a failing check).
local function run(cmd)
  local p = io.popen(cmd .. " 2>" .. tmp .. ".err")
  local out = p:read("a")
  local ok, _, code = p:close()
  local f = io.open(tmp .. ".err")
  local err = f and f:read("a") or ""
  if f then f:close() end
  os.remove(tmp .. ".err")
  local lines = {}
  for l in err:gmatch("[^\n]+") do
    if #lines < 15 then lines[#lines + 1] = l end
  end
  return ok, out, ("%s: exit %s%s"):format(cmd, tostring(code), #lines > 0 and ("\n" .. table.concat(lines, "\n")) or "")
end

local traces = {}
local p = io.popen("find tests/data examples/traces -type f \\( -name '*.json' -o -name '*.json.gz' \\) | sort")
for path in p:lines() do traces[#traces + 1] = path end
p:close()
local expected_of = {}
for _, e in ipairs(expected) do expected_of["tests/data/" .. e.path] = e end

local packs = { "size", "op", "phase", "lifetime", "pytorch" }
local plan = 0
for _, path in ipairs(traces) do
  local e = expected_of[path]
  plan = plan + 4 + (e and 1 or 0) * 2 -- reference: Total Allocated, size, op, timeline; -j, walk
  if e then
    local ndev = 0
    for _ in pairs(e.devices) do ndev = ndev + 1 end
    plan = plan + 5 + ndev + (e.pairs and 1 or 0) + (e.memory > 0 and #packs or 0)
  end
end
plan = plan + 1 + 3 -- the whole directory with -j 1, 2, 8; random traces
print("1.." .. plan)

local function name_of(path) return path:match("[^/]+$") end

-- The first difference between hmem's --json series and the reference's, or nil.
local series_fields = { "memory_events", "allocs", "frees", "matched_frees", "zero_byte_events",
  "before_trace_bytes", "peak_bytes", "end_bytes", "max_reserved_bytes" }
local category_fields = { "peak_bytes", "bytes_at_peak", "end_bytes", "allocs", "alloc_bytes" }
local zero = { peak_bytes = 0, bytes_at_peak = 0, end_bytes = 0, allocs = 0, alloc_bytes = 0 }
local function same(a, b)
  if a == cjson.null then a = nil end
  return a == b or (a and b and math.tointeger(a) == math.tointeger(b))
end
local function show(v)
  return tostring(v ~= cjson.null and math.tointeger(v) or v)
end
local function diff(doc, want)
  local got = {}
  for _, s in ipairs(doc.series) do got[s.device] = s end
  for _, w in ipairs(want) do
    local s = got[w.device]
    if not s then return w.device .. ": no such series in hmem's --json" end
    got[w.device] = nil
    for _, f in ipairs(series_fields) do
      if not same(s[f], w[f]) then return ("%s: %s: hmem %s, reference %s"):format(w.device, f, show(s[f]), show(w[f])) end
    end
    if ref.ns(s.peak_ts) ~= w.peak_ts then
      return ("%s: peak_ts: hmem %s, reference %.3f"):format(w.device, tostring(s.peak_ts), w.peak_ts / 1000)
    end
    local cats = {}
    for _, c in ipairs(s.categories) do cats[c.name] = c end
    local names = {}
    for n in pairs(cats) do names[n] = true end
    for n in pairs(w.categories) do names[n] = true end
    local sorted = {}
    for n in pairs(names) do sorted[#sorted + 1] = n end
    table.sort(sorted)
    for _, n in ipairs(sorted) do
      local c, r = cats[n] or zero, w.categories[n] or zero
      for _, f in ipairs(category_fields) do
        if not same(c[f], r[f]) then
          return ("%s: category %q: %s: hmem %s, reference %s"):format(w.device, n, f, show(c[f]), show(r[f]))
        end
      end
    end
  end
  local extra = next(got)
  return extra and (extra .. ": a series hmem has and the reference has not") or nil
end

-- The first row of an op-rule --timeline CSV that differs from the reference's state after
-- the same event (ts, kind, bytes, the device total and every category column), or nil.
local function timeline_diff(path, want)
  local rows, header = {}, nil
  for line in io.lines(path) do
    if header then rows[#rows + 1] = split(line) else header = split(line) end
  end
  local by_dev = {}
  for _, r in ipairs(rows) do
    by_dev[r[3]] = by_dev[r[3]] or {}
    table.insert(by_dev[r[3]], r)
  end
  for _, w in ipairs(want) do
    local got = by_dev[w.device] or {}
    by_dev[w.device] = nil
    if #got ~= #w.replay.events then
      return ("%s: %d rows, %d memory events"):format(w.device, #got, #w.replay.events)
    end
    local cur, total = {}, w.before_trace_bytes
    for name, v in pairs(w.replay.start) do cur[name] = v end
    for j, e in ipairs(w.replay.events) do
      local r, c = got[j], w.replay.category[j]
      total = total + e.bytes
      if c then cur[c] = (cur[c] or 0) + e.bytes end
      local kind = e.bytes > 0 and "alloc" or e.bytes < 0 and "free" or "zero"
      local where = ("%s: row %d (ts %s)"):format(w.device, j, r[4])
      if ref.ns(tonumber(r[4])) ~= e.ts or r[5] ~= kind or math.tointeger(r[6]) ~= math.abs(e.bytes) then
        return ("%s: ts, kind, bytes %s, %s, %s; the trace's event: %.3f, %s, %d"):format(where, r[4], r[5], r[6],
          e.ts / 1000, kind, math.abs(e.bytes))
      end
      if math.tointeger(r[7]) ~= total then
        return ("%s: allocated %s, reference %d"):format(where, r[7], total)
      end
      for k = 9, #header do
        if math.tointeger(r[k]) ~= (cur[header[k]] or 0) then
          return ("%s: %q %s, reference %d"):format(where, header[k], r[k], cur[header[k]] or 0)
        end
      end
    end
  end
  local extra = next(by_dev)
  return extra and (extra .. ": rows of a device the reference has not") or nil
end

-- hmem's size --json, op --json and op --timeline against the reference's series of a trace:
-- the first difference of each (or why hmem failed), nil where they agree, and the op --json.
local function compare(path, size, op)
  local json, tl = tmp .. ".json", tmp .. ".csv"
  local ok, out, err = run(("./hmem run -q size %q --json -"):format(path))
  local doc = ok and cjson.decode(out)
  local d_size = doc and diff(doc, size) or not doc and err or nil
  ok, out, err = run(("./hmem run -q op %q --json %s --timeline %s"):format(path, json, tl))
  doc = nil
  if ok then
    local f = io.open(json)
    doc = cjson.decode(f:read("a"))
    f:close()
  end
  local d_op = doc and diff(doc, op) or not doc and err or nil
  local d_tl = ok and timeline_diff(tl, op) or not ok and err or nil
  os.remove(json)
  os.remove(tl)
  return d_size, d_op, d_tl, doc
end

local reference = {} -- per trace: the reference's series of the size rule (device totals)
for _, path in ipairs(traces) do
  local name = name_of(path)
  local trace = ref.load(path)
  local size, op = ref.series(trace, "size"), ref.series(trace, "op")
  reference[path] = size
  local bad, with_ta, first = 0, 0, nil
  for _, s in ipairs(size) do
    bad = bad + s.ta_mismatches
    with_ta = with_ta + s.ta_events
    first = first or s.ta_first_mismatch
  end
  check(bad == 0, ("%s: the trace's Total Allocated after every event (%d) = the total before it + the running sum of Bytes")
    :format(name, with_ta), ("%d events differ; the first: %s"):format(bad, tostring(first)))

  local d_size, d_op, d_tl, doc = compare(path, size, op)
  check(not d_size, name .. ": hmem run size --json = the reference", d_size)
  check(not d_op, name .. ": hmem run op --json = the reference", d_op)
  check(not d_tl, name .. ": hmem run op --timeline = the reference's state after every event", d_tl)

  local e = expected_of[path]
  if e then
    doc = doc or { inputs = { {} }, series = {} }
    local input = doc.inputs[1]
    check(input.events == e.events, name .. ": events = " .. e.events, "got " .. tostring(input.events))
    check(input.memory_events == e.memory, name .. ": memory events = " .. e.memory, "got " .. tostring(input.memory_events))
    local want_rank = e.rank == nil and cjson.null or e.rank
    check(input.rank == want_rank, name .. ": rank = " .. tostring(e.rank), "got " .. tostring(input.rank))
    local allocs, frees, matched, live, by_dev, ndev = 0, 0, 0, 0, {}, 0
    for _, s in ipairs(doc.series) do
      allocs, frees, matched = allocs + s.allocs, frees + s.frees, matched + s.matched_frees
      live = live + s.allocs - s.matched_frees
      by_dev[s.device] = s.memory_events
      ndev = ndev + 1
    end
    local devs = {}
    for d in pairs(e.devices) do devs[#devs + 1] = d end
    table.sort(devs)
    for _, d in ipairs(devs) do
      check(by_dev[d] == e.devices[d], ("%s: %s has %d memory events"):format(name, d, e.devices[d]), "got " .. tostring(by_dev[d]))
    end
    check(ndev == #devs, name .. ": " .. #devs .. " devices", "got " .. ndev)
    check(allocs == e.allocs and frees == e.frees, ("%s: %d allocs / %d frees"):format(name, e.allocs, e.frees),
      ("got %d / %d"):format(allocs, frees))
    if e.pairs then
      check(matched == frees and live == e.live, ("%s: every free paired, %d live at end"):format(name, e.live),
        ("%d of %d frees paired, %d live"):format(matched, frees, live))
    end
  end
end

-- Random small traces (tests/random_trace.lua, the same seeds every run) for the cases real
-- traces rarely hold, checked the same way.
local random_trace, RANDOM = dofile("tests/random_trace.lua"), 150
local first = {}
for seed = 1, RANDOM do
  local path = tmp .. ".random.json"
  local f = assert(io.open(path, "w"))
  f:write(random_trace(seed))
  f:close()
  local trace = ref.load(path)
  local d = { compare(path, ref.series(trace, "size"), ref.series(trace, "op")) }
  for k = 1, 3 do
    if d[k] and not first[k] then first[k] = ("seed %d (lua5.4 -e 'io.write(dofile(\"tests/random_trace.lua\")(%d))'): %s")
      :format(seed, seed, d[k]) end
  end
  os.remove(path)
end
check(not first[1], RANDOM .. " random traces: hmem run size --json = the reference", first[1])
check(not first[2], RANDOM .. " random traces: hmem run op --json = the reference", first[2])
check(not first[3], RANDOM .. " random traces: hmem run op --timeline = the reference's state after every event", first[3])

-- Every shipped pack on every real trace of tests/data: it runs, the device totals (before
-- the trace, peak, its time, end) are the reference's whatever the categories, and a pack
-- that declares its categories returns only those.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
for _, pack in ipairs(packs) do
  -- op names its categories after the ops it meets: only the others are closed lists
  local declared = pack ~= "op" and require("hmem.rules." .. pack).categories or nil
  local allowed = { ["(before trace)"] = true }
  for _, c in ipairs(declared or {}) do allowed[type(c) == "table" and c.name or c] = true end
  for _, e in ipairs(expected) do
    if e.memory > 0 then
      local path = "tests/data/" .. e.path
      local ok, out, err = run(("./hmem run -q %s %q --json -"):format(pack, path))
      local doc = ok and cjson.decode(out)
      local why = not doc and err or nil
      for _, s in ipairs(doc and doc.series or {}) do
        for _, w in ipairs(reference[path]) do
          if w.device == s.device and not why then
            for _, f in ipairs({ "before_trace_bytes", "peak_bytes", "end_bytes" }) do
              if not same(s[f], w[f]) then why = ("%s: %s %s, reference %s"):format(s.device, f, show(s[f]), show(w[f])) end
            end
            if ref.ns(s.peak_ts) ~= w.peak_ts then why = s.device .. ": peak_ts " .. s.peak_ts end
          end
        end
        for _, c in ipairs(s.categories) do
          if declared and not allowed[c.name] and not why then why = "returned " .. c.name end
        end
      end
      check(not why, ("pack %s on %s: device totals as the reference's%s"):format(pack, name_of(path),
        declared and ", only declared categories" or ""), why)
    end
  end
end

-- Results never depend on -j: one trace on one thread (everything inline) and on three
-- (inflating, scanning and parsing events each on its own thread), and the whole directory
-- read 1, 2 and 8 traces at a time, give the same --json byte for byte.
local function run_json(args, env)
  local ok, out, err = run((env or "") .. "./hmem run -q pytorch " .. args .. " --json -")
  return ok and out or nil, err
end
local function same_json(name, runs)
  local first, why = runs[1][1], nil
  for _, r in ipairs(runs) do
    if not r[1] then why = why or r[2] elseif r[1] ~= first then why = why or "outputs differ" end
  end
  check(not why, name, why)
end
for _, e in ipairs(expected) do
  local path = ("%q"):format("tests/data/" .. e.path)
  local a, b = { run_json(path .. " -j 1") }, { run_json(path .. " -j 3") }
  same_json(name_of(e.path) .. ": same --json with -j 1 and -j 3", { a, b })
end
same_json("tests/data: same --json with -j 1, -j 2 and -j 8",
  { { run_json("tests/data -j 1") }, { run_json("tests/data -j 2") }, { run_json("tests/data -j 8") } })

-- Which thread walks an event's members (the scanner while the parser lags behind, by
-- default) never changes the result: each fixed way gives the same --json; nor does the block
-- scan's vector code (AVX-512 where the CPU has it) against AVX2's and the baseline's
-- (HMEM_SIMD=avx2, =base; issue 29).
for _, e in ipairs(expected) do
  local path = ("%q -j 3"):format("tests/data/" .. e.path)
  same_json(name_of(e.path) .. ": same --json with HMEM_WALK=scanner, =handler, HMEM_SIMD=base, =avx2 and by default", {
    { run_json(path) }, { run_json(path, "HMEM_WALK=scanner ") }, { run_json(path, "HMEM_WALK=handler ") },
    { run_json(path, "HMEM_SIMD=base ") }, { run_json(path, "HMEM_SIMD=avx2 ") } })
end
os.remove(tmp)
