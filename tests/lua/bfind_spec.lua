-- bfind_spec.lua: bfind on emu (tests/ptx/bfind.cu), every form (.u32 .s32 .u64 .s64, with and
-- without .shiftamt) on values whose answers are worked out by hand from the PTX ISA's rule: the
-- most significant bit set (of ~a for a negative signed a), 0xffffffff when there is none, and
-- .shiftamt the left shift that takes that bit to the top.  Before, every bfind was refused
-- ("instruction 'bfind.shiftamt.u32' is not supported by emu": cuda-samples' warpAggregatedAtomicsCG).
local mgpu = require "mgpu"
local h = require "helpers"

describe("bfind on emu", function()
  local dev = mgpu.device("emu")
  local k = dev:load(h.src .. "/tests/ptx/bfind.ptx"):kernel("bfind_forms")
  local none = 4294967295
  -- w, then u32 shiftamt.u32 s32 shiftamt.s32 (of w's low 32 bits) u64 shiftamt.u64 s64 shiftamt.s64
  local cases = {
    { 0, none, none, none, none, none, none, none, none },
    { 1, 0, 31, 0, 31, 0, 63, 0, 63 },
    { -1, 31, 0, none, none, 63, 0, none, none },
    { 2 ^ 40 + 5, 2, 29, 2, 29, 40, 23, 40, 23 },
    { -(2 ^ 62), none, none, none, none, 63, 0, 61, 2 },
    { 2147483647, 30, 1, 30, 1, 30, 33, 30, 33 },
    { 2147483648, 31, 0, 30, 1, 31, 32, 31, 32 },
    { -3, 31, 0, 1, 30, 63, 0, 1, 62 },
    { 2 ^ 62, none, none, none, none, 62, 1, 62, 1 },
    { 6, 2, 29, 2, 29, 2, 61, 2, 61 },
  }

  it("gives each form's bit position or shift, and 0xffffffff for no bit", function()
    local ins = {}
    for i, c in ipairs(cases) do ins[i] = c[1] end
    local n = #cases
    local x, out = dev:array("i64", ins), dev:array("u32", 8 * n)
    k:launch { grid = 1, block = 32, args = { x, out, n } }
    local got = out:read()
    for i, c in ipairs(cases) do
      for f = 1, 8 do
        assert.are.equal(c[f + 1], got[8 * (i - 1) + f], string.format("input %s, form %d", tostring(c[1]), f))
      end
    end
  end)
end)
