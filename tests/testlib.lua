-- What the test scripts under tests/ share: a shell call, a temporary directory, and the
-- many-devices trace (tests/many_devices.lua, tests/rows_many_series.lua).
--   local t = dofile("tests/testlib.lua")
local M = {}

-- Output and exit status of a shell command.
function M.sh(cmd)
  local p = assert(io.popen(cmd))
  local s = p:read("a")
  local ok, _, code = p:close()
  return s, ok and 0 or code
end

-- Exit status and output, standard error included, of a shell command.
function M.run(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("a")
  local _, _, code = p:close()
  return code, out
end

-- A TAP checker: check(ok, name, detail) prints "ok - name" or "not ok - name" and the
-- detail under it; count() is how many checks ran (for the plan line).
function M.tap()
  local n = 0
  local function check(ok, name, detail)
    n = n + 1
    print((ok and "ok - " or "not ok - ") .. name)
    if not ok and detail then print("#   " .. tostring(detail):gsub("\n", "\n#   ")) end
  end
  return check, function() return n end
end

-- A new temporary directory: its path, and a function that removes it.
function M.tmpdir()
  local dir = assert(M.sh("mktemp -d")):gsub("%s+$", "")
  return dir, function() os.execute("rm -rf '" .. dir .. "'") end
end

-- Device k of the many-devices trace: type 1 (cuda) for even k, 6 (hip) for odd, id k // 2.
function M.device(k) return k % 2 == 0 and 1 or 6, k // 2 end

-- Writes the many-devices trace of N devices to path, ids met in a scrambled order: device
-- k (at place p, k = p * 7919 % N; 7919 is prime, so p -> k is one to one) has one event in
-- each of three rounds (ts = round * N + p + 1 µs), at the same addresses on every device:
--   alloc 512 * (k + 1) at 4096, alloc 256 at 8192, free 512 * (k + 1) at 4096.
-- Returns the place of each device (k -> p).
function M.write_many_devices(path, N)
  local at = {}
  local out = assert(io.open(path, "wb"))
  out:write('{"traceEvents": [\n')
  local first = true
  for round = 0, 2 do
    for p = 0, N - 1 do
      local k = (p * 7919) % N
      at[k] = p
      local dtype, did = M.device(k)
      local bytes, addr = 512 * (k + 1), 4096
      if round == 1 then bytes, addr = 256, 8192 elseif round == 2 then bytes = -bytes end
      out:write(first and "" or ",\n", ('{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", '
        .. '"pid": 1, "tid": 1, "ts": %d, "args": {"Addr": %d, "Bytes": %d, "Device Type": %d, "Device Id": %d}}')
        :format(round * N + p + 1, addr, bytes, dtype, did))
      first = false
    end
  end
  out:write("\n]}\n")
  out:close()
  return at
end

return M
