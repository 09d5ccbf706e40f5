-- Real traces (tests/data, listed in tests/data/expected.lua): hmem reproduces the
-- independent counts of SOURCES.md, and for every device of every trace the sum of the
-- categories equals the trace's own Total Allocated after every event (read back from
-- --timeline and the events CSV, not from hmem's own mismatch counter).
local cjson = require "cjson"
local expected = dofile("tests/data/expected.lua")
local tmp = os.tmpname()

local function check(ok, name, detail)
  print((ok and "ok - " or "not ok - ") .. name)
  if not ok and detail then print("#   " .. detail) end
end

local function sh(cmd)
  local ok, _, code = os.execute(cmd)
  return ok and 0 or code
end

local split = dofile("tests/csv.lua").split

local function csv_rows(path)
  local rows = {}
  for line in io.lines(path) do rows[#rows + 1] = split(line) end
  return rows
end

for _, e in ipairs(expected) do
  local path = "tests/data/" .. e.path
  local name = e.path:match("[^/]+$")
  local json, tl, ev = tmp .. ".json", tmp .. ".csv", tmp .. ".events.csv"
  local rc = sh(("./hmem run -q examples/by_op.lua %q --json %s --timeline %s"):format(path, json, tl))
  check(rc == 0, name .. ": hmem run exits 0", "exit " .. tostring(rc))
  rc = sh(("./hmem events -q %q --csv %s"):format(path, ev))
  check(rc == 0, name .. ": hmem events exits 0", "exit " .. tostring(rc))
  local f = io.open(json)
  local doc = f and cjson.decode(f:read("a"))
  if f then f:close() end
  if doc then
    local input = doc.inputs[1]
    check(input.events == e.events, name .. ": events = " .. e.events, "got " .. tostring(input.events))
    check(input.memory_events == e.memory, name .. ": memory events = " .. e.memory, "got " .. tostring(input.memory_events))
    local want_rank = e.rank == nil and cjson.null or e.rank
    check(input.rank == want_rank, name .. ": rank = " .. tostring(e.rank), "got " .. tostring(input.rank))
    local allocs, frees, matched, mism, ndev, live = 0, 0, 0, 0, 0, 0
    for _, s in ipairs(doc.series) do
      allocs, frees, matched = allocs + s.allocs, frees + s.frees, matched + s.matched_frees
      mism = mism + s.mismatches
      ndev = ndev + 1
      live = live + s.allocs - s.matched_frees
      check(e.devices[s.device] == s.memory_events, ("%s: %s has %s memory events"):format(name, s.device,
        tostring(e.devices[s.device])), "got " .. s.memory_events)
      local sum_end = 0
      for _, c in ipairs(s.categories) do sum_end = sum_end + c.end_bytes end
      check(sum_end == s.end_bytes, ("%s: %s categories sum to end_bytes"):format(name, s.device))
    end
    local want_dev = 0
    for _ in pairs(e.devices) do want_dev = want_dev + 1 end
    check(ndev == want_dev, name .. ": " .. want_dev .. " devices", "got " .. ndev)
    check(allocs == e.allocs and frees == e.frees, ("%s: %d allocs / %d frees"):format(name, e.allocs, e.frees),
      ("got %d / %d"):format(allocs, frees))
    check(mism == 0, name .. ": zero mismatches with Total Allocated", mism .. " mismatches")
    if e.pairs then
      check(matched == frees and live == e.live, ("%s: every free paired, %d live at end"):format(name, e.live),
        ("%d of %d frees paired, %d live"):format(matched, frees, live))
    end

    -- The invariant, row by row, from the files hmem wrote.
    local t, v = csv_rows(tl), csv_rows(ev)
    local ncat, bad, checked, first = #t[1] - 8, 0, 0, nil
    local tai = 8 -- total_allocated column of the events CSV
    for i = 2, #t do
      local sum = 0
      for c = 9, #t[i] do sum = sum + math.tointeger(t[i][c]) end
      local alloc = math.tointeger(t[i][7])
      local ta = v[i] and math.tointeger(v[i][tai])
      if sum ~= alloc or (ta and ta ~= alloc) or v[i][4] ~= t[i][4] then
        bad = bad + 1
        first = first or ("row %d: sum %s allocated %s Total Allocated %s"):format(i, sum, alloc, tostring(ta))
      end
      if ta then checked = checked + 1 end
    end
    check(#t == e.memory + 1 and #v == e.memory + 1, name .. ": one timeline and one events row per memory event",
      ("%d / %d rows"):format(#t - 1, #v - 1))
    check(bad == 0, ("%s: sum of %d categories = Total Allocated after every event (%d with the field)")
      :format(name, ncat, checked), first)
  end
  os.remove(json); os.remove(tl); os.remove(ev)
end
os.remove(tmp)

-- Every shipped pack on every real trace: it loads, the totals still match the trace after
-- every event, and a pack that declares its categories returns only those.
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
for _, pack in ipairs({ "size", "op", "phase", "lifetime", "pytorch" }) do
  -- op names its categories after the ops it meets: only the others are closed lists
  local declared = pack ~= "op" and require("hmem.rules." .. pack).categories or nil
  local allowed = { ["(before trace)"] = true }
  for _, c in ipairs(declared or {}) do allowed[type(c) == "table" and c.name or c] = true end
  for _, e in ipairs(expected) do
    if e.memory > 0 then
      local path = "tests/data/" .. e.path
      local name = e.path:match("[^/]+$")
      local p = io.popen(("./hmem run -q %s %q --json -"):format(pack, path))
      local text = p:read("a")
      local ok_exit = p:close()
      local doc = ok_exit and cjson.decode(text)
      local mism, stray = 0, nil
      for _, s in ipairs(doc and doc.series or {}) do
        mism = mism + s.mismatches
        for _, c in ipairs(s.categories) do
          if declared and not allowed[c.name] then stray = stray or c.name end
        end
      end
      check(doc and mism == 0 and not stray, ("pack %s on %s: loads, zero mismatches%s"):format(pack, name,
        declared and ", only declared categories" or ""), doc and (stray and ("returned " .. stray) or (mism .. " mismatches")) or "run failed")
    end
  end
end

-- Results never depend on -j: one trace on one thread (everything inline) and on three
-- (inflating, scanning and parsing events each on its own thread), and the whole directory
-- read 1, 2 and 8 traces at a time, give the same --json byte for byte.
local function run_json(args, env)
  local p = io.popen((env or "") .. "./hmem run -q pytorch " .. args .. " --json - 2>&1")
  local text = p:read("a")
  local ok_exit = p:close()
  return ok_exit and text or nil
end
for _, e in ipairs(expected) do
  local path = ("%q"):format("tests/data/" .. e.path)
  local one, three = run_json(path .. " -j 1"), run_json(path .. " -j 3")
  check(one and one == three, e.path:match("[^/]+$") .. ": same --json with -j 1 and -j 3",
    one and "outputs differ" or "run failed")
end
local dir1 = run_json("tests/data -j 1")
check(dir1 and dir1 == run_json("tests/data -j 2") and dir1 == run_json("tests/data -j 8"),
  "tests/data: same --json with -j 1, -j 2 and -j 8", dir1 and "outputs differ" or "run failed")

-- Which thread walks an event's members (the scanner while the parser lags behind, by
-- default) never changes the result: each fixed way gives the same --json.
for _, e in ipairs(expected) do
  local path = ("%q -j 3"):format("tests/data/" .. e.path)
  local scanner, handler = run_json(path, "HMEM_WALK=scanner "), run_json(path, "HMEM_WALK=handler ")
  check(scanner and scanner == handler and scanner == run_json(path), e.path:match("[^/]+$") ..
    ": same --json with HMEM_WALK=scanner, =handler and by default", scanner and "outputs differ" or "run failed")
end

-- The block scan's vector code (AVX-512 where the CPU has it) and the baseline code
-- (HMEM_SIMD=base) read every real trace the same.
for _, e in ipairs(expected) do
  local path = ("%q"):format("tests/data/" .. e.path)
  local wide, base = run_json(path), run_json(path, "HMEM_SIMD=base ")
  check(wide and wide == base, e.path:match("[^/]+$") .. ": same --json with HMEM_SIMD=base",
    wide and "outputs differ" or "run failed")
end
