-- experiment_spec.lua: experiments: axis expansion and overrides, sizing,
-- the retry policy with overflows forced on purpose, results files, failing
-- points, resume, and the example scripts from the command line.
local h = require "helpers"
local mgpu = require "mgpu"
local axes = require "mgpu.axes"
local core = require "mgpu.core"
local results = require "mgpu.results"

local function keys(points, groups)
  local out = {}
  for i, p in ipairs(points) do out[i] = axes.key(groups, p) end
  return out
end

describe("axes", function()
  it("expand a map in name order, first axis slowest", function()
    local g = axes.groups { n = { 1, 2 }, block = { 32, 64 } }
    local pts = axes.expand(g)
    assert.same({ "block=32,n=1", "block=32,n=2", "block=64,n=1", "block=64,n=2" }, keys(pts, g))
  end)

  it("keep the order of a list, zip axes together, and filter", function()
    local g = axes.groups { mgpu.axis("n", { 1, 2, 3 }), mgpu.zip { { "m", { 10, 20 } }, { "k", { "a", "b" } } } }
    local pts, dropped = axes.expand(g, function(p) return p.n ~= 2 end)
    assert.same({ "n=1,m=10,k=a", "n=1,m=20,k=b", "n=3,m=10,k=a", "n=3,m=20,k=b" }, keys(pts, g))
    assert.equal(2, dropped)
  end)

  it("take --set overrides with typed values and refuse unknown axes", function()
    local g = axes.override(axes.groups { block = { 32 }, mode = { "x" } }, { block = "64,128", mode = "fast,0.5" })
    local pts = axes.expand(g)
    assert.equal(4, #pts)
    assert.equal(64, pts[1].block)
    if math.type then assert.is_true(math.type(pts[1].block) == "integer") end -- Lua 5.3+
    assert.equal("fast", pts[1].mode)
    assert.equal(0.5, pts[2].mode)
    local ok, err = pcall(axes.override, axes.groups { block = { 32 } }, { blk = "1" })
    assert.equal("bad_argument", err.code)
    assert.matches("no such axis %(axes: block%)", err.message)
    ok, err = pcall(mgpu.zip, { a = { 1, 2 }, b = { 1 } })
    assert.equal("bad_argument", err.code)
  end)

  it("size traces: 3 header words and 2 per event", function()
    assert.equal(3, mgpu.entries_for(0))
    assert.equal(2051, mgpu.entries_for(1024))
  end)
end)

describe("experiments", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.rmdir(dir) end)

  local function tiled(extra)
    return h.tiled_experiment({ name = "tiled_test", axes = { tiles = { 2, 6 } }, warmup = 0, repeats = 2,
      estimate = 1 }, extra)
  end

  it("retry an instrumented kernel once with the exact entries and write the results folder", function()
    local r = mgpu.run(tiled(), { out = dir, quiet = true })
    assert.equal(2, r.ok)
    assert.equal(0, r.failed)
    local rows = results.read_jsonl(dir .. "/results.jsonl")
    assert.equal(2, #rows)
    -- tiles=6 over 2 blocks: 3 tiles per warp x 8 events -> 3 + 48 entries
    -- (entries are even: aligned records; required is what the kernel counted, 3 + events)
    assert.same({ { entries = 6, required = 51 },
      { entries = 52, required = 51, restored = { 2 }, restored_bytes = 1536 } }, rows[2].attempts)
    assert.equal(52, rows[2].entries)
    assert.equal("ok", rows[2].status)
    for _, reg in ipairs(rows[2].regions) do assert.equal(12, reg.count) end -- 4 warps x 3 tiles
    assert.is_true(rows[2].time_ns.min > 0)
    assert.equal(0, rows[2].time_ns.stddev) -- emu's virtual time does not vary
    assert.is_string(h.read(dir .. "/point-2.trace.json"))
    local summary = core.json_decode(h.read(dir .. "/point-2.summary.json"))
    assert.equal("ns", summary.unit)
    -- the clock the times were converted with: measured from the calibration words (emu: the
    -- default device model's 1.755 GHz)
    assert.equal("measured", summary.clock.source)
    assert.is_true(math.abs(summary.clock.ghz - 1.755) < 0.012)
    assert.same(summary.clock, rows[2].clock)
    local csv = h.read(dir .. "/results.csv")
    assert.matches("^index,tiles,status,error_code,error,time_ns_min,time_ns_median,time_ns_mean,time_ns_stddev,", csv)
    assert.matches("\n2,6,ok,,,", csv)
    -- every region's statistics as columns, in the order the regions first appear
    local head = csv:match("^[^\n]*")
    assert.matches(",trace,time_n,time_noise_pct,time_stop,timing,time_kind,region_unit,span,sms,sm_done_median,sm_done_max,tile%.count,tile%.mean,tile%.median,"
      .. "tile%.p99,tile%.max,tile%.truncated,tile%.concurrency,load%.count,", head)
    local cols, row2 = {}, {}
    for c in head:gmatch("[^,]+") do cols[#cols + 1] = c end
    for c in (csv:match("\n(2,[^\n]*)") .. ","):gmatch("([^,]*),") do row2[#row2 + 1] = c end
    assert.equal(#cols, #row2)
    local cell = {}
    for i, c in ipairs(cols) do cell[c] = row2[i] end
    assert.equal("ns", cell.region_unit)
    -- the timeline: 2 blocks on 2 (virtual) SMs; every region's concurrency is its total over the span
    local tl = rows[2].timeline
    assert.same(tl, summary.timeline)
    assert.equal(2, tl.sms)
    assert.equal(4, tl.traces) -- 2 blocks x 2 warps
    assert.is_true(tl.span > 0 and tl.sm_done_max == tl.span and tl.sm_done_median <= tl.span)
    assert.equal(tostring(tl.span), cell.span)
    assert.equal("2", cell.sms)
    for _, reg in ipairs(rows[2].regions) do
      assert.near(reg.total / tl.span, reg.concurrency, 1e-12)
      assert.near(reg.concurrency, tonumber(cell[reg.name .. ".concurrency"]), 1e-9)
    end
    for _, reg in ipairs(rows[2].regions) do
      assert.equal("12", cell[reg.name .. ".count"])
      assert.equal(reg.median, tonumber(cell[reg.name .. ".median"]))
      assert.equal(reg.p99, tonumber(cell[reg.name .. ".p99"]))
    end
    local man = core.json_decode(h.read(dir .. "/manifest.json"))
    assert.equal("tiled_test", man.experiment)
    assert.equal("emu", man.backend)
    assert.equal(2, man.points)
    assert.matches("^%x+$", man.ptx[1].sha256)
    assert.equal(64, #man.ptx[1].sha256)
  end)

  it("leave the retry of an instrumented kernel to the launch, calling setup's before first", function()
    local setups, befores = 0, 0
    local exp = tiled {
      axes = { tiles = { 6 } },
      setup = function(p, dev, entries)
        setups = setups + 1
        assert.is_nil(entries) -- the launch retries; setup is not called again
        local n = 64 * p.tiles
        local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
        return { grid = 2, block = 64, smem = 256, args = { a, c, n, 1.0 }, estimate = 1,
          before = function() befores = befores + 1 end }
      end,
    }
    local r = mgpu.run(exp, { out = dir, quiet = true })
    assert.equal(1, r.ok)
    assert.equal(1, setups)
    -- before each of the plain kernel's 2 timed launches, each of the 2 measured instrumented
    -- launches, and before the first one's retry: the second launch is given the entries the first
    -- one needed, so it fits at once
    assert.equal(5, befores)
    local rows = results.read_jsonl(dir .. "/results.jsonl")
    assert.same({ { entries = 6, required = 51 },
      { entries = 52, required = 51, restored = { 2 }, restored_bytes = 1536 } }, rows[1].attempts)
    assert.equal(52, rows[1].entries)
    -- retry = false: the launch does not retry, and the point fails with what the kernel counted
    setups, befores = 0, 0
    exp.retry = false
    r = mgpu.run(exp, { out = dir .. "/no", quiet = true })
    assert.equal(1, r.failed)
    assert.equal(1, setups)
    assert.equal(4, befores) -- the plain kernel's 2 launches, then the instrumented one's
    local row = results.read_jsonl(dir .. "/no/results.jsonl")[1]
    assert.equal("insufficient_space", row.error.code)
    assert.equal(51, row.error.required)
  end)

  it("refuse a misspelled key in the experiment, its profile and setup's table, naming it", function()
    local ok, err = pcall(mgpu.run, tiled { repeates = 2 }, { out = dir, quiet = true })
    assert.is_false(ok)
    assert.equal("bad_argument", err.code)
    assert.matches('^experiment: unknown key "repeates" %(allowed: name, module, kernel, instrument, ', err.message)
    assert.matches(", repeats, ", err.message)
    assert.equal("repeates", err.key)
    ok, err = pcall(mgpu.run, tiled { name = "x", kernal = "k", [1] = true }, { out = dir, quiet = true })
    assert.matches('^experiment: unknown keys "kernal", %[1%] %(allowed: ', err.message)
    -- a profile table: refused before anything runs; a profile function's table: the point fails
    local mosaic = {
      name = "profile_keys", module = h.fixtures .. "/copy_bounds_wg.ptx", kernel = "body_mosaic_gpu_kernel",
      profile = { scope = "warpgroup", entries = 32, names = { "Init", "load", "store" }, stagged = true },
      setup = function(_, dev)
        return { grid = 8, block = 128, args = { dev:array("bf16", 16384), dev:array("bf16", 16384), mgpu.TRACE } }
      end,
    }
    ok, err = pcall(mgpu.run, mosaic, { out = dir, quiet = true })
    assert.is_false(ok)
    assert.equal("bad_argument", err.code)
    assert.equal('experiment.profile: unknown key "stagged" (allowed: scope, entries, names, staged, smem_extra)',
      err.message)
    local prof = mosaic.profile
    mosaic.profile = function() return prof end
    local r = mgpu.run(mosaic, { out = dir .. "/p", quiet = true })
    assert.equal(1, r.failed)
    local row = results.read_jsonl(dir .. "/p/results.jsonl")[1]
    assert.equal("bad_argument", row.error.code)
    assert.matches('^experiment.profile: unknown key "stagged"', row.error.message)
    -- setup's table
    r = mgpu.run(tiled {
      axes = { tiles = { 2 } },
      setup = function(_, dev)
        return { grdi = 2, block = 64, smem = 256, args = { dev:array("f32", 128), dev:array("f32", 128), 128, 1.0 } }
      end,
    }, { out = dir .. "/s", quiet = true })
    assert.equal(1, r.failed)
    row = results.read_jsonl(dir .. "/s/results.jsonl")[1]
    assert.equal("bad_argument", row.error.code)
    assert.equal('setup: unknown key "grdi" (allowed: grid, block, smem, args, entries, estimate, check, before, '
      .. 'expect, cooperative, bytes, flops)', row.error.message)
  end)

  it("add in-flight counter tracks to each point's trace when asked", function()
    local r = mgpu.run(tiled { axes = { tiles = { 2 } }, counters = 16 }, { out = dir, quiet = true })
    assert.equal(1, r.ok)
    local t = core.json_decode(h.read(dir .. "/point-1.trace.json"))
    local per_name, total = {}, {}
    for _, ev in ipairs(t.traceEvents) do
      if ev.ph == "C" then
        assert.equal(3, ev.pid) -- after the SMs 0 and 1 (pids 1, 2)
        per_name[ev.name] = (per_name[ev.name] or 0) + 1
        total[ev.name] = (total[ev.name] or 0) + ev.args["in flight"]
      end
    end
    -- 16 bins and a closing 0, for each of tile, load, compute, store
    assert.same({ tile = 17, load = 17, compute = 17, store = 17 }, per_name)
    -- a region's counter integrates to its total time: sum(bin values) x bin width = total
    local rows = results.read_jsonl(dir .. "/results.jsonl")
    local span = rows[1].timeline.span
    for _, reg in ipairs(rows[1].regions) do
      assert.near(reg.total, total[reg.name] * span / 16, 0.01 * reg.total + 1)
    end
    local ok, err = pcall(mgpu.run, tiled { counters = 0.5 }, { out = dir, quiet = true })
    assert.is_false(ok)
    assert.matches("counters must be a number of bins", err.message)
  end)

  it("flush a buffer before each measured launch when asked", function()
    local r = mgpu.run(tiled { axes = { tiles = { 2 } }, flush_l2 = 1048576 }, { out = dir, quiet = true })
    assert.equal(1, r.ok)
  end)

  it("record a failing point and go on", function()
    local exp = tiled {
      axes = { tiles = { 2, 3, 4 } },
      setup = function(p, dev)
        local n = 64 * p.tiles
        local a, c = dev:array("f32", n), dev:array("f32", n)
        if p.tiles == 3 then
          return { grid = 2, block = 64, smem = 256, args = { a, c, n } } -- one argument short
        end
        return { grid = 2, block = 64, smem = 256, args = { a, c, n, 1.0 },
          check = function() return p.tiles ~= 4, "tiles=4 is wrong on purpose" end }
      end,
    }
    local r = mgpu.run(exp, { out = dir, quiet = true })
    assert.equal(1, r.ok)
    assert.equal(2, r.failed)
    local rows = results.latest(results.read_jsonl(dir .. "/results.jsonl"))
    assert.equal("bad_argument", rows[2].error.code)
    assert.matches("takes 4 arguments, 3 were given", rows[2].error.message)
    assert.equal("check_failed", rows[3].error.code)
    assert.matches("tiles=4 is wrong on purpose", rows[3].error.message)
  end)

  it("check the region counts a point expects", function()
    local expects = {
      { tile = 12, load = 12, compute = 12, store = 12 },   -- 4 warps x 3 tiles: ok
      { load = 12, store = 13 },                             -- one short
      { load = function(n) return n % 4 == 0 end, nothere = 0 }, -- a function; an absent region counts 0
      { nothere = 1 },
      { load = "12" },                                       -- not a count
    }
    local exp = tiled {
      axes = { case = { 1, 2, 3, 4, 5 } },
      setup = function(p, dev)
        local n = 64 * 6
        local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
        return { grid = 2, block = 64, smem = 256, args = { a, c, n, 1.0 }, estimate = 24, expect = expects[p.case] }
      end,
    }
    local r = mgpu.run(exp, { out = dir, quiet = true })
    assert.equal(2, r.ok)
    local rows = results.latest(results.read_jsonl(dir .. "/results.jsonl"))
    assert.equal("ok", rows[1].status)
    assert.equal("check_failed", rows[2].error.code)
    assert.equal("region store: the trace closed 12, expected 13", rows[2].error.message)
    assert.equal("ok", rows[3].status)
    assert.equal("region nothere: the trace closed 0, expected 1", rows[4].error.message)
    assert.equal("bad_argument", rows[5].error.code)
    assert.matches("expect.load must be a count or a function", rows[5].error.message)
  end)

  it("show file:line and a traceback for a script error", function()
    local exp = tiled { setup = function() local t = nil; return t.x end }
    mgpu.run(exp, { out = dir, quiet = true })
    local rows = results.read_jsonl(dir .. "/results.jsonl")
    assert.equal("script_error", rows[1].error.code)
    assert.matches("experiment_spec%.lua:%d+: attempt to index", rows[1].error.message)
    assert.matches("stack traceback", rows[1].error.message)
  end)

  it("resume without redoing finished points", function()
    local calls = 0
    local exp = tiled {
      axes = { tiles = { 2, 3, 4 } },
      setup = function(p, dev)
        calls = calls + 1
        local n = 64 * p.tiles
        local a, c = dev:array("f32", n), dev:array("f32", n)
        if p.tiles == 3 and calls < 3 then error("interrupted on purpose") end
        return { grid = 2, block = 64, smem = 256, args = { a, c, n, 1.0 }, estimate = 40 }
      end,
    }
    local r = mgpu.run(exp, { out = dir, quiet = true })
    assert.equal(2, r.ok)
    assert.equal(1, r.failed)
    calls = 10
    r = mgpu.run(exp, { resume = dir, quiet = true })
    assert.equal(1, r.ok)
    assert.equal(2, r.skipped)
    local rows = results.latest(results.read_jsonl(dir .. "/results.jsonl"))
    assert.equal(3, #rows)
    for _, row in ipairs(rows) do assert.equal("ok", row.status) end
    local ok, err = pcall(mgpu.run, tiled { name = "other" }, { resume = dir, quiet = true })
    assert.equal("bad_argument", err.code)
    assert.matches("holds experiment tiled_test", err.message)
  end)

  it("double the buffer of a kernel that writes its own trace until it fits", function()
    -- each warp's lane 0 writes a header saying it recorded 10 events (20 words)
    -- and writes only the events its buffer has room for: entries is an argument
    local ptx = [[
.version 8.0
.target sm_90
.address_size 64
.visible .entry own(.param .u64 buf, .param .u32 entries)
{
.reg .pred %p<3>;
.reg .b32 %r<12>;
.reg .b64 %rd<6>;
ld.param.u64 %rd1, [buf];
ld.param.u32 %r1, [entries];
mov.u32 %r2, %tid.x;
and.b32 %r3, %r2, 31;
setp.ne.u32 %p1, %r3, 0;
@%p1 bra DONE;
shr.u32 %r4, %r2, 5;
mul.lo.u32 %r5, %r4, %r1;
mul.wide.u32 %rd2, %r5, 4;
add.s64 %rd3, %rd1, %rd2;
mov.u32 %r6, %smid;
st.global.u32 [%rd3+4], %r6;
mov.u32 %r7, 20;
st.global.u32 [%rd3+8], %r7;
mov.u32 %r8, 0;
LOOP:
add.u32 %r9, %r8, 5;
setp.gt.u32 %p2, %r9, %r1;
@%p2 bra DONE;
mul.wide.u32 %rd4, %r8, 4;
add.s64 %rd5, %rd3, %rd4;
and.b32 %r10, %r8, 2;
shl.b32 %r11, %r10, 30;
st.global.u32 [%rd5+12], %r11;
st.global.u32 [%rd5+16], %r8;
add.u32 %r8, %r8, 2;
setp.lt.u32 %p2, %r8, 20;
@%p2 bra LOOP;
DONE:
ret;
}
]]
    local f = io.open(dir .. "/own.ptx", "w")
    f:write(ptx)
    f:close()
    local exp = {
      name = "own_trace",
      module = dir .. "/own.ptx",
      kernel = "own",
      profile = { scope = "warp", names = { "r" } },
      warmup = 0, repeats = 1,
      setup = function(_, _, entries)
        entries = entries or 8
        return { grid = 1, block = 64, args = { mgpu.TRACE, entries }, entries = entries }
      end,
    }
    local r = mgpu.run(exp, { out = dir .. "/res", quiet = true })
    assert.equal(1, r.ok)
    local rows = results.read_jsonl(dir .. "/res/results.jsonl")
    assert.equal(35, rows[1].entries)                          -- 8 -> 17 -> 35 >= 23
    assert.equal(3, #rows[1].attempts)
    assert.equal("insufficient_space", rows[1].attempts[1].error)
    assert.equal(23, rows[1].attempts[1].required)
    assert.equal(17, rows[1].attempts[2].entries)
    assert.is_nil(rows[1].attempts[3].error)
    assert.equal(10, rows[1].regions[1].count)                 -- 2 warps x 5 regions
    -- with a cap, it fails plainly
    exp.max_entries = 20
    r = mgpu.run(exp, { out = dir .. "/res2", quiet = true })
    assert.equal(1, r.failed)
    local row = results.read_jsonl(dir .. "/res2/results.jsonl")[1]
    assert.equal("insufficient_space", row.error.code)
    assert.matches("exceed max_entries 20", row.error.message)
    -- without its bounds check the kernel overruns a small buffer: a kernel_fault, taken
    -- as an overrun from the first attempt on (8 and 17 entries fault, 35 fit)
    h.write(dir .. "/own.ptx", (ptx:gsub("setp%.gt%.u32 %%p2, %%r9, %%r1;\n@%%p2 bra DONE;\n", "")))
    exp.max_entries = nil
    r = mgpu.run(exp, { out = dir .. "/res3", quiet = true })
    assert.equal(1, r.ok)
    row = results.read_jsonl(dir .. "/res3/results.jsonl")[1]
    assert.same({ { entries = 8, error = "kernel_fault" }, { entries = 17, error = "kernel_fault" },
      { entries = 35, required = 23 } }, row.attempts)
    assert.equal(35, row.entries)
  end)
end)

describe("replay and interruption", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.rmdir(dir) end)

  local script = [[
local mgpu = require "mgpu"
return {
  name = "replay_test",
  module = "]] .. h.src .. [[/ptx/reduce.ptx",
  kernel = "reduce_sum_f32",
  instrument = "warp",
  axes = { n = { 1000, 5000 } },
  repeats = 1,
  setup = function(p, dev)
    local x = dev:array("f32", p.n, { fill = "random", seed = 4, min = 0, max = 1 })
    return { grid = 2, block = 64, smem = 256, args = { x, dev:array("f32", 2), p.n } }
  end,
}
]]

  it("replays a results folder identically on emu, and refuses a changed script", function()
    h.write(dir .. "/exp.lua", script)
    local st, _, err = h.run(dir .. "/exp.lua", "--out", dir .. "/r", "--quiet")
    assert.equal(0, st, err)
    local out
    st, out, err = h.run("replay", dir .. "/r")
    assert.equal(0, st, err)
    assert.matches("2 points identical, 0 differ", out)
    h.write(dir .. "/exp.lua", script .. "-- edited\n")
    st, out, err = h.run("replay", dir .. "/r")
    assert.equal(2, st)
    assert.matches("changed since the run", err)
    st, out, err = h.run("replay", dir .. "/r", "--force")
    assert.equal(0, st, err)
  end)

  it("compares GPU timings within their noise, emu rows exactly", function()
    local ex = require "mgpu.replay"
    local old = { status = "ok", entries = 35, time_ns = { min = 100, median = 105, max = 110 } }
    local near = { status = "ok", entries = 35, time_ns = { min = 98, median = 112, max = 120 } }
    local far = { status = "ok", entries = 35, time_ns = { min = 150, median = 160, max = 170 } }
    assert.is_true(ex.same_row(old, near, "cuda"))
    local ok, why = ex.same_row(old, far, "cuda")
    assert.is_false(ok)
    assert.matches("median time 105 ns %-> 160 ns, more than the noise", why)
    assert.is_false(ex.same_row(old, near, "emu")) -- virtual time: must be identical
    assert.is_false(ex.same_row(old, { status = "ok", entries = 36, time_ns = old.time_ns }, "cuda"))
  end)

  it("leaves a consistent folder when interrupted, and resumes", function()
    local n = 0
    local exp = {
      name = "interrupt_test", module = h.src .. "/ptx/copy.ptx", kernel = "copy_f32x4",
      axes = { k = { 1, 2, 3 } }, repeats = 1,
      setup = function(p, dev)
        n = n + 1
        if n == 2 then error(mgpu.errors.new("interrupted", "interrupted (Ctrl-C)")) end
        local a, b = dev:array("f32", 64), dev:array("f32", 64)
        return { grid = 1, block = 16, args = { a, b, 16 } }
      end,
    }
    local r = mgpu.run(exp, { out = dir, quiet = true })
    assert.is_true(r.interrupted)
    assert.equal(1, r.ok)
    assert.matches("\n1,1,ok", h.read(dir .. "/results.csv"))
    r = mgpu.run(exp, { resume = dir, quiet = true })
    assert.equal(2, r.ok)
    assert.equal(1, r.skipped)
  end)

  it("refuses a trace that cannot fit in device memory before launching", function()
    local exp = {
      name = "mem_test", module = h.src .. "/ptx/copy.ptx", kernel = "copy_f32x4", instrument = "warp",
      retry = false,
      setup = function(_, dev)
        return { grid = 65536, block = 1024, args = { dev:array("f32", 4), dev:array("f32", 4), 1 }, entries = 1048576 }
      end,
    }
    local r = mgpu.run(exp, { out = dir, quiet = true })
    assert.equal(1, r.failed)
    local row = results.read_jsonl(dir .. "/results.jsonl")[1]
    assert.equal("launch_failed", row.error.code)
    assert.matches("more than half of the device's", row.error.message)
  end)

  it("refuses a trace that cannot fit in shared memory before launching", function()
    local exp = {
      name = "smem_test", module = h.fixtures .. "/copy_bounds_wg.ptx", kernel = "body_mosaic_gpu_kernel",
      profile = { scope = "warpgroup", entries = 100000, names = { "Init", "load", "store" }, staged = true },
      retry = false,
      setup = function(_, dev)
        return { grid = 8, block = 128, args = { dev:array("bf16", 16384), dev:array("bf16", 16384), mgpu.TRACE } }
      end,
    }
    local r = mgpu.run(exp, { out = dir, quiet = true })
    assert.equal(1, r.failed)
    local row = results.read_jsonl(dir .. "/results.jsonl")[1]
    assert.equal("launch_failed", row.error.code)
    assert.matches("400000 bytes of shared memory per block", row.error.message)
    -- the limit is the device's (dev.max_smem: sm_90's opt-in 232448 bytes on emu)
    assert.matches("more than the " .. mgpu.device("emu").max_smem .. " bytes", row.error.message)
  end)
end)

describe("example experiments", function()
  for _, name in ipairs({ "copy", "tile_sweep", "mosaic", "overflow_retry" }) do
    it(name .. ".lua runs with one command and ends with a summary", function()
      local dir = h.tmpdir()
      local st, out, err = h.run(h.src .. "/scripts/examples/" .. name .. ".lua", "--out", dir)
      assert.equal(0, st, err)
      assert.matches("#%s+%S+.*status", out)
      assert.matches("%d+ ok, 0 failed", out)
      assert.is_string(h.read(dir .. "/results.csv"))
      h.rmdir(dir)
    end)
  end
  it("--list shows the points without running them", function()
    local st, out = h.run(h.src .. "/scripts/examples/tile_sweep.lua", "--list", "--set", "n=4096")
    assert.equal(0, st)
    assert.matches("3 points %(0 filtered out%)", out)
    -- what this command would run: a shard's points (third hostile round: --list ignored --shard)
    st, out = h.run(h.src .. "/scripts/examples/tile_sweep.lua", "--list", "--set", "n=4096", "--shard", "2/2")
    assert.equal(0, st)
    assert.matches("1 points %(0 filtered out%)", out)
  end)
  it("mgpu.run checks shard and backend as the command line does", function()
    local ex = h.tiled_experiment { name = "shards", axes = { tiles = { 1, 2, 3 } }, estimate = 16 }
    local bad = {
      { { shard = { index = 0, count = 2 }, list = true }, "shard takes {index = I, count = N}" },
      { { shard = { index = 1.5, count = 2 }, list = true }, "shard takes" },
      { { shard = { 1, 2 }, list = true }, "shard takes" },
      { { shard = "1/2", list = true }, "shard takes" },
      { { shard = { index = 1 }, list = true }, "shard takes" },
      { { backend = "cuda:-1", list = true }, 'backend takes emu, cuda, cuda:N or auto, not "cuda:%-1"' },
      { { backend = "emu ", list = true }, "backend takes" },
    }
    for _, c in ipairs(bad) do
      c[1].quiet = true
      local ok, err = pcall(mgpu.run, ex, c[1])
      assert.is_false(ok)
      assert.equal("bad_argument", err.code)
      assert.matches(c[2], err.message)
    end
    local r = mgpu.run(ex, { shard = { index = 2, count = 2 }, list = true, quiet = true })
    assert.equal(1, #r.rows) -- of points 1, 2, 3: shard 2 of 2 is point 2
  end)
  it("--backend and --shard are checked before anything, --list too", function()
    local ex = h.src .. "/scripts/examples/tile_sweep.lua"
    local st, _, err = h.run(ex, "--list", "--backend", "tpu")
    assert.equal(2, st)
    assert.matches('%-%-backend takes emu, cuda, cuda:N or auto, not "tpu"', err)
    st, _, err = h.run(ex, "--list", "--shard", "1/99999999999999999999")
    assert.equal(2, st)
    assert.matches("%-%-shard takes I/N", err)
    st = h.run(ex, "--list", "--backend", "cuda:1", "--shard", "1/1000")
    assert.equal(0, st)
  end)
  it("a bad option is a usage error", function()
    local st, _, err = h.run(h.src .. "/scripts/examples/copy.lua", "--bogus")
    assert.equal(2, st)
    assert.matches("unknown option %-%-bogus", err)
  end)
end)

describe("example scripts", function()
  -- plain scripts (not experiments): one output folder, a trace and a summary
  for _, name in ipairs { "dump_fixture", "emu_mosaic", "profile_tiled" } do
    it(name .. ".lua writes its trace into the folder it is given, and refuses options", function()
      local dir = h.tmpdir()
      local st, out, err = h.run(h.src .. "/scripts/examples/" .. name .. ".lua", dir .. "/out")
      assert.equal(0, st, err)
      assert.matches("%S", out)
      assert.is_string(h.read(dir .. "/out/trace.json"))
      st, _, err = h.run(h.src .. "/scripts/examples/" .. name .. ".lua", "--backend", "cuda")
      assert.equal(2, st)
      assert.matches("takes only an output folder %(got %-%-backend%)", err)
      h.rmdir(dir)
    end)
  end
end)

-- Measurement that stops when it is sure (issue 35, nvbench's habit): min_time, max_noise and
-- max_repeats beside repeats, on a kernel whose times the test scripts.
describe("timing that stops when it is sure", function()
  local timing = require "mgpu.timing"
  local function fake(times)
    local i = 0
    return { launch = function() i = i + 1; return { time_ns = times(i) } end, device = function() end }
  end

  it("gives equal times no noise (a mean of three 0.1 is not 0.1 in floating point)", function()
    local st = timing.stats({ 0.1, 0.1, 0.1 })
    assert.equal(0, st.stddev)
    assert.equal(0, st.noise)
    assert.is_true(timing.stats({ 0.1, 0.2 }).noise > 0)
  end)

  it("stops on max_noise once the relative standard deviation is at most it", function()
    -- one slow launch, then steady ones: the noise falls as the steady ones pile up
    local k = fake(function(i) return i == 2 and 300 or 100 end)
    local st = timing.time(k, {}, { warmup = 0, repeats = 2, max_noise = 10 })
    assert.equal("max_noise", st.stop)
    assert.is_true(st.noise <= 10)
    local before = {}
    for i = 1, st.n - 1 do before[i] = i == 2 and 300 or 100 end
    assert.is_true(timing.stats(before).noise > 10, "it did not stop at the first sure count")
    assert.equal("hot", st.mode)
  end)

  it("stops at max_repeats when it never gets sure, and on min_time", function()
    local st = timing.time(fake(function(i) return i % 2 == 0 and 300 or 100 end), {},
      { warmup = 0, repeats = 2, max_noise = 1, max_repeats = 20 })
    assert.equal("max_repeats", st.stop)
    assert.equal(20, st.n)
    st = timing.time(fake(function() return 1e8 end), {}, { warmup = 0, repeats = 1, min_time = 0.35 })
    assert.equal("min_time", st.stop)
    assert.equal(4, st.n)
    st = timing.time(fake(function() return 5 end), {}, { warmup = 0, repeats = 3 })
    assert.equal("repeats", st.stop)
    assert.equal(3, st.n)
  end)

  it("checks its options, and records noise, n and the rule in results, csv and the table", function()
    for _, c in ipairs({ { { max_noise = 0 }, "max_noise must be a percentage above 0" },
      { { min_time = "1" }, "min_time must be a number of seconds above 0" },
      { { repeats = 5, max_repeats = 2 }, "max_repeats %(2%) must be at least repeats %(5%)" } }) do
      local ok, e = pcall(mgpu.run, h.tiled_experiment({ name = "t", axes = { tiles = { 1 } }, estimate = 16 }, c[1]),
        { quiet = true, list = true })
      assert.is_false(ok)
      assert.equal("bad_argument", e.code)
      assert.matches("experiment%." .. c[2], e.message)
    end
    local dir = h.tmpdir()
    local r = mgpu.run(h.tiled_experiment({ name = "t", axes = { tiles = { 1, 2 } }, estimate = 16, max_noise = 0.5,
      warmup = 0 }), { out = dir, quiet = true })
    assert.equal(2, r.ok)
    for _, row in ipairs(r.rows) do
      -- emu's times are exact: no noise, sure after the fewest launches (repeats, at least 2)
      assert.equal("max_noise", row.time_ns.stop)
      assert.equal(3, row.time_ns.n)
      assert.equal(0, row.time_ns.noise)
    end
    local csv = h.read(dir .. "/results.csv")
    assert.matches(",time_n,time_noise_pct,time_stop,timing,time_kind,", csv)
    assert.matches(",3,0%.?0?,max_noise,hot,virtual,", csv) -- 0.0 (Lua 5.4) or 0 (LuaJIT)
    local text = results.table({ "tiles" }, r.rows, "emu time")
    assert.matches("noise %(n, stop%)", text)
    assert.matches("0%.00%% %(3, max_noise%)", text)
    local man = core.json_decode(h.read(dir .. "/manifest.json"))
    assert.equal(0.5, man.max_noise)
    assert.equal("hot", man.timing)
    assert.matches("emu's caches start empty at each launch, so cold %(flush_l2%) equals hot", man.time_note)
    h.rmdir(dir)
  end)
end)

describe("-q", function()
  it("hides the table but never the failures (issue 35: a failing sweep printed nothing but exit 7)", function()
    local dir = h.tmpdir()
    h.write(dir .. "/exp.lua", string.format([[
return { name = "quiet", module = %q, kernel = "tiled_scale", axes = { tiles = { 1, 2 } }, warmup = 0, repeats = 1,
  setup = function(p, dev)
    local n = 64 * p.tiles
    local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
    return { grid = 2, block = 64, smem = 256, args = { a, c, n, 1.0 },
      check = function() return p.tiles == 1, "tile 2 is wrong on purpose" end }
  end }
]], h.src .. "/ptx/tiled.ptx"))
    local st, out, err = h.run(dir .. "/exp.lua", "--out", dir .. "/r", "-q")
    assert.equal(7, st)
    assert.equal("", out)
    assert.matches("mgpu%-harness: point 2 tiles=2 failed: check_failed: check failed: tile 2 is wrong on purpose\n", err)
    assert.matches("quiet: 1 ok, 1 failed", err)
    assert.not_matches("point 1 ", err)
    h.rmdir(dir)
  end)
end)
