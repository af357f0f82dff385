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

  it("release a waiting group only when its own members are all there", function()
    -- lanes 16-23 reach the redux first and wait for their group (16-31); lanes 0-15 come next, a
    -- group of their own, complete; lanes 24-31 come last. Before, the second arrival released the
    -- waiting lanes too: lanes 16-23 and then 24-31 summed over 8 lanes each, silently.
    local src = [[
.version 8.0
.target sm_90
.address_size 64
.visible .entry three_way(.param .u64 pout)
{
	.reg .b32 %r<8>;
	.reg .pred %p<3>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [pout];
	mov.u32 %r1, %tid.x;
	mov.u32 %r4, 1;
	setp.ge.u32 %p1, %r1, 24;
	@%p1 bra ZPATH;
	setp.lt.u32 %p2, %r1, 16;
	@%p2 bra XPATH;
	mov.u32 %r2, -65536;
RED:
	redux.sync.add.u32 %r3, %r4, %r2;
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r3;
	ret;
XPATH:
	mov.u32 %r2, 65535;
	bra.uni RED;
ZPATH:
	mov.u32 %r2, -65536;
	bra.uni RED;
}
]]
    local m = dev:load { name = "three_way.ptx", source = src }
    local out = dev:array("u32", 32)
    m:kernel("three_way"):launch { grid = 1, block = 32, args = { out } }
    local got = out:read()
    for l = 1, 32 do assert.are.equal(16, got[l], "lane " .. (l - 1)) end
  end)
end)
