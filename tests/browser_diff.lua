-- The `hmem diff --html` page in a real browser (issues 27 and 28): headless Chromium opens
-- the page of an H100 run against a run whose traces are partly the same (one model) and
-- partly an MI300's (two models), and tests/browser_diff_driver.js reads it and clicks as
-- a reader would. Checked against `hmem diff --json` of the same sides (figures from the
-- DOM, not from the page's own data): one overview line per pair with its peaks, every pair
-- folded, a link that opens its pair, each pair's rows, the pointer's readout at a peak,
-- drag to zoom and double-click to reset, a legend per pair in the pack's
-- colours (pytorch declares them), one colour per category and the areas drawn in it, no
-- axis text outside its chart, and the "changed only" switch hiding exactly what
-- `--changed-only` leaves out. No console message at all (nothing may be fetched).
-- Skipped, with a line saying so, where Chromium is not installed.
-- Usage: lua5.4 tests/browser_diff.lua [SCREENSHOT.png]  (hmem on PATH, from the repository root)
package.path = "lua/?.lua;" .. package.path
local cjson = require "cjson"
local diff = require "hmem.diff"
local shot = arg[1]

local t = dofile("tests/testlib.lua")
local tap = t.tap()
local fails = 0
local function check(ok, name, detail)
  fails = fails + (ok and 0 or 1)
  tap(ok, "diff page: " .. name, detail)
  return ok
end
local function read(path) return (t.sh("cat '" .. path .. "'")) end

local chromium
for _, c in ipairs { "chromium", "chromium-browser", "google-chrome" } do
  if os.execute("command -v " .. c .. " >/dev/null 2>&1") then chromium = c break end
end
if not chromium then
  print("# skipped: Chromium is not installed, so the diff page is not tested in a browser (apt-get install chromium)")
  return
end

local tmp, cleanup = t.tmpdir()
local data = "tests/data/tracelens/"
assert(os.execute(("mkdir -p %s/profile %s/after && cp %sh100/Qwen* %smi300/gaunernst* %smi300/google* %s/after/")
  :format(tmp, tmp, data, data, data, tmp)))
local flags = "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking "
  .. "--disable-component-update --disable-sync --user-data-dir=" .. tmp .. "/profile --window-size=1100,1000 "
  .. "--hide-scrollbars --enable-logging=stderr --v=0 --virtual-time-budget=10000"

local page_path = tmp .. "/d.html"
local cmd = ("hmem diff -q pytorch %sh100 %s/after "):format(data, tmp)
check(os.execute(cmd .. ("--html %s --json %s/d.json"):format(page_path, tmp))
  and os.execute(cmd .. ("--changed-only --json %s/c.json"):format(tmp)), "hmem writes the page and the JSON")
local all, changed = cjson.decode(read(tmp .. "/d.json")), cjson.decode(read(tmp .. "/c.json"))

-- Errors and blocked fetches from the first line of the page on (console messages come on
-- Chromium's standard error, below).
local capture = '<script>window.HMEM_ERRORS = []; ["error", "securitypolicyviolation"].forEach(function (k) {'
  .. ' window.addEventListener(k, function (e) { HMEM_ERRORS.push(k + ": " + (e.message || e.blockedURI)); }); });</script>'
local page = read(page_path)
local test = page:gsub("<head>\n", function() return "<head>\n" .. capture .. "\n" end, 1)
test = test:gsub("</body>", function() return "<script>\n" .. read("tests/browser_diff_driver.js") .. "</script>\n</body>" end, 1)
assert(io.open(tmp .. "/test.html", "wb")):write(test):close()

local p = io.popen(("timeout 120 %s %s --dump-dom file://%s/test.html 2>%s/stderr"):format(chromium, flags, tmp, tmp))
local dom = p:read("a")
p:close()
local console = {}
for line in read(tmp .. "/stderr"):gmatch("[^\n]+") do
  if line:find(":CONSOLE", 1, true) then console[#console + 1] = line end
end
local res = dom:match('<pre id="hmem%-test">(.-)</pre>')
if not check(res ~= nil, "Chromium (" .. chromium .. ") ran the page and its test driver", dom:sub(1, 300)) then
  cleanup()
  os.exit(1)
end
res = cjson.decode((res:gsub("&lt;", "<"):gsub("&gt;", ">"):gsub("&quot;", '"'):gsub("&amp;", "&")))
check(#console == 0 and #res.errors == 0, "no console message and no script error",
  table.concat(console, "\n") .. table.concat(res.errors, "\n"))

local n = #all.pairs
local across = 0
for _, q in ipairs(all.pairs) do if q.across_kinds then across = across + 1 end end
check(n == 6 and across == 2 and changed.unchanged_left_out > 0,
  ("the sides make 6 pairs, 2 across device kinds, some unchanged (%d, %d, %d)"):format(n, across,
    changed.unchanged_left_out))
check(res.closed_at_start == n, ("every pair's details are folded at first (%d of %d)"):format(res.closed_at_start, n))
check(res.link_opens, "a click on an overview line opens its pair")

-- The overview: one line per pair, its peaks as --json gives them.
local bad = {}
for _, o in ipairs(res.overview) do
  local want = all.pairs[o.pair].rows[1]
  local c = o.cells
  if c[4] ~= diff.human(want.before) or c[5] ~= diff.human(want.after) or c[2] ~= (all.pairs[o.pair].before.device ==
      all.pairs[o.pair].after.device and all.pairs[o.pair].after.device or
      all.pairs[o.pair].before.device .. " -> " .. all.pairs[o.pair].after.device) then
    bad[#bad + 1] = table.concat(c, " | ")
  end
end
check(#res.overview == n and #bad == 0, ("one overview line per pair (%d), peaks and devices as --json"):format(#res.overview),
  table.concat(bad, "\n"))

-- Each pair: its rows, its legend, its colours.
local colour_of, owner, rows_bad, legend_bad, clipped = {}, {}, {}, {}, {}
local bars_ok = true
for i, pr in ipairs(res.pairs) do
  local want = all.pairs[i].rows
  if #pr.rows ~= #want then rows_bad[#rows_bad + 1] = ("pair %d: %d rows, --json %d"):format(i, #pr.rows, #want) end
  for j, r in ipairs(pr.rows) do
    local w = want[j]
    if w and (r[2] ~= diff.human(w.before) or r[3] ~= diff.human(w.after)) then
      rows_bad[#rows_bad + 1] = ("pair %d row %d: %s"):format(i, j, table.concat(r, " | "))
    end
  end
  local names, shown = {}, {}
  for _, w in ipairs(want) do
    if w.what == "category_peak" then names[w.name] = true end
  end
  for _, l in ipairs(pr.legend) do
    local name, rgb = l[1], l[2]
    shown[name] = true
    if not names[name] then legend_bad[#legend_bad + 1] = ("pair %d: legend names %s, not a category of the pair"):format(i, name) end
    if colour_of[name] and colour_of[name] ~= rgb then
      legend_bad[#legend_bad + 1] = ("%s is %s in one legend and %s in another"):format(name, colour_of[name], rgb)
    end
    if owner[rgb] and owner[rgb] ~= name then
      legend_bad[#legend_bad + 1] = ("%s and %s have one colour, %s"):format(owner[rgb], name, rgb)
    end
    colour_of[name], owner[rgb] = rgb, name
    local fill = pr.fills[name]
    if fill then
      local r, g, b = fill:match("#(%x%x)(%x%x)(%x%x)")
      if ("rgb(%d, %d, %d)"):format(tonumber(r, 16), tonumber(g, 16), tonumber(b, 16)) ~= rgb then
        legend_bad[#legend_bad + 1] = ("pair %d: %s drawn in %s, its legend says %s"):format(i, name, fill, rgb)
      end
    end
  end
  for name in pairs(names) do
    if not shown[name] then legend_bad[#legend_bad + 1] = ("pair %d: %s is not in its legend"):format(i, name) end
  end
  for _, t in ipairs(pr.clipped) do clipped[#clipped + 1] = ("pair %d: %s"):format(i, t) end
  bars_ok = bars_ok and pr.bars_inside
end
check(#res.pairs == n and #rows_bad == 0, "each pair's rows are --json's, in its order", table.concat(rows_bad, "\n"))
check(#legend_bad == 0, "each pair has a legend of its categories, one colour per category, its areas in it",
  table.concat(legend_bad, "\n"))
check(colour_of["temporary"] == "rgb(147, 112, 219)" and colour_of["forward output"] == "rgb(255, 140, 0)",
  "the legend has the pack's own colours (pytorch: temporary #9370db, forward output #ff8c00)",
  tostring(colour_of["temporary"]) .. " " .. tostring(colour_of["forward output"]))
local close = {}
for a, ca in pairs(colour_of) do
  for b, cb in pairs(colour_of) do
    local r1, g1, b1 = ca:match("(%d+), (%d+), (%d+)")
    local r2, g2, b2 = cb:match("(%d+), (%d+), (%d+)")
    if a < b and (r1 - r2) ^ 2 + (g1 - g2) ^ 2 + (b1 - b2) ^ 2 < 60 ^ 2 then close[#close + 1] = a .. " ~ " .. b end
  end
end
check(#close == 0, "no two categories in colours that look alike (pytorch's black input is not drawn black, nor"
  .. " in the palette's orange beside its orange forward output)", table.concat(close, "\n"))
check(#clipped == 0, "no axis text or title outside its chart", table.concat(clipped, "\n"))
check(bars_ok, "the change bars fit the page's width")

-- The pointer at the before run's peak: the readout says that peak, as --json does.
local hp = all.pairs[tonumber(res.hover.pair:match("%d+"))]
check(res.hover.cursor == "visible" and res.hover.text:find("before: " .. diff.human(hp.rows[1].before), 1, true) ~= nil,
  ("the pointer on a chart at the before run's peak reads it (%s)"):format(diff.human(hp.rows[1].before)), res.hover.text)

-- A drag from a quarter to a half of the plot zooms both runs there (ticks at 1/4, 3/8, 1/2 of
-- the run, within a pixel), the readout follows; a double-click shows it all again.
local z = res.zoom
local function near(v, want) return math.abs(v - want) <= z.xmax / 400 end
check(z.transformed == z.plots and z.plots == 2 and near(z.ticks[1], z.xmax / 4) and near(z.ticks[2], z.xmax * 3 / 8)
  and near(z.ticks[3], z.xmax / 2), ("a drag zooms both runs to its span (ticks %s of %.3f ms)"):format(
    table.concat(z.ticks, ", "), z.xmax))
local rt = tonumber(z.readout:match("^([%d.]+) ms"))
check(rt and near(rt, z.xmax * 3 / 8), "the readout follows the zoom (the plot's middle is 3/8 of the run)", z.readout)
check(z.reset[1] == 0 and near(z.reset[3], z.xmax), "a double-click shows the whole run again", table.concat(z.reset, ", "))

-- The switch hides what --changed-only leaves out, and nothing else.
local total, kept = 0, 0
for _, q in ipairs(all.pairs) do total = total + #q.rows end
for _, q in ipairs(changed.pairs) do kept = kept + #q.rows end
local b, a = res.before_switch, res.after_switch
check(b.overview == n and b.pairs == n and b.rows == total and not b.note,
  ("before the switch: every pair and row shown (%d/%d pairs, %d/%d rows)"):format(b.pairs, n, b.rows, total))
check(res.switch_checked and a.overview == #changed.pairs and a.pairs == #changed.pairs and a.rows == kept and a.note,
  ("changed only: the pairs and rows of --changed-only (%d/%d pairs, %d/%d rows), and a line saying how many are hidden")
    :format(a.pairs, #changed.pairs, a.rows, kept))

if shot then
  local open = page:gsub('<details class="pair ', '<details open class="pair ', 1)
  assert(io.open(tmp .. "/shot.html", "wb")):write(open):close()
  os.execute(("timeout 120 %s %s --window-size=1100,2400 --screenshot=%s file://%s/shot.html >/dev/null 2>&1"):format(
    chromium, flags:gsub("%-%-window%-size=%S+ ", ""), shot, tmp))
  print("# screenshot: " .. shot)
end
cleanup()
os.exit(fails == 0 and 0 or 1)
