-- Small random traces for differential tests against tests/reference.lua: the same seed
-- gives the same trace. They crowd the cases real traces rarely hold: frees of a size other
-- than the allocation's, two live allocations at one address, frees with no allocation (before
-- the trace), zero-byte events, traces without Addr or Total Allocated, events at the same ts,
-- events exactly at an op's start or end, ops with the same start (and the same duration),
-- negative durations, string pids and tids, 2021 "Operator" slices, ProfilerStep#N ops, and
-- sizes on both sides of the size pack's limits, several devices of one type.
--   local text = dofile("tests/random_trace.lua")(seed)
local GiB, MiB = 1 << 30, 1 << 20
local sizes = { 512, MiB - 1, MiB, 2 * MiB, GiB, GiB + 512, 5 * GiB, 5 * GiB + 1, 6 * GiB }
local devices = { { 0, 0 }, { 1, 0 }, { 1, 1 }, { 6, 10 }, { 3, 2 } }
local names = { "aten::empty", "aten::add", "aten::mm", "ProfilerStep#3", "aten::to", "c10d::allreduce_" }

return function(seed)
  math.randomseed(seed)
  local R = math.random
  local with_addr = R() < 0.8
  local with_ta = with_addr and R() < 0.85
  local fraction = R() < 0.5
  -- times in ns, written in µs (three decimals, or whole µs)
  local function us(ns)
    if fraction then return ("%d.%03d"):format(ns // 1000, ns % 1000) end
    return tostring(ns // 1000)
  end
  local function id(n) return R() < 0.2 and ('"' .. n .. '"') or tostring(n) end
  local ev = {}
  local cat = R() < 0.2 and "Operator" or "cpu_op"
  for _ = 1, R(0, 25) do
    local start = R(0, 60) * 1000 + (R() < 0.2 and R(1, 999) or 0)
    local dur = R(0, 4) == 0 and 0 or R(0, 30) * 1000
    local d = R() < 0.05 and ("-" .. us(1000)) or us(dur)
    ev[#ev + 1] = ('{"ph": "X", "cat": "%s", "name": "%s", "pid": %s, "tid": %s, "ts": %s, "dur": %s}')
      :format(cat, names[R(#names)], id(1), id(R(1, 2)), us(start), d)
  end
  local ndev = R(1, 3)
  local live, total = {}, {}
  for d = 1, ndev do live[d], total[d] = {}, R(0, 3) * MiB end
  for _ = 1, R(1, 40) do
    local d = R(1, ndev)
    local t = R(0, 70) * 1000 + (R() < 0.1 and R(1, 999) or 0)
    local bytes, addr
    local r = R()
    if r < 0.5 then
      bytes, addr = sizes[R(#sizes)], R(1, 6) * 4096
      table.insert(live[d], { addr, bytes })
    elseif r < 0.8 and #live[d] > 0 then
      local a = table.remove(live[d], R(#live[d]))
      bytes, addr = -a[2], a[1]
    elseif r < 0.95 then
      bytes, addr = -sizes[R(#sizes)], R(1, 6) * 4096
    else
      bytes, addr = 0, R(1, 6) * 4096
    end
    total[d] = total[d] + bytes
    local args = { ('"Bytes": %d'):format(bytes), ('"Device Type": %d'):format(devices[d][1]),
      ('"Device Id": %d'):format(devices[d][2]) }
    if with_addr then args[#args + 1] = ('"Addr": %d'):format(addr) end
    if with_ta and R() < 0.9 then args[#args + 1] = ('"Total Allocated": %d'):format(total[d]) end
    if R() < 0.5 then args[#args + 1] = ('"Total Reserved": %d'):format(R(0, 9) * MiB) end
    ev[#ev + 1] = ('{"ph": "i", "s": "t", "name": "[memory]", "pid": %s, "tid": %s, "ts": %s, "args": {%s}}')
      :format(id(1), id(R(1, 2)), us(t), table.concat(args, ", "))
  end
  for i = #ev, 2, -1 do
    if R() < 0.3 then
      local j = R(i)
      ev[i], ev[j] = ev[j], ev[i]
    end
  end
  return '{"traceEvents": [\n' .. table.concat(ev, ",\n") .. "\n]}\n"
end
