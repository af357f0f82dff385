-- check.lua: the GPU device check (run by scripts/device-check.sh on a machine
-- with an NVIDIA GPU).  For every kernel of ptx/ and the Mosaic GPU fixture it
-- runs the same launch on cuda and on emu and compares the outputs; it checks
-- that the Mosaic kernel's trace dumps with Init/load/store, that a faulting
-- kernel (in a child process: the driver says a process must be relaunched
-- after it) is a kernel_fault and the next launch runs, and that instrumented
-- kernels give the same outputs with exact counts; the instruction-semantics
-- kernels of tests/ptx/ must give the same bits on both; blocks that wait on other
-- blocks (chained and look-back scans, a persistent queue) and a cooperative
-- grid.sync() give emu's results, and a cooperative grid too large to be resident
-- is refused; on Hopper (and emu), TMA loads/stores/reductions, mbarrier and cluster
-- forms, distributed shared memory, bulk reductions, the warp-specialised GEMMs, wgmma
-- (every type, every dense N, the descriptor's base offset), the dynamic shared array's offset
-- beside a static and a TMA tile in it read by wgmma, and the mma.sync / WMMA
-- GEMMs (within a tolerance where the accumulation order may differ); real kernels
-- of the corpus (tests/corpus: GEMMs of fast.cu, cuda-samples, CUTLASS and
-- ThunderKittens' attention) against their host references.  Prints a markdown table.
--   mgpu-harness scripts/device/check.lua [OUT_DIR] [BACKEND]
-- BACKEND (default cuda) = emu runs the script against itself: a check of
-- the script, every row must read ok there.
local mgpu = require "mgpu"

local here = (arg and arg[0] or ""):match("^(.*)/scripts/device/[^/]*$") or "."
local out_dir = arg[1] or "results/device-check"
os.execute("mkdir -p '" .. out_dir .. "'")

local gpu = mgpu.device(arg[2] or "cuda")
local rows, failed = {}, 0
local function row(name, ok, detail)
  if not ok then failed = failed + 1 end
  rows[#rows + 1] = string.format("| %s | %s | %s |", name, ok and "ok" or "FAIL", detail or "")
  io.stderr:write(string.format("%-28s %s %s\n", name, ok and "ok  " or "FAIL", detail or ""))
end

-- The same launch on the device and on emu: fn(dev) returns the output arrays
-- (and optionally run = its launch result, tol = a relative tolerance). Without
-- tol every value must have the same bits (NaN equals NaN): the kernels in
-- tests/ptx/ use only correctly rounded operations.
local function against_emu(name, fn)
  local ok, err = pcall(function()
    local a, b = fn(gpu), fn(mgpu.device("emu"))
    local diff, total, first = 0, 0, nil
    for k, arr in ipairs(a) do
      local u, v = arr:read(), b[k]:read()
      for i = 1, #u do
        total = total + 1
        local differ
        if a.tol then differ = math.abs(u[i] - v[i]) > a.tol * math.max(1, math.abs(v[i]))
        else differ = u[i] ~= v[i] and (u[i] == u[i] or v[i] == v[i]) end
        if differ then
          diff = diff + 1
          first = first or string.format("output %d [%d]: %s %.17g, emu %.17g", k, i - 1, gpu.backend, u[i], v[i])
        end
      end
    end
    row(name, diff == 0, string.format("%d of %d values differ from emu%s%s", diff, total,
      first and ("; first " .. first) or "", a.run and string.format("; %s %.1f us", gpu.backend, a.run.time_ns / 1e3) or ""))
  end)
  if not ok then row(name, false, tostring(err)) end
end

local function values(n, f)
  local t = {}
  for i = 0, n - 1 do t[#t + 1] = f(i) end
  return t
end

against_emu("tests/ptx/opzoo.ptx", function(dev)
  local n = 128
  local ai = dev:array("i32", values(n, function(i) return (i * 7919) % 2001 - 1000 end))
  local bi = dev:array("i32", values(n, function(i) return (i * 104729) % 61 - 30 end))
  local af = dev:array("f32", n, { fill = "random", seed = 11, min = -50, max = 50 })
  local bf = dev:array("f32", n, { fill = "random", seed = 12, min = 0.25, max = 8 })
  local out, count, sum = dev:array("u32", n * 48), dev:array("i32", 1), dev:array("f32", 1)
  dev:load(here .. "/tests/ptx/opzoo.ptx"):kernel("opzoo"):launch { grid = 2, block = 64, args = { ai, bi, af, bf, out, count, sum } }
  return { out, count } -- sum: float atomics, order-dependent
end)

against_emu("tests/ptx/rounding.ptx", function(dev)
  local T = 32
  local a = dev:array("f32", T, { fill = "random", seed = 21, min = -9, max = 9 })
  local b = dev:array("f32", T, { fill = "random", seed = 22, min = 0.1, max = 7 })
  local c = dev:array("f32", T, { fill = "random", seed = 23, min = -30, max = 30 })
  local x = dev:array("f64", T, { fill = "random", seed = 24, min = -9, max = 9 })
  local y = dev:array("f64", T, { fill = "random", seed = 25, min = 0.1, max = 7 })
  local z = dev:array("f64", T, { fill = "random", seed = 26, min = -30, max = 30 })
  local n = dev:array("i64", values(T, function(i) return (i % 2 == 1 and -1 or 1) * ((1 << 50) + i * 1234567891 + 1) end))
  local fo, dout = dev:array("f32", T * 24), dev:array("f64", T * 18)
  dev:load(here .. "/tests/ptx/rounding.ptx"):kernel("rounding"):launch { grid = 1, block = T, args = { a, b, c, fo, x, y, z, dout, n } }
  return { fo, dout }
end)

against_emu("tests/ptx/half2.ptx", function(dev)
  local T = 32
  local a = dev:array("f16", 2 * T, { fill = "random", seed = 31, min = -6, max = 6 })
  local b = dev:array("f16", 2 * T, { fill = "random", seed = 32, min = -3, max = 3 })
  local c = dev:array("bf16", 2 * T, { fill = "random", seed = 33, min = -20, max = 20 })
  local d = dev:array("bf16", 2 * T, { fill = "random", seed = 34, min = 0.5, max = 2 })
  local f = dev:array("f32", 2 * T, { fill = "random", seed = 35, min = -7, max = 7 })
  local o, p, q = dev:array("f16", 8 * T), dev:array("bf16", 4 * T), dev:array("f16", 2 * T)
  local m = dev:load(here .. "/tests/ptx/half2.ptx")
  m:kernel("h2ops"):launch { grid = 1, block = T, args = { a, b, o, c, d, p, f, q } }
  -- setp on packed halves: which predicate gets which half (emu: p the low halves), NaNs, .ftz
  local bits = { 0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x3555, 0x4248,
    0x3f80, 0xbf80, 0x7fc0, 0x0080 }
  local ca, cb = {}, {}
  for i = 0, 2 * T - 1 do
    ca[i + 1] = bits[i % 16 + 1] + bits[(i * 7 + 3) % 16 + 1] * 65536
    cb[i + 1] = bits[(i * 5 + 1) % 16 + 1] + bits[(i * 3) % 16 + 1] * 65536
  end
  local co, so = dev:array("u32", 2 * T * 5), dev:array("u32", 2 * T * 5)
  local aa, bb = dev:array("u32", ca), dev:array("u32", cb)
  m:kernel("h2cmp"):launch { grid = 1, block = 2 * T, args = { aa, bb, co } }
  m:kernel("h2set"):launch { grid = 1, block = 2 * T, args = { aa, bb, so } } -- set: 0xFFFF or 1.0 per half
  return { o, p, q, co, so }
end)

against_emu("tests/ptx/cp_async.ptx", function(dev)
  local n = 5
  local x = dev:array("f32", n * 128 * 4, { fill = "random", seed = 51, min = -3, max = 3 })
  local y = dev:array("f32", n * 128 * 4)
  local sc, so = dev:array("f32", 128, { fill = "ramp", start = 0.25 }), dev:array("f32", 128)
  dev:load(here .. "/tests/ptx/cp_async.ptx"):kernel("stage"):launch { grid = 1, block = 128, args = { x, y, sc, so, n } }
  return { y, so }
end)

against_emu("tests/ptx/calls.ptx + local.ptx", function(dev)
  local x = dev:array("f32", 96, { fill = "random", seed = 41, min = -5, max = 5 })
  local y, z, cnt = dev:array("f32", 96), dev:array("i32", 96), dev:array("u32", 1)
  dev:load(here .. "/tests/ptx/calls.ptx"):kernel("calls"):launch { grid = 3, block = 32, args = { x, y, z, cnt } }
  local hin = dev:array("u32", values(1000, function(i) return (i * 2654435761) % 4294967296 end))
  local hout = dev:array("u32", 64)
  dev:load(here .. "/tests/ptx/local.ptx"):kernel("local_hist"):launch { grid = 2, block = 32, args = { hin, hout, 1000 } }
  return { y, z, cnt, hout }
end)

against_emu("tests/ptx/llvm_tiled.ptx (clang)", function(dev)
  local n = 1000
  local a = dev:array("f32", n, { fill = "random", seed = 3, min = -1, max = 1 })
  local c, p = dev:array("f32", n), dev:array("f32", 32)
  dev:load(here .. "/tests/ptx/llvm_tiled.ptx"):kernel("llvm_tiled"):launch { grid = 3, block = 64, smem = 256, args = { a, c, p, n, 2.0 } }
  return { c, p }
end)

against_emu("tests/ptx/struct_param.ptx (struct by value)", function(dev)
  local n = 300
  local a = dev:array("f32", n, { fill = "random", seed = 1, min = -1, max = 1 })
  local c = dev:array("f32", n)
  local p = mgpu.struct { { "f32", 0.5 }, { "i32", 3 }, { "u32", n }, { "f32", { 1, 2, 4 } } }
  dev:load(here .. "/tests/ptx/struct_param.ptx"):kernel("_Z10tile_shiftILi64EEvPKfPf6Params")
    :launch { grid = 5, block = 64, args = { a, c, p } }
  return { c }
end)

against_emu("tests/ptx/warp_reduce.ptx (redux, match)", function(dev)
  local x = dev:array("u32", 256, { fill = "random", seed = 5, min = 0, max = 4294967295 })
  local out = dev:array("u32", 8 * 12)
  dev:load(here .. "/tests/ptx/warp_reduce.ptx"):kernel("warp_reduce"):launch { grid = 2, block = 128, args = { x, out } }
  return { out }
end)

against_emu("copy.ptx", function(dev)
  local n = 1 << 20
  local x = dev:array("f32", n, { fill = "random", seed = 1, min = -1, max = 1 })
  local y = dev:array("f32", n)
  local run = dev:load(here .. "/ptx/copy.ptx"):kernel("copy_f32x4"):launch { grid = 264, block = 256, args = { x, y, n // 4 } }
  return { y, run = run }
end)

against_emu("reduce.ptx", function(dev)
  local n = 1 << 16
  local x = dev:array("f32", n, { fill = "random", seed = 2, min = 0, max = 1 })
  local p = dev:array("f32", 132)
  local run = dev:load(here .. "/ptx/reduce.ptx"):kernel("reduce_sum_f32"):launch { grid = 132, block = 256, smem = 1024, args = { x, p, n } }
  return { p, run = run, tol = 1e-5 }
end)

against_emu("tiled.ptx", function(dev)
  local n = 128 * 64
  local a = dev:array("f32", n, { fill = "random", seed = 3, min = -1, max = 1 })
  local c = dev:array("f32", n)
  local run = dev:load(here .. "/ptx/tiled.ptx"):kernel("tiled_scale"):launch { grid = 16, block = 128, smem = 512, args = { a, c, n, 0.5 } }
  return { c, run = run }
end)

against_emu("alu_loop.ptx", function(dev)
  local o = dev:array("f32", 132 * 256)
  local run = dev:load(here .. "/ptx/alu_loop.ptx"):kernel("alu_loop"):launch { grid = 132, block = 256, args = { o, 1000 } }
  return { o, run = run }
end)

do
  local ok, err = pcall(function()
    local k = gpu:load(here .. "/tests/fixtures/mosaic-h200/copy_bounds_wg.ptx"):kernel("body_mosaic_gpu_kernel")
    local x = gpu:array("bf16", 128 * 128, { fill = "random", seed = 4, min = -8, max = 8 })
    local y = gpu:array("bf16", 128 * 128)
    local run = k:launch { grid = 8, block = 128, smem = 128, args = { x, y, mgpu.TRACE },
      profile = { scope = "warpgroup", entries = 32, names = { "Init", "load", "store" } } }
    run.trace:save(out_dir .. "/mosaic") -- the raw buffer and meta, to dump again later
    local d = run.trace:dump(out_dir .. "/mosaic.trace.json")
    local names = {}
    for _, r in ipairs(d.summary) do names[#names + 1] = string.format("%s %d (mean %.0f %s)", r.name, r.count, r.mean, d.unit) end
    local jit = k:info().jit_target -- on cuda: compute_90a (explicit) or context
    row("Mosaic copy_bounds_wg.ptx", y:compare(x).mismatches == 0,
      table.concat(names, ", ") .. (jit and ("; JIT for " .. jit) or ""))
  end)
  if not ok then row("Mosaic copy_bounds_wg.ptx", false, tostring(err)) end
end

-- mbarriers (tests/ptx/mbarrier.cu): counted arrivals, transaction bytes, waits by parity and
-- by state, a consumer warp spinning on a producer warp: the same values on both
against_emu("tests/ptx/mbarrier.ptx", function(dev)
  local out = dev:array("u32", 128)
  dev:load(here .. "/tests/ptx/mbarrier.ptx"):kernel("mbar_phases"):launch { grid = 1, block = 64, args = { out } }
  return { out }
end)

-- named barriers with thread counts (tests/ptx/named_barrier.cu): producer and consumer warps
-- hand a buffer through bar.sync/bar.arrive while a third warp works apart
against_emu("tests/ptx/named_barrier.ptx", function(dev)
  local x = dev:array("u32", 5 * 32, { fill = "ramp" })
  local out = dev:array("u32", 6 * 32)
  dev:load(here .. "/tests/ptx/named_barrier.ptx"):kernel("named_barriers"):launch { grid = 1, block = 96,
    args = { x, out, 5 } }
  return { out }
end)

-- blocks that wait on blocks (tests/ptx/grid.cu, issue 21): a scan chained by blockIdx over ten
-- waves, a decoupled look-back scan, a persistent queue (its per-block counts are what timing
-- decides: not compared), and cg::this_grid().sync() under a cooperative launch
local function grid_kernel(dev, name)
  return dev:load(here .. "/tests/ptx/grid.ptx"):kernel(name)
end
against_emu("tests/ptx/grid.ptx chained_scan (1320 blocks)", function(dev)
  local g, b = 1320, 256
  local x = dev:array("i32", g * b, { fill = "random", seed = 5, min = -6, max = 6 })
  local prefix, ready = dev:array("i32", g), dev:array("u32", g)
  grid_kernel(dev, "chained_scan"):launch { grid = g, block = b, args = { x, prefix, ready } }
  return { prefix }
end)
against_emu("tests/ptx/grid.ptx lookback_scan (1320 blocks)", function(dev)
  local g, b = 1320, 256
  local x = dev:array("i32", g * b, { fill = "random", seed = 6, min = -8, max = 8 })
  local out, state = dev:array("i32", g * b), dev:array("u64", g)
  grid_kernel(dev, "lookback_scan"):launch { grid = g, block = b, args = { x, out, state } }
  return { out }
end)
against_emu("tests/ptx/grid.ptx persistent_queue", function(dev)
  local n = 5000
  local x = dev:array("i32", n, { fill = "random", seed = 7, min = -4, max = 4 })
  local out, ready, ticket, taken = dev:array("i32", n), dev:array("u32", n), dev:array("u32", 1), dev:array("u32", 264)
  grid_kernel(dev, "persistent_queue"):launch { grid = 264, block = 128, args = { x, out, ready, ticket, n, taken } }
  return { out }
end)
against_emu("tests/ptx/grid.ptx grid_normalise (cooperative)", function(dev)
  local g, b = 264, 256
  local x = dev:array("f32", g * b, { fill = "random", seed = 8, min = 0, max = 1 })
  local partial, total = dev:array("f32", g), dev:array("f32", 1)
  local run = grid_kernel(dev, "grid_normalise"):launch { grid = g, block = b, cooperative = true,
    args = { x, partial, total, g * b } }
  return { x, total, run = run }
end)
do -- a cooperative grid that cannot be resident at once: refused before it runs, on both
  local ok, err = pcall(function()
    grid_kernel(gpu, "grid_normalise"):launch { grid = 1000000, block = 1024, cooperative = true,
      args = { gpu:array("f32", 1), gpu:array("f32", 1), gpu:array("f32", 1), 0 } }
  end)
  row("cooperative grid too large", not ok and type(err) == "table" and err.code == "bad_argument",
    ok and "it ran" or tostring(type(err) == "table" and err.message or err))
end

-- a CUDA C module: nvcc on this machine compiles ptx/copy.cu for the device (dev.arch)
if require("mgpu.nvcc").find() then
  against_emu("ptx/copy.cu (nvcc here, " .. gpu.arch .. ")", function(dev)
    local n = 4096
    local x = dev:array("f32", n, { fill = "random", seed = 31, min = -1, max = 1 })
    local y = dev:array("f32", n)
    dev:load(here .. "/ptx/copy.cu"):kernel("copy_f32x4"):launch { grid = 4, block = 256, args = { x, y, n // 4 } }
    return { y }
  end)
end

do
  local ok, err = pcall(function()
    local n = 64 * 40
    local k = gpu:load(here .. "/ptx/tiled.ptx", { instrument = "warp" }):kernel("tiled_scale")
    local a = gpu:array("f32", n, { fill = "ramp" })
    local c = gpu:array("f32", n)
    local run = k:launch { grid = 2, block = 64, smem = 256, args = { a, c, n, 1.0 }, profile = { entries = 20 } }
    local d = run.trace:dump(out_dir .. "/tiled.instrumented.trace.json")
    local counts = {}
    for _, r in ipairs(d.summary) do counts[#counts + 1] = r.name .. " " .. r.count end
    -- 40 tiles over 2 blocks: 20 per warp, 8 events each -> 3 + 320 entries; 4 warps x 20 regions each
    local exact = run.entries == 324 -- 323 needed, even for aligned records
    for _, r in ipairs(d.summary) do exact = exact and r.count == 80 end
    row("instrumented tiled.ptx", exact,
      string.format("attempts %d -> entries %d (expected 324: 323, even); %s", #run.attempts, run.entries, table.concat(counts, ", ")))
  end)
  if not ok then row("instrumented tiled.ptx", false, tostring(err)) end
end

-- markers inside .funcs (tests/ptx/func_markers.cu): the count goes through the trace's header
-- word around calls and the buffer through module variables; the GPU must count what emu counts
do
  local ok, err = pcall(function()
    local function counts(dev)
      local k = dev:load(here .. "/tests/ptx/func_markers.ptx", { instrument = "warp" }):kernel("func_markers")
      local x = dev:array("f32", 90, { fill = "random", seed = 5, min = 0.5, max = 2 })
      local y = dev:array("f32", 128)
      local run = k:launch { grid = 2, block = 64, args = { x, y, 90, 3 }, profile = { entries = 9 } }
      local c = {}
      for _, r in ipairs(run.trace:summary()) do c[#c + 1] = r.name .. " " .. r.count end
      return table.concat(c, ", "), y:read(), run.entries
    end
    local cg, yg, eg = counts(gpu)
    local ce, ye, ee = counts(mgpu.device("emu"))
    local diff = 0
    for i = 1, #ye do if yg[i] ~= ye[i] then diff = diff + 1 end end
    row("instrumented .func markers", cg == ce and eg == ee and diff == 0,
      string.format("%s: %s, entries %d; emu: %s, entries %d; %d outputs differ", gpu.backend, cg, eg, ce, ee, diff))
  end)
  if not ok then row("instrumented .func markers", false, tostring(err)) end
end

-- TMA through a tensor map (tests/ptx/hopper.cu's tma_like, warp-specialized, instrumented per
-- warpgroup): the descriptor from dev:tensor_map, passed as a __grid_constant__ parameter; the
-- producer warpgroup copies a 16 x 4 box of an 8 x 32 f32 tensor, the two consumers write it out
if gpu.backend == "cuda" and gpu.arch == "sm_90" then
  local ok, err = pcall(function()
    local rows, cols = 8, 32
    local a = gpu:array("f32", rows * cols, { fill = "ramp", shape = { rows, cols } })
    local map = gpu:tensor_map(a, { box = { 16, 4 } })
    local out = gpu:array("f32", 384)
    local k = gpu:load(here .. "/tests/ptx/hopper.ptx", { instrument = "warpgroup" }):kernel("tma_like")
    local run = k:launch { grid = 1, block = 384, args = { map, out }, profile = { entries = 9 } }
    local v, bad = out:read(), 0
    for t = 128, 383 do
      local i = (t - 128) % 64 -- tile[i] = A[i // 16][i % 16] = (i // 16) * cols + i % 16
      if v[t + 1] ~= (i // 16) * cols + i % 16 then bad = bad + 1 end
    end
    local counts = {}
    for _, r in ipairs(run.trace:summary()) do counts[#counts + 1] = r.name .. " " .. r.count end
    local c = table.concat(counts, ", ")
    row("TMA via tensor map (hopper.ptx)", bad == 0 and c:find("producer 1") and c:find("consumer 2"),
      string.format("%d of 256 values wrong; %s (expected producer 1, consumer 2)", bad, c))
  end)
  if not ok then row("TMA via tensor map (hopper.ptx)", false, tostring(err)) end
end

-- Hopper on emu (issues 22 and 23): TMA, mbarriers, clusters, the remaining forms, the
-- warp-specialised GEMMs and the tensor cores, each the same launch on the device and on emu.
-- Inputs are small integers wherever an accumulation order could change a result, so those
-- compare bit for bit; the GEMMs of random floats compare within a tolerance.
if gpu.backend ~= "cuda" or gpu.arch == "sm_90" then
  local function tests_ptx(dev, file) return dev:load(here .. "/tests/ptx/" .. file) end
  local u32 = function(dev, n) return dev:array("u32", n) end

  -- tma_load of one box: the shared bytes (the swizzled layout) in an array of dtype (f32: any NaN
  -- matches any NaN, so the NaN fill's payload does not count)
  local function tma_loads(dev, boxes)
    local k = tests_ptx(dev, "hopper_tma.ptx"):kernel("tma_load")
    local outs = {}
    for _, b in ipairs(boxes) do
      local map, rank, c, bytes = b[1], b[2], b[3], b[4]
      local function u(i) return (c[i] or 0) & 0xffffffff end -- .u32 parameters: a negative coordinate's bits
      local o = dev:array(b[5] or "u32", bytes // 4)
      k:launch { grid = 1, block = 128, smem = bytes, args = { map, rank, u(1), u(2), u(3), u(4), u(5), bytes, o } }
      outs[#outs + 1] = o
    end
    return outs
  end
  against_emu("tests/ptx/hopper_tma.ptx 2d loads (every swizzle, zero and NaN fill)", function(dev)
    local t2 = dev:array("f32", values(24 * 40, function(i) return (i // 40) * 100 + i % 40 end), { shape = { 24, 40 } })
    local boxes = {}
    for _, sw in ipairs { { "none", 8 }, { "32B", 8 }, { "64B", 16 }, { "128B", 32 } } do
      local map, bytes = dev:tensor_map(t2, { box = { sw[2], 8 }, swizzle = sw[1] }), sw[2] * 32
      boxes[#boxes + 1] = { map, 2, { 4, 8 }, bytes }
      boxes[#boxes + 1] = { map, 2, { 36, -3 }, bytes }
      boxes[#boxes + 1] = { map, 2, { -40, 100 }, bytes }
      boxes[#boxes + 1] = { dev:tensor_map(t2, { box = { sw[2], 8 }, swizzle = sw[1], oob = "nan" }), 2, { 36, -3 }, bytes, "f32" }
    end
    local outs = tma_loads(dev, boxes) -- not a tail call: t2 must stay alive while its maps are used
    return outs
  end)
  against_emu("tests/ptx/hopper_tma.ptx 3d-5d loads (element strides, interleave 16B/32B)", function(dev)
    local t3 = dev:array("bf16", values(7 * 12 * 32, function(i) return i % 97 - 40 end), { shape = { 7, 12, 32 } })
    local i32 = { dims = { 16, 24, 7 }, strides = { 32, 768 }, box = { 16, 8, 2 }, interleave = "32B", swizzle = "32B" }
    local t5 = dev:array("u64", values(4 * 3 * 16, function(i) return (i // 48) << 40 | (i // 16 % 3) << 20 | i % 16 end))
    local outs = tma_loads(dev, { -- not a tail call: t3 and t5 must stay alive while their maps are used
      { dev:tensor_map(t3, { box = { 32, 8, 6 }, element_strides = { 1, 2, 3 }, swizzle = "64B" }), 3, { 0, 3, 1 }, 32 * 4 * 2 * 2 },
      { dev:tensor_map(t3, { dims = { 8, 48, 7 }, strides = { 16, 768 }, box = { 8, 16, 2 }, interleave = "16B" }), 3, { 0, 5, 2 }, 512 },
      { dev:tensor_map(t3, i32), 3, { 0, 5, 2 }, 512 },
      { dev:tensor_map(t3, i32), 3, { 0, 20, 6 }, 512 },
      { dev:tensor_map(t3, { dims = { 16, 24, 7 }, strides = { 32, 768 }, box = { 16, 8, 2 }, element_strides = { 2, 1, 1 },
        interleave = "32B", swizzle = "32B" }), 3, { 0, 5, 2 }, 256 }, -- with interleave, dimension 0's stride counts
      { dev:tensor_map(t5, { dims = { 16, 3, 4, 2 }, strides = { 128, 384, 0 }, box = { 8, 2, 3, 2 } }), 4, { 6, 2, 2, 0 }, 768 },
      { dev:tensor_map(t5, { dims = { 16, 1, 3, 1, 4 }, strides = { 0, 128, 0, 384 }, box = { 16, 1, 2, 1, 3 } }), 5,
        { 0, 0, 1, 0, 2 }, 768 },
    })
    return outs
  end)

  against_emu("tests/ptx/hopper_tma.ptx stores, tensor reductions, bulk copies, mbarriers", function(dev)
    local m = tests_ptx(dev, "hopper_tma.ptx")
    local outs = {}
    local src = dev:array("u32", values(8 * 32, function(i) return (i // 32) * 7 + (i % 32) * 3 + 1 end))
    for op = 0, 8 do -- add, min, max, inc, dec, and, or, xor; 8: a plain store
      local t = dev:array("u32", values(24 * 40, function(i) return (i // 40) * 64 + i % 40 + 5 end), { shape = { 24, 40 } })
      m:kernel("tma_store"):launch { grid = 1, block = 64, smem = 1024,
        args = { dev:tensor_map(t, { box = { 32, 8 }, swizzle = "128B" }), op, 24, 20, 1024, src } }
      outs[#outs + 1] = t
    end
    for _, dt in ipairs { "f16", "bf16" } do -- min and max of halves, by value
      for op = 1, 2 do
        local t = dev:array(dt, values(128, function(i) return ((i * 37) % 23 - 11) * 0.75 end), { shape = { 8, 16 } })
        local h = dev:array(dt, values(128, function(i) return ((i * 53) % 19 - 9) * 1.25 end))
        m:kernel("tma_store"):launch { grid = 1, block = 64, smem = 256, args = { dev:tensor_map(t, { box = { 16, 8 } }), op, 0, 0, 256, h } }
        outs[#outs + 1] = t
      end
    end
    local s, d = dev:array("u32", values(256, function(i) return (i * 2654435761) % 4294967296 end)), dev:array("u32", 256)
    local r = dev:array("u32", values(256, function(i) return i end))
    m:kernel("bulk_copies"):launch { grid = 1, block = 64, smem = 2 * 1008, args = { s, d, r, 1008 } }
    local mb = u32(dev, 64)
    m:kernel("mbar_forms"):launch { grid = 1, block = 1, args = { mb } }
    outs[#outs + 1], outs[#outs + 2], outs[#outs + 3] = d, r, mb
    return outs
  end)

  against_emu("tests/ptx/hopper_cluster.ptx registers, dsmem, multicast, elect", function(dev)
    local m = tests_ptx(dev, "hopper_cluster.ptx")
    local regs, regs1 = u32(dev, 16 * 16), u32(dev, 16 * 16)
    m:kernel("cluster_regs"):launch { grid = { 4, 4 }, block = 32, cluster = { 2, 2, 1 }, args = { regs } }
    m:kernel("cluster_regs"):launch { grid = { 4, 4 }, block = 32, args = { regs1 } }
    local ds = u32(dev, 256 * 256)
    m:kernel("dsmem"):launch { grid = 256, block = 64, args = { ds } }
    local t2 = dev:array("f32", values(256, function(i) return i + 0.5 end), { shape = { 8, 32 } })
    local mc = u32(dev, 2 * 256 + 64)
    m:kernel("multicast"):launch { grid = 2, block = 64, smem = 1024,
      args = { dev:tensor_map(t2, { box = { 32, 8 }, swizzle = "128B" }), 1024, mc } }
    local el = u32(dev, 64)
    m:kernel("elect"):launch { grid = 1, block = 64, args = { el } }
    return { regs, regs1, ds, mc, el }
  end)

  against_emu("tests/ptx/hopper_forms.ptx mbarrier and cluster forms", function(dev)
    local m = tests_ptx(dev, "hopper_forms.ptx")
    local a, b, c = u32(dev, 64), u32(dev, 4), u32(dev, 4)
    m:kernel("mbar_relaxed"):launch { grid = 1, block = 1, args = { a } }
    m:kernel("mbar_state_wait"):launch { grid = 1, block = 64, args = { 77, 3000, b } }
    m:kernel("cluster_relaxed"):launch { grid = 2, block = 64, args = { 2000, c } }
    local init = dev:array("u32", values(256, function(i)
      local v = (i * 2654435761 + 12345) % 4294967296
      if i % 16 == 5 or i % 16 == 6 then v = v % 80 end
      if i % 16 == 12 then v = string.unpack("<I4", string.pack("<f", i + 0.5)) end
      return v
    end))
    local o1, o2 = u32(dev, 8 * 256), u32(dev, 8 * 128)
    m:kernel("dsmem_atoms"):launch { grid = 8, block = 64, args = { init, o1, o2 } }
    local mr = u32(dev, 8)
    m:kernel("max_rank"):launch { grid = 8, block = 64, cluster = { 4, 1, 1 }, args = { mr } }
    return { a, b, c, o1, o2, mr }
  end)

  against_emu("tests/ptx/hopper_forms.ptx bulk reductions (every op and type)", function(dev)
    local k = tests_ptx(dev, "hopper_forms.ptx"):kernel("bulk_reduce")
    local outs = {}
    local ops = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
      100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111 }
    for n, op in ipairs(ops) do
      -- bits that are ordinary numbers in every element type (f16/bf16 halves, f32, f64 words)
      local function word(i, h)
        local v = (i * 2654435761 + n * 40503 + h * 977) % 4294967296
        if op == 19 or op == 20 or op == 107 or op == 108 then return v % 40 end
        return (v & 0x3fff3fff) | 0x40004000 -- exponent bits set, sign by bit 31/15 only
      end
      local s, d = dev:array("u32", values(64, function(i) return word(i, 0) end)), dev:array("u32", values(64, function(i) return word(i, 1) end))
      k:launch { grid = 1, block = 64, smem = 512, args = { s, d, op, 256 } }
      outs[#outs + 1] = d
    end
    return outs
  end)

  local function gemm_inputs(dev, M, N, K)
    local av, bv = {}, {}
    for i = 1, M * K do av[i] = (i * 7) % 9 - 4 end
    for i = 1, N * K do bv[i] = (i * 5) % 7 - 3 end
    return dev:array("bf16", av, { shape = { M, K } }), dev:array("bf16", bv, { shape = { N, K } })
  end
  against_emu("tests/ptx/hopper_gemm.ptx ws_gemm (TMA, multicast, wgmma)", function(dev)
    local M, N, K = 256, 128, 256
    local a, b = gemm_inputs(dev, M, N, K)
    local c = dev:array("f32", M * N, { shape = { M, N } })
    local run = tests_ptx(dev, "hopper_gemm.ptx"):kernel("ws_gemm"):launch { grid = { 2, 2 }, block = 384,
      smem = 3 * (128 * 64 * 2 + 64 * 64 * 2) + 128 * 64 * 4,
      args = { dev:tensor_map(a, { box = { 64, 128 }, swizzle = "128B" }), dev:tensor_map(b, { box = { 64, 32 }, swizzle = "128B" }),
        dev:tensor_map(c, { box = { 64, 128 } }), K } }
    return { c, run = run } -- integer products: exact in any order
  end)
  against_emu("tests/ptx/hopper_gemm_st.ptx (TMA, setmaxnreg, wgmma, stmatrix)", function(dev)
    local M, N, K = 256, 128, 512
    local a, b = gemm_inputs(dev, M, N, K)
    local c = dev:array("bf16", M * N, { shape = { M, N } })
    local run = tests_ptx(dev, "hopper_gemm_st.ptx"):kernel("ws_gemm_st"):launch { grid = { 2, 2 }, block = 384,
      smem = 4 * (128 * 64 * 2 + 64 * 64 * 2) + 128 * 64 * 2,
      args = { dev:tensor_map(a, { box = { 64, 128 }, swizzle = "128B" }), dev:tensor_map(b, { box = { 64, 32 }, swizzle = "128B" }),
        dev:tensor_map(c, { box = { 64, 128 } }), K } }
    return { c, run = run }
  end)

  -- wgmma: element bits of small integers in each type (exact products in any order)
  local enc = {
    f16 = function(v) return v == 0 and 0 or (v < 0 and 0x8000 or 0) | ({ 0x3c00, 0x4000, 0x4200 })[math.abs(v)] end,
    bf16 = function(v) return v == 0 and 0 or (v < 0 and 0x8000 or 0) | ({ 0x3f80, 0x4000, 0x4040 })[math.abs(v)] end,
    tf32 = function(v) return string.unpack("<I4", string.pack("<f", v)) end,
    e4m3 = function(v) return v == 0 and 0 or (v < 0 and 0x80 or 0) | ({ 0x38, 0x40, 0x44 })[math.abs(v)] end,
    e5m2 = function(v) return v == 0 and 0 or (v < 0 and 0x80 or 0) | ({ 0x3c, 0x40, 0x42 })[math.abs(v)] end,
    s8 = function(v) return v & 0xff end,
    u8 = function(v) return (v + 3) & 0xff end,
  }
  local function wg_args(dev, N, K, at, bt, acc)
    local A = dev:array("u32", values(64 * K, function(i) return enc[at]((i * 5 + 1) % 7 - 3) end))
    local B = dev:array("u32", values(N * K, function(i) return enc[bt]((i * 3 + 2) % 7 - 3) end))
    local C = dev:array("u32", values(64 * N, function(i)
      local v = (i * 11) % 13 - 6
      return acc == "f32" and enc.tf32(v) or acc == "f16" and enc.f16(v % 4 - (v < 0 and 3 or 0)) or v & 0xffffffff
    end))
    return A, B, C, dev:array("u32", 64 * N)
  end
  against_emu("tests/ptx/wgmma.ptx forms (every type, swizzle, scale)", function(dev)
    local m = tests_ptx(dev, "wgmma.ptx")
    local outs = {}
    for _, c in ipairs {
      { "wg_bf16_n64", 64, 16, "bf16", "bf16", "f32" }, { "wg_f16_n128_t", 128, 16, "f16", "f16", "f32" },
      { "wg_f16_n32_h", 32, 16, "f16", "f16", "f16" }, { "wg_bf16_rs_n256", 256, 16, "bf16", "bf16", "f32" },
      { "wg_tf32_n16", 16, 8, "tf32", "tf32", "f32" }, { "wg_e4m3_n8", 8, 32, "e4m3", "e5m2", "f32" },
      { "wg_e4m3_f16_n16", 16, 32, "e4m3", "e4m3", "f16" }, { "wg_s8_n24_sat", 24, 32, "s8", "u8", "s32" },
      { "wg_u8_rs_n8", 8, 32, "u8", "s8", "s32" },
    } do
      for swz = 0, 3 do
        local A, B, C, D = wg_args(dev, c[2], c[3], c[4], c[5], c[6])
        m:kernel(c[1]):launch { grid = 1, block = 128, smem = 49152, args = { A, B, C, D, swz, swz == 2 and 0 or 1 } }
        outs[#outs + 1] = D
      end
    end
    return outs
  end)
  against_emu("tests/ptx/wgmma_n.ptx every dense N (f16, bf16, tf32, fp8, int8)", function(dev)
    local m = tests_ptx(dev, "wgmma_n.ptx")
    local outs = {}
    local types = { { "f16", "f16", 16 }, { "bf16", "bf16", 16 }, { "tf32", "tf32", 8 }, { "e4m3", "e5m2", 32 }, { "s8", "u8", 32 } }
    for n = 8, 256, 8 do
      for ty = 0, 4 do
        if ty < 4 or n <= 24 or n % 16 == 0 then
          local t = types[ty + 1]
          local A, B, C, D = wg_args(dev, n, t[3], t[1], t[2], ty == 4 and "s32" or "f32")
          m:kernel("wg_n" .. n):launch { grid = 1, block = 128, smem = 49152, args = { A, B, C, D, ty, (n // 8 + ty) % 4 } }
          outs[#outs + 1] = D
        end
      end
    end
    return outs
  end)
  -- the descriptor's base offset with tiles not at 1024-byte alignment (mode 0: swizzled by address
  -- bits, base offset (start >> 7) & 7; mode 1: rows counted from the tile's first row, base offset 0;
  -- mode 2: address bits, base offset 0, what TMA writes and CUTLASS reads, the one emu gives the
  -- product for; DESIGN.md "Dynamic shared memory and the swizzle", not yet seen on a GPU)
  for mode = 0, 2 do
    against_emu("tests/ptx/wgmma.ptx base offset, mode " .. mode .. (mode == 2 and " (address bits, base 0)" or ""), function(dev)
      local k = tests_ptx(dev, "wgmma.ptx"):kernel("wg_base_offset")
      local outs = {}
      for swz = 1, 3 do
        local A, B, C, D = wg_args(dev, 64, 16, "bf16", "bf16", "f32")
        k:launch { grid = 1, block = 128, smem = 32768, args = { A, B, C, D, swz, 18 * 128, 101 * 128, mode } }
        outs[#outs + 1] = D
      end
      return outs
    end)
  end
  -- the dynamic shared array beside a static variable (issue 30): the shared addresses a GPU gives
  -- them (ptxas's layout for sm_90: 0x400 reserved, the static, the array at its alignment; emu has no
  -- reserved KiB, DESIGN.md "Dynamic shared memory and the swizzle") and a 128B TMA tile in it read
  -- by wgmma. ok: the same offset from the static and modulo 1024 (what the swizzle reads), the same D.
  for _, f in ipairs { { "hopper_dynsmem.ptx", 128 }, { "hopper_dynsmem_1k.ptx", 1024 } } do
    local name = "dynamic shared offset, __align__(" .. f[2] .. ")"
    local ok, err = pcall(function()
      local function launch(dev)
        local T = 64
        local a = dev:array("bf16", values(T * T, function(i) return (i * 7) % 9 - 4 end), { shape = { T, T } })
        local b = dev:array("bf16", values(T * T, function(i) return (i * 5) % 7 - 3 end), { shape = { T, T } })
        local d, offs = dev:array("f32", T * T), dev:array("u32", 2)
        tests_ptx(dev, f[1]):kernel("dyn_tma_wgmma"):launch { grid = 1, block = 128, smem = 2 * T * T * 2,
          args = { dev:tensor_map(a, { box = { T, T }, swizzle = "128B" }), dev:tensor_map(b, { box = { T, T }, swizzle = "128B" }),
            d, offs } }
        return d:read(), offs:read()
      end
      local dg, og = launch(gpu)
      local de, oe = launch(mgpu.device("emu"))
      local diff = 0
      for i = 1, #de do if dg[i] ~= de[i] then diff = diff + 1 end end
      local same = og[1] - og[2] == oe[1] - oe[2] and og[1] % 1024 == oe[1] % 1024
      row(name, same and diff == 0, string.format("%s: dynamic array at 0x%x, static at 0x%x; emu: 0x%x, 0x%x; %d of %d "
        .. "values of D differ from emu", gpu.backend, og[1], og[2], oe[1], oe[2], diff, #de))
    end)
    if not ok then row(name, false, tostring(err)) end
  end
  against_emu("tests/ptx/wgmma.ptx wgmma_gemm (setmaxnreg, stmatrix; bf16 out)", function(dev)
    local M, N, K = 256, 256, 128
    local a = dev:array("bf16", M * K, { fill = "random", seed = 61, min = -1, max = 1 })
    local b = dev:array("bf16", N * K, { fill = "random", seed = 62, min = -1, max = 1 })
    local c = dev:array("bf16", M * N)
    local run = tests_ptx(dev, "wgmma.ptx"):kernel("wgmma_gemm"):launch { grid = { N // 128, M // 128 }, block = 384,
      smem = 65536, args = { a, b, c, M, N, K } }
    return { c, run = run, tol = 1 / 64 } -- f32 sums in another order, rounded to bf16: an ulp or two
  end)
end

-- mma.sync and WMMA GEMMs (tests/ptx/mma.cu): random floats, f32 accumulation in another order
against_emu("tests/ptx/mma.ptx mma_gemm (mma.sync, ldmatrix) and wmma_gemm", function(dev)
  local M, N, K = 128, 128, 128
  local m = dev:load(here .. "/tests/ptx/mma.ptx")
  local a = dev:array("bf16", M * K, { fill = "random", seed = 71, min = -1, max = 1 })
  local bt = dev:array("bf16", N * K, { fill = "random", seed = 72, min = -1, max = 1 })
  local c1 = dev:array("f32", M * N)
  m:kernel("mma_gemm"):launch { grid = { N // 64, M // 64 }, block = 128, args = { a, bt, c1, M, N, K } }
  local ah = dev:array("f16", M * K, { fill = "random", seed = 73, min = -1, max = 1 })
  local bh = dev:array("f16", N * K, { fill = "random", seed = 74, min = -1, max = 1 })
  local c2 = dev:array("f32", M * N)
  local run = m:kernel("wmma_gemm"):launch { grid = { N // 32, M // 32 }, block = 128, args = { ah, bh, c2, M, N, K } }
  return { c1, c2, run = run, tol = 1e-4 }
end)

-- a fault, then the next launch.  After an illegal address the driver says the process must be
-- relaunched to use CUDA again, so the faulting kernel runs in a child process
-- (scripts/device/fault.lua): there it must be a kernel_fault and the device must then refuse
-- further use with the reason (on emu it stays usable); here, in a process that never faulted, the
-- next launch must run.
local function harness_exe()
  local h = os.getenv("MGPU_HARNESS") -- scripts/device-check.sh sets it
  if h and h ~= "" then return h end
  local f = io.open("/proc/self/stat") -- else this process's own executable
  local pid = f and f:read("n")
  if f then f:close() end
  local p = pid and io.popen("readlink /proc/" .. math.tointeger(pid) .. "/exe")
  local exe = p and p:read("l")
  if p then p:close() end
  return exe
end

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

do
  local ok, err = pcall(function()
    local exe = assert(harness_exe(), "cannot tell where mgpu-harness is: set MGPU_HARNESS")
    local p = io.popen(quote(exe) .. " " .. quote(here .. "/scripts/device/fault.lua") .. " " .. quote(gpu.backend) .. " 2>&1")
    local text = p:read("a")
    p:close()
    local fcode, fmsg = text:match("FAULT (%S+) ([^\n]*)")
    local acode, amsg = text:match("AFTER (%S+) ([^\n]*)")
    if not fcode then error("the child printed no FAULT line: " .. text:sub(1, 300), 0) end
    local fault = fcode == "kernel_fault"
    -- after the fault: lost for the process (cuda: refused with the reason) or still usable (emu)
    local after_ok = acode == "ok" or (acode == "no_device" and (amsg or ""):find("lost for this process", 1, true) ~= nil)
    local x = gpu:array("f32", 1024, { fill = "ramp" })
    local y = gpu:array("f32", 1024)
    gpu:load(here .. "/ptx/copy.ptx"):kernel("copy_f32x4"):launch { grid = 1, block = 256, args = { x, y, 256 } }
    local mism = y:compare(x).mismatches
    row("fault, then next launch", fault and after_ok and mism == 0,
      string.format("child process: %s (%s); then there: %s%s; next launch here: mismatches %d", fcode,
        (fmsg or ""):sub(1, 160), tostring(acode), acode ~= "ok" and (" (" .. (amsg or ""):sub(1, 120) .. ")") or "", mism))
  end)
  if not ok then row("fault, then next launch", false, tostring(err)) end
end

-- real kernels (tests/corpus, issue 30): GEMMs and the attention forward of public code bases, each
-- launch as their own host code made it, run here against the host reference (tests/corpus/run.lua
-- on this backend, in a child process: a kernel that faults or hangs there leaves this one usable;
-- 120 s each at most). The corpus's own `ok` line is the row's verdict.
do
  local cases = {
    { "fastcu_k3_tma_wgmma_128", "fast.cu kernel 3: TMA + wgmma" },
    { "fastcu_k5_setmaxnreg", "fast.cu kernel 5: producer/consumer, setmaxnreg" },
    { "samples_tf32_wmma_async_copy", "cuda-samples tf32 WMMA, cvt.rna.tf32" },
    { "cutlass49_pingpong_tma_store", "CUTLASS 49: ping-pong, TMA-store epilogue" },
    { "cutlass49_cooperative_stream_k", "CUTLASS 49: cooperative stream-K" },
    { "tk_attention_fwd_d64", "ThunderKittens attention forward, d 64" },
    { "cutlass54_fp8_cooperative", "CUTLASS 54: fp8 e4m3 GEMM, scaled epilogue, amax" },
    { "cutlass57_grouped_pingpong", "CUTLASS 57: grouped GEMM, tensor maps edited on the device" },
    { "cutlass55_mixed_scale_zero", "CUTLASS 55: f16 x e4m3, per-group scale and zero" },
    { "cutlass67_fp8_blockwise", "CUTLASS 67: fp8 GEMM, 128x128 block scales of A and B" },
    { "cutlass88_fmha_pingpong_causal", "CUTLASS 88: attention forward, ping-pong, causal, LSE" },
    { "cutlass63_fp8_weight_prefetch", "CUTLASS 63: fp8 GEMM, weight prefetch, dependent launch" },
    { "cutlass61_topk_softmax", "CUTLASS 61: f16 GEMM, top-2 softmax epilogue" },
  }
  local exe = harness_exe()
  local has_timeout = os.execute("command -v timeout >/dev/null 2>&1")
  for _, c in ipairs(cases) do
    local name = "corpus " .. c[1] .. " (" .. c[2] .. ")"
    local ok, err = pcall(function()
      assert(exe, "cannot tell where mgpu-harness is: set MGPU_HARNESS")
      local cmd = (has_timeout and "timeout 120 " or "") .. quote(exe) .. " " .. quote(here .. "/tests/corpus/run.lua") .. " "
        .. quote("^" .. c[1] .. "$") .. " '' " .. quote(gpu.backend) .. " 2>&1"
      local p = io.popen(cmd)
      local text = p:read("a")
      p:close()
      local status, rest
      for line in text:gmatch("[^\n]+") do
        local st, n, r = line:match("^(%a+)%s+(%S+)%s+(.*)$")
        if n == c[1] then status, rest = st, r end
      end
      if not status then
        local last = text:match("([^\n]+)\n*$") or "no output"
        error(string.format("the corpus runner printed no line for the case (%s)", last:sub(1, 200)), 0)
      end
      row(name, status == "ok", string.format("%s: %s", gpu.backend, rest:sub(1, 240)))
    end)
    if not ok then row(name, false, tostring(err)) end
  end
end

local f = io.open(out_dir .. "/device-check.md", "w")
f:write("| check | result | detail |\n|---|---|---|\n" .. table.concat(rows, "\n") .. "\n")
f:close()
print("| check | result | detail |\n|---|---|---|\n" .. table.concat(rows, "\n"))
-- one line for the device check's summary (scripts/device-check.sh collects the RESULT lines)
print(string.format("RESULT | correctness checks (check.lua) | %d of %d ok | all | %s |", #rows - failed, #rows,
  failed == 0 and "met" or "MISSED"))
if failed > 0 then os.exit(1) end
