-- cuda_spec.lua: the Lua API on the cuda backend, through the fake driver of
-- the tests (tests/fake/fake_cuda.c): the same calls as on emu reach the
-- driver; JIT errors and faults are error values: after a fault cuda.h says
-- needs a relaunch the device is lost for the process (a new process runs),
-- after a device-side assert the context is reset and the next launch runs
-- (the module is compiled again behind the scenes).
-- Nothing here runs a kernel: the fake driver only pretends to.
local h = require "helpers"
local mgpu = require "mgpu"

local fake = os.getenv("MGPU_FAKE_CUDA")

describe("mgpu on the cuda backend (fake driver)", function()
  if not fake then
    pending("MGPU_FAKE_CUDA is not set")
    return
  end

  it("opens a device and says what it is", function()
    local dev = mgpu.device("cuda", { driver = fake })
    assert.equal("cuda", dev.backend)
    assert.equal("Fake GPU 0", dev.name)
    assert.equal(132, dev.sms)
    assert.equal(1.98, dev.clock_ghz)
    local ok, err = pcall(mgpu.device, "cuda:3", { driver = fake })
    assert.equal("no_device", err.code)
    ok, err = pcall(mgpu.device, "cuda", { driver = "/nonexistent/libcuda.so.1" })
    assert.equal("no_device", err.code)
    -- auto falls back to emu without a driver
    assert.equal("emu", mgpu.device("auto", { driver = "/nonexistent/libcuda.so.1" }).backend)
  end)

  it("refuses the other backend's options on an explicit backend, takes both on auto", function()
    -- (emu's options were ignored on cuda: a model_params given to a GPU changed nothing, silently)
    for _, o in ipairs { { model_params = { l2_lat = 300 } }, { model = "h100-sxm" }, { sms = 4 }, { strict = true },
                         { threads = 2 }, { max_insns = 10 } } do
      o.driver = fake
      local ok, err = pcall(mgpu.device, "cuda", o)
      assert.is_false(ok)
      assert.equal("bad_argument", err.code)
      assert.matches("is an option of emu, not of the cuda backend", err.message)
    end
    local ok, err = pcall(mgpu.device, "emu", { driver = fake })
    assert.is_false(ok)
    assert.matches("driver is an option of the cuda backend, not of emu", err.message)
    assert.equal("cuda", mgpu.device("auto", { driver = fake, model = "h100-sxm", sms = 4 }).backend)
  end)

  it("runs an experiment with an emu table on cuda (the table times emu's points only)", function()
    local dir = h.tmpdir()
    h.write(dir .. "/e.lua", string.format([[
return { name = "c", module = %q, kernel = "copy_f32x4", repeats = 1, emu = { model = "h100-sxm", params = { l2_lat = 300 } },
  setup = function(p, dev) return { grid = 1, block = 32, args = { dev:array("f32", 64), dev:array("f32", 64), 16 } } end }]],
      h.src .. "/ptx/copy.ptx"))
    local st, _, err = h.run_env("MGPU_LIBCUDA=" .. h.quote(fake), dir .. "/e.lua", "--backend", "cuda", "--workers", "0",
      "--out", dir .. "/r", "--quiet")
    assert.equal(0, st, err)
    assert.is_nil(require("mgpu.core").json_decode(h.read(dir .. "/r/manifest.json")).emu_model)
    h.rmdir(dir)
  end)

  it("moves arrays, launches with checked arguments and times with events", function()
    local dev = mgpu.device("cuda", { driver = fake })
    local x = dev:array("f32", 64, { fill = "ramp" })
    assert.same({ 0, 1, 2 }, { x:read(1), x:read(2), x:read(3) })
    local k = dev:load(h.src .. "/ptx/copy.ptx", { opt_level = 3, max_registers = 64 }):kernel("copy_f32x4")
    assert.equal(32, k:info().registers) -- what the (fake) driver reports
    local y = dev:array("f32", 64)
    local run = k:launch { grid = 1, block = 32, args = { x, y, 16 } }
    assert.equal("cuda", run.backend)
    assert.equal(125000, run.time_ns) -- the fake's events say 0.125 ms
    assert.is_nil(k:launch { grid = 1, block = 32, args = { x, y, 16 }, time = false }.time_ns) -- no events
    assert.is_nil(run.cycles)
    local ok, err = pcall(k.launch, k, { grid = 1, block = 32, args = { x, y } })
    assert.equal("bad_argument", err.code)
    -- shapes the device would refuse never reach the (fake) driver, which would take them
    ok, err = pcall(k.launch, k, { grid = { 1, 70000 }, block = 32, args = { x, y, 16 } })
    assert.equal("launch_failed", err.code)
    assert.matches("grid%.y = 70000: it must be 1 to 65535", err.message)
    ok, err = pcall(k.launch, k, { grid = 1, block = 32, smem = 232449, args = { x, y, 16 } })
    assert.matches("the device has 232448", err.message) -- the fake's opt-in limit
    ok, err = pcall(k.launch, k, { grid = 1, block = 32, smem = -1, args = { x, y, 16 } })
    assert.equal("bad_argument", err.code)
    -- thread-block clusters (cuLaunchKernelEx)
    k:launch { grid = 4, block = 32, cluster = { 2, 1, 1 }, args = { x, y, 16 } }
    ok, err = pcall(k.launch, k, { grid = 3, block = 32, cluster = { 2, 1, 1 }, args = { x, y, 16 } })
    assert.equal("bad_argument", err.code) -- as from .reqnctapercluster
    assert.matches("not a whole number of 2x1x1 clusters", err.message)
  end)

  it("compiles Mosaic's sm_90a PTX for compute_90a", function()
    local dev = mgpu.device("cuda", { driver = fake })
    local m = dev:load(h.fixtures .. "/copy_bounds_wg.ptx")
    local info = m:kernel(m:kernels()[1]):info()
    assert.equal("compute_90a", info.jit_target)
    assert.equal("context", dev:load(h.src .. "/ptx/copy.ptx"):kernel("copy_f32x4"):info().jit_target)
  end)

  it("loads a cubin with the PTX it came from for the signatures", function()
    local dev = mgpu.device("cuda", { driver = fake })
    local dir = h.tmpdir()
    h.write(dir .. "/k.cubin", "\127ELF" .. string.rep("\0", 60)) -- the fake driver takes any image
    local m = dev:load(dir .. "/k.cubin", { ptx = h.src .. "/ptx/copy.ptx" })
    local x, y = dev:array("f32", 64), dev:array("f32", 64)
    m:kernel("copy_f32x4"):launch { grid = 1, block = 32, args = { x, y, 16 } }
    local ok, err = pcall(dev.load, dev, dir .. "/k.cubin")
    assert.equal("bad_argument", err.code)
    assert.matches("needs the PTX it was built from", err.message)
    ok, err = pcall(dev.load, dev, dir .. "/k.cubin", { ptx = h.src .. "/ptx/copy.ptx", instrument = "warp" })
    assert.matches("cannot be instrumented", err.message)
    local emu = mgpu.device("emu")
    ok, err = pcall(emu.load, emu, dir .. "/k.cubin", { ptx = h.src .. "/ptx/copy.ptx" })
    assert.matches("runs on the cuda backend only", err.message)
    h.rmdir(dir)
  end)

  it("reports JIT errors with the line, and survives a fault", function()
    local dev = mgpu.device("cuda", { driver = fake })
    local ok, err = pcall(dev.load, dev, { name = "j.ptx", source = ".version 8.0\n.target sm_90\n.address_size 64\n"
      .. ".visible .entry k()\n{\nret;\n}\n// FAKE_JIT_ERROR\n" })
    assert.equal("jit_failed", err.code)
    assert.equal(8, err.line)
    -- instrumented, the JIT reads the rewritten text: the error names the user's line
    ok, err = pcall(dev.load, dev, { name = "j.ptx", instrument = "warp", source = ".version 8.0\n.target sm_90\n"
      .. ".address_size 64\n.visible .entry k()\n{\n// @mgpu begin a\n// @mgpu end a\n// FAKE_JIT_ERROR\nret;\n}\n" })
    assert.equal("jit_failed", err.code)
    assert.equal(8, err.line)
    assert.matches("%(line %d+ of the instrumented module is line 8 of j%.ptx%)", err.message)
    -- a fault cuda.h says needs a relaunch (700) loses the device for the process: the fault is a
    -- kernel_fault saying so, every later use no_device; a new process can use the GPU (run in one)
    local st, out = h.run_env("MGPU_LIBCUDA=" .. h.quote(fake), h.src .. "/scripts/device/fault.lua", "cuda")
    assert.equal(0, st)
    assert.matches("FAULT kernel_fault fault faulted: CUDA_ERROR_ILLEGAL_ADDRESS %(700%).-the device is lost for this process", out)
    assert.matches("AFTER no_device the CUDA device is lost for this process: fault faulted with CUDA_ERROR_ILLEGAL_ADDRESS", out)
    -- a device-side assert (710) resets the context: the same kernel object runs after it (the
    -- module is compiled again and the handle looked up again; the fake refuses old handles)
    local src = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry fault_710(.param .u64 p)\n{\nret;\n}\n"
      .. ".visible .entry fine(.param .u64 p)\n{\nret;\n}\n"
      .. ".visible .entry takes_map(.param .align 64 .b8 map[128])\n{\nret;\n}\n"
    local m = dev:load { name = "f.ptx", source = src }
    local a = dev:array("u32", 4)
    local fine = m:kernel("fine")
    fine:launch { grid = 1, block = 32, args = { a } }
    local map = dev:tensor_map(dev:array("f32", 256), { box = { 32 } })
    m:kernel("takes_map"):launch { grid = 1, block = 32, args = { map } }
    ok, err = pcall(m:kernel("fault_710").launch, m:kernel("fault_710"), { grid = 1, block = 32, args = { a } })
    assert.equal("kernel_fault", err.code)
    assert.matches("CUDA_ERROR_ASSERT %(710%).-the device's context was reset", err.message)
    local b = dev:array("u32", 4)
    local run = fine:launch { grid = 1, block = 32, args = { b } }
    assert.equal("cuda", run.backend)
    -- a tensor map over an array the reset lost is refused, as that array would be
    ok, err = pcall(m:kernel("takes_map").launch, m:kernel("takes_map"), { grid = 1, block = 32, args = { map } })
    assert.is_false(ok)
    assert.equal("bad_argument", err.code)
    assert.matches("argument 1 is a tensor map over an array that was freed %(or lost when a fault reset the device%)", err.message)
  end)

  it("encodes TMA descriptors with the driver after checking them, and passes one to a kernel", function()
    local dev = mgpu.device("cuda", { driver = fake })
    -- the fake driver writes its arguments into the descriptor: 16 little-endian uint64
    local function word(m, k)
      local v = 0
      for i = 8, 1, -1 do v = v * 256 + m:byte(8 * k + i) end
      return v
    end
    local function bits(w, at, n) return math.floor(w / 2 ^ at) % 2 ^ n end
    local a = dev:array("bf16", 64 * 128, { shape = { 64, 128 } })
    local m = dev:tensor_map(a, { box = { 64, 32 }, swizzle = "128B", l2 = "128B" })
    assert.equal(128, #m)
    assert.equal(9, word(m, 1))                       -- CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
    assert.equal(2, word(m, 2))                       -- rank
    assert.same({ 128, 64 }, { word(m, 3), word(m, 4) }) -- innermost first: the shape reversed
    assert.equal(256, word(m, 8))                     -- bytes per row
    assert.same({ 64, 32 }, { bits(word(m, 12), 0, 16), bits(word(m, 12), 16, 16) })
    assert.same({ 1, 1 }, { bits(word(m, 13), 16, 16), bits(word(m, 13), 32, 16) })
    assert.same({ 0, 3, 2, 0 }, { bits(word(m, 15), 0, 8), bits(word(m, 15), 8, 8), bits(word(m, 15), 16, 8),
      bits(word(m, 15), 24, 8) })                     -- interleave none, swizzle 128B, L2 128B, OOB zero
    -- explicit dims and strides: a 32 x 64 window with rows 256 bytes apart
    m = dev:tensor_map(a, { dims = { 64, 32 }, strides = { 256 }, box = { 8, 8 }, element_strides = { 1, 2 }, oob = "nan" })
    assert.same({ 64, 32, 256 }, { word(m, 3), word(m, 4), word(m, 8) })
    assert.equal(2, bits(word(m, 13), 32, 16))
    assert.equal(1, bits(word(m, 15), 24, 8))
    -- strides need not grow outwards (cuda.h asks a multiple of 16 below 2^40): rows that overlap, a
    -- dimension of size 1 with stride 0
    m = dev:tensor_map(a, { dims = { 64, 32, 1 }, strides = { 64, 0 }, box = { 64, 32, 1 } })
    assert.same({ 64, 0 }, { word(m, 8), word(m, 9) })
    -- a kernel taking it as a __grid_constant__ parameter (tests/ptx/hopper.cu)
    local k = dev:load(h.src .. "/tests/ptx/hopper.ptx"):kernel("tma_like")
    local out = dev:array("f32", 384)
    assert.equal("cuda", k:launch { grid = 1, block = 384, args = { m, out } }.backend)
    -- what the driver would refuse, said before it is asked
    local bad = {
      { { box = { 64 } }, "box needs 2 entries %(one per dimension, innermost first%), got 1" },
      { { box = { 4, 32 } }, "the box's inner dimension is 8 bytes %(box%[1%] x 2%): it must be a multiple of 16" },
      { { box = { 64, 32 }, swizzle = "64B" }, "the box's inner dimension is 128 bytes, more than the 64B swizzle takes" },
      { { box = { 64, 300 } }, "box%[2%] = 257 %(1 to 256 elements%)" },
      { { box = { 64, 32 }, strides = { 512 } }, "the tensor spans 32512 bytes, the array has 16384: TMA would read past its end" },
      { { box = { 64, 32 }, strides = { 200 } }, "strides%[1%] = 200 bytes %(a multiple of 16 below 2%^40%)" },
      { { box = { 64, 32 }, swizzle = "256B" }, "swizzle = \"256B\" %(none, 32B, 64B, 128B%)" },
      { { box = { 64, 32 }, element_strides = { 1, 9 } }, "element_strides%[2%] = 9 %(1 to 8%)" },
      { { box = { 64, 32 }, dims = { 128, 64, 2 } }, "box needs 3 entries" },
    }
    for _, c in ipairs(bad) do
      local ok, err = pcall(dev.tensor_map, dev, a, c[1])
      assert.is_false(ok)
      assert.equal("bad_argument", err.code)
      assert.matches("tensor map: " .. c[2], err.message)
    end
    -- emu checks the same, then encodes its own map (docs/emu.md)
    local emu = mgpu.device("emu")
    local em = emu:tensor_map(emu:array("f32", 256), { box = { 32 } })
    assert.equal(128, #em)
    assert.equal("MGPUTMAP", em:sub(1, 8))
    local ok, err = pcall(emu.tensor_map, emu, emu:array("f32", 256), { box = { 2 } })
    assert.equal("bad_argument", err.code)
    ok, err = pcall(emu.tensor_map, emu, emu:array("u8", 4096), { dims = { 4294967296, 4294967296, 4294967296 },
      strides = { 1099511627760, 1099511627760 }, box = { 16, 1, 1 } }) -- 2^32 each, 2^40 - 16
    assert.matches("the tensor's size overflows 64 bits", err.message)
  end)
end)
