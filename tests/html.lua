-- --html without a browser (issue 4): the page is one self-contained file (nothing fetched
-- from anywhere), names are escaped, and the chart data it embeds is exact: every point is
-- a real state of the --timeline CSV, the peak and the reserved maximum survive the
-- reduction to HM_HTML_COLUMNS pixel columns, and a reduced series stays small.
-- tests/browser.lua checks the page itself in Chromium.
local cjson = require "cjson"
local csv = dofile("tests/timeline_csv.lua")
local COLUMNS = 1500 -- HM_HTML_COLUMNS in src/html.h
local tmp = os.tmpname()
os.remove(tmp)
assert(os.execute("mkdir -p " .. tmp))

local function check(ok, name, detail)
  print((ok and "ok - " or "not ok - ") .. name)
  if not ok and detail then print("#   " .. tostring(detail)) end
  return ok
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- The JSON data block of a report.
local function page_data(text)
  local j = text:match('<script id=hmem%-data type="application/json">\n(.-)\n</script>')
  return j and cjson.decode(j)
end

-- Dense states of a series from the page's change lists: points[i] = {t=, total=, res=, cats={name=v}}.
local function points(d, s)
  local n, pts = #s.t, {}
  for i = 1, n do pts[i] = { t = math.tointeger(s.t[i]), cats = {}, total = 0 } end
  local function fill(ch, set)
    for j = 1, #ch, 2 do
      local to = ch[j + 2] and ch[j + 2] or n
      for i = ch[j] + 1, to do set(pts[i], ch[j + 1]) end
    end
  end
  for _, c in ipairs(s.cats) do
    local name = d.categories[c[1] + 1].name
    fill(c[2], function(p, v) p.cats[name] = v; p.total = p.total + v end)
  end
  fill(s.res, function(p, v) p.res = v end)
  return pts
end

-- How far apart two "#rrggbb" colours are for the reader who tells them apart least: CIE76
-- delta E in L*a*b* (D65), in normal vision and as protanopes and deuteranopes see them
-- (Machado, Oliveira and Fernandes 2009, severity 1, applied in linear RGB).
local CVD = {
  { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } },
  { { 0.152286, 1.052583, -0.204868 }, { 0.114503, 0.786281, 0.099216 }, { -0.003882, -0.048116, 1.051998 } },
  { { 0.367322, 0.860646, -0.227968 }, { 0.280085, 0.672501, 0.047413 }, { -0.011820, 0.042940, 0.968881 } },
}
local function lab(hex, m)
  local rgb = {}
  for i, h in ipairs { hex:sub(2, 3), hex:sub(4, 5), hex:sub(6, 7) } do
    local v = tonumber(h, 16) / 255
    rgb[i] = v <= 0.04045 and v / 12.92 or ((v + 0.055) / 1.055) ^ 2.4
  end
  local c = {}
  for i = 1, 3 do c[i] = math.max(0, math.min(1, m[i][1] * rgb[1] + m[i][2] * rgb[2] + m[i][3] * rgb[3])) end
  local function f(t) return t > 0.008856 and t ^ (1 / 3) or 7.787 * t + 16 / 116 end
  local x = (0.4124 * c[1] + 0.3576 * c[2] + 0.1805 * c[3]) / 0.95047
  local y = 0.2126 * c[1] + 0.7152 * c[2] + 0.0722 * c[3]
  local z = (0.0193 * c[1] + 0.1192 * c[2] + 0.9505 * c[3]) / 1.08883
  return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))
end
function color_distance(a, b)
  local best = math.huge
  for _, m in ipairs(CVD) do
    local l1, a1, b1 = lab(a, m)
    local l2, a2, b2 = lab(b, m)
    best = math.min(best, math.sqrt((l1 - l2) ^ 2 + (a1 - a2) ^ 2 + (b1 - b2) ^ 2))
  end
  return best
end

local runs = {
  { "examples/size_buckets.lua", "examples/traces/bert-small_h100.json.gz" },
  { "pytorch", "tests/data/hta/df_index_resolver_rank1_v100.json.gz" },
  { "op", "tests/data/kineto_tb_plugin/resnet50_num_workers_0_worker0.1623143089861.pt.trace.json.gz" },
  { "tests/tiny/rules/odd_names.lua", "tests/tiny/y_pair_basic.json" },
  { "tests/tiny/rules/html_names.lua", "tests/tiny/y_pair_basic.json" },
  -- issue 27: the names reach the page's OOM and step sections too (its "explain" data)
  { "tests/tiny/rules/html_names.lua", "tests/tiny/y_html_steps_oom.json" },
}

for _, r in ipairs(runs) do
  local rules, trace = r[1], r[2]
  local name = trace:match("[^/]+$") .. " (" .. rules:match("[^/]+$") .. ")"
  local html, tl, js = tmp .. "/r.html", tmp .. "/t.csv", tmp .. "/r.json"
  local cmd = ("hmem run -q %s %s --html %s --timeline %s --json %s"):format(rules, trace, html, tl, js)
  local t0 = os.clock()
  if not check(os.execute(cmd), "html: hmem writes the report of " .. name, cmd) then goto next end
  do
    local text, rep = read(html), cjson.decode(read(js))
    local rows = csv.read(tl)
    local peak_ts_text = {}
    for v in read(js):gmatch('"before_trace_bytes": %-?%d+, "peak_bytes": %-?%d+, "peak_ts": ([%d%.]+)') do peak_ts_text[#peak_ts_text + 1] = v end
    local d = page_data(text)
    check(d ~= nil, "html: the data block of " .. name .. " parses")
    if not d then goto next end
    -- One file, nothing from elsewhere: no src/href but data:, no url(), a CSP that forbids it.
    local ext = text:match("<script[^>]* src=") or text:match("<link[^>]* href=\"?[^d\"][^>]*>")
      or text:match("url%([^#]") or text:match("@import") or text:match("<iframe") or text:match("<img")
    check(not ext and text:find("default-src 'none'", 1, true),
      "html: the report of " .. name .. " is self-contained (no src, link, url() or import; CSP default-src 'none')", ext)
    -- Every series, its categories, exact states, peak and reserved maximum kept.
    local ok, why = #d.series == #rep.series, "series count"
    for i, s in ipairs(d.series) do
      if not ok then break end
      local js_s = rep.series[i]
      local pts, srows = points(d, s), rows[js_s.device] or {}
      local by_ts = {}
      for k, row in ipairs(srows) do by_ts[row.ts_ns] = by_ts[row.ts_ns] or {}; table.insert(by_ts[row.ts_ns], row) end
      if #s.cats ~= #js_s.categories then ok, why = false, s.label .. ": categories " .. #s.cats .. " vs " .. #js_s.categories break end
      if #pts > 4 * COLUMNS + 1 then ok, why = false, s.label .. ": " .. #pts .. " points" break end
      if (#pts == #srows + 1) == s.reduced then ok, why = false, s.label .. ": reduced flag" break end
      local t0_ns = csv.ns(s.t0)
      local maxtot, maxres, tmax = -1, -1, nil
      for k = 2, #pts do
        local p = pts[k]
        local cands = by_ts[t0_ns + p.t]
        local match = false
        for _, row in ipairs(cands or {}) do
          local same = row.allocated == p.total and (row.reserved == nil or row.reserved == p.res)
          for cname, v in pairs(p.cats) do same = same and row.cats[cname] == v end
          if same then match = true break end
        end
        if not match then ok, why = false, ("%s: point %d (t %d) is no state of the CSV"):format(s.label, k, p.t) break end
        if p.total > maxtot then maxtot, tmax = p.total, p.t end
        if (p.res or -1) > maxres then maxres = p.res end
      end
      if not ok then break end
      if pts[1].total > maxtot then maxtot, tmax = pts[1].total, 0 end
      local peak_ts = peak_ts_text[i]
      if maxtot ~= js_s.peak_bytes or s.peak ~= js_s.peak_bytes or t0_ns + math.tointeger(s.peak_t) ~= csv.ns(peak_ts) then
        ok, why = false, ("%s: peak %s at %s, page max %s at %s"):format(s.label, js_s.peak_bytes, peak_ts, maxtot, tmax)
      end
      if js_s.max_reserved_bytes ~= cjson.null and maxres ~= js_s.max_reserved_bytes then
        ok, why = false, s.label .. ": max reserved " .. maxres .. " vs " .. js_s.max_reserved_bytes
      end
    end
    check(ok, "html: every chart point of " .. name .. " is an exact CSV state; peak and max reserved are kept", why)
    -- Colours (issue 17): past ten categories the ones with the smallest largest peak (from
    -- --json) share "other"; a pack's declared colours are kept; "(before trace)" has a colour
    -- no other category has.
    do
      local largest, used = {}, {}
      for _, js_s in ipairs(rep.series) do
        for _, c in ipairs(js_s.categories) do
          if c.name ~= "(before trace)" then
            if not largest[c.name] then used[#used + 1] = c.name end
            largest[c.name] = math.max(largest[c.name] or 0, c.peak_bytes)
          end
        end
      end
      local by = {}
      for _, c in ipairs(d.categories) do by[c.name] = c end
      local grouped, kept_max, other_min = 0, -1, math.huge
      for _, n in ipairs(used) do
        if by[n].other then grouped = grouped + 1; other_min = math.min(other_min, largest[n])
        else kept_max = math.max(kept_max, largest[n]) end
      end
      local want_grouped = #used > 10 and #used - 9 or 0
      check(grouped == want_grouped and (grouped == 0 or other_min <= kept_max),
        ("html: %s: %d categories, %d of them grouped as other (the smallest)"):format(name, #used, want_grouped),
        grouped .. " grouped")
      local declared = {}
      if not rules:find("/") then
        local pack = read("lua/hmem/rules/" .. rules .. ".lua")
        for n, col in pack:gmatch('{ name = "([^"]+)", color = "(#%x+)" }') do declared[n] = col end
      end
      -- issue 27: no colour near black (the Total Reserved line's), any two drawn colours
      -- told apart in normal vision and by protanopes and deuteranopes; a declared colour is
      -- kept unless it is near black or like one a larger category has.
      local drawn = {}
      for _, n in ipairs(used) do if not by[n].other then drawn[#drawn + 1] = n end end
      table.sort(drawn, function(a, b)
        if largest[a] ~= largest[b] then return largest[a] > largest[b] end
        return a < b
      end)
      local colors_ok, bad, kept = true, nil, {}
      for _, n in ipairs(drawn) do
        local col = by[n].color
        if color_distance(col, "#000000") < 25 then colors_ok, bad = false, n .. " " .. col .. " is near black" end
        local fits = declared[n] and color_distance(declared[n], "#000000") >= 25
        for _, k in ipairs(kept) do
          local dk = color_distance(col, by[k].color)
          if dk < 12 then colors_ok, bad = false, ("%s %s and %s %s are %.1f apart"):format(n, col, k, by[k].color, dk) end
          if declared[n] and color_distance(declared[n], by[k].color) < 12 then fits = false end
        end
        if fits and col ~= declared[n] then colors_ok, bad = false, n .. ": declared " .. declared[n] .. " not kept: " .. col end
        if declared[n] and not fits and col == declared[n] then colors_ok, bad = false, n .. ": " .. col .. " kept, unlike" end
        kept[#kept + 1] = n
      end
      for _, c in ipairs(d.categories) do
        if c.name ~= "(before trace)" and c.color == d.categories[1].color then colors_ok, bad = false, c.name end
      end
      check(colors_ok and (next(declared) == nil or rules == "pytorch"),
        "html: " .. name .. ": colours apart for colour-blind readers, none near black, declared ones kept where they are, "
          .. "(before trace) unlike any other", bad)
    end
    if trace:find("df_index") then
      print(("# html: %s: %d bytes, written in %.2f s (CPU, whole run)"):format(name, #text, os.clock() - t0))
      check(#text < 2 * 1024 * 1024, "html: the report of the largest trace (26770 events on one device) stays under 2 MiB",
        #text .. " bytes")
    end
    if rules:find("names") then
      local raw = text:find("<script>alert", 1, true) or text:find('"><b>', 1, true)
      local names = {}
      for _, c in ipairs(d.categories) do names[c.name] = true end
      check(not raw, "html: category names with markup are escaped in " .. name)
      check(rules:find("html_names") == nil or not trace:find("y_pair_basic") or names['</script><script>alert("x")</script>'] ~= nil,
        "html: category names with markup arrive intact in the page's data (" .. name .. ")")
    end
  end
  ::next::
end

-- A snapshot's segment lives (issue 27) reach the page of a merge as they reach a run's: the
-- partial carries them (format 7). The snapshot: made, given back and made again.
do
  local snap = tmp .. "/lives.pickle"
  assert(os.execute("python3 - " .. snap .. [==[ <<'PY'
import pickle, sys
MiB, base = 1 << 20, 0x7f0000000000
def seg(a, size):
    return {"device": 0, "address": a, "total_size": size, "stream": 0, "segment_pool_id": (0, 1),
            "blocks": [{"size": size, "state": "inactive", "address": a, "frames": []}]}
def ent(action, a, size, t):
    return {"action": action, "addr": a, "size": size, "stream": 0, "time_us": t}
s = {"segments": [seg(base, 20 * MiB)], "device_traces": [[ent("segment_alloc", base, 20 * MiB, 10),
     ent("alloc", base, MiB, 11), ent("free_completed", base, MiB, 12), ent("segment_free", base, 20 * MiB, 13),
     ent("segment_alloc", base, 20 * MiB, 14)]]}
pickle.dump(s, open(sys.argv[1], "wb"), protocol=4)
PY]==]))
  local run, merged = tmp .. "/lives_run.html", tmp .. "/lives_merged.html"
  local ok = os.execute(("hmem run -q size %s --html %s && hmem run -q size %s --partial %s/lives.db && "
    .. "hmem merge -q size %s/lives.db --html %s"):format(snap, run, snap, tmp, tmp, merged))
  local a = ok and page_data(read(run)).series[1].segview
  local b = ok and page_data(read(merged)).series[1].segview
  check(a and b and cjson.encode(a) == cjson.encode(b) and #a.a == 2 and a.b[1] > 0 and a.d[1] > a.b[1] and a.d[2] == -1
    and a.pl[2] == "0,1", "html: a snapshot's segment lives (made, given back, made again) are the same in the page of a merge "
    .. "of its partial as in a run's", a and cjson.encode(a))
end
os.execute("rm -rf " .. tmp)
