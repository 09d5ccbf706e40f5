-- hmem.diff_html: the page of `hmem diff --html`: one self-contained file (nothing fetched;
-- a few lines of script open a pair's details from its overview line, read the charts
-- under the pointer and zoom them). First one line per matched pair of series (peak
-- before, after, change), each a link to its details, folded: the table of changes, a
-- legend in the pack's colours, the two runs' timelines as stacked areas on one time axis
-- (ms since each run's first event) and one memory scale, with their axes, and the change
-- of each category's peak as bars. A "changed only" switch (checked with --changed-only)
-- hides the rows and pairs that did not change. A --json side has no timeline: its chart
-- says so.
local html = {}

-- The --html report's palette (src/html.c): Okabe and Ito's colour-blind-safe colours, then
-- three of Paul Tol's; memory from before the trace a light grey, as there.
local palette = { "#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7", "#8c564b",
                  "#332288", "#999933" }
local BEFORE = "#d9d9d9"

local function esc(s)
  return (tostring(s):gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;",
                                          ["'"] = "&#39;" }))
end

-- A colour no category has yet, past the palette: hues a golden angle apart.
local function hue(i)
  local h, s, l = (i * 137.508) % 360, 0.55, 0.5
  local c = (1 - math.abs(2 * l - 1)) * s
  local x = c * (1 - math.abs((h / 60) % 2 - 1))
  local m = l - c / 2
  local rgb = ({ { c, x, 0 }, { x, c, 0 }, { 0, c, x }, { 0, x, c }, { x, 0, c }, { c, 0, x } })[math.floor(h / 60) + 1]
  return ("#%02x%02x%02x"):format(math.floor((rgb[1] + m) * 255 + 0.5), math.floor((rgb[2] + m) * 255 + 0.5),
    math.floor((rgb[3] + m) * 255 + 0.5))
end

-- Each category's colour, one per category, never two alike: memory from before the trace
-- or the window grey; the pack's declared colour (either side's) unless another category has
-- it already or it is black (black reads as an axis or text); else the next free palette
-- colour not near a taken one, then hues.
local function colours(res)
  local colour, taken, names = {}, {}, {}
  for _, p in ipairs(res.all_pairs) do
    for _, s in ipairs({ p.before, p.after }) do
      for _, c in ipairs(s.order) do
        if not colour[c] then
          colour[c] = false
          names[#names + 1] = c
        end
      end
    end
  end
  local function give(c, col)
    colour[c], taken[col] = col, true
  end
  for _, c in ipairs(names) do
    if c:match("^%(before ") then give(c, BEFORE) end
  end
  for _, c in ipairs(names) do
    local declared = res.a.colors[c] or res.b.colors[c]
    if not colour[c] and declared and declared ~= "#000000" and not taken[declared] then give(c, declared) end
  end
  local function rgb(col)
    return tonumber(col:sub(2, 3), 16), tonumber(col:sub(4, 5), 16), tonumber(col:sub(6, 7), 16)
  end
  -- a colour too near one taken reads as the same category (pytorch's "forward output"
  -- #ff8c00 beside the palette's #e69f00)
  local function near(col)
    local r, g, b = rgb(col)
    for t in pairs(taken) do
      local r2, g2, b2 = rgb(t)
      if (r - r2) ^ 2 + (g - g2) ^ 2 + (b - b2) ^ 2 < 60 ^ 2 then return true end
    end
    return false
  end
  local next_ = 1
  for _, c in ipairs(names) do
    if not colour[c] then
      local col
      repeat
        col = palette[next_] or hue(next_)
        next_ = next_ + 1
      until not near(col) or next_ > 200
      give(c, col)
    end
  end
  return colour
end

-- The chart's frame (viewBox units): margins for the axis labels, the plot inside.
local VW, L, R, T, H, GAP = 900, 78, 16, 20, 140, 46

-- One run's stacked areas at y0, with its y axis (0, half, max) and x axis (0, half, end).
local function chart(s, colour, xmax, ymax, y0, name, human, id)
  local out = { ('<text x="%d" y="%d" class="t">%s</text>'):format(L, y0 - 6, esc(name)) }
  local W = VW - L - R
  local function x(ms) return L + (xmax > 0 and ms / xmax or 0) * W end
  local function y(b) return y0 + H - (ymax > 0 and b / ymax or 0) * H end
  for i = 0, 2 do
    local b = ymax * i / 2
    out[#out + 1] = ('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" class="%s"/><text x="%d" y="%.1f" class="s" text-anchor="end">%s</text>')
      :format(L, y(b), L + W, y(b), i == 0 and "ax" or "grid", L - 6, y(b) + 4, esc(human(b)))
  end
  for i = 0, 2 do
    local ms = xmax * i / 2
    out[#out + 1] = ('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" class="ax"/><text x="%.1f" y="%d" class="s xt" data-f="%g" text-anchor="%s">%s ms</text>')
      :format(x(ms), y0 + H, x(ms), y0 + H + 4, x(ms), y0 + H + 16, i / 2, ({ "start", "middle", "end" })[i + 1],
        ("%.3f"):format(ms))
  end
  local p = s.points
  if not p or #p.ms == 0 then
    out[#out + 1] = ('<text x="%d" y="%d" class="s">no timeline: this side is a --json report</text>'):format(L + 10, y0 + H / 2)
    return table.concat(out)
  end
  -- the areas inside the plot only, whatever the zoom (the page's script scales .plot)
  local clip = "clip-" .. id
  out[#out + 1] = ('<clipPath id="%s"><rect x="%d" y="%d" width="%d" height="%d"/></clipPath><g clip-path="url(#%s)"><g class="plot">')
    :format(clip, L, y0 - 1, W, H + 1, clip)
  local below = {}
  for i = 1, #p.ms do below[i] = 0 end
  for k, vals in ipairs(p.cats) do
    local top, pts = {}, {}
    local function at(ms, b) pts[#pts + 1] = ("%.2f,%.1f"):format(x(ms), y(b)) end -- x kept finer: it is zoomed
    for i = 1, #p.ms do -- memory is a step function: each state holds until the next event
      top[i] = below[i] + vals[i]
      if i > 1 then at(p.ms[i], top[i - 1]) end
      at(p.ms[i], top[i])
    end
    for i = #p.ms, 1, -1 do
      at(p.ms[i], below[i])
      if i > 1 then at(p.ms[i], below[i - 1]) end
    end
    local c = s.order[k]
    out[#out + 1] = ('<polygon points="%s" fill="%s" data-cat="%s"><title>%s: peak %s</title></polygon>'):format(
      table.concat(pts, " "), colour[c], esc(c), esc(c), esc(human(s.cats[c] and s.cats[c].peak or 0)))
    below = top
  end
  out[#out + 1] = "</g></g>"
  return table.concat(out)
end

local function duration(s)
  return s.points and #s.points.ms > 0 and s.points.ms[#s.points.ms] or 0
end

local function swatch(col)
  return ('<span class="sw" style="background:%s"></span>'):format(col)
end

-- The categories of a pair, both sides' in order of first appearance.
local function pair_categories(p)
  local names, seen = {}, {}
  for _, s in ipairs({ p.before, p.after }) do
    for _, c in ipairs(s.order) do
      if not seen[c] then seen[c], names[#names + 1] = true, c end
    end
  end
  return names
end

local function legend(p, colour)
  local out = { '<ul class="legend">' }
  for _, c in ipairs(pair_categories(p)) do
    out[#out + 1] = ('<li data-cat="%s" data-color="%s">%s%s</li>'):format(esc(c), colour[c], swatch(colour[c]), esc(c))
  end
  out[#out + 1] = "</ul>"
  return table.concat(out)
end

-- The change of each category's peak: a row per category, bars left (less) or right (more)
-- of a middle line, the largest change the longest.
local function bars(p, colour, human, res)
  local rows, m = {}, 0
  for _, r in ipairs(p.all_rows) do
    if r.what == "category_peak" then
      rows[#rows + 1] = r
      m = math.max(m, math.abs(r.change))
    end
  end
  local out = { '<table class="bars"><tr><th>category</th><th>change of its peak</th><th></th></tr>' }
  for _, r in ipairs(rows) do
    local len = m > 0 and math.abs(r.change) / m * 150 or 0
    out[#out + 1] = ('<tr class="%s"><td>%s%s</td><td><svg width="300" height="14" viewBox="0 0 300 14" role="img" aria-label="%s"><rect x="%.1f" y="2" width="%.1f" height="10" fill="%s"/><line x1="150" y1="0" x2="150" y2="14" class="ax"/></svg></td><td>%s %s</td></tr>')
      :format(r.change == 0 and "same" or "", swatch(colour[r.name]), esc(r.name), esc(res.change_text(r.change)),
        r.change < 0 and 150 - len or 150, len, colour[r.name], esc(res.change_text(r.change)), esc(res.pct_text(r)))
  end
  out[#out + 1] = "</table>"
  return table.concat(out)
end

local function direction(change)
  return change > 0 and "up" or change < 0 and "down" or ""
end

local function changed(p)
  for _, r in ipairs(p.all_rows) do
    if r.change ~= 0 then return true end
  end
  return false
end

local function overview(res, human, order)
  local out = { '<table class="overview"><tr><th>rank</th><th>device</th><th>file</th><th>before</th><th>after</th><th>change</th><th></th></tr>' }
  for _, p in ipairs(order) do
    local r = p.peak_row
    out[#out + 1] = ('<tr class="%s %s" data-pair="%d"><td>%s</td><td>%s</td><td><a href="#p%d">%s</a></td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>')
      :format(direction(r.change), changed(p) and "" or "unchanged", p.n, p.before.rank and ("%d"):format(p.before.rank) or "-",
        esc(res.pair_device(p)), p.n, esc(res.pair_file(p)), human(r.before), human(r.after), esc(res.change_text(r.change)),
        esc(res.pct_text(r)))
  end
  out[#out + 1] = "</table>"
  return table.concat(out)
end

-- Both runs' timelines for the hover readout: {"before": {"ms": [...], "names": [...],
-- "cats": [[...], ...]}, "after": {...}} (null for a --json side); "</" never appears in it.
local function points_json(p)
  local function side(s)
    local q = s.points
    if not q or #q.ms == 0 then return "null" end
    local names, cats, ms = {}, {}, {}
    for k = 1, #q.cats do
      names[k] = ('"%s"'):format((s.order[k]:gsub('[%c"\\<>&]', function(c) return ("\\u%04x"):format(c:byte()) end)))
      local v = {}
      for i = 1, #q.ms do v[i] = ("%.0f"):format(q.cats[k][i]) end
      cats[k] = "[" .. table.concat(v, ",") .. "]"
    end
    for i = 1, #q.ms do ms[i] = ("%.17g"):format(q.ms[i]) end
    return ('{"ms":[%s],"names":[%s],"cats":[%s]}'):format(table.concat(ms, ","), table.concat(names, ","),
      table.concat(cats, ","))
  end
  return ('{"before":%s,"after":%s}'):format(side(p.before), side(p.after))
end

local function details(p, res, colour, human)
  local r = p.peak_row
  local out = { ('<details class="pair %s" id="p%d"><summary>%s%s, %s: peak %s &rarr; %s, %s %s%s</summary>'):format(
    changed(p) and "" or "unchanged", p.n, p.before.rank and ("rank %d "):format(p.before.rank) or "", esc(res.pair_device(p)),
    esc(res.pair_file(p)), human(r.before), human(r.after), esc(res.change_text(r.change)), esc(res.pct_text(r)),
    p.across and " (across device kinds)" or "") }
  out[#out + 1] = ("<p>before: %s<br>after: %s</p>"):format(esc(res.label(p.before)), esc(res.label(p.after)))
  out[#out + 1] = '<table class="rows"><tr><th></th><th>before</th><th>after</th><th>change</th><th></th></tr>'
  for _, row in ipairs(p.all_rows) do
    out[#out + 1] = ('<tr class="%s %s"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>'):format(
      direction(row.change), row.change == 0 and "same" or "", esc(res.row_title(row)), human(row.before),
      human(row.after), esc(res.change_text(row.change)), esc(res.pct_text(row)))
  end
  out[#out + 1] = "</table>"
  out[#out + 1] = legend(p, colour)
  local xmax = math.max(duration(p.before), duration(p.after))
  local ymax = math.max(p.before.peak, p.after.peak)
  local vh = T + 2 * (H + GAP) + 4
  out[#out + 1] = ('<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="timelines" data-xmax="%.17g" data-l="%d" data-w="%d">')
    :format(VW, vh, xmax, L, VW - L - R)
  out[#out + 1] = chart(p.before, colour, xmax, ymax, T, "before", human, ("p%d-before"):format(p.n))
  out[#out + 1] = chart(p.after, colour, xmax, ymax, T + H + GAP, "after", human, ("p%d-after"):format(p.n))
  out[#out + 1] = ('<line class="cursor" x1="0" y1="%d" x2="0" y2="%d" visibility="hidden"/></svg>'):format(T, T + 2 * H + GAP)
  out[#out + 1] = '<div class="readout s">point at a chart for what each run holds then; drag across it to zoom, double-click for the whole run</div>'
  out[#out + 1] = ('<script type="application/json" class="points">%s</script>'):format(points_json(p))
  out[#out + 1] = "<p class=\"s\">time: ms since each run's first event; memory: one scale for both runs</p>"
  out[#out + 1] = "<h3>Change of each category's peak</h3>" .. bars(p, colour, human, res)
  out[#out + 1] = "</details>"
  return table.concat(out, "\n")
end

function html.page(res, diff)
  local human = diff.human
  local colour = colours(res)
  for i, p in ipairs(res.all_pairs) do p.n = i end
  local unchanged = 0
  for _, p in ipairs(res.all_pairs) do
    if not changed(p) then unchanged = unchanged + 1 end
  end
  local out = { [[<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>hmem diff</title><style>
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222;max-width:1000px}h2{font-size:1.1em;margin-top:1.6em}
table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right}td:first-child,th:first-child{text-align:left}
table.overview td:nth-child(2),table.overview td:nth-child(3),table.overview th:nth-child(2),table.overview th:nth-child(3),
table.bars th{text-align:left}
tr:nth-child(even){background:#f4f4f4}.up{color:#b00}.down{color:#070}
details.pair{margin:.6em 0;border:1px solid #ddd;border-radius:4px;padding:.3em .8em}summary{cursor:pointer;font-weight:600}
svg text{font:12px system-ui,sans-serif;fill:#333}.t{font-weight:bold}.s{fill:#555;color:#555}.ax{stroke:#888}.grid{stroke:#e4e4e4}
svg.chart{width:100%;max-width:900px;height:auto;display:block}
.legend{list-style:none;padding:0;margin:.6em 0;display:flex;flex-wrap:wrap;gap:.3em 1.2em}
.sw{display:inline-block;width:.9em;height:.9em;margin-right:.35em;vertical-align:-.1em;border:1px solid #0003}
table.bars td:first-child{max-width:24em;overflow-wrap:anywhere}
.cursor{stroke:#222;stroke-dasharray:3 2}.sel{fill:#0072b2;fill-opacity:.12}.readout{min-height:3.9em;margin:.2em 0;white-space:pre-line}
.note{display:none}#changed:checked~.note{display:block}
#changed:checked~table tr.unchanged,#changed:checked~details.unchanged,#changed:checked~details tr.same{display:none}
</style></head><body><h1>hmem diff</h1>]] }
  out[#out + 1] = ("<p>before: %s (%s)<br>after: %s (%s)</p>"):format(esc(res.a.name), esc(res.a.kind),
    esc(res.b.name), esc(res.b.kind))
  local across = res.across_text(res)
  if across then
    out[#out + 1] = ('<p class="across">paired across device kinds, by rank and device index: %s</p>'):format(esc(across))
  end
  for _, br in ipairs(res.breaks) do out[#out + 1] = ('<p class="up">%s</p>'):format(esc(br)) end
  out[#out + 1] = ('<input type="checkbox" id="changed"%s><label for="changed"> changed only: hide the rows, and the pairs of series, that did not change</label>')
    :format(res.changed_only and " checked" or "")
  out[#out + 1] = ('<p class="note">%d pair%s of series with no change hidden</p>'):format(unchanged, unchanged == 1 and "" or "s")
  out[#out + 1] = "<h2>Peak of each pair, by rank</h2>"
  out[#out + 1] = overview(res, human, res.by_rank(res.all_pairs))
  out[#out + 1] = "<h2>Details, largest change of peak first</h2>"
  for _, p in ipairs(res.all_pairs) do out[#out + 1] = details(p, res, colour, human) end
  if #res.unmatched > 0 then
    out[#out + 1] = "<h2>Series without a partner (matched by rank and device, then by rank and device index)</h2><ul>"
    for _, u in ipairs(res.unmatched) do
      out[#out + 1] = ("<li>%s only: %s, peak %s</li>"):format(u.side, esc(res.label(u.s)), human(u.s.peak))
    end
    out[#out + 1] = "</ul>"
  end
  -- A link to a pair (its overview line, or the address) opens its folded details; the
  -- pointer over a chart reads, at its time, each run's categories and total.
  out[#out + 1] = [[<script>
function hmemOpen(id){var d=document.getElementById(id);if(d&&d.tagName==="DETAILS")d.open=true;}
document.addEventListener("click",function(e){var a=e.target.closest&&e.target.closest("a[href^='#p']");if(a)hmemOpen(a.getAttribute("href").slice(1));});
if(location.hash)hmemOpen(location.hash.slice(1));
function hmemHuman(b){var u=["B","KiB","MiB","GiB","TiB","PiB"],v=Math.abs(b),i=0;
while((v>=1024||(i>0&&v>=1023.995))&&i<u.length-1){v/=1024;i++;}
return (b<0?"-":"")+(i===0?v.toFixed(0)+" B":v.toFixed(2)+" "+u[i]);}
function hmemAt(side,t){if(!side)return null;var lo=0,hi=side.ms.length-1;if(t<side.ms[0])return -1;
while(lo<hi){var m=(lo+hi+1)>>1;if(side.ms[m]<=t)lo=m;else hi=m-1;}return lo;}
document.querySelectorAll("svg.chart").forEach(function(svg){
var pts=JSON.parse(svg.parentNode.querySelector("script.points").textContent),out=svg.parentNode.querySelector(".readout"),
cur=svg.querySelector("line.cursor"),xmax=+svg.dataset.xmax,l=+svg.dataset.l,w=+svg.dataset.w,t1=0,t2=xmax,down=null,
sel=document.createElementNS("http://www.w3.org/2000/svg","rect");
sel.setAttribute("class","sel");sel.setAttribute("visibility","hidden");svg.appendChild(sel);
function xOf(e){var r=svg.getBoundingClientRect();return (e.clientX-r.left)*svg.viewBox.baseVal.width/r.width;}
function tOf(x){return t1+(Math.min(Math.max(x,l),l+w)-l)/w*(t2-t1);}
/* drag across a chart to zoom both runs to that span (at most 100x); double-click: all of it */
function zoom(a,b){t1=a;t2=b;var k=xmax/(t2-t1),s=t1/xmax*w;
svg.querySelectorAll("g.plot").forEach(function(g){g.setAttribute("transform","translate("+(l*(1-k)-k*s)+",0) scale("+k+",1)");});
svg.querySelectorAll("text.xt").forEach(function(x){x.textContent=(t1+(+x.dataset.f)*(t2-t1)).toFixed(3)+" ms";});}
svg.addEventListener("mousedown",function(e){var x=xOf(e);if(x<l-4||x>l+w+4)return;down=Math.min(Math.max(x,l),l+w);e.preventDefault();});
document.addEventListener("mouseup",function(e){if(down===null)return;var x=xOf(e),a=tOf(Math.min(down,x)),b=tOf(Math.max(down,x)),
far=Math.abs(x-down)>=3;down=null;sel.setAttribute("visibility","hidden");if(far&&b-a>=xmax/100)zoom(a,b);});
svg.addEventListener("dblclick",function(){zoom(0,xmax);});
svg.addEventListener("mousemove",function(e){var r=svg.getBoundingClientRect(),vb=svg.viewBox.baseVal,x=xOf(e);
if(down!==null){sel.setAttribute("x",Math.min(down,x));sel.setAttribute("width",Math.abs(x-down));sel.setAttribute("y",0);
sel.setAttribute("height",vb.height);sel.setAttribute("visibility","visible");}
if(x<l||x>l+w){cur.setAttribute("visibility","hidden");return;}
var t=tOf(x),half=vb.width/r.width/w*(t2-t1);cur.setAttribute("x1",x);cur.setAttribute("x2",x);cur.setAttribute("visibility","visible");
var parts=[t.toFixed(3)+" ms:"];["before","after"].forEach(function(k){var s=pts[k];
if(!s){parts.push(k+": no timeline");return;}var i=hmemAt(s,t-half),j=hmemAt(s,t+half);
if(j<0||t-half>s.ms[s.ms.length-1]){parts.push(k+": not running");return;}
if(!s.tot){s.tot=s.ms.map(function(_,n){var a=0;s.cats.forEach(function(c){a+=c[n];});return a;});}
for(var n=Math.max(i,0),b=j;n<=b;n++)if(s.tot[n]>s.tot[j])j=n;i=j; /* the highest state under the pointer's pixel */
var tot=0,cs=[];s.names.forEach(function(n,j){tot+=s.cats[j][i];if(s.cats[j][i])cs.push(n+" "+hmemHuman(s.cats[j][i]));});
parts.push(k+": "+hmemHuman(tot)+(cs.length?" ("+cs.join(", ")+")":""));});out.textContent=parts.join("\n");});
svg.addEventListener("mouseleave",function(){cur.setAttribute("visibility","hidden");});});
</script>]]
  out[#out + 1] = "</body></html>\n"
  return table.concat(out, "\n")
end

return html
