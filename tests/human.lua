-- hmem.human prints a size as hm_fmt_bytes (util.c) does, for every size (issue 26: it once
-- printed "1024.00 KiB" where the summary printed "1.00 MiB"). A trace is made with one
-- allocation per size, around every unit's edges and at random; an
-- aggregation by ts_ns sums each row's bytes, which the summary prints through hm_fmt_bytes;
-- each is compared with hmem.human in plain Lua (lua/hmem) and in the rule file's done.
--   lua5.4 tests/human.lua [HMEM]   (default ./hmem; prints a plan, then ok / not ok lines)
package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
local hmem = require "hmem"
local bin = arg[1] or "./hmem"

local sizes, seen = {}, {}
local function add(v)
  v = math.floor(v)
  if v > 0 and not seen[v] and v < 2 ^ 53 then
    seen[v] = true
    sizes[#sizes + 1] = v
  end
end
for u = 0, 4 do
  local s = 1024 ^ u
  for _, b in ipairs{1, 1.005, 1.5, 9.995, 99.995, 512, 999.995, 1023, 1023.99, 1023.994, 1023.995, 1023.996, 1024} do
    for d = -2, 2 do add(b * s + d) end
  end
end
for _, b in ipairs{1, 1.5, 2.25, 7.999} do add(b * 1024 ^ 5) end
local x = 12345
for _ = 1, 200 do -- a fixed LCG: the same sizes each run
  x = (x * 1103515245 + 12345) % 2147483648
  local bits = x % 47
  x = (x * 1103515245 + 12345) % 2147483648
  add(2 ^ bits * (1 + x / 2147483648))
end

local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)
local f = assert(io.open(dir .. "/t.json", "w"))
f:write('{"traceEvents": [\n')
local at, n = {}, 0
local function ev(bytes, addr)
  n = n + 1
  at[n * 1000] = bytes
  f:write(n > 1 and ",\n" or "", ('{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": %d, "args": {"Bytes": %d, "Addr": %d, "Device Id": 0, "Device Type": 1}}'):format(n, bytes, addr))
end
for i, v in ipairs(sizes) do ev(v, 4096 * i) end
f:write("\n]}\n")
f:close()
f = assert(io.open(dir .. "/r.lua", "w"))
f:write([[
local hmem = require "hmem"
hmem.aggregate{name = "sizes", by = {"ts_ns"}, sum = "bytes"}
return {
  classify = function(row) return "x" end,
  done = function(report)
    for _, r in ipairs(report.aggregations.sizes.rows) do print("done", r.ts_ns, hmem.human(r.bytes)) end
  end,
}
]])
f:close()

local p = io.popen(("%s run %s/r.lua %s/t.json 2>&1"):format(bin, dir, dir))
local out = p:read("a")
p:close()
os.execute("rm -rf " .. dir)
local c_text, in_done = {}, {}
local agg = out:match("\naggregation sizes[^\n]*\n[^\n]*\n(.*)$") or ""
for line in agg:gmatch("[^\n]+") do
  local ts, text = line:match("^%s+%S+%s+%S+%s+(%d+)%s+%d+%s+(.-)%s*$")
  if ts then c_text[tonumber(ts)] = text end
end
for ts, text in ("\n" .. out):gmatch("\ndone\t(%d+)\t([^\n]*)") do in_done[tonumber(ts)] = text end

local keys = {}
for ts in pairs(at) do keys[#keys + 1] = ts end
table.sort(keys)
-- and the values the C unit tests pin (tests/unit.c test_format), negative ones among them
local pinned = {{0, "0 B"}, {1023, "1023 B"}, {1536, "1.50 KiB"}, {6629508096, "6.17 GiB"}, {-2048, "-2.00 KiB"},
  {math.mininteger, "-8192.00 PiB"}}
print("1.." .. (#keys * 2 + #pinned + 1))
print((#keys > 250 and "ok" or "not ok") .. (" - %d sizes, from %d B to %s"):format(#keys, 1, hmem.human(2 ^ 52)))
for _, ts in ipairs(keys) do
  local want, v = c_text[ts], at[ts]
  local got = hmem.human(v)
  print((want == got and "ok" or "not ok") .. (" - hmem.human(%d) is %q, as hm_fmt_bytes prints it (%q)"):format(v, got, tostring(want)))
  print((want == in_done[ts] and "ok" or "not ok") .. (" - in a rule file, hmem.human(%d) is %q too"):format(v, tostring(in_done[ts])))
end
for _, pv in ipairs(pinned) do
  local got = hmem.human(pv[1])
  print((got == pv[2] and "ok" or "not ok") .. (" - hmem.human(%d) is %q, as the C unit tests pin it (%q)"):format(pv[1], got, pv[2]))
end
