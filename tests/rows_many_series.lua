-- Rows of a trace with many series (issue 11: finding an event's series searched the list of
-- series one by one, and added each new one with a memmove: 100,000 devices took seconds to
-- classify). Used by tests/cli/rowspeed_many_series.t.
--
--   lua5.4 tests/rows_many_series.lua [N]
--
-- Writes, in a temporary directory, the trace of tests/many_devices.lua (N devices, default
-- 20000, ids met in a scrambled order: the event of device k in round r is at ts
-- r * N + p + 1 µs, where p is k's place in the scramble, k = p * 7919 % N; device k is
-- cuda:k//2 for even k, hip:k//2 for odd k), and a rule file that works out each row's device
-- from its ts alone, compares it with row.device in classify, keeps every row, and checks in
-- done that each series' allocations are the rows classify got, on that series' device.
-- By hand: 2N allocations (two per device), each on its own device.

local N = tonumber(arg[1]) or 20000
local t = dofile("tests/testlib.lua")
local sh = t.sh

local dir, cleanup = t.tmpdir()
local trace, rules = dir .. "/devices.json", dir .. "/rules.lua"
t.write_many_devices(trace, N)

local out = assert(io.open(rules, "wb"))
out:write(("local N = %d\n"):format(N), [[
local seen, n, wrong = {}, 0, 0
function classify(row)
  local p = (row.ts_ns // 1000 - 1) % N
  local k = p * 7919 % N
  local want = (k % 2 == 0 and "cuda:" or "hip:") .. k // 2
  if row.device ~= want then wrong = wrong + 1 end
  n = n + 1
  seen[row] = row.device
  if n % 5000 == 0 then collectgarbage() end
  return k % 2 == 0 and "even" or "odd"
end
function done(report)
  collectgarbage()
  local total, same = 0, 0
  for _, s in ipairs(report.series) do
    for _, row in ipairs(s:allocations()) do
      total = total + 1
      if seen[row] == s.device and row.device == s.device then same = same + 1 end
    end
  end
  print(("classify: %d rows, %d on another device than their ts says"):format(n, wrong))
  print(("done: %d series, %d of %d allocations are classify's rows on their series' device")
    :format(#report.series, same, total))
end
]])
out:close()

local text, code = sh("hmem run " .. rules .. " -q " .. trace .. " --json " .. dir .. "/out.json")
cleanup()
io.write(text)
local want = ("classify: %d rows, 0 on another device than their ts says\n"
  .. "done: %d series, %d of %d allocations are classify's rows on their series' device\n"):format(2 * N, N, 2 * N, 2 * N)
print(code == 0 and text == want and "every row on its device, as worked out by hand"
  or ("differs from the hand computation (exit %s):\n%s"):format(code, want))
os.exit(code == 0 and text == want and 0 or 1)
