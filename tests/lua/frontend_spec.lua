-- frontend_spec.lua: the PTX front end through the Lua API on real and hostile input (issue 12):
-- CUDA 13's fp16/bf16 headers (tests/ptx/fp16_headers.ptx, every device function of cuda_fp16.h
-- and cuda_bf16.h, one kernel each) load, and module:kernel() takes each kernel or refuses it by
-- name; nesting past the limit and markers inside directives are ptx_syntax errors with the line.
-- (tests/c/test_ptx_fp16.c checks every kernel's outputs against a reference.)
local h = require "helpers"
local mgpu = require "mgpu"

local HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"

local function load_error(dev, src)
  local ok, err = pcall(function() return dev:load { source = src, name = "t.ptx" } end)
  assert.is_false(ok)
  return err
end

describe("the PTX front end", function()
  local dev
  before_each(function() dev = mgpu.device("emu") end)

  it("loads the fp16 and bf16 headers' code and takes or refuses every kernel by name", function()
    local path = h.src .. "/tests/ptx/fp16_headers.ptx"
    local names = {}
    for line in io.lines(path) do
      local n = line:match("^%.visible %.entry ([%w_]+)%(")
      if n then names[#names + 1] = n end
    end
    assert.is_true(#names > 500)
    local m = dev:load(path)
    local taken, refused = 0, {}
    for _, n in ipairs(names) do
      local ok, err = pcall(m.kernel, m, n)
      if ok then
        taken = taken + 1
      else
        assert.equal("ptx_unsupported", err.code, n)
        assert.matches("fp16_headers%.ptx:%d+: instruction '[%w%.]+' is not supported by emu", err.message)
        refused[#refused + 1] = n
      end
    end
    -- what emu lacks: max/min.NaN, fma.relu, atom.add.noftz on halves (test_ptx_fp16.c lists them)
    assert.is_true(#refused <= 16, table.concat(refused, " "))
    assert.equal(#names, taken + #refused)

    -- hsqrt ("{.reg.b32 f; .reg.b16 r; ... sqrt.approx.ftz.f32 ...}") runs: 4 -> 2, 0.25 -> 0.5, 0, inf
    local k = m:kernel("h_hsqrt")
    local a = dev:array("u32", { 0x4400, 0x3400, 0x0000, 0x7c00 })
    local o = dev:array("u64", 4)
    k:launch { grid = 1, block = 4, args = { a, a, a, o } }
    assert.same({ 0x4000, 0x3800, 0x0000, 0x7c00 }, o:read())
  end)

  it("reads directives written without a space before their qualifiers", function()
    local m = dev:load { name = "t.ptx", source = HEAD .. [[
.visible .entry k(.param .u64 .ptr.global.align 8 p)
{
.reg.b64 %rd<3>;
{.reg.b32 f;
 .reg.b16 r;
 mov.b32 f, 0f40800000;
 sqrt.approx.ftz.f32 f, f;
 cvt.rn.f16.f32 r, f;
 ld.param.u64 %rd1, [p];
 cvta.to.global.u64 %rd2, %rd1;
 st.global.b16 [%rd2], r;
}
ret;
}
]] }
    local o = dev:array("u16", 1)
    m:kernel("k"):launch { grid = 1, block = 1, args = { o } }
    assert.same({ 0x4000 }, o:read())
  end)

  it("refuses PTX nested deeper than the limit with the line, and markers inside directives", function()
    local deep = HEAD .. ".visible .entry k()\n" .. string.rep("{\n", 50000) .. "ret;\n" .. string.rep("}\n", 50000)
    local err = load_error(dev, deep)
    assert.equal("ptx_syntax", err.code)
    assert.matches("t%.ptx:261: blocks nested deeper than 256", err.message)
    assert.equal(261, err.line)
    err = load_error(dev, HEAD .. ".visible .entry k()\n{\n.reg .b32\n// @mgpu begin a\nx;\n// @mgpu end a\nret;\n}\n")
    assert.equal("ptx_syntax", err.code)
    assert.matches("t%.ptx:7: a marker inside the directive '%.reg' that starts on line 6", err.message)
    err = load_error(dev, HEAD .. ".visible .entry k()\n{\n.loc 1 2 3\n// @mgpu begin a\n;\nret;\n}\n")
    assert.matches("t%.ptx:8: expected an instruction, found ';'", err.message)
  end)
end)
