-- mgpu.report: `mgpu-harness report DIR [DIR2] [-o report.html] [--svg OUTDIR]
-- [--point N|all]`: one self-contained HTML file (no script, no network, no
-- other file: a Content-Security-Policy that forbids loading anything says
-- so to the browser) with SVG figures, for
--   * a point (a trace.json, with its summary beside it or given second; or a
--     point of a results folder): the timeline overview (one lane per trace
--     under its SM, regions coloured by name, the span and when each SM
--     finished), a duration histogram per region, the regions in flight as
--     stacked areas, the region table;
--   * a sweep (a results folder): the manifest's facts, per axis the median
--     launch time (error bars: the repeats' min and max) and each region's
--     median against it, one line per value of the other axes, the results
--     table, and the points' own sections (all of them when their traces are
--     small, else those --point names);
--   * a comparison (two results folders, or two region summaries): per point
--     and region the change as bars sorted by size, with the launch time's
--     noise band; regions whose count changed are flagged.
-- emu's times are virtual, and every figure of such a run says so.  The
-- figures come from mgpu.svg (the harness's own drawing) and the traces are
-- read by mgpu.report_trace (streaming, lanes merged below a pixel).
-- --svg OUTDIR also writes each figure as a standalone .svg.  Files are
-- written atomically (core.write_file).  Errors are values with a code:
-- bad_argument (usage, an input that is no results folder, trace or
-- summary), bad_results (a torn or malformed results file), bad_trace (a torn
-- or malformed trace), io_error.
local core = require "mgpu.core"
local errors = require "mgpu.errors"
local options = require "mgpu.options"
local files = require "mgpu.files"
local manifest = require "mgpu.manifest"
local results = require "mgpu.results"
local rt = require "mgpu.report_trace"
local svg = require "mgpu.svg"
local function svg_short(v) return svg.short(v) end

local M = {}

local fmt, floor, max, min, abs = string.format, math.floor, math.max, math.min, math.abs

-- "1 region", "3 regions" (issue 35: the page said "1 regions"); n a number or its text.
local function count_of(n, word)
  local one = n == 1 or n == "1"
  return fmt("%s %s", type(n) == "number" and svg_short(n) or tostring(n), one and word or (word .. "s"))
end
local esc = svg.esc

M.USAGE = "usage: mgpu-harness report INPUT [INPUT2] [-o report.html] [--svg OUTDIR] [--point N|all] [--force]\n"
  .. "\n"
  .. "One self-contained HTML file (no network, one inline script for zooming timelines) of:\n"
  .. "  a results folder (the sweep's figures and each point's timeline, histograms, in-flight figure),\n"
  .. "  a trace.json (a point; its .summary.json beside it or given as INPUT2), or two results folders or\n"
  .. "  two region summaries (a comparison, with the verdict compare --max-slowdown would give).\n"
  .. "  -o FILE          the HTML file (default: DIR/report.html for a results folder, else report.html)\n"
  .. "  --svg OUTDIR     also write each figure as a standalone SVG file in OUTDIR\n"
  .. "  --point N|all    a results folder's points to draw: point N, or all (default: all when their\n"
  .. "                   traces are 16 MB together at most, else the first ones within that)\n"
  .. "  --force          replace an existing -o file that is not a report (an input never is written)\n"
  .. "  -h, --help       this text\n"
  .. "\n"
  .. "exit status: 0 written, 1 unreadable input or unwritable output, 2 bad usage (an unknown input,\n"
  .. "             an -o file that is not a report), 3 a trace, summary or results folder the harness\n"
  .. "             did not write (bad_trace, bad_results)"

-- Traces of a sweep drawn without --point when together at most this big.
M.ALL_POINTS_BYTES = 16 * 1048576

local function bad(msg) error(errors.new("bad_argument", msg), 0) end

local throughput_text, counters_text, stall_text -- the point facts of issues 24 and 34, below

-- What a path is: "results" (a results folder), "trace", "summary"; other
-- folders and files are a bad_argument naming them.
local function is_dir(path)
  local f = io.open(path, "rb")
  if not f then return false, false end
  local _, _, code = f:read(1)
  f:close()
  return code == 21, true
end

function M.kind(path)
  local dir, exists = is_dir(path)
  if not exists then error(errors.new("io_error", path .. ": cannot open (no such file or folder)"), 0) end
  if dir then
    if files.exists(path .. "/results.jsonl") or files.exists(path .. "/manifest.json") then return "results" end
    bad(path .. ": a folder that is not a results folder (no results.jsonl, no manifest.json)")
  end
  local f = io.open(path, "rb")
  local head = f:read(65536) or ""
  f:close()
  if head:find('"traceEvents"', 1, true) then return "trace" end
  if head:find('"regions"', 1, true) then return "summary" end
  bad(path .. ": neither a results folder, a trace (no \"traceEvents\") nor a region summary (no \"regions\")")
end

-- A summary's JSON, checked: regions a list of named entries.
local function read_summary(path)
  local s = files.read_json(path)
  if type(s) ~= "table" or type(s.regions) ~= "table" then
    error(errors.new("bad_results", path .. ": not a region summary (no \"regions\" list)"), 0)
  end
  for i, g in ipairs(s.regions) do
    if type(g) ~= "table" or type(g.name) ~= "string" then
      error(errors.new("bad_results", fmt("%s: region %d has no name", path, i)), 0)
    end
    for _, k in ipairs({ "count", "total", "mean", "min", "median", "p99", "max", "truncated", "concurrency" }) do
      if g[k] ~= nil and type(g[k]) ~= "number" then
        error(errors.new("bad_results", fmt("%s: region %s: %s must be a number", path, g.name, k)), 0)
      end
    end
  end
  if s.timeline ~= nil and type(s.timeline) ~= "table" then
    error(errors.new("bad_results", path .. ": timeline must be an object"), 0)
  end
  return s
end
M.read_summary = read_summary

-- The summary beside a trace: X.trace.json -> X.summary.json, X.json -> X.summary.json.
local function summary_beside(trace)
  local base = trace:gsub("%.trace%.json$", ""):gsub("%.json$", "")
  local p = base .. ".summary.json"
  if files.exists(p) then return p end
end

-- Figures and pages ------------------------------------------------------------

local function slug(s) return (tostring(s):gsub("[^%w_.-]+", "_")) end

-- The report being built: its figures (for --svg) and its HTML parts.
local function new_ctx()
  return { figures = {}, used = {}, colors = {}, ncolors = 0, stats = {} }
end

-- The colour of a region name, the same in every figure of a report.
local function color_of(ctx, name)
  local c = ctx.colors[name]
  if not c then
    ctx.ncolors = ctx.ncolors + 1
    c = svg.color(ctx.ncolors)
    ctx.colors[name] = c
  end
  return c
end

-- A figure: kept for --svg under a unique file name, returned as HTML.
local function figure(ctx, name, doc, caption)
  local file = slug(name)
  local n = 1
  while ctx.used[file] do n = n + 1; file = slug(name) .. "-" .. n end
  ctx.used[file] = true
  ctx.figures[#ctx.figures + 1] = { file = file .. ".svg", doc = doc }
  return fmt('<figure id="fig-%s">\n%s\n%s</figure>\n', esc(file), doc:finish(false),
    caption and ("<figcaption>" .. esc(caption) .. "</figcaption>\n") or "")
end

local function html_table(head, rows, class)
  local out = { fmt('<table class="%s"><thead><tr>', class or "data") }
  for _, h in ipairs(head) do out[#out + 1] = "<th>" .. esc(h) .. "</th>" end
  out[#out + 1] = "</tr></thead><tbody>"
  for _, r in ipairs(rows) do
    out[#out + 1] = "<tr" .. (r.class and fmt(' class="%s"', esc(r.class)) or "") .. ">"
    for _, c in ipairs(r) do out[#out + 1] = "<td>" .. esc(c) .. "</td>" end
    out[#out + 1] = "</tr>"
  end
  out[#out + 1] = "</tbody></table>\n"
  return table.concat(out)
end

local function facts(list)
  local out = { '<dl class="facts">' }
  for _, f in ipairs(list) do
    if f[2] ~= nil and f[2] ~= "" then
      out[#out + 1] = fmt("<dt>%s</dt><dd>%s</dd>", esc(f[1]), esc(f[2]))
    end
  end
  out[#out + 1] = "</dl>\n"
  return table.concat(out)
end

local function notes(list)
  if #list == 0 then return "" end
  local out = { '<ul class="notes">' }
  for _, n in ipairs(list) do out[#out + 1] = "<li>" .. esc(n) .. "</li>" end
  out[#out + 1] = "</ul>\n"
  return table.concat(out)
end

local CSS = [[
body{font-family:DejaVu Sans,Verdana,Arial,sans-serif;margin:24px;color:#222;max-width:1240px}
h1{font-size:22px;margin:0 0 8px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc}
h3{font-size:15px;margin:18px 0 6px}
.facts{display:grid;grid-template-columns:max-content auto;gap:2px 14px;font-size:13px;margin:8px 0}
.facts dt{font-weight:bold}.facts dd{margin:0;font-family:DejaVu Sans Mono,monospace;word-break:break-all}
figure{margin:10px 0;display:inline-block;vertical-align:top}figcaption{font-size:12px;color:#555;max-width:1200px}
table{border-collapse:collapse;font-size:12px;margin:8px 0}th,td{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#f2f2f2}td:first-child,th:first-child{text-align:left}tr.failed td{color:#b00}tr.flag td{background:#fff2f2}
.virtual{color:#8a4b00;font-weight:bold}.notes{font-size:12px;color:#555}
details{margin:6px 0}summary{cursor:pointer;font-weight:bold;font-size:15px}
svg.timeline g.zoom line,svg.timeline g.zoom path{vector-effect:non-scaling-stroke}svg.timeline{cursor:grab}
]]

-- The one script of a report (issue 24): the timelines zoom (wheel, about the pointer) and pan
-- (drag); a double-click shows the whole span again.  It moves the figure's g.zoom by a
-- transform and draws the zoomed view's time ticks in g.zaxis; nothing is loaded.
local ZOOM_JS = [[
(function () {
  "use strict";
  function nice(x) { var p = Math.pow(10, Math.floor(Math.log10(x))), m = x / p; return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p; }
  document.querySelectorAll("svg.timeline[data-zoom]").forEach(function (s) {
    var L = +s.dataset.l, R = +s.dataset.r, span = +s.dataset.span, scale = +s.dataset.scale;
    var z = s.querySelector("g.zoom"), zax = s.querySelector("g.zaxis"), fixed = s.querySelector("g.xaxis");
    var ay = +zax.dataset.y, NS = s.namespaceURI, v0 = 0, v1 = span, drag = null;
    function el(tag, a, text) { var e = document.createElementNS(NS, tag); for (var k in a) e.setAttribute(k, a[k]); if (text) e.textContent = text; zax.appendChild(e); }
    function draw() {
      var k = span / (v1 - v0), whole = v0 <= 0 && v1 >= span;
      z.setAttribute("transform", whole ? "" : "translate(" + (L - k * v0 / span * (R - L)) + " 0) scale(" + k + " 1) translate(" + (-L) + " 0)");
      s.setAttribute("data-view", v0 + " " + v1);
      fixed.style.display = whole ? "" : "none";
      s.querySelectorAll(".donelabel").forEach(function (t) { t.style.display = whole ? "" : "none"; });
      while (zax.firstChild) zax.removeChild(zax.firstChild);
      if (whole) return;
      var step = nice((v1 - v0) / 8), digits = Math.max(0, -Math.floor(Math.log10(step / scale) + 1e-9));
      el("line", { x1: L, y1: ay, x2: R, y2: ay, "class": "ax" });
      for (var t = Math.ceil(v0 / step) * step; t <= v1 + 1e-9 * step; t += step) {
        var x = L + (t - v0) / (v1 - v0) * (R - L);
        el("line", { x1: x, y1: ay, x2: x, y2: ay + 4, "class": "ax" });
        el("text", { x: x, y: ay + 15, "text-anchor": "middle", "class": "ztick" }, (t / scale).toFixed(Math.min(digits, 9)));
      }
    }
    function at(e) { var p = s.createSVGPoint(); p.x = e.clientX; p.y = e.clientY; return p.matrixTransform(s.getScreenCTM().inverse()).x; }
    function clamp(w) { w = Math.max(w, span * 1e-6); if (w >= span) { v0 = 0; v1 = span; return; } if (v0 < 0) v0 = 0; v1 = v0 + w; if (v1 > span) { v1 = span; v0 = span - w; } }
    s.mgpuZoom = function (f, x) {
      var c = v0 + (Math.min(Math.max(x, L), R) - L) / (R - L) * (v1 - v0);
      var w = (v1 - v0) * f; v0 = c - (c - v0) * f; clamp(w); draw();
    };
    s.mgpuReset = function () { v0 = 0; v1 = span; draw(); };
    s.addEventListener("wheel", function (e) { e.preventDefault(); s.mgpuZoom(e.deltaY < 0 ? 0.8 : 1.25, at(e)); }, { passive: false });
    s.addEventListener("mousedown", function (e) { drag = { x: at(e), v0: v0 }; e.preventDefault(); });
    window.addEventListener("mouseup", function () { drag = null; });
    s.addEventListener("mousemove", function (e) {
      if (!drag) return;
      var w = v1 - v0; v0 = drag.v0 - (at(e) - drag.x) / (R - L) * w; clamp(w); draw();
    });
    s.addEventListener("dblclick", function () { s.mgpuReset(); });
  });
})();
]]

-- base64 of a string of bytes
local function base64(b)
  local A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
  local out = {}
  for i = 1, #b, 3 do
    local a, c, d = b:byte(i, i + 2)
    local n = a * 65536 + (c or 0) * 256 + (d or 0)
    local q = { floor(n / 262144) % 64, floor(n / 4096) % 64, floor(n / 64) % 64, n % 64 }
    out[#out + 1] = A:sub(q[1] + 1, q[1] + 1) .. A:sub(q[2] + 1, q[2] + 1) ..
      (c and A:sub(q[3] + 1, q[3] + 1) or "=") .. (d and A:sub(q[4] + 1, q[4] + 1) or "=")
  end
  return table.concat(out)
end

-- The script's CSP hash ('sha256-...'): only that inline script may run.
local script_hash
local function zoom_hash()
  if script_hash then return script_hash end
  local tmp = os.tmpname()
  local f = assert(io.open(tmp, "wb"))
  f:write(ZOOM_JS)
  f:close()
  local hex = core.sha256_file(tmp)
  os.remove(tmp)
  script_hash = "sha256-" .. base64((hex:gsub("%x%x", function(h) return string.char(tonumber(h, 16)) end)))
  return script_hash
end
M.ZOOM_JS = ZOOM_JS

local function page(title, body)
  return table.concat({
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
    -- nothing may be loaded: the report is one file, readable offline; its one inline script
    -- (the timelines' zoom) runs by its hash
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src '",
    zoom_hash(), "'\">\n",
    "<meta name=\"generator\" content=\"mgpu-harness ", esc(core.VERSION), "\">\n",
    "<title>", esc(title), "</title>\n<style>\n", CSS, "</style>\n</head>\n<body>\n", body,
    "<script>", ZOOM_JS, "</script>\n</body>\n</html>\n" })
end

-- A point -----------------------------------------------------------------------

-- A time formatter for a trace's unit ("ns", "cycles"; a Mosaic-compatible
-- dump counts cycles as ns, which is said on the axes).
local function unit_of(tr, summary)
  local unit = (summary and summary.unit) or tr.unit or "ns"
  return unit
end

local function tfmt(unit)
  return function(v) return svg.time(v, unit) end
end

-- The timeline overview: one lane per trace, grouped under its SM.
local function timeline_svg(ctx, tr, opts)
  local unit, virtual = opts.unit, opts.virtual
  local lanes, sms = tr.lanes, tr.sms
  local nl, nsm = #lanes, #sms
  local W, L = 1200, 190
  local R = L + rt.WIDTH
  local lh = min(14, max(0.05, 900 / nl))
  local gap = nsm > 1 and min(4, max(0.5, 300 / nsm)) or 0
  if nl <= 40 then gap = 4 end
  local names = tr.names
  local scale0, su0 = svg.time_ticks_unit(tr.span, unit)
  local doc = svg.new(W, 10, { class = "chart timeline", label = "timeline of " .. nl .. " traces",
    data = { traces = nl, sms = nsm, runs = tr.runs, merged = tr.merged, events = tr.events,
      -- what the page's zoom script needs (ZOOM_JS): the plot's x range, the span and the tick unit
      zoom = 1, l = L, r = R, span = tr.span, scale = scale0, su = su0 } })
  svg.heading(doc, fmt("Timeline: %s on %s, span %s", count_of(nl, "trace"), count_of(nsm, "SM"), svg.time(tr.span, unit)), virtual)
  local items = {}
  for _, n in ipairs(names) do items[#items + 1] = { name = n, color = color_of(ctx, n) } end
  local y = svg.legend(doc, L, 38, items)
  doc:text(L, y, "a lane is a trace (a warp or warpgroup), under its SM; nested regions are drawn shorter", { class = "note" })
  doc:text(L, y + 12, fmt("regions narrower than a pixel are merged into runs: %d of the %d runs stand for several "
    .. "regions (hover for their make-up)", tr.merged, tr.runs), { class = "note" })
  y = y + 52
  local T = y
  local sx = svg.linear(0, tr.span, L, R)
  local tf = tfmt(unit)
  -- lanes
  local ys = {}
  local cy = T
  local label_every = 1
  local group_h = {}
  local sm_labels = {}
  for i, sm in ipairs(sms) do group_h[i] = #sm.lanes * lh end
  local gh = group_h[1] or 1
  if gh < 10 then label_every = math.ceil(10 / (gh + gap)) end
  -- everything drawn against time zooms and pans (the page's script): clipped to the plot
  ctx.nclip = (ctx.nclip or 0) + 1
  local clip = "tlclip" .. ctx.nclip
  doc:raw(fmt('<defs><clipPath id="%s"><rect x="%s" y="0" width="%s" height="100000"/></clipPath></defs>', clip,
    svg.num(L), svg.num(R - L + 1)))
  doc:open({ class = "zoomable", ["clip-path"] = "url(#" .. clip .. ")" })
  doc:open({ class = "zoom" })
  doc:open({ class = "lanes" })
  local tf0 = tr.t_first
  local lane_labels, last_block, last_label = {}, nil, -math.huge -- block labels of thin lanes
  for si, sm in ipairs(sms) do
    local top = cy
    local nreg = 0
    for _, l in ipairs(sm.lanes) do nreg = nreg + l.regions end
    doc:open({ class = "sm", ["data-sm"] = sm.name }, fmt("%s: %s, %s, done at %s", sm.name, count_of(#sm.lanes, "trace"),
      count_of(nreg, "region"), tf(sm.done)))
    for _, l in ipairs(sm.lanes) do
      ys[l.index] = cy
      -- a lane thinner than a pixel cannot be pointed at: its SM's title speaks for it
      local title = lh >= 1.5 and fmt("%s (%s): %s, %s to %s; drawn as %s", l.label, sm.name, count_of(l.regions, "region"),
        tf(l.first - tf0), tf(l.last - tf0), count_of(l.n, "run")) or nil
      doc:open({ class = "lane", ["data-trace"] = l.index, ["data-runs"] = l.n, ["data-regions"] = l.regions }, title)
      local inner = lh >= 4 and lh * 0.86 or lh
      -- parents first: a nested region is drawn over the one around it
      local order = {}
      for depth = 1, rt.MAX_DEPTH do
        for k = 1, l.n do if l.dep[k] == depth then order[#order + 1] = k end end
      end
      for _, k in ipairs(order) do
        local d = l.dep[k]
        local inset = (d - 1) * 0.22 * inner
        local x0, x1 = sx(l.t0[k] - tf0), sx(l.t1[k] - tf0)
        local name = l.nm[k]
        local mix = l.mix[k]
        if mix then -- the colour of the name that took most of the run's time
          local best, bt = name, -1
          for n2, v in pairs(mix) do if v > bt or (v == bt and n2 < best) then best, bt = n2, v end end
          name = best
        end
        local tip
        if lh >= 3 then
          if l.cnt[k] == 1 then
            tip = fmt("%s: %s, from %s to %s", name, tf(l.t1[k] - l.t0[k]), tf(l.t0[k] - tf0), tf(l.t1[k] - tf0))
          else
            local parts = {}
            local busy = l.busy[k]
            local m = mix or { [name] = busy }
            local ks = {}
            for n2 in pairs(m) do ks[#ks + 1] = n2 end
            table.sort(ks, function(a, b) return m[a] > m[b] end)
            for _, n2 in ipairs(ks) do parts[#parts + 1] = fmt("%s %.0f%%", n2, 100 * m[n2] / max(busy, 1e-300)) end
            tip = fmt("%d regions merged (%s), from %s to %s", l.cnt[k], table.concat(parts, ", "), tf(l.t0[k] - tf0),
              tf(l.t1[k] - tf0))
          end
        end
        local a = { fill = color_of(ctx, name) }
        if l.cnt[k] > 1 then a.class = "run merged"; a["data-n"] = l.cnt[k] end
        doc:rect(x0, cy + inset, max(x1 - x0, 0.5), inner - inset, a, tip)
      end
      doc:close()
      if lh >= 10 then
        doc:text(L - 6, cy + lh * 0.75, l.label, { anchor = "end", class = "note lanelabel" })
      else -- lanes too thin for a label each: the block where its lanes begin, when there is room
        local blk = l.label:match("^(block %d+)")
        if blk and blk ~= last_block and cy - last_label >= 11 then
          lane_labels[#lane_labels + 1] = { cy + min(lh, 8), blk .. " \u{25B8}" }
          last_label = cy
        end
        last_block = blk
      end
      cy = cy + lh
    end
    -- the SM's finish: a tick across its lanes
    local xd = sx(sm.done)
    doc:line(xd, top - 0.5, xd, cy + 0.5, { stroke = "#000", ["stroke-width"] = 1.5, class = "smdone" },
      fmt("%s done at %s", sm.name, tf(sm.done)))
    doc:close()
    if (si - 1) % label_every == 0 then sm_labels[#sm_labels + 1] = { (top + cy) / 2 + 4, sm.name } end
    cy = cy + gap
  end
  doc:close()
  local B = cy
  -- the span and the SMs' finish: first, median, last
  local done = {}
  for i, sm in ipairs(sms) do done[i] = sm.done end
  table.sort(done)
  local marks = {
    { done[1], "first SM done" },
    { done[floor((#done + 1) / 2)], "median SM done" },
    { done[#done], "last SM done" },
  }
  for i, m in ipairs(marks) do
    local x = sx(m[1])
    doc:line(x, T - 36 + 11 * (i - 1), x, B + 58, { stroke = "#555", ["stroke-dasharray"] = "3 3", class = "donemark" },
      fmt("%s: %s", m[2], tf(m[1])))
  end
  -- SMs still running
  local sy = svg.linear(0, nsm, B + 58, B + 22)
  local d = { "M" .. svg.num(sx(0)) .. " " .. svg.num(sy(nsm)) }
  for i, v in ipairs(done) do
    d[#d + 1] = "H" .. svg.num(sx(v)) .. "V" .. svg.num(sy(nsm - i))
  end
  d[#d + 1] = "H" .. svg.num(sx(tr.span)) .. "V" .. svg.num(sy(0)) .. "H" .. svg.num(sx(0)) .. "Z"
  doc:path(table.concat(d), { fill = "#888", ["fill-opacity"] = 0.5, stroke = "#444", class = "running" },
    fmt("SMs still running: %d until %s, the last one until %s", nsm, tf(done[1]), tf(done[#done])))
  doc:close() -- g.zoom
  doc:close() -- g.zoomable
  for i, m in ipairs(marks) do
    local x = sx(m[1])
    doc:text(x - 3, T - 28 + 11 * (i - 1), fmt("%s %s", m[2], tf(m[1])), { anchor = "end", class = "note donelabel" })
  end
  for _, sl in ipairs(sm_labels) do doc:text(8, sl[1], sl[2]) end
  for _, ll in ipairs(lane_labels) do doc:text(L - 6, ll[1], ll[2], { anchor = "end", class = "note lanelabel" }) end
  doc:text(L - 6, B + 44, "SMs running", { anchor = "end", class = "note" })
  local scale, su = scale0, su0
  local xt = svg.ticks(0, tr.span, 10)
  doc:open({ class = "xaxis" })
  svg.x_axis(doc, B + 60, sx, xt, function(v) return svg.short(v / scale) end,
    fmt("time from the first event (%s)%s", su, opts.unit_note or ""), L, R)
  doc:close()
  doc:open({ class = "zaxis", ["data-y"] = B + 60 }) -- the zoomed view's ticks (the script draws them)
  doc:close()
  doc:text(R, B + 89, "wheel: zoom, drag: pan, double-click: whole span", { anchor = "end", class = "note zhint" })
  doc.h = B + 100
  return doc, { L = L, R = R }
end

local function region_rows(list, unit)
  local rows = {}
  for _, g in ipairs(list) do
    rows[#rows + 1] = { g.name, svg.short(g.count or 0), svg.time(g.total, unit), svg.time(g.mean, unit),
      svg.time(g.min, unit), svg.time(g.median, unit), svg.time(g.p99, unit), svg.time(g.max, unit),
      svg.short(g.truncated or 0), g.concurrency and fmt("%.2f", g.concurrency) or "-" }
  end
  return rows
end

-- A point's section: figures and tables.  p: {id, title, trace (path),
-- summary (decoded, or nil), row (a results row, or nil), virtual, facts}.
function M.point_section(ctx, p)
  local out = {}
  local summary = p.summary
  local span = summary and type(summary.timeline) == "table" and summary.timeline.span or nil
  local tr = rt.read(p.trace, { span = span })
  local unit = unit_of(tr, summary)
  local note = tr.mode == "mosaic" and " (Mosaic-compatible dump: cycles counted as ns)" or ""
  if tr.unit == "cycles" then note = " (SM clock cycles: no clock rate was given)" end
  ctx.stats[#ctx.stats + 1] = { traces = #tr.lanes, runs = tr.runs, merged = tr.merged, events = tr.events }
  local t_unit = (unit == "ns" and "ns") or unit
  -- the regions: the summary's figures where there is one (exact counts; the
  -- C histogram's median and p99), else the trace's
  local by_name = {}
  for _, g in ipairs(tr.regions) do by_name[g.name] = g end
  local list, warnings = {}, {}
  if summary then
    for _, g in ipairs(summary.regions) do
      list[#list + 1] = g
      local h = by_name[g.name]
      if h and g.count and h.count ~= g.count then
        warnings[#warnings + 1] = fmt("region %s: the trace holds %d closed regions, the summary counts %d", g.name,
          h.count, g.count)
      elseif not h then
        warnings[#warnings + 1] = fmt("region %s of the summary is not in the trace", g.name)
      end
    end
  else
    list = tr.regions
  end
  out[#out + 1] = p.facts or ""
  local doc = timeline_svg(ctx, tr, { unit = t_unit, virtual = p.virtual, unit_note = note })
  out[#out + 1] = figure(ctx, p.id .. "-timeline", doc, fmt("%s: %d events of %d traces drawn as %d runs (%d merged "
    .. "below a pixel's width); black ticks: when each SM's last event was; dashed: the first, median and last SM to "
    .. "finish; hover a lane or a run for its exact values.", p.title, tr.events, #tr.lanes, tr.runs, tr.merged))
  -- in flight
  local layers = {}
  for _, l in ipairs(tr.inflight.layers) do
    local sum, peak = 0, 0
    for _, v in ipairs(l.values) do sum = sum + v; peak = max(peak, v) end
    layers[#layers + 1] = { name = l.name, color = color_of(ctx, l.name), values = l.values,
      tip = fmt("%s: %.2f traces inside on average over the span, %.2f at the most (one slice of %s)", l.name,
        (by_name[l.name] and by_name[l.name].concurrency) or sum / max(#l.values, 1), peak, svg.time(tr.inflight.q, unit)) }
  end
  local scale, su = svg.time_ticks_unit(tr.span, t_unit)
  local st = svg.stacked({ title = "Regions in flight (traces inside each region, stacked)", virtual = p.virtual,
    x0 = tr.inflight.from, dx = tr.inflight.q, layers = layers, left = 190, right = 190 + rt.WIDTH, width = 1200,
    x_fmt = function(v) return svg.short(v / scale) end, x_title = fmt("time from the first event (%s)%s", su, note),
    x_ticks = svg.ticks(0, tr.span, 10), y_title = "traces", data = { layers = #layers },
    note = "nested regions stack on their parents: a trace inside load inside step counts in both" })
  out[#out + 1] = figure(ctx, p.id .. "-inflight", st, fmt("%s: the mean number of traces inside each region in %d "
    .. "slices of the span (what dump --counters exports).", p.title, #(layers[1] and layers[1].values or {})))
  -- histograms
  out[#out + 1] = "<div class=\"hists\">\n"
  for _, g in ipairs(tr.regions) do
    if g.count > 0 then
      local bins, log = rt.bins(g, 32)
      local s = summary and (function()
        for _, h in ipairs(summary.regions) do if h.name == g.name then return h end end
      end)() or g
      for _, b in ipairs(bins) do
        if b.first and b.first == b.last then
          b.tip = fmt("%s: %s", svg.time(b.first, unit), count_of(b.count, "region"))
        elseif b.first then
          b.tip = fmt("%s to %s: %s", svg.time(b.first, unit), svg.time(b.last, unit), count_of(b.count, "region"))
        else
          b.tip = fmt("%s to %s: %s", svg.time(max(b.lo, 0), unit), svg.time(b.hi, unit), count_of(b.count, "region"))
        end
      end
      local marks = {}
      if s.median then marks[#marks + 1] = { v = s.median, name = "median", tip = "median " .. svg.time(s.median, unit) } end
      if s.p99 then marks[#marks + 1] = { v = s.p99, name = "p99", tip = "p99 " .. svg.time(s.p99, unit) } end
      local h = svg.histogram({ title = fmt("%s: %s", g.name, count_of(g.count, "region")), virtual = p.virtual,
        color = color_of(ctx, g.name), bins = bins, log = log, x_fmt = function(v) return svg.time(v, unit) end,
        x_title = "duration" .. (log and " (log scale)" or "") .. note, marks = marks,
        data = { region = g.name, count = g.count, bins = #bins } })
      out[#out + 1] = figure(ctx, p.id .. "-hist-" .. g.name, h, nil)
    end
  end
  out[#out + 1] = "</div>\n"
  out[#out + 1] = "<h3>Regions</h3>\n"
  out[#out + 1] = html_table({ "region", "count", "total", "mean", "min", "median", "p99", "max", "truncated",
    "in flight" }, region_rows(list, unit), "regions")
  local tl = summary and summary.timeline
  local tline = {}
  if type(tl) == "table" and tl.span then
    tline[#tline + 1] = fmt("span %s from the first event to the last: %s traces on %s SMs; SMs done: first %s, median "
      .. "%s, last %s", svg.time(tl.span, unit), svg.short(tl.traces or #tr.lanes), svg.short(tl.sms or #tr.sms),
      svg.time(tl.sm_done_min, unit), svg.time(tl.sm_done_median, unit), svg.time(tl.sm_done_max, unit))
  else
    tline[#tline + 1] = fmt("span %s from the first event to the last: %s on %s", svg.time(tr.span, unit),
      count_of(#tr.lanes, "trace"), count_of(#tr.sms, "SM"))
  end
  if not summary then
    tline[#tline + 1] = "no summary: the figures above come from the trace alone (median and p99 within 0.1%)"
  end
  for _, w in ipairs(warnings) do tline[#tline + 1] = w end
  out[#out + 1] = notes(tline)
  return table.concat(out), tr
end

-- A sweep -----------------------------------------------------------------------

local function value_text(v)
  if type(v) == "number" then return svg.short(v) end
  return tostring(v)
end

local function point_text(names, point)
  local parts = {}
  for _, n in ipairs(names) do parts[#parts + 1] = n .. "=" .. value_text(point and point[n]) end
  return table.concat(parts, ", ")
end

local function all_names(groups)
  local out = {}
  for _, g in ipairs(groups) do for _, n in ipairs(g.names) do out[#out + 1] = n end end
  return out
end

-- The manifest's facts, for the top of a sweep or a point of one.
local function manifest_facts(man, rows, dir)
  -- the clocks the traces were converted with: per rate and source, the bounds' range
  local clocks, by = {}, {}
  for _, r in ipairs(rows or {}) do
    local c = r.clock
    if type(c) == "table" and type(c.ghz) == "number" then
      local key = fmt("%.4g GHz %s", c.ghz, tostring(c.source or "?"))
      local e = by[key]
      if not e then e = { key = key, n = 0 }; by[key] = e; clocks[#clocks + 1] = e end
      e.n = e.n + 1
      if type(c.bound) == "number" then
        e.lo, e.hi = min(e.lo or c.bound, c.bound), max(e.hi or c.bound, c.bound)
      end
    end
  end
  for i, e in ipairs(clocks) do
    local within = ""
    if e.lo then
      within = e.lo == e.hi and fmt(", within %.2g%%", e.lo * 100) or fmt(", within %.2g-%.2g%%", e.lo * 100, e.hi * 100)
    end
    clocks[i] = fmt("%s (%d point%s%s)", e.key, e.n, e.n == 1 and "" or "s", within)
  end
  local clock = man.clock_ghz and fmt("%.4g GHz (the device's)", man.clock_ghz) or nil
  if #clocks > 0 then
    clock = (clock and (clock .. "; ") or "") .. "the traces' times converted at " .. table.concat(clocks, "; ")
  end
  local ok, failed = 0, 0
  for _, r in ipairs(rows or {}) do if r.status == "ok" then ok = ok + 1 else failed = failed + 1 end end
  return facts({
    { "folder", dir },
    { "experiment", man.experiment },
    { "kernel", man.kernel and (man.kernel .. (man.instrument and (" (instrumented per " .. man.instrument .. ")") or "")) },
    { "device", man.device },
    { "backend", man.backend and (man.backend .. (man.backend == "emu" and ": times are virtual" or "")) },
    { "clock", clock },
    { "harness", man.harness },
    { "command", man.command },
    { "created", man.created },
    { "points", fmt("%d ok, %d failed", ok, failed) },
    { "launches", man.repeats and fmt("%s measured after %s warm-up%s", tostring(man.repeats), tostring(man.warmup or 1),
      (man.max_noise or man.min_time) and fmt(", more until sure (%s%s%s)", man.min_time and fmt("min_time %g s", man.min_time)
        or "", man.min_time and man.max_noise and ", " or "", man.max_noise and fmt("max_noise %g%%", man.max_noise) or "")
        or "") },
    { "builds", type(man.builds) == "table" and #man.builds > 0 and fmt("%d (%s; their PTX in builds/)", #man.builds,
      tostring(man.builds[1].nvcc or "nvcc")) or nil },
    { "note", man.time_note },
  })
end

-- The x positions of an axis group: its rows, numeric (linear or log) or not.
local function axis_of(g)
  local numeric = #g.names == 1
  local lo, hi = math.huge, -math.huge
  for _, row in ipairs(g.rows) do
    local v = row[1]
    if type(v) ~= "number" then numeric = false else lo, hi = min(lo, v), max(hi, v) end
  end
  local labels = {}
  for i, row in ipairs(g.rows) do
    local parts = {}
    for j = 1, #g.names do parts[j] = value_text(row[j]) end
    labels[i] = table.concat(parts, "/")
  end
  local title = table.concat(g.names, " / ")
  if numeric and #g.rows > 1 then
    local values = {}
    for i, row in ipairs(g.rows) do values[i] = row[1] end
    local kind = (lo > 0 and hi / lo >= 8) and "log" or "linear"
    return { kind = kind, values = values, title = title .. (kind == "log" and " (log scale)" or "") },
      function(point) return point[g.names[1]] end
  end
  return { kind = "band", labels = labels, title = title }, function(point)
    for i, row in ipairs(g.rows) do
      local same = true
      for j, n in ipairs(g.names) do if point[n] ~= row[j] then same = false end end
      if same then return i end
    end
  end
end

-- Series of one chart: one per combination of the other groups' values.
local function series_of(rows, groups, gi, value)
  local _, xof = axis_of(groups[gi])
  local others = {}
  for j, g in ipairs(groups) do if j ~= gi then for _, n in ipairs(g.names) do others[#others + 1] = n end end end
  local by, order = {}, {}
  for _, r in ipairs(rows) do
    if r.status == "ok" and type(r.point) == "table" then
      local key = #others > 0 and point_text(others, r.point) or "all points"
      local x = xof(r.point)
      local y, lo, hi, tip = value(r)
      if x ~= nil and y ~= nil then
        if not by[key] then by[key] = {}; order[#order + 1] = key end
        local pts = by[key]
        pts[#pts + 1] = { x = x, y = y, lo = lo, hi = hi, tip = tip }
      end
    end
  end
  local series = {}
  for i, key in ipairs(order) do
    local pts = by[key]
    table.sort(pts, function(a, b) return a.x < b.x end)
    series[#series + 1] = { name = key, color = svg.color(i), points = pts }
  end
  return series
end

function M.sweep_section(ctx, dir, man, rows)
  local out = {}
  local groups = man.axes and require("mgpu.axes").from_manifest(man.axes, dir .. "/manifest.json") or {}
  local names = all_names(groups)
  local virtual = man.backend == "emu"
  local time_label = virtual and "median launch time (virtual)" or "median launch time"
  local region_names, seen, unit = {}, {}, nil
  for _, r in ipairs(rows) do
    for _, g in ipairs(r.regions or {}) do
      if type(g) == "table" and type(g.name) == "string" and not seen[g.name] then
        seen[g.name] = true
        region_names[#region_names + 1] = g.name
      end
    end
    unit = unit or r.unit
  end
  unit = unit or "ns"
  local swept = {}
  for gi, g in ipairs(groups) do if #g.rows > 1 then swept[#swept + 1] = gi end end
  if #swept > 0 then
    out[#out + 1] = "<h2>Sweep</h2>\n"
    for _, gi in ipairs(swept) do
      local g = groups[gi]
      local x = axis_of(g)
      out[#out + 1] = fmt("<h3>Against %s</h3>\n", esc(table.concat(g.names, " / ")))
      local series = series_of(rows, groups, gi, function(r)
        local t = r.time_ns
        if type(t) ~= "table" or type(t.median) ~= "number" then return nil end
        return t.median, t.min, t.max, fmt("%s: median %s (min %s, max %s, %s launches)", point_text(names, r.point),
          svg.time(t.median, "ns"), svg.time(t.min, "ns"), svg.time(t.max, "ns"), tostring(t.n or "?"))
      end)
      if #series > 0 then
        local doc = svg.lines({ title = "launch time: " .. table.concat(g.names, "/"), virtual = virtual, x = x,
          series = series, y_axis = function(hi) return svg.time_axis(hi, "ns") end,
          note = "error bars: the repeats' min and max", data = { axis = table.concat(g.names, "/"),
            metric = "time" } })
        out[#out + 1] = figure(ctx, "sweep-" .. table.concat(g.names, "-") .. "-time", doc, nil)
      end
      for _, m in ipairs({ { "gbps", "GB/s", "B" }, { "gflops", "GFLOP/s", "FLOP" } }) do
        local ts = series_of(rows, groups, gi, function(r)
          if type(r[m[1]]) ~= "number" then return nil end
          return r[m[1]], nil, nil, fmt("%s: %s", point_text(names, r.point), results.fmt_rate(r[m[1]], m[3]))
        end)
        if #ts > 0 then
          local doc = svg.lines({ title = m[2] .. ": " .. table.concat(g.names, "/"), virtual = virtual, x = x,
            series = ts, y_axis = function(hi) return svg.rate_axis(hi, m[3]) end,
            note = "the point's bytes or flops over the plain kernel's median time",
            data = { axis = table.concat(g.names, "/"), metric = m[1] } })
          out[#out + 1] = figure(ctx, "sweep-" .. table.concat(g.names, "-") .. "-" .. m[1], doc, nil)
        end
      end
      for _, name in ipairs(region_names) do
        local rs = series_of(rows, groups, gi, function(r)
          for _, reg in ipairs(r.regions or {}) do
            if reg.name == name and type(reg.median) == "number" then
              return reg.median, nil, nil, fmt("%s: %s median %s (p99 %s, %s)", point_text(names, r.point),
                name, svg.time(reg.median, r.unit), svg.time(reg.p99, r.unit), count_of(reg.count or 0, "region"))
            end
          end
        end)
        if #rs > 0 then
          local doc = svg.lines({ title = name .. " median: " .. table.concat(g.names, "/"), virtual = virtual, x = x,
            series = rs, y_axis = function(hi) return svg.time_axis(hi, unit) end,
            note = "one launch's regions per point: no error bars", data = { axis = table.concat(g.names, "/"),
              metric = name } })
          out[#out + 1] = figure(ctx, "sweep-" .. table.concat(g.names, "-") .. "-" .. name, doc, nil)
        end
      end
    end
  end
  -- the results table
  out[#out + 1] = "<h2>Results</h2>\n"
  local head = { "#" }
  for _, n in ipairs(names) do head[#head + 1] = n end
  local instrumented = false -- time_ns is the plain kernel's; the instrumented one's and the overhead beside it
  local gbps, gflops = false, false
  for _, r in ipairs(rows) do
    if type(r.instrumented_time_ns) == "table" then instrumented = true end
    if type(r.gbps) == "number" then gbps = true end
    if type(r.gflops) == "number" then gflops = true end
  end
  for _, c in ipairs({ "status", time_label, "min", "max" }) do head[#head + 1] = c end
  if instrumented then head[#head + 1] = "instrumented"; head[#head + 1] = "overhead" end
  if gbps then head[#head + 1] = "GB/s" end
  if gflops then head[#head + 1] = "GFLOP/s" end
  head[#head + 1] = "entries"
  for _, n in ipairs(region_names) do head[#head + 1] = n .. " median" end
  local body = {}
  for _, r in ipairs(rows) do
    local line = { tostring(r.index or "") }
    for _, n in ipairs(names) do line[#line + 1] = value_text(r.point and r.point[n]) end
    local t = type(r.time_ns) == "table" and r.time_ns or {}
    line[#line + 1] = r.status == "ok" and "ok" or (tostring(r.status) .. (r.error and (" " .. tostring(r.error.code)
      .. ": " .. tostring(r.error.message):sub(1, 120)) or ""))
    line[#line + 1] = svg.time(t.median, "ns")
    line[#line + 1] = svg.time(t.min, "ns")
    line[#line + 1] = svg.time(t.max, "ns")
    if instrumented then
      local it = type(r.instrumented_time_ns) == "table" and r.instrumented_time_ns or {}
      line[#line + 1] = svg.time(it.median, "ns")
      line[#line + 1] = results.fmt_overhead(r.overhead)
    end
    if gbps then line[#line + 1] = type(r.gbps) == "number" and fmt("%.1f", r.gbps) or "-" end
    if gflops then line[#line + 1] = type(r.gflops) == "number" and fmt("%.1f", r.gflops) or "-" end
    line[#line + 1] = r.entries and svg.short(r.entries) or "-"
    local by = {}
    for _, g in ipairs(r.regions or {}) do by[g.name] = g end
    for _, n in ipairs(region_names) do
      line[#line + 1] = by[n] and svg.time(by[n].median, r.unit) or "-"
    end
    if r.status ~= "ok" then line.class = "failed" end
    body[#body + 1] = line
  end
  out[#out + 1] = html_table(head, body, "results")
  -- a stats run's counters (emu's exact totals of the user's code), a line per point
  local counted = {}
  for _, r in ipairs(rows) do
    local c = counters_text(r)
    if c then counted[#counted + 1] = { tostring(r.index or ""), point_text(names, r.point), c } end
  end
  if #counted > 0 then
    out[#out + 1] = "<h2>Counters</h2>\n"
    out[#out + 1] = html_table({ "#", "point", "emu's exact counters (the user's code)" }, counted, "counters")
  end
  return table.concat(out)
end

-- "412.3 GB/s (1.05 MB declared), 12.1 GFLOP/s", or nil
function throughput_text(r)
  local parts = {}
  if type(r.gbps) == "number" then
    parts[#parts + 1] = fmt("%s (%s bytes %s)", results.fmt_rate(r.gbps, "B"), svg.short(r.bytes or 0),
      r.bytes_source == "counted" and "counted by emu" or "declared")
  end
  if type(r.gflops) == "number" then
    parts[#parts + 1] = fmt("%s (%s flops)", results.fmt_rate(r.gflops, "FLOP"), svg.short(r.flops or 0))
  end
  return #parts > 0 and table.concat(parts, ", ") or nil
end

-- A stats run's top stall reasons ("stalls: long_scoreboard 80%, ..."; emu's, issue 34), or nil
function stall_text(r)
  if type(r.stalls) ~= "table" then return nil end
  local s = require("mgpu.stats").stall_text(r.stalls, 3)
  return s ~= "" and ("stalls: " .. esc(s)) or nil
end

-- A stats run's counters (emu's exact totals, the user's code only), or nil
function counters_text(r)
  local t = type(r.stats) == "table" and r.stats or nil
  if not t then return nil end
  local function n(k) return type(t[k]) == "number" and t[k] or 0 end
  local G = "l1tex__t_%s_pipe_lsu_mem_global_op_%s.sum"
  local parts = { fmt("%s warp instructions", svg.short(n("ptx__inst_executed.sum"))) }
  for _, op in ipairs({ { "ld", "loads" }, { "st", "stores" } }) do
    local req, sec = n(G:format("requests", op[1])), n(G:format("sectors", op[1]))
    if req > 0 then
      parts[#parts + 1] = fmt("global %s %s requests, %s sectors (%.1f a request)", op[2], svg.short(req),
        svg.short(sec), sec / req)
    end
  end
  local bc = n("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum")
    + n("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")
  if bc > 0 then parts[#parts + 1] = fmt("%s shared bank conflicts", svg.short(bc)) end
  local left = n("mgpu__inst_executed_instrumentation.sum")
  if left > 0 then parts[#parts + 1] = fmt("(%s instructions of the instrumentation left out)", svg.short(left)) end
  local stalls = stall_text(r)
  if stalls then parts[#parts + 1] = stalls end
  if type(r.stats_file) == "string" then parts[#parts + 1] = "per line: " .. r.stats_file end
  return table.concat(parts, "; ")
end

-- A results folder: facts, sweep, and points' sections.
function M.results_report(ctx, dir, opts)
  local man = manifest.read(dir)
  local rows = results.rows(dir)
  local out = {}
  local virtual = man.backend == "emu"
  out[#out + 1] = fmt("<h1>%s%s</h1>\n", esc(man.experiment), virtual and ' <span class="virtual">(emu: virtual time)</span>' or "")
  out[#out + 1] = manifest_facts(man, rows, dir)
  out[#out + 1] = M.sweep_section(ctx, dir, man, rows)
  -- the points drawn: --point N / all, else all when their traces are small
  local traced = {}
  local bytes = 0
  for _, r in ipairs(rows) do
    if r.status == "ok" and type(r.trace) == "string" then
      traced[#traced + 1] = r
      local f = io.open(dir .. "/" .. r.trace, "rb")
      if f then bytes = bytes + f:seek("end"); f:close() end
    end
  end
  local pick = {}
  local which = opts.point
  if which == "all" or (which == nil and bytes <= M.ALL_POINTS_BYTES) then
    pick = traced
  elseif which == nil then
    -- too much to draw all: the points in order while their traces fit the budget, at least the
    -- first (issue 35: a plain `report RUN` of a sweep of big traces drew no timeline at all)
    local used = 0
    for _, r in ipairs(traced) do
      local f = io.open(dir .. "/" .. r.trace, "rb")
      local size = 0
      if f then size = f:seek("end"); f:close() end
      if #pick > 0 and used + size > M.ALL_POINTS_BYTES then break end
      pick[#pick + 1], used = r, used + size
    end
  elseif which ~= nil then
    for _, r in ipairs(traced) do if r.index == which then pick[1] = r end end
    if #pick == 0 then
      local have = {}
      for n, r in ipairs(traced) do
        if n > 10 then have[#have + 1] = "..."; break end
        have[#have + 1] = tostring(r.index)
      end
      bad(fmt("--point %s: %s has no traced point %s (%s)", tostring(which), dir, tostring(which),
        #traced == 0 and "it has no traced points: run the experiment with instrument = \"warp\" or a profile"
        or ("its traced points: " .. table.concat(have, ", "))))
    end
  end
  local names = all_names(man.axes and require("mgpu.axes").from_manifest(man.axes, dir .. "/manifest.json") or {})
  if #traced > 0 then out[#out + 1] = "<h2>Points</h2>\n" end
  if #pick < #traced then -- the command as code, not in literal backticks
    out[#out + 1] = fmt('<ul class="notes"><li>%d of %d traced points drawn (their traces are %.0f MB together): '
      .. '<code>mgpu-harness report %s --point N</code> (or <code>--point all</code>) draws others</li></ul>\n',
      #pick, #traced, bytes / 1e6, esc(dir))
  end
  for _, r in ipairs(pick) do
    local title = fmt("point %s: %s", tostring(r.index), point_text(names, r.point))
    local sp = dir .. "/" .. (r.trace:gsub("%.trace%.json$", "") .. ".summary.json")
    local summary = files.exists(sp) and read_summary(sp) or
      (r.regions and { unit = r.unit, regions = r.regions, timeline = r.timeline }) or nil
    local t = type(r.time_ns) == "table" and r.time_ns or {}
    local pf = facts({
      { "launch time", t.median and fmt("median %s (min %s, max %s)%s", svg.time(t.median, "ns"), svg.time(t.min, "ns"),
        svg.time(t.max, "ns"), virtual and ", virtual" or "") .. (type(r.instrumented_time_ns) == "table" and
        " of the plain kernel" or "") },
      { "instrumented", type(r.instrumented_time_ns) == "table" and fmt("median %s: overhead %s (the traced launch)",
        svg.time(r.instrumented_time_ns.median, "ns"), results.fmt_overhead(r.overhead)) or nil },
      { "throughput", throughput_text(r) },
      { "counters", counters_text(r) },
      { "entries", r.entries and fmt("%s per trace (%d attempts)", svg.short(r.entries), #(r.attempts or {})) },
      { "trace", dir .. "/" .. r.trace },
    })
    local body = M.point_section(ctx, { id = "point-" .. tostring(r.index), title = title, trace = dir .. "/" .. r.trace,
      summary = summary, row = r, virtual = virtual, facts = pf })
    out[#out + 1] = fmt('<details%s id="point-%s"><summary>%s</summary>\n%s</details>\n', #pick == 1 and " open" or "",
      esc(tostring(r.index)), esc(title), body)
  end
  return page((man.experiment or "results") .. " - mgpu-harness report", table.concat(out))
end

-- A trace (and its summary): a point alone.
function M.trace_report(ctx, trace, summary_path)
  local summary = summary_path and read_summary(summary_path) or nil
  local title = trace
  local out = { fmt("<h1>%s</h1>\n", esc(title)) }
  local pf = facts({ { "trace", trace }, { "summary", summary_path or "none (figures from the trace alone)" } })
  local body, tr = M.point_section(ctx, { id = "point", title = trace, trace = trace, summary = summary, facts = pf })
  local o = tr.other or {}
  out[#out + 1] = facts({ { "generator", o.generator }, { "clock", o.clock_ghz and (fmt("%.4g GHz", o.clock_ghz)
    .. (o.clock and (": " .. o.clock) or "")) or (o.note or nil) }, { "grid", type(o.grid) == "table" and
    table.concat(o.grid, " x ") or nil }, { "block", type(o.block) == "table" and table.concat(o.block, " x ") or nil },
    { "scope", o.scope }, { "entries", o.entries_per_warpgroup and svg.short(o.entries_per_warpgroup) } })
  out[#out + 1] = body
  return page("mgpu-harness report: " .. trace, table.concat(out))
end

-- A comparison ----------------------------------------------------------------

local function pct(a, b)
  if type(a) ~= "number" or type(b) ~= "number" or a == 0 then return nil end
  return (b - a) / a * 100
end

-- "+12.3%", "-4.0%", "0%", "-"
local function pct_text(v)
  if v == nil then return "-" end
  if v == 0 then return "0%" end
  return fmt("%+.1f%%", v)
end

local function by_size(rows)
  table.sort(rows, function(a, b)
    if abs(a.value) ~= abs(b.value) then return abs(a.value) > abs(b.value) end
    return a.label < b.label
  end)
end

-- Bars for two region lists (one point's, or two summaries'): a bar per
-- region in both, flagged when its count changed; the rest as notes.
local function region_bars(bars, table_rows, notes_out, label, ra, rb, unit)
  local by = {}
  for _, g in ipairs(rb or {}) do by[g.name] = g end
  local seen = {}
  for _, g in ipairs(ra or {}) do
    seen[g.name] = true
    local h = by[g.name]
    if not h then
      notes_out[#notes_out + 1] = fmt("%s%s: only in the base run", label, g.name)
    else
      local v = pct(g.median, h.median)
      local flag = (g.count ~= h.count) and fmt("count %s -> %s", svg.short(g.count or 0), svg.short(h.count or 0)) or nil
      if v then
        bars[#bars + 1] = { label = label .. g.name, value = v, class = "bar-region", flag = flag,
          tip = fmt("%s%s median %s -> %s (%+.1f%%)%s", label, g.name, svg.time(g.median, unit), svg.time(h.median, unit), v,
            flag and ("; " .. flag) or "") }
      end
      table_rows[#table_rows + 1] = { label .. g.name, svg.time(g.median, unit), svg.time(h.median, unit),
        pct_text(v), "-", (g.count == h.count) and svg.short(g.count or 0) or
          (svg.short(g.count or 0) .. " -> " .. svg.short(h.count or 0)), class = flag and "flag" or nil }
    end
  end
  for _, h in ipairs(rb or {}) do
    if not seen[h.name] then notes_out[#notes_out + 1] = fmt("%s%s: only in the new run", label, h.name) end
  end
end

local function compare_figure(ctx, title, bars, virtual, subtitle, data)
  by_size(bars)
  if #bars == 0 then return notes({ "nothing to compare: no point or region is in both" }) end
  local doc = svg.hbars({ title = title, virtual = virtual, rows = bars, x_title = "change (new against base)",
    subtitle = subtitle, data = data })
  return figure(ctx, "compare", doc, "Sorted by the size of the change; red: slower, green: faster, grey: within the "
    .. "noise. Flagged in red on the left: regions whose count changed (their medians compare different work).")
end

function M.compare_folders(ctx, a, b)
  local ma, mb = manifest.read(a), manifest.read(b)
  if ma.experiment ~= mb.experiment then
    bad(fmt("%s is experiment %s, %s is %s: compare runs of one experiment", a, tostring(ma.experiment), b,
      tostring(mb.experiment)))
  end
  local rows_a = results.rows(a)
  local rows_b = results.rows(b)
  local names = all_names(ma.axes and require("mgpu.axes").from_manifest(ma.axes, a .. "/manifest.json") or {})
  local virtual = ma.backend == "emu" or mb.backend == "emu"
  local by = {}
  for _, r in ipairs(rows_b) do by[r.key] = r end
  local bars, trows, nts = {}, {}, {}
  local matched, npoints = 0, 0
  local seen = {}
  for _, r in ipairs(rows_a) do
    seen[r.key] = true
    local s = by[r.key]
    local label = (#names > 0 and point_text(names, r.point) or tostring(r.key)) .. " · "
    if not s then
      nts[#nts + 1] = fmt("%s: only in the base run", r.key)
    elseif r.status ~= "ok" or s.status ~= "ok" then
      nts[#nts + 1] = fmt("%s: %s -> %s", r.key, tostring(r.status), tostring(s.status))
    else
      matched = matched + 1
      local ta, tb = r.time_ns or {}, s.time_ns or {}
      local v = pct(ta.median, tb.median)
      if v then
        npoints = npoints + 1
        local noise = (ta.max or 0) - (ta.min or 0) + (tb.max or 0) - (tb.min or 0)
        local band = noise / ta.median * 100
        local noisy = v ~= 0 and abs(tb.median - ta.median) <= noise
        bars[#bars + 1] = { label = label .. "launch time", value = v, band = band, noise = noisy, class = "bar-time",
          tip = fmt("%slaunch time: median %s -> %s (%+.1f%%); noise %s (the spread both runs showed)%s", label,
            svg.time(ta.median, "ns"), svg.time(tb.median, "ns"), v, svg.time(noise, "ns"), noisy and ": within it" or "") }
        trows[#trows + 1] = { label .. "launch time", svg.time(ta.median, "ns"), svg.time(tb.median, "ns"),
          pct_text(v) .. (noisy and " (noise)" or ""), band > 0 and fmt("+-%.1f%%", band) or "none", "" }
      end
      if r.unit ~= s.unit then
        nts[#nts + 1] = fmt("%s: regions in %s and %s: not compared", r.key, tostring(r.unit), tostring(s.unit))
      else
        region_bars(bars, trows, nts, label, r.regions, s.regions, r.unit or "ns")
      end
    end
  end
  for _, s in ipairs(rows_b) do if not seen[s.key] then nts[#nts + 1] = fmt("%s: only in the new run", s.key) end end
  local nregion = 0
  for _, bar in ipairs(bars) do if bar.class == "bar-region" then nregion = nregion + 1 end end
  local out = { fmt("<h1>%s: %s -> %s</h1>\n", esc(ma.experiment), esc(a), esc(b)) }
  if ma.backend ~= mb.backend or ma.device ~= mb.device then
    nts[#nts + 1] = fmt("different devices (%s, %s): times are not comparable", tostring(ma.device), tostring(mb.device))
  end
  -- the verdict `compare --max-slowdown` would give, and whether the source changed (issue 35)
  local compare = require "mgpu.compare"
  local verdict = compare.verdict(compare.folders(a, b))
  local vl = { '<h2>Verdict</h2>\n<ul class="notes verdict">' }
  for _, l in ipairs(verdict.lines) do vl[#vl + 1] = "<li>" .. esc(l) .. "</li>" end
  vl[#vl + 1] = "</ul>\n"
  out[#out + 1] = table.concat(vl)
  out[#out + 1] = "<h2>Base</h2>\n" .. manifest_facts(ma, rows_a, a) .. "<h2>New</h2>\n" .. manifest_facts(mb, rows_b, b)
  out[#out + 1] = "<h2>Changes</h2>\n"
  out[#out + 1] = compare_figure(ctx, fmt("%s: %d points compared", ma.experiment, matched), bars, virtual,
    "grey band: the launch time's noise (max - min of both runs); region medians come from one launch each: no band",
    { points = npoints, regions = nregion, bars = #bars })
  out[#out + 1] = notes(nts)
  out[#out + 1] = html_table({ "point · what", "base", "new", "change", "noise", "count" }, trows, "changes")
  return page("compare " .. a .. " -> " .. b, table.concat(out))
end

function M.compare_summaries(ctx, a, b)
  local sa, sb = read_summary(a), read_summary(b)
  if sa.unit ~= sb.unit then bad(fmt("%s is in %s, %s in %s", a, tostring(sa.unit), b, tostring(sb.unit))) end
  local unit = sa.unit or "ns"
  local bars, trows, nts = {}, {}, {}
  region_bars(bars, trows, nts, "", sa.regions, sb.regions, unit)
  local ta, tb = sa.timeline, sb.timeline
  if type(ta) == "table" and type(tb) == "table" then
    local v = pct(ta.span, tb.span)
    if v then
      bars[#bars + 1] = { label = "span", value = v, class = "bar-span",
        tip = fmt("span %s -> %s (%+.1f%%)", svg.time(ta.span, unit), svg.time(tb.span, unit), v) }
      trows[#trows + 1] = { "span", svg.time(ta.span, unit), svg.time(tb.span, unit), pct_text(v), "-", "" }
    end
    for _, k in ipairs({ { "sm_done_min", "first SM done" }, { "sm_done_median", "median SM done" },
      { "sm_done_max", "last SM done" } }) do
      local x, y = ta[k[1]], tb[k[1]]
      if type(x) == "number" and type(y) == "number" then
        trows[#trows + 1] = { k[2], svg.time(x, unit), svg.time(y, unit), pct_text(pct(x, y)), "-", "" }
      end
    end
  end
  local nregion = 0
  for _, bar in ipairs(bars) do if bar.class == "bar-region" then nregion = nregion + 1 end end
  local out = { fmt("<h1>regions: %s -> %s</h1>\n", esc(a), esc(b)) }
  out[#out + 1] = facts({ { "base", a }, { "new", b }, { "unit", unit } })
  out[#out + 1] = compare_figure(ctx, "median change per region", bars, false,
    "region medians of one launch each: no noise band", { points = 1, regions = nregion, bars = #bars })
  out[#out + 1] = notes(nts)
  out[#out + 1] = html_table({ "region", "base median", "new median", "change", "noise", "count" }, trows, "changes")
  return page("compare " .. a .. " -> " .. b, table.concat(out))
end

-- The command -----------------------------------------------------------------

-- argv -> {inputs = {...}, out =, svg =, point =}
function M.parse_args(argv)
  local o = { inputs = {} }
  local seen = {}
  local i = 1
  argv = argv or {}
  while i <= #argv do
    local a = argv[i]
    local function value(name)
      i = i + 1
      if argv[i] == nil then bad("report: " .. a .. " needs a value\n" .. M.USAGE) end
      return options.arg("report", name or a, argv[i], seen)
    end
    if a == "-o" or a == "--out" then o.out = value("-o")
    elseif a == "--svg" then o.svg = value()
    elseif a == "--point" then
      local v = value()
      if v == "all" then o.point = "all" else
        o.point = tonumber(v)
        if not o.point or o.point ~= floor(o.point) or o.point < 1 then
          bad("report: --point takes a point's number (1, 2, ...) or all, not " .. v)
        end
      end
    elseif a == "--force" then o.force = true
    elseif a == "-h" or a == "--help" then o.help = true
    elseif a:sub(1, 1) == "-" and a ~= "-" then bad("report: unknown option " .. a .. "\n" .. M.USAGE)
    else o.inputs[#o.inputs + 1] = options.arg("report", "INPUT", a) end
    i = i + 1
  end
  return o
end

-- Makes the report; returns {html=, out=, figures=, kind=, stats=}.
function M.build(o)
  local ins = o.inputs
  if #ins < 1 or #ins > 2 then bad("report takes one or two inputs\n" .. M.USAGE) end
  local ctx = new_ctx()
  local kinds = {}
  for i, p in ipairs(ins) do kinds[i] = M.kind(p) end
  local html, kind, default_out
  if #ins == 1 then
    if kinds[1] == "results" then
      html, kind, default_out = M.results_report(ctx, ins[1], o), "results", ins[1] .. "/report.html"
    elseif kinds[1] == "trace" then
      html, kind = M.trace_report(ctx, ins[1], summary_beside(ins[1])), "point"
    else
      bad(ins[1] .. ": a region summary alone has no trace to draw: give its trace.json (the summary beside it is "
        .. "read), or two summaries to compare")
    end
  else
    local k = kinds[1] .. "+" .. kinds[2]
    if k == "results+results" then
      html, kind = M.compare_folders(ctx, ins[1], ins[2]), "compare"
    elseif k == "summary+summary" then
      html, kind = M.compare_summaries(ctx, ins[1], ins[2]), "compare"
    elseif k == "trace+summary" then
      html, kind = M.trace_report(ctx, ins[1], ins[2]), "point"
    else
      bad(fmt("report: %s (a %s) and %s (a %s): give two results folders or two summaries to compare, or a trace and "
        .. "its summary", ins[1], kinds[1], ins[2], kinds[2]))
    end
  end
  if o.point ~= nil and kind ~= "results" then bad("report: --point goes with a results folder") end
  return { html = html, out = o.out or default_out or "report.html", figures = ctx.figures, kind = kind,
    stats = ctx.stats }
end

-- What a report's file starts with (page() above): a file without it is not one this command made.
local REPORT_MARK = '<meta name="generator" content="mgpu-harness '

-- Refuses an output that is one of the files the report reads (the inputs, a results folder's
-- results.jsonl and manifest.json, a trace's summary beside it), and, without --force, an existing
-- file that is not a report (a bad_argument; nothing is written).
local function check_out(o, out)
  local reads = {}
  for _, p in ipairs(o.inputs) do
    reads[#reads + 1] = p
    for _, f in ipairs({ "results.jsonl", "manifest.json" }) do reads[#reads + 1] = p .. "/" .. f end
    reads[#reads + 1] = summary_beside(p)
  end
  for _, p in ipairs(reads) do
    if core.same_file(out, p) then
      bad(fmt("report: -o %s is %s, which the report reads: writing it would destroy it; nothing was written", out, p))
    end
  end
  local f = io.open(out, "rb")
  if not f then return end
  local head, _, errno = f:read(4096)
  f:close()
  if errno == 21 then bad(fmt("report: -o %s is a folder; nothing was written", out)) end
  if not o.force and (head or ""):find(REPORT_MARK, 1, true) == nil then
    bad(fmt("report: %s exists and is not a report this command made: it is left as it is (--force replaces it)", out))
  end
end

-- What a figure file ends with (a comment after its root element): one without it is not the report's.
local SVG_MARK = "<!-- mgpu-harness report figure -->"

-- Refuses (without --force) a --svg figure over an existing file that is not one of the
-- report's figures, before anything is written.
local function check_figures(o, figures)
  if not o.svg or o.force then return end
  for _, f in ipairs(figures) do
    local path = o.svg .. "/" .. f.file
    local h = io.open(path, "rb")
    if h then
      local size = h:seek("end")
      h:seek("set", math.max(0, size - 256))
      local tail = h:read(256) or ""
      h:close()
      if not tail:find(SVG_MARK, 1, true) then
        bad(fmt("report: %s exists and is not a figure this command made: it is left as it is (--force replaces it); "
          .. "nothing was written", path))
      end
    end
  end
end

-- Writes the report (and --svg figures); returns what M.build returned.
function M.write(o)
  local r = M.build(o)
  check_out(o, r.out)
  check_figures(o, r.figures)
  core.write_file(r.out, r.html)
  if o.svg then
    core.mkdir_p(o.svg)
    for _, f in ipairs(r.figures) do
      core.write_file(o.svg .. "/" .. f.file, '<?xml version="1.0" encoding="UTF-8"?>\n' .. f.doc:finish(true) .. "\n"
        .. SVG_MARK .. "\n")
    end
  end
  return r
end

-- `mgpu-harness report ...` (argv: the arguments after "report") -> exit status
function M.main(argv)
  local o = M.parse_args(argv)
  if o.help then
    print(M.USAGE)
    return 0
  end
  local t0 = os.clock()
  local r = M.write(o)
  local extra = {}
  for _, s in ipairs(r.stats) do
    extra[#extra + 1] = fmt("%d traces drawn as %d runs (%d merged)", s.traces, s.runs, s.merged)
  end
  print(fmt("report: %s (%.1f KB, %d figures%s%s) in %.1f s", r.out, #r.html / 1024, #r.figures,
    #extra > 0 and ": " or "", table.concat(extra, "; "), os.clock() - t0))
  if o.svg then print(fmt("figures: %d SVG files in %s", #r.figures, o.svg)) end
  return 0
end

return M
