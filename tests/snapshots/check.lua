-- Memory snapshots (issue 18): hmem's figures against those the generator computed from its
-- own simulation (tests/snapshots/gen.py), for every snapshot generation and pickle protocol
-- 2 to 5; and the real snapshots of tests/data/snapshots against sums Python's pickle makes of
-- the same (trusted) files. Prints a plan, then "ok - ..." / "not ok - ..." lines.
local cjson = require "cjson"
local T = assert(io.popen("mktemp -d")):read("l")
local results = {}

local function check(ok, name, detail)
  results[#results + 1] = (ok and "ok - " or "not ok - ") .. name .. ((not ok and detail) and (" (" .. detail .. ")") or "")
end

local function sh(cmd)
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  local ok, _, code = p:close()
  return out, ok and 0 or code
end

-- The --json document (or nil and the error) and what hmem wrote on standard error.
local function hmem_json(rules, file)
  local out, code = sh("hmem run " .. rules .. " '" .. file .. "' --json - 2>" .. T .. "/stderr")
  local f = assert(io.open(T .. "/stderr"))
  local err = f:read("a")
  f:close()
  if code ~= 0 then return nil, err end
  return cjson.decode(out), err
end

local _, gcode = sh("python3 tests/snapshots/gen.py " .. T .. " 2>&1")
check(gcode == 0, "the generator writes the snapshots")
local f = assert(io.open(T .. "/expected.json"))
local expected = cjson.decode(f:read("a"))
f:close()

local names = {}
for name in pairs(expected) do names[#names + 1] = name end
table.sort(names)

-- Category end bytes as name -> bytes, without the empty ones.
local function ends(series)
  local t = {}
  for _, c in ipairs(series.categories) do
    if c.end_bytes ~= 0 then t[c.name] = c.end_bytes end
  end
  return t
end

local function same(a, b)
  for k, v in pairs(a) do if b[k] ~= v then return false, k .. ": " .. tostring(v) .. " vs " .. tostring(b[k]) end end
  for k, v in pairs(b) do if a[k] ~= v then return false, k .. ": " .. tostring(a[k]) .. " vs " .. tostring(v) end end
  return true
end

for _, name in ipairs(names) do
  local exp = expected[name]
  local path = T .. "/" .. name
  local by_size, err = hmem_json("size", path)
  local warned = err and err:find("the snapshot's ring buffer overflowed", 1, true) ~= nil
  local by_frame = hmem_json("tests/snapshots/by_frame.lua", path)
  if not by_size or not by_frame then
    check(false, name .. " loads", err)
  else
    local ooms, nseries = 0, 0
    for dev, e in pairs(exp.devices) do
      local s, sf
      for _, x in ipairs(by_size.series) do if x.device == dev then s = x end end
      for _, x in ipairs(by_frame.series) do if x.device == dev then sf = x end end
      if not s or not sf then
        check(false, name .. " " .. dev .. " has a series")
      else
        nseries = nseries + 1
        ooms = ooms + e.oom
        local got = {}
        for _, k in ipairs { "before_trace_bytes", "peak_bytes", "end_bytes", "max_reserved_bytes", "memory_events" } do
          got[#got + 1] = k .. "=" .. tostring(s[k] == e[k] or (tostring(s[k]) .. " expected " .. tostring(e[k])))
        end
        local all = table.concat(got, " ")
        check(not all:find("expected"), name .. " " .. dev .. ": before trace, peak, end, reserved, events", all)
        local ok, why = same(ends(s), e.end_by_size)
        check(ok, name .. " " .. dev .. ": end bytes by the size pack's categories", why)
        ok, why = same(ends(sf), e.end_by_frame)
        check(ok, name .. " " .. dev .. ": end bytes by row.frame", why)
        -- issue 18: oom entries in the OOM report, with what only a snapshot has
        local bad = #s.ooms ~= #e.ooms and ("%d OOMs, expected %d"):format(#s.ooms, #e.ooms) or nil
        for i, eo in ipairs(e.ooms) do
          local o = s.ooms[i] or {}
          for _, k in ipairs { "ts", "bytes", "device_free", "allocated", "total_reserved", "frame", "freed_after" } do
            local want = eo[k]
            if not bad and tostring(o[k]) ~= tostring(want) then
              bad = ("OOM %d %s: %s, expected %s"):format(i, k, tostring(o[k]), tostring(want))
            end
          end
        end
        check(not bad, name .. " " .. dev .. ": OOMs (time, request, device_free, allocated, reserved, frame, freed after)", bad)
        -- issue 18: the segments at each OOM (by replay) and at the end, as the simulation had them
        local function differ(got, want, what)
          if type(got) ~= "table" then return what .. ": " .. tostring(got) end
          for k, v in pairs(want) do
            if got[k] ~= v then return ("%s %s: %s, expected %s"):format(what, k, tostring(got[k]), tostring(v)) end
          end
        end
        bad = nil
        for i, eo in ipairs(e.ooms) do bad = bad or differ((s.ooms[i] or {}).segments, eo.segments, "OOM " .. i) end
        check(not bad, name .. " " .. dev .. ": segments at each OOM", bad)
        bad = differ((s.snapshot or {}).at_end, e.at_end, "at the end")
        check(not bad, name .. " " .. dev .. ": segments, blocks and internal waste at the end", bad)
      end
    end
    local inp = by_size.inputs[1]
    -- issue 18: a ring buffer that dropped entries is said, in --json and on standard error
    check(inp.trace_alloc_overflowed == exp.overflowed and warned == (exp.overflowed == true),
      name .. ": trace_alloc_overflowed in inputs[] and the warning",
      ("%s, expected %s; warned %s"):format(tostring(inp.trace_alloc_overflowed), tostring(exp.overflowed), tostring(warned)))
    check(inp.oom_events == ooms and inp.host_slices == exp.annotations,
      name .. ": oom entries and record_function ranges counted",
      ("oom %s/%s annotations %s/%s"):format(inp.oom_events, ooms, inp.host_slices, exp.annotations))
  end
end

-- The real snapshots: what Python's pickle finds in them, summed here, against hmem.
local real = { "tests/data/snapshots/sketchkv2_my_snapshot.pickle", "tests/data/snapshots/docubox_dump_snapshot.pickle" }
for _, path in ipairs(real) do
  local py = sh([[python3 -c 'import pickle,sys; s=pickle.load(open(sys.argv[1],"rb")); g=s["segments"]; ]] ..
    [[print(sum(b.get("requested_size",b["size"]) for x in g for b in x["blocks"] if b["state"].startswith("active")), ]] ..
    [[sum(x["total_size"] for x in g), len(g) + sum(len(t) for t in s["device_traces"]))' ]] .. path)
  local live, reserved, entries = py:match("(%d+) (%d+) (%d+)")
  local j, err = hmem_json("size", path)
  if not j then
    check(false, path .. " loads", err)
  else
    local s = j.series[1]
    check(s.end_bytes == tonumber(live) and s.max_reserved_bytes == tonumber(reserved) and
      j.inputs[1].events == tonumber(entries) and s.mismatches == 0,
      path .. ": live bytes, reserved bytes, segments and entries as Python's pickle reads them",
      ("%s/%s %s/%s %s/%s"):format(s.end_bytes, live, s.max_reserved_bytes, reserved, j.inputs[1].events, entries))
  end
end

os.execute("rm -rf '" .. T .. "'")
print("1.." .. #results)
for _, r in ipairs(results) do print(r) end
