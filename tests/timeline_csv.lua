-- Reads a --timeline CSV for the tests (tests/perfetto.lua, tests/html.lua,
-- tests/browser.lua): dofile("tests/timeline_csv.lua").read(path) gives the rows grouped by
-- device, each {ts=, ts_ns=, allocated=, reserved=, cats={name=bytes}}, in file order;
-- category names as JSON carries them (bytes that are not UTF-8 become U+FFFD).
local M = {}

-- RFC 4180 records of a whole CSV text (quoted fields may hold commas and newlines).
function M.records(text)
  local recs, f, i, n = {}, {}, 1, #text
  while i <= n do
    local field
    if text:sub(i, i) == '"' then
      local j, s = i + 1, {}
      while true do
        local q = assert(text:find('"', j, true), "unterminated quote")
        s[#s + 1] = text:sub(j, q - 1)
        if text:sub(q + 1, q + 1) == '"' then j = q + 2; s[#s + 1] = '"' else i = q + 1; break end
      end
      field = table.concat(s)
    else
      local e = text:find("[,\n]", i) or n + 1
      field, i = text:sub(i, e - 1), e
    end
    f[#f + 1] = field
    local c = text:sub(i, i)
    i = i + 1
    if c ~= "," then recs[#recs + 1], f = f, {} end
  end
  return recs
end

-- Names as JSON carries them: bytes that are not UTF-8 become U+FFFD (as hmem writes them).
function M.as_json_name(s)
  local out, i = {}, 1
  while i <= #s do
    local ok, len = pcall(utf8.len, s, i, i)
    if ok and len then
      local c = utf8.offset(s, 2, i)
      out[#out + 1] = s:sub(i, c - 1)
      i = c
    else
      out[#out + 1] = "\u{FFFD}"
      i = i + 1
    end
  end
  return table.concat(out)
end

-- Timeline rows grouped by device, each {ts=, allocated=, reserved=, cats={name=bytes}}.
function M.read(path)
  local rows, recs = {}, M.records(io.open(path):read("a"))
  local header = recs[1]
  for i = 2, #recs do
    local f = recs[i]
    local r = { ts = f[4], ts_ns = M.ns(f[4]), allocated = tonumber(f[7]), reserved = f[8] ~= "" and tonumber(f[8]) or nil, cats = {} }
    for c = 9, #header do r.cats[M.as_json_name(header[c])] = tonumber(f[c]) end
    rows[f[3]] = rows[f[3]] or {}
    table.insert(rows[f[3]], r)
  end
  return rows
end

-- Microseconds as printed by hmem ("12.5", "1419247337276.476") to integer ns, exactly.
function M.ns(us)
  local neg, int, frac = us:match("^(%-?)(%d+)%.?(%d*)$")
  local v = math.tointeger(tonumber(int)) * 1000 + math.tointeger(tonumber((frac .. "000"):sub(1, 3)))
  return neg == "-" and -v or v
end

return M
