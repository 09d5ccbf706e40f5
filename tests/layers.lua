-- The layers of src/ (issue 13). Checked, one result each:
--   * every extern function a header declares is defined in the .c of the same name, so
--     that each header is its file's whole surface;
--   * no circle of calls between files (foo.c and foo.h are the unit foo): a call is a use
--     of hm_NAME( where NAME is defined in another unit;
--   * no circle of includes between files (issue 26);
--   * only the Lua binding (the Makefile's LUA_SIDE, and lbind.h) reaches lua.h, lauxlib.h
--     or lualib.h, even through other headers (src/lbind.h draws the binding's layers), and
--     lbind.h's list of the calls within the binding is what the files call;
--   * no sort takes its context from a file-scope variable (qsort_r), thread keys are split
--     only by hm_thread_split, the outputs' ids are made from their table, and the Kineto
--     reader's files stay under their line ceiling (issue 26).
-- Usage: lua5.4 tests/layers.lua [SRC_DIR]   (default src)
local dir = arg[1] or "src"
local failed = 0
local function check(ok, name, detail)
  print((ok and "ok - " or "not ok - ") .. name)
  if not ok then
    failed = failed + 1
    if detail then print("#   " .. detail) end
  end
end

-- One result for a list of findings: ok when it is empty, else each finding on a line.
local function check_none(found, name)
  check(#found == 0, name, found[1])
  for i = 2, #found do print("#   " .. found[i]) end
end

local function read(path)
  local f = assert(io.open(path))
  local s = f:read("a")
  f:close()
  return s
end

local files = {}
local p = io.popen("ls " .. dir .. "/*.c " .. dir .. "/*.h")
for path in p:lines() do files[#files + 1] = path:match("[^/]+$") end
p:close()
table.sort(files)

local function unit(file) return (file:gsub("%.[ch]$", "")) end

-- Includes of each file: local ("...") and system (<...>).
local incl, sys, text = {}, {}, {}
for _, f in ipairs(files) do
  local s = read(dir .. "/" .. f)
  text[f] = s
  incl[f], sys[f] = {}, {}
  for line in s:gmatch("[^\n]+") do
    local l = line:match('^%s*#%s*include%s+"([^"]+)"')
    if l then incl[f][#incl[f] + 1] = l end
    local g = line:match("^%s*#%s*include%s+<([^>]+)>")
    if g then sys[f][#sys[f] + 1] = g end
  end
end

-- 1. Where each function is defined: extern ones in a .c (a line at file level that is not
-- static, a typedef or a declaration, with hm_NAME(), inline ones in a header.
local defined_in = {}
for _, f in ipairs(files) do
  for line in text[f]:gmatch("[^\n]+") do
    local name
    if f:match("%.c$") and line:match("^[%a_]") and not line:match("^static") and not line:match("^typedef")
      and not line:match(";%s*$") then
      name = line:match("[%s%*](hm_[%w_]+)%(")
    elseif f:match("%.h$") and line:match("^static inline") then
      name = line:match("[%s%*](hm_[%w_]+)%(")
    end
    if name then defined_in[name] = f end
  end
end

-- Extern functions a header declares are defined in its own .c; a header without a .c in
-- src/ declares none (a header declaring another file's functions hides who calls whom).
local wrong = {}
for _, f in ipairs(files) do
  if f:match("%.h$") then
    local own = unit(f) .. ".c"
    for line in text[f]:gmatch("[^\n]+") do
      if line:match("^[%a_]") and not line:match("^static") and not line:match("^typedef")
        and not line:match("^extern") and not line:match("^#") then
        local name = line:match("[%s%*](hm_[%w_]+)%(")
        if name and defined_in[name] ~= own then
          wrong[#wrong + 1] = ("%s declares %s, defined in %s, not %s"):format(f, name, defined_in[name] or "no file", own)
        end
      end
    end
  end
end
check_none(wrong, "every function a header declares is defined in its own .c")

-- 2. No circle of calls between units: an edge from u to v when a file of u calls a
-- function defined in a file of v (calls through function pointers are not seen).
local edges, why = {}, {}
for _, f in ipairs(files) do
  local u = unit(f)
  edges[u] = edges[u] or {}
  for name in text[f]:gmatch("(hm_[%w_]+)%s*%(") do
    local d = defined_in[name]
    local v = d and unit(d)
    if v and v ~= u and not edges[u][v] then
      edges[u][v] = true
      why[u .. " -> " .. v] = f .. " calls " .. name
    end
  end
end
-- The first circle in a graph of units (edges[u][v]; why["u -> v"] says what made the
-- edge), as "a -> b -> a (reasons)", or nil.
local function find_circle(edges, why)
  local state, stack, circle = {}, {}, nil
  local function visit(u)
    state[u] = "open"
    stack[#stack + 1] = u
    local next = {}
    for v in pairs(edges[u] or {}) do next[#next + 1] = v end
    table.sort(next)
    for _, v in ipairs(next) do
      if state[v] == "open" and not circle then
        local from
        for i = #stack, 1, -1 do if stack[i] == v then from = i end end
        local steps = {}
        for i = from, #stack do
          local a, b = stack[i], stack[i + 1] or v
          steps[#steps + 1] = why[a .. " -> " .. b]
        end
        circle = table.concat(stack, " -> ", from) .. " -> " .. v .. " (" .. table.concat(steps, "; ") .. ")"
      elseif not state[v] then
        visit(v)
      end
    end
    stack[#stack] = nil
    state[u] = "done"
  end
  local units = {}
  for u in pairs(edges) do units[#units + 1] = u end
  table.sort(units)
  for _, u in ipairs(units) do if not state[u] then visit(u) end end
  return circle
end
local circle = find_circle(edges, why)
check(circle == nil, "no circle of calls between files of " .. dir, circle)

-- 2b. No circle of includes between units (issue 26): an edge from u to v when a file of u
-- includes v.h. A header shared by two units that need each other's types is a third unit
-- (reader.h for trace and its readers, report.h for the writers).
local iedges, iwhy = {}, {}
for _, f in ipairs(files) do
  local u = unit(f)
  iedges[u] = iedges[u] or {}
  for _, h in ipairs(incl[f]) do
    local v = unit(h)
    if text[h] and v ~= u and not iedges[u][v] then
      iedges[u][v] = true
      iwhy[u .. " -> " .. v] = f .. " includes " .. h
    end
  end
end
local icircle = find_circle(iedges, iwhy)
check(icircle == nil, "no circle of includes between files of " .. dir, icircle)

-- 3. Only the binding reaches the Lua headers.
local makefile = read((dir:match("^(.*)/[^/]+$") or ".") .. "/Makefile")
local binding = { lbind = true }
for o in (makefile:match("\nLUA_SIDE%s*:=%s*([^\n]*)") or ""):gmatch("([%w_]+)%.o") do binding[o] = true end
local lua_headers = { ["lua.h"] = true, ["lauxlib.h"] = true, ["lualib.h"] = true }
local function reaches_lua(f, seen)
  seen = seen or {}
  if seen[f] then return nil end
  seen[f] = true
  for _, g in ipairs(sys[f] or {}) do if lua_headers[g] then return f .. " includes <" .. g .. ">" end end
  for _, h in ipairs(incl[f] or {}) do
    local why = text[h] and reaches_lua(h, seen)
    if why then return f .. " includes " .. h .. ", " .. why end
  end
end
local leaks = {}
for _, f in ipairs(files) do
  if not binding[unit(f)] then
    local why = reaches_lua(f)
    if why then leaks[#leaks + 1] = why end
  end
end
check(binding.script, "the Makefile's LUA_SIDE is found (it names script.o)")

-- 3b. lbind.h lists the calls within the binding ("a -> b, c", "a, b -> none"): they are
-- what the files do, no more and no fewer (issue 26: the list said "exactly" and was not).
local said, declared = {}, {}
for line in (text["lbind.h"] or ""):gmatch("[^\n]+") do
  local from, to = line:match("^ %*%s+([%w_, ]-)%s*%->%s*([%w_, ]+)$")
  if from then
    for u in from:gmatch("[%w_]+") do
      declared[u] = true
      for v in to:gmatch("[%w_]+") do if v ~= "none" then said[u .. " -> " .. v] = true end end
    end
  end
end
local calls_differ = {}
for u in pairs(binding) do
  for v in pairs(edges[u] or {}) do
    if binding[v] and not said[u .. " -> " .. v] then
      calls_differ[#calls_differ + 1] = ("%s -> %s is not in lbind.h (%s)"):format(u, v, why[u .. " -> " .. v])
    end
  end
end
for e in pairs(said) do
  local u, v = e:match("(%S+) %-> (%S+)")
  if not (edges[u] or {})[v] then calls_differ[#calls_differ + 1] = "lbind.h says " .. e .. ", which no call makes" end
end
for u in pairs(binding) do
  if u ~= "lbind" and u ~= "embedded" and not declared[u] then calls_differ[#calls_differ + 1] = "lbind.h has no line for " .. u end
end
table.sort(calls_differ)
check_none(calls_differ, "lbind.h lists the calls within the Lua binding as they are")
check_none(leaks, "only the Lua binding (LUA_SIDE) includes lua.h, lauxlib.h or lualib.h")

-- 4. No sort reads a file-scope variable for its context (issue 26): qsort_r carries it, so
-- sorts on two threads, or a sort inside a sort, cannot see each other's.
local shared = {}
for _, f in ipairs(files) do
  if f:match("%.c$") then
    local vars = {}
    for line in text[f]:gmatch("[^\n]+") do
      if line:match("^static ") and not line:match("^static const [^*]*[%w_]+%s*[%[=;]") and not line:match("%(") then
        local name = line:match("([%w_]+)%s*%b[]%s*[=;]") or line:match("([%w_]+)%s*[=;]")
        if name then vars[#vars + 1] = name end
      end
    end
    local seen = {}
    for cmp in text[f]:gmatch("qsort%s*%b()") do
      local fn = cmp:match(",%s*([%w_]+)%s*%)$")
      if seen[fn] then fn = nil end
      if fn then seen[fn] = true end
      local body = fn and text[f]:match("\nstatic int " .. fn .. "%(.-\n}")
      for _, v in ipairs(vars) do
        if body and body:find("%f[%w_]" .. v .. "%f[^%w_]") then
          shared[#shared + 1] = ("%s: %s, the comparator of a qsort, reads the file-scope %s (use qsort_r)"):format(f, fn, v)
        end
      end
    end
  end
end
check_none(shared, "no sort in " .. dir .. " takes its context from a file-scope variable")

-- 5. A thread key ("pid\x1ftid", store.h) is split in one place, hm_thread_split (util.c);
-- partial.c only checks that a key read back has the separator (issue 26).
local splits = {}
for _, f in ipairs(files) do
  if f ~= "util.c" and f ~= "partial.c" then
    for call in text[f]:gmatch("memchr%s*%b()") do
      if call:find("0x1f", 1, true) or call:find("\\x1f", 1, true) or call:find("\\037", 1, true) then
        splits[#splits + 1] = f .. " splits a thread key itself: " .. call .. " (use hm_thread_split)"
      end
    end
  end
end
check_none(splits, "thread keys are split only by hm_thread_split")

-- 6. Line ceilings (issue 26): the Kineto reader was cut by concern when it passed 800
-- lines; a file listed here that grows past its ceiling is cut again, not the ceiling raised.
local ceiling = { ["kineto.c"] = 800, ["kevent.c"] = 800 }
local over = {}
for _, f in ipairs(files) do
  local _, lines = text[f]:gsub("\n", "")
  if ceiling[f] and lines > ceiling[f] then
    over[#over + 1] = ("%s has %d lines, over its ceiling of %d: split it by concern"):format(f, lines, ceiling[f])
  end
end
check_none(over, "the files with a line ceiling are under it (kineto.c and kevent.c: 800)")

-- 7. The outputs' ids and count are made from their table (HM_OUTPUTS in args.h), never
-- numbered by hand (issue 26): a row added to the table cannot leave them behind.
local counted = {}
for _, f in ipairs(files) do
  for line in text[f]:gmatch("[^\n]+") do
    if line:match("N_OUTPUTS%s*=%s*%d") or line:match("OUT_[%u_]+%s*=%s*%d") then
      counted[#counted + 1] = f .. ": " .. line:gsub("^%s+", "")
    end
  end
end
check_none(counted, "N_OUTPUTS and the OUT_ ids are made from the outputs' table, not numbered by hand")

os.exit(failed == 0 and 0 or 1)
