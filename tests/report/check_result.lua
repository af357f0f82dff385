-- check_result.lua: `mgpu-harness check_result.lua RESULT KIND INPUT [INPUT2]`
-- checks what tests/report/check.js found in the browser (RESULT: its JSON)
-- against the data the report was made from: one inline script (the zoom), nothing external,
-- every figure drawn with a size; lanes = traces, runs and merged runs as
-- the figure states, SMs, legend; histogram bins = the region's count;
-- comparison bars = points x regions.  KIND: point, sweep, compare-folders,
-- compare-summaries.  Prints what it checked; exits 1 at the first mismatch.
local core = require "mgpu.core"
local files = require "mgpu.files"

local result_path, kind, in1, in2 = arg[1], arg[2], arg[3], arg[4]
local text = assert(files.read(result_path), "no result file " .. tostring(result_path))
local r = core.json_decode(text, result_path)
local failed = 0

local function check(what, got, want)
  if got == want then
    print(string.format("ok      %s: %s", what, tostring(got)))
  else
    failed = failed + 1
    print(string.format("FAILED  %s: got %s, expected %s", what, tostring(got), tostring(want)))
  end
end

check("result read", r.ok, true)
check("script errors", #(r.errors or {}), 0)
check("script elements in the report (the zoom's, inline)", r.scripts, 1)
check("scripts loaded from elsewhere", r.script_src, 0)
check("external references", r.external, 0)
check("figures with no drawn size", r.empty_svgs, 0)
check("labels crossing a figure's edge (" .. table.concat(r.clipped_examples or {}, " | ") .. ")", r.clipped_texts, 0)

local function check_timeline(t, summary, label)
  local tl = summary.timeline
  check(label .. " lanes = traces", t.lanes, tl.traces)
  check(label .. " data-traces", t.traces, tl.traces)
  check(label .. " SM groups", t.sm_groups, tl.sms)
  check(label .. " rects = runs", t.rects, t.runs)
  check(label .. " lanes' runs = runs", t.lane_runs, t.runs)
  check(label .. " merged runs", t.merged, t.merged_attr)
  check(label .. " legend keys = regions", t.legend, #summary.regions)
end

-- every timeline zooms: a quarter of the span shown, lanes wider, its own distinct ticks; reset
local function check_zoom(zs)
  for i, z in ipairs(zs or {}) do
    local label = "timeline " .. i .. " zoom"
    check(label .. ": the script is there", z.script, true)
    if z.script then
      check(label .. ": a quarter of the span shown", math.abs((z.shown or 0) - 0.25) < 1e-6, true)
      check(label .. ": transformed", (z.transform or "") ~= "", true)
      check(label .. ": lanes drawn wider", z.wider, true)
      check(label .. ": time ticks of the view (at least 3)", (z.ticks or 0) >= 3, true)
      check(label .. ": tick labels distinct", z.distinct, z.ticks)
      check(label .. ": the whole span's axis hidden", z.fixed_axis_hidden, true)
      check(label .. ": a reset shows the whole span", z.reset, true)
    end
  end
end
check_zoom(r.zoom)

local function check_histograms(hists, summary, label)
  local by = {}
  for _, h in ipairs(hists) do by[h.region] = h end
  for _, g in ipairs(summary.regions) do
    local h = by[g.name]
    check(label .. " histogram of " .. g.name, h ~= nil, true)
    if h then
      check(label .. " " .. g.name .. " bins sum = count", h.bins, g.count)
      check(label .. " " .. g.name .. " figure's count", h.count, g.count)
      check(label .. " " .. g.name .. " tick labels distinct", h.distinct_labels, h.labels)
      check(label .. " " .. g.name .. " labels inside the figure", h.clipped, 0)
    end
  end
end

if kind == "point" then
  local summary = files.read_json(in2)
  check("timelines", #r.timelines, 1)
  check_timeline(r.timelines[1], summary, "timeline")
  check("histograms", #r.histograms, #summary.regions)
  check_histograms(r.histograms, summary, "")
elseif kind == "sweep" then
  local rows = {}
  for line in io.lines(in1 .. "/results.jsonl") do
    local row = core.json_decode(line)
    if row.status == "ok" and row.trace then rows[#rows + 1] = row end
  end
  table.sort(rows, function(a, b) return a.index < b.index end)
  check("timelines = traced points", #r.timelines, #rows)
  local nhist = 0
  for i, row in ipairs(rows) do
    local summary = files.read_json(in1 .. "/" .. row.trace:gsub("%.trace%.json$", ".summary.json"))
    if r.timelines[i] then check_timeline(r.timelines[i], summary, "point " .. row.index) end
    local hs = {}
    for k = nhist + 1, nhist + #summary.regions do hs[#hs + 1] = r.histograms[k] end
    nhist = nhist + #summary.regions
    check_histograms(hs, summary, "point " .. row.index)
  end
  local man = files.read_json(in1 .. "/manifest.json")
  local axes = 0
  for _, g in ipairs(man.axes) do if #g.rows > 1 then axes = axes + 1 end end
  local regions = #files.read_json(in1 .. "/" .. rows[1].trace:gsub("%.trace%.json$", ".summary.json")).regions
  local rates = (rows[1].gbps and 1 or 0) + (rows[1].gflops and 1 or 0) -- GB/s and GFLOP/s figures
  check("sweep figures = axes x (time + regions + rates)", r.lines, axes * (1 + regions + rates))
  if man.backend == "emu" then check("every figure marked virtual", r.virtual, r.svgs) end
elseif kind == "compare-folders" then
  local function latest(dir)
    local t = {}
    for line in io.lines(dir .. "/results.jsonl") do
      local row = core.json_decode(line)
      t[row.key] = row
    end
    return t
  end
  local a, b = latest(in1), latest(in2)
  local points, regions = 0, 0
  for key, ra in pairs(a) do
    local rb = b[key]
    if rb and ra.status == "ok" and rb.status == "ok" then
      points = points + 1
      local names = {}
      for _, g in ipairs(rb.regions or {}) do names[g.name] = true end
      for _, g in ipairs(ra.regions or {}) do if names[g.name] then regions = regions + 1 end end
    end
  end
  check("comparison figures", #r.bars, 1)
  check("launch-time bars = points", r.bars[1].time_bars, points)
  check("region bars = points x regions", r.bars[1].region_bars, regions)
elseif kind == "compare-summaries" then
  local a, b = files.read_json(in1), files.read_json(in2)
  local names, regions = {}, 0
  for _, g in ipairs(b.regions) do names[g.name] = true end
  for _, g in ipairs(a.regions) do if names[g.name] then regions = regions + 1 end end
  check("comparison figures", #r.bars, 1)
  check("region bars = regions in both", r.bars[1].region_bars, regions)
else
  print("unknown kind " .. tostring(kind))
  os.exit(2)
end
print(string.format("render: loaded in %.0f ms, first frame after %.0f ms (%d figures, %d hover titles)", r.load_ms or -1,
  r.paint_ms or -1, r.svgs or 0, r.titles or 0))
if failed > 0 then
  print(failed .. " checks failed")
  os.exit(1)
end
