-- report_spec.lua: `mgpu-harness report` (mgpu.report, mgpu.report_trace,
-- mgpu.svg): a point, a large trace merged below a pixel, a sweep, two
-- comparisons, --svg files; the HTML's and SVGs' structure (well-formed XML,
-- lanes = traces, legend, labels, histogram bins = region counts, bars =
-- points x regions, nothing loaded from elsewhere); bad inputs named.
local h = require "helpers"
local core = require "mgpu.core"
local report = require "mgpu.report"
local rt = require "mgpu.report_trace"
local svg = require "mgpu.svg"

-- Plain-text occurrences of s in text.
local function count(text, s)
  local n, at = 0, 1
  while true do
    local i = text:find(s, at, true)
    if not i then return n end
    n, at = n + 1, i + #s
  end
end

-- A well-formedness check of an XML text (what an SVG file must be): one
-- root, tags balanced and named alike, attributes quoted and not repeated,
-- no raw < or stray & in text or attribute values.  Returns true or
-- nil, "why (at byte N)".
local ENTITY = { amp = true, lt = true, gt = true, quot = true, apos = true }
local function entities_ok(s)
  for ref in s:gmatch("&([^;%s<&]*);?") do
    if not (ENTITY[ref] or ref:match("^#%d+$") or ref:match("^#x%x+$")) then return false end
  end
  -- every & starts a reference that ends with ;
  for i in s:gmatch("()&") do
    if not s:find("^&[#%w]+;", i) then return false end
  end
  return true
end

local function xml_check(doc)
  local s = doc:gsub("^%s*<%?xml[^>]*%?>%s*", "")
  local stack, roots, pos = {}, 0, 1
  while pos <= #s do
    local lt = s:find("<", pos, true)
    local text = s:sub(pos, (lt or #s + 1) - 1)
    if not entities_ok(text) then return nil, "bad & in text at byte " .. pos end
    if text:find("%S") and #stack == 0 then return nil, "text outside the root at byte " .. pos end
    if not lt then break end
    if s:sub(lt, lt + 3) == "<!--" then
      local e = s:find("-->", lt + 4, true)
      if not e then return nil, "unclosed comment at byte " .. lt end
      pos = e + 3
    else
      local gt = s:find(">", lt, true)
      if not gt then return nil, "unclosed tag at byte " .. lt end
      local tag = s:sub(lt + 1, gt - 1)
      if tag:find("<", 1, true) then return nil, "< inside a tag at byte " .. lt end
      if tag:sub(1, 1) == "/" then
        local name = tag:match("^/([%w:_.-]+)%s*$")
        if not name then return nil, "bad end tag at byte " .. lt end
        if stack[#stack] ~= name then
          return nil, string.format("</%s> closes <%s> at byte %d", name, tostring(stack[#stack]), lt)
        end
        stack[#stack] = nil
      else
        local empty = tag:sub(-1) == "/"
        if empty then tag = tag:sub(1, -2) end
        local name, rest = tag:match("^([%w:_.-]+)(.*)$")
        if not name then return nil, "bad tag at byte " .. lt end
        local seen = {}
        rest = rest:gsub('%s+([%w:_.-]+)="([^"]*)"', function(k, v)
          if seen[k] then error("attribute " .. k .. " twice at byte " .. lt) end
          if v:find("<", 1, true) or not entities_ok(v) then error("bad attribute value at byte " .. lt) end
          seen[k] = true
          return ""
        end)
        if rest:find("%S") then return nil, "bad attributes at byte " .. lt .. ": " .. rest:sub(1, 40) end
        if #stack == 0 then roots = roots + 1 end
        if not empty then stack[#stack + 1] = name end
      end
      pos = gt + 1
    end
  end
  if #stack > 0 then return nil, "unclosed <" .. stack[#stack] .. ">" end
  if roots ~= 1 then return nil, roots .. " roots" end
  return true
end

-- The inline SVGs of an HTML report.
local function svgs_of(html)
  local out = {}
  for s in html:gmatch("<svg.-</svg>") do out[#out + 1] = s end
  return out
end

-- Asserts what every report must be: one HTML file, one inline script (the timelines' zoom, allowed
-- by its hash in the CSP), nothing loaded from elsewhere, every SVG well-formed XML.
local function assert_self_contained(html)
  assert.equal("<!DOCTYPE html>", html:sub(1, 15))
  assert.truthy(html:find("Content-Security-Policy\" content=\"default-src 'none'", 1, true))
  assert.is_nil(html:find("http://", 1, true))
  assert.is_nil(html:find("https://", 1, true))
  local _, scripts = html:gsub("<script", "")
  assert.equal(1, scripts)
  assert.truthy(html:find("<script>(function () {", 1, true))
  assert.truthy(html:find("script-src 'sha256-", 1, true))
  assert.is_nil(html:find(" src=", 1, true))
  assert.is_nil(html:find("<link", 1, true))
  local figs = svgs_of(html)
  assert.is_true(#figs > 0)
  for i, s in ipairs(figs) do
    local ok, why = xml_check(s)
    assert(ok, "svg " .. i .. ": " .. tostring(why))
  end
  return figs
end

-- The data-* attribute of the first svg of class cls.
local function svg_attr(html, cls, name)
  local tag = html:match('<svg[^>]-class="chart ' .. cls .. '"[^>]*>')
  return tag and tag:match(name .. '="([^"]*)"')
end

-- A warp-scope buffer of `traces` traces of `events` events (groups of 4:
-- begin step, begin load|store, end, end step), starts spread over
-- `spread` cycles, as scripts/bench/dumpbench.c makes the benchmark's.
local function big_buffer(prefix, traces, events, spread)
  local words = {}
  local rng = 12345
  for t = 0, traces - 1 do
    words[#words + 1] = 1000000 + t % 97
    words[#words + 1] = t % 16
    words[#words + 1] = 2 * events
    local clock = (t * 7919) % spread
    for k = 0, events - 1 do
      rng = (rng * 1103515245 + 12345) % 2147483648
      clock = clock + 20 + rng % 64
      local p = k % 4
      local inner = math.floor(k / 4) % 2 == 1 and 2 or 1
      local tag = p == 0 and 0 or p == 1 and inner or p == 2 and (inner + 2147483648) or 2147483648
      words[#words + 1] = tag
      words[#words + 1] = clock
    end
  end
  h.write_words(prefix .. ".bin", words)
  h.meta(prefix .. ".meta.json", { grid = traces / 4, block = 128, scope = "warp", entries = 3 + 2 * events,
    names = { step = 0, load = 1, store = 2 } })
end

-- report.main in this process: exit status and what it printed.
local function run_main(args)
  local printed = {}
  local real = print
  _G.print = function(...)
    local t = {}
    for i = 1, select("#", ...) do t[i] = tostring(select(i, ...)) end
    printed[#printed + 1] = table.concat(t, "\t")
  end
  local ok, st = pcall(report.main, args)
  _G.print = real
  if not ok then error(st, 0) end
  return st, table.concat(printed, "\n")
end

local REPORT = h.src .. "/tests/report/report.lua"
local unpack = table.unpack or unpack -- Lua 5.4 / LuaJIT

describe("report", function()
  local dir
  setup(function()
    dir = h.tmpdir()
    -- a sweep on emu (2 axes, 6 points, 4 nested regions per tile)
    local st, _, err = h.run(h.src .. "/scripts/examples/tile_sweep.lua", "--out", dir .. "/sweep", "--quiet")
    assert(st == 0, err)
    -- the H200 fixture: 264 warpgroups on 132 SMs, with its summary
    st, _, err = h.run("dump", h.fixtures .. "/wg_264blocks_nested.bin", "--meta",
      h.fixtures .. "/wg_264blocks_nested.meta.json", "--clock-ghz", "1.98", "-o", dir .. "/fx.trace.json",
      "--summary-json", dir .. "/fx.summary.json", "-q")
    assert(st == 0, err)
  end)
  teardown(function() h.rmdir(dir) end)

  it("draws a point: a lane per trace under its SM, a legend, histograms that add up to the counts", function()
    local st, out = run_main({ dir .. "/fx.trace.json", "-o", dir .. "/point.html" })
    assert.equal(0, st)
    assert.matches("report: .*point%.html %(.* KB, 6 figures: 264 traces drawn as %d+ runs", out)
    local html = h.read(dir .. "/point.html")
    local figs = assert_self_contained(html)
    assert.equal(6, #figs) -- timeline, in flight, 4 histograms
    local summary = core.json_decode(h.read(dir .. "/fx.summary.json"))
    -- the timeline: lanes = traces, grouped under 132 SMs, the legend names every region
    assert.equal(summary.timeline.traces, count(html, '<g class="lane"'))
    assert.equal("264", svg_attr(html, "timeline", "data%-traces"))
    assert.equal(132, count(html, '<g class="sm"'))
    assert.equal(132, count(html, 'class="smdone"'))
    for _, g in ipairs(summary.regions) do
      assert.truthy(html:find('<g class="key">\n<rect[^>]*/>\n<text[^>]*>' .. g.name .. "</text>"), g.name)
    end
    assert.truthy(html:find(">SM 0</text>", 1, true))
    assert.truthy(html:find("block 0 · warpgroup 0 (SM ", 1, true)) -- a lane's hover text
    assert.truthy(html:find("time from the first event (us)", 1, true))
    assert.truthy(html:find("span 50.82 us", 1, true))
    assert.truthy(html:find("last SM done 50.82 us", 1, true))
    -- every run is a rect of a lane; the figure says how many there are and how many are merged
    local runs = tonumber(svg_attr(html, "timeline", "data%-runs"))
    local lane_runs = 0
    for n in html:gmatch('<g class="lane" data%-regions="%d+" data%-runs="(%d+)"') do lane_runs = lane_runs + tonumber(n) end
    assert.equal(runs, lane_runs)
    assert.equal(tonumber(svg_attr(html, "timeline", "data%-merged")), count(html, 'class="run merged"'))
    -- a histogram per region whose bins add up to the summary's count
    for _, g in ipairs(summary.regions) do
      local fig
      for _, f in ipairs(figs) do if f:find('data-region="' .. g.name .. '"', 1, true) then fig = f end end
      assert(fig, "no histogram of " .. g.name)
      local sum = 0
      for c in fig:gmatch('class="bin" data%-count="(%d+)"') do sum = sum + tonumber(c) end
      assert.equal(g.count, sum)
      assert.equal(tostring(g.count), fig:match('data%-count="(%d+)"'))
      assert.truthy(fig:find("median " .. svg.time(g.median, "ns"), 1, true))
    end
    -- the stacked in-flight areas, one per region, and the region table from the summary
    assert.equal(#summary.regions, count(html, 'class="area"'))
    assert.truthy(html:find("<td>step</td><td>2112</td><td>10.52 ms</td><td>4.98 us</td><td>406 ns</td><td>4.02 us</td>", 1,
      true))
    -- hover: exact values on the marks
    assert.truthy(html:find("<title>%d+ regions merged %(") or html:find("<title>step: [%d.]+ [nu]s, from "))
  end)

  it("merges a large trace's regions below a pixel and stays within its budget", function()
    big_buffer(dir .. "/big", 1024, 200, 2000000)
    local st, _, err = h.run("dump", dir .. "/big.bin", "--meta", dir .. "/big.meta.json", "--clock-ghz", "1.5", "-o",
      dir .. "/big.trace.json", "--summary-json", dir .. "/big.summary.json", "-q")
    assert(st == 0, err)
    local budget = rt.BUDGET
    rt.BUDGET = 6000
    local ok, e = pcall(run_main, { dir .. "/big.trace.json", "-o", dir .. "/big.html" })
    rt.BUDGET = budget
    assert(ok, tostring(e))
    local html = h.read(dir .. "/big.html")
    assert_self_contained(html)
    assert.equal(1024, count(html, '<g class="lane"'))
    local runs = tonumber(svg_attr(html, "timeline", "data%-runs"))
    local merged = tonumber(svg_attr(html, "timeline", "data%-merged"))
    assert.is_true(runs <= 6000, tostring(runs))
    assert.is_true(merged > 0.9 * runs, merged .. " of " .. runs)
    assert.equal(merged, count(html, 'class="run merged"'))
    -- the merged runs stand for every region of the trace
    local regions = 0
    for n in html:gmatch('data%-n="(%d+)"') do regions = regions + tonumber(n) end
    regions = regions + (runs - merged)
    assert.equal(1024 * 100, regions)
    -- thin lanes get no hover text of their own; their SM's says what they hold
    assert.truthy(html:find('<g class="sm" data%-sm="SM 0"><title>SM 0: 64 traces, 6400 regions, done at '))
    local summary = core.json_decode(h.read(dir .. "/big.summary.json"))
    for _, g in ipairs(summary.regions) do
      local sum = 0
      local fig = html:match('<svg[^>]-data%-region="' .. g.name .. '".-</svg>')
      for c in fig:gmatch('class="bin" data%-count="(%d+)"') do sum = sum + tonumber(c) end
      assert.equal(g.count, sum)
    end
    -- the reader: a trace without its summary takes a first pass and gets the same lanes
    local a = rt.read(dir .. "/big.trace.json", { budget = 6000 })
    local b = rt.read(dir .. "/big.trace.json", { budget = 6000, span = summary.timeline.span })
    assert.equal(1024, #a.lanes)
    assert.equal(#a.lanes, #b.lanes)
    assert.equal(summary.timeline.span, a.span)
    assert.equal(a.events, b.events)
    assert.equal(1024 * 200, a.events)
    for i, g in ipairs(a.regions) do
      assert.equal(summary.regions[i].name, g.name)
      assert.equal(summary.regions[i].count, g.count)
      assert.equal(summary.regions[i].min, g.min)
      assert.equal(summary.regions[i].max, g.max)
      assert.is_true(math.abs(g.median - summary.regions[i].median) <= 0.005 * summary.regions[i].median + 1)
      assert.is_true(math.abs(g.concurrency - summary.regions[i].concurrency) < 1e-6 * summary.regions[i].concurrency)
    end
  end)

  it("draws a sweep: the manifest's facts, each axis against time and region medians, virtual time marked", function()
    local st, out = run_main({ dir .. "/sweep" })
    assert.equal(0, st)
    assert.matches("sweep/report%.html", out)
    local html = h.read(dir .. "/sweep/report.html")
    local figs = assert_self_contained(html)
    local man = core.json_decode(h.read(dir .. "/sweep/manifest.json"))
    for _, f in ipairs({ "<dt>device</dt><dd>emu (CPU PTX executor)</dd>", "<dt>backend</dt><dd>emu: times are virtual</dd>",
      "<dt>harness</dt><dd>" .. man.harness .. "</dd>", "<dt>command</dt><dd>" .. svg.esc(man.command) .. "</dd>",
      "<dt>clock</dt><dd>1.755 GHz (the device's); the traces' times converted at " }) do
      assert.truthy(html:find(f, 1, true), f)
    end
    assert.truthy(html:find("<dt>clock</dt><dd>[^<]* GHz measured %(%d+ points?, within [%d.-]+%%%)"))
    -- per axis (block, n): the launch time and the 4 regions' medians
    assert.equal(10, count(html, 'class="chart lines"'))
    assert.truthy(html:find('data-axis="block" data-metric="time"', 1, true))
    assert.truthy(html:find('data-axis="n" data-metric="load"', 1, true))
    -- against block, one line per n; against n, one per block
    local fig = html:match('<svg[^>]-data%-axis="block" data%-metric="time".-</svg>')
    assert.equal(2, count(fig, '<g class="series"'))
    assert.truthy(fig:find('data-name="n=4096"', 1, true))
    assert.equal(6, count(fig, 'class="pt"'))
    local row1 = core.json_decode(h.read(dir .. "/sweep/results.jsonl"):match("^[^\n]+"))
    local t = row1.time_ns
    local tip = string.format("<title>block=64, n=4096: median %s (min %s, max %s, 2 launches)</title>",
      svg.time(t.median, "ns"), svg.time(t.min, "ns"), svg.time(t.max, "ns"))
    assert.truthy(fig:find(tip, 1, true), tip)
    fig = html:match('<svg[^>]-data%-axis="n" data%-metric="tile".-</svg>')
    assert.equal(3, count(fig, '<g class="series"'))
    -- emu: every figure says its times are virtual
    for i, f in ipairs(figs) do
      local marked = f:find("virtual time (emu)", 1, true) or f:find("emu: virtual time", 1, true)
      assert(marked, "figure " .. i .. " is not marked virtual")
    end
    -- the results table: a row per point; the points' sections (small traces: all of them)
    assert.equal(6, count(html:match('<table class="results">.-</table>'), "<tr><td>"))
    assert.equal(6, count(html, 'class="chart timeline"'))
    assert.equal(6, count(html, 'class="chart stacked"'))
    assert.equal(6, count(html, "<details"))
    -- --point N draws that point alone
    st = run_main({ dir .. "/sweep", "--point", "3", "-o", dir .. "/p3.html" })
    assert.equal(0, st)
    local one = h.read(dir .. "/p3.html")
    assert.equal(1, count(one, "<details"))
    assert.truthy(one:find('<details open id="point-3"><summary>point 3: block=128, n=4096</summary>', 1, true))
    assert.equal(16, count(one, '<g class="lane"'))
  end)

  it("compares two results folders: bars per point and region, sorted, noise bands, changed counts flagged", function()
    local function folder(path, rows)
      h.write_results(path, { experiment = "sweep", backend = "cuda", device = "NVIDIA H200",
        script = { path = "/nowhere/sweep.lua" },
        harness = "0.1.0", axes = { { kind = "axis", names = { "n" }, rows = { { 1 }, { 2 }, { 3 } } } } }, rows)
    end
    local function row(index, n, median, spread, regions)
      return { index = index, key = "n=" .. n, point = { n = n }, status = "ok", unit = "ns",
        time_ns = { min = median - spread, median = median, max = median + spread, mean = median, n = 5 },
        regions = regions }
    end
    local function reg(name, median, cnt) return { name = name, count = cnt or 2048, median = median, p99 = median } end
    folder(dir .. "/ca", { row(1, 1, 1000, 50, { reg("load", 400), reg("store", 300) }),
      row(2, 2, 2000, 10, { reg("load", 800), reg("store", 600) }), row(3, 3, 3000, 0, { reg("load", 1) }) })
    folder(dir .. "/cb", { row(1, 1, 1060, 50, { reg("load", 400), reg("store", 330) }),
      row(2, 2, 2600, 10, { reg("load", 1000, 512), reg("store", 540) }) })
    local st = run_main({ dir .. "/ca", dir .. "/cb", "-o", dir .. "/cmp.html", "--svg", dir .. "/cmpsvg" })
    assert.equal(0, st)
    local html = h.read(dir .. "/cmp.html")
    assert_self_contained(html)
    -- 2 points in both x 2 regions, and 2 launch-time bars
    assert.equal(4, count(html, '<g class="row bar-region">'))
    assert.equal(2, count(html, '<g class="row bar-time">'))
    assert.equal("2", svg_attr(html, "hbars", "data%-points"))
    assert.equal("4", svg_attr(html, "hbars", "data%-regions"))
    -- sorted by size: +30 (n=2 time), +25 (n=2 load), +10 (n=1 store), -10 (n=2 store), +6 (n=1 time), 0
    local values = {}
    for v in html:gmatch('class="bar" data%-value="([-%d.]+)"') do values[#values + 1] = tonumber(v) end
    assert.same({ 30, 25, 10, -10, 6, 0 }, values)
    -- the count that went from 2048 to 512 is flagged, on the bar and in the table
    assert.truthy(html:find('<text x="6" y="[%d.]+" class="flag" fill="#c00000">count 2048 %-&gt; 512</text>'))
    assert.truthy(html:find('<tr class="flag"><td>n=2 · load</td><td>800 ns</td><td>1.00 us</td><td>+25.0%</td><td>-</td>'
      .. '<td>2048 -&gt; 512</td></tr>', 1, true))
    -- n=1's time is within its noise (a band of +-(100+100)/1000); n=3 is only in the base run
    assert.truthy(html:find("+6.0%% %(noise%)"))
    assert.truthy(html:find('<rect x="[%d.]+" y="[%d.]+" width="[%d.]+" height="[%d.]+" class="band" fill="#dcdcdc"><title>'
      .. "noise band: %+%-20.0%%</title>"))
    assert.truthy(html:find("<li>n=3: only in the base run</li>", 1, true))
    -- the figure also as a standalone SVG
    local f = h.read(dir .. "/cmpsvg/compare.svg")
    assert.truthy(f:find('^<%?xml version="1.0" encoding="UTF%-8"%?>\n<svg xmlns="http://www.w3.org/2000/svg"'))
    assert(xml_check(f))
  end)

  it("labels thin lanes by the block where its lanes begin, each lane's title naming block and warpgroup", function()
    local st = run_main({ dir .. "/fx.trace.json", "-o", dir .. "/fx-lanes.html" })
    assert.equal(0, st)
    local html = h.read(dir .. "/fx-lanes.html")
    local n = 0
    for y, b in html:gmatch('<text x="184" y="([%d.]+)" class="note lanelabel" text%-anchor="end">block (%d+) ') do
      n = n + 1
    end
    assert.is_true(n >= 20, "only " .. n .. " block labels on 264 lanes")
    assert.truthy(html:find("<title>block %d+ · warpgroup 0 %(SM %d+%)"))
  end)

  it("gives the gate's verdict and says whether the source changed on the comparison page (issue 35)", function()
    local html = h.read(dir .. "/cmp.html")
    local v = html:match('<ul class="notes verdict">(.-)</ul>')
    assert.is_string(v, "no verdict section")
    assert.truthy(v:find("slowest change beyond the noise: +30.0%", 1, true), v)
    assert.truthy(v:find("1 point of base not in new: the gate fails at any --max-slowdown", 1, true), v)
    assert.truthy(v:find("source", 1, true), v) -- changed, the same, or no hashes recorded
  end)

  it("draws a plain report of a sweep too big for all its timelines with the first of them (issue 35)", function()
    local keep = report.ALL_POINTS_BYTES
    report.ALL_POINTS_BYTES = 1
    local ok, st = pcall(run_main, { dir .. "/sweep", "-o", dir .. "/big.html" })
    report.ALL_POINTS_BYTES = keep
    assert(ok, st)
    assert.equal(0, st)
    local html = h.read(dir .. "/big.html")
    assert.equal(1, count(html, 'class="chart timeline"'))
    assert.truthy(html:find("1 of 6 traced points drawn", 1, true))
    assert.truthy(html:find("<code>mgpu-harness report " .. dir .. "/sweep --point N</code>", 1, true))
    assert.falsy(html:find("`", 1, true))
    -- one region is "1 region", never "1 regions"
    assert.falsy(html:find("[^%d]1 regions"))
  end)

  it("compares two region summaries: a bar per region and the span", function()
    local st = run_main({ dir .. "/sweep/point-1.summary.json", dir .. "/sweep/point-3.summary.json", "-o",
      dir .. "/cs.html" })
    assert.equal(0, st)
    local html = h.read(dir .. "/cs.html")
    assert_self_contained(html)
    assert.equal(4, count(html, '<g class="row bar-region">'))
    assert.equal(1, count(html, '<g class="row bar-span">'))
    local function median(path, name)
      for _, g in ipairs(core.json_decode(h.read(path)).regions) do if g.name == name then return g.median end end
    end
    local a, b = median(dir .. "/sweep/point-1.summary.json", "load"), median(dir .. "/sweep/point-3.summary.json", "load")
    local tip = string.format("<title>load median %s -&gt; %s (%+.1f%%)</title>", svg.time(a, "ns"), svg.time(b, "ns"),
      (b - a) / a * 100)
    assert.truthy(html:find(tip, 1, true), tip)
  end)

  it("writes each figure as a standalone SVG with --svg", function()
    local st, out = run_main({ dir .. "/fx.trace.json", dir .. "/fx.summary.json", "-o", dir .. "/p.html", "--svg",
      dir .. "/figs" })
    assert.equal(0, st)
    assert.matches("figures: 6 SVG files in .*figs", out)
    for _, name in ipairs({ "point-timeline", "point-inflight", "point-hist-Init", "point-hist-step", "point-hist-load",
      "point-hist-store" }) do
      local s = h.read(dir .. "/figs/" .. name .. ".svg")
      assert(s, name)
      assert.truthy(s:find('<svg xmlns="http://www.w3.org/2000/svg"', 1, true))
      assert.truthy(s:find("<style>", 1, true)) -- the same look outside the report
      local ok, why = xml_check(s)
      assert(ok, name .. ": " .. tostring(why))
      -- only the namespace names a URL
      assert.equal(1, count(s, "http://"))
      assert.equal(0, count(s, "https://"))
    end
  end)

  it("reads a Mosaic-compatible dump and a trace laid out otherwise", function()
    local st, _, err = h.run("dump", h.fixtures .. "/wg_264blocks_nested.bin", "--meta",
      h.fixtures .. "/wg_264blocks_nested.meta.json", "--compat", "mosaic", "-o", dir .. "/m.json")
    assert(st == 0, err)
    local m = rt.read(dir .. "/m.json")
    assert.equal("mosaic", m.mode)
    assert.equal(264, #m.lanes)
    assert.equal(13200, m.events)
    -- pretty-printed (keys sorted, one per line): decoded whole
    local doc = core.json_decode(h.read(dir .. "/fx.trace.json"))
    h.write(dir .. "/pretty.json", core.json_encode(doc, true))
    local p = rt.read(dir .. "/pretty.json")
    local d = rt.read(dir .. "/fx.trace.json")
    assert.equal(d.events, p.events)
    assert.equal(#d.lanes, #p.lanes)
    assert.equal(d.lanes[1].label, p.lanes[1].label)
    for i, g in ipairs(d.regions) do
      assert.equal(g.name, p.regions[i].name)
      assert.equal(g.count, p.regions[i].count)
    end
    st = run_main({ dir .. "/m.json", "-o", dir .. "/m.html" })
    assert.equal(0, st)
    assert.truthy(h.read(dir .. "/m.html"):find("Mosaic-compatible dump: cycles counted as ns", 1, true))
  end)

  it("runs from mgpu-harness through a script that calls it", function()
    local st, out, err = h.run(REPORT, dir .. "/sweep/point-1.trace.json", "-o", dir .. "/cli.html")
    assert.equal(0, st, err)
    assert.matches("report: .*cli%.html %(", out)
    assert_self_contained(h.read(dir .. "/cli.html"))
    -- (the harness answers `SCRIPT.lua --help` itself; report's own --help, in the process)
    st, out = run_main({ "--help" })
    assert.equal(0, st)
    assert.matches("usage: mgpu%-harness report INPUT", out)
  end)

  it("refuses what it cannot draw, naming it", function()
    os.execute("mkdir -p " .. h.quote(dir .. "/plain"))
    h.write(dir .. "/x.json", '{"a": 1}')
    -- a torn trace: cut in the middle of its events
    local t = h.read(dir .. "/fx.trace.json")
    h.write(dir .. "/torn.trace.json", t:sub(1, math.floor(#t / 2)))
    -- regions that do not nest
    h.write(dir .. "/nest.json", '{"traceEvents":[\n{"name":"a","ph":"B","ts":1,"pid":1,"tid":1},\n'
      .. '{"name":"b","ph":"B","ts":2,"pid":1,"tid":1},\n{"name":"a","ph":"E","ts":3,"pid":1,"tid":1},\n'
      .. '{"name":"b","ph":"E","ts":4,"pid":1,"tid":1}\n]}\n')
    -- a torn results.jsonl
    os.execute("cp -r " .. h.quote(dir .. "/sweep") .. " " .. h.quote(dir .. "/cut"))
    os.remove(dir .. "/cut/report.html")
    local rows = h.read(dir .. "/cut/results.jsonl")
    h.write(dir .. "/cut/results.jsonl", rows:sub(1, #rows - 20))
    assert.equal(0, (h.run(h.src .. "/scripts/examples/copy.lua", "--out", dir .. "/untraced", "-q"))) -- no traces
    local cases = {
      { { dir .. "/plain" }, 2, "plain: a folder that is not a results folder %(no results.jsonl, no manifest.json%) "
        .. "%[bad_argument%]" },
      { { dir .. "/x.json" }, 2, "x.json: neither a results folder, a trace %(no \"traceEvents\"%) nor a region summary" },
      { { dir .. "/none" }, 1, "none: cannot open %(no such file or folder%) %[io_error%]" },
      { { dir .. "/torn.trace.json" }, 3, "torn.trace.json: the event list has no end %(\"%]}\"%): the file is cut short "
        .. "%(torn%), or not a trace %[bad_trace%]" },
      { { dir .. "/nest.json" }, 3, "nest.json: event 3: an end of a on pid 1 tid 1 while b is open: regions must nest "
        .. "%[bad_trace%]" },
      { { dir .. "/cut" }, 3, "cut/results.jsonl:6 is torn %(it has no newline at its end, %d+ bytes%).*%[bad_results%]" },
      { { dir .. "/sweep/point-1.summary.json" }, 2, "a region summary alone has no trace to draw" },
      { { dir .. "/sweep", dir .. "/fx.summary.json" }, 2, "give two results folders or two summaries to compare" },
      { { dir .. "/fx.trace.json", "--point", "2" }, 2, "%-%-point goes with a results folder" },
      { { dir .. "/sweep", "--point", "9" }, 2, "%-%-point 9: .* has no traced point 9 %(its traced points: 1, 2, 3, 4, 5, 6%)" },
      { { dir .. "/untraced", "--point", "1" }, 2, "has no traced point 1 %(it has no traced points: run the experiment "
        .. "with instrument" },
      { { dir .. "/sweep", "--point", "x" }, 2, "%-%-point takes a point's number" },
      { { dir .. "/sweep", "--bogus" }, 2, "report: unknown option %-%-bogus" },
      { { dir .. "/sweep", "-o" }, 2, "report: %-o needs a value" },
      { {}, 2, "report takes one or two inputs" },
    }
    for _, c in ipairs(cases) do
      local st, _, err = h.run(REPORT, unpack(c[1]))
      assert.equal(c[2], st, err)
      assert.matches(c[3], err)
    end
    -- in the process: error values with their code
    local ok, e = pcall(report.main, { dir .. "/plain" })
    assert.is_false(ok)
    assert.equal("bad_argument", e.code)
    ok, e = pcall(report.main, { dir .. "/torn.trace.json" })
    assert.equal("bad_trace", e.code)
    -- nothing was written by a failed report
    assert.is_nil(h.read(dir .. "/plain/report.html"))
    assert.is_nil(h.read(dir .. "/cut/report.html"))
  end)
end)

describe("svg", function()
  it("escapes text and writes numbers short", function()
    assert.equal("a &lt;b&gt; &amp; &quot;c&quot;", svg.esc('a <b> & "c"'))
    assert.equal("12", svg.num(12.001))
    assert.equal("12.5", svg.num(12.5))
    assert.equal("0", svg.num(-0.001))
    assert.equal("1.25 us", svg.time(1250, "ns"))
    assert.equal("812 ns", svg.time(812, "ns"))
    assert.equal("1200 cycles", svg.time(1200, "cycles"))
    assert.same({ 0, 20, 40, 60, 80, 100 }, (svg.ticks(0, 100, 5)))
  end)

  it("draws one value as a bar one bin wide, not a block across the figure (issue 35)", function()
    local bins = rt.bins({ count = 1, keys = { 500 }, hist = { [500] = 1 } }, 32)
    local full, total = 0, 0
    for _, b in ipairs(bins) do
      total = total + b.count
      if b.count > 0 then full = full + 1; assert.is_true(b.lo <= 500 and b.hi > 500) end
    end
    assert.equal(1, total)
    assert.equal(1, full)
    assert.is_true(#bins >= 32)
  end)

  it("keeps a y axis in one unit and its labels inside the figure (issue 35)", function()
    assert.equal("0 us", svg.time_axis(20000, "ns")(0))
    assert.equal("20 us", svg.time_axis(20000, "ns")(20000))
    local lbl = svg.rate_axis(1500, "FLOP")
    assert.equal("0 TFLOP/s", lbl(0))
    assert.equal("1.5 TFLOP/s", lbl(1500))
    local doc = svg.lines({ title = "t", x = { kind = "linear", values = { 1, 2 } }, y_axis = function(hi)
      return svg.rate_axis(hi, "FLOP") end, series = { { name = "a", color = "#000",
      points = { { x = 1, y = 1.2e6 }, { x = 2, y = 9e5 } } } } })
    local text = doc:finish(true)
    local labels = 0
    for x, t in text:gmatch('<text x="([%d.]+)" y="[%d.]+" text%-anchor="end">([^<]*TFLOP/s)</text>') do
      labels = labels + 1
      assert.is_true(tonumber(x) - svg.text_width(t) >= 0, t .. " crosses the left edge")
    end
    assert.is_true(labels >= 3, text)
  end)

  it("draws a histogram whose bins add up to its count", function()
    local g = { count = 0, hist = {}, keys = {} }
    for d = 1, 5000, 7 do
      local k = rt.qkey(d)
      if not g.hist[k] then g.keys[#g.keys + 1] = k end
      g.hist[k] = (g.hist[k] or 0) + 1
      g.count = g.count + 1
    end
    table.sort(g.keys)
    local bins, log = rt.bins(g, 20)
    assert.is_true(log)
    local sum = 0
    for _, b in ipairs(bins) do sum = sum + b.count end
    assert.equal(g.count, sum)
    local doc = svg.histogram({ title = "x & y", bins = bins, log = log, color = "#123456" })
    assert(xml_check(doc:finish(true)))
  end)
end)
