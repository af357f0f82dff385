-- ffi_spec.lua: under LuaJIT, arrays and trace buffers are reachable through
-- the FFI without copying (array:ptr(), trace:ptr()).  Skipped under Lua 5.4.
local h = require "helpers"
local mgpu = require "mgpu"

describe("FFI access (LuaJIT)", function()
  local ok, ffi = pcall(require, "ffi")
  if not ok then
    pending("not LuaJIT")
    return
  end

  it("sees and changes an emu array in place", function()
    local dev = mgpu.device("emu")
    local a = dev:array("f32", 8, { fill = "ramp", start = 1 })
    local p = ffi.cast("float *", a:ptr())
    assert.equal(1, p[0])
    assert.equal(8, p[7])
    p[3] = 42
    assert.equal(42, a:read(4)) -- the same memory: no copy
  end)

  it("reads a trace buffer in place", function()
    local dev = mgpu.device("emu")
    local k = dev:load(h.fixtures .. "/copy_bounds_wg.ptx"):kernel("body_mosaic_gpu_kernel")
    local x = dev:array("bf16", 128 * 128)
    local run = k:launch { grid = 8, block = 128, smem = 128, args = { x, dev:array("bf16", 128 * 128), mgpu.TRACE },
      profile = { scope = "warpgroup", entries = 32, names = { "Init", "load", "store" } } }
    local ptr, n = run.trace:ptr()
    assert.equal(8 * 32, n)
    local w = ffi.cast("uint32_t *", ptr)
    assert.equal(28, w[2])          -- header word 2 of trace 0: 14 events
    assert.equal(0x80000000, w[5])  -- Init ends
    local words = run.trace:words()
    for i = 0, n - 1 do assert.equal(words[i + 1], w[i]) end
  end)
end)
