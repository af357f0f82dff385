-- emu_mosaic.lua: runs a real JAX Mosaic GPU kernel (tests/fixtures/mosaic-h200/
-- copy_bounds_wg.ptx, LLVM NVPTX output, unchanged) on the selected device,
-- with the trace buffer the kernel writes itself, checks that the copy is
-- right, and dumps the trace.  Without a GPU the device is emu, whose clock
-- is virtual: its times are deterministic, not GPU timings.
--   mgpu-harness scripts/examples/emu_mosaic.lua [OUT_DIR]
local mgpu = require "mgpu"

local here = (arg and arg[0] or ""):match("^(.*)/scripts/examples/[^/]*$") or "."
local out_dir = mgpu.script_dir("results/emu_mosaic")

local dev = mgpu.device()
local mod = dev:load(here .. "/tests/fixtures/mosaic-h200/copy_bounds_wg.ptx")
local kernel = mod:kernel("body_mosaic_gpu_kernel")

local n = 128 * 128
local x = dev:array("bf16", n, { fill = "random", seed = 42, min = -4, max = 4 })
local y = dev:array("bf16", n)
local run = kernel:launch {
  grid = 8, block = 128, smem = 128,
  args = { x, y, mgpu.TRACE },
  -- the kernel was generated with entries_per_warpgroup = 32, warpgroup scope
  profile = { scope = "warpgroup", entries = 32, names = { "Init", "load", "store" } },
}
local cmp = y:compare(x)
print(string.format("device: %s; output %s input (%d mismatches)", dev.name,
  cmp.mismatches == 0 and "==" or "~=", cmp.mismatches))
print(string.format("%d warp instructions, %d thread instructions, %.0f virtual ns",
  run.warp_insns, run.thread_insns, run.time_ns))
local d = run.trace:dump(out_dir .. "/trace.json")
print(string.format("trace: %d events -> %s/trace.json (%s)", d.events, out_dir, d.unit))
for _, r in ipairs(d.summary) do
  print(string.format("  %-6s count %3d  mean %8.1f %s  max %6d %s", r.name, r.count, r.mean, d.unit, r.max, d.unit))
end
if cmp.mismatches ~= 0 then os.exit(1) end
