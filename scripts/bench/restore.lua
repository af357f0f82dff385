-- restore.lua - what keeping the inputs of a retry costs on emu: an
-- instrumented in-place update (tests/ptx/side_effects.ptx scale_in_place)
-- launched with enough entries, with profile.restore on (the array is copied
-- before every launch that may retry) and off, alternating, in one run.
-- usage: build/mgpu-harness scripts/bench/restore.lua [SOURCE_DIR] [N] [REPS]
local core = require "mgpu.core"
local src = arg[1] or "."
local n = tonumber(arg[2] or "") or 1048576
local reps = tonumber(arg[3] or "") or 5
local dev = core.device("emu")
local k = dev:load(src .. "/tests/ptx/side_effects.ptx", { instrument = "warp" }):kernel("scale_in_place")
local x = dev:array("f32", n, { fill = "ramp" })
local grid, block = 264, 256
local per_warp = math.ceil(n / (grid * block)) * 2 * 2 + 3
local function launch(restore)
  local t0 = core.now()
  local r = k:launch { grid = grid, block = block, args = { x, 1.0, 0.0, n },
    profile = { entries = per_warp, restore = restore } }
  assert(#r.attempts == 1, "sized right: no retry")
  return core.now() - t0
end
launch(true)
local on, off = {}, {}
for i = 1, reps do
  on[i], off[i] = launch(true), launch(false)
end
table.sort(on)
table.sort(off)
local mon, moff = on[math.ceil(reps / 2)], off[math.ceil(reps / 2)]
print(string.format("restore bench: %d floats (%.1f MB written in place), grid %d x %d, %d repeats (median)", n,
  n * 4 / 1e6, grid, block, reps))
print(string.format("  restore on  %.1f ms per launch", mon * 1e3))
print(string.format("  restore off %.1f ms per launch", moff * 1e3))
print(string.format("  cost of the copy: %.2f ms, %.1f%% of the launch (ratio %.3f)", (mon - moff) * 1e3,
  (mon - moff) / moff * 100, mon / moff))
