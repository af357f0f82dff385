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
    -- the SM clock measured from the calibration words: the default device model's 1.755 GHz
    assert.is_true(math.abs(d.clock_ghz_measured - 1.755) < 0.0175, tostring(d.clock_ghz_measured))
    assert.equal("measured", d.clock_source)
    assert.equal(d.clock_ghz_measured, d.clock_ghz)
    assert.is_true(d.timer_step_ns >= 1 and d.clock_bound < 0.005)
    h.rmdir(dir)
  end)

  it("retry once with exactly the entries needed", function()
    local k = dev:load(ptx("tiled.ptx"), { instrument = "warp" }):kernel("tiled_scale")
    local n = 64 * 10
    local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
    local run = k:launch { grid = 2, block = 64, smem = 256, args = { a, c, n, 2.0 }, profile = { entries = 20 } }
    -- before the retry the array the kernel writes (c, argument 2) is put back as it was
    assert.same({ { entries = 20, required = 83 },
      { entries = 84, required = 83, restored = { 2 }, restored_bytes = n * 4 } }, run.attempts)
    assert.equal(84, run.entries) -- even: aligned records (one v2 store per event)
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

  it("call profile.reset before the retry, and only then", function()
    local k = dev:load(ptx("tiled.ptx"), { instrument = "warp" }):kernel("tiled_scale")
    local n = 64 * 10
    local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
    local resets = 0
    local run = k:launch { grid = 2, block = 64, smem = 256, args = { a, c, n, 2.0 },
      profile = { entries = 20, reset = function() resets = resets + 1 end } }
    assert.equal(2, #run.attempts)
    assert.equal(1, resets)
    k:launch { grid = 2, block = 64, smem = 256, args = { a, c, n, 2.0 },
      profile = { entries = 83, reset = function() resets = resets + 1 end } }
    assert.equal(1, resets) -- it fitted: no retry, no reset
    local ok, err = pcall(k.launch, k, { grid = 2, block = 64, smem = 256, args = { a, c, n, 2.0 },
      profile = { reset = 5 } })
    assert.is_false(ok)
    assert.equal("bad_argument", err.code)
    assert.equal(232448, dev.max_smem) -- emu: sm_90's opt-in limit
  end)

  it("work on LLVM NVPTX output (clang), with its results exact", function()
    -- tests/ptx/llvm_tiled.ptx: labels without '$', .extern .shared, shfl.sync.down.b32 on f32
    -- registers with an immediate mask, the loop latch before its header
    local path = h.src .. "/tests/ptx/llvm_tiled.ptx"
    local n, alpha = 1000, 2.0
    local a = dev:array("f32", n, { fill = "random", seed = 3, min = -1, max = 1 })
    local av = a:read()
    local function f32(t) return dev:array("f32", t):read() end -- rounds each value to float
    for _, case in ipairs { { false, 64 }, { "warp", 64 }, { "warpgroup", 128 } } do
      local scope, block = case[1], case[2]
      local ntiles, warps = math.ceil(n / block), block / 32
      -- reference: c[i] = tile[(t+1) % block] * alpha + tile index, one rounding (fma);
      -- partial[tile * warps + w] = the warp's shfl.down tree sum, rounded at each add
      local c_ref, p_ref = {}, {}
      for k = 0, ntiles - 1 do
        for t = 0, block - 1 do
          local i, src = k * block + t, k * block + (t + 1) % block
          if i < n then c_ref[i + 1] = (src < n and av[src + 1] or 0) * alpha + k end
        end
      end
      c_ref = f32(c_ref)
      for k = 0, ntiles - 1 do
        for w = 0, warps - 1 do
          local s = {}
          for l = 0, 31 do
            local i = k * block + w * 32 + l
            s[l] = i < n and c_ref[i + 1] or 0
          end
          local off = 16
          while off >= 1 do
            local sum = {}
            for l = 0, 31 - off do sum[l + 1] = s[l] + s[l + off] end
            sum = f32(sum)
            for l = 0, 31 - off do s[l] = sum[l + 1] end
            off = off / 2
          end
          p_ref[k * warps + w + 1] = s[0]
        end
      end
      local k = dev:load(path, scope and { instrument = scope } or nil):kernel("llvm_tiled")
      local c, p = dev:array("f32", n), dev:array("f32", ntiles * warps)
      local run = k:launch { grid = 3, block = block, smem = block * 4, args = { a, c, p, n, alpha },
        profile = scope and { entries = 8 } or nil }
      assert.equal(0, c:compare(dev:array("f32", c_ref), { atol = 0, rtol = 0 }).mismatches)
      assert.equal(0, p:compare(dev:array("f32", p_ref), { atol = 0, rtol = 0 }).mismatches)
      if scope then
        -- block 0 takes tiles 0, 3, 6, ...: ceil(ntiles / 3) tiles x 5 regions x 2 events x 2 words + 3
        local need = 3 + 4 * 5 * math.ceil(ntiles / 3)
        assert.same({ { entries = 8, required = need }, { entries = need + need % 2, required = need, restored = { 2, 3 },
          restored_bytes = (n + ntiles * warps) * 4 } }, run.attempts)
        local dir = h.tmpdir()
        local d = run.trace:dump(dir .. "/t.json")
        local counts = {}
        for _, r in ipairs(d.summary) do counts[r.name] = r.count end
        local per = ntiles * (scope == "warp" and warps or 1)
        assert.same({ tile = per, load = per, compute = per, store = per, reduce = per }, counts)
        h.rmdir(dir)
      end
    end
  end)

  it("record markers inside .funcs, through nested and divergent calls, with exact counts", function()
    -- tests/ptx/func_markers.cu: outer calls inner twice, plain (no markers) calls outer, early
    -- returns early, and lane 0 of the last warp (i = 96 >= n) skips the first call to outer
    local path = h.src .. "/tests/ptx/func_markers.ptx"
    local n = 90
    local function run(scope, kernel, args, block)
      local k = dev:load(path, scope and { instrument = scope } or nil):kernel(kernel)
      local x = dev:array("f32", n, { fill = "random", seed = 5, min = 0.5, max = 2 })
      local y = dev:array("f32", 128)
      local r = k:launch { grid = math.floor(128 / block), block = block, args = args(x, y), profile = scope and { entries = 9 } or nil }
      return y, r
    end
    local args4 = function(x, y) return { x, y, n, 3 } end
    local y0 = run(nil, "func_markers", args4, 64)
    for _, scope in ipairs({ "warp", "warpgroup" }) do
      local block = scope == "warp" and 64 or 128
      local y, r = run(scope, "func_markers", args4, block)
      assert.equal(0, y:compare(y0).mismatches)
      assert.equal(2, #r.attempts) -- 9 entries were too few: retried with what the kernel counted
      local dir = h.tmpdir()
      local d = r.trace:dump(dir .. "/t.json") -- the default dump checks that regions nest across calls
      h.rmdir(dir)
      local counts = {}
      for _, g in ipairs(d.summary) do counts[g.name] = g.count; assert.equal(0, g.truncated) end
      if scope == "warp" then
        -- 4 warps; the last one's writer (i = 96) calls outer twice (through plain), not early
        assert.same({ kernel = 4, loop = 8, outer = 11, inner = 22, early = 3 }, counts)
        -- per trace: kernel, 2 loops, 3 outer, 6 inner, early = 13 regions, 26 events: 3 + 52 entries
        assert.equal(56, r.entries) -- 55, even for aligned records
      else
        -- one warpgroup: thread 0 (i = 0) does everything
        assert.same({ kernel = 1, loop = 2, outer = 3, inner = 6, early = 1 }, counts)
        assert.equal(56, r.entries) -- 55, even for aligned records
      end
    end
    -- a kernel without markers of its own is instrumented for the .funcs it calls
    local y1 = run(nil, "no_own_markers", function(x, y) return { x, y, n } end, 64)
    local y2, r2 = run("warp", "no_own_markers", function(x, y) return { x, y, n } end, 64)
    assert.equal(0, y2:compare(y1).mismatches)
    local counts = {}
    local rows, timeline, info = r2.trace:summary()
    for _, g in ipairs(rows) do counts[g.name] = g.count end
    assert.same({ outer = 3, inner = 6 }, counts) -- the last warp's writer (i = 96) does not call
    -- the third value says what the numbers are: virtual ns, converted with the clock the
    -- instrumented kernel measured against emu's globaltimer (its model's clock)
    assert.equal("ns", info.unit)
    assert.equal("measured", info.clock_source)
    assert.near(dev.clock_ghz, info.clock_ghz, dev.clock_ghz * 0.01)
    assert.is_true(info.virtual_time)
    assert.equal(timeline.span, info.timeline.span)
    -- the added code reads no register before writing it, in any lane (emu's strict mode)
    dev = mgpu.device("emu", { strict = true })
    for _, scope in ipairs({ "warp", "warpgroup" }) do run(scope, "func_markers", args4, 128) end
  end)

  it("keep function pointers, wide calls and cluster registers for the GPU; emu refuses the first two by name", function()
    -- tests/ptx/fptr.cu: the module instruments (the indirect call to a .func with markers gets
    -- the count's store and reload around it) and passes ptxas (tests/ptxas_check.sh)
    local path = h.src .. "/tests/ptx/fptr.ptx"
    local emu = mgpu.device("emu")
    for _, opts in ipairs({ {}, { instrument = "warp" } }) do
      local m = emu:load(path, opts)
      local cases = {
        fptr = "takes the address of function _Z6%a%a%a_opff: function pointers are not supported by emu",
        wide_call = "call to _Z4wideffffffff with more than 6 parameters and returns: not supported by emu",
      }
      -- the cluster registers run on emu: clusters of 2 from launch{cluster=}
      local ranks = emu:array("u32", 4 * 32)
      m:kernel("cluster_rank"):launch { grid = 4, block = 32, cluster = 2, args = { ranks } }
      local rv = ranks:read()
      assert.same({ 0, 0, 1, 1, 0, 1 }, { rv[1], rv[32], rv[33], rv[64], rv[65], rv[128] })
      for name, msg in pairs(cases) do
        local ok, err = pcall(m.kernel, m, name)
        assert.is_false(ok, name)
        assert.equal("ptx_unsupported", err.code)
        assert.matches("fptr%.ptx:%d+: [^\n]*" .. msg, err.message)
      end
      local x = emu:array("f32", 32, { fill = "ramp" })
      local r = m:kernel("plain_kernel"):launch { grid = 1, block = 32, args = { x },
        profile = opts.instrument and { entries = 7 } or nil }
      assert.equal(1, x:read(1))
      if opts.instrument then assert.equal(1, r.trace:summary()[1].count) end
    end
  end)

  it("take kernels built on CUDA's libraries (libcu++ barriers and pipelines, cooperative groups, WMMA)", function()
    local path = h.src .. "/tests/ptx/cccl.ptx"
    local emu = mgpu.device("emu")
    local m = emu:load(path, { instrument = "warp" })
    -- WMMA (wmma.load / mma / store, issue 23): c = a (16 x 64, row-major) * b (64 x 16, column-major)
    local a = emu:array("f16", 16 * 64, { fill = "random", seed = 5, min = -1, max = 1 })
    local b = emu:array("f16", 16 * 64, { fill = "random", seed = 6, min = -1, max = 1 })
    local c = emu:array("f32", 256)
    local wr = m:kernel("wmma_gemm"):launch { grid = 1, block = 32, args = { a, b, c }, profile = { entries = 11 } }
    local av, bv, cv = a:read(), b:read(), c:read()
    for i = 0, 15 do
      for j = 0, 15 do
        local s = 0
        for k = 0, 63 do s = s + av[i * 64 + k + 1] * bv[j * 64 + k + 1] end
        assert.near(s, cv[i * 16 + j + 1], 1e-4)
      end
    end
    assert.equal(4, wr.trace:summary()[1].count) -- one warp, 4 k-steps
    -- cuda::pipeline with memcpy_async (cp.async underneath): out = in + 1, two stages per tile
    local n = 128 * 4
    local x = emu:array("f32", n, { fill = "random", seed = 3, min = -1, max = 1 })
    local y = emu:array("f32", n)
    local run = m:kernel("pipelined"):launch { grid = 1, block = 128, args = { x, y, n }, profile = { entries = 11 } }
    local xv, yv = x:read(), y:read()
    for i = 1, n do assert.near(xv[i] + 1, yv[i], 1e-6) end -- in f32
    assert.equal(16, run.trace:summary()[1].count) -- 4 warps x 4 tiles
    -- cuda::barrier (mbarrier arrive / try_wait, cp.async.mbarrier.arrive) between two stages:
    -- out[t * 256 + i] = in[t * 256 + (i + 1) % 256] * 2, every warp loading and computing
    n = 256 * 6
    x = emu:array("f32", n, { fill = "random", seed = 7, min = -1, max = 1 })
    y = emu:array("f32", n)
    run = m:kernel("producer_consumer"):launch { grid = 1, block = 256, args = { x, y, n }, profile = { entries = 51 } }
    xv, yv = x:read(), y:read()
    for t = 0, 5 do
      for i = 0, 255 do assert.equal(xv[t * 256 + (i + 1) % 256 + 1] * 2, yv[t * 256 + i + 1]) end
    end
    local counts = {}
    for _, g in ipairs(run.trace:summary()) do counts[g.name] = g.count end
    assert.same({ load = 48, compute = 48 }, counts) -- 8 warps x 6 tiles
  end)

  it("take Hopper-only kernels (clusters, TMA through a __grid_constant__ descriptor, setmaxnreg)", function()
    local emu = mgpu.device("emu")
    local m = emu:load(h.src .. "/tests/ptx/hopper.ptx", { instrument = "warpgroup" })
    local k = {}
    for _, name in ipairs(m:kernels()) do k[name] = true end
    assert.same({ clustered = true, tma_like = true }, k)
    local refused = {}
    -- the cluster of 2 (.reqnctapercluster) swaps its blocks' rows through distributed shared memory
    local x = emu:array("f32", 4 * 128, { fill = "ramp" })
    local cr = m:kernel("clustered"):launch { grid = 4, block = 128, args = { x }, profile = { entries = 9 } }
    local xv, wrong = x:read(), 0
    for b = 0, 3 do
      local peer = b - b % 2 + (b + 1) % 2
      for t = 0, 127 do
        if xv[b * 128 + t + 1] ~= peer * 128 + t then wrong = wrong + 1 end
      end
    end
    assert.equal(0, wrong)
    local cc = {}
    for _, r in ipairs(cr.trace:summary()) do cc[r.name] = r.count end
    assert.same({ ["local"] = 4, remote = 4 }, cc)
    -- TMA through a __grid_constant__ map (emu's encoding), as scripts/device/check.lua runs it on a GPU:
    -- the producer copies a 16 x 4 box of an 8 x 32 f32 tensor, the two consumer warpgroups write it out
    local rows, cols = 8, 32
    local a = emu:array("f32", rows * cols, { fill = "ramp", shape = { rows, cols } })
    local out = emu:array("f32", 384)
    local run = m:kernel("tma_like"):launch { grid = 1, block = 384, args = { emu:tensor_map(a, { box = { 16, 4 } }), out },
      profile = { entries = 9 } }
    local v, bad = out:read(), 0
    for t = 128, 383 do
      local i = (t - 128) % 64
      if v[t + 1] ~= math.floor(i / 16) * cols + i % 16 then bad = bad + 1 end
    end
    assert.equal(0, bad)
    local counts = {}
    for _, r in ipairs(run.trace:summary()) do counts[r.name] = r.count end
    assert.same({ producer = 1, consumer = 2 }, counts)
    for name, msg in pairs(refused) do
      local ok, err = pcall(m.kernel, m, name)
      assert.is_false(ok, name)
      assert.matches("hopper%.ptx:%d+: [^\n]*" .. msg, err.message)
    end
  end)

  it("work on nvcc -G output (debug): declarations before module variables, calls, DWARF sections", function()
    -- tests/ptx/tiled_debug.ptx: ptx/tiled.cu built with `nvcc -ptx -arch=sm_90 -G` (.target sm_90, debug;
    -- `.func fmaf` declared before the .extern .shared array and defined after the kernels)
    local n = 128 * 10
    local a = dev:array("f32", n, { fill = "random", seed = 3, min = -1, max = 1 })
    local ref = dev:array("f32", n)
    dev:load(ptx("tiled.ptx")):kernel("tiled_scale_work"):launch { grid = 3, block = 128, smem = 512,
      args = { a, ref, n, 0.5, 7 } }
    for _, scope in ipairs { false, "warp", "warpgroup" } do
      local c = dev:array("f32", n)
      local k = dev:load(h.src .. "/tests/ptx/tiled_debug.ptx", scope and { instrument = scope } or nil)
        :kernel("tiled_scale_work")
      local run = k:launch { grid = 3, block = 128, smem = 512, args = { a, c, n, 0.5, 7 },
        profile = scope and { entries = 8 } or nil }
      assert.equal(0, c:compare(ref, { atol = 0, rtol = 0 }).mismatches)
      if scope then
        -- block 0 takes tiles 0, 3, 6, 9: 4 tiles x 4 regions x 2 events x 2 words + 3
        assert.equal(3 + 4 * 4 * 2 * 2 + 1, run.entries) -- made even: aligned records
      end
    end
  end)

  it("take any PTX nvcc emits; emu runs what it can and names the rest", function()
    -- tests/ptx/features.cu: printf, assert, redux/match, cooperative groups, CAS, clock64,
    -- nanosleep, half, WMMA; instructions the front end does not decode are kept as text
    local path = h.src .. "/tests/ptx/features.ptx"
    local refused = {} -- k_wmma runs since issue 23 (checked below)
    for _, scope in ipairs { false, "warp", "warpgroup" } do
      local m = dev:load(path, scope and { instrument = scope } or nil)
      assert.equal(7, #m:kernels())
      for name, why in pairs(refused) do
        local ok, err = pcall(m.kernel, m, name)
        assert.is_false(ok, name)
        assert.equal("ptx_unsupported", err.code)
        assert.matches(why, err.message)
      end
      local prof = scope and { entries = 64 } or nil
      -- printf (thread 0 prints x[0]) and assert (x[threadIdx.x] >= 0): emu runs both
      local xs = dev:array("i32", { 7, 1, -2, 3 })
      local pr = m:kernel("k_printf"):launch { grid = 1, block = 4, args = { xs }, profile = prof, printf = false }
      assert.same({ "x=7" }, pr.printf)
      local ok, err = pcall(m:kernel("k_assert").launch, m:kernel("k_assert"), { grid = 1, block = 4, args = { xs },
        profile = prof })
      assert.is_false(ok)
      assert.equal("kernel_fault", err.code)
      assert.matches("assertion `x%[threadIdx%.x%] >= 0` failed at .*features%.cu:%d+ in .*k_assert.*thread %(2,0,0%)",
        err.message)
      -- redux.sync add, and match.any.sync: the lanes whose x & 3 equals this one's
      local xr, out = dev:array("u32", 128, { fill = "ramp", start = 5 }), dev:array("u32", 129)
      m:kernel("k_redux"):launch { grid = 1, block = 128, args = { xr, out }, profile = prof }
      local o = out:read()
      assert.equal(32 * 5 + 31 * 32 / 2, o[1]) -- warp 0's sum
      local same = { 0, 0, 0, 0 } -- masks of the lanes with (lane + 5) % 4 == r, the same in every warp
      for l = 0, 31 do local r = (l + 5) % 4 + 1; same[r] = same[r] + 2 ^ l end
      for t = 0, 127 do assert.equal(same[(t + 5) % 4 + 1], o[t + 2], "thread " .. t) end
      local c, t = dev:array("i32", { 0, -1 }), dev:array("u64", 128)
      m:kernel("k_atomics"):launch { grid = 1, block = 128, args = { c, t }, profile = prof }
      assert.same({ 128, 127 }, c:read()) -- every thread's CAS went in once; the largest thread index
      local x, s = dev:array("f32", 128, { fill = "ramp" }), dev:array("f32", 8)
      m:kernel("k_cg"):launch { grid = 1, block = 128, args = { x, s }, profile = prof }
      for g = 0, 7 do assert.equal(16 * 16 * g + 120, s:read(g + 1)) end -- sum of 16 g .. 16 g + 15
      local a, b = dev:array("f16", 128, { fill = "ramp", step = 0.25 }), dev:array("f16", 128)
      m:kernel("k_half"):launch { grid = 1, block = 128, args = { a, b }, profile = prof }
      assert.equal(1 + 0.25 * 0.25, b:read(2))
      assert.equal(1 + 3 * 3, b:read(13))
      -- WMMA: c = a (16 x 16 row-major) * b (column-major), f32
      local wa = dev:array("f16", 256, { fill = "random", seed = 2, min = -1, max = 1 })
      local wb = dev:array("f16", 256, { fill = "random", seed = 4, min = -1, max = 1 })
      local wc = dev:array("f32", 256)
      m:kernel("k_wmma"):launch { grid = 1, block = 32, args = { wa, wb, wc }, profile = prof }
      local av, bv, cv = wa:read(), wb:read(), wc:read()
      for i = 0, 15 do
        for j = 0, 15 do
          local sum = 0
          for k = 0, 15 do sum = sum + av[i * 16 + k + 1] * bv[j * 16 + k + 1] end
          assert.near(sum, cv[i * 16 + j + 1], 1e-5)
        end
      end
    end
  end)

  it("work on Triton-style LLVM output", function()
    -- tests/ptx/triton_style.ptx (hand-written in the shapes LLVM gives Triton kernels: .ptr .global
    -- .align params, ld.param.b64, { %r1, ... } and [ %rd1 + 0 ] with spaces, f32 adds on .b32
    -- registers, .reqntid, DWARF sections after the body), markers added by hand
    local n = 1000
    local x = dev:array("f32", n, { fill = "random", seed = 1, min = -1, max = 1 })
    local y = dev:array("f32", n, { fill = "random", seed = 2, min = -1, max = 1 })
    local want = {}
    local xv, yv = x:read(), y:read()
    for i = 1, n do want[i] = xv[i] + yv[i] end
    want = dev:array("f32", want)
    for _, scope in ipairs { false, "warp", "warpgroup" } do
      local k = dev:load(h.src .. "/tests/ptx/triton_style.ptx", scope and { instrument = scope } or nil):kernel("vec_add")
      local p = k:params()
      assert.is_true(p[1].ptr and p[2].ptr and p[3].ptr and not p[4].ptr)
      local z = dev:array("f32", n)
      local run = k:launch { grid = 2, block = 128, args = { x, y, z, n }, profile = scope and { entries = 8 } or nil }
      assert.equal(0, z:compare(want, { atol = 0, rtol = 0 }).mismatches)
      if scope then assert.equal(3 + 2 * 2 * 2 + 1, run.entries) end -- load, add: a begin and an end each; even
      local ok, err = pcall(k.launch, k, { grid = 2, block = 256, args = { x, y, z, n } })
      assert.matches("block 256x1x1, but the kernel requires 128x1x1 %(%.reqntid%)", err.message)
    end
  end)

  it("report faults at the line of the user's file, not of the rewritten text", function()
    local src = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
      .. ".reg .b64 %rd<3>;\n.reg .b32 %r<2>;\nld.param.u64 %rd1, [p];\n// @mgpu begin work\nmov.u32 %r1, 7;\n"
      .. "// @mgpu end work\n// @mgpu begin bad\nst.global.u32 [%rd1+4096], %r1;\n// @mgpu end bad\nret;\n}\n"
    local x = dev:array("u32", 4)
    for _, inst in ipairs { "none", "warp", "warpgroup" } do
      local m = dev:load { name = "f.ptx", source = src, instrument = inst ~= "none" and inst or nil }
      local k = m:kernel("k")
      local ok, err = pcall(k.launch, k, { grid = 1, block = 128, args = { x } })
      assert.is_false(ok)
      assert.equal("kernel_fault", err.code, inst)
      assert.equal(13, err.line, inst)
      assert.matches("^f%.ptx:13: k: out%-of%-range global write", err.message)
    end
  end)

  it("take their options in a third argument after a {source=} table too", function()
    local m = dev:load({ name = "mini.ptx", source = h.read(h.src .. "/tests/golden/mini.ptx") }, { instrument = "warp" })
    local x = dev:array("u32", 64)
    local run = m:kernel("mini"):launch { grid = 1, block = 64, args = { x, 64 } }
    assert.is_not_nil(run.trace)
  end)

  it("save their trace to files the CLI dumps later, to the same bytes", function()
    local k = dev:load(ptx("tiled.ptx"), { instrument = "warp" }):kernel("tiled_scale")
    local n = 64 * 10
    local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
    local run = k:launch { grid = 2, block = 64, smem = 256, args = { a, c, n, 2.0 }, profile = { entries = 83 } }
    local dir = h.tmpdir()
    local d = run.trace:dump(dir .. "/direct.json")
    local files = run.trace:save(dir .. "/t")
    assert.same({ buffer = dir .. "/t.bin", meta = dir .. "/t.meta.json", calib = dir .. "/t.calib.bin" }, files)
    local st, _, err = h.run("dump", files.buffer, "--meta", files.meta, "--calib", files.calib, "-o", dir .. "/cli.json")
    assert.equal(0, st, err)
    assert.equal(h.read(dir .. "/direct.json"), h.read(dir .. "/cli.json"))
    local r = mgpu.dump { buffer = files.buffer, meta = files.meta, calib = files.calib, out = dir .. "/lua.json" }
    assert.equal("measured", r.clock_source)
    assert.equal(d.clock_ghz, r.clock_ghz)
    -- calibration words of another launch shape, or with Mosaic's convention: refused
    h.write(dir .. "/short.bin", string.rep("\0", 16 * 3))
    st, _, err = h.run("dump", files.buffer, "--meta", files.meta, "--calib", dir .. "/short.bin")
    assert.equal(3, st)
    assert.matches("short%.bin: fewer bytes of calibration words; 4 traces need 64 %(4 uint32 each%)", err)
    st, _, err = h.run("dump", files.buffer, "--meta", files.meta, "--calib", files.calib, "--compat", "mosaic")
    assert.equal(2, st)
    assert.matches("calibration words are for the default mode", err)
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
    assert.matches("16 markers in 2 kernels, 4 region names", err)
    assert.equal('{"tile": 0, "load": 1, "compute": 2, "store": 3}\n', h.read(dir .. "/n.json"))
    st, _, err = h.run("instrument", h.src .. "/tests/ptx/llvm_tiled.ptx", "-o", dir .. "/l.ptx")
    assert.equal(0, st, err)
    assert.matches("10 markers in 1 kernel, 5 region names", err)
    st, _, err = h.run("instrument", h.src .. "/tests/ptx/func_markers.ptx", "-o", dir .. "/f.ptx")
    assert.equal(0, st)
    assert.matches("13 markers in 2 kernels and 3 device functions, 5 region names", err)
    h.rmdir(dir)
  end)
end)
