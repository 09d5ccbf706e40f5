-- Memory per input file follows what the file holds (issue 11, "Trust": each file cost about
-- 50 KB whatever it held, 1 GB for 20,000 one-event files). Used by tests/cli/inputs_trust.t.
--
--   lua5.4 tests/many_files.lua [N]
--
-- Writes N one-event traces (default 2000) into a folder and one of them into another, runs
-- hmem run size on each folder under /usr/bin/time -f %M (peak RSS, KB; Debian package time),
-- and divides the difference by N - 1: it must stay under 20 KB a file (the event, its columns,
-- its series and names take well under 1 KB; hash tables and allocator rounding the rest).
-- ASan builds run with quarantine_size_mb=0 so freed blocks are not counted.
local N = tonumber(arg[1]) or 2000
local sh = dofile("tests/testlib.lua").sh

local dir = assert(sh("mktemp -d")):gsub("%s+$", "")
local function cleanup() os.execute("rm -rf '" .. dir .. "'") end
assert(os.execute("mkdir '" .. dir .. "/many' '" .. dir .. "/one'"))
for i = 1, N do
  local f = assert(io.open(("%s/many/t%05d.json"):format(dir, i), "wb"))
  f:write(('{"traceEvents": [{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, '
    .. '"tid": 1, "ts": %d, "args": {"Addr": %d, "Bytes": 512, "Device Type": 1, "Device Id": 0}}]}\n'):format(i, 4096 * i))
  f:close()
end
assert(os.execute(("cp '%s/many/t00001.json' '%s/one/'"):format(dir, dir)))

local rss, files = {}, {}
for _, t in ipairs({"one", "many"}) do
  local out, code = sh(("ASAN_OPTIONS=quarantine_size_mb=0 /usr/bin/time -f %%M -o '%s/%s.rss' hmem run size -q '%s/%s' "
    .. "--json - | lua5.4 tests/jget.lua inputs.# series.#"):format(dir, t, dir, t))
  if code ~= 0 then cleanup() error("hmem run failed on " .. t .. ": " .. out) end
  files[t] = out:gsub("\n", " "):gsub(" $", "")
  local r = assert(io.open(("%s/%s.rss"):format(dir, t)))
  rss[t] = tonumber(r:read("a"):match("(%d+)%s*$"))
  r:close()
end
cleanup()

print(("inputs and series: %s in one, %s in many"):format(files.one, files.many))
local per = (rss.many - rss.one) / (N - 1)
local ok = per < 20
print(ok and "peak RSS per file: under 20 KB" or ("peak RSS per file: %.1f KB (%d KB for 1 file, %d KB for %d)"):format(per, rss.one, rss.many, N))
os.exit(ok and 0 or 1)
