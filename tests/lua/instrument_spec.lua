-- instrument_spec.lua: kernels instrumented from their markers, launched from
-- Lua on emu: the harness passes the trace buffer, sizes it, retries once
-- with exactly the entries the kernel needed, and the trace dumps.
local h = require "helpers"
local mgpu = require "mgpu"

local function ptx(name) return h.src .. "/ptx/" .. name end

describe("instrumented kernels", function()
  local dev
  before_each(function() dev = mgpu.device() end)

  it("hide the harness's parameters and keep the kernel's results", function()
    local plain = dev:load(ptx("reduce.ptx")):kernel("reduce_sum_f32")
    local inst = dev:load(ptx("reduce.ptx"), { instrument = "warp" }):kernel("reduce_sum_f32")
    assert.equal(3, #inst:params())
    local x = dev:array("f32", 4096, { fill = "random", seed = 9, min = 0, max = 1 })
    local p1, p2 = dev:array("f32", 4), dev:array("f32", 4)
    plain:launch { grid = 4, block = 128, smem = 512, args = { x, p1, 4096 } }
    local run = inst:launch { grid = 4, block = 128, smem = 512, args = { x, p2, 4096 } }
    assert.equal(0, p1:compare(p2).mismatches)
    assert.equal(1, #run.attempts)
    local dir = h.tmpdir()
    local d = run.trace:dump(dir .. "/t.json")
    local counts = {}
    for _, r in ipairs(d.summary) do counts[r.name] = r.count end
    assert.same({ load = 16, tree = 16 }, counts) -- 4 blocks x 4 warps
    -- the SM clock measured from the calibration words: emu's virtual 1.5 GHz
    assert.is_true(math.abs(d.clock_ghz_measured - 1.5) < 0.015, tostring(d.clock_ghz_measured))
    h.rmdir(dir)
  end)

  it("retry once with exactly the entries needed", function()
    local k = dev:load(ptx("tiled.ptx"), { instrument = "warp" }):kernel("tiled_scale")
    local n = 64 * 10
    local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
    local run = k:launch { grid = 2, block = 64, smem = 256, args = { a, c, n, 2.0 }, profile = { entries = 20 } }
    assert.same({ { entries = 20, required = 83 }, { entries = 83, required = 83 } }, run.attempts)
    assert.equal(83, run.entries)
    local dir = h.tmpdir()
    local d = run.trace:dump(dir .. "/t.json")
    for _, r in ipairs(d.summary) do assert.equal(20, r.count, r.name) end
    -- without the retry, the dump says how many entries were needed
    local r2 = k:launch { grid = 2, block = 64, smem = 256, args = { a, c, n, 2.0 },
      profile = { entries = 20, retry = false } }
    local ok, err = pcall(r2.trace.dump, r2.trace, dir .. "/t2.json")
    assert.is_false(ok)
    assert.equal("insufficient_space", err.code)
    assert.equal(83, err.required)
    assert.equal(20, err.capacity)
    h.rmdir(dir)
  end)

  it("report marker errors at load with the line", function()
    local src = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
      .. "// @mgpu end x\nret;\n}\n"
    local ok, err = pcall(dev.load, dev, { name = "m.ptx", source = src, instrument = "warp" })
    assert.is_false(ok)
    assert.equal("ptx_syntax", err.code)
    assert.equal(6, err.line)
    assert.matches("m%.ptx:6: end \"x\" without its begin", err.message)
    ok, err = pcall(dev.load, dev, ptx("copy.ptx"), { instrument = "cta" })
    assert.equal("bad_argument", err.code)
  end)
end)

describe("mgpu-harness instrument", function()
  it("writes a module without markers unchanged", function()
    local dir = h.tmpdir()
    local st, _, err = h.run("instrument", h.fixtures .. "/copy_bounds_wg.ptx", "-o", dir .. "/o.ptx")
    assert.equal(0, st, err)
    assert.equal(h.read(h.fixtures .. "/copy_bounds_wg.ptx"), h.read(dir .. "/o.ptx"))
    st, _, err = h.run("instrument", ptx("tiled.ptx"), "-o", dir .. "/t.ptx", "--names", dir .. "/n.json")
    assert.equal(0, st, err)
    assert.matches("8 markers in 1 kernels, 4 region names", err)
    assert.equal('{"tile": 0, "load": 1, "compute": 2, "store": 3}\n', h.read(dir .. "/n.json"))
    h.rmdir(dir)
  end)
end)
