-- warp_masks_spec.lua: vote, redux and match whose lanes name different member masks in one
-- instruction (tests/ptx/warp_masks.cu): each lane's result is over its own group (the lanes with
-- its key) alone, as cooperative groups' labeled_partition relies on.  Before, emu combined every
-- lane that ran the instruction: cuda-samples' warpAggregatedAtomicsCG put another bucket's
-- maximum into bucket 0 ("CPU max = 2147483578 mismatches GPU max = 2147483611").
local mgpu = require "mgpu"
local h = require "helpers"

describe("warp-synchronous instructions with a member mask per lane", function()
  local dev = mgpu.device("emu")
  local k = dev:load(h.src .. "/tests/ptx/warp_masks.ptx"):kernel("group_ops")

  it("reduce, vote and match over each lane's own group", function()
    local n = 64 -- two warps
    local keys, vals, lcg = {}, {}, 777
    for i = 1, n do
      lcg = (lcg * 1103515245 + 12345) % 2147483648
      keys[i] = math.floor(lcg / 65536) % 4
      lcg = (lcg * 1103515245 + 12345) % 2147483648
      vals[i] = math.floor(lcg / 65536) % 200
    end
    keys[33] = 9 -- a group of one lane
    local out = dev:array("u32", 7 * n)
    k:launch { grid = 1, block = n, args = { dev:array("i32", keys), dev:array("i32", vals), out } }
    local got = out:read()
    for i = 1, n do
      local w0 = math.floor((i - 1) / 32) * 32
      local group, mx, sum, ballot, all, any, parity_same = 0, -1, 0, 0, true, false, true
      for j = w0 + 1, w0 + 32 do
        if keys[j] == keys[i] then
          local bit = 2 ^ (j - w0 - 1)
          group = group + bit
          if vals[j] > mx then mx = vals[j] end
          sum = sum + vals[j]
          if vals[j] > 100 then ballot = ballot + bit; any = true else all = false end
          if vals[j] % 2 ~= vals[i] % 2 then parity_same = false end
        end
      end
      local want = { group, mx, sum, ballot, (all and 1 or 0) + (any and 2 or 0), parity_same and group or 0,
                     parity_same and 1 or 0 }
      for f = 1, 7 do
        assert.are.equal(want[f], got[7 * (i - 1) + f], string.format("thread %d (key %d), output %d", i - 1, keys[i], f - 1))
      end
    end
  end)
end)
