-- microbench.lua: the quantities emu's device model holds (core/emu/emu_model.c), measured by
-- the kernels of tests/ptx/microbench.cu on this backend (latencies, bandwidths, wgmma's and the
-- fma and special-function pipes' rates, the fma's and ex2's result latencies), beside emu's figures for the same
-- kernels and the published ones (issue 32).  On a GPU the table is what re-fits the model:
-- each row names the parameter it measures.  The SM clock under tensor load is measured too
-- (wgmma_rate's %clock64 cycles over the launch's event time).
-- The re-fit: from the measured rows, the model parameters that would give them (each row's own
-- parameter moved by the difference, or scaled by the ratio, the others kept), printed as
-- model_params, and emu run again with them to show the table they give.
--   mgpu-harness scripts/device/microbench.lua [cuda|emu|auto] [MODEL] [NAME=VALUE ...]
-- MODEL: the emu model to compare with (default h200).  NAME=VALUE (on emu only): the measured
-- device is emu with those parameters set, a stand-in for a GPU whose figures differ (the re-fit
-- should find them again: ctest microbench_refit).  Prints a markdown table and RESULT lines for
-- scripts/device-check.sh.
local mgpu = require "mgpu"

local here = (arg and arg[0] or ""):match("^(.*)/scripts/device/[^/]*$") or "."
local ptx = here .. "/tests/ptx/microbench.ptx"
local as, pos = require("mgpu.options").model_params(arg)
if #pos > 2 then -- (a misspelt NAME=VALUE, "l2-lat=300" or "l2_lat=", was taken for one and ignored)
  error(string.format("%s: not a backend, a model or NAME=VALUE (usage: microbench.lua [cuda|emu|auto] [MODEL] "
    .. "[NAME=VALUE ...])", pos[3]), 0)
end
local model = pos[2] or "h200"
local stand_in = next(as) ~= nil
if stand_in and pos[1] ~= "emu" then error("NAME=VALUE parameters make emu stand in for a GPU: give the backend emu", 0) end
local dev = stand_in and mgpu.device("emu", { model = model, model_params = as }) or mgpu.device(pos[1] or "auto")
local emu = mgpu.device("emu", { model = model })

-- the published figures (the same as tests/c/test_emu_clock.c's)
local PUB = { l1 = 33, l2 = 260, l2cg = 260, l2idle = 260, hbm = 480, smem = 30, dsmem = 180, wgmma = 2048, fma = 128, ex2 = 16,
  fmalat = 4, fmailp = 1, ex2lat = 18, tmachase = 368.4,
  gbs = ({ h200 = 4800, ["h100-sxm"] = 3350, ["h100-pcie"] = 2000 })[model] }

-- every figure of one device: {key = value}
local function measure(d)
  local m = d:load(ptx)
  local out = d:array("u64", 2)
  local r = {}
  local function chase(bytes, warm, k)
    local ring = d:array("u8", bytes)
    local n = bytes // 128
    m:kernel("chase_init"):launch { grid = 132, block = 256, args = { ring, n, 128 } }
    m:kernel(k or "chase"):launch { grid = 1, block = 1, args = { ring, warm and n or 0, math.min(n, 4096), out } }
    return out:read()[1]
  end
  r.l1 = chase(16 << 10, true)
  r.l2 = chase(8 << 20, true)
  r.hbm = chase(128 << 20, false)
  r.l2cg = chase(16 << 10, true, "chase_cg") -- ld.cg: L2 only, the L1-sized ring at L2's latency
  r.tmachase = chase(512 << 10, true, "tma_chase") -- 16-byte bulk copies from L2, as [P25]'s authors' chase
  -- the L2 under load (loaded_chase): one thread chases while 40 SMs read a 16 MiB buffer through
  -- L2, once (the chase then runs on an idle L2) or 32 times (through the chase); the load's bytes
  -- a cycle over the model's L2 bandwidth (5120, [TAB]) is rho; l2_load_clk is what
  -- idle + l2_load_clk x rho / (2 (1 - rho)) = busy gives (emu_memtime.c's M/D/1 term)
  local function loaded(passes)
    local bytes, o = 16 << 20, d:array("u64", 4)
    local buf = d:array("u8", bytes)
    m:kernel("chase_init"):launch { grid = 132, block = 256, args = { buf, bytes // 128, 128 } }
    m:kernel("loaded_chase"):launch { grid = 41, block = 1024,
      args = { buf, bytes // 16, passes, 30000, 256, o, d:array("f32", 41 * 1024) } }
    local v = o:read()
    return v[1], passes * bytes / v[3] / 5120
  end
  r.l2idle = loaded(1)
  r.l2busy, r.l2rho = loaded(32)
  r.l2load = r.l2rho > 0 and (r.l2busy - r.l2idle) * 2 * (1 - r.l2rho) / r.l2rho or 0
  m:kernel("smem_chase"):launch { grid = 1, block = 32, args = { 2048, out } }
  r.smem = out:read()[1]
  m:kernel("dsmem_chase"):launch { grid = 2, block = 32, args = { 2048, out } }
  r.dsmem = out:read()[1]
  local n4 = 16 << 20 -- 256 MiB
  local a, sums = d:array("f32", 4 * n4), d:array("f32", 8 * d.sms * 256)
  local k = m:kernel("stream_read")
  -- a 64 MiB write burst, larger than the L2: a warm-up first, whose dirty lines the reads below
  -- write back (they leave the L2 clean for the burst)
  local wn4 = (64 << 20) // 16
  local wbuf, wk = d:array("f32", 4 * wn4), m:kernel("stream_write")
  wk:launch { grid = 8 * d.sms, block = 256, args = { wbuf, wn4, 1.0 } }
  k:launch { grid = 8 * d.sms, block = 256, args = { a, sums, n4 } } -- warm-up (the clocks, the TLB)
  r.gbs = 16 * n4 / k:launch { grid = 8 * d.sms, block = 256, args = { a, sums, n4 } }.time_ns
  r.wburst = 16 * wn4 / wk:launch { grid = 8 * d.sms, block = 256, args = { wbuf, wn4, 2.0 } }.time_ns
  local iters = d.backend == "emu" and 64 or 20000
  local sink = d:array("f32", 256)
  local run = m:kernel("wgmma_rate"):launch { grid = 1, block = 128, args = { iters, out, sink } }
  local cycles = out:read()[1]
  r.clock = cycles / run.time_ns -- GHz; the launch's own overhead makes it a little low
  -- one wgmma alone, issue to wait_group 0: its rate's 128 cycles (16 x 256 x 16 a warp at 512 a
  -- cycle) plus what it takes beyond them (operands from shared memory, results back: emu's
  -- smem_lat and wgmma_lat, the drain)
  m:kernel("wgmma_rate"):launch { grid = 1, block = 128, args = { 1, out, sink } }
  r.wgmma1 = out:read()[1]
  -- the rate: the iters - 1 wgmmas beyond the first over the cycles beyond one alone's (the start and
  -- the drain, paid once a chain, do not count: they are wgmma1's)
  r.wgmma = 64 * 256 * 16 * (iters - 1) / (cycles - r.wgmma1)
  -- the pipes (emu_model.c's pipe_rate): one block of 1024 threads, 8 independent chains each
  local piters = d.backend == "emu" and 8 or 4096
  local psink = d:array("f32", 1024)
  for _, k in ipairs { "fma", "ex2" } do
    m:kernel(k .. "_rate"):launch { grid = 1, block = 1024, args = { piters, out, psink } }
    r[k] = 1024 * 8 * 16 * piters / out:read()[1]
  end
  -- result latency (emu_model.c's lat, the register scoreboard): one warp, a chain of dependent
  -- f32 fmas, 8 chains interleaved, a chain of dependent ex2.approx; cycles an instruction
  local citers = d.backend == "emu" and 16 or 4096
  for _, c in ipairs { { "fmalat", "fma_chain", 64 }, { "fmailp", "fma_ilp", 128 }, { "ex2lat", "ex2_chain", 64 } } do
    m:kernel(c[2]):launch { grid = 1, block = 32, args = { citers, out, psink } }
    r[c[1]] = out:read()[1] / (c[3] * citers)
  end
  -- one SM reading 4 MiB from L2 (ld.cg), then reading and storing it: the copy over the read
  -- (about 1 when the SM's ways in and out are apart, as emu's model has them [EST])
  do
    local pa, pb, n4 = d:array("f32", 1 << 20), d:array("f32", 1 << 20), (4 << 20) // 16
    local pk = m:kernel("port_copy")
    pk:launch { grid = 1, block = 1024, args = { pa, pb, n4, 0, out } }
    pk:launch { grid = 1, block = 1024, args = { pa, pb, n4, 0, out } }
    local tr = out:read()[1]
    pk:launch { grid = 1, block = 1024, args = { pa, pb, n4, 1, out } }
    r.portread = (4 << 20) / tr
    r.portcopy = out:read()[1] / tr
  end
  m:kernel("mbar_roundtrip"):launch { grid = 1, block = 32, args = { 256, out } }
  r.mbar = out:read()[1]
  m:kernel("mbar_warp"):launch { grid = 1, block = 32, args = { 256, out } }
  r.mbarwarp = out:read()[1]
  m:kernel("tma_bulk"):launch { grid = 1, block = 32, smem = 16384, args = { d:array("u8", 1 << 20), 16384, out } }
  r.tma = out:read()[1]
  return r
end

local ok_dev, got = pcall(measure, dev)
if not ok_dev then
  print("microbench: " .. tostring(type(got) == "table" and got.message or got))
  print("RESULT | emu clock microbenchmarks (microbench.lua) | failed | - | MISSED |")
  os.exit(1)
end
local measured = dev.backend ~= "emu" or stand_in -- a device to re-fit to (a GPU, or emu standing in)
local e = measured and measure(emu) or got

local rows = {
  { "l1", "L1 hit latency, cycles (chase, 16 KiB)", "l1_lat" },
  { "l2", "L2 hit latency, cycles (chase, 8 MiB)", "l2_lat" },
  { "hbm", "HBM latency, cycles (chase, 128 MiB cold)", "hbm_lat" },
  { "l2cg", "ld.cg latency, cycles (chase_cg, 16 KiB: L2 only)", "l2_lat (ld.cg skips L1)" },
  { "l2idle", "L2 hit latency after 40 SMs' load, cycles (loaded_chase)", "l2_lat" },
  { "l2busy", "L2 hit latency under 40 SMs' load, cycles (loaded_chase)", "l2_lat, l2_load_clk" },
  { "l2rho", "that load over 5120 B/cycle (the model's L2 bandwidth)", "l2_bytes_per_clk" },
  { "l2load", "the M/D/1 service time those give, cycles", "l2_load_clk" },
  { "smem", "shared memory latency, cycles", "smem_lat" },
  { "dsmem", "distributed shared memory latency, cycles", "dsmem_lat" },
  { "gbs", "streaming read, GB/s (256 MiB)", "hbm_gbs" },
  { "wburst", "write burst after a read, GB/s (64 MiB, stream_write)", "l2_dirty_frac, hbm_gbs" },
  { "wgmma", "wgmma m64n256k16 bf16, MACs/cycle/SM", "mma_f16 (x4)" },
  { "clock", "SM clock under tensor load, GHz", "clock_ghz" },
  { "wgmma1", "one wgmma m64n256k16 alone (with its zeroing moves) to wait_group 0, cycles", "wgmma_lat, smem_lat" },
  { "fma", "f32 fma, results/cycle/SM (fma_rate)", "pipe_rate[FMA]" },
  { "ex2", "ex2.approx.f32, results/cycle/SM (ex2_rate)", "pipe_rate[MUFU]" },
  { "fmalat", "dependent f32 fma, cycles each (fma_chain)", "lat[FMA]" },
  { "fmailp", "8 fma chains in one warp, cycles an fma (fma_ilp)", "(issue rate: 1)" },
  { "ex2lat", "dependent ex2.approx.ftz, cycles each (ex2_chain)", "lat[EX2]" },
  { "portread", "one SM reading 4 MiB from L2, B/cycle (port_copy)", "sm_port_bytes_per_clk, l2_lat" },
  { "portcopy", "the same read and stored, over the read alone", "sm_port_bytes_per_clk (each way)" },
  { "mbar", "mbarrier arrive + wait, cycles", "(no parameter)" },
  { "mbarwarp", "32 lanes arrive on one mbarrier + wait, cycles (mbar_warp)", "mbar_lane_clk" },
  { "tma", "TMA bulk load of 16 KiB, cold, cycles", "hbm_lat, sm_port, tma_lat" },
  { "tmachase", "TMA chase from L2 (16 B bulk copies, 512 KiB ring), cycles a hop", "tma_lat, l2_lat, smem_lat" },
}
print(string.format("device: %s (%s); emu model %s (%.3f GHz)", dev.name, dev.backend, model, emu.clock_ghz))
print()
print("| measure | this device | emu (" .. model .. ") | published | model parameter |")
print("|---|---|---|---|---|")
local worst = 0
for _, r in ipairs(rows) do
  local key = r[1]
  local pub = PUB[key]
  local ref = key == "clock" and emu.clock_ghz or nil
  print(string.format("| %s | %.3f | %.3f | %s | %s |", r[2], got[key], e[key], pub and tostring(pub) or (ref and
    string.format("%.3f (emu's)", ref) or "-"), r[3]))
  if measured and pub then
    worst = math.max(worst, math.abs(e[key] - got[key]) / got[key])
  end
end

-- The re-fit: each parameter from the row that measures it alone (latencies move by the
-- difference, rates scale by the ratio), the rows that mix parameters after the ones they mix.
local function refit(m, got, e)
  local p = {}
  -- a row a device gave no figure for (0, or not a number: the fake driver runs no kernel) moves nothing
  local function ok(key) local g, x = got[key], e[key]; return g == g and x == x and g > 0 and x > 0 and g < math.huge end
  local function shift(name, key)
    if ok(key) then p[name] = math.max(0, math.floor(m[name] + got[key] - e[key] + 0.5)) end
  end
  local function scale(name, key, whole)
    if not ok(key) then return end
    local v = m[name] * got[key] / e[key]
    p[name] = whole and math.max(1, math.floor(v + 0.5)) or v
  end
  shift("l1_lat", "l1")
  shift("l2_lat", "l2")
  shift("hbm_lat", "hbm")
  shift("smem_lat", "smem")
  shift("dsmem_lat", "dsmem")
  -- a TMA hop is the L2's latency, the unit's and a shared read: what the other two do not explain
  if ok("tmachase") then
    p.tma_lat = math.max(0, math.floor(m.tma_lat + (got.tmachase - e.tmachase) - ((p.l2_lat or m.l2_lat) - m.l2_lat)
      - ((p.smem_lat or m.smem_lat) - m.smem_lat) + 0.5))
  end
  -- one wgmma alone: its operands' shared-memory latency, the rate's cycles and the drain: what the
  -- shared-memory row does not explain is the drain's
  if ok("wgmma1") then
    p.wgmma_lat = math.max(0, math.floor(m.wgmma_lat + (got.wgmma1 - e.wgmma1) - ((p.smem_lat or m.smem_lat) - m.smem_lat) + 0.5))
  end
  scale("hbm_gbs", "gbs")
  -- the write burst: beyond the bytes the L2 takes in (l2_dirty_frac of it) a store waits for the
  -- HBM, so the burst's time at each device's HBM rate (its read's) is the bytes that waited; the
  -- bytes fewer than emu's that waited on the device, the L2 took in more. (A burst the L2 takes in
  -- whole reads the same for every larger fraction: the re-fit is then one that gives the row.)
  if ok("wburst") and ok("gbs") then
    local s = 64 << 20
    local waited_emu, waited = s / e.wburst * e.gbs, s / got.wburst * got.gbs
    p.l2_dirty_frac = math.min(1, math.max(0, m.l2_dirty_frac + (waited_emu - waited) / m.l2_bytes))
  end
  scale("mma_f16", "wgmma", true)
  scale("pipe_fma", "fma", true)
  scale("pipe_mufu", "ex2", true)
  -- result latencies: a dependent chain's cycles an instruction are its latency (and a little loop)
  shift("lat_fma", "fmalat")
  shift("lat_ex2", "ex2lat")
  -- a warp's 32 arrivals on one mbarrier against one thread's: the 31 further lanes' cost, each
  if ok("mbarwarp") and ok("mbar") then
    p.mbar_lane_clk = math.max(0, m.mbar_lane_clk + ((got.mbarwarp - got.mbar) - (e.mbarwarp - e.mbar)) / 31)
  end
  -- the loaded L2's service time, when the measured one is not emu's own within its 5% of rounding
  if ok("l2load") and math.abs(got.l2load - e.l2load) > 0.05 * e.l2load then p.l2_load_clk = got.l2load end
  if dev.backend ~= "emu" and ok("clock") then p.clock_ghz = got.clock end -- emu's own "clock" row is not a clock
  local changed, names = {}, {}
  for k, v in pairs(p) do
    if math.abs(v - m[k]) > 1e-9 * math.max(1, math.abs(m[k])) then changed[k] = v; names[#names + 1] = k end
  end
  table.sort(names)
  return changed, names
end

-- the rows a re-fitted parameter answers for (the others have none, or mix several)
local REFITTED = { l1 = true, l2 = true, hbm = true, smem = true, dsmem = true, tmachase = true, gbs = true,
  wgmma = true, fma = true, ex2 = true, l2busy = true, fmalat = true, ex2lat = true, mbarwarp = true,
  wgmma1 = true, wburst = true }
if measured then
  local fit, names = refit(emu.model, got, e)
  local parts = {}
  for _, k in ipairs(names) do parts[#parts + 1] = string.format("%s = %.6g", k, fit[k]) end
  print()
  print(string.format("re-fit of %s: model_params = { %s }", model, table.concat(parts, ", ")))
  local okr, refitted = pcall(function() return measure(mgpu.device("emu", { model = model, model_params = fit })) end)
  if not okr then
    print("re-fit: emu could not run with it: " .. tostring(type(refitted) == "table" and refitted.message or refitted))
    print("RESULT | emu model re-fit (microbench.lua) | failed | within 5% | MISSED |")
    refitted = nil
  end
  if refitted then
    local after, n = 0, 0
    print()
    print("| measure | this device | emu re-fitted | error |")
    print("|---|---|---|---|")
    for _, r in ipairs(rows) do
      local key = r[1]
      local g = got[key]
      local valid = g == g and g > 0 and g < math.huge
      local err = valid and (refitted[key] - g) / g or 0
      print(string.format("| %s | %.3f | %.3f | %s |", r[2], g, refitted[key], valid and string.format("%+.1f%%", 100 * err) or "-"))
      if REFITTED[key] and valid then after, n = math.max(after, math.abs(err)), n + 1 end
    end
    if n == 0 then
      print("RESULT | emu model re-fit (microbench.lua) | no measured row | within 5% | MISSED |")
    else
      print(string.format("RESULT | emu model re-fit (microbench.lua) | worst re-fitted row %.1f%% (%d rows) | within 5%% | %s |",
        100 * after, n, after <= 0.05 and "ok" or "MISSED"))
    end
  end
end
if not measured then
  print("RESULT | emu clock microbenchmarks (microbench.lua) | emu's own figures | - | - |")
else
  -- on a GPU: how far emu's model is from this device (a re-fit changes emu_model.c)
  print(string.format("RESULT | emu clock microbenchmarks (microbench.lua) | worst emu error %.1f%% | within 15%% | %s |",
    100 * worst, worst <= 0.15 and "ok" or "MISSED"))
end
