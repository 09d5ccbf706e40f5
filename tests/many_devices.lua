-- A trace with many devices (issue 11, "Trust": each event searched the devices one by one,
-- so time grew with events x devices). Used by tests/cli/inputs_trust.t.
--
--   lua5.4 tests/many_devices.lua [N]
--
-- Writes a trace of N devices (default 20000) in a temporary directory: half cuda, half hip,
-- ids first met in a scrambled order. Device k (at place p of the scramble) has three events,
-- each in its own round over all devices (ts = round * N + p + 1 µs), at the same addresses on
-- every device, so a free pairs only if it is matched within its own device:
--   alloc 512 * (k + 1) at 4096, alloc 256 at 8192, free 512 * (k + 1) at 4096.
-- By hand: 3 events, 2 allocs, 1 free, matched; peak 512 * (k + 1) + 256 at the second
-- alloc (ts N + p + 1); 256 at the end. Series come sorted by device type, then id.
-- hmem run size --json is checked series by series against that.
local cjson = require "cjson"
local t = dofile("tests/testlib.lua")

local N = tonumber(arg[1]) or 20000

local dir, cleanup = t.tmpdir()
local trace = dir .. "/devices.json"
local device, sh = t.device, t.sh

local at = t.write_many_devices(trace, N) -- k -> place in the scramble

local text, code = sh("hmem run size -q " .. trace .. " --json -")
cleanup()
if code ~= 0 then error("hmem run failed: " .. text) end
local series = cjson.decode(text).series

local bad, shown = 0, 0
local function expect(i, what, got, want)
  if got ~= want then
    bad = bad + 1
    if shown < 5 then
      shown = shown + 1
      print(("series %d: %s is %s, by hand %s"):format(i, what, tostring(got), tostring(want)))
    end
  end
end
print(("%d series for %d devices"):format(#series, N))
for i, s in ipairs(series) do
  -- Sorted: the cuda devices (even k) by id, then the hip ones (odd k).
  local half = (N + 1) // 2
  local k = i <= half and 2 * (i - 1) or 2 * (i - half - 1) + 1
  local dtype, did = device(k)
  local p = at[k]
  expect(i, "device", s.device, (dtype == 1 and "cuda:" or "hip:") .. did)
  expect(i, "memory_events", s.memory_events, 3)
  expect(i, "allocs", s.allocs, 2)
  expect(i, "frees", s.frees, 1)
  expect(i, "matched_frees", s.matched_frees, 1)
  expect(i, "before_trace_bytes", s.before_trace_bytes, 0)
  expect(i, "peak_bytes", s.peak_bytes, 512 * (k + 1) + 256)
  expect(i, "peak_ts", s.peak_ts, N + p + 1)
  expect(i, "end_bytes", s.end_bytes, 256)
end
print(bad == 0 and "every series as computed by hand" or ("%d values differ from the hand computation"):format(bad))
os.exit(bad == 0 and #series == N and 0 or 1)
