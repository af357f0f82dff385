-- copy.lua: a minimal experiment: copy n floats (as float4) and check the output.
--   mgpu-harness scripts/examples/copy.lua [--set n=4096,65536]
local mgpu = require "mgpu"

return {
  name = "copy",
  module = "../../ptx/copy.ptx",
  kernel = "copy_f32x4",
  axes = { n = { 1 << 12, 1 << 16 } },
  setup = function(p, dev)
    local x = dev:array("f32", p.n, { fill = "random", seed = 1, min = -1, max = 1 })
    local y = dev:array("f32", p.n)
    return {
      grid = (p.n // 4 + 255) // 256, block = 256,
      args = { x, y, p.n // 4 },
      check = function()
        local c = y:compare(x)
        return c.mismatches == 0, c.mismatches .. " elements differ"
      end,
    }
  end,
}
