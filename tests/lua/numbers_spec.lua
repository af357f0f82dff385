-- numbers_spec.lua: the numbers a user acts on (issue 24): an experiment times the
-- plain kernel and shows the instrumented one's time and the overhead beside it,
-- counters of the user's code only, throughput, filtered sweeps merged complete.
local h = require "helpers"
local mgpu = require "mgpu"
local core = require "mgpu.core"
local results = require "mgpu.results"

local function tiled(extra)
  return h.tiled_experiment({ name = "numbers_test", axes = { tiles = { 2, 6 } }, warmup = 1, repeats = 2,
    estimate = function(p) return 3 * p.tiles end }, extra)
end

-- the plain kernel's mgpu.time for the point tiles = t, as setup makes it
local function plain_time(t)
  local dev = mgpu.device("emu")
  local k = dev:load(h.src .. "/ptx/tiled.ptx"):kernel("tiled_scale")
  local n = 64 * t
  local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
  return mgpu.time(k, { grid = 2, block = 64, smem = 256, args = { a, c, n, 1.0 } }, { warmup = 1, repeats = 2 })
end

describe("an instrumented experiment's time", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.rmdir(dir) end)

  it("is the plain kernel's (mgpu.time), with the instrumented one's and the overhead beside it", function()
    local r = mgpu.run(tiled(), { out = dir, quiet = true })
    assert.equal(2, r.ok)
    local rows = results.rows(dir)
    for i, t in ipairs({ 2, 6 }) do
      local row = rows[i]
      local plain = plain_time(t)
      assert.same(plain, row.time_ns) -- exact on emu: min, median, mean, stddev, max, n
      assert.is_table(row.instrumented_time_ns)
      assert.is_true(row.instrumented_time_ns.median > row.time_ns.median)
      assert.equal(row.instrumented_time_ns.median / row.time_ns.median, row.overhead)
      assert.is_table(row.regions) -- the trace is the instrumented launch's
    end
    -- deterministic: a second run gives the same numbers
    local dir2 = h.tmpdir()
    mgpu.run(tiled(), { out = dir2, quiet = true })
    local again = results.rows(dir2)
    h.rmdir(dir2)
    for i = 1, 2 do
      assert.same(rows[i].time_ns, again[i].time_ns)
      assert.same(rows[i].instrumented_time_ns, again[i].instrumented_time_ns)
    end
    local csv = h.read(dir .. "/results.csv")
    local head = csv:match("^[^\n]*")
    assert.matches("time_ns_stddev,instrumented_time_ns_median,overhead,", head)
    local table_text = results.table({ "tiles" }, rows, "emu time")
    assert.matches("instrumented%s+overhead", table_text)
    assert.matches(string.format("x%.2f", rows[1].overhead):gsub("%.", "%%."), table_text)
  end)

  it("is shown by compare and the report", function()
    mgpu.run(tiled(), { out = dir .. "/a", quiet = true })
    mgpu.run(tiled(), { out = dir .. "/b", quiet = true })
    local cmp = require("mgpu.compare").folders(dir .. "/a", dir .. "/b")
    assert.matches("overhead", cmp.table)
    local rows = results.rows(dir .. "/a")
    local o = results.fmt_overhead(rows[1].overhead)
    assert.is_truthy(cmp.table:find(o .. " -> " .. o, 1, true))
    local status = h.run("report", dir .. "/a", "-o", dir .. "/r.html")
    assert.equal(0, status)
    local html = h.read(dir .. "/r.html")
    assert.is_truthy(html:find("<th>overhead</th>", 1, true))
    assert.is_truthy(html:find(o, 1, true))
  end)

  it("is the kernel's own when the experiment is not instrumented", function()
    local exp = tiled()
    exp.instrument = nil
    local r = mgpu.run(exp, { out = dir, quiet = true })
    assert.equal(2, r.ok)
    local rows = results.rows(dir)
    assert.same(plain_time(2), rows[1].time_ns)
    assert.is_nil(rows[1].instrumented_time_ns)
    assert.is_nil(rows[1].overhead)
  end)
end)

describe("regions left by a return", function()
  local ptx = h.src .. "/tests/ptx/early_return.ptx"

  -- the regions' counts (and truncated counts) of one launch
  local function counts(run)
    local c, t = {}, {}
    for _, r in ipairs(run.trace:summary()) do c[r.name], t[r.name] = r.count, r.truncated or 0 end
    return c, t
  end

  -- launches kernel name plain and instrumented (scope, probes); returns both outputs and the counts
  local function both(name, scope, args_of, n, probes)
    local dev = mgpu.device("emu")
    local outs = {}
    local run
    for k, opts in ipairs({ false, { instrument = scope, probes = probes } }) do
      local kern = dev:load(ptx, opts or nil):kernel(name)
      local x = dev:array("f32", n, { fill = "ramp", start = 0, step = 1 })
      local y = dev:array("f32", n)
      local r = kern:launch { grid = 3, block = 128, args = args_of(x, y), profile = opts and { entries = 64 } or nil }
      outs[k] = y:read()
      if opts then run = r end
    end
    return outs[1], outs[2], run
  end

  for _, scope in ipairs({ "warp", "warpgroup" }) do
    local per = scope == "warp" and 32 or 128
    local traces = 3 * 128 / per
    it("end where a thread returns, with exact counts (" .. scope .. ")", function()
      -- n = 100: warps 4.. (warp scope) have every lane past n and return at once
      local a, b, run = both("guard_in_region", scope, function(x, y) return { x, y, 100 } end, 384)
      assert.same(a, b)
      local c, t = counts(run)
      assert.equal(traces, c.work) -- every trace closes the region it began once
      assert.equal(0, t.work)
      -- a nested region and its outer one, left by a return in the inner one (v > 150: lanes 151..)
      a, b, run = both("nested_return", scope, function(x, y) return { x, y, 300, 150 } end, 384)
      assert.same(a, b)
      c, t = counts(run)
      assert.equal(traces, c.outer)
      assert.equal(traces, c.inner)
      assert.equal(0, t.outer + t.inner)
      -- a region a loop leaves by returning (acc > 40 after a few iterations for lanes past 10)
      a, b, run = both("loop_return", scope, function(x, y) return { x, y, 300, 40 } end, 384)
      assert.same(a, b)
      c, t = counts(run)
      local live = 0 -- traces whose writer (the lowest thread) has i < 300: those begin the loop
      for tr = 0, traces - 1 do if tr * per < 300 then live = live + 1 end end
      assert.equal(live, c.loop)
      assert.equal(0, t.loop)
    end)

    it("end where a thread returns for probes too (" .. scope .. ")", function()
      -- the kernel probe beside the markers, and a range of PTX lines the early return leaves
      local _, _, run = both("guard_in_region", scope, function(x, y) return { x, y, 100 } end, 384,
        { { name = "kernel", kernel = true }, { name = "range", from = 36, to = 57 } })
      local c, t = counts(run)
      assert.equal(traces, c.kernel)
      assert.equal(traces, c.work)
      assert.equal(traces, c.range)
      assert.equal(0, t.kernel + t.work + t.range)
    end)
  end
end)

describe("a marker error", function()
  it("names the .cu file and line (through .loc) as well as the PTX line", function()
    local dev = mgpu.device("emu")
    local ok, err = pcall(dev.load, dev, h.src .. "/tests/ptx/one_branch_region.ptx", { instrument = "warp" })
    assert.is_false(ok)
    assert.equal("ptx_syntax", err.code)
    assert.matches("^one_branch_region%.cu:13 %(PTX .*one_branch_region%.ptx:61%): end \"half\" without its begin",
      err.message)
    assert.equal(61, err.line)
  end)
end)

describe("counters of an instrumented launch", function()
  local stats = require "mgpu.stats"

  -- emu's counters of one launch of kernel name in path (instrumented when scope is given)
  local function counted(path, name, launch, args_of, scope, probes)
    local dev = mgpu.device("emu")
    local k = dev:load(path, scope and { instrument = scope, probes = probes } or nil):kernel(name)
    local l = { args = args_of(dev), stats = true, profile = scope and { entries = 4096 } or nil }
    for key, v in pairs(launch) do l[key] = v end
    return k:launch(l).stats
  end

  local function by_line(st)
    local t = {}
    for _, r in ipairs(st.lines) do
      local row = {}
      for k, v in pairs(r) do if type(v) == "number" and k ~= "line" then row[k] = v end end
      t[tostring(r.file) .. ":" .. r.line] = row
    end
    return t
  end

  local function totals(st)
    local t = {}
    for k, v in pairs(st.total) do if not k:match("%.ratio$") and k ~= stats.LEFT_OUT then t[k] = v end end
    return t
  end

  local cases = {
    { h.src .. "/ptx/tiled.ptx", "tiled_scale", { grid = 2, block = 64, smem = 256 },
      function(dev) return { dev:array("f32", 384, { fill = "ramp" }), dev:array("f32", 384), 384, 1.0 } end },
    { h.src .. "/tests/ptx/early_return.ptx", "guard_in_region", { grid = 3, block = 128 },
      function(dev) return { dev:array("f32", 384, { fill = "ramp" }), dev:array("f32", 384), 100 } end },
    { h.src .. "/tests/ptx/early_return.ptx", "nested_return", { grid = 3, block = 128 },
      function(dev) return { dev:array("f32", 384, { fill = "ramp" }), dev:array("f32", 384), 300, 150 } end },
    { h.src .. "/tests/ptx/early_return.ptx", "loop_return", { grid = 3, block = 128 },
      function(dev) return { dev:array("f32", 384, { fill = "ramp" }), dev:array("f32", 384), 300, 40 } end },
  }

  it("equal the plain launch's for the user's lines, and say how many were left out", function()
    for _, c in ipairs(cases) do
      local plain = counted(c[1], c[2], c[3], c[4])
      assert.is_nil(plain.total[stats.LEFT_OUT] ~= 0 and plain.total[stats.LEFT_OUT] or nil)
      for _, scope in ipairs({ "warp", "warpgroup" }) do
        for _, probes in ipairs({ false, { { name = "kernel", kernel = true } } }) do
          local inst = counted(c[1], c[2], c[3], c[4], scope, probes or nil)
          local a, b, diffs = by_line(plain), by_line(inst), {}
          for line, row in pairs(a) do
            for k, v in pairs(row) do
              if not b[line] or b[line][k] ~= v then
                diffs[#diffs + 1] = string.format("%s %s %s: %s %s, instrumented %s", c[2], scope, line, k, v,
                  tostring(b[line] and b[line][k]))
              end
            end
          end
          for line in pairs(b) do if not a[line] then diffs[#diffs + 1] = c[2] .. " only instrumented: " .. line end end
          assert.same({}, diffs)
          assert.same(totals(plain), totals(inst))
          assert.is_true(inst.total[stats.LEFT_OUT] > 0)
          local text = stats.report(inst)
          assert.matches("warp instructions the instrumentation added are left out", text, 1, true)
        end
      end
    end
  end)

  it("list a line's loads and stores apart in the worst coalescing table", function()
    local dev = mgpu.device("emu")
    local st = { module = "k.ptx", total = {}, lines = { {
      file = "k.cu", line = 7, source = "y[i * 2] = x[i * 4];",
      ["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] = 4, ["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] = 64,
      ["ptx__bytes_requested_mem_global_op_ld.sum"] = 512,
      ["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"] = 4, ["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] = 32,
      ["ptx__bytes_requested_mem_global_op_st.sum"] = 512 } } }
    assert.is_truthy(dev)
    local text = stats.report(st)
    local block = text:match("worst coalescing first[^\n]*\n([^\n]*\n[^\n]*\n[^\n]*)")
    assert.matches("line%s+op%s+requests", block)
    assert.matches("k%.cu:7%s+load%s+4%s+64%s+16%.0%s+25%%", block)
    assert.matches("k%.cu:7%s+store%s+4%s+32%s+8%.0%s+50%%", block)
  end)
end)

describe("a filtered sweep in shards", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.rmdir(dir) end)

  it("merges complete: no shard owes a point the filter dropped, and --resume runs nothing more", function()
    h.write(dir .. "/exp.lua", string.format([[
return {
  name = "filtered_shards", module = %q, kernel = "tiled_scale", instrument = "warp",
  axes = { tiles = { 1, 2, 3, 4, 5, 6 } },
  filter = function(p) return p.tiles %% 3 ~= 0 end, -- drops points 3 and 6: both of shard 3/3
  warmup = 0, repeats = 1,
  setup = function(p, dev)
    local n = 64 * p.tiles
    local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
    return { grid = 2, block = 64, smem = 256, args = { a, c, n, 1.0 }, estimate = 3 * p.tiles }
  end,
}
]], h.src .. "/ptx/tiled.ptx"))
    local exp = dir .. "/exp.lua"
    for i = 1, 3 do
      assert.equal(0, (h.run(exp, "--out", dir .. "/s" .. i, "--shard", i .. "/3", "--quiet")))
    end
    local man = core.json_decode(h.read(dir .. "/s1/manifest.json"))
    assert.same({ 1, 2, 4, 5 }, man.sweep_selected)
    local st, out = h.run("merge", dir .. "/m", dir .. "/s1", dir .. "/s2", dir .. "/s3")
    assert.equal(0, st, out)
    assert.matches("4 of 4 points, 4 ok, 0 missing", out)
    local merged = core.json_decode(h.read(dir .. "/m/manifest.json"))
    assert.same({ 1, 2, 4, 5 }, merged.selected)
    assert.is_nil(merged.missing)
    -- shard 3 holds only filtered points: the others are the whole sweep
    assert.equal(0, (h.run("merge", dir .. "/m3", dir .. "/s1", dir .. "/s2")))
    -- without shard 2: its points are owed, the filtered ones are not
    st, out = h.run("merge", dir .. "/m2", dir .. "/s1", dir .. "/s3")
    assert.equal(1, st)
    assert.matches("2 missing", out)
    assert.matches("missing: point 2 %(tiles=2%), owed by shard 2/3", out)
    assert.matches("missing: point 5 %(tiles=5%), owed by shard 2/3", out)
    assert.is_falsy(out:find("point 3 ", 1, true))
    assert.is_falsy(out:find("point 6 ", 1, true))
    -- resuming the complete merge runs nothing (the filtered points stay out)
    st, out = h.run(exp, "--resume", dir .. "/m")
    assert.equal(0, st)
    assert.matches("0 ok, 0 failed, 4 already done", out)
  end)
end)

describe("throughput", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.rmdir(dir) end)

  local function exp_with(extra, setup_extra)
    local more = setup_extra and function(_, n) return setup_extra(n) end
    return h.tiled_experiment({ name = "numbers_test", axes = { tiles = { 2, 4 } }, warmup = 1, repeats = 2,
      estimate = function(p) return 3 * p.tiles end, more = more }, extra)
  end

  it("is the declared bytes and flops over the plain kernel's median: results, csv, table and report", function()
    mgpu.run(exp_with(nil, function(n) return { bytes = 8 * n, flops = n } end), { out = dir, quiet = true })
    local rows = results.rows(dir)
    for i, t in ipairs({ 2, 4 }) do
      local n = 64 * t
      assert.equal(8 * n, rows[i].bytes)
      assert.equal("declared", rows[i].bytes_source)
      assert.equal(8 * n / rows[i].time_ns.median, rows[i].gbps)
      assert.equal(n / rows[i].time_ns.median, rows[i].gflops)
    end
    local csv = h.read(dir .. "/results.csv")
    assert.matches("overhead,bytes,flops,gbps,gflops,", csv:match("^[^\n]*"))
    local text = results.table({ "tiles" }, rows, "emu time")
    -- emu's rates are over virtual times: marked as its time column is (issue 35), in results.csv too
    assert.matches("emu GB/s%s+emu GFLOP/s", text)
    assert.matches(",timing,time_kind,", csv:match("^[^\n]*\n"))
    assert.matches(",hot,virtual,", csv:match("\n[^\n]*\n"))
    assert.is_truthy(text:find(string.format("%.1f", rows[1].gbps), 1, true))
    assert.equal(0, (h.run("report", dir, "-o", dir .. "/r.html")))
    local html = h.read(dir .. "/r.html")
    assert.is_truthy(html:find("<th>GB/s</th>", 1, true))
    assert.is_truthy(html:find(results.fmt_rate(rows[1].gbps, "B"), 1, true)) -- the point's facts
    assert.is_truthy(html:find('data-metric="gbps"', 1, true) or html:find("GB/s: tiles", 1, true))
  end)

  it("takes emu's counted global bytes when undeclared in a stats run, and the report shows the counters", function()
    mgpu.run(exp_with({ stats = true }), { out = dir, quiet = true })
    local rows = results.rows(dir)
    local r = rows[1]
    local want = r.stats["ptx__bytes_requested_mem_global_op_ld.sum"] + r.stats["ptx__bytes_requested_mem_global_op_st.sum"]
    assert.equal(2 * 4 * 128, want) -- tiles = 2: 128 floats read and written
    assert.equal(want, r.bytes)
    assert.equal("counted", r.bytes_source)
    assert.equal(want / r.time_ns.median, r.gbps)
    assert.is_nil(r.gflops)
    assert.equal(0, (h.run("report", dir, "-o", dir .. "/r.html")))
    local html = h.read(dir .. "/r.html")
    assert.is_truthy(html:find("<h2>Counters</h2>", 1, true))
    assert.is_truthy(html:find("global loads 8 requests", 1, true) or html:find("global loads", 1, true))
  end)

  it("refuses bytes or flops that are not a count", function()
    local r = mgpu.run(exp_with(nil, function() return { bytes = -1 } end), { out = dir, quiet = true })
    assert.equal(2, r.failed)
    local row = results.rows(dir)[1]
    assert.equal("bad_argument", row.error.code)
    assert.matches("setup's bytes must be a number >= 0", row.error.message)
  end)
end)

describe("the report's pass in C (core.trace_scan)", function()
  local rt = require "mgpu.report_trace"
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.rmdir(dir) end)

  it("gives what the Lua pass gives, and refuses what it refuses", function()
    local tr, sm = dir .. "/f.trace.json", dir .. "/f.summary.json"
    assert.equal(0, (h.run("dump", h.fixtures .. "/wg_264blocks_nested.bin", "--meta",
      h.fixtures .. "/wg_264blocks_nested.meta.json", "--clock-ghz", "1.98", "-o", tr, "--summary-json", sm, "-q")))
    local span = core.json_decode(h.read(sm)).timeline.span
    for _, budget in ipairs({ 40000, 300 }) do
      local c = rt.read(tr, { span = span, budget = budget })
      local l = rt.read(tr, { span = span, budget = budget, lua = true })
      for _, k in ipairs({ "lanes", "regions", "inflight", "names", "runs", "merged", "events", "span", "sms" }) do
        assert.equal(core.json_encode(l[k]), core.json_encode(c[k]), k)
      end
    end
    -- a region that never ends, and ends that do not nest: bad_trace naming the file, as in Lua
    local text = h.read(tr)
    h.write(dir .. "/cut.trace.json", (text:gsub('\n{"name":"step","ph":"E"[^\n]*\n(%])', "\n%1")))
    local ok, err = pcall(rt.read, dir .. "/cut.trace.json", { span = span })
    assert.is_false(ok)
    assert.equal("bad_trace", err.code)
    assert.matches("cut%.trace%.json: pid %d+ tid %d+: region step never ends", err.message)
  end)
end)

describe("the documentation", function()
  it("names every key an experiment, its profile and setup's table take", function()
    local src = h.read(h.src .. "/lua/mgpu/experiment.lua")
    local doc = h.read(h.src .. "/docs/experiments.md")
    for _, list in ipairs({ "EXPERIMENT_KEYS", "PROFILE_KEYS", "SETUP_KEYS" }) do
      local body = src:match("local " .. list .. " = (%b{})")
      assert.is_string(body, list)
      for key in body:gmatch('"([%w_]+)"') do
        assert.is_truthy(doc:find("`" .. key .. "`", 1, true), list .. ": `" .. key .. "` is not in docs/experiments.md")
      end
    end
  end)
end)
