-- launch.lua: what one launch costs through the Lua API (kernel:launch, with
-- its argument checks against the PTX signature and the result table; with
-- and without event timing), on an empty kernel with one pointer argument; build/launchbench
-- measures the C launch path against a bare cuLaunchKernel loop in the same
-- device check, so the two tables together show where the time goes.
--   mgpu-harness scripts/device/launch.lua [emu|cuda] [N]
local core = require "mgpu.core"
local mgpu = require "mgpu"

local dev = mgpu.device(arg[1] or "auto")
local n = tonumber(arg[2]) or 20000
local src = ".version 8.0\n.target sm_90\n.address_size 64\n"
  .. ".visible .entry empty(.param .u64 p)\n{\nret;\n}\n"
local k = dev:load({ name = "empty.ptx", source = src }):kernel("empty")
local x = dev:array("u32", 32)
local function per_launch(launch)
  for _ = 1, math.min(n, 100) do k:launch(launch) end -- warm up
  local t0, min_ns = core.now(), math.huge
  for _ = 1, n do
    local run = k:launch(launch)
    if run.time_ns and run.time_ns > 0 and run.time_ns < min_ns then min_ns = run.time_ns end
  end
  return (core.now() - t0) / n, min_ns
end
local untimed = per_launch { grid = 1, block = 32, args = { x }, time = false }
local timed, min_ns = per_launch { grid = 1, block = 32, args = { x } }
print(string.format("device: %s (%s)", dev.name, dev.backend))
print("| launches | Lua kernel:launch (checked), time = false | event-timed | smallest launch time |")
print("|---|---|---|---|")
print(string.format("| %d | %.2f us | %.2f us | %.3f us |", n, untimed * 1e6, timed * 1e6, min_ns / 1e3))
