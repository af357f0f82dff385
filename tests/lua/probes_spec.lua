-- probes_spec.lua: probes instead of markers (issue 15), from dev:load on emu: regions in kernels
-- nobody wrote for the harness (the JAX Mosaic GPU fixture, Triton-style LLVM output), with the
-- markers' guarantees: outputs unchanged, exact counts, one retry with exactly what was needed.
local h = require "helpers"
local mgpu = require "mgpu"

local triton = h.src .. "/tests/ptx/probes_triton.ptx"

local function counts(run)
  local c = {}
  for _, r in ipairs(run.trace:summary()) do c[r.name] = r.count end
  return c
end

-- row_sum: out[row] = the sum of x's row (300 columns), 128 threads a row
local function row_sum(dev, opts, entries)
  local n = 300
  local x = dev:array("f32", 3 * n, { fill = "ramp" })
  local y = dev:array("f32", 3)
  local k = dev:load(triton, opts):kernel("row_sum")
  local run = k:launch { grid = 3, block = 128, smem = 512, args = { x, y, n, dev:array("u8", 16), dev:array("u8", 16) },
    profile = opts and { entries = entries or 8 } or nil }
  return y:read(), run
end

describe("probes", function()
  local dev
  before_each(function() dev = mgpu.device("emu") end)

  it("profile a Triton-style kernel without markers: kernel, loops, barriers, a range, exact with the retry", function()
    local want = row_sum(dev)
    local got, run = row_sum(dev, { instrument = "warp", probes = {
      { name = "kernel", kernel = true },
      { name = "row", loop = true },
      { name = "sync", around = "bar.sync" },
      { name = "tree", from = "$L__BB0_3", to = "$L__BB0_8" },
    } })
    assert.same(want, got)
    -- 12 warps; the row loop: lanes 0 of warps 0 and 1 take 3 columns, of warps 2 and 3 two; the
    -- tree loop (source line 22) runs 7 rounds of 2 bar.syncs with the one before it
    assert.same({ kernel = 12, ["row@17"] = 30, ["row@22"] = 84, sync = 96, tree = 12 }, counts(run))
    assert.equal(2, #run.attempts)
    assert.equal(8, run.attempts[1].entries)
    local need = run.attempts[1].required
    assert.equal(need + need % 2, run.attempts[2].entries) -- exactly what it needed, even: aligned records
    assert.equal(need, run.attempts[2].required)
    -- per whole loop, and one loop by its header's label, in warpgroups
    local _, r2 = row_sum(dev, { instrument = "warpgroup", probes = {
      { name = "rows", loop = "$L__BB0_1", per = "loop" }, { name = "lines", from = 82, to = 87 } } }, 64)
    assert.same({ ["rows@17"] = 3, lines = 3 }, counts(r2))
    assert.equal(1, #r2.attempts)
  end)

  it("give a kernel with neither markers nor probes the kernel probe", function()
    local want = row_sum(dev)
    local got, run = row_sum(dev, { instrument = "warp" })
    assert.same(want, got)
    assert.same({ kernel = 12 }, counts(run))
    -- a module with markers keeps to them
    local k = dev:load(h.src .. "/ptx/copy.ptx", { instrument = "warp" }):kernel("copy_f32x4")
    local a, b = dev:array("f32", 512), dev:array("f32", 512)
    local r = k:launch { grid = 1, block = 64, args = { a, b, 128 } }
    assert.same({ copy = 2 }, counts(r))
  end)

  it("nest probes at one place in the order they are listed (issue 25), with exact counts", function()
    local want = row_sum(dev)
    for _, probes in ipairs {
      { { name = "a", around = "ld" }, { name = "b", around = "ld.global" } },
      { { name = "k1", kernel = true }, { name = "k2", kernel = true } },
    } do
      local got, run = row_sum(dev, { instrument = "warp", probes = probes }, 4096)
      assert.same(want, got)
      local c = counts(run)
      -- every ld.global is also an ld; two kernel probes close as often as each other
      assert.is_true(c[probes[2].name] > 0 and c[probes[1].name] >= c[probes[2].name])
      if probes[1].kernel then assert.same({ 12, 12 }, { c.k1, c.k2 }) end
    end
    local many = {}
    for i = 1, 1000 do many[i] = { name = "p" .. i, around = "ld" } end
    dev:load(triton, { instrument = "warp", probes = many }) -- 1,000 probes at each load: loads, nests
  end)

  it("refuse a region name that is not UTF-8 where it was written (issue 25)", function()
    local ok, err = pcall(function()
      return dev:load(triton, { instrument = "warp", probes = { { name = "\xff\xfe", kernel = true } } })
    end)
    assert.is_false(ok)
    assert.equal("bad_argument", err.code)
    assert.matches("probes[1]: its name is not valid UTF-8", err.message, 1, true)
    local path = os.tmpname()
    local f = assert(io.open(path, "wb"))
    f:write(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n// @mgpu begin \xff\n"
      .. "ret;\n// @mgpu end \xff\n}\n")
    f:close()
    ok, err = pcall(function() return dev:load(path, { instrument = "warp" }) end)
    os.remove(path)
    assert.is_false(ok)
    assert.equal("ptx_syntax", err.code)
    assert.matches(":6: the region name of this marker is not valid UTF-8", err.message, 1, true)
  end)

  it("name the load in the option readers' own messages about a probe (load: probes[1]...)", function()
    for _, case in ipairs {
      { { role = 3, around = "ld" }, "load: probes[1].role must be a string, got number" },
      { { name = "a", kernel = true, colour = "red" }, "load: probes[1]" },
      { { name = "a", per = 1, loop = true }, "load: probes[1].per must be a string, got number" },
    } do
      local ok, err = pcall(function() return dev:load(triton, { instrument = "warp", probes = { case[1] } }) end)
      assert.is_false(ok)
      assert.equal("bad_argument", err.code)
      assert.matches(case[2], err.message, 1, true)
    end
  end)

  it("show the waves of a grid larger than one wave with the default kernel probe", function()
    -- 100 KB of shared memory a block: at most 2 blocks on each of emu's 132 SMs at once, so 1200
    -- blocks run in waves, one after another: the traces in flight stay below 264 and the
    -- kernel's span is several times one block's time
    local k = dev:load(triton, { instrument = "warpgroup" }):kernel("row_sum")
    local rows, n = 1200, 256
    local run = k:launch { grid = rows, block = 128, smem = 100000,
      args = { dev:array("f32", rows * n), dev:array("f32", rows), n, dev:array("u8", 16), dev:array("u8", 16) } }
    local r, timeline = run.trace:summary()
    assert.equal("kernel", r[1].name)
    assert.equal(rows, r[1].count)
    assert.is_true(r[1].concurrency <= 2 * timeline.sms, tostring(r[1].concurrency))
    assert.is_true(timeline.span >= 4 * r[1].mean, string.format("span %s, mean %s", timeline.span, r[1].mean))
  end)

  it("profile the JAX Mosaic GPU kernel as JAX made it, beside the trace it writes itself", function()
    local m = dev:load(h.fixtures .. "/copy_bounds_wg.ptx", { instrument = "warpgroup",
      probes = { { name = "kernel", kernel = true }, { name = "sync", around = "bar.sync" } } })
    local k = m:kernel("body_mosaic_gpu_kernel")
    local n = 128 * 128
    local x = dev:array("bf16", n, { fill = "random", seed = 42, min = -4, max = 4 })
    local y = dev:array("bf16", n)
    -- its own buffer is an ordinary argument now: the harness's trace is the probes'
    local own = dev:array("u32", 8 * 32)
    local run = k:launch { grid = 8, block = 128, smem = 128, args = { x, y, own }, profile = { entries = 8 } }
    assert.equal(0, y:compare(x).mismatches)
    assert.same({ kernel = 8, sync = 16 }, counts(run))
    assert.equal(2, #run.attempts)
    assert.is_true(own:read(3) > 0) -- the kernel still counted its own events
  end)

  it("refuse bad probes before any JIT, with the reason", function()
    local function err(probes, opts)
      opts = opts or { instrument = "warp" }
      opts.probes = probes
      local ok, e = pcall(dev.load, dev, triton, opts)
      assert.is_false(ok)
      return e
    end
    local e = err({ { name = "w", around = "wgmma.wait_group" } })
    assert.equal("bad_argument", e.code)
    assert.matches('probe "w": around = "wgmma.wait_group" matches nothing in any kernel', e.message)
    e = err({ { name = "r", from = "$L__BB0_8", to = "$L__BB0_3" } })
    assert.matches('probe "r": from %$L__BB0_8 does not dominate its to %$L__BB0_3', e.message)
    e = err({ { name = "l", loop = "$L__BB0_3" } })
    assert.matches("label %$L__BB0_3 of row_sum is not the header of a loop", e.message)
    e = err({ { name = "b", around = "bra" } })
    assert.matches("matches a branch or exit of row_sum", e.message)
    e = err({ { name = "k", kernel = true } }, {})
    assert.matches("probes need instrument", e.message)
    e = err({ { name = "k", kernel = true, loop = true } })
    assert.matches("must have one of kernel = true, loop =, around =, from = / to =", e.message)
    e = err({ { name = "k", kernal = true } })
    assert.equal("bad_argument", e.code)
    assert.matches('unknown option "kernal"', e.message)
    e = err({ { name = "r", from = "$L__BB0_3", to = 40 } })
    assert.matches("both be labels or both be lines", e.message)
    e = err({ { name = "r", from = "$L__BB0_3", to = "$L__BB0_3" } }) -- it said "does not dominate"
    assert.matches("from %$L__BB0_3 and to %$L__BB0_3 are the same place in row_sum", e.message)
    -- a list with a hole dropped the probes after it (the last hostile pass)
    e = err({ [1] = { name = "k", kernel = true }, [3] = { name = "s", around = "bar.sync" } })
    assert.equal("bad_argument", e.code)
    assert.matches("without holes or names", e.message)
    e = err({ { name = "bad\nname", kernel = true } })
    assert.matches("must be a region name", e.message)
    -- a region that would not nest with the markers
    local ok, e2 = pcall(dev.load, dev, h.src .. "/ptx/tiled.ptx", { instrument = "warp",
      probes = { { name = "cross", from = 83, to = 96 } } })
    assert.is_false(ok)
    assert.matches("does not close the innermost open region", e2.message)
  end)
end)
