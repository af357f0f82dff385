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
-- is refused.  Prints a markdown table.
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

local f = io.open(out_dir .. "/device-check.md", "w")
f:write("| check | result | detail |\n|---|---|---|\n" .. table.concat(rows, "\n") .. "\n")
f:close()
print("| check | result | detail |\n|---|---|---|\n" .. table.concat(rows, "\n"))
-- one line for the device check's summary (scripts/device-check.sh collects the RESULT lines)
print(string.format("RESULT | correctness checks (check.lua) | %d of %d ok | all | %s |", #rows - failed, #rows,
  failed == 0 and "met" or "MISSED"))
if failed > 0 then os.exit(1) end
