-- Seed corpus for the fuzz targets: small valid pieces of the real traces.
--
--   lua5.4 tests/fuzz/make-seeds.lua OUTDIR
--
-- Each trace of tests/data (decompressed) gives a few pieces, each a complete trace: the
-- top level before traceEvents (when short), a run of consecutive events, and the top level
-- after them (when short). The runs are the first events, and events around the first and
-- the middle [memory] event (where ops, memory events and thread names meet). The tiny
-- hand-made traces of tests/tiny are copied as they are, gzip ones included. Pieces are
-- written plain, and a few also gzipped (the pipeline target reads gzip too).
local out = assert(arg[1], "usage: make-seeds.lua OUTDIR")
os.execute("mkdir -p '" .. out .. "'")

local function sh(cmd)
  local p = assert(io.popen(cmd))
  local s = p:read("a")
  p:close()
  return s
end

-- Events of the traceEvents array as {start, stop} byte ranges, found by matching braces
-- outside strings (the real traces are valid JSON).
local function events(text, from)
  local list, depth, i, start = {}, 0, from, nil
  while true do
    local j = text:find('[{}%[%]"]', i)
    if not j then break end
    local c = text:sub(j, j)
    if c == '"' then
      local k = j + 1
      while true do
        local q = assert(text:find('["\\]', k))
        if text:sub(q, q) == "\\" then k = q + 2 else k = q + 1 break end
      end
      i = k
    else
      if c == "{" or c == "[" then
        if depth == 0 then start = j end
        depth = depth + 1
      else
        depth = depth - 1
        if depth == 0 then list[#list + 1] = {start, j} end
        if depth < 0 then return list, j end
      end
      i = j + 1
    end
  end
  return list, #text
end

local n = 0
local function write(name, data, gz)
  n = n + 1
  local path = string.format("%s/%03d-%s", out, n, name)
  local f = assert(io.open(path, "wb"))
  f:write(data)
  f:close()
  if gz then os.execute("gzip -n -9 -c '" .. path .. "' > '" .. path .. ".gz'") end
end

local traces = sh("find tests/data -name '*.gz' | LC_ALL=C sort")
for path in traces:gmatch("[^\n]+") do
  local text = sh("gzip -dc '" .. path .. "'")
  local key = text:find('"traceEvents"%s*:%s*%[')
  if key then
    local open = text:find("[", key, true)
    local evs, close = events(text, open + 1)
    local head = text:sub(1, key - 1)
    if #head > 4096 then head = "{" end
    local tail = text:sub(close + 1)
    if #tail > 2048 then tail = "}" end
    local function piece(first, count)
      local parts = {}
      for k = first, math.min(#evs, first + count - 1) do
        parts[#parts + 1] = text:sub(evs[k][1], evs[k][2])
      end
      return head .. '"traceEvents": [\n' .. table.concat(parts, ",\n") .. "\n]" .. tail
    end
    local mem = {}
    for k, r in ipairs(evs) do
      if text:sub(r[1], r[2]):find('"%[memory%]"') then mem[#mem + 1] = k end
    end
    local base = path:gsub("^tests/data/", ""):gsub("[/ ]", "_"):gsub("%.json%.gz$", ""):gsub("%.gz$", "")
    write(base .. "-first.json", piece(1, 8), false)
    if #mem > 0 then
      write(base .. "-mem1.json", piece(math.max(1, mem[1] - 4), 12), true)
      local mid = mem[(#mem + 1) // 2]
      write(base .. "-memmid.json", piece(math.max(1, mid - 8), 16), false)
    end
  else
    -- Not a trace (export_memory_timeline output): its first bytes, cut at an element.
    local s = text:sub(1, 600)
    s = s:sub(1, (s:match(".*()%]") or #s)) .. "]"
    write(path:gsub(".*/", ""):gsub("%.gz$", "") .. "-head.json", s, false)
  end
end

local tiny = sh("find tests/tiny -maxdepth 2 -type f \\( -name '*.json' -o -name '*.json.gz' \\) | LC_ALL=C sort")
for path in tiny:gmatch("[^\n]+") do
  local f = assert(io.open(path, "rb"))
  write(path:gsub("^tests/tiny/", ""):gsub("/", "_"), f:read("a"), false)
  f:close()
end
print(string.format("make-seeds: %d seeds in %s", n, out))
