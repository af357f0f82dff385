-- kernel_info_spec.lua: kernel:info() on emu (issue 24): local_bytes is each kernel's own .local
-- bytes, with those of the .funcs it calls, not the module's for every kernel.
local mgpu = require "mgpu"

local PTX = [[
.version 8.0
.target sm_90
.address_size 64

.func helper(.param .u64 p)
{
  .local .align 8 .b8 scratch[64];
  .reg .u64 %rd<3>;
  mov.u64 %rd1, scratch;
  ld.param.u64 %rd2, [p];
  st.local.u64 [%rd1], %rd2;
  ret;
}

.visible .entry big(.param .u64 out)
{
  .local .align 4 .b8 buf[1024];
  .reg .u64 %rd<3>;
  mov.u64 %rd1, buf;
  st.local.u32 [%rd1], 1;
  ret;
}

.visible .entry none(.param .u64 out)
{
  ret;
}

.visible .entry calls(.param .u64 out)
{
  .local .align 4 .b8 mine[20];
  .reg .u64 %rd<3>;
  ld.param.u64 %rd1, [out];
  {
  .param .u64 a;
  st.param.u64 [a], %rd1;
  call helper, (a);
  }
  ret;
}
]]

describe("kernel:info", function()
  it("gives each kernel its own local bytes, with the .funcs it calls", function()
    local dev = mgpu.device("emu")
    local m = dev:load { source = PTX, name = "locals.ptx" }
    assert.equal(1024, m:kernel("big"):info().local_bytes)
    assert.equal(0, m:kernel("none"):info().local_bytes) -- was 1108: the module's
    assert.equal(64 + 20, m:kernel("calls"):info().local_bytes) -- helper's 64, then its own 20 (align 4)
    -- and they still run: each launch gets the local memory of what it reaches
    local out = dev:array("u64", 1)
    for _, k in ipairs { "big", "none", "calls" } do
      m:kernel(k):launch { grid = 1, block = 32, args = { out } }
    end
  end)
end)
