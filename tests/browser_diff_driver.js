/* Drives an `hmem diff --html` page inside headless Chromium (tests/browser_diff.lua appends
 * it to a copy of the page). It reads what a reader sees (visible rows, legends, colours,
 * the text of the charts' axes), clicks as a reader would, and writes its findings as JSON
 * into <pre id=hmem-test>, which --dump-dom prints; the runner compares them with --json. */
(function () {
  "use strict";
  var out = { errors: window.HMEM_ERRORS || [] };
  function visible(e) { return e.getClientRects().length > 0; }
  function cells(tr) { return Array.prototype.map.call(tr.cells, function (c) { return c.textContent; }); }
  function rows(sel) { return Array.prototype.slice.call(document.querySelectorAll(sel)); }
  try {
    var pairs = rows("details.pair");
    out.closed_at_start = pairs.filter(function (d) { return !d.open; }).length;
    out.overview = rows("table.overview tr[data-pair]").map(function (tr) {
      return { pair: +tr.getAttribute("data-pair"), cells: cells(tr) };
    });
    /* a click on an overview line's file opens its pair */
    var link = document.querySelector("table.overview tr[data-pair] a");
    link.click();
    var target = document.getElementById(link.getAttribute("href").slice(1));
    out.link_opens = !!(target && target.open);
    /* every pair open: its rows, its legend, the colours its areas are drawn in */
    pairs.forEach(function (d) { d.open = true; });
    out.pairs = pairs.map(function (d) {
      var svg = d.querySelector("svg.chart"), vb = svg.viewBox.baseVal, clipped = [];
      Array.prototype.forEach.call(svg.querySelectorAll("text"), function (t) {
        var b = t.getBBox();
        if (b.x < 0 || b.y < 0 || b.x + b.width > vb.width || b.y + b.height > vb.height) clipped.push(t.textContent);
      });
      var fills = {};
      Array.prototype.forEach.call(svg.querySelectorAll("polygon"), function (p) {
        fills[p.getAttribute("data-cat")] = p.getAttribute("fill");
      });
      return {
        id: d.id,
        rows: rows("#" + d.id + " table.rows tr").slice(1).map(cells),
        legend: rows("#" + d.id + " .legend li").map(function (li) {
          return [li.textContent, getComputedStyle(li.querySelector(".sw")).backgroundColor];
        }),
        fills: fills,
        clipped: clipped,
        /* the bars: a row per category, wholly inside the page's width */
        bars_inside: rows("#" + d.id + " table.bars tr").every(function (tr) {
          return tr.getBoundingClientRect().right <= document.documentElement.clientWidth;
        }),
      };
    });
    /* the pointer at the time of the before run's peak: the readout gives that peak */
    var first = pairs[0], svg0 = first.querySelector("svg.chart");
    var pts = JSON.parse(first.querySelector("script.points").textContent).before, best = 0, bi = 0;
    pts.ms.forEach(function (t, i) {
      var tot = 0;
      pts.cats.forEach(function (c) { tot += c[i]; });
      if (tot > best) { best = tot; bi = i; }
    });
    var vb = svg0.viewBox.baseVal, r0 = svg0.getBoundingClientRect();
    var xv = +svg0.dataset.l + pts.ms[bi] / +svg0.dataset.xmax * +svg0.dataset.w;
    svg0.dispatchEvent(new MouseEvent("mousemove", { clientX: r0.left + (xv + 0.01) * r0.width / vb.width,
      clientY: r0.top + r0.height / 3, bubbles: true }));
    out.hover = { pair: first.id, text: first.querySelector(".readout").textContent,
      cursor: first.querySelector("line.cursor").getAttribute("visibility") };
    /* a drag from a quarter to a half of the plot zooms both runs there; a double-click
       shows all of it again */
    var l = +svg0.dataset.l, w = +svg0.dataset.w, xmax = +svg0.dataset.xmax;
    function at(f) { return { clientX: r0.left + (l + f * w) * r0.width / vb.width, clientY: r0.top + r0.height / 3,
      bubbles: true, button: 0 }; }
    function ticks() {
      return Array.prototype.map.call(svg0.querySelectorAll("text.xt"), function (t) { return parseFloat(t.textContent); });
    }
    svg0.dispatchEvent(new MouseEvent("mousedown", at(0.25)));
    svg0.dispatchEvent(new MouseEvent("mousemove", at(0.4)));
    svg0.dispatchEvent(new MouseEvent("mouseup", at(0.5)));
    out.zoom = { xmax: xmax, ticks: ticks(), transformed: svg0.querySelectorAll("g.plot[transform]").length,
      plots: svg0.querySelectorAll("g.plot").length };
    svg0.dispatchEvent(new MouseEvent("mousemove", at(0.5)));
    out.zoom.readout = first.querySelector(".readout").textContent;
    svg0.dispatchEvent(new MouseEvent("dblclick", at(0.5)));
    out.zoom.reset = ticks();
    function count() {
      return {
        overview: rows("table.overview tr[data-pair]").filter(visible).length,
        pairs: rows("details.pair").filter(visible).length,
        rows: rows("details.pair table.rows tr.same, details.pair table.rows tr.up, details.pair table.rows tr.down")
          .filter(visible).length,
        note: visible(document.querySelector(".note")),
      };
    }
    out.before_switch = count();
    document.querySelector("label[for=changed]").click();
    out.after_switch = count();
    out.switch_checked = document.getElementById("changed").checked;
  } catch (e) {
    out.errors.push("driver: " + e + " " + (e.stack || ""));
  }
  var pre = document.createElement("pre");
  pre.id = "hmem-test";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
