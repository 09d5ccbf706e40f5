-- The trace shapes of scripts/gen-trace (make bench reads each, issue 19) are valid traces:
-- each shape, written small, and a folder of ranks, checked against what the file itself says
-- (decoded with lua-cjson, no hmem code):
-- - the trace's own Total Allocated after every event = the total before it + the running sum
--   of Bytes (tests/reference.lua), so the shape is self-consistent;
-- - hmem's memory events per series = the [memory] events of the file;
-- - for the size and op packs, hmem's peak and end per series = the largest and the last Total
--   Allocated of the file, and its categories add up to both (bytes at the peak, at the end).
local cjson = require "cjson"
local t = dofile("tests/testlib.lua")
local ref = dofile("tests/reference.lua")
local dir, cleanup = t.tmpdir()

local function check(ok, name, detail)
  print((ok and "ok - " or "not ok - ") .. name)
  if not ok and detail then print("#   " .. tostring(detail)) end
end

-- The memory events of a file: their count and the largest and last Total Allocated.
local function own(path)
  local f = assert(io.open(path))
  local doc = cjson.decode(f:read("a"))
  f:close()
  local n, peak, last = 0, nil, nil
  for _, e in ipairs(doc.traceEvents) do
    if e.name == "[memory]" then
      n = n + 1
      local ta = math.tointeger(e.args["Total Allocated"])
      last = ta
      if not peak or ta > peak then peak = ta end
    end
  end
  return { n = n, peak = peak, last = last }
end

-- Why hmem's --json disagrees with the files' own totals, or nil.
local function disagree(doc, files)
  if #doc.series == 0 then return "no series" end
  for _, s in ipairs(doc.series) do
    local w = files[s.path]
    if not w then return "a series of an unknown file: " .. tostring(s.path) end
    local at_peak, at_end = 0, 0
    for _, c in ipairs(s.categories) do
      at_peak, at_end = at_peak + c.bytes_at_peak, at_end + c.end_bytes
    end
    local got = { s.memory_events, s.peak_bytes, s.end_bytes, at_peak, at_end }
    local want = { w.n, w.peak, w.last, w.peak, w.last }
    local what = { "memory events", "peak", "end", "sum of categories at the peak", "sum of categories at the end" }
    for i = 1, #got do
      if math.tointeger(got[i]) ~= want[i] then
        return ("%s: %s %s, the file says %s"):format(s.path, what[i], tostring(got[i]), tostring(want[i]))
      end
    end
  end
end

local cases = {}
for _, shape in ipairs({ "mixed", "host", "unique", "memory", "long" }) do
  local path = dir .. "/" .. shape .. ".json"
  local _, rc = t.sh(("build/gen-trace --shape %s --mb 1 > %s"):format(shape, path))
  cases[#cases + 1] = { name = "shape " .. shape, arg = path, files = { path }, rc = rc }
end
local _, rc = t.sh(("mkdir %s/ranks && build/gen-trace --shape host --mb 3 --ranks 3 --dir %s/ranks"):format(dir, dir))
cases[#cases + 1] = { name = "3 ranks of shape host", arg = dir .. "/ranks", rc = rc,
  files = { dir .. "/ranks/rank0.json", dir .. "/ranks/rank1.json", dir .. "/ranks/rank2.json" } }

print("1.." .. #cases * 4)
for _, c in ipairs(cases) do
  local files, bad, first = {}, 0, nil
  for _, path in ipairs(c.files) do
    files[path] = c.rc == 0 and own(path) or { n = -1 }
    if c.rc == 0 then
      for _, s in ipairs(ref.series(ref.load(path), "size")) do
        bad = bad + s.ta_mismatches
        first = first or s.ta_first_mismatch
      end
    end
  end
  check(c.rc == 0 and bad == 0, c.name .. ": Total Allocated after every event = before + running sum of Bytes",
    c.rc ~= 0 and "gen-trace failed" or ("%d differ; the first: %s"):format(bad, tostring(first)))
  local doc = {}
  for _, pack in ipairs({ "size", "op" }) do
    local out, code = t.sh(("./hmem run -q %s %s --json -"):format(pack, c.arg))
    doc[pack] = code == 0 and cjson.decode(out) or nil
    local why = code ~= 0 and ("hmem exit " .. tostring(code)) or disagree(doc[pack], files)
    check(not why, ("%s: %s pack's peak, end and categories = the file's Total Allocated"):format(c.name, pack), why)
  end
  local slices = doc.size and doc.size.inputs[1].host_slices
  check(slices and slices > 0, c.name .. ": host slices read", "got " .. tostring(slices))
end
cleanup()
