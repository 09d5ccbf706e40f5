-- hmem: helpers for rule files. `local hmem = require "hmem"` in a rule file, or from
-- plain lua5.4 / busted with package.path including "lua/?.lua;lua/?/init.lua".
-- Inside `hmem run`, each chunk that requires it gets its own instance, and the host puts
-- its own functions in it: hmem.write, and hmem.aggregate and hmem.cache_by, which check a
-- declaration and copy it into hmem (the Lua versions below serve plain lua5.4 and busted).
local hmem = {}

-- The version, written here only: the Makefile reads it from this line into the binary
-- (hmem -V, and hmem.version in every instance hmem run makes), and plain lua5.4 and busted
-- read it here, with no process run (issue 26).
hmem.version = "0.1.0"

-- Binary units, in bytes.
hmem.KiB = 1024
hmem.MiB = 1024 * 1024
hmem.GiB = 1024 * 1024 * 1024
hmem.TiB = 1024 * 1024 * 1024 * 1024

local units = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" }

-- Human-readable bytes in binary units: human(1536) == "1.50 KiB", human(512) == "512 B".
-- The same text as hmem's own outputs (hm_fmt_bytes in src/util.c, step for step): the size
-- as a float, up a unit also when two decimals would round to 1024.00 (1048575 is
-- "1.00 MiB", never "1024.00 KiB"), PiB at most; tests/human.lua compares the two.
function hmem.human(bytes)
  if type(bytes) ~= "number" then
    error(("human: expected a number of bytes, got %s"):format(type(bytes)), 2)
  end
  local v, u = math.abs(bytes + 0.0), 1
  while (v >= 1024 or (u > 1 and v >= 1023.995)) and u < #units do
    v, u = v / 1024, u + 1
  end
  local sign = bytes < 0 and "-" or ""
  if u == 1 then
    return ("%s%.0f B"):format(sign, v)
  end
  return ("%s%.2f %s"):format(sign, v, units[u])
end

-- The first category whose limit the size exceeds, from a list of {limit, name} pairs
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

-- Declarations, outside hmem run.
hmem._aggregations = {}
hmem._cache_by = nil

local aggregate_keys = { name = true, by = true, sum = true, count = true, max = true, where = true, top = true,
                         per = true }

-- Declare a group-by over allocations, computed by hmem after the timeline:
--   hmem.aggregate{name = "by op", by = {"category", "op"}, sum = "bytes", count = true,
--                  max = "lifetime", where = "live_at_peak", top = 20}
-- `by` entries are row field names or functions(row) returning a key; `where` is
-- "all" (default), "live_at_peak", "live_at_end" or a function(row) returning true to keep.
function hmem.aggregate(spec)
  if type(spec) ~= "table" then
    error("aggregate: expected a table {name=, by=, ...}", 2)
  end
  for k in pairs(spec) do
    if not aggregate_keys[k] then
      error(("aggregate: unknown key '%s' (keys: name, by, sum, count, max, where, top, per)"):format(tostring(k)), 2)
    end
  end
  if type(spec.name) ~= "string" then error("aggregate: name must be a string", 2) end
  local by = spec.by
  if type(by) == "string" or type(by) == "function" then by = { by } end
  if type(by) ~= "table" or #by == 0 then error("aggregate: by must list at least one field or function", 2) end
  for _, key in ipairs(by) do
    if type(key) ~= "string" and type(key) ~= "function" then
      error("aggregate: each by entry must be a field name or a function(row)", 2)
    end
  end
  local where = spec.where or "all"
  if type(where) ~= "function" and where ~= "all" and where ~= "live_at_peak" and where ~= "live_at_end" then
    error("aggregate: where must be \"all\", \"live_at_peak\", \"live_at_end\" or a function(row)", 2)
  end
  for _, k in ipairs({ "sum", "max" }) do
    if spec[k] ~= nil and type(spec[k]) ~= "string" then error("aggregate: " .. k .. " must be a field name", 2) end
  end
  if spec.top ~= nil and (math.type(spec.top) ~= "integer" or spec.top < 1) then
    error("aggregate: top must be a positive integer", 2)
  end
  for _, a in ipairs(hmem._aggregations) do
    if a.name == spec.name then error(("aggregate: '%s' is declared twice"):format(spec.name), 2) end
  end
  local per = spec.per or "series"
  if per ~= "series" and per ~= "all" then
    error("aggregate: per must be \"series\" (the default) or \"all\"", 2)
  end
  -- Per series (the default), file and device are the first keys, as in hmem.
  local keys = {}
  if per == "series" then keys = { "file", "device" } end
  for _, key in ipairs(by) do
    if per ~= "series" or (key ~= "file" and key ~= "device") then keys[#keys + 1] = key end
  end
  local decl = { name = spec.name, by = keys, sum = spec.sum, count = spec.count ~= false, max = spec.max,
                 where = where, top = spec.top, per = per }
  hmem._aggregations[#hmem._aggregations + 1] = decl
  return decl
end

-- Memoise a pure classify: the category of an allocation depends only on these fields,
-- so hmem calls classify once per distinct combination of their values.
--   hmem.cache_by{"op", "bytes"}
function hmem.cache_by(fields)
  if type(fields) ~= "table" or #fields == 0 then
    error("cache_by: expected a list of row field names, e.g. {\"op\", \"bytes\"}", 2)
  end
  for _, f in ipairs(fields) do
    if type(f) ~= "string" then error("cache_by: field names must be strings", 2) end
  end
  hmem._cache_by = fields
end

-- Forget every answer the cache_by memo remembered: for a classify with state, when its
-- state changed what it would answer for combinations it has answered. Inside hmem run
-- it clears hmem's memo; here hmem.testing's memos see the count change.
hmem._cache_clears = 0
function hmem.cache_clear()
  hmem._cache_clears = hmem._cache_clears + 1
end

-- A pack made of another (README "Composing packs"): pack's entries (view, cache_by,
-- categories with their colours, init, done, helpers) with override's in their place.
-- override.classify(row, inner) gets the inner pack's classify as its second argument. The
-- memo stays: cache_by is the inner pack's plus override.cache_by (the fields the override's
-- own classify reads), none when the inner pack has none or override.cache_by is false.
-- Categories: override's first, then the inner pack's it does not name.
--   local pytorch = require "hmem.rules.pytorch"
--   return hmem.extend(pytorch, { name = "mine", cache_by = { "bytes" },
--     classify = function(row, inner) if row.bytes > 1 << 30 then return "big" end return inner(row) end })
-- The entries of the lists, in order, each key (key(entry)) once: its first entry kept.
local function union(lists, key)
  local out, seen = {}, {}
  for _, list in ipairs(lists) do
    for _, v in ipairs(list) do
      local k = key(v)
      if not seen[k] then
        seen[k] = true
        out[#out + 1] = v
      end
    end
  end
  return out
end

local function category_name(c)
  return type(c) == "table" and c.name or c
end

function hmem.extend(pack, override)
  if type(pack) ~= "table" or type(pack.classify) ~= "function" then
    error(("hmem.extend: expected a pack table with a classify function, got %s"):format(type(pack)), 2)
  end
  override = override or {}
  if type(override) ~= "table" then
    error(("hmem.extend: the override must be a table of pack entries, not a %s"):format(type(override)), 2)
  end
  local out = {}
  for k, v in pairs(pack) do out[k] = v end
  for k, v in pairs(override) do out[k] = v end
  local inner = pack.classify
  local own = override.classify
  if own ~= nil and type(own) ~= "function" then
    error(("hmem.extend: classify must be a function(row, inner), not a %s"):format(type(own)), 2)
  end
  out.classify = own and function(row) return own(row, inner) end or inner
  local cats = { override.categories or {}, pack.categories or {} }
  if type(cats[1]) ~= "table" or type(cats[2]) ~= "table" then error("hmem.extend: categories must be a list", 2) end
  out.categories = union(cats, category_name)
  local by = override.cache_by
  if by ~= nil and by ~= false and type(by) ~= "table" then
    error(("hmem.extend: cache_by must be a list of row fields or false, not a %s"):format(type(by)), 2)
  end
  out.cache_by = nil
  if by ~= false and pack.cache_by ~= nil then
    out.cache_by = union({ pack.cache_by, by or {} }, function(f) return f end)
  end
  return out
end

-- Parameters given with `hmem run ... --set key=value`, as strings (the pack converts them):
--   local layers = tonumber(hmem.args.layers or "12")
-- Inside hmem run each instance gets its own table; here it is empty (hmem.testing.args sets it).
hmem.args = {}

-- Budgets declared with hmem.budget, outside hmem run (hmem.testing.budgets lists them).
hmem._budgets = {}

local size_units = { b = 1, kb = 1e3, mb = 1e6, gb = 1e9, tb = 1e12, pb = 1e15,
                     kib = 1024, mib = 1024 ^ 2, gib = 1024 ^ 3, tib = 1024 ^ 4, pib = 1024 ^ 5 }

-- A size as --fail-above takes it: "12GiB", "1.5 GB", "4096"; nil if it is not one.
local function size_of(s)
  local num, unit = s:match("^(%d*%.?%d*) ?(%a*)$")
  local mul = size_units[(unit or ""):lower()] or (unit == "" and 1)
  if not num or not num:find("%d") or not mul then return nil end
  return math.floor(tonumber(num) * mul + 0.5)
end

-- Declare a limit checked once the run is over, as --fail-above: the device's peak (no
-- category) or one category's own peak, on every device matching `device` (a glob such as
-- "cuda:*"; all when nil). max is bytes: a number or a size such as "12GiB". Exceeding it
-- makes hmem exit 6, after writing every output.
--   hmem.budget{device = "cuda:*", category = "activation", max = 12 * hmem.GiB}
function hmem.budget(spec)
  if type(spec) ~= "table" then error("hmem.budget: expected a table {device=, category=, max=}", 2) end
  for k in pairs(spec) do
    if k ~= "device" and k ~= "category" and k ~= "max" then
      error(("hmem.budget: unknown key '%s' (keys: device, category, max)"):format(tostring(k)), 2)
    end
  end
  for _, k in ipairs({ "device", "category" }) do
    if spec[k] ~= nil and type(spec[k]) ~= "string" then
      error(("hmem.budget: %s must be a string, not a %s"):format(k, type(spec[k])), 2)
    end
  end
  local max = spec.max
  if type(max) == "string" then max = size_of(max) end
  if type(max) ~= "number" or max ~= max or max < 0 or max > 2 ^ 62 then
    error("hmem.budget: max must be bytes, a number from 0 to 2^62 or a size such as \"12GiB\"", 2)
  end
  hmem._budgets[#hmem._budgets + 1] = { device = spec.device, category = spec.category, max = math.floor(max) }
end

-- What hmem.fail raises outside hmem run: {message = ...}, printed as "hmem.fail: message".
local fail_mt = { __tostring = function(f) return "hmem.fail: " .. f.message end }
hmem._fail_mt = fail_mt

-- In done(report): fail the run on purpose. hmem writes every output, prints the summary and
-- the message, and exits 6: no traceback, it is no script error. It stops done.
-- hmem.note(text): a line for the user on standard error, never mixed into an output.
function hmem.note(text)
  if type(text) ~= "string" then error("hmem.note: expected a string", 2) end
  io.stderr:write("hmem: note: ", text, "\n")
end

function hmem.fail(message)
  if type(message) ~= "string" then error("hmem.fail: expected a message (a string)", 2) end
  error(setmetatable({ message = message }, fail_mt), 0)
end

-- hmem.write(name, text): write a file into the --out directory (only inside hmem run).
function hmem.write()
  error("hmem.write works inside 'hmem run ... --out DIR'", 2)
end

return hmem
