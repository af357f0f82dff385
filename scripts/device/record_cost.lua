-- record_cost.lua: cycles per recorded event, the harness's bounds-checked
-- markers against Mosaic GPU's `st.shared.v2.u32 [a], {tag, %clock}` record,
-- in the same tight loop on one warp (ptx/record_cost.cu), measured with
-- %clock around the loop.  Target (issue 5, on an H200): no worse than 1.15x.
-- On emu the cycles are virtual: the figures only check the pipeline.
--   mgpu-harness scripts/device/record_cost.lua [emu|cuda] [RUNS]
local mgpu = require "mgpu"
local timing = require "mgpu.timing"

local here = (arg and arg[0] or ""):match("^(.*)/scripts/device/[^/]*$") or "."
local dev = mgpu.device(arg[1] or "auto")
local path = here .. "/ptx/record_cost.ptx"
local n = 4096
local out = dev:array("u32", 1)

local runs = tonumber(arg[2]) or 7

-- cycles per event of `runs` launches: their median and smallest (the first
-- launch also pays for cold instruction caches)
local function cycles(k, profile)
  local t = {}
  for i = 1, runs do
    k:launch { grid = 1, block = 32, args = { out, n }, profile = profile }
    t[i] = out:read(1) / n
  end
  local s = timing.stats(t)
  return s.median, s.min
end

local mosaic, mosaic_min = cycles(dev:load(path):kernel("mosaic_records"))
local marker, marker_min = cycles(dev:load(path, { instrument = "warp" }):kernel("marker_records"),
  { entries = mgpu.entries_for(n) })

print(string.format("device: %s (%s)", dev.name, dev.backend))
print(string.format("median and smallest of %d launches each", runs))
print("| record | cycles per event (median) | smallest |")
print("|---|---|---|")
print(string.format("| Mosaic st.shared.v2.u32 {tag, %%clock} | %.1f | %.1f |", mosaic, mosaic_min))
print(string.format("| harness marker (bounds-checked, global) | %.1f | %.1f |", marker, marker_min))
print(string.format("ratio: %.2fx (target on an H200: <= 1.15x)", marker / mosaic))
print(string.format("RESULT | cost per event vs Mosaic's record | %.2fx (%.1f vs %.1f cycles) | <= 1.15x | %s |",
  marker / mosaic, marker, mosaic, marker / mosaic <= 1.15 and "met" or "MISSED"))
