-- hmem.testing: unit-test rule files and rule packs without traces.
--
--   local testing = require "hmem.testing"
--   local row = testing.row{bytes = 2 * hmem.GiB, op = "aten::mm", annotations = {"## backward ##"}}
--   assert.are.equal("backward", testing.classify("hmem.rules.phase", row))
--
-- For plain lua5.4 and busted (package.path with "lua/?.lua;lua/?/init.lua"), not for rule
-- files: inside `hmem run` rules get real rows.
--
-- testing.row(t) -> row
--   A read-only row built from the table t that behaves like hmem's row: a userdata
--   (type(row) == "userdata", getmetatable(row) == "hmem.row"; where the debug library or
--   io.tmpfile is missing, as inside hmem's sandbox, a table); every field of the contract
--   (testing.fields) is readable; ts, free_ts, lifetime and the stack's ts and dur are floats,
--   as in hmem; reading another field raises
--   "row has no field 'x' (fields: ...)"; assigning any field raises
--   "rows are read-only (tried to set 'x')"; tostring(row) is
--   "hmem.row(alloc 1024 bytes on cuda:0 at ts 0.0)". List fields (ops, annotations, python,
--   free_ops, stack) are fresh copies on every read, as hmem builds them on every read.
--   t may hold only fields of the contract (a typo such as `byts=` is an error) with their
--   types. Defaults and derived values, for the fields t leaves out:
--     bytes 512 (a positive integer; 2.0 is taken as 2);
--     kind "alloc", or "free" when before_trace is true; before_trace false;
--     addr a fixed fake address: modern traces always have one. Pass addr = testing.NIL for
--       a 2021 trace, whose frees cannot be paired;
--     device "cuda:0", device_type 1, device_id 0, each derived from the others when given
--       (device "hip:1" gives type 6 and id 1; device_type 0 gives "cpu" and id -1; names as
--       hmem gives them: 0 cpu, 1 cuda:N, 6 hip:N, 12 xpu:N, 13 mps:N, 20 privateuseone:N,
--       else typeT:N);
--     ts 0; ts_ns = ts in integer ns; ts = ts_ns / 1000 when only ts_ns is given;
--     ops, annotations, python: the names of the stack entries whose cat is "cpu_op" or
--       "Operator", "user_annotation", "python_function" when stack is given, else {};
--       stack, free_ops and frames {}; free_frames: a free row's own frames, else {} (give
--       an allocation's free_frames, the stack of its free in a snapshot);
--     op = the last of ops when only ops is given; ops = {op} when only op is given (the
--       same for free_op and free_ops); when both are given op must be the last of ops;
--     step = N of the innermost "ProfilerStep#N" in annotations, ops or stack (hmem also
--       gives rows on other threads of the process, e.g. the autograd thread, the step
--       running at their time: give step = N for such rows); free_step = N of a
--       "ProfilerStep#N" in free_ops, else nil (freed outside any step): give free_step = N
--       for an allocation freed during step N;
--     modules = the python frames "nn.Module: Name", without "nn.Module: ", outermost first;
--     frame = the innermost python frame that is user code (hmem's rule: README "The row");
--     step_ts = ts of the innermost "ProfilerStep#<step>" in stack, else nil;
--     module = the innermost python frame "nn.Module: Name", without "nn.Module: ";
--     free_ts = ts + lifetime when only lifetime is given; lifetime = free_ts - ts for an
--       allocation given free_ts;
--     a free row (a free hmem classifies itself) has its own ts as free_ts, no lifetime, and
--       its own op, ops and step as free_op, free_ops and free_step, as in hmem;
--     series_id: an integer equal for rows of equal file and device (negative, as context);
--     has_addr = addr ~= nil; context: an integer equal for rows with equal thread, tid, ops,
--       annotations, python and stack names (negative, never one of hmem's); free_context the
--       same for free_ops (a free's own context); ops_open_at_free (allocations given free_ts)
--       the leading stack op entries with ts + dur >= free_ts, or without times the leading
--       ops equal to free_ops; same_step (allocations with a step) free_step == step and
--       freed.
--     view and free_view (README "The row"): integers from the view(name, kind) of the pack
--       being run (the one whose classify runs, else the one loaded last): equal for rows
--       whose thread, annotations, python and ops (free_ops for free_view) give the same
--       codes, ProfilerStep#N names left out; free_view nil when not freed; an error when
--       the pack has no view. The view is asked about each name and kind once.
--   An allocation given free_step or free_op(s) must be given free_ts or lifetime.
--   Every other field (rank, file, pid, tid, ev_idx, total_allocated, total_reserved, thread,
--   category) is nil unless given. Stack entries are {name=, cat=, ts=, dur=} tables (µs) as
--   in hmem; a test may leave out ts and dur, and hmem.rules.lifetime then decides "the same
--   op" by names.
--
-- testing.NIL
--   Makes a defaulted field nil: testing.row{addr = testing.NIL}.
--
-- testing.fields
--   The names of the row's fields, in hmem's order.
--
-- testing.is_row(x) -> boolean
--   Whether x is a row made by testing.row. Each call of testing.row makes a new row: like
--   hmem's rows of different events, two rows are never ==, and each is its own table key.
--
-- testing.load(pack) -> {name=, description=, categories=, classify=, done=, init=, cache_by=}
--   Loads a pack as hmem does and returns it normalised. pack is a module table, a module
--   name ("hmem.rules.size", found with require), or a path to a rule file (a name with a "/"
--   or ending in ".lua"). A rule file either defines globals (classify, optional init and
--   done) or returns a pack table {name=, description=, categories=, classify=, done=}. A
--   file runs in hmem's strict sandbox: the base library without dofile and loadfile, load
--   for text only, string, table, math, utf8, os.time/clock/date/difftime, require; reading
--   an undefined global is an error. Its require gives cjson and the modules built into hmem
--   (hmem, hmem.testing, hmem.rules.*: Lua's require, on package.path; hmem and hmem.* are
--   never a file next to the rule), then modules next to the rule file or on HMEM_PATH (each
--   in its own sandbox); any other name raises
--   "module 'x' not found (looked in ...)", as in hmem. Modules are shared through
--   package.loaded, so a test and the pack it loads see the same hmem.rules.phase.
--   The pack's init, if any, is called once per load, without arguments, as hmem does.
--   Normalised: name (the table's, else the file name without ".lua", else the module
--   name), view (the pack's view function or a rule file's global view, or nil), description (the table's, else the file's leading comment lines, else ""),
--   categories (a list of {name=, color=}; color nil or "#rrggbb"), classify, done, init,
--   cache_by (the pack table's list of row fields its category depends on, or the list a rule
--   file gave hmem.cache_by, or nil; an entry may be a key function of the context, called
--   here for every row; frames and free_frames key on the stack's frames, as hmem keys on
--   the interned stack). With cache_by, classify is memoised as hmem does, and
--   hmem.cache_clear() empties the memo:
--   called once per distinct combination of those fields' values (types included) per load,
--   repeats answered from the memo, so a cache_by that leaves out a field classify reads
--   gives the same wrong categories as in hmem. Raises when there is no classify function, cache_by names a field that
--   is not a single-valued row field (frames and free_frames aside), or names view or free_view with no view function (as
--   hmem does), or a category is malformed or listed twice (stricter
--   than hmem, which ignores the last two mistakes).
--
--   Team packs (issue 17): the pack's other entries are kept (a rule file's global functions,
--   a pack table's other keys: helpers a test may call), and aggregations lists what it
--   declared with hmem.aggregate; each load declares afresh, so a pack loads any number of times.
--
-- testing.report{rows = {...}, pack = p, top = N} -> report
--   The report done(report) receives, built from allocations, with the pack's aggregations
--   computed as in hmem (lua/hmem/testing/report.lua documents it).
--
-- testing.classify(pack, row) -> category
--   Loads pack as testing.load does (a path is loaded afresh on each call; module tables and
--   names are the modules themselves, with their state), makes a row of row when it is a
--   plain table, calls classify and returns its category: a string, or nil (hmem's
--   "unclassified"). A return of any other type raises, as it stops hmem.
local testing = {}

testing.NIL = setmetatable({}, { __tostring = function() return "testing.NIL" end })

testing.fields = {
  "ts", "ts_ns", "bytes", "kind", "before_trace", "addr", "device", "device_type", "device_id",
  "rank", "file", "pid", "tid", "ev_idx", "total_allocated", "total_reserved", "free_ts",
  "lifetime", "op", "ops", "annotations", "step", "module", "python", "thread", "free_op",
  "free_ops", "free_step", "stack", "category", "modules", "frame", "step_ts",
  "context", "free_context", "ops_open_at_free", "same_step", "has_addr", "series_id",
  "frames", "block_bytes", "stream", "compile_context", "user_metadata", "segment", "free_frames",
}
local field_list = table.concat(testing.fields, ", ") .. ", view, free_view"

local known = {}
for _, f in ipairs(testing.fields) do
  known[f] = true
end
known.view, known.free_view = true, true -- the rules' view (README "The row"): see view_of

-- row.view and row.free_view, as hmem numbers them: the codes the view of the pack being
-- run gives the row's names (thread, annotations, python frames, ops; for free_view the ops
-- at the free), each name asked once per view function, each distinct sequence of codes
-- one integer from 1. The pack being run is the one whose classify runs, else the pack
-- loaded last.
local active_view
local view_state = setmetatable({}, { __mode = "k" })
local function view_of(d, field)
  local fn = active_view
  if fn == nil then
    error(("row.%s: the rules declare no view; add view = function(name, kind) ... end to the pack"
      .. " (see The row in the README), or build a pack that wraps another with hmem.extend(inner, {...}),"
      .. " which keeps its view"):format(field), 3)
  end
  local st = view_state[fn]
  if st == nil then
    st = { codes = {}, ids = {}, n = 0 }
    view_state[fn] = st
  end
  local seq = {}
  local function add(kind, name)
    if name:find("ProfilerStep#", 1, true) == 1 then
      return -- left out, as in context
    end
    local key = kind .. "\0" .. name
    local c = st.codes[key]
    if c == nil then
      c = fn(name, kind)
      if c ~= nil and c ~= false and type(c) ~= "string" then
        error(("view: returned a %s for the %s '%s'; return a string (the name's code) or nil (left out)")
          :format(type(c), kind, name), 4)
      end
      c = c or false
      st.codes[key] = c
    end
    if c then
      seq[#seq + 1] = ("%q"):format(c)
    end
  end
  if field == "view" then
    if d.thread ~= nil then add("thread", d.thread) end
    seq[#seq + 1] = "|"
    for _, n in ipairs(d.annotations) do add("annotation", n) end
    seq[#seq + 1] = "|"
    for _, n in ipairs(d.python) do add("python", n) end
    seq[#seq + 1] = "|"
    for _, n in ipairs(d.ops) do add("op", n) end
  else
    if d.free_context == nil then
      return nil
    end
    for _, n in ipairs(d.free_ops) do add("op", n) end
  end
  local key = table.concat(seq, ",")
  local id = st.ids[key]
  if id == nil then
    st.n = st.n + 1
    id = st.n
    st.ids[key] = id
  end
  return id
end

local lists = { ops = true, annotations = true, python = true, free_ops = true, stack = true, modules = true, frames = true,
  free_frames = true }
-- Lists cache_by may key on, as hmem does: a snapshot's stacks (equal stacks, equal keys).
local stacks = { frames = true, free_frames = true }

local FAKE_ADDR = 0x7f3a00000000
local context_ids = { n = 0 }

-- c10's DeviceType, as hmem names devices.
local device_names = { [0] = "cpu", [1] = "cuda", [6] = "hip", [12] = "xpu", [13] = "mps", [20] = "privateuseone" }
local device_types = {}
for t, n in pairs(device_names) do
  device_types[n] = t
end

local function device_name(dtype, id)
  if dtype == 0 then
    return "cpu"
  end
  return ("%s:%d"):format(device_names[dtype] or ("type" .. tostring(dtype)), id or 0)
end

local function parse_device(name)
  if name == "cpu" then
    return 0, -1
  end
  local kind, id = name:match("^([%a_]+):(%d+)$")
  if kind then
    local t = device_types[kind] or tonumber(kind:match("^type(%d+)$"))
    if t then
      return t, tonumber(id)
    end
  end
  local t, id2 = name:match("^type(%d+):(%d+)$")
  if t then
    return tonumber(t), tonumber(id2)
  end
  error(("testing.row: cannot parse device %q (expected \"cpu\", \"cuda:0\", \"hip:1\", ...)"):format(name), 3)
end

local function copy_list(list)
  local out = {}
  for i, v in ipairs(list) do
    if type(v) == "table" then
      local e = {}
      for k, x in pairs(v) do
        e[k] = x
      end
      out[i] = e
    else
      out[i] = v
    end
  end
  return out
end

local function step_of(names)
  for i = #names, 1, -1 do
    local n = names[i]
    local s = type(n) == "string" and n:match("^ProfilerStep#(%d+)$")
    if s then
      return math.tointeger(tonumber(s))
    end
  end
  return nil
end

-- hmem's rule for the frame field: "file(line): name", the file not under torch/.
local function user_frame(name)
  local file = name:match("^([^<(][^(]*)%(.-%)")
  if not file or name:match("^nn%.Module: ") then return false end
  return not (file:sub(1, 6) == "torch/" or file:find("/torch/", 1, true))
end

local function stack_names(stack, cats)
  local out = {}
  for _, e in ipairs(stack) do
    if cats[e.cat] then
      out[#out + 1] = e.name
    end
  end
  return out
end

-- µs from integer ns, exactly, as hmem prints them: "0.0", "12.5", "1419247333708.044".
local function fmt_ns(ns)
  local m = ns < 0 and -ns or ns
  local s = ("%s%d.%03d"):format(ns < 0 and "-" or "", m // 1000, m % 1000):gsub("0+$", "")
  if s:sub(-1) == "." then
    s = s .. "0"
  end
  return s
end

local function check_type(t, field, want)
  local v = t[field]
  if v ~= nil and type(v) ~= want then
    error(("testing.row: %s must be a %s, got %s"):format(field, want, type(v)), 3)
  end
end

local row_data = setmetatable({}, { __mode = "k" })

-- A new object for a row: a userdata as hmem's rows are, when plain Lua can make one (Lua
-- 5.4 has no newproxy: a file handle, closed at once and given the row metatable; this
-- file opened for reading is the cheapest, a temporary file the fallback), else a table.
local debug_lib, io_lib = rawget(_G, "debug"), rawget(_G, "io")
local self_path = debug_lib and debug_lib.getinfo(1, "S").source:match("^@(.+)$")
local function new_object(mt)
  if debug_lib and io_lib then
    local f = self_path and io_lib.open(self_path, "rb") or io_lib.tmpfile()
    if f then
      f:close()
      return debug_lib.setmetatable(f, mt)
    end
  end
  return setmetatable({}, mt)
end

local row_mt = {
  __name = "hmem.row",
  __index = function(self, k)
    local d = row_data[self]
    if not known[k] then
      error(("row has no field '%s' (fields: %s)"):format(tostring(k), field_list), 2)
    end
    if k == "view" or k == "free_view" then
      return view_of(d, k)
    end
    local v = d[k]
    if lists[k] then
      return copy_list(v)
    end
    return v
  end,
  __newindex = function(_, k)
    error(("rows are read-only (tried to set '%s')"):format(tostring(k)), 2)
  end,
  __tostring = function(self)
    local d = row_data[self]
    return ("hmem.row(%s %d bytes on %s at ts %s)"):format(d.kind, d.bytes, d.device, fmt_ns(d.ts_ns))
  end,
  __metatable = "hmem.row",
}

function testing.is_row(x)
  return (type(x) == "userdata" or type(x) == "table") and row_data[x] ~= nil
end

function testing.row(t)
  if testing.is_row(t) then
    return t
  end
  if type(t) ~= "table" then
    error(("testing.row: expected a table of fields, got %s"):format(type(t)), 2)
  end
  local d, given = {}, {}
  for k, v in pairs(t) do
    if not known[k] then
      error(("testing.row: unknown field '%s'"):format(tostring(k)), 2)
    end
    if v ~= testing.NIL then
      d[k] = v
    end
    given[k] = true
  end
  for _, f in ipairs({ "ts", "bytes", "device_type", "device_id", "free_ts", "lifetime", "total_allocated", "total_reserved",
                       "block_bytes", "stream", "segment" }) do
    check_type(d, f, "number")
  end
  for _, f in ipairs({ "kind", "device", "file", "op", "free_op", "module", "thread", "category", "frame",
                       "compile_context", "user_metadata" }) do
    check_type(d, f, "string")
  end
  for f in pairs(lists) do
    check_type(d, f, "table")
  end
  check_type(d, "before_trace", "boolean")

  -- bytes: a positive integer
  if not given.bytes then
    d.bytes = 512
  end
  local b = math.tointeger(d.bytes)
  if not b or b <= 0 then
    error(("testing.row: bytes must be a positive integer, got %s"):format(tostring(d.bytes)), 2)
  end
  d.bytes = b

  -- kind and before_trace
  if d.before_trace == nil then
    d.before_trace = false
  end
  if d.kind == nil then
    d.kind = d.before_trace and "free" or "alloc"
  end
  if d.kind ~= "alloc" and d.kind ~= "free" then
    error(("testing.row: kind must be \"alloc\" or \"free\", got %q"):format(d.kind), 2)
  end
  if d.before_trace and d.kind ~= "free" then
    error("testing.row: before_trace rows are frees (kind \"free\")", 2)
  end

  if not given.addr then
    d.addr = FAKE_ADDR
  end

  -- device
  if d.device then
    local dt, di = parse_device(d.device)
    if d.device_type == nil then d.device_type = dt end
    if d.device_id == nil then d.device_id = di end
  else
    if d.device_type == nil then d.device_type = 1 end
    if d.device_id == nil then d.device_id = d.device_type == 0 and -1 or 0 end
    d.device = device_name(d.device_type, d.device_id)
  end

  -- ts and ts_ns
  if d.ts_ns ~= nil then
    if math.type(d.ts_ns) ~= "integer" then
      error("testing.row: ts_ns must be an integer", 2)
    end
    if d.ts == nil then
      d.ts = d.ts_ns / 1000
    elseif math.abs(d.ts * 1000 - d.ts_ns) > 1 then
      error(("testing.row: ts %s and ts_ns %d disagree"):format(tostring(d.ts), d.ts_ns), 2)
    end
  else
    if d.ts == nil then
      d.ts = 0
    end
    d.ts_ns = math.tointeger(math.floor(d.ts * 1000 + 0.5))
  end

  -- context lists: from stack when not given
  local stack = copy_list(d.stack or {})
  for i, e in ipairs(stack) do
    if type(e) ~= "table" or type(e.name) ~= "string" then
      error(("testing.row: stack[%d] must be a {name=, cat=} table"):format(i), 2)
    end
  end
  d.stack = stack
  if d.ops == nil then d.ops = stack_names(stack, { cpu_op = true, Operator = true }) end
  if d.annotations == nil then d.annotations = stack_names(stack, { user_annotation = true }) end
  if d.python == nil then d.python = stack_names(stack, { python_function = true }) end

  -- op and ops
  local function pair(op_f, ops_f, where)
    if d[op_f] ~= nil and not given[ops_f] then
      d[ops_f] = { d[op_f] }
    elseif d[op_f] == nil and not given[op_f] then
      d[op_f] = d[ops_f][#d[ops_f]]
    elseif d[op_f] ~= d[ops_f][#d[ops_f]] then
      error(("testing.row: %s %q must be the last of %s (the innermost)"):format(op_f, tostring(d[op_f]), ops_f), where)
    end
  end
  pair("op", "ops", 3)
  if d.kind == "free" and not given.free_op and not given.free_ops then
    d.free_op, d.free_ops = d.op, copy_list(d.ops)
  else
    d.free_ops = d.free_ops or {}
    pair("free_op", "free_ops", 3)
  end
  d.frames = d.frames or {} -- a snapshot's stack ({file=, line=, name=} tables); {} as on a trace
  if d.free_frames == nil then -- a free row's own stack; an allocation's free has none unless given
    d.free_frames = d.kind == "free" and copy_list(d.frames) or {}
  end
  for i, e in ipairs(stack) do
    if (e.ts ~= nil and type(e.ts) ~= "number") or (e.dur ~= nil and type(e.dur) ~= "number") then
      error(("testing.row: stack[%d]: ts and dur must be numbers (µs)"):format(i), 2)
    end
  end

  -- step and module
  if d.step == nil and not given.step then
    local all = {}
    for i, e in ipairs(stack) do
      all[i] = e.name
    end
    d.step = step_of(d.annotations) or step_of(d.ops) or step_of(all)
  end
  if d.modules == nil then
    d.modules = {}
    for _, p in ipairs(d.python) do
      local m = p:match("^nn%.Module: (.+)$")
      if m then d.modules[#d.modules + 1] = m end
    end
  end
  if d.module == nil and not given.module then
    d.module = d.modules[#d.modules]
  end
  if d.frame == nil and not given.frame then
    for i = #d.python, 1, -1 do
      if user_frame(d.python[i]) then
        d.frame = d.python[i]
        break
      end
    end
  end
  if d.step_ts == nil and not given.step_ts and d.step ~= nil then
    for i = #stack, 1, -1 do
      local e = stack[i]
      if e.name == ("ProfilerStep#%d"):format(d.step) and e.ts ~= nil then
        d.step_ts = e.ts
        break
      end
    end
  end

  -- free_step: a free's own step; else as given, or named in free_ops (2021-style)
  if d.free_step == nil and not given.free_step then
    if d.kind == "free" then
      d.free_step = d.step
    else
      d.free_step = step_of(d.free_ops)
    end
  end

  -- free_ts and lifetime
  if d.kind == "free" then
    if d.free_ts == nil and not given.free_ts then
      d.free_ts = d.ts
    end
  else
    if d.free_ts == nil and d.lifetime ~= nil then
      d.free_ts = d.ts + d.lifetime
    elseif d.free_ts ~= nil and d.lifetime == nil and not given.lifetime then
      d.lifetime = d.free_ts - d.ts
    end
    if d.lifetime ~= nil and d.lifetime < 0 then
      error("testing.row: an allocation cannot be freed before it is made (free_ts < ts)", 2)
    end
    if d.free_ts == nil and (d.free_step ~= nil or d.free_op ~= nil) then
      error("testing.row: free_step and free_op(s) describe a free: give free_ts or lifetime too", 2)
    end
  end

  -- context facts (hmem computes them in C): context ids from the names, negative so that
  -- they never meet hmem's (non-negative hashes) in a shared memo
  local function context_id(...)
    local key = table.concat({ ... }, "\0")
    local id = context_ids[key]
    if id == nil then
      context_ids.n = context_ids.n - 1
      id = context_ids.n
      context_ids[key] = id
    end
    return id
  end
  if not given.has_addr then
    d.has_addr = d.addr ~= nil
  end
  local freed = d.kind == "alloc" and d.free_ts ~= nil
  if not given.context then
    local names = {}
    for i, e in ipairs(stack) do
      names[i] = e.name .. "\1" .. tostring(e.cat)
    end
    d.context = context_id(tostring(d.thread), tostring(d.tid), table.concat(d.ops, "\1"),
      table.concat(d.annotations, "\1"), table.concat(d.python, "\1"), table.concat(names, "\2"))
  end
  if not given.series_id then
    d.series_id = context_id("series", tostring(d.file), tostring(d.device))
  end
  if not given.free_context and (freed or d.kind == "free") then
    d.free_context = d.kind == "free" and d.context or context_id("free", table.concat(d.free_ops, "\1"))
  end
  if not given.ops_open_at_free and freed then
    -- by the stack's op slice times when given, else by names: the leading ops shared with free_ops
    local timed, open = false, 0
    for _, e in ipairs(stack) do
      if (e.cat == "cpu_op" or e.cat == "Operator") and e.ts and e.dur then
        timed = true
        if e.ts + e.dur + 0.0005 >= d.free_ts then -- half a ns: µs doubles round
          open = open + 1
        else
          break
        end
      end
    end
    if not timed then
      open = 0
      while open < #d.ops and open < #d.free_ops and d.ops[open + 1] == d.free_ops[open + 1] do
        open = open + 1
      end
    end
    d.ops_open_at_free = open
  end
  if not given.same_step and d.kind == "alloc" and d.step ~= nil then
    d.same_step = freed and d.free_step == d.step
  end

  -- times are floats in hmem, whatever number a test gives
  for _, f in ipairs({ "ts", "free_ts", "lifetime", "step_ts" }) do
    if d[f] ~= nil then
      d[f] = d[f] + 0.0
    end
  end
  for _, e in ipairs(stack) do
    if e.ts ~= nil then e.ts = e.ts + 0.0 end
    if e.dur ~= nil then e.dur = e.dur + 0.0 end
  end

  local row = new_object(row_mt)
  row_data[row] = d
  return row
end

-- Loading packs ------------------------------------------------------------------------------

local function file_exists(path)
  local f = io.open(path, "rb")
  if f then
    f:close()
    return true
  end
  return false
end

local function read_file(path)
  local f, err = io.open(path, "rb")
  if not f then
    error(("testing.load: %s"):format(err), 3)
  end
  local src = f:read("a")
  f:close()
  return src
end

-- The leading comment of a file, its lines joined with spaces.
local function header_comment(src)
  local lines = {}
  for line in (src .. "\n"):gmatch("(.-)\r?\n") do
    local c = line:match("^%-%-+%s?(.*)$")
    if not c or line:match("^%-%-%[%[") then
      break
    end
    if c == "" then
      break
    end
    lines[#lines + 1] = c
  end
  return table.concat(lines, " ")
end

local function search_dirs(rule_dir)
  local dirs = { rule_dir }
  local hp = os.getenv("HMEM_PATH")
  if hp then
    for dir in hp:gmatch("[^:]+") do
      dirs[#dirs + 1] = dir
    end
  end
  return dirs
end

local sandbox_base = {
  "assert", "error", "getmetatable", "ipairs", "next", "pairs", "pcall", "print", "rawequal",
  "rawget", "rawlen", "rawset", "select", "setmetatable", "tonumber", "tostring", "type",
  "xpcall", "_VERSION", "collectgarbage", "string", "table", "math", "utf8",
}

local sandbox

-- The modules built into hmem: the only ones past the search directories.
local function built_in(name)
  return name == "hmem" or name == "hmem.testing" or name:match("^hmem%.rules%.[%w_]+$") ~= nil
end

local not_found = "module '%s' not found (looked in the rule file's directory, -I directories, HMEM_PATH and the modules built into hmem)"

-- require as hmem gives it to rule files: cjson and hmem.* are the real ones; then a module next to the
-- rule file or on HMEM_PATH, run in its own sandbox; then the modules built into hmem (on
-- package.path here); nothing else (not io, not a module that happens to be on package.path).
local function sandbox_require(rule_dir)
  local dirs = search_dirs(rule_dir)
  return function(name)
    if type(name) ~= "string" then
      error("require: module name must be a string", 2)
    end
    if name == "cjson" or name == "cjson.safe" then
      return require(name)
    end
    -- hmem and hmem.* are reserved, as in hmem: always the built-in modules, never a file
    -- of that name next to the rule file or on HMEM_PATH.
    if name == "hmem" or name:sub(1, 5) == "hmem." then
      if built_in(name) and (package.loaded[name] ~= nil or package.searchpath(name, package.path)) then
        return require(name)
      end
      error(not_found:format(name), 2)
    end
    local rel = name:gsub("%.", "/")
    for _, dir in ipairs(dirs) do
      for _, cand in ipairs({ dir .. "/" .. rel .. ".lua", dir .. "/" .. rel .. "/init.lua" }) do
        if file_exists(cand) then
          if package.loaded[name] ~= nil then
            return package.loaded[name]
          end
          local chunk, err = load(read_file(cand), "@" .. cand, "t", sandbox(rule_dir))
          if not chunk then
            error(err, 2)
          end
          local m = chunk(name, cand)
          if m == nil then
            m = true
          end
          package.loaded[name] = m
          return m
        end
      end
    end
    if built_in(name) and (package.loaded[name] ~= nil or package.searchpath(name, package.path)) then
      return require(name)
    end
    error(not_found:format(name), 2)
  end
end

-- A fresh strict environment for one chunk, as hmem gives a rule file or module.
function sandbox(rule_dir)
  local env, allowed = {}, {}
  for _, k in ipairs(sandbox_base) do
    allowed[k] = _G[k]
  end
  allowed.os = { time = os.time, clock = os.clock, date = os.date, difftime = os.difftime }
  allowed.load = function(chunk, name, _, e)
    return load(chunk, name, "t", e or env)
  end
  allowed.require = sandbox_require(rule_dir)
  allowed._G = env
  return setmetatable(env, {
    __index = function(_, k)
      local v = allowed[k]
      if v == nil then
        error(("undefined global '%s'"):format(tostring(k)), 2)
      end
      return v
    end,
  })
end

local function normalise(t, source, default_name, default_description)
  if type(t) ~= "table" then
    error(("%s: a pack must be a table, got %s"):format(source, type(t)), 3)
  end
  if type(t.classify) ~= "function" then
    error(("%s: no classify function"):format(source), 3)
  end
  local cats, seen = {}, {}
  if t.categories ~= nil then
    if type(t.categories) ~= "table" then
      error(("%s: categories must be a list"):format(source), 3)
    end
    for i, c in ipairs(t.categories) do
      local name, color
      if type(c) == "string" then
        name = c
      elseif type(c) == "table" then
        name, color = c.name, c.color
      end
      if type(name) ~= "string" or name == "" then
        error(("%s: categories[%d] must be a name or {name=, color=}"):format(source, i), 3)
      end
      if color ~= nil and (type(color) ~= "string" or not color:match("^#%x%x%x%x%x%x$")) then
        error(("%s: category %q: color must be \"#rrggbb\""):format(source, name), 3)
      end
      if seen[name] then
        error(("%s: category %q is listed twice"):format(source, name), 3)
      end
      seen[name] = true
      cats[#cats + 1] = { name = name, color = color }
    end
  end
  local cache_by = t.cache_by
  if cache_by ~= nil then
    if type(cache_by) ~= "table" or #cache_by == 0 then
      error(("%s: cache_by must be a list of row field names"):format(source), 3)
    end
    for _, f in ipairs(cache_by) do
      if type(f) ~= "function" and (not known[f] or f == "category" or (lists[f] and not stacks[f])) then
        error(("%s: cache_by: '%s' is not a single-valued row field"):format(source, tostring(f)), 3)
      end
    end
  end
  for _, f in ipairs({ "done", "init", "view" }) do
    if t[f] ~= nil and type(t[f]) ~= "function" then
      error(("%s: %s must be a function"):format(source, f), 3)
    end
  end
  -- as hmem: a cache_by on view without a view fails at load (issue 28), not at the first row
  for _, f in ipairs(cache_by or {}) do
    if (f == "view" or f == "free_view") and t.view == nil then
      error(("%s: cache_by names %s, but the rules declare no view function: a pack made of another loses the"
        .. " inner pack's view; build it with hmem.extend(inner, {...}), or add view = inner.view"
        .. " (README \"Composing packs\")"):format(source, f), 3)
    end
  end
  local p = {
    name = t.name or default_name,
    description = t.description or default_description or "",
    categories = cats,
    classify = t.classify,
    done = t.done,
    init = t.init,
    view = t.view,
    cache_by = cache_by,
  }
  -- Team packs (issue 17): the pack's other entries (helper functions, tables) are kept, so
  -- a test can call them; the normalised entries above win.
  for k, v in pairs(t) do
    if p[k] == nil and k ~= "description" and k ~= "name" then p[k] = v end
  end
  return p
end

local function load_path(path)
  local src = read_file(path)
  local dir = path:match("^(.*)/[^/]*$") or "."
  local env = sandbox(dir)
  local chunk, err = load(src, "@" .. path, "t", env)
  if not chunk then
    error(err, 3)
  end
  local hmem = require "hmem"
  hmem._cache_by = nil -- what this file declares with hmem.cache_by, as hmem reads it
  -- Team packs (issue 17): each load declares its aggregations afresh, as each hmem run
  -- does, so one busted run may load a pack that declares them twice.
  hmem._aggregations = {}
  local ret = chunk()
  local base = path:match("([^/]+)$"):gsub("%.lua$", "")
  local pack
  if ret ~= nil then
    pack = normalise(ret, path, base, header_comment(src))
  else
    -- the file's global functions: its hooks and its helpers (issue 17)
    local globals = { cache_by = hmem._cache_by }
    for k, v in pairs(env) do
      if type(k) == "string" and type(v) == "function" then globals[k] = v end
    end
    pack = normalise(globals, path, base, header_comment(src))
  end
  pack.aggregations = hmem._aggregations
  return pack
end

-- classify answered from a memo keyed by the cache_by fields' values, types included (1 and
-- 1.0 differ, as in hmem's key), as hmem calls it: once per distinct combination.
-- hmem.cache_clear() (counted in hmem._cache_clears) empties the memo, as in hmem.
local function memoised(classify, fields)
  local hmem = require "hmem"
  local memo, key, clears = {}, {}, hmem._cache_clears
  return function(row)
    for i, f in ipairs(fields) do
      if type(f) == "function" then -- a key function (hmem calls it once per context)
        local v = f(row)
        local t = type(v)
        if t ~= "nil" and t ~= "boolean" and t ~= "number" and t ~= "string" then
          error(("cache_by: a key function returned a %s; it must return a string, number, boolean or nil"):format(t), 2)
        end
        key[i] = "f" .. ("%q"):format(v)
      elseif stacks[f] then -- a stack: its frames' text, as hmem keys on the interned stack
        local parts = {}
        for j, fr in ipairs(row[f]) do
          parts[j] = ("%q:%q:%q"):format(fr.file, fr.line, fr.name)
        end
        key[i] = "s" .. table.concat(parts, ";")
      else
        key[i] = ("%q"):format(row[f])
      end
    end
    local k = table.concat(key, "\0", 1, #fields)
    if hmem._cache_clears ~= clears then
      memo, clears = {}, hmem._cache_clears
    end
    local cat = memo[k]
    if cat == nil then
      local remember
      cat, remember = classify(row)
      if hmem._cache_clears ~= clears then
        memo, clears = {}, hmem._cache_clears
      end
      if remember == false then -- an answer that depends on more than the fields, as in hmem
        return cat
      end
      if cat == nil then
        cat = memo -- nil (unclassified) is remembered too
      end
      memo[k] = cat
    end
    if cat == memo then
      return nil
    end
    return cat
  end
end

local function load_any(pack)
  local p
  if type(pack) == "table" then
    p = normalise(pack, "pack", "pack")
  elseif type(pack) == "string" then
    if pack:find("/", 1, true) or pack:match("%.lua$") then
      p = load_path(pack)
    else
      p = normalise(require(pack), pack, pack)
    end
  else
    error(("testing.load: expected a pack table, module name or path, got %s"):format(type(pack)), 3)
  end
  if p.cache_by then
    p.classify = memoised(p.classify, p.cache_by)
  end
  -- rows read the view of the pack being run (hmem has one set of rules per run)
  local classify, view = p.classify, p.view
  active_view = view
  p.classify = function(row)
    active_view = view
    return classify(row)
  end
  return p
end

function testing.load(pack)
  local p = load_any(pack)
  if p.init then
    p.init()
  end
  return p
end

function testing.classify(pack, row)
  local p = load_any(pack)
  if p.init then
    p.init()
  end
  local r = testing.row(row)
  local cat = p.classify(r)
  if cat ~= nil and type(cat) ~= "string" then
    error(("classify returned a %s, expected a category name (a string) or nil"):format(type(cat)), 2)
  end
  if cat == "" then -- as hmem (issue 17)
    error("classify returned an empty string, expected a category name (a non-empty string) or nil", 2)
  end
  return cat
end

-- Budgets, parameters and failures (issue 15), as hmem run gives them to a pack.
--
-- testing.args(t)
--   Sets hmem.args, what `hmem run ... --set key=value` gives: t maps names to strings (a
--   number is taken as its text). Call it before testing.load: a pack reads hmem.args while
--   it loads. testing.args{} empties it.
--
-- testing.budgets() -> {{device=, category=, max=}, ...}
--   The budgets declared with hmem.budget so far (by every pack loaded), max in bytes; the
--   list is emptied by each call, so each test sees its own.
--
-- testing.done(pack, report) -> message or nil
--   Runs the pack's done(report) (loaded as testing.load does; report is any table the test
--   makes) and returns the message it gave hmem.fail, or nil when it did not fail the run.
--   Any other error is raised, as it stops hmem with exit 3.
function testing.args(t)
  local hmem = require "hmem"
  local args = {}
  for k, v in pairs(t or {}) do
    if type(k) ~= "string" or (type(v) ~= "string" and type(v) ~= "number") then
      error("testing.args: expected {name = \"value\", ...}", 2)
    end
    args[k] = tostring(v)
  end
  hmem.args = args
end

function testing.budgets()
  local hmem = require "hmem"
  local list = hmem._budgets
  hmem._budgets = {}
  return list
end

function testing.done(pack, report)
  local p = type(pack) == "table" and pack.done and pack or testing.load(pack)
  if not p.done then
    error("testing.done: the pack has no done function", 2)
  end
  local ok, err = pcall(p.done, report)
  if ok then
    return nil
  end
  if type(err) == "table" and getmetatable(err) == require("hmem")._fail_mt then
    return err.message
  end
  error(err, 0)
end

-- Team packs (issue 17) ----------------------------------------------------------------------

-- testing.report{rows = {...}, pack = p, top = N} -> a report as done(report) receives it;
-- lua/hmem/testing/report.lua documents it.
function testing.report(spec)
  return require("hmem.testing.report").build(testing, spec)
end

return testing
