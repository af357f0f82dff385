-- overflow_retry.lua: starts with too few trace entries on purpose and
-- recovers.  The persistent kernel's warps take work items from a counter,
-- so how many regions a warp records is not known in advance; the estimate
-- here is far too small.  The instrumented kernel counts past its capacity,
-- the point re-runs once with exactly the entries it needed (after `before`
-- resets the work counter), and the attempts are recorded in results.jsonl.
--   mgpu-harness scripts/examples/overflow_retry.lua
local mgpu = require "mgpu"

return {
  name = "overflow_retry",
  module = "../../ptx/persistent.ptx",
  kernel = "persistent_rows",
  instrument = "warp",
  axes = { items = { 40, 200 } },
  warmup = 0, repeats = 1,
  setup = function(p, dev)
    local width, grid = 64, 4
    local x = dev:array("i32", p.items * width, { fill = "random", seed = 5, min = -100, max = 100 })
    local out = dev:array("i32", p.items)
    local counter = dev:array("u32", 1)
    local done = dev:array("u32", grid)
    return {
      grid = grid, block = 32,
      args = { x, out, counter, done, p.items, width },
      estimate = 4, -- far too few: each warp does about items / grid work items
      before = function() counter:zero(); done:zero() end, -- every launch starts from item 0
      check = function()
        local total = 0
        for _, v in ipairs(done:read()) do total = total + v end
        return total == p.items, "blocks processed " .. total .. " items"
      end,
    }
  end,
}
