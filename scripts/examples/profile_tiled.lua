-- profile_tiled.lua: profile a kernel of your own from its markers.
-- ptx/tiled.cu marks its regions with MGPU_BEGIN("load") ... MGPU_END("load");
-- loading the PTX with instrument = "warp" rewrites the markers into trace
-- stores. The first launch is given too few entries on purpose: the kernel
-- counts past the capacity, so the harness re-runs it once with exactly the
-- entries it needed. Runs on emu without a GPU (virtual, deterministic time).
--   mgpu-harness scripts/examples/profile_tiled.lua [OUT_DIR]
local mgpu = require "mgpu"

local here = (arg and arg[0] or ""):match("^(.*)/scripts/examples/[^/]*$") or "."
local out_dir = mgpu.script_dir("results/profile_tiled")

local dev = mgpu.device()
local kernel = dev:load(here .. "/ptx/tiled.ptx", { instrument = "warp" }):kernel("tiled_scale")
local block, tiles = 128, 24
local n = block * tiles
local a = dev:array("f32", n, { fill = "random", seed = 1, min = -1, max = 1 })
local c = dev:array("f32", n)
local run = kernel:launch {
  grid = 4, block = block, smem = block * 4,
  args = { a, c, n, 0.5 },
  profile = { entries = 32 },
}
for i, at in ipairs(run.attempts) do
  print(string.format("attempt %d: entries_per_warpgroup %d, kernel needed %d", i, at.entries, at.required))
end
local d = run.trace:dump(out_dir .. "/trace.json")
print(string.format("%s: %d events from %d traces -> %s/trace.json", dev.backend, d.events, d.traces_with_events, out_dir))
print(string.format("%-8s %6s %10s %10s %10s", "region", "count", "mean", "median", "max"))
for _, r in ipairs(d.summary) do
  print(string.format("%-8s %6d %7.0f %s %7d %s %7d %s", r.name, r.count, r.mean, d.unit, r.median, d.unit, r.max, d.unit))
end
