-- emu_spec.lua: devices, modules, arrays and launches from Lua on the emu
-- backend: results, argument checks, error values, traces, determinism.
local h = require "helpers"
local mgpu = require "mgpu"

local function ptx(name) return h.src .. "/ptx/" .. name end

describe("mgpu on emu", function()
  local dev
  before_each(function() dev = mgpu.device() end)

  it("takes its timing from a named device model (issue 32)", function()
    local p = mgpu.device("emu", { model = "h100-pcie" })
    assert.equal(114, p.sms)
    assert.equal(1.62, p.clock_ghz)
    assert.equal(132, mgpu.device("emu", { model = "h100-sxm" }).sms)
    assert.equal(8, mgpu.device("emu", { model = "h100-sxm", sms = 8 }).sms)
    local ok, err = pcall(mgpu.device, "emu", { model = "a100" })
    assert.is_false(ok)
    assert.equal("bad_argument", err.code)
    assert.matches("no device model 'a100' %(models: h200, h100%-sxm, h100%-pcie%)", err.message)
    ok, err = pcall(mgpu.device, "emu", { model = "" }) -- (an empty name meant the default, silently)
    assert.is_false(ok)
    assert.matches("device.model is empty %(models: h200, h100%-sxm, h100%-pcie; leave it out for h200%)", err.message)
    -- the same streaming read of 64 MiB is slower where HBM is: the PCIe card's 2 TB/s against
    -- the H200's 4.8 TB/s (each at its own clock)
    local function read_ns(d)
      local k = d:load(h.src .. "/tests/ptx/microbench.ptx"):kernel("stream_read")
      local n4 = 4 * 1024 * 1024
      return k:launch { grid = 8 * d.sms, block = 256, args = { d:array("f32", 4 * n4), d:array("f32", 8 * d.sms * 256), n4 } }.time_ns
    end
    local slow, fast = read_ns(p), read_ns(dev)
    assert.is_true(slow > 2 * fast, slow .. " ns on h100-pcie, " .. fast .. " on h200")
  end)

  it("is the emu backend without a GPU", function()
    assert.equal("emu", dev.backend)
    assert.equal(1.755, dev.clock_ghz) -- the default model's (h200) SM clock under load (issue 32; was 1.5)
    assert.equal(132, dev.sms)
    local small = mgpu.device("emu", { sms = 4 })
    assert.equal(4, small.sms)
    -- blocks go round the virtual SMs: block 5 runs on SM 1 of 4
    local k = small:load(h.src .. "/ptx/reduce.ptx", { instrument = "warp" }):kernel("reduce_sum_f32")
    local run = k:launch { grid = 6, block = 32, smem = 128, args = { small:array("f32", 192), small:array("f32", 6), 192 } }
    assert.equal(1, run.trace:words()[5 * run.entries + 2])
    local info = small:load(h.src .. "/ptx/reduce.ptx"):kernel("reduce_sum_f32"):info()
    assert.equal("emu", info.backend)
    assert.equal(1024, info.max_threads)
    local ok, err = pcall(mgpu.device, "tpu")
    assert.is_false(ok)
    assert.equal("bad_argument", err.code)
  end)

  it("lists a kernel's setmaxnreg counts in info()", function()
    local k = dev:load(h.src .. "/tests/ptx/wgmma.ptx"):kernel("wgmma_gemm")
    local s = k:info().setmaxnreg
    assert.equal(2, #s)
    assert.same({ op = "inc", count = 232 }, { op = s[1].op, count = s[1].count })
    assert.same({ op = "dec", count = 40 }, { op = s[2].op, count = s[2].count })
    assert.is_true(s[1].line > 0 and s[2].line > s[1].line)
    assert.is_nil(dev:load(ptx("copy.ptx")):kernel("copy_f32x4"):info().setmaxnreg)
  end)

  it("makes arrays from fills and tables and reads them back", function()
    local a = dev:array("i32", { 3, -1, 7 })
    assert.same({ 3, -1, 7 }, a:read())
    assert.equal(3, #a)
    local r = dev:array("f32", 5, { fill = "ramp", start = 1, step = 0.5 })
    assert.same({ 1, 1.5, 2, 2.5, 3 }, r:read())
    local x = dev:array("f32", 100, { fill = "random", seed = 7, min = -1, max = 1 })
    local y = dev:array("f32", 100, { fill = "random", seed = 7, min = -1, max = 1 })
    local z = dev:array("f32", 100, { fill = "random", seed = 8, min = -1, max = 1 })
    assert.equal(0, x:compare(y).mismatches)
    assert.is_true(x:compare(z).mismatches > 90)
    for _, v in ipairs(x:read()) do assert.is_true(v >= -1 and v < 1) end
    local ok, err = pcall(dev.array, dev, "f8", 4)
    assert.equal("bad_argument", err.code)
    -- a shape whose product wraps around to the count, values that are not numbers
    ok, err = pcall(dev.array, dev, "f32", 4, { shape = { 4611686018427387905, 4 } })
    assert.equal("bad_argument", err.code) -- (LuaJIT: not an integer; Lua 5.4: larger than the array)
    ok, err = pcall(dev.array, dev, "f32", 4, { shape = { 8, 4 } })
    assert.matches("^shape: a dimension larger than the array", err.message)
    ok, err = pcall(x.write, x, { 1, "x" })
    assert.equal("write: values must be numbers", err.message)
  end)

  it("keeps 64-bit integers exact and reads one element alone", function()
    local a = dev:array("f32", 4, { fill = "ramp", start = 10 })
    assert.equal(12, a:read(3))
    assert.has_error(function() a:read(5) end)
    if not math.type then return pending("64-bit integers need Lua 5.3+ (LuaJIT numbers are doubles)") end
    -- written as strings so that LuaJIT can parse this file; Lua 5.4 makes integers of them
    local big, top = tonumber("4611686018427387905"), tonumber("-9223372036854775807") -- 2^62+1, -(2^63-1)
    local i = dev:array("i64", { big, top, 3 })
    assert.same({ big, top, 3 }, i:read())
    assert.equal(big, i:read(1))
    i:write({ big + 2 })
    assert.equal(big + 2, i:read(1))
    local u = dev:array("u64", { -1 }) -- 2^64-1: Lua's integers are signed, it reads back as -1
    assert.equal(-1, u:read(1))
    assert.is_true(math.ult(big, u:read(1)))
  end)

  it("runs the reduction kernel and matches a CPU sum", function()
    local k = dev:load(ptx("reduce.ptx")):kernel("reduce_sum_f32")
    local n, blocks, threads = 10000, 8, 128
    local input = dev:array("f32", n, { fill = "random", seed = 3, min = 0, max = 16 })
    local partial = dev:array("f32", blocks)
    local run = k:launch { grid = blocks, block = threads, smem = threads * 4, args = { input, partial, n } }
    local want = 0
    for _, v in ipairs(input:read()) do want = want + v end
    local got = 0
    for _, v in ipairs(partial:read()) do got = got + v end
    assert.is_true(math.abs(got - want) / want < 1e-5, got .. " vs " .. want)
    assert.is_true(run.thread_insns > n)
    assert.equal("emu", run.backend)
  end)

  it("passes structs by value (mgpu.struct), through a template kernel and a .func with its own locals", function()
    local dev = mgpu.device("emu")
    local k = dev:load(h.src .. "/tests/ptx/struct_param.ptx"):kernel("_Z10tile_shiftILi64EEvPKfPf6Params")
    assert.equal(24, k:params()[3].size)
    local n = 300
    local a = dev:array("f32", n, { fill = "random", seed = 1, min = -1, max = 1 })
    local c = dev:array("f32", n)
    local p = mgpu.struct { { "f32", 0.5 }, { "i32", 3 }, { "u32", n }, { "f32", { 1, 2, 4 } } }
    assert.equal(24, #p)
    k:launch { grid = 5, block = 64, args = { a, c, p } }
    -- reference: (a[j] * 0.5 + bias[j % 3]) rounded once (fma), then + 3 rounded
    local av, want = a:read(), {}
    for i = 0, n - 1 do
      local j = i - i % 64 + (i % 64 + 1) % 64
      want[i + 1] = j < n and av[j + 1] * 0.5 + ({ 1, 2, 4 })[j % 3 + 1] or 0
    end
    local fused = dev:array("f32", want):read() -- rounded to float
    for i = 1, n do want[i] = fused[i] + 3 end
    assert.equal(0, c:compare(dev:array("f32", want), { atol = 0, rtol = 0 }).mismatches)
    local ok, err = pcall(k.launch, k, { grid = 5, block = 64, args = { a, c, p:sub(1, 20) } })
    assert.equal("bad_argument", err.code)
    assert.matches("is 24 bytes; 20 bytes were given", err.message)
    ok, err = pcall(k.launch, k, { grid = 5, block = 64, args = { a, c, 5 } })
    assert.matches("24%-byte aggregate %(a struct by value%): pass its bytes", err.message)
    -- its launch bounds: at most 256 threads
    ok, err = pcall(k.launch, k, { grid = 1, block = 512, args = { a, c, p } })
    assert.equal("launch_failed", err.code)
    ok, err = pcall(mgpu.struct, { { "f33", 1 } })
    assert.equal("bad_argument", err.code)
    -- C layout: u8 at 0, f64 at 8, u8 at 16, size 24; padding bytes are zeros
    local s = mgpu.struct { { "u8", 1 }, { "f64", 2 }, { "u8", 3 } }
    assert.equal(24, #s)
    assert.same({ 1, 0, 0, 0, 0, 0, 0, 0 }, { s:byte(1, 8) })
    assert.same({ 3, 0, 0, 0, 0, 0, 0, 0 }, { s:byte(17, 24) })
    assert.equal(4, #mgpu.struct { { "u8", 1 }, { "u16", 2 } })
    -- values checked as kernel arguments are: integers that fit, no fractions for integer fields
    for _, bad in ipairs { { { "u8", 256 } }, { { "i8", -129 } }, { { "u32", 1.5 } },
      { { "u8", setmetatable({}, { __len = function() return 2 ^ 53 end }) } } } do
      ok, err = pcall(mgpu.struct, bad)
      assert.equal("bad_argument", err.code)
    end
  end)

  it("reduces across a warp with redux.sync, whole and over a member mask, past a __nanosleep; match.all", function()
    local dev = mgpu.device("emu")
    local k = dev:load(h.src .. "/tests/ptx/warp_reduce.ptx"):kernel("warp_reduce")
    local n = 64
    local x = dev:array("u32", n, { fill = "random", seed = 5, min = 0, max = 4294967295 })
    local out = dev:array("u32", 2 * 12)
    k:launch { grid = 1, block = n, args = { x, out } }
    -- reference without 5.3 operators (the specs run under LuaJIT too)
    local function bits(a, b, f) -- bitwise f on two 32-bit values
      local r, p = 0, 1
      for _ = 1, 32 do
        if f(a % 2, b % 2) then r = r + p end
        a, b, p = math.floor(a / 2), math.floor(b / 2), p * 2
      end
      return r
    end
    local function signed(v) return v >= 2147483648 and v - 4294967296 or v end
    local xv, want = x:read(), {}
    for w = 0, 1 do
      local add, umin, umax, smin, smax, band, bor, bxor, even = 0, math.huge, 0, math.huge, -math.huge, 4294967295, 0, 0, 0
      for l = 0, 31 do
        local v = xv[w * 32 + l + 1]
        add = (add + v) % 4294967296
        umin, umax = math.min(umin, v), math.max(umax, v)
        smin, smax = math.min(smin, signed(v)), math.max(smax, signed(v))
        band = bits(band, v, function(p, q) return p == 1 and q == 1 end)
        bor = bits(bor, v, function(p, q) return p == 1 or q == 1 end)
        bxor = bits(bxor, v, function(p, q) return p ~= q end)
        if l % 2 == 0 then even = (even + v) % 4294967296 end
      end
      -- match.all: the warp index is the same on every lane (full mask, predicate 1), x is not (0, 0)
      for _, r in ipairs { add, umin, umax, smin % 4294967296, smax % 4294967296, band, bor, bxor, even,
        4294967295, 0, 1 } do
        want[#want + 1] = r
      end
    end
    assert.same(want, out:read())
  end)

  it("runs the compiler-output kernels of tests/ptx in strict mode (every register read was written)", function()
    local sdev = mgpu.device("emu", { strict = true })
    local n = 300
    local a, c = sdev:array("f32", n, { fill = "random", seed = 1, min = -1, max = 1 }), sdev:array("f32", n)
    local x = sdev:array("u32", 128, { fill = "random", seed = 5, min = 0, max = 4294967295 })
    local src = h.src .. "/tests/ptx/"
    sdev:load(src .. "warp_reduce.ptx"):kernel("warp_reduce"):launch { grid = 1, block = 64, args = { x, sdev:array("u32", 24) } }
    sdev:load(src .. "half2.ptx"):kernel("h2cmp"):launch { grid = 1, block = 64, args = { x, x, sdev:array("u32", 320) } }
    sdev:load(src .. "struct_param.ptx"):kernel("_Z10tile_shiftILi64EEvPKfPf6Params"):launch { grid = 5, block = 64,
      args = { a, c, mgpu.struct { { "f32", 0.5 }, { "i32", 3 }, { "u32", n }, { "f32", { 1, 2, 4 } } } } }
    local f = sdev:load(src .. "features.ptx")
    f:kernel("k_redux"):launch { grid = 1, block = 128, args = { x, sdev:array("u32", 129) } }
    f:kernel("k_atomics"):launch { grid = 1, block = 128, args = { sdev:array("i32", 2), sdev:array("u64", 128) } }
    f:kernel("k_cg"):launch { grid = 1, block = 128, args = { a, sdev:array("f32", 8) } }
    f:kernel("k_half"):launch { grid = 1, block = 128, args = { sdev:array("f16", 128), sdev:array("f16", 128) } }
    sdev:load(src .. "triton_style.ptx", { instrument = "warp" }):kernel("vec_add")
      :launch { grid = 2, block = 128, args = { a, a, sdev:array("f32", 1024), n } }
    sdev:load(src .. "tiled_debug.ptx"):kernel("tiled_scale_work")
      :launch { grid = 3, block = 128, smem = 512, args = { a, c, n, 0.5, 3 } }
    sdev:load(src .. "llvm_tiled.ptx"):kernel("llvm_tiled")
      :launch { grid = 3, block = 64, smem = 256, args = { a, c, sdev:array("f32", 32), n, 2.0 } }
  end)

  it("takes module-level linkage and data directives (.extern/.weak .func, .common, initialised .const)", function()
    local src = table.concat({ ".version 8.0", ".target sm_90", ".address_size 64",
      ".extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);",
      ".weak .func (.param .b32 r) wf(.param .b32 p) { .reg .b32 %r<2>; ld.param.b32 %r1, [p]; st.param.b32 [r+0], %r1; ret; }",
      ".common .global .align 4 .b8 cbuf[16];",
      ".const .align 4 .b8 ctab[8] = {1, 2, 3, 4, 5, 6, 7, 8};",
      ".visible .entry k(.param .u64 p)", "{", ".reg .b32 %r<4>;", ".reg .b64 %rd<4>;", ".pragma \"nounroll\";",
      "ld.param.u64 %rd1, [p];", "cvta.to.global.u64 %rd2, %rd1;", "ld.const.u32 %r1, [ctab+4];",
      "st.global.u32 [%rd2], %r1;", "ret;", "}", "" }, "\n")
    local o = dev:array("u32", 1)
    dev:load({ name = "dirs.ptx", source = src }):kernel("k"):launch { grid = 1, block = 32, args = { o } }
    assert.equal(0x08070605, o:read(1))
    -- .alias, and an address as an initialiser (the driver fills it in): the module loads and
    -- instruments; emu names what it cannot do
    local src2 = table.concat({ ".version 8.0", ".target sm_90", ".address_size 64",
      ".global .align 4 .u32 gv = 7;", ".visible .global .align 8 .u64 gp = generic(gv);",
      ".visible .func (.param .b32 r) f1(.param .b32 p) { .reg .b32 %r<2>; ld.param.b32 %r1, [p]; st.param.b32 [r+0], %r1; ret; }",
      ".visible .func (.param .b32 r) f2(.param .b32 p);", ".alias f2, f1;",
      ".visible .entry k()", "{", "// @mgpu begin a", "// @mgpu end a", "ret;", "}", "" }, "\n")
    local m = dev:load({ name = "addr.ptx", source = src2, instrument = "warp" })
    local ok, err = pcall(m.kernel, m, "k")
    assert.equal("ptx_unsupported", err.code)
    assert.equal(5, err.line)
    assert.matches("addr%.ptx:5: gp is initialised with an address", err.message)
  end)

  it("checks arguments against the kernel's signature before launching", function()
    local k = dev:load(ptx("copy.ptx")):kernel("copy_f32x4")
    local a, b = dev:array("f32", 16), dev:array("f32", 16)
    local params = k:params()
    assert.equal(3, #params)
    assert.is_true(params[1].ptr)
    assert.equal("u32", params[3].type)
    local cases = {
      { { a, b }, "takes 3 arguments, 2 were given" },
      { { a, 5, 4 }, "is a pointer but got an integer" },
      { { a, b, -2147483649 }, "%-2147483649 does not fit" }, -- -1 is 0xffffffff: nvcc's C int is .u32
      { { a, b, 2.5 }, "needs an integer" },
      { { a, b, 1099511627776 }, "1099511627776 does not fit" },
      { { a, b, "x" }, "parameter 2 %(copy_f32x4_param_2, %.u32%) takes a number, not bytes" },
      { { a, b, {} }, "argument 3 is a table" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(k.launch, k, { grid = 1, block = 32, args = c[1] })
      assert.is_false(ok)
      assert.equal("bad_argument", err.code)
      assert.matches(c[2], err.message)
    end
  end)

  it("reports PTX errors and faults as error values with the line", function()
    -- an instruction the front end does not decode is kept (the GPU may run it); emu refuses the
    -- kernel that uses it when it is taken, and the module's other kernels still run
    local bad = dev:load { name = "bad.ptx", source = ".version 8.0\n.target sm_90\n.address_size 64\n"
      .. ".visible .entry k()\n{\nfoo.bar %r1;\n}\n.visible .entry fine()\n{\nret;\n}\n" }
    local ok, err = pcall(bad.kernel, bad, "k")
    assert.equal("ptx_unsupported", err.code)
    assert.equal(6, err.line)
    assert.matches("bad%.ptx:6: instruction 'foo%.bar' is not supported by emu", err.message)
    bad:kernel("fine"):launch { grid = 1, block = 32, args = {} }
    local m = dev:load(ptx("copy.ptx"))
    ok, err = pcall(m.kernel, m, "nope")
    assert.equal("not_found", err.code)
    -- n larger than the arrays: the copy runs off their end
    local k = m:kernel("copy_f32x4")
    local a, b = dev:array("f32", 16), dev:array("f32", 16)
    ok, err = pcall(k.launch, k, { grid = 1, block = 32, args = { a, b, 8 } })
    assert.equal("kernel_fault", err.code)
    -- the .cu line (.loc) first, then the PTX line (issue 34)
    assert.matches("copy%.cu:%d+ %(PTX [^)]*copy%.ptx:%d+%): copy_f32x4: out%-of%-range global read of 16 bytes", err.message)
    assert.is_number(err.line)
    -- the device still works
    k:launch { grid = 1, block = 32, args = { a, b, 4 } }
  end)

  it("gives the trace a kernel writes, the same on every run", function()
    local k = dev:load(h.fixtures .. "/copy_bounds_wg.ptx"):kernel("body_mosaic_gpu_kernel")
    local x = dev:array("bf16", 128 * 128, { fill = "ramp", step = 0.125 })
    local y = dev:array("bf16", 128 * 128)
    local function run()
      return k:launch { grid = 8, block = 128, smem = 128, args = { x, y, mgpu.TRACE },
        profile = { scope = "warpgroup", entries = 32, names = { "Init", "load", "store" } } }
    end
    local r1 = run()
    assert.equal(0, y:compare(x).mismatches)
    -- the same launch on a fresh device gives the same buffer, word for word
    local dev2 = mgpu.device()
    local k2 = dev2:load(h.fixtures .. "/copy_bounds_wg.ptx"):kernel("body_mosaic_gpu_kernel")
    local x2 = dev2:array("bf16", 128 * 128, { fill = "ramp", step = 0.125 })
    local r2 = k2:launch { grid = 8, block = 128, smem = 128, args = { x2, dev2:array("bf16", 128 * 128), mgpu.TRACE },
      profile = { scope = "warpgroup", entries = 32, names = { "Init", "load", "store" } } }
    assert.same(r1.trace:words(), r2.trace:words())
    local dir = h.tmpdir()
    local d = r1.trace:dump(dir .. "/t.json")
    assert.equal(112, d.events)
    assert.equal("ns", d.unit)
    local names = {}
    for _, row in ipairs(d.summary) do names[#names + 1] = row.name .. "=" .. row.count end
    assert.same({ "Init=8", "load=24", "store=24" }, names)
    local c = r1.trace:dump(dir .. "/m.json", { compat = "mosaic" })
    assert.equal(112, c.events)
    h.rmdir(dir)
    -- a trace argument without a profile spec is refused
    local ok, err = pcall(k.launch, k, { grid = 8, block = 128, smem = 128, args = { x, y, mgpu.TRACE } })
    assert.equal("bad_argument", err.code)
  end)
end)

describe("arrays and .npy files", function()
  it("keep a shape, save it to .npy and load it back", function()
    local dev = mgpu.device("emu")
    local dir = h.tmpdir()
    local a = dev:array("f32", 6, { fill = "ramp", start = 0.5, shape = { 2, 3 } })
    assert.same({ 2, 3 }, a:shape())
    a:save(dir .. "/a.npy")
    local raw = h.read(dir .. "/a.npy")
    assert.equal("\147NUMPY\1\0", raw:sub(1, 8))
    assert.matches("'descr': '<f4', 'fortran_order': False, 'shape': %(2, 3,%)", raw)
    assert.equal(0, (#raw - 24) % 64) -- the data starts at a multiple of 64
    local b = dev:load_npy(dir .. "/a.npy")
    assert.same({ 2, 3 }, b:shape())
    assert.equal(0, b:compare(a).mismatches)
    -- a .npy of int32 from the fixtures' world, and one whose dtype is refused
    local c = dev:array("i32", { -1, 2, -3 })
    c:save(dir .. "/c.npy")
    assert.same({ -1, 2, -3 }, dev:load_npy(dir .. "/c.npy"):read())
    h.write(dir .. "/bad.npy", "\147NUMPY\1\0" .. h.le(70, 2) .. "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }"
      .. string.rep(" ", 11) .. "\n" .. string.rep("\0", 16))
    local ok, err = pcall(dev.load_npy, dev, dir .. "/bad.npy")
    assert.equal("bad_buffer", err.code)
    assert.matches("dtype 'c8' is not supported", err.message)
    ok, err = pcall(dev.array, dev, "f32", 6, { shape = { 4, 2 } })
    assert.equal("bad_argument", err.code)
    h.rmdir(dir)
  end)

  it("faults, not crashes, on ld.param of a variable that is not a parameter (found by fuzz_ptx)", function()
    local dev = mgpu.device("emu")
    local src = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
      .. ".reg .b64 %rd<2>;\n.shared .align 8 .b8 sbuf[512];\nld.param.u64 %rd1, [sbuf];\nret;\n}\n"
    local k = dev:load({ name = "ldparam.ptx", source = src }):kernel("k")
    local ok, err = pcall(k.launch, k, { grid = 1, block = 32, args = { dev:array("u8", 8) } })
    assert.is_false(ok)
    assert.equal("kernel_fault", err.code)
    assert.matches("ldparam%.ptx:8: k: ld%.param of sbuf, which is a %.?shared variable, not a parameter", err.message)
  end)

  it("runs mbarriers: counted arrivals, transaction bytes, waits by parity and by state", function()
    -- tests/ptx/mbarrier.cu: warp 0 arrives twice per thread with 16 transaction bytes pending
    -- until thread 0 completes them; warp 1 spins on the phase's parity, yielding to warp 0
    local dev = mgpu.device("emu", { strict = true })
    local m = dev:load(h.src .. "/tests/ptx/mbarrier.ptx")
    local out = dev:array("u32", 128)
    m:kernel("mbar_phases"):launch { grid = 1, block = 64, args = { out } }
    local v = out:read()
    for phase = 0, 1 do
      for t = 0, 63 do
        -- producers: test_wait false before the bytes complete, true after (0 * 10 + 1)
        local want = t < 32 and 1 or 100 + phase
        assert.equal(want, v[phase * 64 + t + 1], string.format("phase %d thread %d", phase, t))
      end
    end
    local k = m:kernel("mbar_too_many")
    local ok, err = pcall(k.launch, k, { grid = 1, block = 32, args = { out } })
    assert.is_false(ok)
    assert.equal("kernel_fault", err.code)
    assert.matches("mbarrier%.ptx:%d+: mbar_too_many: mbarrier: more arrivals than the 1 it expects per phase", err.message)
    -- a phase nothing completes: a kernel_fault that says so, not a hang
    k = m:kernel("mbar_deadlock")
    ok, err = pcall(k.launch, k, { grid = 1, block = 64, args = { out } })
    assert.is_false(ok)
    assert.equal("kernel_fault", err.code)
    assert.matches("deadlock: every warp waits", err.message)
    -- and the device goes on
    m:kernel("mbar_phases"):launch { grid = 1, block = 64, args = { out } }
    assert.equal(100, out:read(33))
  end)

  it("runs barriers with a thread count (bar.sync a, b / bar.arrive a, b) apart from the rest of the block", function()
    -- tests/ptx/named_barrier.cu: a producer and a consumer warp hand a buffer through barriers 1
    -- and 2 for 5 rounds while a third warp meets them only at __syncthreads
    local dev = mgpu.device("emu", { strict = true })
    local m = dev:load(h.src .. "/tests/ptx/named_barrier.ptx")
    local rounds = 5
    local x = dev:array("u32", rounds * 32, { fill = "ramp" })
    local out = dev:array("u32", rounds * 32 + 32)
    m:kernel("named_barriers"):launch { grid = 1, block = 96, args = { x, out, rounds } }
    local v = out:read()
    for r = 0, rounds - 1 do
      for l = 0, 31 do assert.equal((r * 32 + (l + 1) % 32) * 3 + 1, v[r * 32 + l + 1]) end
    end
    for l = 0, 31 do assert.equal(1000 + l + v[l + 1], v[rounds * 32 + l + 1]) end
    local k = m:kernel("barrier_short")
    local ok, err = pcall(k.launch, k, { grid = 1, block = 96, args = { out } })
    assert.is_false(ok)
    assert.equal("kernel_fault", err.code)
    assert.matches("deadlock: waiting at barrier 3, where 64 threads have arrived and no other thread can run", err.message)
  end)

  it("summarises a trace without writing a file", function()
    local dev = mgpu.device("emu")
    local k = dev:load(h.src .. "/ptx/reduce.ptx", { instrument = "warp" }):kernel("reduce_sum_f32")
    local x = dev:array("f32", 1024)
    local run = k:launch { grid = 2, block = 64, smem = 256, args = { x, dev:array("f32", 2), 1024 } }
    local rows, timeline = run.trace:summary()
    assert.equal(2, #rows)
    assert.equal(4, rows[1].count)
    -- 2 blocks on virtual SMs 0 and 1, 4 warps with events
    assert.equal(4, timeline.traces)
    assert.equal(2, timeline.sms)
    assert.is_true(timeline.span > 0)
    assert.near(rows[1].total / timeline.span, rows[1].concurrency, 1e-12)
  end)
end)
