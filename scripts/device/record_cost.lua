-- record_cost.lua: cycles per recorded event, the harness's bounds-checked
-- markers against Mosaic GPU's `st.shared.v2.u32 [a], {tag, %clock}` record,
-- in the same tight loop on one warp (ptx/record_cost.cu), measured with
-- %clock around the loop.  Target (issue 5, on an H200): no worse than 1.15x.
-- On emu the cycles are virtual: the figures only check the pipeline.
--   mgpu-harness scripts/device/record_cost.lua [emu|cuda]
local mgpu = require "mgpu"

local here = (arg and arg[0] or ""):match("^(.*)/scripts/device/[^/]*$") or "."
local dev = mgpu.device(arg[1] or "auto")
local path = here .. "/ptx/record_cost.ptx"
local n = 4096
local out = dev:array("u32", 1)

local plain = dev:load(path):kernel("mosaic_records")
plain:launch { grid = 1, block = 32, args = { out, n } }
local mosaic = out:read(1) / n

local inst = dev:load(path, { instrument = "warp" }):kernel("marker_records")
inst:launch { grid = 1, block = 32, args = { out, n }, profile = { entries = mgpu.entries_for(n) } }
local marker = out:read(1) / n

print(string.format("device: %s (%s)", dev.name, dev.backend))
print("| record | cycles per event |")
print("|---|---|")
print(string.format("| Mosaic st.shared.v2.u32 {tag, %%clock} | %.1f |", mosaic))
print(string.format("| harness marker (bounds-checked, global) | %.1f |", marker))
print(string.format("ratio: %.2fx (target on an H200: <= 1.15x)", marker / mosaic))
