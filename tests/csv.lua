-- RFC 4180 CSV line splitting for the test scripts (fields may be quoted, with "" inside).
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

return { split = split }
