-- hmem.diff: what changed between two runs (`hmem diff`), from two sides that are each an
-- hmem --json report or a run read from traces (src/diffside.c: the same report with, per
-- series, every allocation live at the peak grouped by op and by module, and its timeline).
-- Plain Lua with cjson: hmem runs it embedded, and busted can test it from lua5.4.
--
--   diff.run(before_text, after_text, opts) -> {text=, json=, csv=, html=}, breaks, notes
--     opts: names = {before, after} (how each side is named), top (groups shown, default
--     10), deltas = {{key=, device=true|nil, bytes=, pct=, from=}, ...} (--fail-above-delta),
--     formats = {text = true, ...} (which outputs to make), changed_only (leave out the rows
--     and pairs that did not change). breaks lists one line per delta exceeded; notes the
--     warnings (a delta that matches nothing).
local cjson = require "cjson"

local diff = {}

local function num(v)
  return (v == nil or v == cjson.null) and 0 or v
end

local function int(v)
  return ("%.0f"):format(num(v))
end

local units = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" }

-- Bytes in binary units, as hmem's summary prints them ("1.50 KiB", "512 B", "-2.00 MiB").
function diff.human(bytes)
  local v, u = math.abs(bytes), 1
  while (v >= 1024 or (u > 1 and v >= 1023.995)) and u < #units do
    v, u = v / 1024, u + 1
  end
  local sign = bytes < 0 and "-" or ""
  if u == 1 then return ("%s%.0f B"):format(sign, v) end
  return ("%s%.2f %s"):format(sign, v, units[u])
end

-- Length of the well-formed UTF-8 sequence at i (Unicode table 3-7), 0 if there is none:
-- src/util.c's utf8_len.
local function utf8_len(s, i)
  local c = s:byte(i)
  local len = (c >= 0xc2 and c <= 0xdf) and 2 or (c >= 0xe0 and c <= 0xef) and 3 or (c >= 0xf0 and c <= 0xf4) and 4 or 0
  if len == 0 or #s - i + 1 < len then return 0 end
  local lo = c == 0xe0 and 0xa0 or c == 0xf0 and 0x90 or 0x80
  local hi = c == 0xed and 0x9f or c == 0xf4 and 0x8f or 0xbf
  local b = s:byte(i + 1)
  if b < lo or b > hi then return 0 end
  for k = 2, len - 1 do
    b = s:byte(i + k)
    if b < 0x80 or b > 0xbf then return 0 end
  end
  return len
end

-- Text for a terminal, as hmem's other text output (src/util.c hm_esc, issue 12): a name
-- from a trace or a report ("\x1b[2J", a line break) never reaches the terminal as bytes it
-- obeys. C0 controls, DEL and C1 controls (U+0080..U+009F in UTF-8, or such a byte on its
-- own) are shown as \xNN per byte; other text, valid UTF-8 or not, passes as it is.
function diff.esc(s)
  s = tostring(s)
  if not s:find("[\0-\31\127-\159\194]") then return s end
  local out, i, n = {}, 1, #s
  while i <= n do
    local c = s:byte(i)
    local len = c >= 0x80 and utf8_len(s, i) or 1
    local ctl = 0
    if c < 0x20 or c == 0x7f or (c >= 0x80 and c <= 0x9f) then
      ctl = 1
    elseif c == 0xc2 and len == 2 and s:byte(i + 1) <= 0x9f then
      ctl = 2
    end
    if ctl > 0 then
      for k = 0, ctl - 1 do out[#out + 1] = ("\\x%02x"):format(s:byte(i + k)) end
      i = i + ctl
    else
      len = len > 0 and len or 1 -- a byte that is not UTF-8 (and not a control)
      out[#out + 1] = s:sub(i, i + len - 1)
      i = i + len
    end
  end
  return table.concat(out)
end

-- A glob piece without "*" (each "?" any one byte) as a Lua pattern with no quantifier:
-- finding it costs at most its length per position tried, never a backtrack.
local function piece(seg)
  return (seg:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", function(c) return c == "?" and "." or "%" .. c end))
end

-- Whether a glob (*, ?) matches the whole of name (issue 24). A Lua pattern with one ".*"
-- per star backtracks: two stars over a 1 MB name were minutes. Here the pieces between
-- stars are found in order, each at its leftmost place (a later place never helps: each
-- piece has a fixed length), the first anchored at the start and the last at the end: the
-- work is at most the name's length times the pattern's.
function diff.glob_match(pattern, name)
  local segs = {}
  for seg in (pattern .. "*"):gmatch("([^*]*)%*") do segs[#segs + 1] = seg end
  if #segs == 1 then return #name == #pattern and name:find("^" .. piece(pattern) .. "$") ~= nil end
  local first, last = segs[1], segs[#segs]
  local limit = #name - #last -- the middle pieces end at or before it
  if #first > limit or not name:find("^" .. piece(first)) then return false end
  if not name:find("^" .. piece(last) .. "$", limit + 1) then return false end
  local pos = #first + 1
  for i = 2, #segs - 1 do
    local _, e = name:find(piece(segs[i]), pos)
    if not e or e > limit then return false end
    pos = e + 1
  end
  return true
end

local function matches(pattern, name)
  return pattern == nil or pattern == name or diff.glob_match(pattern, name)
end

-- Groups of a --json report's series: its live_at_peak list (--top of them) by op, memory
-- from before the trace as "(before trace)", and what the list leaves out as one group.
local function groups_of_report(s)
  local g, listed = {}, 0
  for _, c in ipairs(s.categories or {}) do
    if c.name == "(before trace)" and num(c.bytes_at_peak) > 0 then
      g["(before trace)"] = num(c.bytes_at_peak)
      listed = listed + num(c.bytes_at_peak)
    end
  end
  -- a snapshot's rows have frames, no op: grouped by user frame and its file too
  local snap = s.snapshot ~= nil and s.snapshot ~= cjson.null
  local fr, fi = snap and {} or nil, snap and {} or nil
  for k, v in pairs(g) do
    if fr then fr[k], fi[k] = v, v end
  end
  for _, a in ipairs(s.live_at_peak or {}) do
    local key = (a.op == nil or a.op == cjson.null) and "(no op)" or a.op
    g[key] = (g[key] or 0) + num(a.bytes)
    listed = listed + num(a.bytes)
    if fr then
      local frame = type(a.frame) == "string" and a.frame or nil
      key = frame or "(no frame)"
      fr[key] = (fr[key] or 0) + num(a.bytes)
      key = frame and diff.frame_file(frame) or "(no file)"
      fi[key] = (fi[key] or 0) + num(a.bytes)
    end
  end
  if num(s.peak_bytes) > listed then
    local rest = num(s.peak_bytes) - listed
    g["(not listed in the --json)"] = rest
    if fr then fr["(not listed in the --json)"], fi["(not listed in the --json)"] = rest, rest end
  end
  if fr then return { frame = fr, file = fi } end
  return { op = g }
end

-- The file of a frame "FILE(LINE): NAME" (diffside.c's frame_file_len does the same).
function diff.frame_file(frame)
  local i = frame:find("): ", 1, true)
  if not i then return frame end
  local j = i
  while j > 1 and frame:sub(j, j) ~= "(" do j = j - 1 end
  return j > 1 and frame:sub(1, j - 1) or frame
end

local function groups_of_side(e)
  local out = {}
  for what, list in pairs(e.groups) do
    out[what] = {}
    for _, kv in ipairs(list) do out[what][kv[1]] = kv[2] end
  end
  return out
end

-- A report given to diff is data from elsewhere: a value of the wrong type is an error
-- naming the side and where it is ("FILE: what", exit 4), never a Lua error inside diff.
-- where is a format and its arguments, made into text only for the error.
local function want(v, kind, optional, name, where, ...)
  if type(v) == kind or (optional and (v == nil or v == cjson.null)) then return v end
  error(("%s: not an hmem --json report (%s: expected a %s, not %s)"):format(name, where:format(...), kind,
    v == cjson.null and "null" or type(v)), 0)
end

-- A trace side's extra (diffside.c): its groups as {key, bytes} lists, its timeline.
local function check_extra(e, name, i)
  want(e, "table", false, name, "extra[%d]", i)
  for what, l in pairs(want(e.groups, "table", false, name, "extra[%d].groups", i)) do
    want(what, "string", false, name, "extra[%d].groups key", i)
    want(l, "table", false, name, "extra[%d].groups.%s", i, what)
    for j, kv in ipairs(l) do
      want(kv, "table", false, name, "extra[%d].groups.%s[%d]", i, what, j)
      want(kv[1], "string", false, name, "extra[%d].groups.%s[%d][1]", i, what, j)
      want(kv[2], "number", false, name, "extra[%d].groups.%s[%d][2]", i, what, j)
    end
  end
  local p = want(e.points, "table", true, name, "extra[%d].points", i)
  if p then
    for j, v in ipairs(want(p.ms, "table", false, name, "extra[%d].points.ms", i)) do
      want(v, "number", false, name, "extra[%d].points.ms[%d]", i, j)
    end
    for k, vals in ipairs(want(p.cats, "table", false, name, "extra[%d].points.cats", i)) do
      want(vals, "table", false, name, "extra[%d].points.cats[%d]", i, k)
      for j = 1, #p.ms do want(vals[j], "number", false, name, "extra[%d].points.cats[%d][%d]", i, k, j) end
    end
  end
end

-- One side: its series with what the diff compares.
local function read_side(text, name)
  local ok, doc = pcall(cjson.decode, text)
  if not ok or type(doc) ~= "table" then
    error(("%s: not an hmem --json report (%s)"):format(name, ok and "not an object" or tostring(doc)), 0)
  end
  local report, extra = doc, nil
  if doc.report ~= nil then
    report, extra = want(doc.report, "table", false, name, "report"), want(doc.extra, "table", false, name, "extra")
  end
  if type(report.series) ~= "table" then
    error(("%s: not an hmem --json report (no \"series\" list)"):format(name), 0)
  end
  local rules = want(report.rules, "string", true, name, "rules")
  local side = { name = name, kind = extra and "traces" or "report", rules = rules, series = {}, colors = {} }
  if extra then -- the pack's declared colours (diffside.c), for the page
    for k, v in pairs(want(doc.colors, "table", true, name, "colors") or {}) do
      want(k, "string", false, name, "colors key")
      if want(v, "string", false, name, "colors.%s", k):match("^#%x%x%x%x%x%x$") then side.colors[k] = v:lower() end
    end
  end
  for i, s in ipairs(report.series) do
    want(s, "table", false, name, "series[%d]", i)
    local rank = want(s.rank, "number", true, name, "series[%d].rank", i)
    local cats, order = {}, {}
    for j, c in ipairs(want(s.categories, "table", true, name, "series[%d].categories", i) or {}) do
      want(c, "table", false, name, "series[%d].categories[%d]", i, j)
      local cname = want(c.name, "string", false, name, "series[%d].categories[%d].name", i, j)
      order[#order + 1] = cname
      cats[cname] = {
        peak = num(want(c.peak_bytes, "number", true, name, "series[%d].categories[%d].peak_bytes", i, j)),
        at_peak = num(want(c.bytes_at_peak, "number", true, name, "series[%d].categories[%d].bytes_at_peak", i, j)),
        ["end"] = num(want(c.end_bytes, "number", true, name, "series[%d].categories[%d].end_bytes", i, j)) }
    end
    for j, a in ipairs(want(s.live_at_peak, "table", true, name, "series[%d].live_at_peak", i) or {}) do
      want(a, "table", false, name, "series[%d].live_at_peak[%d]", i, j)
      want(a.op, "string", true, name, "series[%d].live_at_peak[%d].op", i, j)
      want(a.bytes, "number", true, name, "series[%d].live_at_peak[%d].bytes", i, j)
    end
    if extra then check_extra(extra[i], name, i) end
    side.series[i] = {
      path = want(s.path, "string", false, name, "series[%d].path", i), rank = rank ~= cjson.null and rank or nil,
      device = want(s.device, "string", false, name, "series[%d].device", i),
      peak = num(want(s.peak_bytes, "number", true, name, "series[%d].peak_bytes", i)),
      end_bytes = num(want(s.end_bytes, "number", true, name, "series[%d].end_bytes", i)),
      cats = cats, order = order,
      groups = extra and groups_of_side(extra[i]) or groups_of_report(s),
      points = extra and extra[i].points or nil,
    }
  end
  return side
end

local function label(s)
  local l = s.label
  if not l then
    l = ("%s%s %s"):format(s.path, s.rank and (" rank " .. int(s.rank)) or "", s.device)
    s.label = l
  end
  return l
end

-- One pass of matching: the k-th series of a key on one side with the k-th of the same key
-- on the other, in the order of their files, among the series left (key nil: not matched
-- in this pass). Returns the pairs made.
local function match_by(left_a, left_b, key, used, across)
  local queue = {} -- per key: the after side's series in order, and the next one's index
  for _, s in ipairs(left_b) do
    local k = key(s)
    if k then
      local q = queue[k] or { head = 1 }
      queue[k] = q
      q[#q + 1] = s
    end
  end
  local made = {}
  for _, s in ipairs(left_a) do
    local k = key(s)
    local q = k and queue[k]
    local t = q and q[q.head] -- not table.remove(q, 1): that moves the rest, each time (issue 24)
    if t then
      q.head = q.head + 1
      made[#made + 1] = { before = s, after = t, across = across }
      used[s], used[t] = true, true
    end
  end
  return made
end

local function rank_key(s) return s.rank and int(s.rank) or "-" end

-- Series are matched by (rank, device); then those left by (rank, device index) across
-- device kinds, so that an H100 run (cuda:0) pairs with an MI300 run (hip:0) (issue 28).
-- A device without an index (cpu) pairs only with its own kind.
local function match(a, b)
  local used = {}
  local pairs_ = match_by(a.series, b.series, function(s) return rank_key(s) .. "\0" .. s.device end, used, false)
  local function left(list)
    local l = {}
    for _, s in ipairs(list) do
      if not used[s] then l[#l + 1] = s end
    end
    return l
  end
  local function index_key(s)
    local i = s.device:match(":(%d+)$")
    return i and (rank_key(s) .. "\0" .. i) or nil
  end
  for _, p in ipairs(match_by(left(a.series), left(b.series), index_key, used, true)) do pairs_[#pairs_ + 1] = p end
  local unmatched = {}
  for _, side in ipairs({ { "before", a }, { "after", b } }) do
    for _, s in ipairs(left(side[2].series)) do unmatched[#unmatched + 1] = { side = side[1], s = s } end
  end
  return pairs_, unmatched
end

local function row(what, name, before, after)
  local change = after - before
  return { what = what, name = name, before = before, after = after, change = change,
           pct = before ~= 0 and 100 * change / before or nil }
end

local function by_change(x, y)
  if math.abs(x.change) ~= math.abs(y.change) then return math.abs(x.change) > math.abs(y.change) end
  if x.change ~= y.change then return x.change > y.change end
  return (x.name or "") < (y.name or "")
end

-- The rows of one pair: peak and end first, then each kind of row, largest change first.
local function pair_rows(p, top)
  local a, b = p.before, p.after
  local rows = { row("peak", nil, a.peak, b.peak), row("end_bytes", nil, a.end_bytes, b.end_bytes) }
  local names, seen = {}, {}
  for _, s in ipairs({ a, b }) do
    for _, n in ipairs(s.order) do
      if not seen[n] then seen[n] = true; names[#names + 1] = n end
    end
  end
  local none = { peak = 0, at_peak = 0, ["end"] = 0 }
  for _, field in ipairs({ { "category_peak", "peak" }, { "category_at_peak", "at_peak" } }) do
    local part = {}
    for _, n in ipairs(names) do
      part[#part + 1] = row(field[1], n, (a.cats[n] or none)[field[2]], (b.cats[n] or none)[field[2]])
    end
    table.sort(part, by_change)
    for _, r in ipairs(part) do rows[#rows + 1] = r end
  end
  for _, what in ipairs({ "op", "module", "frame", "file" }) do
    local ga, gb = a.groups[what], b.groups[what]
    if ga and gb then
      local part, keys = {}, {}
      for k in pairs(ga) do keys[k] = true end
      for k in pairs(gb) do keys[k] = true end
      for k in pairs(keys) do part[#part + 1] = row(what .. "_at_peak", k, ga[k] or 0, gb[k] or 0) end
      table.sort(part, function(x, y)
        local mx, my = math.max(x.before, x.after), math.max(y.before, y.after)
        if mx ~= my then return mx > my end
        return x.name < y.name
      end)
      for i = #part, top + 1, -1 do part[i] = nil end
      table.sort(part, by_change)
      for _, r in ipairs(part) do rows[#rows + 1] = r end
    end
  end
  return rows
end

local function pct_text(r)
  if r.change == 0 then return "0.0%" end
  if r.pct then return ("%+.1f%%"):format(r.pct) end
  return r.after ~= 0 and "new" or "0.0%"
end

local function change_text(c)
  return (c > 0 and "+" or "") .. diff.human(c)
end

local row_titles = {
  peak = "peak", end_bytes = "end", category_peak = "peak of", category_at_peak = "at the peak:",
  op_at_peak = "live at the peak, op", module_at_peak = "live at the peak, module",
  frame_at_peak = "live at the peak, who", file_at_peak = "live at the peak, file",
}

local function row_title(r)
  return row_titles[r.what] .. (r.name and (" " .. r.name) or "")
end

-- --fail-above-delta: one line per pair and limit exceeded.
local function check(pairs_, deltas, notes)
  local breaks = {}
  for _, d in ipairs(deltas or {}) do
    local seen = false
    for _, p in ipairs(pairs_) do
      local rows = {}
      if d.key == nil or (d.device and matches(d.key, p.after.device)) then
        rows = { p.rows[1] }
      elseif not d.device then
        for _, r in ipairs(p.rows) do
          if r.what == "category_peak" and matches(d.key, r.name) then rows[#rows + 1] = r end
        end
      end
      for _, r in ipairs(rows) do
        seen = true
        local over = d.bytes and r.change > d.bytes
        if d.pct then over = r.change > 0 and (r.before == 0 or 100 * r.change / r.before > d.pct) end
        if over then
          breaks[#breaks + 1] = ("grew too much: %s -> %s: %s %s -> %s, %s (%s), limit +%s (%s)"):format(
            label(p.before), label(p.after), r.what == "peak" and "peak" or ("peak of " .. r.name),
            diff.human(r.before), diff.human(r.after), change_text(r.change), pct_text(r),
            d.pct and (("%g%%"):format(d.pct)) or diff.human(d.bytes), "--fail-above-delta " .. d.from)
        end
      end
    end
    if not seen then
      notes[#notes + 1] = ("--fail-above-delta %s matches no series found on both sides"):format(d.from)
    end
  end
  return breaks
end

local function side_title(s)
  return ("%s (%s)"):format(s.name, s.kind == "traces" and ("traces, rules " .. tostring(s.rules))
    or "--json report")
end

-- s without its trailing spaces. Not gsub("%s+$", ""): that tries every run of spaces to
-- the end, quadratic in a name of spaces (issue 24).
local function rtrim(s)
  local e = #s
  while e > 0 and (" \t\r\n\f\v"):find(s:sub(e, e), 1, true) do e = e - 1 end
  return s:sub(1, e)
end

local function basename(path)
  return path:match("([^/]*)$")
end

-- The file of a pair: its name once when both sides' files have it, else both names.
local function pair_file(p)
  local a, b = basename(p.before.path), basename(p.after.path)
  return a == b and a or (a .. " -> " .. b)
end

local function pair_device(p)
  return p.before.device == p.after.device and p.before.device or (p.before.device .. " -> " .. p.after.device)
end

-- The pairs made across device kinds, as "cuda:0 with hip:0 (8 pairs)", or nil.
local function across_text(res)
  local count, order = {}, {}
  for _, p in ipairs(res.all_pairs) do
    if p.across then
      local k = ("%s with %s"):format(p.before.device, p.after.device)
      if not count[k] then order[#order + 1] = k end
      count[k] = (count[k] or 0) + 1
    end
  end
  for i, k in ipairs(order) do order[i] = ("%s (%d pair%s)"):format(k, count[k], count[k] == 1 and "" or "s") end
  return #order > 0 and table.concat(order, ", ") or nil
end

-- Pairs by rank (none last), then device and file: the overview's order.
local function by_rank(pairs_)
  local list = {}
  for i, p in ipairs(pairs_) do list[i] = p end
  local function r(p) return p.before.rank or math.huge end
  local function host(p) return p.before.device:find(":%d+$") and 0 or 1 end -- devices first, then cpu
  table.sort(list, function(x, y)
    if r(x) ~= r(y) then return r(x) < r(y) end
    if host(x) ~= host(y) then return host(x) < host(y) end
    if pair_device(x) ~= pair_device(y) then return pair_device(x) < pair_device(y) end
    return pair_file(x) < pair_file(y)
  end)
  return list
end

-- The pairs grouped by their rows (every row's name and bytes, and the devices), in the
-- order of their first pair: eight ranks of one data-parallel job often have the same rows
-- to the byte, and the text gives them once.
local function same_rows(list)
  local groups, of = {}, {}
  for _, p in ipairs(list) do
    local key = { p.before.device, p.after.device }
    for _, r in ipairs(p.rows) do
      key[#key + 1] = ("%s\0%s\0%.17g\0%.17g"):format(r.what, r.name or "", r.before, r.after)
    end
    key = table.concat(key, "\1")
    local g = of[key]
    if not g then
      g = {}
      of[key] = g
      groups[#groups + 1] = g
    end
    g[#g + 1] = p
  end
  return groups
end

local function text(res)
  local esc = diff.esc
  local out = { ("before: %s"):format(esc(side_title(res.a))), ("after:  %s"):format(esc(side_title(res.b))) }
  local across = across_text(res)
  if across then
    out[#out + 1] = ("paired across device kinds, by rank and device index (no series of the same kind for them): %s")
      :format(esc(across))
  end
  if #res.pairs > 0 then
    local list, width = by_rank(res.pairs), 6
    for _, p in ipairs(list) do width = math.max(width, #esc(pair_device(p))) end
    out[#out + 1] = ""
    out[#out + 1] = "peak of each pair, by rank (details below, largest change first):"
    out[#out + 1] = ("  %4s  %-" .. width .. "s %12s %12s %13s"):format("rank", "device", "before", "after", "change")
    for _, p in ipairs(list) do
      local r = p.peak_row
      out[#out + 1] = ("  %4s  %-" .. width .. "s %12s %12s %13s %8s  %s"):format(p.before.rank and int(p.before.rank) or "-",
        esc(pair_device(p)), diff.human(r.before), diff.human(r.after), change_text(r.change), pct_text(r), esc(pair_file(p)))
    end
  end
  for _, g in ipairs(same_rows(res.pairs)) do
    local p = g[1]
    out[#out + 1] = ""
    out[#out + 1] = ("%s  ->  %s%s"):format(esc(label(p.before)), esc(label(p.after)),
      p.across and "  (across device kinds)" or "")
    if #g > 1 then
      local others, ranks = {}, {} -- by rank when that names each pair, else by label
      for i = 1, #g do
        local r = g[i].before.rank
        ranks[#ranks + 1] = (r and not ranks[int(r)]) and ("rank " .. int(r)) or nil
        if r then ranks[int(r)] = true end
      end
      for i = 2, #g do others[#others + 1] = #ranks == #g and ranks[i] or esc(label(g[i].before)) end
      out[#out + 1] = ("  and %d more pair%s with these rows to the byte: %s"):format(#g - 1, #g == 2 and "" or "s",
        table.concat(others, ", "))
    end
    out[#out + 1] = ("  %-40s %12s %12s %13s"):format("", "before", "after", "change")
    for _, r in ipairs(p.rows) do
      out[#out + 1] = rtrim(("  %-40s %12s %12s %13s %8s"):format(esc(row_title(r)), diff.human(r.before),
        diff.human(r.after), change_text(r.change), pct_text(r)))
    end
  end
  if res.unchanged > 0 then
    out[#out + 1] = ""
    out[#out + 1] = ("%d pair%s of series with no change left out (--changed-only)"):format(res.unchanged,
      res.unchanged == 1 and "" or "s")
  end
  if #res.unmatched > 0 then
    out[#out + 1] = ""
    out[#out + 1] = "series without a partner (matched by rank and device, then by rank and device index):"
    for _, u in ipairs(res.unmatched) do
      out[#out + 1] = ("  %-6s %s  peak %s"):format(u.side, esc(label(u.s)), diff.human(u.s.peak))
    end
  end
  return table.concat(out, "\n") .. "\n"
end

local function series_json(s)
  return { path = s.path, rank = s.rank or cjson.null, device = s.device }
end

local function json(res)
  local doc = {
    before = { name = res.a.name, kind = res.a.kind, rules = res.a.rules or cjson.null },
    after = { name = res.b.name, kind = res.b.kind, rules = res.b.rules or cjson.null },
    pairs = {}, unmatched = {}, breaks = res.breaks, changed_only = res.changed_only,
    unchanged_left_out = res.unchanged,
  }
  for _, p in ipairs(res.pairs) do
    local rows = {}
    for _, r in ipairs(p.rows) do
      rows[#rows + 1] = { what = r.what, name = r.name or cjson.null, before = r.before, after = r.after,
                          change = r.change, change_pct = r.pct or cjson.null }
    end
    setmetatable(rows, cjson.empty_array_mt)
    doc.pairs[#doc.pairs + 1] = { before = series_json(p.before), after = series_json(p.after), rows = rows,
                                  across_kinds = p.across }
  end
  for _, u in ipairs(res.unmatched) do
    local s = series_json(u.s)
    s.side, s.peak_bytes = u.side, u.s.peak
    doc.unmatched[#doc.unmatched + 1] = s
  end
  setmetatable(doc.pairs, cjson.empty_array_mt)
  setmetatable(doc.unmatched, cjson.empty_array_mt)
  setmetatable(doc.breaks, cjson.empty_array_mt)
  return (cjson.encode(doc):gsub("\\/", "/")) .. "\n"
end

-- A CSV field: quoted when needed; text a spreadsheet would run as a formula gets a "'".
local function csv_field(v)
  if v == nil then return "" end
  if type(v) == "number" then return math.type(v) == "float" and v ~= math.floor(v) and ("%.1f"):format(v) or int(v) end
  v = tostring(v)
  if v:match("^[=+%-@\t\r]") then v = "'" .. v end
  if v:find('[,"\n\r]') then v = '"' .. v:gsub('"', '""') .. '"' end
  return v
end

local function csv(res)
  local out = { "before_path,before_rank,after_path,after_rank,device,what,name,before,after,change,change_pct" }
  for _, p in ipairs(res.pairs) do
    for _, r in ipairs(p.rows) do
      local f = { p.before.path, p.before.rank, p.after.path, p.after.rank, p.after.device, r.what, r.name,
                  r.before, r.after, r.change, r.pct and ("%.1f"):format(r.pct) or nil }
      for i = 1, 11 do f[i] = csv_field(f[i]) end
      out[#out + 1] = table.concat(f, ",")
    end
  end
  return table.concat(out, "\n") .. "\n"
end

diff.html = function(res) return require("hmem.diff_html").page(res, diff) end

function diff.run(before_text, after_text, opts)
  opts = opts or {}
  local names = opts.names or { "before", "after" }
  local res = { a = read_side(before_text, names[1]), b = read_side(after_text, names[2]) }
  res.pairs, res.unmatched = match(res.a, res.b)
  for _, p in ipairs(res.pairs) do p.rows = pair_rows(p, opts.top or 10) end
  table.sort(res.pairs, function(x, y)
    local cx, cy = math.abs(x.rows[1].change), math.abs(y.rows[1].change)
    if cx ~= cy then return cx > cy end
    return label(x.after) < label(y.after)
  end)
  local notes = {}
  res.breaks = check(res.pairs, opts.deltas, notes)
  -- --changed-only: rows that changed, and pairs with one, after the limits are checked
  -- on every row; the overview still gives each pair's peak.
  res.all_pairs, res.changed_only, res.unchanged = res.pairs, opts.changed_only == true, 0
  for _, p in ipairs(res.pairs) do p.peak_row, p.all_rows = p.rows[1], p.rows end
  if opts.changed_only then
    local kept = {}
    for _, p in ipairs(res.pairs) do
      local rows = {}
      for _, r in ipairs(p.rows) do
        if r.change ~= 0 then rows[#rows + 1] = r end
      end
      p.rows = rows
      if #rows > 0 then kept[#kept + 1] = p end
    end
    res.unchanged = #res.pairs - #kept
    res.pairs = kept
  end
  res.label, res.row_title, res.pct_text, res.change_text = label, row_title, pct_text, change_text
  res.across_text, res.by_rank, res.pair_device, res.pair_file = across_text, by_rank, pair_device, pair_file
  local makers = { text = text, json = json, csv = csv, html = diff.html }
  local outputs = {}
  for f in pairs(opts.formats or { text = true }) do outputs[f] = makers[f](res) end
  return outputs, res.breaks, notes
end

return diff
