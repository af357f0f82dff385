-- launch.lua: what one launch costs through the Lua API (kernel:launch, with
-- its argument checks against the PTX signature and the result table; with
-- and without event timing), on an empty kernel with one pointer argument; build/launchbench
-- measures the C launch path against a bare cuLaunchKernel loop in the same
-- device check, so the two tables together show where the time goes.
-- It also says what the event times themselves can resolve: cuda.h gives
-- cuEventElapsedTime "a resolution of around 0.5 microseconds", so the
-- smallest event-timed launch is an empty kernel's time plus the host's
-- submission gap, not the resolution; the finest step seen between distinct
-- event times is shown beside it, and, where the build's kernel:launch takes
-- `repeat`, the empty kernel timed as 100 launches back to back per event pair.
--   mgpu-harness scripts/device/launch.lua [emu|cuda] [N]
local core = require "mgpu.core"
local mgpu = require "mgpu"

local dev = mgpu.device(arg[1] or "auto")
local n = tonumber(arg[2]) or 20000
local src = ".version 8.0\n.target sm_90\n.address_size 64\n"
  .. ".visible .entry empty(.param .u64 p)\n{\nret;\n}\n"
local k = dev:load({ name = "empty.ptx", source = src }):kernel("empty")
local x = dev:array("u32", 32)
local times = {}
local function per_launch(launch, keep)
  for _ = 1, math.min(n, 100) do k:launch(launch) end -- warm up
  local t0, min_ns = core.now(), math.huge
  for _ = 1, n do
    local run = k:launch(launch)
    if run.time_ns and run.time_ns > 0 then
      if run.time_ns < min_ns then min_ns = run.time_ns end
      if keep then times[#times + 1] = run.time_ns end
    end
  end
  return (core.now() - t0) / n, min_ns
end
local untimed = per_launch { grid = 1, block = 32, args = { x }, time = false }
local timed, min_ns = per_launch({ grid = 1, block = 32, args = { x } }, true)
print(string.format("device: %s (%s)", dev.name, dev.backend))
print("| launches | Lua kernel:launch (checked), time = false | event-timed | smallest launch time |")
print("|---|---|---|---|")
print(string.format("| %d | %.2f us | %.2f us | %.3f us |", n, untimed * 1e6, timed * 1e6, min_ns / 1e3))

-- the finest step between distinct event times: what the events resolve at best
table.sort(times)
local step
for i = 2, #times do
  local d = times[i] - times[i - 1]
  if d > 0 and (not step or d < step) then step = d end
end

-- back to back: the launch's `repeat` (when this build's kernel:launch takes it) puts R launches
-- between one pair of events, so the host's gap before the first is spread over R
local R, b2b = 100, nil
local ok, err = pcall(k.launch, k, { grid = 1, block = 32, args = { x }, ["repeat"] = R })
if ok then
  local best = math.huge
  for _ = 1, 20 do
    local run = k:launch { grid = 1, block = 32, args = { x }, ["repeat"] = R }
    if run.time_ns and run.time_ns < best then best = run.time_ns end
  end
  b2b = best
end
print()
print("| event times | figure |")
print("|---|---|")
print(string.format("| smallest event-timed launch (an empty kernel + the host's submission gap) | %.3f us |", min_ns / 1e3))
print(string.format("| finest step between distinct event times | %s |", step and string.format("%.3f us", step / 1e3)
  or "none (every time the same)"))
print("| cuEventElapsedTime's resolution (cuda.h) | about 0.5 us |")
print(string.format("| empty kernel, %d back to back per event pair | %s |", R, b2b and string.format("%.3f us per launch", b2b / 1e3)
  or ("not measured: " .. (type(err) == "table" and err.message or tostring(err)):sub(1, 120))))
print(string.format("RESULT | event times (launch.lua) | smallest %.3f us, finest step %s%s | resolution about 0.5 us "
  .. "(cuda.h) | - |", min_ns / 1e3, step and string.format("%.3f us", step / 1e3) or "-",
  b2b and string.format(", %.3f us per launch back to back", b2b / 1e3) or ""))
