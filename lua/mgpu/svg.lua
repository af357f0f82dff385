-- mgpu.svg: the harness's own SVG drawing, for `mgpu-harness report`.  No
-- charting library fits a C/Lua tool that must work offline, and the figures
-- are few and fixed, so this one module draws them all: a document builder
-- (escaped text, numbers written short), scales and round ticks, axes, a
-- legend, and the four chart kinds the report uses (lines with error bars,
-- histogram, horizontal bars around zero, stacked areas).  The timeline is
-- drawn by mgpu.report_trace with the same builder.  Every mark that stands
-- for a value carries a <title> with the exact value: the browser shows it on
-- hover, so the figures need no script.
local M = {}

local floor, ceil, abs, log, max, min = math.floor, math.ceil, math.abs, math.log, math.max, math.min
local fmt = string.format

-- The report's colours: Tableau 10, then darker and lighter turns of it.
M.PALETTE = { "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
  "#bab0ac" }
local EXTRA = { "#2f4b7c", "#b35806", "#a50f15", "#3f8f8a", "#2b7a2b", "#b8960c", "#7a4f76", "#d6616b", "#6b4c35",
  "#7f7f7f" }

-- The colour of the i-th name (1-based).
function M.color(i)
  local n = #M.PALETTE
  if i <= n then return M.PALETTE[i] end
  return EXTRA[(i - n - 1) % #EXTRA + 1]
end

-- Text for XML: & < > " escaped (attribute values and element text alike).
local ESC = { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" }
function M.esc(s)
  return (tostring(s):gsub('[&<>"]', ESC))
end
local esc = M.esc

-- A coordinate: at most 2 decimals, no trailing zeros ("12", "12.5", "-0.25").
local function num(v)
  if v ~= v or v == math.huge or v == -math.huge then v = 0 end
  local s = fmt("%.2f", v)
  s = s:gsub("0+$", ""):gsub("%.$", "")
  if s == "-0" then s = "0" end
  return s
end
M.num = num

-- A number for people: 3 significant digits, no exponent for everyday sizes.
function M.short(v)
  if type(v) ~= "number" then return tostring(v) end
  if v == floor(v) and abs(v) < 1e15 then return fmt("%.0f", v) end
  local a = abs(v)
  if a >= 100 then return fmt("%.0f", v) end
  if a >= 10 then return (fmt("%.1f", v):gsub("%.0$", "")) end
  if a >= 1 then return (fmt("%.2f", v):gsub("0$", ""):gsub("%.0$", "")) end
  if a == 0 then return "0" end
  return (fmt("%.3g", v))
end

-- A time in `unit` ("ns", "cycles", or anything else printed after the value):
-- "812 ns", "1.25 us", "3.10 ms", "1.20 s"; cycles as "12,345 cycles" without
-- the separator ("12345 cycles").
function M.time(v, unit)
  if v == nil then return "-" end
  if unit ~= "ns" then return M.short(v) .. " " .. tostring(unit or "") end
  local a = abs(v)
  if a < 1e3 then return M.short(v) .. " ns" end
  if a < 1e6 then return fmt("%.2f us", v / 1e3) end
  if a < 1e9 then return fmt("%.2f ms", v / 1e6) end
  return fmt("%.2f s", v / 1e9)
end

-- Tick labels of a time axis: the unit chosen once for the whole axis.
function M.time_ticks_unit(hi, unit)
  if unit ~= "ns" then return 1, unit end
  if hi >= 1e9 then return 1e9, "s" end
  if hi >= 1e6 then return 1e6, "ms" end
  if hi >= 1e4 then return 1e3, "us" end
  return 1, "ns"
end

-- Tick labels of a time axis in one unit (issue 35: the zero tick said "0 ns" on a us axis).
function M.time_axis(hi, unit)
  local div, u = M.time_ticks_unit(hi, unit)
  return function(v) return M.short(v / div) .. " " .. tostring(u) end
end

-- Tick labels of a rate axis (values in G<unit>/s, as results.fmt_rate takes them) in one
-- prefix chosen from its top tick: "0 TFLOP/s", "500 TFLOP/s", "1000 TFLOP/s".
function M.rate_axis(hi, unit)
  local k, p = 1, "G"
  if hi >= 1000 then k, p = 1 / 1000, "T" elseif hi < 1 then k, p = 1000, "M" end
  return function(v) return M.short(v * k) .. " " .. p .. (unit or "B") .. "/s" end
end

-- Round tick values covering [lo, hi], about n of them.
function M.ticks(lo, hi, n)
  n = n or 5
  if hi <= lo then hi = lo + 1 end
  local span = hi - lo
  local step = 10 ^ floor(log(span / n, 10))
  local err = span / n / step
  if err >= 7.5 then step = step * 10 elseif err >= 3.5 then step = step * 5 elseif err >= 1.5 then step = step * 2 end
  local out = {}
  local first = ceil(lo / step - 1e-9)
  for k = first, first + 1000 do
    local v = k * step
    if v > hi + step * 1e-9 then break end
    out[#out + 1] = v
  end
  return out, step
end

-- Round ticks from at or below lo to at or above hi (an axis whose ends are
-- ticks, so that no value lies past its last one).
function M.cover_ticks(lo, hi, n)
  local t, step = M.ticks(lo, hi, n)
  if #t == 0 or t[1] > lo + step * 1e-9 then table.insert(t, 1, (#t > 0 and t[1] or math.floor(lo / step) * step) - step) end
  while t[#t] < hi - step * 1e-9 do t[#t + 1] = t[#t] + step end
  return t, step
end

-- A linear scale: maps [d0, d1] to [r0, r1].
function M.linear(d0, d1, r0, r1)
  if d1 == d0 then d1 = d0 + 1 end
  local k = (r1 - r0) / (d1 - d0)
  return function(v) return r0 + (v - d0) * k end
end

-- A log scale (base 2 ticks at powers of two when the range allows).
function M.logscale(d0, d1, r0, r1)
  local l0, l1 = log(d0), log(d1)
  if l1 == l0 then l1 = l0 + 1 end
  local k = (r1 - r0) / (l1 - l0)
  return function(v) return r0 + (log(max(v, 1e-300)) - l0) * k end
end

-- Powers of ten (1, 2, 5 between when few) within [lo, hi] for a log axis.
function M.log_ticks(lo, hi)
  local out = {}
  local e0, e1 = floor(log(lo, 10)), ceil(log(hi, 10))
  local mult = (e1 - e0 <= 2) and { 1, 2, 5 } or { 1 }
  for e = e0, e1 do
    for _, m in ipairs(mult) do
      local v = m * 10 ^ e
      if v >= lo * (1 - 1e-9) and v <= hi * (1 + 1e-9) then out[#out + 1] = v end
    end
  end
  return out
end

-- The document builder ------------------------------------------------------

local Doc = {}
Doc.__index = Doc

-- A figure of w x h px.  opts.class: the <svg>'s class; opts.label: its
-- aria-label (what the figure shows); opts.data: {name = value} data-*
-- attributes on the <svg> (the tests read them).
function M.new(w, h, opts)
  opts = opts or {}
  return setmetatable({ w = w, h = h, parts = {}, n = 0, opts = opts }, Doc)
end

function Doc:raw(s)
  local n = self.n + 1
  self.parts[n] = s
  self.n = n
end

-- Attributes from a table (in sorted key order, so the output is stable).
local function attrs(t)
  if not t then return "" end
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  local out = {}
  for i, k in ipairs(keys) do
    local v = t[k]
    if type(v) == "number" then v = num(v) end
    out[i] = fmt(' %s="%s"', k, esc(v))
  end
  return table.concat(out)
end
M.attrs = attrs

local function titled(self, open, title, close)
  if title then
    self:raw(open .. "><title>" .. esc(title) .. "</title>" .. close)
  else
    self:raw(open .. "/>")
  end
end

function Doc:rect(x, y, w, h, a, title)
  titled(self, fmt('<rect x="%s" y="%s" width="%s" height="%s"%s', num(x), num(y), num(max(w, 0)), num(max(h, 0)),
    attrs(a)), title, "</rect>")
end

function Doc:line(x1, y1, x2, y2, a, title)
  titled(self, fmt('<line x1="%s" y1="%s" x2="%s" y2="%s"%s', num(x1), num(y1), num(x2), num(y2), attrs(a)), title,
    "</line>")
end

function Doc:circle(x, y, r, a, title)
  titled(self, fmt('<circle cx="%s" cy="%s" r="%s"%s', num(x), num(y), num(r), attrs(a)), title, "</circle>")
end

function Doc:path(d, a, title)
  titled(self, fmt('<path d="%s"%s', d, attrs(a)), title, "</path>")
end

-- Text at (x, y); a.anchor: "start" (default), "middle", "end".
function Doc:text(x, y, s, a, title)
  a = a or {}
  local extra = {}
  for k, v in pairs(a) do if k ~= "anchor" then extra[k] = v end end
  if a.anchor and a.anchor ~= "start" then extra["text-anchor"] = a.anchor end
  local body = esc(s)
  if title then body = "<title>" .. esc(title) .. "</title>" .. body end
  self:raw(fmt('<text x="%s" y="%s"%s>%s</text>', num(x), num(y), attrs(extra), body))
end

function Doc:open(a, title)
  self:raw("<g" .. attrs(a) .. ">" .. (title and ("<title>" .. esc(title) .. "</title>") or ""))
end

function Doc:close() self:raw("</g>") end

-- The style every figure carries (inline in the report and in --svg files
-- alike, so a standalone SVG looks the same).
M.STYLE = "text{font-family:DejaVu Sans,Verdana,Arial,sans-serif;font-size:11px;fill:#222}"
  .. ".ttl{font-size:13px;font-weight:bold}.note{font-size:10px;fill:#666}.ax{stroke:#444;stroke-width:1;fill:none}"
  .. ".grid{stroke:#e4e4e4;stroke-width:1}.virtual{fill:#8a4b00;font-weight:bold}"

-- The figure as text.  standalone: with the XML namespace (an .svg file);
-- inline in HTML it needs none.
function Doc:finish(standalone)
  local o = self.opts
  local a = { width = self.w, height = self.h, viewBox = "0 0 " .. num(self.w) .. " " .. num(self.h),
    class = o.class, role = "img", ["aria-label"] = o.label }
  for k, v in pairs(o.data or {}) do a["data-" .. k] = v end
  local head = "<svg" .. (standalone and ' xmlns="http://www.w3.org/2000/svg"' or "") .. attrs(a) .. ">"
  local parts = { head, "<style>" .. M.STYLE .. "</style>",
    fmt('<rect x="0" y="0" width="%s" height="%s" fill="#fff"/>', num(self.w), num(self.h)) }
  parts[#parts + 1] = table.concat(self.parts, "\n", 1, self.n)
  parts[#parts + 1] = "</svg>"
  return table.concat(parts, "\n")
end

-- Pieces every chart shares ---------------------------------------------------

-- Title at the top left and, when virtual, the "virtual time (emu)" mark at
-- the top right: emu's times are deterministic cycles, never GPU timings.
function M.heading(doc, title, virtual)
  doc:text(10, 18, title, { class = "ttl" })
  if virtual then
    doc:text(doc.w - 10, 18, doc.w < 700 and "emu: virtual time" or "virtual time (emu): not GPU timings",
      { anchor = "end", class = "virtual" })
  end
end

-- A legend row: {name, color} swatches from (x, y) to the right, wrapping
-- at the figure's width; returns the y below it.
function M.legend(doc, x, y, items, a)
  local x0 = x
  doc:open({ class = "legend" })
  for _, it in ipairs(items) do
    local w = 18 + 7 * #it.name
    if x + w > doc.w - 10 and x > x0 then x, y = x0, y + 16 end
    doc:open(a and { class = a } or { class = "key" })
    doc:rect(x, y - 9, 11, 11, { fill = it.color, stroke = it.stroke })
    doc:text(x + 15, y, it.name)
    doc:close()
    x = x + w + 12
  end
  doc:close()
  return y + 16
end

-- A left y axis with grid lines: ticks {v...}, scale sy, label fn.
function M.y_axis(doc, x0, x1, sy, ticks, label, title, ty)
  for _, v in ipairs(ticks) do
    local y = sy(v)
    doc:line(x0, y, x1, y, { class = "grid" })
    doc:text(x0 - 4, y + 4, label(v), { anchor = "end" })
  end
  doc:line(x0, sy(ticks[1]), x0, sy(ticks[#ticks]), { class = "ax" })
  if title then doc:text(x0 - 40, ty, title, { class = "note" }) end
end

-- A bottom x axis at y: ticks, scale sx, label fn, title under it.
-- A tick label's width in px (11 px DejaVu Sans: about 6.6 px a character).
function M.text_width(s) return 6.6 * #tostring(s) end

-- Labels are never repeated, never overlap and never cross the figure's edge (issue 24): a tick
-- whose label equals or would touch the previous one's is drawn without a label, and a label
-- near an edge is moved inside it.
function M.x_axis(doc, y, sx, ticks, label, title, x0, x1)
  doc:line(x0, y, x1, y, { class = "ax" })
  local prev_text, prev_right = nil, -math.huge
  for _, v in ipairs(ticks) do
    local x = sx(v)
    doc:line(x, y, x, y + 4, { class = "ax" })
    local text = label(v)
    local half = M.text_width(text) / 2
    local tx = min(max(x, half + 2), doc.w - half - 2)
    if text ~= prev_text and tx - half >= prev_right + 4 then
      doc:text(tx, y + 15, text, { anchor = "middle", class = "xt" })
      prev_text, prev_right = text, tx + half
    end
  end
  if title then doc:text((x0 + x1) / 2, y + 29, title, { anchor = "middle", class = "note" }) end
end

-- Lines against an axis -------------------------------------------------------
-- spec: title, virtual, x = {kind = "linear"|"log"|"band", labels = {...} (band),
-- title}, y_title, y_fmt (value -> text), series = {{name=, color=,
-- points = {{x=, y=, lo=, hi=, tip=}}}}, note.  Error bars from lo to hi.
function M.lines(spec)
  local W, H = spec.width or 400, spec.height or 280
  local doc = M.new(W, H, { class = "chart lines", label = spec.title, data = spec.data })
  M.heading(doc, spec.title, spec.virtual)
  local ly = 36
  if #spec.series > 1 then
    local items = {}
    for _, s in ipairs(spec.series) do items[#items + 1] = { name = s.name, color = s.color } end
    ly = M.legend(doc, 62, 36, items)
  end
  local L, R, T, B = 62, W - 16, ly + 4, H - 52
  local ylo, yhi = 0, 0
  local yfmt = spec.y_fmt or M.short
  local xs = {}
  for _, s in ipairs(spec.series) do
    for _, p in ipairs(s.points) do
      yhi = max(yhi, p.hi or p.y, p.y)
      xs[#xs + 1] = p.x
    end
  end
  if yhi <= 0 then yhi = 1 end
  local yt = M.cover_ticks(ylo, yhi * 1.05, 4)
  if spec.y_axis then yfmt = spec.y_axis(yt[#yt]) end -- one unit for the whole axis
  -- the left margin holds the widest tick label (issue 35: "1200 TFLOP/s" was cut to "00 TFLOP/s")
  for _, v in ipairs(yt) do L = max(L, M.text_width(yfmt(v)) + 8) end
  local sy = M.linear(yt[1], yt[#yt], B, T)
  M.y_axis(doc, L, R, sy, yt, yfmt, spec.y_title, T - 6)
  local sx, xt, xlab
  local xk = spec.x.kind
  if xk == "band" then
    local n = #spec.x.labels
    sx = function(i) return L + (i - 0.5) * (R - L) / n end
    xt, xlab = {}, function(i) return spec.x.labels[i] end
    for i = 1, n do xt[i] = i end
  else
    local lo, hi = math.huge, -math.huge
    for _, v in ipairs(xs) do lo, hi = min(lo, v), max(hi, v) end
    if lo == hi then lo, hi = lo - 1, hi + 1 end
    local pad = (xk == "log") and 1.08 or 0
    if xk == "log" then
      sx = M.logscale(lo / pad, hi * pad, L, R)
      xt = {}
      for _, v in ipairs(spec.x.values) do xt[#xt + 1] = v end
    else
      local margin = (hi - lo) * 0.05
      sx = M.linear(lo - margin, hi + margin, L, R)
      xt = spec.x.values or M.ticks(lo, hi, 5)
    end
    xlab = spec.x.fmt or M.short
  end
  M.x_axis(doc, B, sx, xt, xlab, spec.x.title, L, R)
  -- series with equal values stay visible (issue 24): the first is drawn widest, each later one
  -- narrower and dashed over it, so lines that coincide show every colour
  local ns = #spec.series
  for si, s in ipairs(spec.series) do
    doc:open({ class = "series", ["data-name"] = s.name })
    local d = {}
    for i, p in ipairs(s.points) do d[#d + 1] = (i == 1 and "M" or "L") .. num(sx(p.x)) .. " " .. num(sy(p.y)) end
    local width = 2 + 2 * (ns - si)
    local a = { fill = "none", stroke = s.color, ["stroke-width"] = min(width, 8) }
    if si > 1 then a["stroke-dasharray"] = fmt("%d %d", 6 + 2 * si, 3 + si) end
    if #d > 1 then doc:path(table.concat(d, " "), a) end
    for _, p in ipairs(s.points) do
      local x = sx(p.x)
      if p.lo and p.hi and p.hi > p.lo then
        doc:path(fmt("M%s %sV%sM%s %sH%sM%s %sH%s", num(x), num(sy(p.lo)), num(sy(p.hi)), num(x - 4), num(sy(p.lo)),
          num(x + 4), num(x - 4), num(sy(p.hi)), num(x + 4)), { stroke = s.color, fill = "none", class = "errbar" })
      end
      doc:circle(x, sy(p.y), min(3.5 + 1.5 * (ns - si), 7), { fill = s.color, class = "pt" }, p.tip)
    end
    doc:close()
  end
  if spec.note then doc:text(L, H - 6, spec.note, { class = "note" }) end
  return doc
end

-- A histogram -----------------------------------------------------------------
-- spec: title, virtual, color, bins = {{lo=, hi=, count=}}, log (x on a log
-- scale), x_fmt, marks = {{v=, name=}} (vertical dashed lines: median, p99),
-- data (attributes on the <svg>).
function M.histogram(spec)
  local W, H = spec.width or 420, spec.height or 230
  local doc = M.new(W, H, { class = "chart histogram", label = spec.title, data = spec.data })
  M.heading(doc, spec.title, spec.virtual)
  local L, R, T, B = 52, W - 14, 40, H - 42
  local bins = spec.bins
  local cmax = 1
  for _, b in ipairs(bins) do cmax = max(cmax, b.count) end
  local yt = M.cover_ticks(0, cmax, 4)
  local sy = M.linear(0, yt[#yt], B, T)
  M.y_axis(doc, L, R, sy, yt, M.short, "regions", T - 8)
  local lo, hi = bins[1].lo, bins[#bins].hi
  local sx, xt
  if spec.log then
    sx = M.logscale(lo, hi, L, R)
    xt = M.log_ticks(lo, hi)
    if #xt < 2 then xt = { lo, hi } end
  else
    sx = M.linear(lo, hi, L, R)
    xt = M.ticks(lo, hi, 5)
    local kept = {}
    for _, v in ipairs(xt) do if v >= lo and v <= hi then kept[#kept + 1] = v end end
    xt = kept
  end
  M.x_axis(doc, B, sx, xt, spec.x_fmt or M.short, spec.x_title, L, R)
  doc:open({ class = "bins" })
  for _, b in ipairs(bins) do
    local x0, x1 = sx(b.lo), sx(b.hi)
    local y = sy(b.count)
    doc:rect(x0 + 0.5, y, max(x1 - x0 - 1, 0.6), B - y, { fill = spec.color, class = "bin", ["data-count"] = b.count },
      b.tip)
  end
  doc:close()
  for i, m in ipairs(spec.marks or {}) do
    local x = sx(m.v)
    doc:line(x, T, x, B, { stroke = "#222", ["stroke-dasharray"] = "4 3", class = "mark" }, m.tip)
    -- right of the line, or left of it where the figure ends (never clipped)
    local w = 6 * #m.name
    if x + 3 + w <= W - 2 then doc:text(x + 3, T + 10 + 12 * (i - 1), m.name, { class = "note marklabel" })
    else doc:text(x - 3, T + 10 + 12 * (i - 1), m.name, { class = "note marklabel", anchor = "end" }) end
  end
  return doc
end

-- Horizontal bars around zero -------------------------------------------------
-- spec: title, virtual, rows = {{label=, value= (percent), band= (percent,
-- the noise: drawn as a grey band +-band around zero), flag= (text shown
-- after the label, in red), class=, tip=}}, x_title.
function M.hbars(spec)
  local rows = spec.rows
  local W = spec.width or 900
  local rh = 18
  local label_w = 8
  for _, r in ipairs(rows) do label_w = max(label_w, 6.2 * #r.label + (r.flag and 6.2 * (#r.flag + 2) or 0)) end
  label_w = min(label_w + 10, W * 0.5)
  local T = 52
  local H = T + rh * #rows + 50
  local doc = M.new(W, H, { class = "chart hbars", label = spec.title, data = spec.data })
  M.heading(doc, spec.title, spec.virtual)
  doc:text(10, 34, spec.subtitle or "", { class = "note" })
  local L, R = label_w + 10, W - 70
  local lo, hi = 0, 0
  for _, r in ipairs(rows) do
    lo, hi = min(lo, r.value, -(r.band or 0)), max(hi, r.value, r.band or 0)
  end
  if hi - lo < 1 then hi, lo = hi + 0.5, lo - 0.5 end
  local xt = M.cover_ticks(lo, hi, 6)
  local sx = M.linear(xt[1], xt[#xt], L, R)
  local B = T + rh * #rows
  for _, v in ipairs(xt) do
    doc:line(sx(v), T - 4, sx(v), B, { class = "grid" })
  end
  M.x_axis(doc, B, sx, xt, function(v) return M.short(v) .. "%" end, spec.x_title, L, R)
  local x0 = sx(0)
  for i, r in ipairs(rows) do
    local y = T + (i - 1) * rh
    doc:open({ class = "row " .. (r.class or "bar") })
    if r.band and r.band > 0 then
      doc:rect(sx(-r.band), y + 1, sx(r.band) - sx(-r.band), rh - 2, { fill = "#dcdcdc", class = "band" },
        fmt("noise band: +-%.1f%%", r.band))
    end
    local color = r.color or ((r.noise or r.value == 0) and "#9a9a9a" or (r.value > 0 and "#d1495b" or "#2e8b57"))
    local xv = sx(r.value)
    doc:rect(min(x0, xv), y + 4, max(abs(xv - x0), 1), rh - 8, { fill = color, class = "bar", ["data-value"] = r.value },
      r.tip)
    doc:text(L - 6, y + rh - 5, r.label, { anchor = "end" })
    if r.flag then doc:text(6, y + rh - 5, r.flag, { fill = "#c00000", class = "flag" }, r.flag_tip) end
    local vt = (r.value == 0 and "0%" or ((r.value > 0 and "+" or "") .. fmt("%.1f%%", r.value))) .. (r.noise and " (noise)" or "")
    doc:text(max(xv, x0) + 4, y + rh - 5, vt, { class = "note" })
    doc:close()
  end
  doc:line(x0, T - 4, x0, B, { class = "ax" })
  return doc
end

-- Stacked areas ---------------------------------------------------------------
-- spec: title, virtual, x0, dx (each value i covers [x0 + (i-1)dx, x0 + i dx)),
-- layers = {{name=, color=, values = {...}, tip=}}, x_fmt, x_title, y_title,
-- width, left (the plot's left edge, to line up with the timeline).
function M.stacked(spec)
  local W, H = spec.width or 1200, spec.height or 220
  local doc = M.new(W, H, { class = "chart stacked", label = spec.title, data = spec.data })
  M.heading(doc, spec.title, spec.virtual)
  local items = {}
  for _, l in ipairs(spec.layers) do items[#items + 1] = { name = l.name, color = l.color } end
  local ly = M.legend(doc, spec.left or 60, 36, items)
  local L, R, T, B = spec.left or 60, spec.right or (W - 20), ly + 2, H - 40
  local n = 0
  for _, l in ipairs(spec.layers) do n = max(n, #l.values) end
  local top = {}
  for i = 1, n do
    local s = 0
    for _, l in ipairs(spec.layers) do s = s + (l.values[i] or 0) end
    top[i] = s
  end
  local ymax = 0
  for i = 1, n do ymax = max(ymax, top[i]) end
  if ymax <= 0 then ymax = 1 end
  local yt = M.cover_ticks(0, ymax, 4)
  local sy = M.linear(0, yt[#yt], B, T)
  M.y_axis(doc, L, R, sy, yt, M.short, spec.y_title, T - 4)
  local xend = spec.x0 + n * spec.dx
  local sx = M.linear(spec.x0, xend, L, R)
  local xt = spec.x_ticks or M.ticks(spec.x0, xend, 8)
  M.x_axis(doc, B, sx, xt, spec.x_fmt or M.short, spec.x_title, L, R)
  local base = {}
  for i = 1, n do base[i] = 0 end
  -- a step outline: the top edge left to right, the bottom edge back; a
  -- level that stays within 0.01 px of the last is not repeated
  local function steps(ys, forward)
    local out, last = {}, nil
    local a, b, s = 1, n, 1
    if not forward then a, b, s = n, 1, -1 end
    for i = a, b, s do
      local xa, xb = sx(spec.x0 + (i - 1) * spec.dx), sx(spec.x0 + i * spec.dx)
      if not forward then xa, xb = xb, xa end
      local y = num(ys[i])
      if y ~= last then
        out[#out + 1] = "L" .. num(xa) .. " " .. y
        last = y
      end
      if i == b or num(ys[i + s]) ~= y then out[#out + 1] = "L" .. num(xb) .. " " .. y end
    end
    return table.concat(out)
  end
  for _, l in ipairs(spec.layers) do
    local top_y, bot_y = {}, {}
    for i = 1, n do
      local v = l.values[i] or 0
      bot_y[i] = sy(base[i])
      base[i] = base[i] + v
      top_y[i] = sy(base[i])
    end
    local d = steps(top_y, true) .. steps(bot_y, false)
    doc:path("M" .. d:sub(2) .. "Z", { fill = l.color, ["fill-opacity"] = 0.85, class = "area",
      ["data-name"] = l.name }, l.tip)
  end
  if spec.note then doc:text(L, H - 6, spec.note, { class = "note" }) end
  return doc
end

return M
