/* Drives an hmem --html report inside headless Chromium (tests/browser.lua appends it to a
 * copy of the report, with window.HMEM_TEST = {series, t_ns, cat_names}). Every action
 * goes to the element a real pointer would hit there (elementFromPoint). The results go,
 * as JSON, into <pre id=hmem-test>, which --dump-dom prints. */
(function () {
  "use strict";
  var cfg = window.HMEM_TEST, out = { errors: window.HMEM_ERRORS || [] };
  /* The test's series first, then wait until the page has read its every-allocation columns
   * (the body's data-allocations: ready, or none for a series without them). */
  var sel0 = document.getElementById("series");
  if (sel0 && cfg.mode !== "findings") {
    sel0.value = String(cfg.series);
    sel0.dispatchEvent(new Event("change"));
  }
  var waited = 0;
  (function wait() {
    if (sel0 && cfg.mode !== "findings" && document.body.getAttribute("data-allocations") === "loading" && waited++ < 500) {
      setTimeout(wait, 10);
      return;
    }
    main();
  })();
  function main() {
  function finish() {
    var pre = document.createElement("pre");
    pre.id = "hmem-test";
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
  try {
    var data = JSON.parse(document.getElementById("hmem-data").textContent);
    var sel = document.getElementById("series");
    var svg = document.querySelector("#chart svg");
    function areas() { return document.querySelectorAll("#chart path.area").length; }
    function overlay() { return document.querySelector("#chart rect.overlay"); }
    /* Client coordinates of time t (ns) in the chart as it shows now (its visible range is
     * the svg's data-x0 to data-x1). */
    function clientAt(s, t) {
      var o = overlay(), r = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
      var x0 = +svg.getAttribute("data-x0"), x1 = +svg.getAttribute("data-x1");
      if (!svg.hasAttribute("data-x1")) x0 = 0, x1 = axisEnd(s); /* a page from before issue 27 */
      var x = +o.getAttribute("x") + (t - x0) / (x1 - x0) * +o.getAttribute("width");
      var y = +o.getAttribute("y") + +o.getAttribute("height") / 2;
      return { x: r.left + x * r.width / vb.width, y: r.top + y * r.height / vb.height };
    }
    /* The time axis ends at the last point, step end or OOM, whichever is last. */
    function axisEnd(s) {
      var e = Math.max(s.t[s.t.length - 1], 1);
      (s.steps || []).forEach(function (st) { e = Math.max(e, st[1]); });
      (s.ooms || []).forEach(function (o) { e = Math.max(e, o[0]); });
      return e;
    }
    function mouse(type, p, target) {
      var t = target || document.elementFromPoint(p.x, p.y);
      t.dispatchEvent(new MouseEvent(type, { clientX: p.x, clientY: p.y, bubbles: true, cancelable: true, button: 0,
        view: window }));
      return t;
    }
    function ticks() {
      return Array.prototype.map.call(document.querySelectorAll("#chart .axis text[text-anchor=middle]"),
        function (e) { return e.textContent; });
    }

    /* A snapshot's allocator view (issue 27), for series cfg.series: at each of its moments
     * (the peak, each OOM, the end: its buttons) and at time cfg.click_ns clicked on the chart,
     * the figures (data-view), each segment's row and every live block listed (bytes, time
     * allocated); then a click on the first block drawn and what it shows. Waits for the page
     * to read its allocations (the section's data-state). */
    function segviewProbe(done) {
      var data = JSON.parse(document.getElementById("hmem-data").textContent), s = data.series[cfg.series];
      var r = out.segview = { moments: [] }, tries = 0;
      function sec() { return document.getElementById("f-segview"); }
      function read(what) {
        var m = { at: what, kp: +sec().getAttribute("data-kp"), state: sec().getAttribute("data-state"), figs: {}, segs: [],
          blocks: [], head: sec().querySelector("h4").textContent };
        sec().querySelectorAll("[data-view]").forEach(function (e) { m.figs[e.getAttribute("data-view")] = +e.getAttribute("data-v"); });
        var sd = sec().querySelector("details.svsegs");
        if (sd) { sd.open = true; sd.dispatchEvent(new Event("toggle")); }
        sec().querySelectorAll("tr.svseg").forEach(function (tr) {
          var g = {};
          ["addr", "size", "blocks", "requested", "rounding", "free"].forEach(function (k) { g[k] = +tr.getAttribute("data-" + k); });
          m.segs.push(g);
        });
        var bd = sec().querySelector("details.svblocks");
        if (bd) {
          bd.open = true;
          bd.dispatchEvent(new Event("toggle"));
          for (var more = bd.querySelector("button.more"); more && !more.hidden; more = bd.querySelector("button.more")) more.click();
          bd.querySelectorAll("tr.svb").forEach(function (tr) { m.blocks.push([+tr.getAttribute("data-t"), +tr.getAttribute("data-bytes")]); });
        }
        return m;
      }
      (function wait() {
        var e = sec();
        if ((!e || e.getAttribute("data-state") !== "shown") && tries++ < 1000) return setTimeout(wait, 10);
        if (!e) { r.missing = true; return done(); }
        r.buttons = [];
        e.querySelectorAll("button.svat").forEach(function (b) {
          r.buttons.push(b.getAttribute("data-at"));
          b.click();
          r.moments.push(read(b.getAttribute("data-at")));
        });
        if (cfg.click_ns != null) {
          var p = clientAt(s, cfg.click_ns), o = overlay();
          mouse("mousedown", p, o);
          mouse("mouseup", p, o);
          var m = read("t");
          m.point_t = s.t[pointOf(s, m.kp)];
          r.moments.push(m);
        }
        /* at the peak, the first block drawn: the first canvas's bars, pixel by pixel */
        e.querySelector("button.svat[data-at=peak]").click();
        if (e.getAttribute("data-state") === "no-replay") e.querySelector("button.svat[data-at=end]").click();
        var cv = e.querySelector(".svgroup canvas");
        if (cv) {
          var b = cv.getBoundingClientRect();
          for (var y = 5; y < b.height && !e.querySelector(".svpick pre"); y += 18)
            for (var x = 1; x < b.width && !e.querySelector(".svpick pre"); x += 2)
              cv.dispatchEvent(new MouseEvent("click", { clientX: b.left + x, clientY: b.top + y, bubbles: true }));
          var pre = e.querySelector(".svpick pre"), pb = e.querySelector(".svpick p.svblock");
          r.pick = pre ? { text: pre.textContent, row: pb && +pb.getAttribute("data-row"), p: pb && pb.textContent } : null;
        }
        done();
      })();
    }
    /* The chart point whose state is event position kp. */
    function pointOf(s, kp) {
      var i = 0;
      while (i + 1 < s.pk.length && s.pk[i + 1] <= kp) i++;
      return i;
    }

    if (cfg.mode === "findings") {
      findingsProbe();
      finish();
      return;
    }
    if (cfg.mode === "segview") {
      segviewProbe(finish);
      return;
    }
    out.nseries = data.series.length;
    out.default_series = +sel.value;
    sel.value = String(cfg.series);
    sel.dispatchEvent(new Event("change"));
    var s = data.series[cfg.series];
    out.areas = areas();
    out.area_cats = Array.prototype.map.call(document.querySelectorAll("#chart path.area"), function (a) {
      var c = a.getAttribute("data-cat");
      return c === "other" ? "other" : data.categories[+c].name;
    });
    out.area_fills = Array.prototype.map.call(document.querySelectorAll("#chart path.area"), function (a) {
      return a.getAttribute("fill");
    });
    out.peak_label = (document.querySelector("#chart .peak text") || {}).textContent || null;
    out.tables_shown = Array.prototype.filter.call(document.querySelectorAll(".series-tables"),
      function (t) { return !t.hidden; }).map(function (t) { return +t.getAttribute("data-series"); });

    /* Hover at the known time. */
    var p = clientAt(s, cfg.t_ns);
    var hit = mouse("mousemove", p);
    out.hover_target = hit.getAttribute("class");
    var ro = document.getElementById("readout");
    out.readout_visible = !ro.hidden;
    out.readout_time = (ro.querySelector(".time") || {}).textContent;
    out.readout_ts = (ro.querySelector(".ts") || {}).textContent;
    out.readout = {};
    out.readout_order = [];
    var rr = ro.getBoundingClientRect(), pr = overlay().getBoundingClientRect();
    out.readout_overlaps_plot = !(rr.right <= pr.left || rr.left >= pr.right || rr.bottom <= pr.top || rr.top >= pr.bottom);
    out.readout_rows = ro.querySelectorAll("tr.cat").length;
    ro.querySelectorAll("tr.cat td.num").forEach(function (v) { out.readout_order.push(+v.getAttribute("data-bytes")); });
    ro.querySelectorAll("tr:not(.zeros)").forEach(function (tr) {
      var v = tr.querySelector("td.num");
      var c = tr.getAttribute("data-cat");
      var key = !tr.classList.contains("cat") ? tr.className : c === "other" ? "other" : data.categories[+c].name;
      out.readout[key] = { bytes: v.getAttribute("data-bytes"), text: v.textContent };
    });
    mouse("mouseleave", p, overlay());

    /* A click at the same time lists what is live there (issue 14). */
    function liveOut() {
      var box = document.getElementById("live-at"), note = box.querySelector(".note");
      return { shown: !box.hidden, heading: (box.querySelector("h3") || {}).textContent,
        unlisted: note && note.getAttribute("data-unlisted"), note: note && note.textContent,
        rows: Array.prototype.map.call(box.querySelectorAll("tr.alloc"), function (tr) {
          return { bytes: +tr.getAttribute("data-bytes"), t: +tr.getAttribute("data-t"),
            marked: tr.classList.contains("marked"), inner: (tr.querySelector("td.where b") || {}).textContent || null };
        }) };
    }
    mouse("mousedown", p);
    mouse("mouseup", p);
    out.live_click = liveOut();
    /* Every allocation live there (issue 27): all the rows (shown 100 at a time), then sorted
     * by lifetime, then those a search finds. */
    function expandAll() {
      var b;
      for (var n = 0; n < 500 && (b = document.querySelector("#live-at button.more")) && !b.hidden; n++) b.click();
    }
    function liveRows() {
      return Array.prototype.map.call(document.querySelectorAll("#live-at tr.alloc"), function (tr) {
        return [+tr.getAttribute("data-t"), +tr.getAttribute("data-bytes")];
      });
    }
    if (cfg.click_ns != null) {
      var cp = clientAt(s, cfg.click_ns), tc = performance.now();
      mouse("mousedown", cp);
      mouse("mouseup", cp);
      out.click_ms = performance.now() - tc;
    }
    var lnote = document.querySelector("#live-at .note");
    if (cfg.click_ns != null && lnote && lnote.hasAttribute("data-count")) {
      expandAll();
      out.all_click = { count: +lnote.getAttribute("data-count"), total: +lnote.getAttribute("data-total"),
        unlisted: +lnote.getAttribute("data-unlisted"), pk: +lnote.getAttribute("data-pk"), rows: liveRows() };
      var t0c = performance.now();
      document.querySelector('#live-at button.sort[data-sort="lifetime"]').click();
      out.all_click.sort_ms = performance.now() - t0c;
      expandAll();
      out.all_click.by_lifetime = liveRows();
      if (cfg.search) {
        var sbox = document.getElementById("live-search");
        sbox.value = cfg.search;
        sbox.dispatchEvent(new Event("input"));
        expandAll();
        out.all_click.search = { count: +document.querySelector("#live-at .found").getAttribute("data-count"), rows: liveRows() };
        sbox.value = "";
        sbox.dispatchEvent(new Event("input"));
      }
      document.querySelector('#live-at button.sort[data-sort="bytes"]').click();
    }
    var lrow = document.querySelector('.series-tables:not([hidden]) table.live tbody tr[data-bytes]');
    if (lrow) {
      lrow.click();
      out.live_row = liveOut();
      out.live_row.clicked = { bytes: +lrow.getAttribute("data-bytes"), t: +lrow.getAttribute("data-t") };
    }

    /* Legend: hiding a category removes its area; showing it again brings it back. */
    var btn = document.querySelector("#legend button");
    var hidden_name = btn.textContent;
    btn.scrollIntoView();
    var bp = btn.getBoundingClientRect();
    document.elementFromPoint(bp.left + bp.width / 2, bp.top + bp.height / 2).closest("button").click();
    out.legend_hidden = { name: hidden_name, areas: areas(),
      off: document.querySelector("#legend button").classList.contains("off") };
    document.querySelector("#legend button").click();
    out.legend_shown = { areas: areas() };
    window.scrollTo(0, 0);

    /* Hiding a category rescales the memory axis to what stays (issue 17): the driver hides
     * "(before trace)" when the series has it (else the first entry) and reads the scale. */
    function yscale() {
      var c = document.querySelector("#chart .peak circle");
      return { ymin: +svg.getAttribute("data-ymin"), ymax: +svg.getAttribute("data-ymax"),
        dot: c ? +c.getAttribute("data-bytes") : null, reserved: !!document.querySelector("#chart path.reserved"),
        cached: !!document.querySelector("#chart path.cached"),
        label: (document.querySelector("#chart .peak text") || {}).textContent || null };
    }
    out.scale_all = yscale();
    var hb = document.querySelector('#legend button[data-cat="0"]') || document.querySelector("#legend button");
    out.scale_hidden_cat = +hb.getAttribute("data-cat");
    hb.click();
    out.scale_hidden = yscale();
    document.querySelector('#legend button[data-cat="' + out.scale_hidden_cat + '"]').click();
    document.getElementById("baseline").click();
    out.scale_baseline = yscale();
    document.getElementById("baseline").click();
    out.scale_back = yscale();

    /* Drag to zoom from 25% to 50% of the time axis, then double-click to reset. */
    if (!document.getElementById("reset").hidden) document.getElementById("reset").click();
    var end = axisEnd(s), before = ticks();
    var a = clientAt(s, end * 0.25), b = clientAt(s, end * 0.5);
    mouse("mousedown", a);
    mouse("mousemove", b);
    mouse("mouseup", b);
    out.zoom = { before: before, after: ticks(), reset_visible: !document.getElementById("reset").hidden,
      areas: areas() };
    var c = clientAt(s, end * 0.3);
    mouse("dblclick", c);
    out.zoom.reset = ticks();
    out.zoom.reset_hidden = document.getElementById("reset").hidden;

    /* Small multiples: one chart per series; clicking one opens it. */
    var view = document.getElementById("view");
    if (!view.hidden) {
      view.click();
      var cells = document.querySelectorAll("#multiples .multiple");
      out.multiples = { cells: cells.length, single_hidden: document.getElementById("single").hidden,
        shared: document.getElementById("shared").checked,
        series: Array.prototype.map.call(cells, function (m) { return +m.getAttribute("data-series"); }),
        ymax: Array.prototype.map.call(cells, function (m) { return +m.querySelector("svg").getAttribute("data-ymax"); }),
        trivial: Array.prototype.map.call(document.querySelectorAll("#multiples .trivial button"), function (b) {
          return +b.getAttribute("data-series"); }),
        areas: Array.prototype.map.call(cells, function (m) { return m.querySelectorAll("path.area").length; }) };
      document.getElementById("shared").click();
      out.multiples.ymax_shared = Array.prototype.map.call(document.querySelectorAll("#multiples .multiple svg"),
        function (v) { return +v.getAttribute("data-ymax"); });
      document.getElementById("shared").click();
      cells = document.querySelectorAll("#multiples .multiple");
      var last = cells[cells.length - 1], lr = last.getBoundingClientRect();
      last.scrollIntoView();
      lr = last.getBoundingClientRect();
      document.elementFromPoint(lr.left + 10, lr.top + 10).closest("button").click();
      out.multiples.opened = +sel.value;
      out.multiples.single_back = !document.getElementById("single").hidden;
      window.scrollTo(0, 0);
    }
    /* Leave the chart of the test's series, hovered at its peak, for the screenshot. */
    sel.value = String(cfg.series);
    sel.dispatchEvent(new Event("change"));
    if (cfg.hover_peak) mouse("mousemove", clientAt(s, s.peak_t));
    if (cfg.hover) mouse("mousemove", clientAt(s, cfg.t_ns));
  } catch (e) {
    out.errors.push("driver: " + e + " " + (e.stack || ""));
  }
  if (!cfg.screenshot) finish();
  }

  /* Words the page breaks across lines (issue 27): every word of visible text (a word ends
   * at a space, or just after a '/' or '-', where lines may break), laid out on more than one
   * line. Beside each, whether the text is cut. */
  function brokenWords(root) {
    var bad = [], walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT), range = document.createRange();
    for (var n = walker.nextNode(); n; n = walker.nextNode()) {
      var p = n.parentElement;
      if (!p || p.closest("script, pre, svg, [hidden], select, #hmem-test") || !p.getClientRects().length) continue;
      var re = /[^\s\/\-]+[\/\-]?/g, m;
      while ((m = re.exec(n.data))) {
        range.setStart(n, m.index);
        range.setEnd(n, m.index + m[0].length);
        var rects = range.getClientRects(), tops = {}, lines = 0;
        for (var i = 0; i < rects.length; i++) {
          var t = Math.round(rects[i].top);
          if (rects[i].width > 0 && !tops[t]) { tops[t] = true; lines++; }
        }
        if (lines > 1) bad.push(m[0]);
      }
    }
    return bad;
  }
  /* Where the page shows a shortened path ("…/"): the text, and whether the whole is on hover
   * (the title of the element or of one around it). */
  function shortened() {
    var out = [], walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (var n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.data.indexOf("\u2026/") < 0 || !n.parentElement || n.parentElement.closest("script, #hmem-test")) continue;
      var t = n.parentElement.closest("[title]");
      out.push({ text: t ? t.textContent : n.data, title: t ? t.getAttribute("title") : null });
    }
    document.querySelectorAll("option").forEach(function (o) {
      if (o.textContent.indexOf("\u2026/") >= 0) out.push({ text: o.textContent, title: o.title || null });
    });
    return out;
  }

  /* The findings (issue 27), for every series: each figure of the sections as the page
   * shows it (its data-k path in --json, data-v value and text); a click on each marker
   * (OOMs, step tabs, the diamond) and which section it opened, and whether that is in
   * view; the visible x-range after each "show on the chart" and after a click on each
   * step's row; the readout's step and OOM lines when hovering each OOM and each step's
   * middle; the range the chart opens on. */
  function findingsProbe() {
    var data = JSON.parse(document.getElementById("hmem-data").textContent);
    var sel = document.getElementById("series"), svg = document.querySelector("#chart svg");
    function range() { return [+svg.getAttribute("data-x0"), +svg.getAttribute("data-x1")]; }
    function flashed() {
      var f = document.querySelector("#findings .flash");
      if (!f) return null;
      var r = f.getBoundingClientRect();
      return { id: f.id, in_view: r.bottom > 0 && r.top < window.innerHeight };
    }
    function center(e) {
      var r = e.getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
    }
    function at(p, type) {
      var t = document.elementFromPoint(p.x, p.y);
      if (!t) return null;
      t.dispatchEvent(new MouseEvent(type, { clientX: p.x, clientY: p.y, bubbles: true, cancelable: true, button: 0, view: window }));
      return t;
    }
    function readoutWhere() {
      return Array.prototype.map.call(document.querySelectorAll("#readout .where"), function (w) {
        return { cls: w.className, step: w.getAttribute("data-step"), oom: w.getAttribute("data-oom"), text: w.textContent };
      });
    }
    function whole() { if (!document.getElementById("reset").hidden) document.getElementById("reset").click(); }
    out.series = [];
    out.broken = brokenWords(document.body);
    out.shortened = shortened();
    document.getElementById("view").click();
    out.broken_multiples = brokenWords(document.body);
    document.getElementById("view").click();
    for (var i = 0; i < data.series.length; i++) {
      sel.value = String(i);
      sel.dispatchEvent(new Event("change"));
      var s = data.series[i], r = { opening: range(), reset_shown: !document.getElementById("reset").hidden };
      whole();
      r.whole = range();
      r.sections = Array.prototype.map.call(document.querySelectorAll("#findings section.finding"), function (x) { return x.id; });
      /* Folded parts (a snapshot's segments, a stack) are laid out when unfolded. */
      document.querySelectorAll("#findings details:not([open]) > summary").forEach(function (sm) { sm.click(); });
      r.ooms_listed = (s.explain && s.explain.ooms || []).length;
      r.figures = Array.prototype.map.call(document.querySelectorAll("#findings [data-k], #ranks [data-k]"), function (e) {
        return { k: e.getAttribute("data-k"), v: JSON.parse(e.getAttribute("data-v")), text: e.textContent };
      });
      /* Markers: a click where each is drawn, on whatever the pointer hits there. */
      r.marks = [];
      ["g.oom", "g.steptab", "g.gapmark"].forEach(function (q) {
        document.querySelectorAll("#chart " + q).forEach(function (g, k) {
          window.scrollTo(0, 0);
          var target = (q === "g.oom" && g.querySelector(".hit")) || g, p = center(target);
          var hit = document.elementFromPoint(p.x, p.y);
          var m = { kind: q, index: k, finding: g.getAttribute("data-finding"), hit_is_marker: !!(hit && g.contains(hit)) };
          if (q === "g.oom") {
            at(p, "mousemove");
            m.readout = readoutWhere();
          }
          at(p, "click");
          m.opened = flashed();
          r.marks.push(m);
          whole();
        });
      });
      /* Hover at each step's middle, in the whole view. */
      r.step_hover = (s.steps || []).map(function (st) {
        window.scrollTo(0, 0);
        var o = document.querySelector("#chart rect.overlay"), R = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
        var x0 = +svg.getAttribute("data-x0"), x1 = +svg.getAttribute("data-x1"), t = (st[0] + st[1]) / 2;
        var x = +o.getAttribute("x") + (t - x0) / (x1 - x0) * +o.getAttribute("width");
        var p = { x: R.left + x * R.width / vb.width, y: R.top + (+o.getAttribute("y") + 20) * R.height / vb.height };
        at(p, "mousemove");
        return readoutWhere();
      });
      /* Every "show on the chart", then every step row: the range the chart shows after. */
      r.zooms = Array.prototype.map.call(document.querySelectorAll("#findings button.zoom"), function (b) {
        whole();
        b.click();
        var sec = b.closest("section");
        return { section: sec && sec.id, row: (b.closest("tr") || {}).id || null, t0: +b.getAttribute("data-t0"),
          t1: +b.getAttribute("data-t1"), range: range(), reset_shown: !document.getElementById("reset").hidden };
      });
      r.rows = Array.prototype.map.call(document.querySelectorAll("#findings tr.step"), function (tr) {
        whole();
        tr.querySelector("td").click();
        return { id: tr.id, range: range() };
      });
      whole();
      out.series.push(r);
    }
  }
})();
