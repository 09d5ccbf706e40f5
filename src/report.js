/* hmem --html: the report's script (compiled into hmem; see src/html.c). It reads the
 * data block the C side wrote, draws each series as a stacked-area chart in SVG, and
 * handles hover, zoom, the legend, the series selector and the small multiples. No
 * libraries: the page must open offline, from one file. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("hmem-data").textContent);
  var SVG = "http://www.w3.org/2000/svg";
  var UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  var state = { series: 0, view: "single", domain: null, hidden: {} };
  var chartEl = document.getElementById("chart");
  if (!chartEl) return; /* no series: the page says so */

  /* Bytes in binary units exactly as hmem's summary prints them (hm_fmt_bytes): two
   * decimals, ties to even on the exact value. */
  function fmtBytes(b) {
    var neg = b < 0, a = Math.abs(b), v = a, u = 0;
    while ((v >= 1024 || (u > 0 && v >= 1023.995)) && u < 5) { v /= 1024; u++; }
    if (u === 0) return (neg ? "-" : "") + a + " B";
    var d = Math.pow(1024, u), n = a * 100, q = Math.floor(n / d), r = n - q * d;
    if (2 * r > d || (2 * r === d && q % 2 === 1)) q++;
    var s = String(q);
    while (s.length < 3) s = "0" + s;
    return (neg ? "-" : "") + s.slice(0, -2) + "." + s.slice(-2) + " " + UNITS[u];
  }
  function fmtMs(ns) { return (ns / 1e6).toFixed(3); }
  /* The trace's own timestamp (µs, as hm_fmt_us prints it), exact through BigInt. */
  function fmtTs(t0, ns) {
    var m = /^(-?)(\d+)(?:\.(\d{1,3}))?$/.exec(t0);
    if (!m || typeof BigInt !== "function") return "";
    var base = BigInt(m[2]) * 1000n + BigInt(((m[3] || "") + "000").slice(0, 3));
    if (m[1]) base = -base;
    var v = base + BigInt(Math.round(ns)), neg = v < 0n;
    if (neg) v = -v;
    var s = (v / 1000n).toString() + "." + (v % 1000n).toString().padStart(3, "0");
    s = s.replace(/0{1,2}$/, "");
    return (neg ? "-" : "") + s;
  }
  function el(tag, attrs, parent) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function html(tag, cls, text, parent) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  /* A layer's swatch: its colour, "(before trace)" hatched as on the chart. */
  function swatchOf(l, parent) {
    var sw = html("span", l.cat === 0 ? "sw before" : "sw", null, parent);
    if (l.cat !== 0) sw.style.background = l.color;
    return sw;
  }
  /* Dense arrays from the change lists, once per series. */
  function decode(s) {
    if (s.d) return s.d;
    var n = s.t.length, t = Float64Array.from(s.t);
    function fill(v, ch) {
      for (var j = 0; j < ch.length; j += 2) v.fill(ch[j + 1], ch[j], j + 2 < ch.length ? ch[j + 2] : n);
      return v;
    }
    /* The categories the report groups (past a legible number: see html.c) stack as one
     * layer, "other (N categories)", above the rest. */
    var layers = [], other = null;
    s.cats.forEach(function (c) {
      var cat = data.categories[c[0]], v = fill(new Float64Array(n), c[1]);
      if (!cat.other) {
        layers.push({ cat: c[0], name: cat.name, color: cat.color, v: v });
        return;
      }
      if (!other) other = { cat: "other", color: cat.color, v: new Float64Array(n), members: [] };
      other.members.push(cat.name);
      for (var i = 0; i < n; i++) other.v[i] += v[i];
    });
    if (other) {
      other.name = "other (" + other.members.length + " categor" + (other.members.length === 1 ? "y)" : "ies)");
      layers.push(other);
    }
    var total = new Float64Array(n);
    layers.forEach(function (l) { for (var i = 0; i < n; i++) total[i] += l.v[i]; });
    var neg = layers.some(function (l) { return l.v.some(function (v) { return v < 0; }); });
    var end = Math.max(t[n - 1], 1); /* the time axis holds every step and OOM too */
    (s.steps || []).forEach(function (st) { end = Math.max(end, st[1]); });
    (s.ooms || []).forEach(function (oo) { end = Math.max(end, oo[0]); });
    s.d = { n: n, t: t, layers: layers, total: total, res: fill(new Float64Array(n).fill(NaN), s.res), end: end,
      neg: neg };
    return s.d;
  }
  /* The last point at or before time x (-1 if none): the state a time shows. */
  function pointAt(t, x) {
    var lo = 0, hi = t.length - 1, r = -1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1;
      if (t[mid] <= x) { r = mid; lo = mid + 1; } else hi = mid - 1;
    }
    return r;
  }
  /* The point holding the peak's state (several points may share its time). */
  function peakIndex(d, s) {
    if (s.peak_i != null && d.total[s.peak_i] === s.peak) return s.peak_i;
    var i = pointAt(d.t, s.peak_t), j = i;
    while (j >= 0 && d.t[j] === s.peak_t) { if (d.total[j] === s.peak) return j; j--; }
    return Math.max(i, 0);
  }
  /* The first point a time range shows: the state it opens on (the last before it), or
   * its first point when one is at its start (so no state at that time is skipped). */
  function firstShown(t, x) {
    var lo = 0, hi = t.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (t[mid] < x) lo = mid + 1; else hi = mid; }
    return lo < t.length && t[lo] === x ? lo : Math.max(lo - 1, 0);
  }
  function visible(d) { return d.layers.filter(function (l) { return !state.hidden[l.cat]; }); }
  function anyHidden(d) { return d.layers.some(function (l) { return state.hidden[l.cat]; }); }
  /* The height of the visible stack at point i: what the chart's top edge shows there. */
  function stackAt(vis, i) {
    var pos = 0;
    for (var k = 0; k < vis.length; k++) if (vis[k].v[i] > 0) pos += vis[k].v[i];
    return pos;
  }
  /* The memory range to show: positive values stack up from 0, negative ones (frees that
   * rules 3 and 4 charge to a category of their own) down from 0. Reserved (and the total
   * line) count only while every category is shown: with one hidden they would keep the
   * scale of what is no longer drawn. From the baseline, the range starts at the lowest
   * visible stack instead of 0. */
  function extent(d, i0, i1, baseline) {
    var vis = visible(d), all = !anyHidden(d), lo = 0, hi = 0, base = Infinity;
    for (var i = i0; i <= i1; i++) {
      var pos = 0, neg = 0;
      for (var k = 0; k < vis.length; k++) {
        var v = vis[k].v[i];
        if (v > 0) pos += v; else neg += v;
      }
      if (pos > hi) hi = pos;
      if (neg < lo) lo = neg;
      if (pos < base) base = pos;
      if (all && d.res[i] > hi) hi = d.res[i];
      if (all && d.neg && d.total[i] > hi) hi = d.total[i];
    }
    if (baseline && lo === 0 && base < hi) lo = base;
    return [lo, hi];
  }
  function niceStep(span, count) {
    var raw = span / count, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  }
  function trimNum(x) { return String(+x.toFixed(6)); }
  function linear(d0, d1, r0, r1) {
    var k = (r1 - r0) / (d1 - d0 || 1);
    var f = function (x) { return r0 + (x - d0) * k; };
    f.inv = function (y) { return d0 + (y - r0) / k; };
    return f;
  }

  /* One chart into svg: areas bottom-up in category order ("(before trace)" first),
   * reserved as a dashed line, the peak marked. Returns what interaction needs. */
  function draw(svg, s, o) {
    var d = decode(s);
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    var W = o.width, H = o.height, m = o.small ? { l: 44, r: 8, t: 8, b: 18 } : { l: 64, r: 16, t: 24, b: 42 };
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("width", W);
    svg.setAttribute("height", H);
    var dom = o.domain || [0, d.end];
    var i0 = firstShown(d.t, dom[0]), i1 = Math.max(pointAt(d.t, dom[1]), 0);
    var ext = o.extent || extent(d, i0, i1, o.baseline), ymax = ext[1] || (ext[0] ? 0 : 1);
    var ymin = ext[0] < 0 ? ext[0] * 1.06 : ext[0], ytop = ymin + (ymax - ymin) * 1.06;
    var x = linear(dom[0], dom[1], m.l, W - m.r), y = linear(ymin, ytop, H - m.b, m.t);
    svg.setAttribute("data-ymin", ymin);
    svg.setAttribute("data-ymax", ymax);
    var id = "clip" + Math.random().toString(36).slice(2);
    var clip = el("clipPath", { id: id }, el("defs", {}, svg));
    el("rect", { x: m.l, y: m.t - 12, width: W - m.l - m.r, height: H - m.t - m.b + 12 }, clip);
    /* "(before trace)" is hatched: told apart from any grey a pack declares ("unknown"). */
    var hatch = "hatch" + id, pat = el("pattern", { id: hatch, width: 6, height: 6, patternUnits: "userSpaceOnUse",
      patternTransform: "rotate(45)" }, clip.parentNode);
    el("rect", { width: 6, height: 6, fill: data.categories[0] ? data.categories[0].color : "#d9d9d9" }, pat);
    el("line", { x1: 1, y1: 0, x2: 1, y2: 6, stroke: "#8a8a8a", "stroke-width": 1.5 }, pat);

    var unit = 0;
    while (unit < 5 && Math.pow(1024, unit + 1) <= Math.max(ymax, -ymin)) unit++;
    var U = Math.pow(1024, unit), ystep = niceStep((ytop - ymin) / U, o.small ? 3 : 6) * U;
    var grid = el("g", { "class": "grid" }, svg), axis = el("g", { "class": "axis" }, svg);
    for (var v = Math.ceil(ymin / ystep) * ystep; v <= ytop; v += ystep) {
      el("line", { x1: m.l, x2: W - m.r, y1: y(v), y2: y(v) }, grid);
      el("text", { x: m.l - 6, y: y(v) + 4, "text-anchor": "end" }, axis).textContent = trimNum(v / U);
    }
    var span = dom[1] - dom[0] || 1, xstep = niceStep(span / 1e6, o.small ? 4 : 8) * 1e6;
    for (var tx = Math.ceil(dom[0] / xstep) * xstep; tx <= dom[1]; tx += xstep) {
      el("line", { x1: x(tx), x2: x(tx), y1: H - m.b, y2: H - m.b + 4 }, axis);
      el("text", { x: x(tx), y: H - m.b + 15, "text-anchor": "middle" }, axis).textContent = trimNum(tx / 1e6);
    }
    el("line", { x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b }, axis);
    if (!o.small) {
      el("text", { "class": "title", x: (m.l + W - m.r) / 2, y: H - 6, "text-anchor": "middle" }, axis).textContent =
        "time since the trace's start (ms)";
      el("text", { "class": "title", x: 14, y: (m.t + H - m.b) / 2, "text-anchor": "middle",
        transform: "rotate(-90 14 " + (m.t + H - m.b) / 2 + ")" }, axis).textContent = UNITS[unit] + " (binary: 1 " +
        (unit ? UNITS[unit] + " = 2^" + 10 * unit + " bytes)" : "byte)");
    } else {
      el("text", { x: 4, y: m.t + 2, "class": "title" }, axis).textContent = UNITS[unit];
    }

    var plot = el("g", { "clip-path": "url(#" + id + ")" }, svg);
    /* Steps (ProfilerStep slices) as alternating bands behind the areas, numbered. */
    (s.steps || []).forEach(function (st, j) {
      var a = Math.max(x(st[0]), m.l), b = Math.min(x(st[1]), W - m.r);
      if (b <= a) return;
      var band = el("rect", { "class": "step" + (j % 2 ? " odd" : ""), x: a, y: m.t, width: b - a, height: H - m.t - m.b,
        "data-step": st[2] }, plot);
      var name = "step " + st[2] + (st[3] ? " (partial)" : "");
      el("title", {}, band).textContent = name + ": +" + fmtMs(st[0]) + " to +" + fmtMs(st[1]) + " ms" +
        (st[3] ? ", cut by the window" : "");
      if (!o.small && b - a > 36) el("text", { "class": "steplabel", x: a + 3, y: m.t + 10 }, plot).textContent = name;
    });
    var np = i1 - i0 + 1, lower = new Float64Array(np), upper = new Float64Array(np);
    var pos = new Float64Array(np), neg = new Float64Array(np);
    var xs = [];
    for (var i = i0; i <= i1; i++) xs.push(x(d.t[i]).toFixed(1));
    var xEnd = x(dom[1]).toFixed(1);
    visible(d).forEach(function (l) {
      for (var i = i0; i <= i1; i++) {
        var j = i - i0, v = l.v[i];
        if (v >= 0) { lower[j] = pos[j]; upper[j] = pos[j] += v; }
        else { upper[j] = neg[j]; lower[j] = neg[j] += v; }
      }
      var p = ["M", xs[0], y(upper[0]).toFixed(1)];
      for (var j = 1; j < xs.length; j++) p.push("H", xs[j], "V", y(upper[j]).toFixed(1));
      p.push("H", xEnd, "V", y(lower[xs.length - 1]).toFixed(1));
      for (j = xs.length - 1; j > 0; j--) p.push("H", xs[j], "V", y(lower[j - 1]).toFixed(1));
      p.push("H", xs[0], "Z");
      var a = el("path", { "class": "area", fill: l.cat === 0 ? "url(#" + hatch + ")" : l.color, d: p.join(" ") }, plot);
      a.setAttribute("data-cat", l.cat);
    });
    /* With negative categories the stack's edge is not the total: draw it. Reserved and
     * the total belong to the whole stack: with a category hidden they are not drawn. */
    var whole = !anyHidden(d);
    if (d.neg && whole) {
      var tp = [];
      for (i = i0; i <= i1; i++) tp.push(i === i0 ? "M" : "V", i === i0 ? xs[0] + " " + y(d.total[i]).toFixed(1) :
        y(d.total[i]).toFixed(1), "H", i < i1 ? xs[i - i0 + 1] : xEnd);
      el("path", { "class": "total", d: tp.join(" ") }, plot);
    }
    /* What the allocator holds back: reserved minus allocated, shaded between the stack's
     * top and the reserved line (a trace cannot tell fragmentation inside it). */
    var cp = [], run = [];
    function flush() {
      if (!run.length) return;
      cp.push("M", run[0][0], y(run[0][2]).toFixed(1));
      run.forEach(function (q) { cp.push("V", y(q[2]).toFixed(1), "H", q[1]); });
      for (var q = run.length - 1; q >= 0; q--) cp.push("V", y(run[q][3]).toFixed(1), "H", run[q][0]);
      cp.push("Z");
      run = [];
    }
    for (i = i0; i <= i1 && whole; i++) {
      if (isNaN(d.res[i]) || d.res[i] <= d.total[i]) { flush(); continue; }
      run.push([xs[i - i0], i < i1 ? xs[i - i0 + 1] : xEnd, d.res[i], Math.max(d.total[i], 0)]);
    }
    flush();
    if (cp.length) el("path", { "class": "cached", d: cp.join(" ") }, plot);
    var rp = [], pen = false;
    for (i = i0; i <= i1 && whole; i++) {
      var r = d.res[i], xi = xs[i - i0], xn = i < i1 ? xs[i - i0 + 1] : xEnd;
      if (isNaN(r)) { pen = false; continue; }
      rp.push(pen ? "V" : "M", pen ? y(r).toFixed(1) : xi + " " + y(r).toFixed(1), "H", xn);
      pen = true;
    }
    if (rp.length) el("path", { "class": "reserved", d: rp.join(" ") }, plot);

    /* [OutOfMemory] events: a red line and mark at each, the request in its title. */
    (s.ooms || []).forEach(function (oo) {
      if (oo[0] < dom[0] || oo[0] > dom[1]) return;
      var g = el("g", { "class": "oom", "data-t": oo[0] }, svg), ox = x(oo[0]);
      el("line", { x1: ox, x2: ox, y1: m.t, y2: H - m.b }, g);
      el("path", { d: "M" + (ox - 5) + " " + (H - m.b + 1) + "l5 -8l5 8z" }, g);
      el("title", {}, g).textContent = "out of memory at +" + fmtMs(oo[0]) + " ms: a request of " + fmtBytes(oo[1]);
    });
    /* The peak's dot sits on what is drawn there: the visible stack at the peak's state. */
    if (s.events && s.peak_t >= dom[0] && s.peak_t <= dom[1]) {
      var shown = whole ? s.peak : stackAt(visible(d), peakIndex(d, s));
      var g = el("g", { "class": "peak" }, svg), px = x(s.peak_t), py = Math.max(y(shown), m.t);
      el("line", { x1: px, x2: px, y1: m.t - 4, y2: H - m.b }, g);
      el("circle", { cx: px, cy: py, r: o.small ? 2.5 : 3.5, "data-bytes": shown }, g);
      if (!o.small) {
        var right = px < (m.l + W - m.r) / 2;
        el("text", { x: px + (right ? 6 : -6), y: m.t - 8, "text-anchor": right ? "start" : "end" }, g).textContent =
          "peak " + fmtBytes(s.peak) + " at +" + fmtMs(s.peak_t) + " ms" + (whole ? "" : " (" + fmtBytes(shown) + " shown)");
      }
    }
    return { x: x, y: y, m: m, W: W, H: H, d: d, dom: dom };
  }

  /* ---- the single-series view ---- */
  var svg = el("svg", { role: "img", "aria-label": "memory by category over time" }, chartEl);
  var cursor = el("line", { "class": "cursor", visibility: "hidden" });
  var selection = el("rect", { "class": "selection", visibility: "hidden" });
  var overlay = el("rect", { "class": "overlay" });
  /* The hover readout lives beside the plot, never over it. */
  var side = document.getElementById("side");
  var readout = html("div", null, null, side);
  readout.id = "readout";
  readout.hidden = true;
  var idle = html("p", "hint", "Hover over the chart: each category's bytes at that moment show here, largest first.", side);
  var ctx = null, drag = null;

  function render() {
    var s = data.series[state.series];
    ctx = draw(svg, s, { width: Math.max(chartEl.clientWidth, 320), height: 420, domain: state.domain,
      baseline: document.getElementById("baseline").checked });
    svg.appendChild(cursor);
    svg.appendChild(selection);
    svg.appendChild(overlay);
    var m = ctx.m;
    overlay.setAttribute("x", m.l);
    overlay.setAttribute("y", m.t);
    overlay.setAttribute("width", ctx.W - m.l - m.r);
    overlay.setAttribute("height", ctx.H - m.t - m.b);
    cursor.setAttribute("y1", m.t);
    cursor.setAttribute("y2", ctx.H - m.b);
    document.getElementById("reset").hidden = !state.domain;
    legend(s);
    var hint = document.querySelector("#single .hint");
    hint.textContent = "Hover for the bytes of every category; click for what is live there; drag to zoom into a time range, double-click to reset; " +
      "click a legend entry to hide or show a category." + (s.reduced ? " This series has " + s.events +
      " memory events: the chart keeps " + (s.t.length - 1) + " of them, each pixel column's lowest and highest " +
      "states (so no peak is lost); the hover shows the kept state at or before the pointer." : "");
  }

  function legend(s) {
    var ul = document.getElementById("legend");
    ul.textContent = "";
    var d = decode(s);
    d.layers.slice().reverse().forEach(function (l) {
      var li = html("li", null, null, ul), b = html("button", state.hidden[l.cat] ? "off" : "", null, li);
      b.type = "button";
      b.setAttribute("data-cat", l.cat);
      b.setAttribute("aria-pressed", state.hidden[l.cat] ? "false" : "true");
      swatchOf(l, b);
      b.appendChild(document.createTextNode(l.name));
      if (l.members) b.title = l.members.join("\n");
      b.addEventListener("click", function () {
        state.hidden[l.cat] = !state.hidden[l.cat];
        update();
      });
    });
    if (!d.res.every(isNaN)) {
      var note = anyHidden(d) ? " (not drawn while a category is hidden)" : "";
      html("span", "sw line", null, html("li", "reserved-key", null, ul)).after("Total Reserved" + note);
      html("span", "sw cached", null, html("li", "cached-key", null, ul)).after("cached by the allocator (reserved, not allocated)" + note);
    }
    if ((s.steps || []).length) html("span", "sw stepkey", null, html("li", "step-key", null, ul)).after("steps (ProfilerStep)");
    if ((s.ooms || []).length) html("span", "sw oomkey", null, html("li", "oom-key", null, ul)).after("out of memory (" +
      s.ooms.length + ")");
    if (d.neg) html("span", "sw line total", null, html("li", "total-key", null, ul)).after("allocated (some categories are negative)");
  }

  function svgX(ev) {
    var r = svg.getBoundingClientRect();
    return (ev.clientX - r.left) * ctx.W / r.width;
  }

  function showReadout(ev) {
    var px = Math.min(Math.max(svgX(ev), ctx.m.l), ctx.W - ctx.m.r), tns = ctx.x.inv(px), d = ctx.d;
    var s = data.series[state.series];
    /* A peak is often one pixel wide: near its marker, show the peak itself. */
    if (s.events && Math.abs(px - ctx.x(s.peak_t)) <= 4) px = ctx.x(tns = s.peak_t);
    var i = pointAt(d.t, tns);
    cursor.setAttribute("x1", px);
    cursor.setAttribute("x2", px);
    cursor.setAttribute("visibility", "visible");
    readout.textContent = "";
    html("div", "time", "+" + fmtMs(tns) + " ms", readout);
    if (i < 0) {
      readout.hidden = false;
      return;
    }
    html("div", "ts", i === 0 ? "state at the trace's start (ts " + fmtTs(s.t0, 0) + "), before any memory event"
      : "state after the memory event at +" + fmtMs(d.t[i]) + " ms (ts " + fmtTs(s.t0, d.t[i]) + ")", readout);
    var tb = html("table", null, null, readout), rows = [];
    function row(cls, color, name, bytes) {
      var tr = html("tr", cls, null, tb), td = html("td", null, null, tr);
      if (color) swatchOf(color, td);
      html("td", null, name, tr);
      var v = html("td", "num", bytes == null ? "-" : fmtBytes(bytes), tr);
      if (bytes != null) v.setAttribute("data-bytes", bytes);
      rows.push(tr);
      return tr;
    }
    /* Largest first (by size, frees charged on their own count by their size too); the
     * categories at 0 bytes then are left out, and counted. */
    var zeros = 0;
    d.layers.filter(function (l) {
      if (l.v[i] === 0) zeros++;
      return l.v[i] !== 0;
    }).sort(function (a, b) { return Math.abs(b.v[i]) - Math.abs(a.v[i]); }).forEach(function (l) {
      row(state.hidden[l.cat] ? "cat off" : "cat", l, l.name, l.v[i]).setAttribute("data-cat", l.cat);
    });
    if (zeros) html("td", null, zeros + (zeros === 1 ? " category" : " categories") + " at 0 B", html("tr", "zeros", null, tb))
      .colSpan = 3;
    row("total", null, "allocated (all categories)", d.total[i]);
    row("res", null, "Total Reserved", isNaN(d.res[i]) ? null : d.res[i]);
    if (!isNaN(d.res[i])) row("cached", null, "cached by the allocator", d.res[i] - d.total[i]);
    readout.hidden = false;
    idle.hidden = true;
  }

  /* The time under the pointer; near the peak's marker, the peak's (it is often one pixel wide). */
  function timeAt(ev) {
    var px = Math.min(Math.max(svgX(ev), ctx.m.l), ctx.W - ctx.m.r), s = data.series[state.series];
    return s.events && Math.abs(px - ctx.x(s.peak_t)) <= 4 ? s.peak_t : ctx.x.inv(px);
  }

  /* What is live at the state shown at time tns (the peak's state at the peak), largest
   * first, with where each was allocated; the page keeps only the largest allocations of a
   * series (html.c), and says how many bytes that leaves out. */
  var liveBox = document.getElementById("live-at"), LIVE_ROWS = 100;
  function showLive(tns, mark) {
    var s = data.series[state.series], d = decode(s);
    var i = s.events && tns === s.peak_t ? peakIndex(d, s) : pointAt(d.t, tns);
    liveBox.textContent = "";
    liveBox.hidden = false;
    if (i < 0) i = 0;
    html("h3", null, "Live at +" + fmtMs(d.t[i]) + " ms" + (i === peakIndex(d, s) ? " (the peak)" : "") + ": " +
      fmtBytes(d.total[i]) + " allocated", liveBox);
    if (!s.live) {
      html("p", "note", "This trace has no Addr: frees cannot be matched to allocations, so what is live cannot be known.",
        liveBox);
      return;
    }
    var rows = s.live.a.filter(function (a) { return a[0] <= i && (a[1] < 0 || i < a[1]); }), sum = 0, early = 0;
    rows.sort(function (a, b) { return b[2] - a[2]; });
    rows.forEach(function (a) { sum += a[2]; if (a[5] < 0) early += a[2]; });
    var before = d.layers.filter(function (l) { return l.cat === 0; }).map(function (l) { return l.v[i] - early; })[0] || 0;
    html("p", "note", rows.length + " allocation" + (rows.length === 1 ? "" : "s") + " listed, " + fmtBytes(sum) +
      ". Not listed: " + fmtBytes(d.total[i] - sum) + (before > 0 ? ", of it " + fmtBytes(before) +
      " allocated before the trace (no single allocations known)" : "") + (s.live.listed < s.live.allocs ?
      "; the page keeps only the series' largest " + s.live.largest + " of its " + s.live.allocs +
      " allocations, and the largest " + s.live.at_peak + " live at the peak" : "") +
      (rows.length > LIVE_ROWS ? "; the largest " + LIVE_ROWS + " are shown." : "."), liveBox).setAttribute("data-unlisted",
      d.total[i] - sum);
    var tb = html("tbody", null, null, html("table", "live", null, liveBox));
    var hr = html("tr", null, null, tb);
    ["bytes", "category", "allocated at", "where (outermost first; innermost in bold)"].forEach(function (h) {
      html("th", null, h, hr);
    });
    rows.slice(0, LIVE_ROWS).forEach(function (a) {
      var tr = html("tr", "alloc", null, tb), cat = data.categories[a[3]] || { name: "-", color: "#fff" };
      tr.setAttribute("data-bytes", a[2]);
      tr.setAttribute("data-t", a[5]);
      html("td", "num", fmtBytes(a[2]), tr);
      var ct = html("td", null, null, tr);
      swatchOf({ cat: a[3], color: cat.color }, ct);
      ct.appendChild(document.createTextNode(cat.name));
      html("td", "num", a[5] < 0 ? "before the trace" : "+" + fmtMs(a[5]) + " ms", tr);
      var lines = (data.contexts[a[4]] || "").split("\n").filter(function (x) { return x; });
      var w = html("td", "where", null, tr);
      if (!lines.length) w.textContent = "-";
      else if (lines.length === 1) html("b", null, lines[0], w);
      else {
        var det = html("details", null, null, w);
        html("b", null, lines[lines.length - 1], html("summary", null, null, det));
        html("pre", null, lines.join("\n"), det);
        if (mark && +mark.bytes === a[2] && +mark.t === a[5]) det.open = true;
      }
      if (mark && +mark.bytes === a[2] && +mark.t === a[5]) tr.className = "alloc marked";
    });
  }
  document.querySelectorAll("table.live tbody tr[data-bytes]").forEach(function (tr) {
    tr.addEventListener("click", function () {
      var s = data.series[state.series];
      showLive(s.peak_t, { bytes: tr.getAttribute("data-bytes"), t: tr.getAttribute("data-t") });
      liveBox.scrollIntoView({ block: "nearest" });
    });
  });

  overlay.addEventListener("mousemove", function (ev) {
    if (drag) {
      var a = Math.min(drag.x, svgX(ev)), b = Math.max(drag.x, svgX(ev));
      a = Math.max(a, ctx.m.l);
      b = Math.min(b, ctx.W - ctx.m.r);
      selection.setAttribute("x", a);
      selection.setAttribute("width", Math.max(b - a, 0));
      drag.to = svgX(ev);
    }
    showReadout(ev);
  });
  overlay.addEventListener("mouseleave", function () {
    if (drag) return;
    cursor.setAttribute("visibility", "hidden");
    readout.hidden = true;
    idle.hidden = false;
  });
  overlay.addEventListener("mousedown", function (ev) {
    if (ev.button !== 0) return;
    ev.preventDefault();
    drag = { x: svgX(ev), to: svgX(ev) };
    selection.setAttribute("y", ctx.m.t);
    selection.setAttribute("height", ctx.H - ctx.m.t - ctx.m.b);
    selection.setAttribute("x", drag.x);
    selection.setAttribute("width", 0);
    selection.setAttribute("visibility", "visible");
  });
  window.addEventListener("mouseup", function (ev) {
    if (!drag) return;
    var a = Math.min(drag.x, drag.to), b = Math.max(drag.x, drag.to);
    if (ev.target === overlay) b = Math.max(b, svgX(ev)), a = Math.min(a, svgX(ev));
    drag = null;
    selection.setAttribute("visibility", "hidden");
    if (b - a < 4) {
      if (ev.target === overlay) showLive(timeAt(ev));
      return;
    }
    var t0 = ctx.x.inv(Math.max(a, ctx.m.l)), t1 = ctx.x.inv(Math.min(b, ctx.W - ctx.m.r));
    if (t1 - t0 < 1) return; /* 1 ns is as far as time goes */
    state.domain = [t0, t1];
    render();
  });
  overlay.addEventListener("dblclick", function () {
    state.domain = null;
    render();
  });
  document.getElementById("reset").addEventListener("click", function () {
    state.domain = null;
    render();
  });

  /* ---- small multiples: every series on one page ---- */
  /* Each on its own memory scale unless "same memory scale" is ticked; series that never
   * reach 1 MiB (CPU series of a few bytes) are one line of names under the charts, when
   * some series does. */
  var TRIVIAL = 1024 * 1024;
  function multiples() {
    var box = document.getElementById("multiples");
    box.textContent = "";
    var shared = document.getElementById("shared").checked, ext = [0, 0];
    var big = data.series.some(function (s) { return s.peak >= TRIVIAL; });
    var small = [];
    if (shared) data.series.forEach(function (s) {
      var d = decode(s), e = extent(d, 0, d.n - 1);
      ext = [Math.min(ext[0], e[0]), Math.max(ext[1], e[1])];
    });
    function open(i) {
      return function () {
        select(i);
        setView("single");
      };
    }
    data.series.forEach(function (s, i) {
      if (big && s.peak < TRIVIAL) {
        small.push(i);
        return;
      }
      var b = html("button", "multiple", null, box);
      b.type = "button";
      b.setAttribute("data-series", i);
      html("div", "label", s.label, b);
      html("div", "peakv", "peak " + fmtBytes(s.peak) + " at +" + fmtMs(s.peak_t) + " ms", b);
      var sv = el("svg", { role: "img", "aria-label": s.label }, b);
      draw(sv, s, { width: 340, height: 150, small: true, extent: shared ? ext : null,
        baseline: document.getElementById("baseline").checked });
      b.addEventListener("click", open(i));
    });
    if (!small.length) return;
    var p = html("p", "trivial", small.length + " series with a peak under 1 MiB, not drawn: ", box);
    small.forEach(function (i, j) {
      var s = data.series[i], b = html("button", "link", s.label + " (" + fmtBytes(s.peak) + ")", p);
      b.type = "button";
      b.setAttribute("data-series", i);
      b.addEventListener("click", open(i));
      if (j < small.length - 1) p.appendChild(document.createTextNode(", "));
    });
  }

  function setView(v) {
    state.view = v;
    document.getElementById("single").hidden = v !== "single";
    document.getElementById("multiples").hidden = v !== "multiples";
    document.getElementById("shared-label").hidden = v !== "multiples";
    document.getElementById("view").textContent = v === "single" ? "Compare all series" : "One series";
    update();
  }

  function select(i) {
    state.series = i;
    liveBox.hidden = true;
    state.domain = null;
    document.getElementById("series").value = String(i);
    document.querySelectorAll(".series-tables").forEach(function (t) {
      t.hidden = t.getAttribute("data-series") !== String(i);
    });
  }

  function update() {
    if (state.view === "single") render();
    else multiples();
  }

  var sel = document.getElementById("series");
  data.series.forEach(function (s, i) {
    var o = html("option", null, s.label, sel);
    o.value = String(i);
  });
  sel.addEventListener("change", function () {
    select(+sel.value);
    update();
  });
  document.getElementById("view").addEventListener("click", function () {
    setView(state.view === "single" ? "multiples" : "single");
  });
  document.getElementById("shared").addEventListener("change", update);
  document.getElementById("baseline").addEventListener("change", update);
  if (data.series.length < 2) document.getElementById("view").hidden = true;
  var pending = false;
  window.addEventListener("resize", function () {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () {
      pending = false;
      if (state.view === "single") render();
    });
  });
  /* Open on the series with the largest peak: usually the GPU that ran out. */
  var first = 0;
  data.series.forEach(function (s, i) { if (s.peak > data.series[first].peak) first = i; });
  select(first);
  render();
})();
