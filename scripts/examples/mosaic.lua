-- mosaic.lua: the JAX Mosaic GPU kernel tests/fixtures/mosaic-h200/copy_bounds_wg.ptx
-- as the harness's user gets it: it writes its own trace (third parameter),
-- stages events in 128 bytes of dynamic shared memory, names Init/load/store,
-- entries_per_warpgroup 32 (the value it was generated with), warpgroup scope.
--   mgpu-harness scripts/examples/mosaic.lua
local mgpu = require "mgpu"

return {
  name = "mosaic_copy",
  module = "../../tests/fixtures/mosaic-h200/copy_bounds_wg.ptx",
  kernel = "body_mosaic_gpu_kernel",
  -- staged: the kernel keeps its events in dynamic shared memory until the end,
  -- so the harness gives it traces per block x entries x 4 bytes (128 here)
  profile = { scope = "warpgroup", entries = 32, names = { "Init", "load", "store" }, staged = true },
  axes = { seed = { 1, 2 } },
  setup = function(p, dev)
    local x = dev:array("bf16", 128 * 128, { fill = "random", seed = p.seed, min = -8, max = 8 })
    local y = dev:array("bf16", 128 * 128)
    return {
      grid = 8, block = 128,
      args = { x, y, mgpu.TRACE },
      -- one Init per block, three load/store steps per block (the kernel's loop)
      expect = { Init = 8, load = 24, store = 24 },
      check = function()
        local c = y:compare(x)
        return c.mismatches == 0, c.mismatches .. " elements differ"
      end,
    }
  end,
}
