-- tile_work.lua: scripts/examples/tile_sweep.lua with 6 dependent FMAs per
-- element in the compute region (ptx/tiled.ptx's tiled_scale_work): the same
-- experiment name and points, so `mgpu-harness report RUN_A RUN_B` compares
-- them (docs/report.md's comparison screenshot; compute grows, the rest stays).
local base = dofile((debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or ".") .. "/../../scripts/examples/tile_sweep.lua")
local exp = {}
for k, v in pairs(base) do exp[k] = v end
exp.module = "../../ptx/tiled.ptx"
exp.kernel = "tiled_scale_work"
exp.setup = function(p, dev)
  local spec = base.setup(p, dev)
  spec.args[#spec.args + 1] = 6 -- work
  return spec
end
return exp
