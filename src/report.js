/* hmem --html: the report's script (compiled into hmem; see src/html.c). It reads the
 * data block the C side wrote, draws each series as a stacked-area chart in SVG, and
 * handles hover, zoom, the legend, the series selector and the small multiples. No
 * libraries: the page must open offline, from one file. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("hmem-data").textContent);
  var SVG = "http://www.w3.org/2000/svg";
  var UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  var state = { series: 0, view: "single", domain: null, opening: false, hidden: {} };
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
  /* A path as the page shows it (html.c's html_path): past 60 characters its last
   * components after "…/"; the whole goes on hover. */
  var PATH_MAX = 60;
  function shortPath(p) {
    if (p.length <= PATH_MAX) return p;
    var cut = p.indexOf("/", p.length - PATH_MAX);
    return cut >= 0 && cut < p.length - 1 ? "\u2026" + p.slice(cut) : p;
  }
  function shortLabel(s) {
    return shortPath(s.path) + (s.rank != null ? "  rank " + s.rank : "") + "  " + s.device;
  }
  /* A series' name into e: a line may break after each '/' (never inside a name), the
   * whole label on hover. */
  function nameOf(s, e) {
    shortLabel(s).split(/(?<=\/)/).forEach(function (part, i) {
      if (i) e.appendChild(document.createElement("wbr"));
      e.appendChild(document.createTextNode(part));
    });
    e.title = s.label;
    return e;
  }
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
  /* The span the single view opens on: between the first and the last memory event, a
   * little to each side, when that is less than half of the trace (a 40 ms burst in 380 ms
   * would otherwise open as a flat line); null: the whole trace. */
  function opening(s) {
    var d = decode(s);
    if (d.n < 3) return null;
    var a = d.t[1], b = d.t[d.n - 1];
    (s.ooms || []).forEach(function (oo) { a = Math.min(a, oo[0]); b = Math.max(b, oo[0]); });
    if (b <= a || b - a >= d.end / 2) return null;
    var pad = Math.max((b - a) / 20, 1000);
    return [Math.max(a - pad, 0), Math.min(b + pad, d.end)];
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
    svg.setAttribute("data-x0", dom[0]);
    svg.setAttribute("data-x1", dom[1]);
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
    /* Time in ms, or in µs or ns when less than that is shown (a snapshot whose entries have
     * no time spans 1 ns). */
    var span = dom[1] - dom[0] || 1, T = span >= 1e6 ? 1e6 : span >= 1e3 ? 1e3 : 1, tname = T === 1e6 ? "ms" : T === 1e3 ?
      "\u00b5s" : "ns";
    var xstep = Math.max(niceStep(span / T, o.small ? 4 : 8) * T, 1);
    for (var tx = Math.ceil(dom[0] / xstep) * xstep; tx <= dom[1]; tx += xstep) {
      el("line", { x1: x(tx), x2: x(tx), y1: H - m.b, y2: H - m.b + 4 }, axis);
      el("text", { x: x(tx), y: H - m.b + 15, "text-anchor": "middle" }, axis).textContent = trimNum(tx / T);
    }
    el("line", { x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b }, axis);
    if (!o.small) {
      el("text", { "class": "title", x: (m.l + W - m.r) / 2, y: H - 6, "text-anchor": "middle" }, axis).textContent =
        "time since the trace's start (" + tname + ")";
      el("text", { "class": "title", x: 14, y: (m.t + H - m.b) / 2, "text-anchor": "middle",
        transform: "rotate(-90 14 " + (m.t + H - m.b) / 2 + ")" }, axis).textContent = UNITS[unit] + " (binary: 1 " +
        (unit ? UNITS[unit] + " = 2^" + 10 * unit + " bytes)" : "byte)");
    } else {
      el("text", { x: 4, y: m.t + 2, "class": "title" }, axis).textContent = UNITS[unit];
    }

    var plot = el("g", { "clip-path": "url(#" + id + ")" }, svg);
    /* Steps (ProfilerStep slices) as alternating bands behind the areas, numbered. */
    /* Each step's number sits on a tab at the band's top: a marker the single view lifts
     * above the pointer's layer, so a click on it opens the step's row (marks, below). */
    var marks = [];
    (s.steps || []).forEach(function (st, j) {
      var a = Math.max(x(st[0]), m.l), b = Math.min(x(st[1]), W - m.r);
      if (b <= a) return;
      var band = el("rect", { "class": "step" + (j % 2 ? " odd" : ""), x: a, y: m.t, width: b - a, height: H - m.t - m.b,
        "data-step": st[2] }, plot);
      /* st[3]: 1 when a window (--from/--to) cuts the step, 2 when a snapshot ends in it */
      var label = "step " + st[2] + (st[3] ? " (partial)" : ""), w = 7 + 6 * label.length;
      el("title", {}, band).textContent = label + ": +" + fmtMs(st[0]) + " to +" + fmtMs(st[1]) + " ms" +
        (st[3] === 2 ? ", the snapshot ends in it" : st[3] ? ", cut by the window" : "");
      if (o.small || b - a < w) return;
      var tab = el("g", { "class": "steptab", "data-step-index": j, "data-finding": "step-" + j }, plot);
      el("rect", { x: a, y: m.t, width: w, height: 13 }, tab);
      el("text", { "class": "steplabel", x: a + 3, y: m.t + 10 }, tab).textContent = label;
      el("title", {}, tab).textContent = "step " + st[2] + ": click for its row in the steps table";
      marks.push(tab);
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
    /* The mark under the axis is what a click hits (the plot stays the pointer's); OOMs
     * closer than 8 px share the first one's mark. Past 100 in view each is a tick under the
     * axis instead of a line across the plot, so thousands of them (a snapshot's) do not
     * paint the chart red; zoomed in, the lines come back. */
    var inView = (s.ooms || []).filter(function (oo) { return oo[0] >= dom[0] && oo[0] <= dom[1]; }).length, lastX = -Infinity;
    var rug = inView > 100, more = el("g", { "class": "oom-more" }, svg), top = rug ? H - m.b : m.t;
    (s.ooms || []).forEach(function (oo, j) {
      if (oo[0] < dom[0] || oo[0] > dom[1]) return;
      var ox = x(oo[0]);
      if (ox - lastX < 8 && !o.small) {
        el("line", { x1: ox, x2: ox, y1: top, y2: H - m.b + (rug ? 6 : 0) }, more);
        return;
      }
      lastX = ox;
      var g = el("g", { "class": "oom", "data-t": oo[0], "data-oom": j, "data-finding": "oom-" + j }, svg);
      el("line", { x1: ox, x2: ox, y1: top, y2: H - m.b + (rug ? 6 : 0) }, g);
      el("path", { d: "M" + (ox - 5) + " " + (H - m.b + 1) + "l5 -8l5 8z" }, g);
      el("rect", { "class": "hit", x: ox - 5, y: H - m.b - 8, width: 10, height: 12 }, g);
      el("title", {}, g).textContent = "out of memory at +" + fmtMs(oo[0]) + " ms: a request of " + fmtBytes(oo[1]) +
        (o.small ? "" : "; click for what the summary says of it");
      marks.push(g);
    });
    /* Where the allocator held the most back (reserved minus allocated): a diamond on the
     * reserved line. */
    if (s.gap_t != null && s.gap_t >= dom[0] && s.gap_t <= dom[1] && whole && !o.small) {
      var gi = Math.max(pointAt(d.t, s.gap_t), 0), gr = isNaN(d.res[gi]) ? null : d.res[gi];
      var gx = x(s.gap_t), gy = gr == null ? m.t : Math.max(y(gr), m.t);
      var gm = el("g", { "class": "gapmark", "data-t": s.gap_t, "data-finding": "gap" }, svg);
      el("path", { d: "M" + gx + " " + (gy - 6) + "l6 6l-6 6l-6 -6z" }, gm);
      el("title", {}, gm).textContent = "the most held back by the allocator (reserved, not allocated): " +
        (s.explain ? fmtBytes(s.explain.max_reserved_unallocated) : "") + " at +" + fmtMs(s.gap_t) + " ms; click for the figures";
      marks.push(gm);
    }
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
    return { x: x, y: y, m: m, W: W, H: H, d: d, dom: dom, marks: marks };
  }

  /* ---- the single-series view ---- */
  var svg = el("svg", { role: "img", "aria-label": "memory by category over time" }, chartEl);
  var cursor = el("line", { "class": "cursor", visibility: "hidden" });
  /* Where the listing under the chart is of (the last click, or a live-at-peak row's peak). */
  var clicked = el("line", { "class": "clicked", visibility: "hidden" });
  function placeClicked() {
    var t = state.clicked, m = ctx.m;
    var on = t != null && state.view === "single" && t >= ctx.dom[0] && t <= ctx.dom[1];
    clicked.setAttribute("visibility", on ? "visible" : "hidden");
    if (!on) return;
    clicked.setAttribute("x1", ctx.x(t));
    clicked.setAttribute("x2", ctx.x(t));
    clicked.setAttribute("y1", m.t);
    clicked.setAttribute("y2", ctx.H - m.b);
  }
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
    svg.appendChild(clicked);
    svg.appendChild(cursor);
    svg.appendChild(selection);
    svg.appendChild(overlay);
    /* The markers (OOMs, step tabs, the most held back) lie above the pointer's layer: a
     * click on one opens its section; hovering one still reads out the time there. */
    ctx.marks.forEach(function (g) {
      svg.appendChild(g);
      g.addEventListener("mousemove", showReadout);
      g.addEventListener("click", function () { openFinding(g.getAttribute("data-finding")); });
    });
    var m = ctx.m;
    overlay.setAttribute("x", m.l);
    overlay.setAttribute("y", m.t);
    overlay.setAttribute("width", ctx.W - m.l - m.r);
    overlay.setAttribute("height", ctx.H - m.t - m.b);
    cursor.setAttribute("y1", m.t);
    cursor.setAttribute("y2", ctx.H - m.b);
    placeClicked();
    var rb = document.getElementById("reset");
    rb.hidden = !state.domain;
    rb.textContent = "Whole trace (0 to " + fmtMs(ctx.d.end) + " ms)";
    rb.title = state.opening ? "The chart opened on +" + fmtMs(state.domain[0]) + " to +" + fmtMs(state.domain[1]) +
      " ms, between the first and last memory event; this shows the whole trace" : "Undo the zoom";
    legend(s);
    var hint = document.getElementById("hint");
    hint.textContent = (state.opening ? "The chart opens on the span where memory changes (+" + fmtMs(state.domain[0]) +
      " to +" + fmtMs(state.domain[1]) + " ms of " + fmtMs(ctx.d.end) + "): 'Whole trace' shows all of it. " : "") +
      "Hover for the bytes of every category; click for what is live there; drag to zoom into a time range, double-click for the whole trace; " +
      markerHint(s) +
      "click a legend entry to hide or show a category." + (s.reduced ? " This series has " + s.events +
      " memory events: the chart keeps " + (s.t.length - 1) + " of them, each pixel column's lowest and highest " +
      "states (so no peak is lost); the hover shows the kept state at or before the pointer." : "");
  }

  /* The markers this chart has, for the hint. */
  function markerHint(s) {
    var m = [];
    if ((s.ooms || []).length) m.push("an OOM's red line");
    if ((s.steps || []).length) m.push("a step's tab");
    if (s.gap_t != null) m.push("the diamond where the allocator held the most back");
    return m.length ? "click a marker (" + m.join(", ") + ") for its section; " : "";
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
    /* The step and the OOM under the pointer, named. */
    (s.steps || []).forEach(function (st) {
      if (tns >= st[0] && tns <= st[1]) html("div", "where step", "in step " + st[2] + " (+" + fmtMs(st[0]) + " to +" +
        fmtMs(st[1]) + " ms)", readout).setAttribute("data-step", st[2]);
    });
    (s.ooms || []).forEach(function (oo, j) {
      if (Math.abs(ctx.x(oo[0]) - px) <= 4) html("div", "where oomline", "out of memory at +" + fmtMs(oo[0]) +
        " ms: asked for " + fmtBytes(oo[1]), readout).setAttribute("data-oom", j);
    });
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
      html("td", null, name, tr).title = name;
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
    state.clicked = d.t[i];
    placeClicked();
    if (svState && svState.s === s) {
      segviewAt(s.pk[i], s.events && tns === s.peak_t ? "peak" : "t");
      var go = html("button", "link svgo", "the allocator's segments and blocks then \u2193", liveBox);
      go.type = "button";
      go.addEventListener("click", function () { svState.sec.scrollIntoView({ block: "start" }); });
    }
    html("h3", null, "Live at +" + fmtMs(d.t[i]) + " ms" + (i === peakIndex(d, s) ? " (the peak)" : "") + ": " +
      fmtBytes(d.total[i]) + " allocated", liveBox);
    if (!s.live) {
      html("p", "note", "This trace has no Addr: frees cannot be matched to allocations, so what is live cannot be known.",
        liveBox);
      return;
    }
    /* Every allocation, once the page has inflated them; the largest only, where it cannot. */
    if (s.all && !s.noAll) {
      if (s.cols) return liveAll(s, d, i, mark);
      var idx = state.series, wait = html("p", "note", "Reading every allocation of this series\u2026", liveBox);
      allOf(s, idx).then(function (c) {
        if (!c) s.noAll = true;
        if (state.series === idx && wait.parentNode === liveBox) showLive(tns, mark);
      });
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
      var lines = ctxText(a[4]).split("\n").filter(function (x) { return x; });
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
  /* Every allocation of a series (html.c, all_allocations): its columns inflated once, on
   * first need (DecompressionStream; typed arrays read them little-endian, as every platform
   * a browser runs on is). Resolves to null where they cannot be read. */
  function allOf(s, idx) {
    if (s.allP) return s.allP;
    var src = document.getElementById("hmem-all-" + idx);
    if (!s.all || !src || typeof DecompressionStream !== "function") return (s.allP = Promise.resolve(null));
    var bin = atob(src.textContent.trim()), u8 = new Uint8Array(bin.length);
    for (var j = 0; j < bin.length; j++) u8[j] = bin.charCodeAt(j);
    s.allP = new Response(new Blob([u8]).stream().pipeThrough(new DecompressionStream("deflate"))).arrayBuffer()
      .then(function (buf) {
        var n = s.all.n, o = 0;
        function take(T) { var a = new T(buf, o, n); o += T.BYTES_PER_ELEMENT * n; return a; }
        s.cols = { n: n, bytes: take(Float64Array), at: take(Float64Array), ft: take(Float64Array) };
        if (s.all.blocks) { s.cols.addr = take(Float64Array); s.cols.blk = take(Float64Array); }
        Object.assign(s.cols, { from: take(Uint32Array),
          to: take(Uint32Array), ctx: take(Uint32Array), who: take(Uint32Array), step: take(Int32Array), cat: take(Uint16Array) });
        return s.cols;
      }).catch(function () { return null; });
    return s.allP;
  }

  /* What is live at point i, every allocation of it: a search box (who, op, module, frame,
   * category), sortable columns, the largest LIVE_ROWS first and more on demand, each
   * allocation's stack on demand. */
  /* Each sort's key as a number (names by their rank in name order, ranked once), so a
   * click on a state with 200,000 allocations live sorts numbers, not strings. */
  function rankOf(names) {
    var ix = names.map(function (_, i) { return i; }), r = new Float64Array(names.length);
    ix.sort(function (a, b) { return names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : 0; });
    ix.forEach(function (id, k) { r[id] = k; });
    return r;
  }
  var ranks = {};
  function ranked(what, names) { return ranks[what] || (ranks[what] = rankOf(names)); }
  var SORTS = {
    bytes: function (c, j) { return c.bytes[j]; },
    category: function (c, j) { return ranked("cat", data.categories.map(function (x) { return x.name; }))[c.cat[j]]; },
    who: function (c, j) { return ranked("who", data.whos)[c.who[j]]; },
    step: function (c, j) { return c.step[j]; },
    lifetime: function (c, j) { return c.at[j] < 0 ? -1 : c.ft[j] < 0 ? Infinity : c.ft[j] - c.at[j]; },
    allocated: function (c, j) { return c.at[j]; }
  };
  var liveView = { sort: "bytes", desc: true, q: "", shown: LIVE_ROWS };
  function lifeText(c, j) {
    if (c.at[j] < 0) return "before the trace";
    return c.ft[j] < 0 ? "never freed" : fmtMs(c.ft[j] - c.at[j]) + " ms";
  }
  /* A context's text (html.c contexts): id 2i, contexts[i]; id 2j + 1, the frame lines of
   * stacks[j], one a line. Every id's text, once, for the search. */
  function ctxText(id) {
    if (!(id & 1)) return data.contexts[id >> 1] || "";
    var st = (data.stacks || [])[id >> 1];
    return st ? st.map(function (k) { return data.frame_lines[k]; }).join("\n") : "";
  }
  var ctxAll = null;
  function allContexts() {
    if (ctxAll) return ctxAll;
    var n = 2 * Math.max(data.contexts.length, (data.stacks || []).length) + 2;
    ctxAll = [];
    for (var id = 0; id < n; id++) ctxAll.push(ctxText(id));
    return ctxAll;
  }
  /* A row's stack as the page keeps it (html.c context_of): a snapshot's frames, innermost
   * first; a trace's enclosing slices, outermost first. */
  function stackText(s, c, j) {
    var lines = ctxText(c.ctx[j]).split("\n").filter(function (x) { return x; });
    if (s.segview) return lines.length ? "frames (innermost first):\n" + lines.join("\n") : "no frames recorded";
    return lines.length ? "enclosing (outermost first):\n" + lines.join("\n") : "no enclosing slice";
  }
  function liveAll(s, d, i, mark) {
    var c = s.cols, kp = s.pk[i], live = [], sum = 0;
    for (var j = 0; j < c.n; j++) if (c.from[j] <= kp && kp < c.to[j]) { live.push(j); sum += c.bytes[j]; }
    var unlisted = d.total[i] - sum;
    var note = html("p", "note", live.length + " allocation" + (live.length === 1 ? "" : "s") + " live, " + fmtBytes(sum) +
      (unlisted ? ". Not listed: " + fmtBytes(unlisted) + " allocated before the trace and not freed in it (no single " +
      "allocations known)" : "") + ".", liveBox);
    note.setAttribute("data-unlisted", unlisted);
    note.setAttribute("data-count", live.length);
    note.setAttribute("data-total", sum);
    note.setAttribute("data-pk", kp);
    var bar = html("div", "livebar", null, liveBox), box = html("input", null, null, bar);
    box.type = "search";
    box.id = "live-search";
    box.placeholder = "search: who, op, module, frame, category";
    box.value = liveView.q;
    var found = html("span", "found", null, bar);
    var table = html("table", "live all", null, liveBox), head = html("tr", null, null, html("thead", null, null, table));
    var tb = html("tbody", null, null, table), more = html("button", "more", null, liveBox);
    more.type = "button";
    [["bytes", "bytes"], ["category", "category"], ["step", "step"], ["lifetime", "lifetime"], ["allocated", "allocated at"],
      ["who", "who (its stack on a click)"]].forEach(function (h) {
      var th = html("th", null, null, head), b = html("button", "sort", h[1], th);
      b.type = "button";
      b.setAttribute("data-sort", h[0]);
      b.addEventListener("click", function () {
        liveView.desc = liveView.sort === h[0] ? !liveView.desc : h[0] !== "category" && h[0] !== "who";
        liveView.sort = h[0];
        liveView.shown = LIVE_ROWS;
        fill();
      });
    });
    /* A query matches a row when its who, its stack (ops, annotations, Python frames,
     * modules) or its category holds it, case aside: tested once per distinct string. */
    function matcher(q) {
      if (!q) return null;
      q = q.toLowerCase();
      function hits(list) {
        var h = new Uint8Array(list.length);
        for (var i = 0; i < list.length; i++) h[i] = (list[i] || "").toLowerCase().indexOf(q) >= 0 ? 1 : 0;
        return h;
      }
      var w = hits(data.whos), x = hits(allContexts()), k = hits(data.categories.map(function (e) { return e.name; }));
      return function (j) { return w[c.who[j]] || x[c.ctx[j]] || k[c.cat[j]]; };
    }
    /* The first n rows in the order chosen (ties: larger first, then as stored): a sorted
     * buffer of n over one pass, so a page of 100 out of 200,000 costs one pass, not a sort. */
    function firstRows(rows, n) {
      var key = SORTS[liveView.sort], sgn = liveView.desc ? -1 : 1, kv = new Float64Array(rows.length);
      for (var i = 0; i < rows.length; i++) kv[i] = key(c, rows[i]);
      function before(a, b) { /* positions in rows */
        var x = kv[a], y = kv[b];
        if (x !== y) return (x < y ? -sgn : sgn) < 0;
        var ba = c.bytes[rows[a]], bb = c.bytes[rows[b]];
        return ba !== bb ? ba > bb : rows[a] < rows[b];
      }
      var buf = [];
      for (i = 0; i < rows.length; i++) {
        if (buf.length === n && !before(i, buf[n - 1])) continue;
        var lo = 0, hi = buf.length;
        while (lo < hi) { var mid = (lo + hi) >> 1; if (before(buf[mid], i)) lo = mid + 1; else hi = mid; }
        buf.splice(lo, 0, i);
        if (buf.length > n) buf.pop();
      }
      return buf.map(function (p) { return rows[p]; });
    }
    function fill() {
      var m = matcher(liveView.q), rows = m ? live.filter(m) : live;
      var fb = 0;
      rows.forEach(function (j) { fb += c.bytes[j]; });
      found.textContent = m ? rows.length + " of " + live.length + " match, " + fmtBytes(fb) : "";
      found.setAttribute("data-count", rows.length);
      head.querySelectorAll("button.sort").forEach(function (b) {
        var on = b.getAttribute("data-sort") === liveView.sort;
        b.className = "sort" + (on ? liveView.desc ? " desc" : " asc" : "");
      });
      tb.textContent = "";
      firstRows(rows, liveView.shown).forEach(function (j) {
        var tr = html("tr", "alloc", null, tb), cat = data.categories[c.cat[j]] || { name: "-", color: "#fff" };
        tr.setAttribute("data-bytes", c.bytes[j]);
        tr.setAttribute("data-t", c.at[j]);
        tr.setAttribute("data-row", j);
        html("td", "num", fmtBytes(c.bytes[j]), tr).title = c.bytes[j] + " bytes";
        var ct = html("td", null, null, tr);
        swatchOf({ cat: c.cat[j], color: cat.color }, ct);
        ct.appendChild(document.createTextNode(cat.name));
        html("td", "num", c.step[j] < 0 ? "-" : String(c.step[j]), tr);
        html("td", "num", lifeText(c, j), tr);
        html("td", "num", c.at[j] < 0 ? "before the trace" : "+" + fmtMs(c.at[j]) + " ms", tr);
        var w = html("td", "where", null, tr), det = html("details", null, null, w);
        html("b", null, data.whos[c.who[j]] || "-", html("summary", null, null, det));
        var marked = mark && +mark.bytes === c.bytes[j] && +mark.t === c.at[j];
        function stack() {
          if (!det.querySelector("pre")) html("pre", null, stackText(s, c, j), det);
        }
        det.addEventListener("toggle", stack);
        if (marked) { tr.className = "alloc marked"; det.open = true; stack(); }
      });
      more.hidden = rows.length <= liveView.shown;
      more.textContent = "show " + Math.min(LIVE_ROWS, rows.length - liveView.shown) + " more of " +
        (rows.length - liveView.shown);
    }
    box.addEventListener("input", function () {
      liveView.q = box.value;
      liveView.shown = LIVE_ROWS;
      fill();
    });
    more.addEventListener("click", function () {
      liveView.shown += LIVE_ROWS;
      fill();
    });
    fill();
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
    state.opening = false;
    render();
  });
  overlay.addEventListener("dblclick", function () {
    state.domain = null;
    state.opening = false;
    render();
  });
  document.getElementById("reset").addEventListener("click", function () {
    state.domain = null;
    state.opening = false;
    render();
  });

  /* ---- the findings: what the summary says under a series, each as a section ---- */
  /* The figures come from the series' "explain" object, which html.c writes with the very
   * code that writes --json (hm_json_explain): OOMs, the allocator's gap, steps and the leak
   * verdict, a snapshot's segments. Each figure is an element with data-k (its path in the
   * series' --json object) and data-v (the value), so a test can check it against --json.
   * Sections and chart markers link both ways: a marker opens its section (openFinding), a
   * section's "show on the chart" zooms there (zoomTo). */
  var findingsEl = document.getElementById("findings");
  var LABELS = {
    bytes: "asked for", allocated: "allocated (hmem's replay of the trace)",
    total_allocated: "Total Allocated (the event's)", total_reserved: "Total Reserved (the event's)",
    reserved_unallocated: "reserved but unallocated: cached by the allocator, which it could not release",
    capacity: "the device's capacity", freed_after: "freed after it, to the end of the trace",
    device_free: "device free (cudaMemGetInfo)", segments: "segments", reserved_bytes: "reserved by the segments",
    requested_bytes: "requested by live blocks", stranded_bytes: "free in segments that hold a live block",
    reclaimable_bytes: "reclaimable (segments that hold none)", allocated_bytes: "in allocated blocks",
    pending_free_bytes: "in blocks pending a free", free_bytes: "in free blocks", largest_free_bytes: "the largest free block",
    internal_waste_bytes: "internal waste (live blocks' rounded minus requested bytes)",
    internal_free_bytes: "internal free (memory_viz stats: allocated blocks' rounding)",
    external_free_bytes: "external free (memory_viz stats: every block not allocated)",
    external_free_in_used_segments_bytes: "of it in segments holding an allocated block"
  };
  var INTS = { segments: true, blocks: true, step: true, steps: true, frames_total: true };
  function isBytes(k) { return !INTS[k] && !/_ts$/.test(k) && (/bytes/.test(k) || /reserved_unallocated/.test(k) || k in LABELS); }
  /* A figure: its text, and its --json path and value for whoever checks it. */
  function fig(parent, path, v, text) {
    var e = html("span", "v", text != null ? text : v == null ? "-" : typeof v === "number" && isBytes(path.split(".").pop()) ?
      fmtBytes(v) : String(v), parent);
    e.setAttribute("data-k", path);
    e.setAttribute("data-v", JSON.stringify(v));
    if (typeof v === "number" && isBytes(path.split(".").pop())) e.title = v + " bytes";
    return e;
  }
  /* A two-column table of an object's figures: the known keys in LABELS order, then any
   * other number (a field a newer hmem adds shows under its own name). */
  function figTable(parent, obj, path, keys, shownElsewhere) {
    var tb = html("tbody", null, null, html("table", "figs", null, parent));
    var ks = (keys || Object.keys(LABELS)).filter(function (k) { return k in obj; });
    Object.keys(obj).forEach(function (k) {
      if (ks.indexOf(k) < 0 && typeof obj[k] === "number" && (!keys || (shownElsewhere || []).indexOf(k) < 0)) ks.push(k);
    });
    ks.forEach(function (k) {
      var tr = html("tr", null, null, tb);
      html("th", null, LABELS[k] || k.replace(/_bytes$/, "").replace(/_/g, " "), tr);
      fig(html("td", "num", null, tr), path + "." + k, obj[k]);
    });
    return tb;
  }
  function msOf(s, us) { return us == null ? null : (us - parseFloat(s.t0)) * 1000; }
  /* No button where the window is the whole axis (a snapshot's entries all at one time). */
  function zoomButton(parent, a, b, what) {
    if (a <= 0 && b >= decode(data.series[state.series]).end) return null;
    var z = html("button", "zoom", "show on the chart", parent);
    z.type = "button";
    z.setAttribute("data-t0", a);
    z.setAttribute("data-t1", b);
    z.title = "Zoom the chart to +" + fmtMs(a) + " to +" + fmtMs(b) + " ms" + (what ? ", " + what : "");
    z.addEventListener("click", function (ev) { ev.stopPropagation(); zoomTo(a, b); });
    return z;
  }
  /* A window around time t: a twentieth of the whole axis, centred, inside the axis. */
  function around(s, t) {
    var end = decode(s).end, h = Math.max(end / 40, 1000), a = Math.max(t - h, 0), b = Math.min(t + h, end);
    return [a, Math.max(b, a + 1)];
  }
  function stepOf(s, t) {
    var st = (s.steps || []).filter(function (x) { return t >= x[0] && t <= x[1]; });
    return st.length ? st[st.length - 1] : null;
  }
  function zoomTo(a, b) {
    if (state.view !== "single") setView("single");
    state.domain = [a, b];
    state.opening = false;
    render();
    chartEl.scrollIntoView({ block: "nearest" });
  }
  function openFinding(id) {
    if (/^step-/.test(id) && !document.getElementById("f-" + id)) showAllSteps();
    if (/^oom-/.test(id) && !document.getElementById("f-" + id)) showAllOoms();
    var e = document.getElementById("f-" + id);
    if (!e) return;
    findingsEl.querySelectorAll(".flash").forEach(function (x) { x.classList.remove("flash"); });
    for (var p = e; p && p !== findingsEl; p = p.parentNode) if (p.tagName === "DETAILS") p.open = true;
    e.classList.add("flash");
    e.scrollIntoView({ block: "center" });
  }
  function section(id, cls, title) {
    var sec = html("section", "finding " + cls, null, findingsEl);
    sec.id = "f-" + id;
    html("h3", null, title, sec);
    return sec;
  }

  function findings(s) {
    findingsEl.textContent = "";
    showAllSteps = showAllOoms = function () {};
    var x = s.explain;
    findingsEl.hidden = true;
    if (!x) return;
    (x.ooms || []).forEach(function (o, j) { oomSection(s, x, o, j); });
    if (x.ooms_total > (x.ooms || []).length) moreOoms(s, x);
    gapSection(s, x);
    stepsSection(s, x);
    leakSection(x);
    if (x.snapshot) segmentsSection(x.snapshot);
    svState = null;
    if (s.segview && s.all && s.all.blocks) segviewSection(s, data.series.indexOf(s));
    findingsEl.hidden = !findingsEl.firstChild;
  }

  function oomSection(s, x, o, j) {
    var t = s.ooms[j] ? s.ooms[j][0] : msOf(s, o.ts), sec = section("oom-" + j, "oom", null), h = sec.firstChild;
    h.appendChild(document.createTextNode("Out of memory at +" + fmtMs(t) + " ms (ts " + fmtTs(s.t0, t) + "): asked for "));
    fig(h, "ooms." + j + ".bytes", o.bytes);
    if (o.op != null) { h.appendChild(document.createTextNode(" in ")); fig(h, "ooms." + j + ".op", o.op); }
    if (o.step != null) { h.appendChild(document.createTextNode(", step ")); fig(h, "ooms." + j + ".step", o.step); }
    var st = stepOf(s, t), w = st ? [Math.min(st[0], t), Math.max(st[1], t)] : around(s, t);
    zoomButton(h, w[0], w[1], st ? "the step it happened in" : "around it");
    figTable(sec, o, "ooms." + j, ["allocated", "total_allocated", "total_reserved", "reserved_unallocated", "capacity",
      "freed_after", "device_free"], ["ts", "bytes", "step", "step_ts", "frames_total"]);
    var who = html("p", "who", null, sec);
    if (o.ops && o.ops.length) { who.appendChild(document.createTextNode("in ")); fig(who, "ooms." + j + ".ops", o.ops, o.ops.join(" > ")); }
    if (o.thread != null) { who.appendChild(document.createTextNode((o.ops && o.ops.length ? ", " : "") + "on thread ")); fig(who, "ooms." + j + ".thread", o.thread); }
    if ("frame" in o) { who.appendChild(document.createTextNode("; asked by ")); fig(who, "ooms." + j + ".frame", o.frame,
      o.frame == null ? "no user frame recorded" : null); }
    if (o.segments) {
      html("h4", null, "The allocator's segments at the OOM", sec);
      figTable(sec, o.segments, "ooms." + j + ".segments");
    } else if ("segments" in o) html("p", "note", "Segments at the OOM: unknown (the snapshot's entries do not replay " +
      "from the end's segments).", sec);
    var cats = (o.categories || []).map(function (c, k) { return [c, k]; }).filter(function (c) { return c[0].bytes; });
    cats.sort(function (a, b) { return Math.abs(b[0].bytes) - Math.abs(a[0].bytes); });
    if (cats.length) {
      html("h4", null, "By category at the OOM", sec);
      var tb = html("tbody", null, null, html("table", "figs", null, sec));
      cats.forEach(function (c) {
        var tr = html("tr", null, null, tb), th = html("th", null, null, tr), cat = catNamed(c[0].name);
        if (cat) swatchOf({ cat: cat.id, color: cat.color }, th);
        th.appendChild(document.createTextNode(c[0].name));
        fig(html("td", "num", null, tr), "ooms." + j + ".categories." + c[1] + ".bytes", c[0].bytes);
      });
    }
    if (o.live && o.live.length) {
      html("h4", null, "Largest allocations live at the OOM", sec);
      var lt = html("tbody", null, null, html("table", "live", null, sec)), hr = html("tr", null, null, lt);
      ["bytes", "category", "allocated at", "who"].forEach(function (c) { html("th", null, c, hr); });
      o.live.forEach(function (a, k) {
        var tr = html("tr", null, null, lt);
        fig(html("td", "num", null, tr), "ooms." + j + ".live." + k + ".bytes", a.bytes);
        fig(html("td", null, null, tr), "ooms." + j + ".live." + k + ".category", a.category);
        html("td", "num", a.ts == null ? "-" : "+" + fmtMs(msOf(s, a.ts)) + " ms", tr);
        fig(html("td", "who", null, tr), "ooms." + j + ".live." + k + ".who", a.who);
      });
    }
    if (o.frames && o.frames.length) {
      var det = html("details", null, null, sec);
      html("summary", null, "the failing allocation's stack (" + (o.frames_total || o.frames.length) + " frames, innermost first)", det);
      html("pre", null, o.frames.map(function (f) { return f.file + "(" + f.line + "): " + f.name; }).join("\n"), det);
    }
  }
  /* Past the OOMs told in full (html.c HM_HTML_OOMS), the others as a table: when, the
   * request, its section's "show on the chart"; the first STEP_ROWS, the rest on demand. */
  function moreOoms(s, x) {
    var from = x.ooms.length, sec = section("ooms-more", "oom", x.ooms_total + " out-of-memory errors in all");
    html("p", "note", "The first " + from + " are told above; hmem's --json has every one in full. The others:", sec);
    var tb = html("tbody", null, null, html("table", "steps", null, sec)), hr = html("tr", null, null, tb);
    ["#", "at", "asked for", ""].forEach(function (c) { html("th", null, c, hr); });
    function row(j) {
      var oo = s.ooms[j], tr = html("tr", "oomrow", null, tb), w = stepOf(s, oo[0]);
      tr.id = "f-oom-" + j;
      html("td", "num", String(j + 1), tr);
      html("td", "num", "+" + fmtMs(oo[0]) + " ms", tr);
      html("td", "num", fmtBytes(oo[1]), tr).title = oo[1] + " bytes";
      var win = w ? [Math.min(w[0], oo[0]), Math.max(w[1], oo[0])] : around(s, oo[0]);
      zoomButton(html("td", null, null, tr), win[0], win[1], w ? "the step it happened in" : "around it");
    }
    showAllOoms = someRows(sec, from, s.ooms.length, row, "show all " + x.ooms_total);
  }
  var showAllOoms = function () {};
  /* Rows from to end laid out by row(j): the first STEP_ROWS now, the others when the
   * button (label) is clicked or the returned function called. */
  function someRows(sec, from, end, row, label) {
    var shown = Math.min(end, from + STEP_ROWS);
    for (var j = from; j < shown; j++) row(j);
    if (shown >= end) return function () {};
    var all = html("button", "more", label, sec);
    all.type = "button";
    function rest() {
      if (!all.parentNode) return;
      for (var k = shown; k < end; k++) row(k);
      all.remove();
    }
    all.addEventListener("click", rest);
    return rest;
  }
  function catNamed(name) {
    for (var i = 0; i < data.categories.length; i++)
      if (data.categories[i].name === name) return { id: i, color: data.categories[i].color };
    return null;
  }

  function gapSection(s, x) {
    if (x.max_reserved_unallocated == null) return;
    var sec = section("gap", "gap", "Reserved but unallocated (cached by the allocator)");
    html("p", "note", "What the allocator holds in its segments beyond what is allocated: memory no other process can " +
      "use, and which an out-of-memory error leaves unreleased when no cached block fits the request.", sec);
    var ul = html("ul", null, null, sec), li;
    if (x.reserved_unallocated_at_peak != null) {
      li = html("li", null, "at the peak: ", ul);
      fig(li, "reserved_unallocated_at_peak", x.reserved_unallocated_at_peak);
      var pw = around(s, s.peak_t);
      zoomButton(li, pw[0], pw[1], "around the peak");
    }
    li = html("li", null, "at most: ", ul);
    fig(li, "max_reserved_unallocated", x.max_reserved_unallocated);
    li.appendChild(document.createTextNode(" at "));
    fig(li, "max_reserved_unallocated_ts", x.max_reserved_unallocated_ts, "+" + fmtMs(s.gap_t) + " ms");
    var gw = around(s, s.gap_t);
    zoomButton(li, gw[0], gw[1], "around the most held back (the diamond)");
    (x.ooms || []).forEach(function (o, j) {
      if (!("reserved_unallocated" in o)) return;
      li = html("li", null, "at the OOM at +" + fmtMs(s.ooms[j][0]) + " ms: ", ul);
      fig(li, "ooms." + j + ".reserved_unallocated", o.reserved_unallocated, o.reserved_unallocated == null ?
        "unknown (the event has no Total Reserved)" : null);
      var b = html("button", "link", "its section", li);
      b.type = "button";
      b.addEventListener("click", function () { openFinding("oom-" + j); });
      li.insertBefore(document.createTextNode(" "), b);
    });
  }

  function stepsSection(s, x) {
    if (!x.steps || !x.steps.length) return;
    var sec = section("steps", "steps", "Steps (" + x.steps.length + ")");
    html("p", "note", "Each ProfilerStep: allocated at its start, its peak and end; growth is end minus start; survivors are " +
      "what the step allocated and the trace never frees. Click a row to zoom the chart to its step.", sec);
    var tb = html("tbody", null, null, html("table", "steps", null, sec)), hr = html("tr", null, null, tb);
    ["step", "start", "start", "peak", "peak at", "end", "growth", "survivors", ""].forEach(function (c, i) {
      html("th", i === 1 ? "num" : null, i === 1 ? "start ms" : c, hr);
    });
    /* A long run (thousands of steps) shows its first STEP_ROWS, the rest on demand: a
     * table of every one would take seconds to lay out as the page opens. */
    function row(j) {
      var st = x.steps[j], band = s.steps[j], tr = html("tr", "step", null, tb), p = "steps." + j;
      tr.id = "f-step-" + j;
      var sc = html("td", "num", null, tr);
      fig(sc, p + ".step", st.step);
      /* A step a window cuts (hmem's --from/--to) says so, as the summary does. */
      if ("partial" in st) fig(sc, p + ".partial", st.partial, st.open ? "" : st.partial ? " partial (cut by the window)" : "");
      /* A step a snapshot ends in (its ProfilerStep has no END) is open, and partial too. */
      if ("open" in st) fig(sc, p + ".open", st.open, st.open ? " open (the snapshot ends in it)" : "");
      fig(html("td", "num", null, tr), p + ".start_ts", st.start_ts, "+" + fmtMs(band[0]));
      ["start_bytes", "peak_bytes"].forEach(function (k) { fig(html("td", "num", null, tr), p + "." + k, st[k]); });
      fig(html("td", "num", null, tr), p + ".peak_ts", st.peak_ts, "+" + fmtMs(msOf(s, st.peak_ts)));
      ["end_bytes", "growth_bytes", "survivors_bytes"].forEach(function (k) { fig(html("td", "num", null, tr), p + "." + k, st[k]); });
      zoomButton(html("td", null, null, tr), band[0], band[1], "step " + st.step);
      tr.title = "click: zoom the chart to step " + st.step;
      tr.addEventListener("click", function () { zoomTo(band[0], band[1]); });
    }
    showAllSteps = someRows(sec, 0, x.steps.length, row, "show all " + x.steps.length + " steps");
  }
  var STEP_ROWS = 50, showAllSteps = function () {};

  function leakSection(x) {
    var l = x.leak;
    if (!l || (l.verdict === "unknown" && !l.steps)) return;
    var sec = section("leak", "leak leak-" + l.verdict, "Leak verdict: "), h = sec.firstChild;
    fig(h, "leak.verdict", l.verdict);
    var p = html("p", null, null, sec);
    if (l.verdict === "unknown") {
      p.textContent = "No verdict on fewer than " + data.leak_min_steps + " steps (";
      fig(p, "leak.steps", l.steps);
      p.appendChild(document.createTextNode(" here)."));
      return;
    }
    if (l.verdict === "none") {
      p.textContent = "None: the end of step does not grow every step, nor do allocations survive every step (over ";
      fig(p, "leak.steps", l.steps);
      p.appendChild(document.createTextNode(" steps)."));
      return;
    }
    p.textContent = "A leak: ";
    fig(p, "leak.per_step_bytes", l.per_step_bytes);
    p.appendChild(document.createTextNode(" per step over "));
    fig(p, "leak.steps", l.steps);
    p.appendChild(document.createTextNode(" steps (" + (l.verdict === "growth" ? "allocated at each step's end grows every step" :
      "allocations of every step but the last are never freed") + ")."));
    if (l.made_by && l.made_by.length) {
      html("h4", null, "Made by", sec);
      var tb = html("tbody", null, null, html("table", "figs", null, sec));
      l.made_by.forEach(function (m, k) {
        var tr = html("tr", null, null, tb);
        fig(html("th", "who", null, tr), "leak.made_by." + k + ".name", m.name);
        fig(html("td", "num", null, tr), "leak.made_by." + k + ".bytes", m.bytes);
      });
    }
  }

  function segmentsSection(sn) {
    var sec = section("segments", "segments", "The allocator's segments at the end of the snapshot" +
      (sn.pinned_host ? " (pinned host memory)" : ""));
    if (sn.at_end) figTable(sec, sn.at_end, "snapshot.at_end");
    var segs = sn.segments || [];
    if (!segs.length) return;
    var det = html("details", null, null, sec);
    html("summary", null, segs.length + " segments, in address order", det);
    var tb = html("tbody", null, null, html("table", "segs", null, det)), hr = html("tr", null, null, tb);
    var cols = ["total_bytes", "allocated_bytes", "pending_free_bytes", "free_bytes", "largest_free_bytes", "blocks", "requested_bytes"];
    /* Other fields a newer hmem adds to a segment get a column of their own. */
    Object.keys(segs[0]).forEach(function (c) {
      if (c !== "address" && cols.indexOf(c) < 0 && typeof segs[0][c] === "number") cols.push(c);
    });
    html("th", null, "address", hr);
    cols.forEach(function (c) { html("th", "num", c.replace(/_bytes$/, "").replace(/_/g, " "), hr); });
    /* Thousands of segments are laid out when unfolded, not as the page opens. */
    det.querySelector("summary").addEventListener("click", function fill() {
      det.querySelector("summary").removeEventListener("click", fill);
      segs.forEach(function (g, k) {
        var tr = html("tr", null, null, tb);
        html("td", "num", "0x" + g.address.toString(16), tr);
        cols.forEach(function (c) { fig(html("td", "num", null, tr), "snapshot.segments." + k + "." + c, g[c]); });
      });
    });
  }

  /* ---- a snapshot's allocator state (memory_viz's "Allocator State History") ---- */
  /* At the peak, at each OOM, at the end or at any state clicked on the chart: the device's
   * segments as bars in address order, one canvas per stream and pool, each live block in
   * its category's colour at its address (its rounding, where the block's size is known, in
   * pale red), the rest of a segment free. Replayed from the page's data: the segments'
   * lives (html.c segview_json) and the allocations live at that state (the every-allocation
   * columns, with their addresses); a block is drawn at its requested size, as memory_viz
   * draws one the entries made (an entry records no rounded size). Beside it memory_viz's
   * `stats`: internal free (the live blocks' rounding, where known) and external free (the
   * rest of the segments). A click on a block shows its frames. Each figure is an element
   * with data-view (its name) and data-v, each segment a row of the table under it. */
  var SV_ROWS = 8, SV_ROW = 18, SV_BAR = 14, SV_LIST = 500;
  var svState = null;
  function segviewSection(s, idx) {
    var sv = s.segview, sec = section("segview", "segview", "The allocator's state: segments and blocks");
    svState = { s: s, idx: idx, sec: sec, kp: null };
    html("p", "note", "Each segment a bar, in address order, per stream and pool; each live block at its address in its " +
      "category's colour, its rounding (where the block's size is known) in pale red, the rest free. Click the chart for " +
      "another moment; click a block for its frames." + (sv.replay ? "" : " The snapshot's segment entries do not replay " +
      "from its segments at the end (an expandable segment mapped in parts): only the end is shown."), sec);
    var bar = html("div", "svbar", null, sec);
    function go(label, kp, what) {
      var b = html("button", "svat", label, bar);
      b.type = "button";
      b.setAttribute("data-at", what);
      b.addEventListener("click", function () { segviewAt(kp, what); });
    }
    var d = decode(s);
    go("the peak", s.pk[peakIndex(d, s)], "peak");
    sv.oom_k.slice(0, 20).forEach(function (kp, j) { go("OOM " + (j + 1), kp, "oom-" + j); });
    go("the end", sv.end_k, "end");
    svState.head = html("h4", null, null, sec);
    svState.figs = html("div", null, null, sec);
    svState.groups = html("div", "svgroups", null, sec);
    svState.pick = html("div", "svpick", null, sec);
    svState.list = html("div", null, null, sec);
    segviewAt(s.pk[peakIndex(d, s)], "peak");
  }
  /* The state after event position kp, what: "peak", "end", "oom-J" or "t" (a click). */
  function segviewAt(kp, what) {
    var v = svState;
    if (!v || !v.s.segview) return;
    var s = v.s, sv = s.segview;
    v.sec.setAttribute("data-kp", kp);
    v.sec.setAttribute("data-at", what);
    v.sec.querySelectorAll("button.svat").forEach(function (b) { b.classList.toggle("on", b.getAttribute("data-at") === what); });
    if (!s.cols) {
      v.head.textContent = "Reading every allocation of this series\u2026";
      v.sec.setAttribute("data-state", "loading");
      allOf(s, v.idx).then(function (c) {
        if (svState !== v) return;
        if (c) segviewAt(kp, what);
        else v.head.textContent = "This browser cannot read the page's allocations (DecompressionStream), so the " +
          "allocator's state is not drawn.";
      });
      return;
    }
    var t0 = performance.now();
    var st = replayAt(s, kp);
    v.st = st;
    v.figs.textContent = v.groups.textContent = v.pick.textContent = v.list.textContent = "";
    var d = decode(s), at = what === "end" ? "the end" : what === "peak" ? "the peak" : /^oom-/.test(what) ?
      "OOM " + (+what.slice(4) + 1) + " (+" + fmtMs(s.ooms[+what.slice(4)][0]) + " ms)" : null;
    var i = pointOfKp(s, kp);
    v.head.textContent = "At " + (at || "+" + fmtMs(d.t[i]) + " ms") + (at && what !== "end" && !/^oom/.test(what) ?
      " (+" + fmtMs(d.t[i]) + " ms)" : "") + ": " + st.segs.length + " segments, " + fmtBytes(st.reserved) + " reserved, " +
      fmtBytes(st.allocated) + " allocated in " + st.nblocks + (st.nblocks === 1 ? " block" : " blocks");
    if (!sv.replay && kp !== sv.end_k) {
      v.sec.setAttribute("data-state", "no-replay");
      html("p", "note", "Not replayable: the snapshot's segment entries do not agree with its segments at the end (an " +
        "expandable segment mapped in parts). Only the end is shown.", v.figs);
      return;
    }
    var tb = html("tbody", null, null, html("table", "figs", null, v.figs));
    [["segments", st.segs.length, "segments"], ["reserved_bytes", st.reserved, "reserved by the segments"],
      ["requested_bytes", st.allocated, "allocated (requested by the live blocks)"], ["blocks", st.nblocks, "live blocks"],
      ["internal_free_bytes", st.internal, "internal free (memory_viz stats: the live blocks' rounding" +
        (st.unsized ? st.unsized === st.nblocks ? ": no live block's size is known then" : ", of the " +
        (st.nblocks - st.unsized) + (st.nblocks - st.unsized === 1 ? " block whose size is" : " blocks whose size is") +
        " known" : "") + ")"],
      ["external_free_bytes", st.external, "external free (memory_viz stats: the rest of the segments)"]
    ].forEach(function (r) {
      var tr = html("tr", null, null, tb), e;
      html("th", null, r[2], tr);
      e = html("span", "v", /bytes$/.test(r[0]) ? fmtBytes(r[1]) : String(r[1]), html("td", "num", null, tr));
      e.setAttribute("data-view", r[0]);
      e.setAttribute("data-v", r[1]);
      if (/bytes$/.test(r[0])) e.title = r[1] + " bytes";
    });
    if (st.unsized) html("p", "note", st.unsized + " live block" + (st.unsized === 1 ? " was" : "s were") + " freed before " +
      "the end: the entries record only what a block asked for, so " + (st.unsized === 1 ? "its" : "their") +
      " rounding is unknown and counts as external free (memory_viz draws such blocks the same way).", v.figs);
    if (st.outside) html("p", "note", st.outside + " live blocks lie in no segment present then (not drawn).", v.figs);
    drawGroups(v, st);
    blockList(v, st);
    v.sec.setAttribute("data-state", "shown");
    v.sec.setAttribute("data-ms", (performance.now() - t0).toFixed(1));
  }
  /* The point of the chart whose state is kp (the last at or before it). */
  function pointOfKp(s, kp) {
    var lo = 0, hi = s.pk.length - 1;
    while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (s.pk[mid] <= kp) lo = mid; else hi = mid - 1; }
    return lo;
  }
  /* The segments present after event position kp (in address order) and the live blocks
   * in each, with the figures. */
  function replayAt(s, kp) {
    var c = s.cols, sv = s.segview, segs = [], blocks = [], j;
    for (j = 0; j < sv.a.length; j++)
      if (sv.b[j] <= kp && (sv.d[j] < 0 || kp < sv.d[j])) segs.push({ i: j, addr: sv.a[j], size: sv.z[j], blocks: [],
        req: 0, round: 0 });
    for (j = 0; j < c.n; j++) if (c.from[j] <= kp && kp < c.to[j]) blocks.push(j);
    blocks.sort(function (x, y) { return c.addr[x] - c.addr[y] || x - y; });
    var st = { segs: segs, reserved: 0, allocated: 0, internal: 0, unsized: 0, nblocks: blocks.length, outside: 0 };
    var g = 0;
    blocks.forEach(function (b) {
      var a = c.addr[b];
      st.allocated += c.bytes[b];
      while (g < segs.length && segs[g].addr + segs[g].size <= a) g++;
      var sg = g < segs.length && segs[g].addr <= a ? segs[g] : null;
      if (c.blk[b] >= 0) st.internal += c.blk[b] - c.bytes[b];
      else st.unsized++;
      if (!sg) { st.outside++; return; }
      sg.blocks.push(b);
      sg.req += c.bytes[b];
      if (c.blk[b] >= 0) sg.round += c.blk[b] - c.bytes[b];
    });
    segs.forEach(function (sg) { st.reserved += sg.size; });
    st.external = st.reserved - st.allocated - st.internal;
    return st;
  }
  /* One canvas per stream and pool: its segments flow in address order, each as wide as its
   * size (at least 3 px) on one scale, chosen so that the largest fits a line and the group
   * takes at most SV_ROWS lines. */
  function drawGroups(v, st) {
    var s = v.s, c = s.cols, sv = s.segview, groups = {}, order = [], sums = {};
    /* PyTorch's pool (0, 0) is the caching allocator's own; any other is private: a CUDA
     * graph's or a MemPool's. A segment given back says no pool. */
    st.segs.forEach(function (sg) {
      var pl = sv.pl[sg.i], key = "stream " + (sv.st[sg.i] == null ? "?" : sv.st[sg.i]) + (pl == null ? ", pool unknown" :
        pl === "0,0" ? ", the default pool" : ", private pool (" + pl + "): a CUDA graph's or a MemPool's");
      if (!groups[key]) { groups[key] = []; order.push(key); sums[key] = 0; }
      groups[key].push(sg);
      sums[key] += sg.size;
    });
    order.sort(function (a, b) { return sums[b] - sums[a]; }); /* the most reserved first */
    svLegend(v, st);
    /* the width from the window's (the body is at most 1400 px): the section's own would make
     * the browser lay out the whole page before the view is drawn */
    var W = Math.max(Math.min(Math.min(window.innerWidth, 1400) - 80, 1200), 300), dpr = window.devicePixelRatio || 1;
    order.forEach(function (key) {
      var list = groups[key], total = 0, max = 0;
      list.forEach(function (sg) { total += sg.size; max = Math.max(max, sg.size); });
      var gsec = html("div", "svgroup", null, v.groups);
      html("h4", null, key + ": " + list.length + " segment" + (list.length === 1 ? "" : "s") + ", " + fmtBytes(total), gsec);
      /* thousands of small segments: 1 px each at least and no gap, so the lines stay few */
      var many = list.length * 5 > W * SV_ROWS * 4, minw = many ? 1 : 3, gap = many ? 0 : 2;
      var scale = Math.min(W / max, Math.max(W * SV_ROWS - (minw + gap) * list.length, W) / total), x = 0, row = 0;
      list.forEach(function (sg) {
        var w = Math.max(sg.size * scale, minw);
        if (x > 0 && x + w > W) { x = 0; row++; }
        sg.x = x, sg.w = w, sg.row = row;
        x += w + gap;
      });
      var cv = html("canvas", null, null, gsec), H = (row + 1) * SV_ROW;
      cv.width = Math.round(W * dpr);
      cv.height = Math.round(H * dpr);
      cv.style.width = W + "px";
      cv.style.height = H + "px";
      var g = cv.getContext("2d");
      g.scale(dpr, dpr);
      list.forEach(function (sg) {
        var y = sg.row * SV_ROW, k = sg.w / sg.size;
        g.fillStyle = "#f2f2f2";
        g.fillRect(sg.x, y, sg.w, SV_BAR);
        sg.blocks.forEach(function (b) {
          var bx = sg.x + (c.addr[b] - sg.addr) * k, cat = data.categories[c.cat[b]], bw = c.bytes[b] * k;
          g.fillStyle = cat ? cat.color : "#888";
          g.fillRect(bx, y, Math.max(bw, 0.5), SV_BAR);
          if (c.blk[b] > c.bytes[b]) {
            g.fillStyle = "#f2a6a6";
            g.fillRect(bx + bw, y, (c.blk[b] - c.bytes[b]) * k, SV_BAR);
          }
          /* where a block starts, a white hairline: neighbours of one category stay two */
          if (bw >= 4) { g.fillStyle = "#fff"; g.fillRect(bx, y, 1, SV_BAR); }
        });
        g.strokeStyle = "#777";
        g.lineWidth = 1;
        g.strokeRect(sg.x + 0.5, y + 0.5, Math.max(sg.w - 1, 1), SV_BAR - 1);
      });
      function hit(ev) {
        var r = cv.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top, rw = Math.floor(py / SV_ROW);
        for (var q = 0; q < list.length; q++) {
          var sg = list[q];
          if (sg.row !== rw || px < sg.x - 1 || px > sg.x + sg.w + 1) continue;
          var k = sg.w / sg.size, a = sg.addr + (px - sg.x) / k, tol = 2 / k, best = -1;
          sg.blocks.forEach(function (b) {
            var end = c.addr[b] + Math.max(c.bytes[b], c.blk[b]);
            if (c.addr[b] - tol <= a && a < end + tol) best = b;
          });
          return { sg: sg, b: best };
        }
        return null;
      }
      cv.addEventListener("mousemove", function (ev) {
        var h = hit(ev);
        cv.title = !h ? "" : h.b >= 0 ? "block 0x" + c.addr[h.b].toString(16) + ": " + fmtBytes(c.bytes[h.b]) + ", " +
          (data.categories[c.cat[h.b]] || { name: "-" }).name + ", " + (data.whos[c.who[h.b]] || "-") + " (click: its frames)"
          : segText(sv, h.sg);
      });
      cv.addEventListener("click", function (ev) {
        var h = hit(ev);
        if (h) showPick(v, h.sg, h.b);
      });
    });
  }
  /* The colours of the view: each category with a live block then (and its bytes), the
   * rounding, the free space. */
  function svLegend(v, st) {
    var c = v.s.cols, by = {}, ul = html("ul", "svlegend", null, v.groups);
    st.segs.forEach(function (sg) { sg.blocks.forEach(function (b) { by[c.cat[b]] = (by[c.cat[b]] || 0) + c.bytes[b]; }); });
    Object.keys(by).sort(function (a, b) { return by[b] - by[a]; }).forEach(function (k) {
      var cat = data.categories[k] || { name: "-", color: "#888" }, li = html("li", null, null, ul);
      swatchOf({ cat: +k, color: cat.color }, li);
      li.appendChild(document.createTextNode(cat.name + " " + fmtBytes(by[k])));
    });
    var r = html("li", null, null, ul);
    html("span", "sw", null, r).style.background = "#f2a6a6";
    r.appendChild(document.createTextNode("rounding (internal free) " + fmtBytes(st.internal)));
    var f = html("li", null, null, ul);
    html("span", "sw", null, f).style.background = "#f2f2f2";
    f.appendChild(document.createTextNode("free (external) " + fmtBytes(st.external)));
  }
  function segText(sv, sg) {
    return "segment 0x" + sg.addr.toString(16) + ": " + fmtBytes(sg.size) + ", " + fmtBytes(sg.req) + " allocated in " +
      sg.blocks.length + (sg.blocks.length === 1 ? " block, " : " blocks, ") + fmtBytes(sg.size - sg.req - sg.round) + " free; made " +
      (sv.bt[sg.i] == null ? "before recording" : "at +" + fmtMs(sv.bt[sg.i]) + " ms") + ", " +
      (sv.dt[sg.i] == null ? "live at the end" : "given back at +" + fmtMs(sv.dt[sg.i]) + " ms") +
      (sv.m[sg.i] ? " (segment_map: part of an expandable segment)" : "");
  }
  /* What a click on the view hit: the segment, and the block with its frames. */
  function showPick(v, sg, b) {
    var s = v.s, c = s.cols;
    v.pick.textContent = "";
    html("p", null, segText(s.segview, sg), v.pick);
    if (b < 0) return;
    var cat = data.categories[c.cat[b]] || { name: "-", color: "#fff" }, p = html("p", "svblock", null, v.pick);
    swatchOf({ cat: c.cat[b], color: cat.color }, p);
    p.appendChild(document.createTextNode("block 0x" + c.addr[b].toString(16) + ": " + fmtBytes(c.bytes[b]) + " asked for" +
      (c.blk[b] >= 0 ? ", a block of " + fmtBytes(c.blk[b]) : "") + ", " + cat.name + ", allocated " +
      (c.at[b] < 0 ? "before the trace" : "at +" + fmtMs(c.at[b]) + " ms") + ", " + (c.at[b] >= 0 && c.ft[b] >= 0 ?
      "freed " + fmtMs(c.ft[b] - c.at[b]) + " ms later" : lifeText(c, b)) + "; by " +
      (data.whos[c.who[b]] || "-")));
    p.setAttribute("data-row", b);
    html("pre", null, stackText(s, c, b), v.pick);
  }
  /* The live blocks as a list, in address order, the first SV_LIST (the rest on demand),
   * laid out when unfolded; and every segment of the moment as a row with its figures. */
  function blockList(v, st) {
    var s = v.s, c = s.cols, sv = s.segview;
    var det = html("details", "svsegs", null, v.list);
    html("summary", null, st.segs.length + " segments, in address order", det);
    var tb = html("tbody", null, null, html("table", "segs", null, det)), hr = html("tr", null, null, tb);
    ["address", "size", "blocks", "allocated", "rounding", "free", "stream", "pool", "made", "given back"].forEach(function (h, k) {
      html("th", k && k < 6 ? "num" : null, h, hr);
    });
    /* laid out when unfolded: a snapshot may hold a hundred thousand small segments */
    det.addEventListener("toggle", function () { if (det.open && !tb.querySelector("tr.svseg")) st.segs.forEach(segRow); });
    function segRow(sg) {
      var tr = html("tr", "svseg", null, tb);
      [["addr", sg.addr], ["size", sg.size], ["blocks", sg.blocks.length], ["requested", sg.req], ["rounding", sg.round],
        ["free", sg.size - sg.req - sg.round]].forEach(function (f, k) {
        tr.setAttribute("data-" + f[0], f[1]);
        html("td", "num", k === 0 ? "0x" + f[1].toString(16) : k === 2 ? String(f[1]) : fmtBytes(f[1]), tr);
      });
      html("td", null, sv.st[sg.i] == null ? "-" : String(sv.st[sg.i]), tr);
      html("td", null, sv.pl[sg.i] == null ? "-" : "(" + sv.pl[sg.i] + ")", tr);
      html("td", null, sv.bt[sg.i] == null ? "before recording" : "+" + fmtMs(sv.bt[sg.i]) + " ms", tr);
      html("td", null, sv.dt[sg.i] == null ? "live at the end" : "+" + fmtMs(sv.dt[sg.i]) + " ms", tr);
    }
    var bd = html("details", "svblocks", null, v.list), all = [];
    html("summary", null, st.nblocks - st.outside + " live blocks, in address order", bd);
    st.segs.forEach(function (sg) { for (var q = 0; q < sg.blocks.length; q++) all.push(sg.blocks[q]); });
    var shown = 0, bt = null, more = null;
    function fill() {
      if (!bt) {
        bt = html("tbody", null, null, html("table", "live", null, bd));
        var h = html("tr", null, null, bt);
        ["address", "bytes", "block", "category", "allocated at", "who"].forEach(function (x) { html("th", null, x, h); });
        more = html("button", "more", null, bd);
        more.type = "button";
        more.addEventListener("click", fill);
      }
      var upto = Math.min(all.length, shown + SV_LIST);
      for (; shown < upto; shown++) {
        var b = all[shown], tr = html("tr", "svb", null, bt), cat = data.categories[c.cat[b]] || { name: "-", color: "#fff" };
        tr.setAttribute("data-row", b);
        tr.setAttribute("data-bytes", c.bytes[b]);
        tr.setAttribute("data-t", c.at[b]);
        html("td", "num", "0x" + c.addr[b].toString(16), tr);
        html("td", "num", fmtBytes(c.bytes[b]), tr);
        html("td", "num", c.blk[b] >= 0 ? fmtBytes(c.blk[b]) : "-", tr);
        var ct = html("td", null, null, tr);
        swatchOf({ cat: c.cat[b], color: cat.color }, ct);
        ct.appendChild(document.createTextNode(cat.name));
        html("td", "num", c.at[b] < 0 ? "before the trace" : "+" + fmtMs(c.at[b]) + " ms", tr);
        html("td", "who", data.whos[c.who[b]] || "-", tr);
      }
      more.hidden = shown >= all.length;
      more.textContent = "show " + Math.min(SV_LIST, all.length - shown) + " more of " + (all.length - shown);
    }
    bd.addEventListener("toggle", function () { if (bd.open && !bt) fill(); });
  }

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
      nameOf(s, html("div", "label", null, b));
      html("div", "peakv", "peak " + fmtBytes(s.peak) + " at +" + fmtMs(s.peak_t) + " ms", b);
      var sv = el("svg", { role: "img", "aria-label": s.label }, b);
      draw(sv, s, { width: 340, height: 150, small: true, extent: shared ? ext : null,
        baseline: document.getElementById("baseline").checked });
      b.addEventListener("click", open(i));
    });
    if (!small.length) return;
    var p = html("p", "trivial", small.length + " series with a peak under 1 MiB, not drawn: ", box);
    small.forEach(function (i, j) {
      var s = data.series[i], b = html("button", "link", shortLabel(s) + " (" + fmtBytes(s.peak) + ")", p);
      b.title = s.label;
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
    findingsEl.hidden = v !== "single" || !findingsEl.firstChild;
    document.getElementById("shared-label").hidden = v !== "multiples";
    document.getElementById("view").textContent = v === "single" ? "Compare all series" : "One series";
    update();
  }

  function select(i) {
    state.series = i;
    liveBox.hidden = true;
    state.clicked = null;
    state.domain = opening(data.series[i]);
    state.opening = !!state.domain;
    findings(data.series[i]);
    /* Inflate the shown series' allocations while the reader looks, so a click answers at
     * once; the body's data-allocations says when they are read (ready, or none). */
    document.body.setAttribute("data-allocations", "loading");
    setTimeout(function () {
      allOf(data.series[i], i).then(function (c) {
        if (state.series === i) document.body.setAttribute("data-allocations", c ? "ready" : "none");
      });
    }, 0);
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
    var o = html("option", null, shortLabel(s), sel);
    o.title = s.label;
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
  /* The tables' series (all series, a cross-rank row's "max at") open that series' chart. */
  document.querySelectorAll("[data-series].open").forEach(function (e) {
    e.addEventListener("click", function () {
      select(+e.getAttribute("data-series"));
      if (state.view !== "single") setView("single"); else update();
      chartEl.scrollIntoView({ block: "nearest" });
    });
  });
  /* Open on the series with the largest peak: usually the GPU that ran out. */
  var first = 0;
  data.series.forEach(function (s, i) { if (s.peak > data.series[first].peak) first = i; });
  select(first);
  render();
})();
