-- Scale-out (issue 16): for every sharding (1, 2, 3, 4 shards and one trace per shard,
-- the partials given in an order other than the shards'), every output of hmem merge is
-- byte-identical to one hmem run over all traces: --json, --html, --timeline, --perfetto,
-- --db, the text summary, --format csv and json, and what done(report) wrote. Over
-- tests/data and over tests/tiny/scale, traces built so that the order categories are
-- first seen in and the top 3 groups of an aggregation come out wrong when each shard's
-- results are merged as they are (checked against the expected text, not hmem's own).
-- Then the refusals: partials of another hmem, rule file or option set; a missing, a
-- duplicated and a failed shard.
local tmp = os.tmpname()
os.remove(tmp)
os.execute("mkdir -p " .. tmp)
local lib = dofile("tests/testlib.lua")
local check, count = lib.tap()
local sh = lib.run

local function slurp(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local rules = "tests/tiny/scale/rules.lua"
-- HMEM_TEST_SHORT=1 (.ci/run's sanitizer pass; the plain make test runs every sharding): the
-- shardings that differ most (2 shards and one trace per shard; 1, 3 and 7 under a window).
local short = os.getenv("HMEM_TEST_SHORT") == "1"
local outputs = {"json", "html", "timeline", "perfetto", "db"}

-- hmem run (or merge) writing every output under prefix; stdout of the three summaries.
local function all_outputs(cmd, prefix)
  local got = {}
  local args = {}
  for _, o in ipairs(outputs) do args[#args + 1] = ("--%s %s.%s"):format(o, prefix, o) end
  local code, out = sh(cmd .. " -q --summary --color never " .. table.concat(args, " "))
  got.rc, got.text = code, out
  got.done = slurp(tmp .. "/done.txt")
  for _, o in ipairs(outputs) do got[o] = slurp(prefix .. "." .. o) end
  code, got.csv = sh(cmd .. " -q --format csv")
  code, got.fjson = sh(cmd .. " -q --format json")
  return got
end

local function count_files(dir)
  local c = 0
  local p = io.popen("./hmem plan " .. dir)
  for l in p:lines() do if not l:match("^#") then c = c + 1 end end
  p:close()
  return c
end

local function contract(dir, label)
  local base = ("./hmem run %s %s --out %s"):format(rules, dir, tmp)
  local one = all_outputs(base, tmp .. "/one")
  check(one.rc == 0 and one.json and one.done, label .. ": one run writes every output", one.text)
  local nfiles = count_files(dir)
  for _, shards in ipairs(short and {2, nfiles} or {1, 2, 3, 4, nfiles}) do
    local parts = {}
    local failed
    for i = 0, shards - 1 do
      local part = ("%s/part-%d-of-%d.db"):format(tmp, i, shards)
      local code, out = sh(("%s -q --shard %d/%d --partial %s"):format(base, i, shards, part))
      if code ~= 0 then failed = out end
      table.insert(parts, 1, part) -- given to the merge in reverse order
    end
    table.insert(parts, table.remove(parts, 1)) -- and rotated
    os.remove(tmp .. "/done.txt")
    local m = all_outputs(("./hmem merge %s %s --out %s"):format(rules, table.concat(parts, " "), tmp), tmp .. "/merged")
    local bad = failed and "a shard failed: " .. failed or m.rc ~= 0 and "merge exit " .. tostring(m.rc) .. ": " .. m.text
    for _, k in ipairs({"json", "html", "timeline", "perfetto", "db", "text", "csv", "fjson", "done"}) do
      if not bad and m[k] ~= one[k] then bad = k .. " differs" end
    end
    check(not bad, ("%s: %d shards merged are byte-identical to one run (every output)"):format(label, shards), bad)
  end
  return one
end

local tiny = contract("tests/tiny/scale", "constructed traces")
check(tiny.done and tiny.done:find("categories: (before trace), p, q, r, s, t, u, v\n", 1, true),
  "constructed traces: categories in the order first seen across the traces (not the shards')", tiny.done)
check(tiny.done and tiny.done:find("top r 2 165\ntop t 2 155\ntop u 2 110\n", 1, true),
  "constructed traces: the top 3 ops by their sums over every trace (per-shard top 3 would keep p)", tiny.done)
-- the four constructed ranks' peaks 270, 215, 145, 70 (README "Across ranks"): median (145 + 215) / 2
-- = 180, mean 700 / 4 = 175, max/mean 270 / 175 = 1.543; the same from every merge (above)
check(tiny.done and tiny.done:find("ranks cuda (device peak) max 270 rank 0 min 70 median 180 mean 175 imbalance 1.543\n", 1, true),
  "constructed traces: done(report) sees the cross-rank rows (issue 16)", tiny.done)
for _, k in ipairs({"json", "html", "text", "csv"}) do
  check(tiny[k] and tiny[k]:find(k == "html" and "Across ranks" or "1.543", 1, true),
    ("constructed traces: the %s output has the cross-rank rows"):format(k))
end
contract("tests/data", "tests/data")

-- Windows (issue 26): each shard cuts its traces to the window before classify, as one run
-- does; for every N from 1 to 7 shards the merge writes the same --json, --db, summary and
-- done as one run over tests/data, and its --db loads (each trace's devices once: a device
-- with no memory event in the window once came back as a second "cpu" series and failed the
-- database's UNIQUE constraint).
local function window_contract(win)
  local base = ("./hmem run %s tests/data --out %s %s -q"):format(rules, tmp, win)
  local function outputs(cmd, prefix)
    os.remove(tmp .. "/done.txt")
    local code, out = sh(("%s --summary --color never --json %s.json --db %s.db"):format(cmd, prefix, prefix))
    return {rc = code, text = out, json = slurp(prefix .. ".json"), db = slurp(prefix .. ".db"), done = slurp(tmp .. "/done.txt")}
  end
  local one = outputs(base, tmp .. "/win-one")
  check(one.rc == 0 and one.json and one.db, ("tests/data %s: one run writes --json and --db"):format(win), one.text)
  for _, shards in ipairs(short and {1, 3, 7} or {1, 2, 3, 4, 5, 6, 7}) do
    local parts, bad = {}, nil
    for i = 0, shards - 1 do
      local part = ("%s/win-%d-of-%d.db"):format(tmp, i, shards)
      local code, out = sh(("%s --shard %d/%d --partial %s"):format(base, i, shards, part))
      if code ~= 0 then bad = "a shard failed: " .. out end
      parts[#parts + 1] = part
    end
    local m = outputs(("./hmem merge -q %s %s --out %s"):format(rules, table.concat(parts, " "), tmp), tmp .. "/win-merged")
    bad = bad or (m.rc ~= 0 and "merge exit " .. tostring(m.rc) .. ": " .. m.text)
    for _, k in ipairs({"json", "db", "text", "done"}) do
      if not bad and m[k] ~= one[k] then bad = k .. " differs" end
    end
    local _, loads = sh(("sqlite3 %s/win-merged.db 'SELECT count(*) = count(DISTINCT idx || device) FROM series'"):format(tmp))
    check(not bad and loads:match("^1"), ("tests/data %s: %d shards merged are byte-identical to one run, --db loads"):format(win, shards), bad or loads)
  end
end
window_contract("--steps 6-8")
window_contract("--from 100 --to 400")

-- Refusals and coverage, on the constructed traces in 2 shards.
local base = ("./hmem run -q %s tests/tiny/scale --out %s"):format(rules, tmp)
local merge = ("./hmem merge %s --out %s"):format(rules, tmp) -- --out: the merge's own, never a partial's
local p0, p1 = tmp .. "/r0.db", tmp .. "/r1.db"
sh(("%s --shard 0/2 --partial %s"):format(base, p0))
sh(("%s --shard 1/2 --partial %s"):format(base, p1))
local code, out = sh(("%s %s --json %s/miss.json"):format(merge, p1, tmp))
local j = slurp(tmp .. "/miss.json") or ""
local _, inputs = j:gsub('{"path": ', "")
check(code == 4 and out:find("no partial holds tests/tiny/scale/rank%-") and j:find('"skipped"'),
  "a missing shard: exit 4, its traces named, the other shard's report written", out)
code, out = sh(("%s %s %s %s --json %s/dup.json"):format(merge, p0, p1, p0, tmp))
check(code == 4 and out:find("is in both"), "a shard given twice: exit 4, its traces named", out)
local other = tmp .. "/top.db"
sh(("%s --top 5 --shard 0/2 --partial %s"):format(base, other))
code, out = sh(("%s %s %s"):format(merge, other, p1))
check(code == 4 and out:find("different options"), "partials made with other options are refused", out)
local copy = tmp .. "/rules.lua"
os.execute(("cp %s %s && echo '-- changed' >> %s"):format(rules, copy, copy))
sh(("./hmem run -q %s tests/tiny/scale --out %s --shard 0/2 --partial %s/other.db"):format(copy, tmp, tmp))
code, out = sh(("%s %s/other.db %s"):format(merge, tmp, p1))
check(code == 4 and out:find("different rule files"), "partials of another rule file are refused", out)
code, out = sh(("./hmem merge %s %s %s"):format(copy, p0, p1))
check(code == 4 and out:find("is not the one the partials were made with", 1, true),
  "a rule file other than the shards' (by its digest) is refused at the merge (issue 24)", out)
os.execute(("cp %s %s/old.db && sqlite3 %s/old.db \"UPDATE meta SET value = '0.0.1' WHERE key = 'hmem_version'\""):format(p1, tmp, tmp))
code, out = sh(("%s %s/old.db"):format(merge, tmp))
check(code == 4 and out:find("hmem 0.0.1"), "a partial of another hmem version is refused", out)
os.execute(("cp %s %s/ruleschanged.lua"):format(rules, tmp))
code, out = sh(("%s %s %s --top 3"):format(merge, p0, p1))
check(code == 2 and out:find("--top is an option of the shards"), "the merge takes the shards' options, never its own", out)
-- a cut-off trace in one shard (read with --keep-going): the merge names it, exit 4, the rest kept
os.execute(("mkdir -p %s/cut && cp tests/tiny/scale/rank-*.json %s/cut/ && head -c 300 tests/tiny/scale/rank-1.json > %s/cut/rank-1.json"):format(tmp, tmp, tmp))
local cb = ("./hmem run -q %s %s/cut --out %s --keep-going"):format(rules, tmp, tmp)
sh(("%s --shard 0/2 --partial %s/c0.db"):format(cb, tmp))
sh(("%s --shard 1/2 --partial %s/c1.db"):format(cb, tmp))
code, out = sh(("%s %s/c0.db %s/c1.db --json %s/cut.json"):format(merge, tmp, tmp, tmp))
j = slurp(tmp .. "/cut.json") or ""
check(code == 4 and out:find("rank%-1.json") and j:find("rank%-3.json"),
  "a cut-off trace in one shard: the merge names it, exit 4, the other traces kept", out)
os.execute("rm -rf " .. tmp)
print("1.." .. count())
