-- accuracy.lua: time accuracy of instrumented traces (issue 5).  Warps spin on
-- %globaltimer for a known number of ns inside a region (starting on a tick of
-- the timer); the default dump (clock measured from the calibration words)
-- must read within 2% of it.  Also shows what Mosaic's convention (cycles
-- taken as ns) would read, the timer's resolution, and the cost of one
-- recorded event (empty regions back to back).  On a GPU one warp per SM
-- spins, each trace padded to 20 us so the clock calibration spans enough
-- timer ticks; on emu two warps and the clock is virtual, so the figures check
-- the pipeline, not a GPU.
--   mgpu-harness scripts/device/accuracy.lua [emu|cuda] [OUT_DIR]
local mgpu = require "mgpu"

local here = (arg and arg[0] or ""):match("^(.*)/scripts/device/[^/]*$") or "."
local dev = mgpu.device(arg[1] or "auto")
local out_dir = arg[2] or "results/accuracy"
os.execute("mkdir -p '" .. out_dir .. "'")
local k = dev:load(here .. "/ptx/spin.ptx", { instrument = "warp" }):kernel("spin")
local sink = dev:array("u64", 2)
local on_gpu = dev.backend ~= "emu"
local grid, pad = on_gpu and dev.sms or 2, 20000

-- the summary row of region `name` in the run's default dump, and the dump;
-- an error when the trace has none (a kernel that did not run, say)
local function region(run, name, file)
  local d = run.trace:dump(file)
  for _, r in ipairs(d.summary) do if r.name == name then return r, d end end
  error(string.format("no %q region in the trace (%s)", name, file), 0)
end

print(string.format("device: %s (%s); %d warp%s spinning, each trace padded to %d ns", dev.name, dev.backend, grid,
  grid == 1 and "" or "s", pad))
print("| spin target | default dump | error | Mosaic convention (cycles as ns) | clock used |")
print("|---|---|---|---|---|")
local worst, step, failed = 0, nil, false
for _, target in ipairs({ 2000, 10000, 50000 }) do
  local ok, msg = pcall(function()
    local ns = dev:array("u32", { target })
    local run = k:launch { grid = grid, block = 32, args = { ns, 1, 0, pad, sink }, profile = { entries = 16 } }
    step = step or sink:read(2)
    run.trace:save(string.format("%s/spin-%d", out_dir, target)) -- the raw words, to dump again later
    local r, d = region(run, "spin", string.format("%s/spin-%d.trace.json", out_dir, target))
    local clock = d.clock_ghz
    local err = (r.mean - target) / target
    if math.abs(err) > math.abs(worst) then worst = err end
    print(string.format("| %d ns | %.0f ns | %+.2f%% | %.0f \"ns\" (%.2fx) | %.4f GHz %s%s |", target, r.mean,
      100 * err, r.mean * clock, clock, clock, d.clock_source, d.timer_step_ns and string.format(
        " (timer step %d ns, within %.2g%%)", d.timer_step_ns, 100 * d.clock_bound) or ""))
  end)
  if not ok then
    failed = true
    print(string.format("| %d ns | FAIL: %s | | | |", target, tostring(type(msg) == "table" and msg.message or msg)))
  end
end
local ok, msg = pcall(function()
  local events = 512
  local run = k:launch { grid = 1, block = 32, args = { dev:array("u32", { 0 }), 0, events, 0, sink },
    profile = { entries = mgpu.entries_for(2 * events) } }
  local r, d = region(run, "tick", out_dir .. "/ticks.trace.json")
  local clock = d.clock_ghz
  print(string.format("\nper recorded event: %.1f ns = %.1f cycles (mean of %d empty regions: one record each)",
    r.mean, r.mean * clock, r.count))
end)
if not ok then
  failed = true
  print("\nper recorded event: FAIL: " .. tostring(type(msg) == "table" and msg.message or msg))
end
print(string.format("%%globaltimer step: %s ns (its resolution as the kernel saw it)", tostring(step)))
print(string.format("worst spin error: %+.2f%% (target: within 2%%)", 100 * worst))
print(string.format("RESULT | time accuracy, 2/10/50 us spins | worst %+.2f%% | within 2%% | %s |", 100 * worst,
  not failed and math.abs(worst) <= 0.02 and "met" or "MISSED"))
if failed or math.abs(worst) > 0.02 then os.exit(1) end
