-- Prints the named columns of the CSV on standard input (header row first), tab-separated,
-- one line per data row. Handles RFC 4180 quoting.
local function split(line)
  local f, i = {}, 1
  while i <= #line + 1 do
    if line:sub(i, i) == '"' then
      local j, s = i + 1, {}
      while true do
        local q = line:find('"', j, true)
        s[#s + 1] = line:sub(j, q - 1)
        if line:sub(q + 1, q + 1) == '"' then j = q + 2; s[#s + 1] = '"' else i = q + 2; break end
      end
      f[#f + 1] = table.concat(s)
    else
      local c = line:find(",", i, true) or #line + 1
      f[#f + 1] = line:sub(i, c - 1)
      i = c + 1
    end
  end
  return f
end

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
return split
