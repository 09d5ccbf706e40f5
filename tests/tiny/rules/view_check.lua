-- row.view and row.free_view against the row's own lists (issue 19): the rule works out, in
-- Lua, the sequence of codes its view gives each row's thread, annotations, python frames
-- and ops (the free's ops for free_view), ProfilerStep#N markers left out, and done() fails the run unless equal sequences
-- have equal views and different sequences different views, and unless hmem asked the view
-- about each name of a kind once. The codes collapse many names into one and drop others.
local hmem = require "hmem"

local asked = {}
local twice = nil
local function code(name, kind)
  if kind == "thread" then
    return name:sub(1, 1)
  elseif kind == "annotation" then
    return "A" .. #name % 2
  elseif kind == "python" then
    return name:find("nn.Module: ", 1, true) == 1 and "M" or nil
  end
  return name:match("^[%w_]+::(.)") or "?"
end

function view(name, kind)
  local k = kind .. "\0" .. name
  if asked[k] then
    twice = twice or (kind .. " " .. name)
  end
  asked[k] = true
  return code(name, kind)
end

local function seq(row, free)
  local t = {}
  local function add(kind, list)
    for _, n in ipairs(list) do
      local c = n:find("ProfilerStep#", 1, true) ~= 1 and code(n, kind) -- markers are left out
      if c then t[#t + 1] = c end
    end
    t[#t + 1] = "|"
  end
  if free then
    add("op", row.free_ops)
  else
    add("thread", { row.thread })
    add("annotation", row.annotations)
    add("python", row.python)
    add("op", row.ops)
  end
  return table.concat(t, ",")
end

local by_view, by_seq, rows, bad = {}, {}, 0, nil
local function check(side, id, s)
  local key = side .. tostring(id)
  if by_view[key] ~= nil and by_view[key] ~= s then
    bad = bad or ("%s %s names both %q and %q"):format(side, tostring(id), by_view[key], s)
  end
  if by_seq[side .. s] ~= nil and by_seq[side .. s] ~= id then
    bad = bad or ("%s %q has two views, %s and %s"):format(side, s, tostring(by_seq[side .. s]), tostring(id))
  end
  by_view[key], by_seq[side .. s] = s, id
end

function classify(row)
  rows = rows + 1
  check("view", row.view, seq(row, false))
  local fv = row.free_view
  if (fv == nil) ~= (row.free_context == nil) then
    bad = bad or "free_view is nil exactly when free_context is, and not here"
  end
  if fv ~= nil then
    check("free_view", fv, seq(row, true))
  end
  return "all"
end

function done()
  if bad then hmem.fail(bad) end
  if twice then hmem.fail("view asked twice about " .. twice) end
  if rows == 0 then hmem.fail("no rows were classified") end
  print("view_check: ok")
end
