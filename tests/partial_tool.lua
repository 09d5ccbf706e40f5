-- Damages a partial the way someone who knows its layout would (issue 24), then seals it
-- again: the checksum of the trace is computed as src/partial.c computes it (trace_sum)
-- and written back, so what the merge meets is the check of every id and count, not the
-- checksum. Needs the sqlite3 command.
--
--   lua5.4 tests/partial_tool.lua reseal FILE IDX          the checksum of trace IDX again
--   lua5.4 tests/partial_tool.lua fill FILE IDX COLUMN HEX  COLUMN's blob filled with the
--                                                          bytes HEX, repeated; then reseal
--   lua5.4 tests/partial_tool.lua poke FILE IDX COLUMN OFFSET HEX [unsealed]
--                                                          the bytes HEX at OFFSET of COLUMN's
--                                                          blob; then reseal (unless unsealed)
--   lua5.4 tests/partial_tool.lua sql FILE IDX SQL          run SQL on it; then reseal
local cmd, file = arg[1], arg[2]

local function sq(sql)
  local p = assert(io.popen(("sqlite3 -batch '%s' \"%s\""):format(file, sql:gsub('"', '\\"'))))
  local out = p:read("a")
  assert(p:close(), "sqlite3 failed: " .. sql)
  return out
end

local K1, K2, K3 = 0x9e3779b97f4a7c15, 0xff51afd7ed558ccd, 0xc4ceb9fe1a85ec53

local function mix(h, s)
  local n = #s
  h = (h ~ (n * K1)) * K2
  local i = 1
  while n - i + 1 >= 8 do
    local w = string.unpack("<i8", s, i)
    h = (h ~ w) * K2
    h = h ~ (h >> 32)
    i = i + 8
  end
  local rest, w = n - i + 1, 0
  if rest > 0 then w = string.unpack("<I" .. rest, s, i) end
  h = (h ~ w) * K3
  return h ~ (h >> 29)
end

local TYPES = {integer = 1, real = 2, text = 3, blob = 4, null = 5}

-- Every row of a query, each column as its type and bytes, mixed in order (mix_value).
local function mix_query(h, cols, from)
  local sel = {}
  for _, c in ipairs(cols) do
    sel[#sel + 1] = ("typeof(%s) || ':' || CASE typeof(%s) WHEN 'integer' THEN %s ELSE hex(%s) END"):format(c, c, c, c)
  end
  for line in sq("SELECT " .. table.concat(sel, ", ") .. " " .. from):gmatch("[^\n]+") do
    for v in (line .. "|"):gmatch("([^|]*)|") do
      local t, x = v:match("^(%a+):(.*)$")
      h = mix(h, string.pack("<i4", TYPES[t]))
      if t == "integer" then
        h = mix(h, string.pack("<i8", math.tointeger(x)))
      elseif t == "text" or t == "blob" then
        h = mix(h, (x:gsub("..", function(b) return string.char(tonumber(b, 16)) end)))
      else
        assert(t == "null", "a " .. t .. " value: not written by hmem, not sealed here")
      end
    end
  end
  return h
end

local function reseal(idx)
  local h = 0x6a09e667f3bcc908
  h = mix_query(h, {"path", "canonical", "rank", "status", "events", "memory_events", "host_slices", "oom_events",
    "cut_at", "lost_bytes", "why", "first_ts_ns"}, "FROM files WHERE idx = " .. idx)
  h = mix_query(h, {"pos", "category"}, "FROM file_categories WHERE idx = " .. idx .. " ORDER BY pos")
  h = mix_query(h, {"id", "name"}, "FROM categories ORDER BY id")
  h = mix_query(h, {"name", "data"}, "FROM store WHERE idx = " .. idx .. " AND name != 'checksum' ORDER BY name")
  local hex = string.pack("<i8", h):gsub(".", function(c) return ("%02x"):format(c:byte()) end)
  sq(("UPDATE store SET data = x'%s' WHERE idx = %d AND name = 'checksum'"):format(hex, idx))
end

if cmd == "reseal" then
  reseal(math.tointeger(arg[3]))
elseif cmd == "fill" then
  local idx, col, pat = math.tointeger(arg[3]), arg[4], arg[5]
  local len = math.tointeger(tonumber(sq(("SELECT length(data) FROM store WHERE idx = %d AND name = '%s'"):format(idx, col))))
  assert(len and len > 0, "no bytes in " .. col)
  local hex = pat:rep(len // (#pat // 2) + 1):sub(1, 2 * len)
  sq(("UPDATE store SET data = x'%s' WHERE idx = %d AND name = '%s'"):format(hex, idx, col))
  reseal(idx)
elseif cmd == "poke" then
  local idx, col, off, pat = math.tointeger(arg[3]), arg[4], math.tointeger(arg[5]), arg[6]
  local hex = sq(("SELECT hex(data) FROM store WHERE idx = %d AND name = '%s'"):format(idx, col)):gsub("%s", "")
  assert(2 * off + #pat <= #hex, "past the end of " .. col)
  hex = hex:sub(1, 2 * off) .. pat .. hex:sub(2 * off + #pat + 1)
  sq(("UPDATE store SET data = x'%s' WHERE idx = %d AND name = '%s'"):format(hex, idx, col))
  if arg[7] ~= "unsealed" then reseal(idx) end
elseif cmd == "sql" then
  sq(arg[4])
  reseal(math.tointeger(arg[3]))
else
  io.stderr:write("usage: see the top of tests/partial_tool.lua\n")
  os.exit(2)
end
