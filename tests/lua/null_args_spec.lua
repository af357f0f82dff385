-- null_args_spec.lua: mgpu.null, a null pointer wherever an array is taken (issue 22,
-- "Arguments"), on emu and on the cuda backend (fake driver); every array's address a multiple
-- of 256, as cuMemAlloc gives.
local h = require "helpers"
local mgpu = require "mgpu"

-- out[0] = 1 when p is null, else 2; out[1] = p; out[2] = out's own address
local PTX = [[
.version 8.0
.target sm_90
.address_size 64

.visible .entry which(.param .u64 p, .param .u64 out)
{
  .reg .pred %q;
  .reg .u64 %rd<6>;
  ld.param.u64 %rd1, [p];
  ld.param.u64 %rd2, [out];
  setp.eq.u64 %q, %rd1, 0;
  selp.u64 %rd3, 1, 2, %q;
  st.global.u64 [%rd2], %rd3;
  st.global.u64 [%rd2+8], %rd1;
  st.global.u64 [%rd2+16], %rd2;
  ret;
}

.visible .entry from_struct(.param .align 8 .b8 s[16], .param .u64 out)
{
  .reg .u64 %rd<4>;
  ld.param.u64 %rd1, [s];
  ld.param.u64 %rd2, [out];
  st.global.u64 [%rd2], %rd1;
  ret;
}
]]

describe("mgpu.null", function()
  it("passes a null pointer on emu, and every array is 256-byte aligned", function()
    local dev = mgpu.device("emu")
    local k = dev:load { source = PTX, name = "null.ptx" }:kernel("which")
    local out = dev:array("u64", 3)
    k:launch { grid = 1, block = 1, args = { mgpu.null, out } }
    assert.same({ 1, 0 }, { out:read(1), out:read(2) })
    assert.equal(0, out:read(3) % 256)
    -- arrays of odd sizes one after another: each address a multiple of 256
    local arrays = {}
    for i, n in ipairs { 1, 3, 257, 100, 4097, 5 } do arrays[i] = dev:array("u8", n) end
    for _, a in ipairs(arrays) do
      k:launch { grid = 1, block = 1, args = { a, out } }
      assert.equal(2, out:read(1))
      assert.equal(0, out:read(2) % 256, "address " .. out:read(2))
    end
    -- a struct's ptr field takes it too
    local ks = dev:load { source = PTX, name = "null.ptx" }:kernel("from_struct")
    out:write { 7, 7, 7 }
    ks:launch { grid = 1, block = 1, args = { mgpu.struct { { "ptr", mgpu.null }, { "u64", 9 } }, out } }
    assert.equal(0, out:read(1))
    -- 0.0 is a null pointer too (it was refused as "not number"); an f32 past its range is refused
    -- (it became inf); mgpu.null for a number parameter says mgpu.null (it said "an array")
    out:write { 7, 7, 7 }
    ks:launch { grid = 1, block = 1, args = { mgpu.struct { { "ptr", 0.0 }, { "u64", 9 } }, out } }
    assert.equal(0, out:read(1))
    local ok0, e0 = pcall(mgpu.struct, { { "f32", 1e300 } })
    assert.is_false(ok0)
    assert.matches("beyond an f32's range", e0.message)
    local knum = dev:load { source = ".version 8.0\n.target sm_90\n.address_size 64\n"
      .. ".visible .entry n(.param .u32 x)\n{\nret;\n}\n", name = "n.ptx" }:kernel("n")
    local okn, en = pcall(knum.launch, knum, { grid = 1, block = 1, args = { mgpu.null } })
    assert.is_false(okn)
    assert.matches("got mgpu.null: it is not a pointer", en.message)
    -- a kernel that dereferences it faults, naming the address
    local deref = dev:load { source = PTX:gsub("setp.eq.u64 %%q, %%rd1, 0;", "ld.global.u64 %%rd4, [%%rd1];\n  setp.eq.u64 %%q, %%rd1, 0;"),
      name = "deref.ptx" }:kernel("which")
    local ok, err = pcall(deref.launch, deref, { grid = 1, block = 1, args = { mgpu.null, out } })
    assert.is_false(ok)
    assert.equal("kernel_fault", err.code)
  end)

  it("passes a null pointer on the cuda backend (fake driver)", function()
    local fake = os.getenv("MGPU_FAKE_CUDA")
    if not fake then return end
    local dev = mgpu.device("cuda", { driver = fake })
    local k = dev:load { source = PTX, name = "null.ptx" }:kernel("which")
    local run = k:launch { grid = 1, block = 1, args = { mgpu.null, dev:array("u64", 3) } }
    assert.equal("cuda", run.backend)
  end)
end)
