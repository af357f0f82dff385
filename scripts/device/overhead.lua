-- overhead.lua: slowdown of the tiled kernel instrumented against plain, with
-- the rate of recorded events (issue 5 target on an H200: under 3% when it
-- records about one event per microsecond).  Median of `repeats` launches
-- each.  On emu the times are virtual: the figures only check the pipeline.
--   mgpu-harness scripts/device/overhead.lua [emu|cuda] [REPEATS]
local mgpu = require "mgpu"

local here = (arg and arg[0] or ""):match("^(.*)/scripts/device/[^/]*$") or "."
local dev = mgpu.device(arg[1] or "auto")
local repeats = tonumber(arg[2]) or 21
local path = here .. "/ptx/tiled.ptx"
local block, grid, tiles = 256, 132, 132 * 64
local n = block * tiles
local a = dev:array("f32", n, { fill = "random", seed = 1, min = -1, max = 1 })
local c = dev:array("f32", n)
local args = { a, c, n, 0.5 }

local function median(k, profile)
  local t = {}
  for i = 1, repeats + 1 do
    local run = k:launch { grid = grid, block = block, smem = block * 4, args = args, profile = profile }
    if i > 1 then t[#t + 1] = run.time_ns end -- the first launch warms up
  end
  table.sort(t)
  return t[math.floor((#t + 1) / 2)]
end

local plain = median(dev:load(path):kernel("tiled_scale"))
local per_warp = math.floor(tiles / grid) * 8 -- tile, load, compute, store: begin + end per tile
local inst_k = dev:load(path, { instrument = "warp" }):kernel("tiled_scale")
local inst = median(inst_k, { entries = mgpu.entries_for(per_warp) })
local events = grid * (block / 32) * per_warp
print(string.format("device: %s (%s); %d launches each", dev.name, dev.backend, repeats))
print("| kernel | median time | events recorded | events per us per warp |")
print("|---|---|---|---|")
print(string.format("| tiled.ptx plain | %.1f us | - | - |", plain / 1e3))
print(string.format("| tiled.ptx instrumented | %.1f us | %d | %.2f |", inst / 1e3, events, per_warp / (inst / 1e3)))
print(string.format("slowdown: %+.2f%% (target on an H200: under 3%%)", 100 * (inst - plain) / plain))
