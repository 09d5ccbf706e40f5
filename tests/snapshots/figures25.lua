-- hmem's side of tests/snapshots/replay25.py (issue 25): the same figures, named the same, from
-- hmem run --json on standard input (series 1, or the series named by arg[1]).
--   hmem run -q size FILE --json - | lua5.4 tests/snapshots/figures25.lua [DEVICE] [--from]
local cjson = require "cjson"
local doc = cjson.decode(io.read("a"))
local want, window = nil, false
for _, a in ipairs(arg) do
  if a == "--from" then window = true else want = a end
end
local s = doc.series[1]
for _, x in ipairs(doc.series) do
  if x.device == want then s = x end
end
local function n(v)
  if v == nil or v == cjson.null then return "null" end
  return math.tointeger(v) and string.format("%d", math.tointeger(v)) or tostring(v)
end
if window then
  print("open " .. n(s.before_trace_bytes))
  print("peak " .. n(s.peak_bytes))
  print("peak_us " .. n(s.peak_ts))
  return
end
local ooms = {}
for _, o in ipairs(s.ooms) do ooms[#ooms + 1] = n(o.reserved_unallocated) end
local e = s.snapshot and s.snapshot.at_end or {}
for _, kv in ipairs {
  { "rows", s.allocs }, { "baseline", s.before_trace_bytes }, { "peak", s.peak_bytes }, { "peak_us", s.peak_ts },
  { "gap_at_peak", s.reserved_unallocated_at_peak }, { "max_gap", s.max_reserved_unallocated },
  { "max_gap_us", s.max_reserved_unallocated_ts }, { "ooms", #ooms > 0 and table.concat(ooms, ",") or "-" },
  { "memviz_internal", e.internal_free_bytes }, { "memviz_external", e.external_free_bytes },
} do
  print(kv[1] .. " " .. (type(kv[2]) == "string" and kv[2] or n(kv[2])))
end
