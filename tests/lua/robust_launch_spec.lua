-- robust_launch_spec.lua: issue 12's launch-side classes, each a behaviour the
-- harness did not have before: a retry that does not change results, launches
-- that cannot hang, objects used after they were closed, arrays of another
-- device, and values that do not fit an array's dtype.
local h = require "helpers"
local mgpu = require "mgpu"
local core = require "mgpu.core"

local function ptx(name) return h.src .. "/tests/ptx/" .. name end

describe("a retried launch", function()
  local dev
  before_each(function() dev = mgpu.device("emu") end)

  local function sum_of(profile)
    local k = dev:load(ptx("side_effects.ptx"), { instrument = "warp" }):kernel("atomic_sum")
    local x = dev:array("f32", 256, { fill = "ramp", start = 1, step = 1 })
    local sum = dev:array("f32", 1)
    local run = k:launch { grid = 2, block = 64, args = { x, sum, 256 }, profile = profile }
    return sum:read(1), run
  end

  it("sees the inputs the first attempt saw: an atomic sum is not counted twice", function()
    local right, r1 = sum_of({ entries = 4096 })
    assert.equal(1, #r1.attempts)
    assert.equal(256 * 257 / 2, right)
    local small, r2 = sum_of({ entries = 8 })
    assert.equal(2, #r2.attempts)
    assert.equal(right, small)
    -- only what the kernel writes through is copied back: sum (argument 2), not x
    assert.same({ 2 }, r2.attempts[2].restored)
    assert.equal(4, r2.attempts[2].restored_bytes)
    -- restore = false: the retry sees the first run's sum
    local doubled = sum_of({ entries = 8, restore = false })
    assert.equal(2 * right, doubled)
  end)

  it("sees the inputs the first attempt saw: an in-place update is applied once", function()
    local k = dev:load(ptx("side_effects.ptx"), { instrument = "warp" }):kernel("scale_in_place")
    local function run(entries)
      local x = dev:array("f32", 512, { fill = "ramp" })
      local r = k:launch { grid = 2, block = 64, args = { x, 2.0, 1.0, 512 }, profile = { entries = entries } }
      return x, r
    end
    local right = run(4096)
    local x, r = run(5)
    assert.equal(2, #r.attempts)
    assert.same({ 1 }, r.attempts[2].restored)
    assert.equal(0, x:compare(right).mismatches)
    assert.equal(2 * 7 + 1, x:read(8))
  end)
end)

describe("a launch that never ends", function()
  it("stops at the device's instruction budget", function()
    local dev = mgpu.device("emu", { max_insns = 200000 })
    local k = dev:load(ptx("side_effects.ptx")):kernel("forever")
    local ok, err = pcall(k.launch, k, { grid = 1, block = 32, args = { dev:array("i32", 1) } })
    assert.is_false(ok)
    assert.equal("kernel_fault", err.code)
    assert.matches("max_insns budget", err.message)
  end)

  it("is a deadlock when it only spins on a flag nothing sets (issue 21), found before its time limit", function()
    local dev = mgpu.device("emu")
    local k = dev:load(ptx("side_effects.ptx")):kernel("forever")
    local t0 = core.now()
    local ok, err = pcall(k.launch, k, { grid = 1, block = 32, args = { dev:array("i32", 1) }, timeout_s = 30 })
    assert.is_false(ok)
    assert.equal("kernel_fault", err.code)
    assert.matches("deadlock: no warp has made progress", err.message, 1, true)
    assert.is_true(core.now() - t0 < 5)
  end)

  it("stops at its time limit, and the device goes on", function()
    local dev = mgpu.device("emu")
    local k = dev:load(ptx("side_effects.ptx")):kernel("forever_computing") -- not a deadlock: it computes
    local flag = dev:array("i32", 1)
    local t0 = core.now()
    local ok, err = pcall(k.launch, k, { grid = 1, block = 32, args = { flag, dev:array("i32", 32) }, timeout_s = 0.3 })
    local took = core.now() - t0
    assert.is_false(ok)
    assert.equal("timeout", err.code)
    assert.is_true(took >= 0.3 and took < 2, tostring(took))
    flag:write({ 1 })
    assert.equal("emu", k:launch({ grid = 1, block = 32, args = { flag, dev:array("i32", 32) } }).backend)
    ok, err = pcall(k.launch, k, { grid = 1, block = 32, args = { flag }, timeout_s = -1 })
    assert.equal("bad_argument", err.code)
  end)
end)

describe("objects", function()
  local dev
  before_each(function() dev = mgpu.device("emu") end)

  it("used after they were closed are a bad_argument, not freed memory", function()
    local m = dev:load(h.src .. "/ptx/copy.ptx", { instrument = "warp" })
    local k = m:kernel("copy_f32x4")
    local a, b = dev:array("f32", 256), dev:array("f32", 256)
    local run = k:launch { grid = 1, block = 32, args = { a, b, 64 } }
    getmetatable(run.trace).__gc(run.trace)
    local ok, err = pcall(run.trace.words, run.trace)
    assert.equal("bad_argument", err.code)
    assert.matches("the trace is closed", err.message)
    getmetatable(m).__gc(m)
    ok, err = pcall(k.launch, k, { grid = 1, block = 32, args = { a, b, 64 } })
    assert.is_false(ok)
    assert.equal("bad_argument", err.code)
    assert.matches("the module is closed", err.message)
    ok, err = pcall(m.kernel, m, "copy_f32x4")
    assert.matches("the module is closed", err.message)
    getmetatable(a).__gc(a)
    ok, err = pcall(a.read, a)
    assert.equal("bad_argument", err.code)
    assert.matches("the array is freed", err.message)
    getmetatable(dev).__gc(dev)
    ok, err = pcall(b.read, b)
    assert.matches("device is closed", err.message)
  end)

  it("refuse an array of another device as a kernel argument", function()
    local other = mgpu.device("emu")
    local k = dev:load(h.src .. "/ptx/copy.ptx"):kernel("copy_f32x4")
    local ok, err = pcall(k.launch, k, { grid = 1, block = 32,
      args = { dev:array("f32", 256), other:array("f32", 256), 64 } })
    assert.is_false(ok)
    assert.equal("bad_argument", err.code)
    assert.matches("argument 2 is an array of another device", err.message)
  end)
end)

describe("array values", function()
  it("that do not fit the dtype are refused, not wrapped", function()
    local dev = mgpu.device("emu")
    for _, c in ipairs({ { "i8", 1000, "does not fit i8" }, { "u32", -1, "does not fit u32" },
                         { "i32", 1.5, "is not an integer" }, { "u16", 65536, "does not fit u16" } }) do
      local ok, err = pcall(dev.array, dev, c[1], { c[2] })
      assert.is_false(ok, c[1])
      assert.equal("bad_argument", err.code)
      assert.matches(c[3], err.message)
    end
    assert.same({ 255, -128, 2 }, { dev:array("u8", { 255 }):read(1), dev:array("i8", { -128 }):read(1),
      dev:array("i32", { 2.0 }):read(1) })
    local a = dev:array("i8", 4)
    local ok, err = pcall(a.write, a, { 1, 300 })
    assert.matches("write: value 2 %(300%) does not fit i8", err.message)
    ok, err = pcall(dev.array, dev, "f32", 16, { fill = "random", min = 1, max = 0 })
    assert.matches("min 1 is above max 0", err.message)
    ok, err = pcall(a.compare, a, a, { atol = -1 })
    assert.matches("atol and rtol must be 0 or more", err.message)
    ok, err = pcall(dev.array, dev, "f32", 16, { shape = 16 })
    assert.matches("array.shape must be a list", err.message)
  end)
end)

describe("a clock rate", function()
  it("outside what a GPU could have is refused", function()
    local dir = h.tmpdir()
    for _, v in ipairs({ 0.01, 50, -1 }) do
      local ok, err = pcall(core.dump, { buffer = h.fixtures .. "/wg_264blocks_nested.bin",
        meta = h.fixtures .. "/wg_264blocks_nested.meta.json", out = dir .. "/t.json", clock_ghz = v })
      assert.is_false(ok)
      assert.equal("bad_argument", err.code)
      assert.matches("0%.1 to 10 GHz", err.message)
    end
    h.rmdir(dir)
  end)
end)

describe("a block that is not a whole number of warps", function()
  it("is traced whole, saved and dumped again, and sized in an experiment", function()
    local dev = mgpu.device("emu")
    local k = dev:load(h.src .. "/ptx/copy.ptx", { instrument = "warp" }):kernel("copy_f32x4")
    local a, b = dev:array("f32", 400, { fill = "ramp" }), dev:array("f32", 400)
    local run = k:launch { grid = 2, block = 100, args = { a, b, 100 } }
    assert.equal(0, b:compare(a).mismatches)
    local dir = h.tmpdir()
    local files = run.trace:save(dir .. "/t")
    assert.truthy(h.read(files.meta):find('"partial": true', 1, true)) -- the last warp of 4 threads has a trace
    local d = core.dump { buffer = files.buffer, meta = files.meta, out = dir .. "/t.json", summary = true }
    assert.equal(8, d.traces) -- 2 blocks x (3 warps + the last 4 threads)
    assert.equal(8, d.summary[1].count)
    assert.equal(8, core.spec { grid = 2, block = 100, scope = "warp", entries = 9, partial = true }.num_traces)
    local ok = pcall(core.spec, { grid = 2, block = 100, scope = "warp", entries = 9 })
    assert.is_false(ok) -- without partial, as in JAX's meta files
    local r = mgpu.run({ name = "partial", module = h.src .. "/ptx/copy.ptx", kernel = "copy_f32x4",
      instrument = "warp", probes = { { name = "kernel", kernel = true } }, axes = { b = { 100 } },
      warmup = 0, repeats = 1, setup = function(p, dv)
        return { grid = 2, block = p.b, args = { dv:array("f32", 400), dv:array("f32", 400), 100 } }
      end }, { out = dir .. "/r", quiet = true })
    assert.equal(1, r.ok)
    h.rmdir(dir)
  end)
end)

describe("a launch with too many arguments", function()
  it("is refused naming the limit", function()
    local dev = mgpu.device("emu")
    local k = dev:load(ptx("side_effects.ptx")):kernel("atomic_sum")
    local args = {}
    for i = 1, 61 do args[i] = i end
    local ok, err = pcall(function() return k:launch { grid = 1, block = 32, args = args } end)
    assert.is_false(ok)
    assert.equal("bad_argument", err.code)
    assert.matches("61 arguments, more than the 60 a launch takes", err.message, 1, true)
  end)
end)
