-- Prints the named columns of the CSV on standard input (header row first), tab-separated,
-- one line per data row. Handles RFC 4180 quoting.
local split = dofile("tests/csv.lua").split

local header = split(io.read("l") or "")
local idx = {}
for _, want in ipairs(arg) do
  for i, h in ipairs(header) do if h == want then idx[#idx + 1] = i end end
end
for line in io.lines() do
  local f, out = split(line), {}
  for _, i in ipairs(idx) do out[#out + 1] = f[i] or "" end
  print(table.concat(out, "\t"))
end
