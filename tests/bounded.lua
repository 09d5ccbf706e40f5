-- Peak memory grows with what hmem keeps (memory events, ops and their names), not with the
-- file size (issue 6, "Nothing lost"; README "Inputs"). Used by tests/cli/bounded.t.
--
--   lua5.4 tests/bounded.lua
--
-- Three traces are made in a temporary directory: base (build/gen-trace --mb 8); padded, base
-- with a 3.8 KB string at the start of every event's args (about 10x the bytes, with the same
-- memory events and ops: args are not kept); and named, base with a unique 12 KB suffix on
-- every op name (names are kept, so hmem must hold those bytes). hmem run is measured under
-- /usr/bin/time -f %M (peak RSS, KB). Padded must stay within 1.25x base (plus one 2 MiB huge
-- page per column, see below); named must exceed 2x
-- base, which shows that the measure sees bytes hmem keeps. ASan builds run with
-- quarantine_size_mb=0 so freed blocks are not counted.
local sh = dofile("tests/testlib.lua").sh

local dir = assert(sh("mktemp -d")):gsub("%s+$", "")
local function path(name) return dir .. "/" .. name end
local function cleanup() os.execute("rm -rf '" .. dir .. "'") end

local _, rc = sh("build/gen-trace --mb 8 > " .. path("base.json"))
if rc ~= 0 then cleanup() error("build/gen-trace failed (make test builds it)") end
do
  local f = assert(io.open(path("base.json"), "rb"))
  local text = f:read("a")
  f:close()
  local pad = string.rep("x", 3800)
  local out = assert(io.open(path("padded.json"), "wb"))
  out:write((text:gsub('"args": {', '"args": {"pad": "' .. pad .. '", ')))
  out:close()
  local n, suffix = 0, string.rep("y", 12000)
  out = assert(io.open(path("named.json"), "wb"))
  out:write((text:gsub('("cat": "cpu_op", "name": "[^"]*)"', function(s)
    n = n + 1
    return s .. " #" .. n .. suffix .. '"'
  end)))
  out:close()
end

local size, rss, kept = {}, {}, {}
for _, t in ipairs({"base", "padded", "named"}) do
  local f = assert(io.open(path(t .. ".json"), "rb"))
  size[t] = f:seek("end")
  f:close()
  local out, code = sh("ASAN_OPTIONS=quarantine_size_mb=0 /usr/bin/time -f %M -o " .. path(t .. ".rss") ..
    " hmem run -q tests/tiny/rules/by_size.lua " .. path(t .. ".json") .. " --json - | lua5.4 tests/jget.lua inputs.1.memory_events inputs.1.ops")
  if code ~= 0 then cleanup() error("hmem run failed on " .. t .. ": " .. out) end
  kept[t] = out:gsub("\n", " ")
  local r = assert(io.open(path(t .. ".rss")))
  rss[t] = tonumber(r:read("a"):match("(%d+)%s*$"))
  r:close()
end
cleanup()

local function check(ok, what, detail)
  print(what .. (ok and "" or ("  FAILED: " .. detail)))
end
check(size.padded >= 9.5 * size.base, "padded file: about 10x the bytes of base",
  ("%d vs %d bytes"):format(size.padded, size.base))
check(kept.padded == kept.base, "padded: the same memory events and ops as base", kept.padded .. "vs " .. kept.base)
-- Columns are sized from the file up front: untouched room is address space only, but the
-- first touch of a big column takes a whole 2 MiB huge page, so a big file may add up to
-- one huge page to each of the 16 columns (a bound that does not grow with the file).
local huge = 16 * 2048
check(rss.padded < 1.25 * rss.base + huge, "peak RSS of padded: within 1.25x base, plus a 2 MiB huge page per column",
  ("%d KB vs %d KB"):format(rss.padded, rss.base))
check(kept.named == kept.base, "named: the same memory events and ops as base", kept.named .. "vs " .. kept.base)
check(rss.named > 2 * rss.base, "peak RSS of named (the extra bytes are kept): more than 2x base",
  ("%d KB vs %d KB"):format(rss.named, rss.base))
