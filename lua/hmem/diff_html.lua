-- hmem.diff_html: the page of `hmem diff --html`: one self-contained file (no script, no
-- network): per matched pair of series, the table of changes, the two runs' timelines as
-- stacked areas on one time axis (ms since each run's first event) and one memory scale,
-- and the change of each category's peak as bars. A --json side has no timeline: its chart
-- says so.
local html = {}

-- Okabe and Ito's colour-blind-safe palette, as the --html report uses.
local palette = { "#999999", "#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7" }

local function esc(s)
  return (tostring(s):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }))
end

local W, H, PAD = 760, 150, 60

-- One run's stacked areas: categories in the series' order, bottom up.
local function chart(s, colour, xmax, ymax, y0, title, human)
  local out = { ('<text x="%d" y="%d" class="t">%s</text>'):format(PAD, y0 - 6, esc(title)) }
  local p = s.points
  if not p or #p.ms == 0 then
    out[#out + 1] = ('<text x="%d" y="%d">no timeline: this side is a --json report</text>'):format(PAD + 10, y0 + H / 2)
    return table.concat(out)
  end
  local function x(ms) return PAD + (xmax > 0 and ms / xmax or 0) * W end
  local function y(b) return y0 + H - (ymax > 0 and b / ymax or 0) * H end
  local below = {}
  for i = 1, #p.ms do below[i] = 0 end
  for k, vals in ipairs(p.cats) do
    local top, pts = {}, {}
    local function at(ms, b) pts[#pts + 1] = ("%.1f,%.1f"):format(x(ms), y(b)) end
    for i = 1, #p.ms do -- memory is a step function: each state holds until the next event
      top[i] = below[i] + vals[i]
      if i > 1 then at(p.ms[i], top[i - 1]) end
      at(p.ms[i], top[i])
    end
    for i = #p.ms, 1, -1 do
      at(p.ms[i], below[i])
      if i > 1 then at(p.ms[i], below[i - 1]) end
    end
    out[#out + 1] = ('<polygon points="%s" fill="%s"><title>%s</title></polygon>'):format(
      table.concat(pts, " "), colour[s.order[k]], esc(s.order[k]))
    below = top
  end
  out[#out + 1] = ('<line x1="%d" y1="%d" x2="%d" y2="%d" class="ax"/>'):format(PAD, y0 + H, PAD + W, y0 + H)
  out[#out + 1] = ('<text x="%d" y="%d" class="s" text-anchor="end">%s</text>'):format(PAD - 4, y0 + 10, human(ymax))
  return table.concat(out)
end

local function bars(p, colour, human, pct_text)
  local rows = {}
  for _, r in ipairs(p.rows) do
    if r.what == "category_peak" then rows[#rows + 1] = r end
  end
  local m = 0
  for _, r in ipairs(rows) do m = math.max(m, math.abs(r.change)) end
  local h, mid = 18, PAD + 200 + 180
  local out = { ('<svg width="%d" height="%d" role="img" aria-label="change per category">'):format(W + PAD + 40, #rows * h + 10) }
  for i, r in ipairs(rows) do
    local len = m > 0 and math.abs(r.change) / m * 180 or 0
    local yy = (i - 1) * h + 4
    out[#out + 1] = ('<text x="%d" y="%d" class="s">%s</text>'):format(PAD, yy + 12, esc(r.name))
    out[#out + 1] = ('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>'):format(
      r.change < 0 and mid - len or mid, yy, len, h - 6, colour[r.name])
    out[#out + 1] = ('<text x="%d" y="%d" class="s">%s %s</text>'):format(mid + 190, yy + 12,
      esc((r.change > 0 and "+" or "") .. human(r.change)), esc(pct_text(r)))
  end
  out[#out + 1] = ('<line x1="%d" y1="0" x2="%d" y2="%d" class="ax"/></svg>'):format(mid, mid, #rows * h + 10)
  return table.concat(out)
end

local function duration(s)
  return s.points and #s.points.ms > 0 and s.points.ms[#s.points.ms] or 0
end

function html.page(res, diff)
  local human = diff.human
  local colour, n = {}, 0
  local function paint(s)
    for _, c in ipairs(s.order) do
      if not colour[c] then
        colour[c] = palette[n % #palette + 1]
        n = n + 1
      end
    end
  end
  local out = { [[<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>hmem diff</title><style>
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}h2{font-size:1.05em;margin-top:2em}
table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right}td:first-child,th:first-child{text-align:left}
tr:nth-child(even){background:#f4f4f4}.up{color:#b00}.down{color:#070}
svg text{font:12px system-ui,sans-serif}.t{font-weight:bold}.s{fill:#444}.ax{stroke:#888}
</style></head><body><h1>hmem diff</h1>]] }
  out[#out + 1] = ("<p>before: %s (%s)<br>after: %s (%s)</p>"):format(esc(res.a.name), esc(res.a.kind),
    esc(res.b.name), esc(res.b.kind))
  for _, br in ipairs(res.breaks) do out[#out + 1] = ('<p class="up">%s</p>'):format(esc(br)) end
  for _, p in ipairs(res.pairs) do
    paint(p.before)
    paint(p.after)
    out[#out + 1] = ("<h2>%s &rarr; %s</h2><table><tr><th></th><th>before</th><th>after</th><th>change</th><th></th></tr>"):format(
      esc(res.label(p.before)), esc(res.label(p.after)))
    for _, r in ipairs(p.rows) do
      out[#out + 1] = ('<tr class="%s"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>'):format(
        r.change > 0 and "up" or r.change < 0 and "down" or "", esc(res.row_title(r)), human(r.before),
        human(r.after), esc(res.change_text(r.change)), esc(res.pct_text(r)))
    end
    out[#out + 1] = "</table>"
    local xmax = math.max(duration(p.before), duration(p.after))
    local ymax = math.max(p.before.peak, p.after.peak)
    out[#out + 1] = ('<svg width="%d" height="%d" role="img" aria-label="timelines">'):format(W + PAD + 40, 2 * H + 90)
    out[#out + 1] = chart(p.before, colour, xmax, ymax, 25, "before: " .. res.label(p.before), human)
    out[#out + 1] = chart(p.after, colour, xmax, ymax, H + 65, "after: " .. res.label(p.after), human)
    out[#out + 1] = ('<text x="%d" y="%d" class="s">0 ms</text><text x="%d" y="%d" class="s" text-anchor="end">%.3f ms since each run\'s first event</text></svg>'):format(
      PAD, 2 * H + 85, PAD + W, 2 * H + 85, xmax)
    out[#out + 1] = "<h3>Change of each category's peak</h3>" .. bars(p, colour, human, res.pct_text)
  end
  if #res.unmatched > 0 then
    out[#out + 1] = "<h2>Series without a partner (matched by rank and device)</h2><ul>"
    for _, u in ipairs(res.unmatched) do
      out[#out + 1] = ("<li>%s only: %s, peak %s</li>"):format(u.side, esc(res.label(u.s)), human(u.s.peak))
    end
    out[#out + 1] = "</ul>"
  end
  out[#out + 1] = "</body></html>\n"
  return table.concat(out, "\n")
end

return html
