-- tile_sweep.lua: a sweep over block size (= tile size) and problem size of
-- the tiled kernel, profiled from its markers (load / compute / store per
-- tile, nested in "tile"); the trace is sized from the number of tiles each
-- warp goes through, and each point checks how many regions the trace closed.
-- Points where a block would have no tile are skipped.
--   mgpu-harness scripts/examples/tile_sweep.lua [--set block=64,128] [--list]
local mgpu = require "mgpu"

return {
  name = "tile_sweep",
  module = "../../ptx/tiled.ptx",
  kernel = "tiled_scale",
  instrument = "warp",
  axes = { block = { 64, 128, 256 }, n = { 4096, 16384 } },
  filter = function(p) return p.n >= 4 * p.block end,
  repeats = 2,
  counters = 20, -- each trace also gets "regions in flight" counter tracks (20 slices of the span)
  setup = function(p, dev)
    local grid = 4
    local a = dev:array("f32", p.n, { fill = "ramp", step = 0.5 })
    local c = dev:array("f32", p.n)
    local tiles = (p.n + p.block - 1) // p.block
    local tiles_per_block = (tiles + grid - 1) // grid
    local per_name = tiles * (p.block // 32) -- every warp of a block goes through each of its tiles
    return {
      grid = grid, block = p.block, smem = p.block * 4,
      args = { a, c, p.n, 2.0 },
      estimate = tiles_per_block * 8, -- tile, load, compute, store: begin + end each
      expect = { tile = per_name, load = per_name, compute = per_name, store = per_name },
    }
  end,
}
