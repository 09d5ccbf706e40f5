-- Across ranks (issue 16): the cross-rank rows of --json, --format csv and done(report)
-- against figures worked out by hand from the allocations of tests/tiny/ranks (every
-- allocation is live to the end, so a peak is the sum of its allocations); the warning on
-- a rank two traces claim; and on tests/data, the rows against the series' own peaks,
-- recomputed here. Usage: lua5.4 tests/ranks.lua   (hmem in the repository root)
local cjson = require "cjson"
local csv = dofile("tests/csv.lua")
local lib = dofile("tests/testlib.lua")
local check, count = lib.tap()
local sh = lib.run
local T = assert(io.popen("mktemp -d")):read("l")
local rules = "tests/tiny/ranks/rules.lua"

-- cuda peaks by rank: 100, 300+1, 200, 990+10; "big" (>= 100 bytes): 100, 300, 200, 990;
-- "small": 0, 1, 0, 10. cpu: rank 0 50, rank 1 70 (both "small"); ranks 2 and 3 have no cpu.
--   cuda peak: sorted 100 200 301 1000: median (200 + 301) / 2 = 250.5 -> 250; mean 1601 / 4
--     = 400.25 -> 400; max/mean 1000 * 4 / 1601 = 2.4984 -> 2.498
--   big: sorted 100 200 300 990: median 250; mean 1590 / 4 = 397.5 -> 397; 990 * 4 / 1590 = 2.4906 -> 2.491
--   small: sorted 0 0 1 10: median (0 + 1) / 2 -> 0; mean 11 / 4 -> 2; 10 * 4 / 11 = 3.6364 -> 3.636
--   cpu peak and small: 50 70: median 60, mean 60; 70 * 2 / 120 = 1.1667 -> 1.167
-- Kinds by their highest peak: cuda (1000 B) before cpu (70 B), though cpu series come first.
local expected = {
  {"cuda", nil, 4, 1000, "w3.json", 3, "cuda:0", 100, 250, 400, 2.498},
  {"cuda", "big", 4, 990, "w3.json", 3, "cuda:0", 100, 250, 397, 2.491},
  {"cuda", "small", 4, 10, "w3.json", 3, "cuda:0", 0, 0, 2, 3.636},
  {"cpu", nil, 2, 70, "w1.json", 1, "cpu", 50, 60, 60, 1.167},
  {"cpu", "small", 2, 70, "w1.json", 1, "cpu", 50, 60, 60, 1.167},
}
local keys = {"device_kind", "category", "series", "max_bytes", "max_path", "max_rank", "max_device", "min_bytes",
  "median_bytes", "mean_bytes", "imbalance"}

local function same(row, e)
  for i, k in ipairs(keys) do
    local v, want = row[k], e[i]
    if k == "max_path" then want = "tests/tiny/ranks/" .. want end
    if v == cjson.null then v = nil end
    if type(want) == "number" and k == "imbalance" then
      if math.abs((tonumber(v) or -1) - want) > 1e-9 then return false, k .. " " .. tostring(v) end
    elseif (type(want) == "number" and tonumber(v) ~= want) or (type(want) ~= "number" and v ~= want) then
      return false, k .. " " .. tostring(v)
    end
  end
  return true
end

local code, done = sh(("./hmem run -q %s tests/tiny/ranks --json %s/r.json"):format(rules, T))
local j = cjson.decode(io.open(T .. "/r.json"):read("a"))
check(#j.ranks == #expected, "--json ranks: a row per kind's peak and per category with a peak", #j.ranks)
for i, e in ipairs(expected) do
  local ok, why = same(j.ranks[i] or {}, e)
  check(ok, ("--json ranks[%d]: %s %s"):format(i, e[1], e[2] or "(device peak)"), why)
end

-- done(report): report.ranks, one printed line per row, in the same order
local lines = {}
for l in done:gmatch("[^\n]+") do lines[#lines + 1] = l end
check(code == 0 and #lines == #expected, "done(report) sees report.ranks", done)
for i, e in ipairs(expected) do
  local want = ("%s %s %d max %d tests/tiny/ranks/%s %d %s min %d median %d mean %d imbalance %.3f"):format(e[1],
    e[2] or "-", e[3], e[4], e[5], e[6], e[7], e[8], e[9], e[10], e[11])
  check(lines[i] == want, ("report.ranks[%d]: %s %s"):format(i, e[1], e[2] or "(device peak)"), lines[i])
end

-- --format csv (done(report) prints its lines among them): the series rows (what = series), then one row per cross-rank row
local _, out = sh(("./hmem run -q %s tests/tiny/ranks --format csv"):format(rules))
local rows, head = {}, nil
for l in out:gmatch("[^\n]+") do
  local f = csv.split(l)
  if not l:find(",", 1, true) then -- a line done(report) printed
  elseif not head then
    head = f
  else
    local r = {}
    for i, k in ipairs(head) do r[k] = f[i] ~= "" and f[i] or nil end
    rows[#rows + 1] = r
  end
end
local ranks, series = {}, 0
for _, r in ipairs(rows) do
  if r.what == "series" then series = series + 1 else ranks[#ranks + 1] = r end
end
-- series rows: one per used category, "(before trace)" included: w0 cuda 2, cpu 2; w1 cuda 3,
-- cpu 2; w2 cuda 2; w3 cuda 3
check(series == 14 and #ranks == #expected, "--format csv: the series rows, then a row per cross-rank row",
  ("%d series rows, %d rank rows"):format(series, #ranks))
for i, e in ipairs(expected) do
  local r = ranks[i] or {}
  local row = {device_kind = r.device_kind, category = r.category, series = r.series, max_bytes = r.max_bytes,
    max_path = r.path, max_rank = r.rank, max_device = r.device, min_bytes = r.min_bytes,
    median_bytes = r.median_bytes, mean_bytes = r.mean_bytes, imbalance = r.imbalance}
  local ok, why = same(row, e)
  ok = ok and r.what == (e[2] and "rank_category" or "rank_peak")
  check(ok, ("--format csv rank row %d: %s %s"):format(i, e[1], e[2] or "(device peak)"), why or r.what)
end

-- a single trace: no cross-rank rows
_, out = sh("./hmem run -q size tests/tiny/ranks/w2.json --json -")
check(out:find('"ranks": [],', 1, true), "one series per kind: --json ranks is empty", out:sub(1, 300))

-- Two traces claiming one rank for one device kind: a warning naming both (once per rank and
-- kind), silent with -q; the report still counts both series.
os.execute(("mkdir -p %s/dup && cp tests/tiny/ranks/w*.json %s/dup/ && cp tests/tiny/ranks/w1.json %s/dup/again.json"):format(T, T, T))
code, out = sh(("./hmem run size %s/dup --json %s/dup.json"):format(T, T))
local _, warned = out:gsub("warning: rank 1 is claimed by two traces", "")
check(code == 0 and out:find(("hmem: warning: rank 1 is claimed by two traces for cuda: %s/dup/again.json and %s/dup/w1.json"):format(T, T), 1, true)
  and out:find(("rank 1 is claimed by two traces for cpu: %s/dup/again.json and %s/dup/w1.json"):format(T, T), 1, true)
  and warned == 2, "a rank two traces claim: warned once per device kind, naming both traces", out)
local dj = cjson.decode(io.open(T .. "/dup.json"):read("a"))
check(dj.ranks[1].series == 5, "the report still counts both series of the duplicated rank", dj.ranks[1].series)
_, out = sh(("./hmem run -q size %s/dup --json %s/dup.json"):format(T, T))
check(out == "", "-q silences the duplicate-rank warning", out)
-- sharded: the shards stay quiet (each sees some ranks), the merge warns once
local p0, p1 = T .. "/d0.db", T .. "/d1.db"
local _, s0 = sh(("./hmem run size %s/dup --shard 0/2 --partial %s"):format(T, p0))
local _, s1 = sh(("./hmem run size %s/dup --shard 1/2 --partial %s"):format(T, p1))
_, out = sh(("./hmem merge size %s %s --json %s/m.json"):format(p0, p1, T))
_, warned = out:gsub("warning: rank 1 is claimed", "")
check(not (s0 .. s1):find("claimed") and warned == 2, "shards do not warn of duplicate ranks; the merge does",
  s0 .. s1 .. out)

-- tests/data: the rows recomputed from the series' own peaks (device peak rows)
_, out = sh(("./hmem run -q size tests/data --json %s/data.json"):format(T))
local d = cjson.decode(io.open(T .. "/data.json"):read("a"))
local kinds, order = {}, {}
for _, s in ipairs(d.series) do
  local k = s.device:match("^[^:]+")
  if not kinds[k] then kinds[k] = {}; order[#order + 1] = k end
  table.insert(kinds[k], s)
end
local got = {}
for _, r in ipairs(d.ranks) do if r.category == cjson.null then got[r.device_kind] = r end end
local nk = 0
for _, k in ipairs(order) do
  local ss = kinds[k]
  if #ss >= 2 then
    nk = nk + 1
    local v, sum, top = {}, 0, ss[1]
    for _, s in ipairs(ss) do
      v[#v + 1] = s.peak_bytes
      sum = sum + s.peak_bytes
      if s.peak_bytes > top.peak_bytes then top = s end
    end
    table.sort(v)
    local m = #v // 2
    local median = #v % 2 == 1 and v[m + 1] or (v[m] + v[m + 1]) // 2
    local r = got[k] or {}
    local ok = r.series == #ss and r.max_bytes == top.peak_bytes and r.max_path == top.path and r.max_device == top.device
      and r.min_bytes == v[1] and r.median_bytes == median and r.mean_bytes == sum // #ss
      and math.abs(r.imbalance - math.floor(top.peak_bytes * #ss * 1000 / sum + 0.5) / 1000) < 1e-9
    check(ok, ("tests/data: %s across %d series, from the series' peaks"):format(k, #ss), cjson.encode(r))
  end
end
check(nk >= 3, "tests/data has three device kinds with several series (cpu, cuda, hip)", nk)
_, out = sh("./hmem run size tests/data/tracelens/inference --json " .. T .. "/inf.json")
check(out:find("warning: rank 0 is claimed by two traces for hip: tests/data/tracelens/inference/sglang", 1, true),
  "tests/data: the two inference traces both say rank 0: warned", out)
os.execute("rm -rf '" .. T .. "'")
print("1.." .. count())
