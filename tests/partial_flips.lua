-- Damaged partials (issue 24): a real partial (a memory snapshot with stacks, frames and
-- OOMs, a trace with host slices and thread names, a trace with an OOM) with one byte
-- changed, over and over, each given to hmem merge. Every run must end with exit 0 or 4,
-- the damage said on standard error ("hmem: ..."), within a minute, with no signal and no
-- sanitizer report. 200 runs change a byte of the file anywhere (SQLite's pages, the
-- checksum, the columns; half of them in a copy with small pages, mostly no free space); 100 change a byte inside one column and seal the trace again
-- (tests/partial_tool.lua), so the checks behind the checksum meet them.
-- Usage: lua5.4 tests/partial_flips.lua [FLIPS SEALED]  (HMEM=path: another hmem binary)
local lib = dofile("tests/testlib.lua")
local check, count = lib.tap()
local flips, sealed = math.tointeger(tonumber(arg[1] or 200)), math.tointeger(tonumber(arg[2] or 100))
local hmem = os.getenv("HMEM") or (os.getenv("PWD") .. "/hmem")
local dir, cleanup = lib.tmpdir()

local function sh(cmd)
  local code, out = lib.run(cmd)
  assert(code == 0, cmd .. ": " .. out)
  return out
end

sh(("python3 tests/snapshots/gen.py %s/s >/dev/null && cp %s/s/2026_p5.pickle tests/tiny/y_context.json " ..
  "tests/tiny/i_oom.json %s/ && cd %s && %s run -q size 2026_p5.pickle y_context.json i_oom.json --partial good.db")
  :format(dir, dir, dir, dir, hmem))
-- The partial as written has 64 KiB pages, mostly free space; a copy with 1 KiB pages puts
-- half of the flips among SQLite's own structures and the columns.
sh(("cp %s/good.db %s/dense.db && sqlite3 %s/dense.db 'PRAGMA page_size = 1024; VACUUM'"):format(dir, dir, dir))
local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end
local files = {slurp(dir .. "/good.db"), slurp(dir .. "/dense.db")}

-- One merge of x.db: exit 0 or 4 with a message, no signal, no sanitizer report.
local function merge(what)
  local out = sh(("cd %s && timeout 60 %s merge size x.db --json x.json >/dev/null 2>err; echo $?; cat err")
    :format(dir, hmem))
  local rc, err = out:match("^(%d+)\n(.*)$")
  rc = math.tointeger(tonumber(rc))
  local san = err:find("runtime error") or err:find("Sanitizer") or err:find("\n==%d+==") or err:find("^==%d+==")
  local ok = (rc == 0 or (rc == 4 and err:find("^hmem: ") ~= nil) or (rc == 4 and err:find("\nhmem: ") ~= nil)) and not san
  local first = err:match("^[^\n]*") or ""
  check(ok, ("%s: exit %d%s"):format(what, rc, rc == 0 and "" or ": " .. first:sub(1, 110)),
    rc == 124 and "timed out (60 s)" or rc > 128 and ("killed by signal %d"):format(rc - 128) or err:sub(1, 2000))
end

for run = 1, flips do
  math.randomseed(24000 + run)
  local good = files[run % 2 + 1]
  local at = math.random(1, #good)
  local b = good:byte(at) ~ math.random(1, 255)
  local out = assert(io.open(dir .. "/x.db", "wb"))
  out:write(good:sub(1, at - 1), string.char(b), good:sub(at + 1))
  out:close()
  merge(("flip %d: byte %d of the %s file"):format(run, at - 1, run % 2 == 1 and "dense" or "written"))
end

-- The columns of every trace, with their lengths, to pick a byte inside one.
local cols = {}
for line in sh(("sqlite3 %s/good.db \"SELECT idx, name, length(data) FROM store WHERE length(data) > 0 AND name != 'checksum'\"")
    :format(dir)):gmatch("[^\n]+") do
  local idx, name, len = line:match("^(%d+)|([^|]+)|(%d+)$")
  cols[#cols + 1] = {idx = idx, name = name, len = math.tointeger(tonumber(len))}
end
for run = 1, sealed do
  math.randomseed(24500 + run)
  local c = cols[math.random(1, #cols)]
  local off = math.random(0, c.len - 1)
  sh(("cp %s/good.db %s/x.db && lua5.4 tests/partial_tool.lua poke %s/x.db %s %s %d %02x")
    :format(dir, dir, dir, c.idx, c.name, off, math.random(0, 255)))
  merge(("sealed %d: byte %d of trace %s's %s"):format(run, off, c.idx, c.name))
end

cleanup()
print("1.." .. count())
