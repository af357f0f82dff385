-- bar_red_spec.lua: bar.red on emu (__syncthreads_count / _and / _or, tests/ptx/bar_red.cu):
-- every thread of a block gets the block's count, and, or of its threads' predicates, round
-- after round, in blocks of whole and partial warps; a thread count refused by name.
local mgpu = require "mgpu"
local h = require "helpers"

describe("bar.red on emu", function()
  local dev = mgpu.device("emu")
  local k = dev:load(h.src .. "/tests/ptx/bar_red.ptx"):kernel("votes")

  local function expect(vals, block, t)
    local b0 = math.floor(t / block) * block -- (no // : the specs run under LuaJIT too)
    local acc = 0
    for round = 1, 3 do
      local count = 0
      for i = b0, b0 + block - 1 do if vals[i * 3 + round] > 0 then count = count + 1 end end
      local all = count == block and 1 or 0
      local any = count > 0 and 1 or 0
      acc = (acc * 1000 + count * 4 + all * 2 + any) % 4294967296 -- the kernel's int wraps
    end
    return acc >= 2147483648 and acc - 4294967296 or acc
  end

  for _, shape in ipairs { { grid = 4, block = 128 }, { grid = 3, block = 100 }, { grid = 2, block = 1024 } } do
    it(string.format("gives every thread its block's count, and, or (grid %d, block %d)", shape.grid, shape.block), function()
      local n = shape.grid * shape.block
      local vals, lcg = {}, 12345
      for i = 1, 3 * n do
        lcg = (lcg * 1103515245 + 12345) % 2147483648
        vals[i] = math.floor(lcg / 65536) % 7 - 1 -- mostly positive: some blocks' rounds all true
      end
      for i = 1, 3 do vals[i] = 5 end -- and block 0's first threads vote yes
      if shape.block == 128 then -- block 1: all yes in round 1, all no in round 2
        for t = 128, 255 do vals[t * 3 + 1] = 1; vals[t * 3 + 2] = -1 end
      end
      local input = dev:array("i32", vals)
      local out = dev:array("i32", n)
      k:launch { grid = shape.grid, block = shape.block, args = { input, out } }
      local got = out:read()
      for t = 0, n - 1 do
        assert.equal(expect(vals, shape.block, t), got[t + 1], "thread " .. t)
      end
    end)
  end

  it("refuses a thread count by name at run time and a wrong type at load", function()
    local dir = h.tmpdir()
    local function ptx(body)
      local path = dir .. "/k.ptx"
      local f = assert(io.open(path, "w"))
      f:write(".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n.reg .pred %p<2>;\n.reg .b32 %r<2>;\n"
        .. "setp.eq.u32 %p1, 1, 1;\n" .. body .. "\nret;\n}\n")
      f:close()
      return path
    end
    local m = dev:load(ptx("bar.red.popc.u32 %r1, 0, 64, %p1;"))
    local ok, err = pcall(function() return m:kernel("k"):launch { grid = 1, block = 64, args = {} } end)
    assert.is_false(ok)
    assert.matches("bar.red with a thread count", err.message, 1, true)
    ok, err = pcall(function() return dev:load(ptx("bar.red.popc.pred %p1, 0, %p1;")) end)
    assert.is_false(ok)
    assert.equal("ptx_syntax", err.code)
    assert.matches("k.ptx:9: 'bar.red.popc.pred': bar.red is .popc.u32, .and.pred or .or.pred", err.message, 1, true)
    h.rmdir(dir)
  end)
end)
