-- mgpu_spec.lua: the Lua API (`require "mgpu"`) through the mgpu.core C
-- module, and the same code embedded in the executable.
local h = require "helpers"
local mgpu = require "mgpu"

describe("mgpu", function()
  it("has a version", function()
    assert.matches("^%d+%.%d+%.%d+$", mgpu.VERSION)
  end)

  it("sizes trace buffers", function()
    local s = mgpu.spec { grid = 1056, block = 256, scope = "warp", entries = mgpu.entries_for(1024) }
    assert.equal(8448, s.num_traces)
    assert.equal(8, s.traces_per_block)
    assert.equal(8448 * 2051 * 4, s.bytes)
    s = mgpu.spec { grid = { 2, 3, 4 }, block = { 128, 2 }, entries = 16 }
    assert.equal(48, s.num_traces)
    assert.equal("warpgroup", s.scope)
  end)

  it("raises error values with a code", function()
    local ok, err = pcall(mgpu.spec, { grid = 1, block = 96, scope = "warpgroup", entries = 16 })
    assert.is_false(ok)
    assert.equal("bad_argument", err.code)
    assert.matches("not a multiple of the warpgroup size", tostring(err))
    assert.is_true(mgpu.errors.is(err, "bad_argument"))
    ok, err = pcall(mgpu.spec, { grid = 1, block = 32, scope = "cta", entries = 16 })
    assert.equal("bad_argument", err.code)
    ok, err = pcall(mgpu.spec, { grid = 0, block = 32, entries = 16 })
    assert.equal("bad_argument", err.code)
    ok, err = pcall(mgpu.entries_for, -1)
    assert.equal("bad_argument", err.code)
    ok, err = pcall(mgpu.dump, "nope")
    assert.equal("bad_argument", err.code)
    -- a wrong type anywhere in the API is an error value too, named as Lua names it
    local dev = mgpu.device("emu")
    local a = dev:array("f32", 4)
    ok, err = pcall(a.read, a, 9)
    assert.equal("bad_argument", err.code)
    assert.equal("bad argument #1 to 'read' (index out of range)", err.message)
    ok, err = pcall(a.compare, a, 5)
    assert.equal("bad argument #1 to 'compare' (mgpu.array expected, got number)", err.message)
    ok, err = pcall(a.read, 5, 1)
    assert.matches("^calling 'read' on bad self", err.message)
    ok, err = pcall(dev.load, dev, nil)
    assert.equal("bad_argument", err.code)
    ok, err = pcall(mgpu.time, nil, {}, 3)
    assert.equal("bad_argument", err.code)
  end)

  it("dumps a fixture and returns its summary", function()
    local dir = h.tmpdir()
    local r = mgpu.dump {
      buffer = h.fixtures .. "/wg_264blocks_nested.bin",
      meta = h.fixtures .. "/wg_264blocks_nested.meta.json",
      out = dir .. "/t.json", clock_ghz = 1.98, summary = true,
    }
    assert.equal(264, r.traces)
    assert.equal(264, r.traces_with_events)
    assert.equal(13200, r.events)
    assert.equal("ns", r.unit)
    local by = {}
    for _, row in ipairs(r.summary) do by[row.name] = row end
    assert.equal(264, by.Init.count)
    assert.equal(2112, by.step.count)
    assert.is_true(by.step.min > by.load.min)
    h.rmdir(dir)
  end)

  it("catches insufficient_space and reads how many entries were required", function()
    local dir = h.tmpdir()
    h.meta(dir .. "/m.json", { entries = 8 })
    h.write_words(dir .. "/b.bin", { 0, 3, 10, 0, 0, 0, 0, 0 })
    local ok, err = pcall(mgpu.dump, { buffer = dir .. "/b.bin", meta = dir .. "/m.json", out = dir .. "/t.json" })
    assert.is_false(ok)
    assert.equal("insufficient_space", err.code)
    assert.equal(13, err.required)
    assert.equal(8, err.capacity)
    assert.equal(0, err.trace)
    assert.is_nil(h.read(dir .. "/t.json"))
    h.rmdir(dir)
  end)

  it("times launches: warm-up, measured repeats, L2 flush, statistics", function()
    local dev = mgpu.device("emu")
    local k = dev:load(h.src .. "/ptx/copy.ptx"):kernel("copy_f32x4")
    assert.equal(dev, k:device())
    local x, y = dev:array("f32", 256, { fill = "ramp" }), dev:array("f32", 256)
    local calls = 0
    local st, run = mgpu.time(k, { grid = 1, block = 64, args = { x, y, 64 } },
      { warmup = 2, repeats = 5, flush_l2 = 4096, before = function() calls = calls + 1 end })
    assert.equal(7, calls) -- before every launch, warm-up ones too
    assert.equal(5, st.n)
    assert.is_true(st.min > 0 and st.min == st.median and st.stddev == 0) -- emu's virtual time does not vary
    assert.equal(st.min, run.time_ns)
    assert.equal(0, y:compare(x).mismatches)
    local ok, err = pcall(mgpu.time, k, { grid = 1, block = 64, args = { x, y, 64 } }, { repeats = 0 })
    assert.equal("bad_argument", err.code)
    assert.matches("repeats must be an integer >= 1", err.message)
    -- a misspelled option is refused, not ignored
    ok, err = pcall(mgpu.time, k, { grid = 1, block = 64, args = { x, y, 64 } }, { repeates = 5 })
    assert.is_false(ok)
    assert.equal("bad_argument", err.code)
    assert.equal('time: unknown key "repeates" (allowed: warmup, repeats, flush_l2, flush, before, min_time, max_noise, max_repeats)', err.message)
    assert.equal("repeates", err.key)
  end)

  it("runs inside the executable with the embedded Lua sources", function()
    local dir = h.tmpdir()
    h.write(dir .. "/s.lua", [[
      local mgpu = require "mgpu"
      local s = mgpu.spec { grid = 2, block = 128, scope = "warp", entries = 8 }
      print(mgpu.VERSION, s.num_traces, arg[1], select("#", ...))
    ]])
    local st, out, err = h.run(dir .. "/s.lua", "x", "y")
    assert.equal(0, st, err)
    assert.matches("^%d+%.%d+%.%d+\t8\tx\t2\n$", out)
    -- an uncaught error value exits with its code's status
    h.write(dir .. "/e.lua", [[
      local mgpu = require "mgpu"
      mgpu.spec { grid = 1, block = 96, scope = "warpgroup", entries = 8 }
    ]])
    st, out, err = h.run(dir .. "/e.lua")
    assert.equal(2, st)
    assert.matches("not a multiple of the warpgroup size %(128 threads%) %[bad_argument%]", err)
    h.write(dir .. "/x.lua", "error('plain failure')")
    st, out, err = h.run(dir .. "/x.lua")
    assert.equal(7, st) -- script_error
    assert.matches("plain failure", err)
    st, out, err = h.run(dir .. "/missing.lua")
    assert.equal(1, st)
    assert.matches("cannot open", err)
    h.rmdir(dir)
  end)
end)
