/* Drives an hmem --html report inside headless Chromium (tests/browser.lua appends it to a
 * copy of the report, with window.HMEM_TEST = {series, t_ns, cat_names}). Every action
 * goes to the element a real pointer would hit there (elementFromPoint). The results go,
 * as JSON, into <pre id=hmem-test>, which --dump-dom prints. */
(function () {
  "use strict";
  var cfg = window.HMEM_TEST, out = { errors: window.HMEM_ERRORS || [] };
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
    /* Client coordinates of time t (ns) in the unzoomed chart of series s. */
    function clientAt(s, t) {
      var o = overlay(), r = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
      var end = axisEnd(s);
      var x = +o.getAttribute("x") + t / end * +o.getAttribute("width");
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
})();
