// check.js: the browser side of tests/report_browser.sh (see check.html).
"use strict";
(function () {
  var out = document.getElementById("result");
  var frame = document.getElementById("report");
  var errors = [];
  window.addEventListener("error", function (e) { errors.push(String(e.message)); });
  var params = new URLSearchParams(location.search);
  var src = params.get("report");
  var t0 = 0;
  function count(root, sel) { return root.querySelectorAll(sel).length; }
  function attr(el, name) { var v = el.getAttribute(name); return v === null ? null : Number(v); }
  function inspect(loadMs, paintMs) {
    var doc = frame.contentDocument;
    var r = { ok: true, errors: errors, load_ms: loadMs, paint_ms: paintMs };
    if (!doc || !doc.body) { out.textContent = JSON.stringify({ ok: false, why: "no document (file access?)" }); return; }
    r.scripts = count(doc, "script");
    r.script_src = count(doc, "script[src]");
    r.external = count(doc, "[src], link[href], [href^='http']");
    var svgs = doc.querySelectorAll("svg");
    r.svgs = svgs.length;
    r.empty_svgs = 0;
    for (var i = 0; i < svgs.length; i++) {
      var b = svgs[i].getBoundingClientRect();
      if (!(b.width > 0 && b.height > 0)) r.empty_svgs++;
    }
    r.timelines = [];
    doc.querySelectorAll("svg.timeline").forEach(function (s) {
      var lanes = s.querySelectorAll("g.lane");
      var runs = 0, drawn = 0, merged = 0;
      lanes.forEach(function (l) { runs += attr(l, "data-runs"); });
      s.querySelectorAll("g.lane > rect").forEach(function (rc) {
        drawn++;
        if (rc.getAttribute("data-n") !== null) merged++;
      });
      r.timelines.push({ traces: attr(s, "data-traces"), lanes: lanes.length, runs: attr(s, "data-runs"), lane_runs: runs,
        rects: drawn, merged_attr: attr(s, "data-merged"), merged: merged,
        sms: attr(s, "data-sms"), sm_groups: count(s, "g.sm"), legend: count(s, "g.legend g.key"),
        width: s.getBoundingClientRect().width, height: s.getBoundingClientRect().height });
    });
    // the timelines zoom and pan (the report's own script): a zoom to a quarter about the middle
    // shows a quarter of the span with its own time ticks, distinct; a reset shows it all again
    r.zoom = [];
    doc.querySelectorAll("svg.timeline").forEach(function (s) {
      var z = { script: typeof s.mgpuZoom === "function" };
      if (z.script) {
        var L = Number(s.getAttribute("data-l")), R = Number(s.getAttribute("data-r"));
        var rect = s.querySelector("g.lane > rect"), w0 = rect ? rect.getBoundingClientRect().width : 0;
        s.mgpuZoom(0.25, (L + R) / 2);
        var v = (s.getAttribute("data-view") || "0 0").split(" ").map(Number);
        z.span = Number(s.getAttribute("data-span"));
        z.shown = (v[1] - v[0]) / z.span;
        z.transform = s.querySelector("g.zoom").getAttribute("transform") || "";
        z.wider = rect ? rect.getBoundingClientRect().width > w0 * 3.5 : true;
        var labels = [];
        s.querySelectorAll("g.zaxis text").forEach(function (t) { labels.push(t.textContent); });
        z.ticks = labels.length;
        z.distinct = new Set(labels).size;
        z.fixed_axis_hidden = s.querySelector("g.xaxis").style.display === "none";
        s.mgpuReset();
        z.reset = (s.querySelector("g.zoom").getAttribute("transform") || "") === "" &&
          s.querySelectorAll("g.zaxis text").length === 0;
      }
      r.zoom.push(z);
    });
    r.histograms = [];
    doc.querySelectorAll("svg.histogram").forEach(function (s) {
      var sum = 0;
      s.querySelectorAll("rect.bin").forEach(function (b) { sum += attr(b, "data-count"); });
      // tick labels never repeated, no label (ticks, median, p99) past the figure's edges
      var box = s.getBoundingClientRect(), labels = [], clipped = 0;
      s.querySelectorAll("text.xt").forEach(function (t) { labels.push(t.textContent); });
      s.querySelectorAll("text").forEach(function (t) {
        var b = t.getBoundingClientRect();
        if (b.width > 0 && (b.left < box.left - 0.5 || b.right > box.right + 0.5)) clipped++;
      });
      r.histograms.push({ region: s.getAttribute("data-region"), count: attr(s, "data-count"), bins: sum,
        nbins: count(s, "rect.bin"), labels: labels.length, distinct_labels: new Set(labels).size, clipped: clipped,
        marks: count(s, "text.marklabel") });
    });
    r.bars = [];
    doc.querySelectorAll("svg.hbars").forEach(function (s) {
      r.bars.push({ points: attr(s, "data-points"), regions: attr(s, "data-regions"), bars: attr(s, "data-bars"),
        region_bars: count(s, "g.row.bar-region"), time_bars: count(s, "g.row.bar-time"),
        all: count(s, "g.row"), flags: count(s, "text.flag") });
    });
    // no text of any figure crosses its edges (issue 35: "00 TFLOP/s"); what the timelines draw
    // against time is clipped to the plot on purpose and is left out
    r.clipped_texts = 0;
    r.clipped_examples = [];
    svgs.forEach(function (s) {
      var box = s.getBoundingClientRect();
      s.querySelectorAll("text").forEach(function (t) {
        if (t.closest("g.zoomable") || t.closest("g.zaxis")) return;
        var b = t.getBoundingClientRect();
        if (b.width > 0 && (b.left < box.left - 0.5 || b.right > box.right + 0.5 || b.top < box.top - 0.5 ||
            b.bottom > box.bottom + 0.5)) {
          r.clipped_texts++;
          if (r.clipped_examples.length < 5) r.clipped_examples.push(t.textContent);
        }
      });
    });
    r.lines = count(doc, "svg.lines");
    r.virtual = count(doc, "svg text.virtual");
    r.titles = count(doc, "svg title");
    r.tables = count(doc, "table");
    out.textContent = JSON.stringify(r);
  }
  frame.addEventListener("load", function () {
    var loadMs = performance.now() - t0;
    // two animation frames after load: the page has been laid out and painted once
    requestAnimationFrame(function () {
      requestAnimationFrame(function () { inspect(loadMs, performance.now() - t0); });
    });
  });
  if (!src) { out.textContent = JSON.stringify({ ok: false, why: "no ?report=" }); return; }
  t0 = performance.now();
  frame.src = src;
})();
