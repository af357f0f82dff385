-- emu_model_spec.lua: emu's device model set by parameter (model_params on a device,
-- experiment.emu): what dev.model lists, a parameter changing the virtual time it should and no
-- other, bad names and values refused by name, and an experiment recording the model it ran and
-- refusing to resume under another.
local h = require "helpers"
local mgpu = require "mgpu"
local core = require "mgpu.core"

-- virtual ns of one streaming read of 16 MiB (HBM-bound) on device d
local function read_ns(d)
  local k = d:load(h.src .. "/tests/ptx/microbench.ptx"):kernel("stream_read")
  local n4 = 1024 * 1024
  return k:launch { grid = 8 * d.sms, block = 256, args = { d:array("f32", 4 * n4), d:array("f32", 8 * d.sms * 256), n4 } }
      .time_ns
end

-- each {params, message}: mgpu.device refuses the parameters with a bad_argument saying that
local function refused(cases)
  for _, c in ipairs(cases) do
    local ok, err = pcall(mgpu.device, "emu", { model_params = c[1] })
    assert.is_false(ok)
    assert.equal("bad_argument", err.code)
    assert.matches(c[2], err.message)
  end
end

describe("emu's device model by parameter", function()
  it("lists every parameter with the value the device uses", function()
    local m = mgpu.device("emu", { model = "h100-sxm" }).model
    assert.equal("h100-sxm", m.name)
    assert.equal(5120, m.l2_bytes_per_clk)
    assert.equal(3350, m.hbm_gbs)
    assert.equal(1.755, m.clock_ghz)
    assert.equal(16, m.pipe_mufu)
    local set = mgpu.device("emu", { model = "h100-sxm", model_params = { hbm_gbs = 1000, clock_ghz = 1.98 } })
    assert.equal(1000, set.model.hbm_gbs)
    assert.equal(1.98, set.model.clock_ghz)
    assert.equal(1.98, set.clock_ghz) -- the clock times convert with is the model's
    assert.equal(m.l2_bytes_per_clk, set.model.l2_bytes_per_clk) -- the others as the named model's
  end)

  it("changes the virtual time a parameter governs", function()
    local base = mgpu.device("emu", { model = "h100-sxm" })
    local slow = mgpu.device("emu", { model = "h100-sxm", model_params = { hbm_gbs = 335 } })
    local t0, t1 = read_ns(base), read_ns(slow)
    -- a tenth of the HBM bandwidth: a read of 16 MiB that streams from HBM takes several times longer
    assert.is_true(t1 > 3 * t0, t1 .. " ns at 335 GB/s, " .. t0 .. " at 3350")
    -- a parameter this kernel does not use leaves its time as it was
    local other = mgpu.device("emu", { model = "h100-sxm", model_params = { mma_f16 = 64 } })
    assert.equal(t0, read_ns(other))
  end)

  it("writes stores back: the L2 takes a burst of stores the HBM has not, a long stream waits for it", function()
    -- virtual ns of a copy of n floats (n reads and n writes)
    local function copy_ns(d, n)
      local k = d:load(h.src .. "/ptx/copy.ptx"):kernel("copy_f32x4")
      return k:launch { grid = math.floor((n / 4 + 255) / 256), block = 256,
        args = { d:array("f32", n), d:array("f32", n), math.floor(n / 4) } }
          .time_ns
    end
    local back = mgpu.device("emu", { model = "h100-sxm" })
    local through = mgpu.device("emu", { model = "h100-sxm", model_params = { l2_dirty_frac = 0 } })
    assert.equal(0.5, back.model.l2_dirty_frac)
    -- 4 MiB each way: the writes fit the L2, so the copy beats what HBM takes for both (written
    -- through, it ran at the HBM's 3350 GB/s: 2.5 us)
    local small_back, small_through = copy_ns(back, 1048576), copy_ns(through, 1048576)
    assert.is_true(small_back < 0.9 * small_through, small_back .. " ns written back, " .. small_through .. " through")
    -- 64 MiB each way: the reads queue behind the stored bytes' HBM bandwidth, as before
    local big_back, big_through = copy_ns(back, 16777216), copy_ns(through, 16777216)
    assert.is_true(big_back > 0.95 * big_through, big_back .. " ns written back, " .. big_through .. " through")
  end)

  it("refuses an unknown name, a bad value and a malformed table by name", function()
    local cases = {
      { { nope = 1 }, "no model parameter 'nope' %(parameters: clock_ghz, .*l2_bytes_per_clk.*pipe_shfl%)" },
      { { l2_lat = -1 }, "model parameter l2_lat: %-1 is not a whole number from 0 to" },
      { { l2_lat = 1.5 }, "model parameter l2_lat: 1.5 is not a whole number" },
      { { pipe_fma = 0 }, "model parameter pipe_fma: 0 is not a whole number from 1 to 4096" },
      { { clock_ghz = 0 / 0 }, "model parameter clock_ghz: not a finite number" },
      { { l2_lat = "260" }, "device.model_params.l2_lat must be a number, not string" },
      { { 3 }, "device.model_params: a key of type number" },
      -- (a name with a NUL byte was read to it: "l2_lat\0x" set l2_lat)
      { { ["l2_lat\0x"] = 1 }, "device.model_params: a name holding a NUL byte %('l2_lat\\0%.%.%.'%)" },
    }
    refused(cases)
    local ok, err = pcall(mgpu.device, "emu", { model_params = 5 })
    assert.is_false(ok)
    assert.matches("device.model_params must be a table", err.message)
  end)

  -- hostile4: each parameter at its range's edge runs real kernels with sane times and right results
  it("runs shared, distributed shared and ldmatrix accesses at a latency of 0", function()
    -- (hung before: dsmem_lat - 1 and smem_lat - 1 wrapped to 2^32 cycles an access)
    local function dsmem_hop(params)
      local d = mgpu.device("emu", { sms = 4, model_params = params })
      local out = d:array("i64", 2)
      d:load(h.src .. "/tests/ptx/microbench.ptx"):kernel("dsmem_chase"):launch {
        grid = 2, block = 32, cluster = 2, args = { 8, out } }
      return out:read()[1]
    end
    local base, zero = dsmem_hop({}), dsmem_hop({ dsmem_lat = 0, smem_lat = 0 })
    assert.is_true(zero >= 0 and zero < base, zero .. " cycles a hop at latency 0, " .. base .. " at the model's")
    local function ldm(params)
      local d = mgpu.device("emu", { sms = 1, model_params = params })
      local src = {}
      for i = 1, 256 do src[i] = ((i - 1) * 37 + 11) % 65536 end
      local a, out = d:array("u32", src), d:array("u32", 128)
      local r = d:load(h.src .. "/tests/ptx/mma.ptx"):kernel("ldmatrix_x1"):launch { grid = 1, block = 32, args = { a, out } }
      return r.cycles, out:read()
    end
    local c0, v0 = ldm({})
    local c1, v1 = ldm({ smem_lat = 0 })
    assert.same(v0, v1)
    assert.is_true(c1 < c0, c1 .. " cycles at smem_lat 0, " .. c0 .. " at the model's")
  end)

  it("refuses parameters that disagree with each other or with emu's reach", function()
    -- an L2 hit slower than a miss's whole trip: a miss's time in flight, hbm_lat - l2_lat, wrapped
    -- (an 8 MiB warm chase read 8.3 million cycles a hop at l2_lat = 5000 before)
    -- an HBM under 16 bytes a cycle: its queue outgrew the bandwidth windows and went unenforced (16 MiB
    -- read at hbm_gbs = 1 as fast as at 10); a clock outside a trace's 0.1 to 10 GHz failed every
    -- instrumented point (bad_buffer)
    local cases = {
      { { l2_lat = 5000 }, "hbm_lat 480 is below l2_lat 5000" },
      { { hbm_gbs = 10 }, "hbm_gbs 10 at clock_ghz 1.755 is 5.698.* bytes a cycle, below 16" },
      { { l2_bytes_per_clk = 4 }, "model parameter l2_bytes_per_clk: 4 is not a number from 16 to" },
      { { clock_ghz = 0.15 }, "model parameter clock_ghz: 0.15 is not a number from 0.2 to 5" },
      { { clock_ghz = 10 }, "model parameter clock_ghz: 10 is not a number from 0.2 to 5" },
      -- an L2 or L1 whose tags emu cannot allocate (an L2 of 1e12 bytes: 187 GB of tags) was left out silently:
      -- a chase of a 1 MiB ring read 482 cycles a hop (HBM's) instead of 262 (the L2's)
      { { l2_bytes = 1e12 }, "model parameter l2_bytes: 1000000000000 is not a whole number from 2048 to 1073741824" },
      { { l1_bytes = 1073741824 }, "model parameter l1_bytes: 1073741824 is not a whole number from 1024 to 4194304" },
    }
    refused(cases)
    -- both latencies moved together are a model
    local d = mgpu.device("emu", { model_params = { l2_lat = 5000, hbm_lat = 6000 } })
    assert.equal(5000, d.model.l2_lat)
  end)

  it("traces instrumented points at either end of the clock's range", function()
    -- (at clock_ghz = 10, then allowed, the trace's calibration measured 10.0004 GHz over 4000 blocks and the point
    -- failed as bad_buffer; at 0.05 every instrumented point did)
    local dir = h.tmpdir()
    for _, clk in ipairs { 0.2, 5 } do
      h.write(dir .. "/c.lua", string.format([[
return {
  name = "clk", module = %q, kernel = "reduce_sum_f32", repeats = 1, instrument = "warp",
  emu = { params = { clock_ghz = %s } },
  axes = { grid = { 200, 4000 } },
  setup = function(p, dev)
    return { grid = p.grid, block = 32, smem = 128, args = { dev:array("f32", 32 * p.grid), dev:array("f32", p.grid), 32 * p.grid } }
  end,
}]], h.src .. "/ptx/reduce.ptx", clk))
      local st, out, err = h.run(dir .. "/c.lua", "--backend", "emu", "--out", dir .. "/r" .. clk, "--quiet")
      assert.equal(0, st, clk .. ": " .. out .. err)
    end
    h.rmdir(dir)
  end)

  it("refuses exec's malformed parameter lists by entry, before the program runs", function()
    -- (accepted before: empty entries and a trailing comma skipped, a space before the number read,
    -- a name given twice set to its last value)
    for _, c in ipairs {
      { ",", "'' is not NAME=NUMBER" },
      { "l2_lat=300,", "'' is not NAME=NUMBER .* in 'l2_lat=300,'" },
      { "l2_lat=300,,hbm_lat=600", "'' is not NAME=NUMBER" },
      { "l2_lat= 300", "'l2_lat= 300' is not NAME=NUMBER" },
      { "l2_lat=300,l2_lat=100", "l2_lat given twice in 'l2_lat=300,l2_lat=100'" },
      { "l2_lat=1x", "'l2_lat=1x' is not NAME=NUMBER" },
      { "l2_lat=300, hbm_lat=600", "no model parameter ' hbm_lat'" },
    } do
      local st, _, err = h.run("exec", "--model-params", c[1], "--", "/bin/true")
      assert.equal(2, st, c[1])
      assert.matches(c[2], err)
    end
    local st, _, err = h.run("exec", "--model-params", "l2_lat=300,hbm_lat=600", "--", "/bin/true")
    assert.equal(0, st, err)
  end)

  it("runs an experiment on the model it names, records it, and will not resume under another", function()
    local dir = h.tmpdir()
    local function script(params)
      return string.format([[
return {
  name = "read", module = %q, kernel = "stream_read", repeats = 1,
  emu = { model = "h100-sxm", params = %s },
  axes = { n4 = { 65536 } },
  setup = function(p, dev)
    return { grid = 16, block = 256, args = { dev:array("f32", 4 * p.n4), dev:array("f32", 16 * 256), p.n4 } }
  end,
}]], h.src .. "/tests/ptx/microbench.ptx", params)
    end
    h.write(dir .. "/a.lua", script("{ hbm_gbs = 500, l2_bytes_per_clk = 6000 }"))
    h.write(dir .. "/b.lua", script("{ hbm_gbs = 600 }"))
    local st, _, err = h.run(dir .. "/a.lua", "--backend", "emu", "--out", dir .. "/r", "--quiet")
    assert.equal(0, st, err)
    local man = core.json_decode(h.read(dir .. "/r/manifest.json"))
    assert.equal("h100-sxm", man.emu_model.name)
    assert.equal(500, man.emu_model.hbm_gbs)
    assert.equal(6000, man.emu_model.l2_bytes_per_clk)
    assert.equal(260, man.emu_model.l2_lat) -- every parameter, set or not
    -- with worker processes the points run on the same model: the same virtual times
    st, _, err = h.run(dir .. "/a.lua", "--backend", "emu", "--workers", "2", "--out", dir .. "/w", "--quiet")
    assert.equal(0, st, err)
    local function times(d) return (h.read(d .. "/results.csv"):match("\n1,[^\n]*")) end
    assert.equal(times(dir .. "/r"), times(dir .. "/w"))
    -- resuming the run under other parameters would mix models in one results file
    st, _, err = h.run(dir .. "/b.lua", "--backend", "emu", "--resume", dir .. "/r", "--force", "--quiet")
    assert.equal(2, st)
    assert.matches("emu model .* is not this one", err)
    -- a run whose manifest has no emu_model (made before manifests recorded it) ran the default model:
    -- resumed under other parameters its rows would mix models too (it was resumed, unrecorded)
    local m2 = core.json_decode(h.read(dir .. "/w/manifest.json"))
    m2.emu_model = nil
    h.write(dir .. "/w/manifest.json", core.json_encode(m2))
    h.write(dir .. "/f.lua", (script("{ hbm_gbs = 600 }"):gsub('model = "h100%-sxm", ', "")))
    st, _, err = h.run(dir .. "/f.lua", "--backend", "emu", "--resume", dir .. "/w", "--force", "--quiet")
    assert.equal(2, st)
    assert.matches("the run's emu model %(h200, .* is not this one %(h200", err)
    -- a parameter of the wrong type is named as the experiment has it (it was "device.model_params.l2_lat")
    h.write(dir .. "/d.lua", script('{ l2_lat = "x" }'))
    st, _, err = h.run(dir .. "/d.lua", "--backend", "emu", "--out", dir .. "/d", "--quiet")
    assert.equal(2, st)
    assert.matches("experiment.emu.params.l2_lat must be a number, got string", err)
    h.write(dir .. "/e.lua", script("{ 3 }"))
    st, _, err = h.run(dir .. "/e.lua", "--backend", "emu", "--out", dir .. "/e", "--quiet")
    assert.equal(2, st)
    assert.matches("experiment.emu.params: a key of type number", err)
    -- a bad parameter is refused before any point runs, with workers too
    h.write(dir .. "/c.lua", script("{ hbm = 1 }"))
    st, _, err = h.run(dir .. "/c.lua", "--backend", "emu", "--workers", "2", "--out", dir .. "/c", "--quiet")
    assert.equal(2, st)
    assert.matches("no model parameter 'hbm'", err)
    -- an empty model name is refused (it meant the default model, silently)
    h.write(dir .. "/e.lua", (script("{}"):gsub('model = "h100%-sxm"', 'model = ""')))
    st, _, err = h.run(dir .. "/e.lua", "--backend", "emu", "--out", dir .. "/e", "--quiet")
    assert.equal(2, st)
    assert.matches("experiment.emu.model is empty", err)
    h.rmdir(dir)
  end)
end)
