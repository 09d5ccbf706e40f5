-- hmem: helpers for rule files. `local hmem = require "hmem"` in a rule file, or from
-- plain lua5.4 / busted with package.path including "lua/?.lua;lua/?/init.lua".
local hmem = {}

hmem.version = "0.1.0"

-- Binary units, in bytes.
hmem.KiB = 1024
hmem.MiB = 1024 * 1024
hmem.GiB = 1024 * 1024 * 1024
hmem.TiB = 1024 * 1024 * 1024 * 1024

local units = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" }

-- Human-readable bytes in binary units: human(1536) == "1.50 KiB", human(512) == "512 B".
function hmem.human(bytes)
  if type(bytes) ~= "number" then
    error(("human: expected a number of bytes, got %s"):format(type(bytes)), 2)
  end
  local v, u = math.abs(bytes), 1
  while v >= 1024 and u < #units do
    v, u = v / 1024, u + 1
  end
  local sign = bytes < 0 and "-" or ""
  if u == 1 then
    return ("%s%d B"):format(sign, math.floor(v))
  end
  return ("%s%.2f %s"):format(sign, v, units[u])
end

-- The first category whose limit the size reaches, from a list of {limit, name} pairs
-- in decreasing order; `otherwise` when none does.
--   hmem.bucket(row.bytes, {{5 * hmem.GiB, "very big"}, {hmem.GiB, "big"}}, "normal")
function hmem.bucket(bytes, limits, otherwise)
  for _, pair in ipairs(limits) do
    if bytes > pair[1] then
      return pair[2]
    end
  end
  return otherwise
end

return hmem
