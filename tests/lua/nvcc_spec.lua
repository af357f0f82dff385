-- nvcc_spec.lua: CUDA C modules: dev:load("k.cu") and `module = "k.cu"` in an
-- experiment compile with nvcc and run what it made; nvcc's errors reach the
-- user as compile_failed with its log; without nvcc, a not_found that says
-- where it looked.  The tests that need nvcc are pending where it is absent.
local h = require "helpers"
local core = require "mgpu.core"
local nvcc = require "mgpu.nvcc"

local have_nvcc = nvcc.find() ~= nil

-- Runs a Lua script with mgpu-harness, the PTX written under dir/cache.
local function run_script(dir, body, env)
  h.write(dir .. "/s.lua", body)
  return h.run_env("MGPU_CACHE=" .. h.quote(dir .. "/cache") .. " " .. (env or ""), dir .. "/s.lua")
end

describe("CUDA C modules", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.rmdir(dir) end)

  it("compile a .cu with nvcc, instrument it and run it on emu", function()
    if not have_nvcc then return pending("nvcc not found") end
    local st, out, err = run_script(dir, string.format([[
      local mgpu = require "mgpu"
      local dev = mgpu.device("emu")
      local k = dev:load(%q, { instrument = "warp" }):kernel("tiled_scale")
      local n = 512
      local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
      local run = k:launch { grid = 2, block = 64, smem = 256, args = { a, c, n, 2.0 }, profile = { entries = 200 } }
      -- ptx/tiled.cu: lane l takes tile[(t' + 1) %% 64] from lane t' = (l + 31) %% 32 of its warp, x 2, + tile
      local v = c:read()
      for i = 0, n - 1 do
        local k, t = i // 64, i %% 64
        local src = t - t %% 32 + (t %% 32 + 31) %% 32
        local want = (k * 64 + (src + 1) %% 64) * 2 + k
        assert(v[i + 1] == want, "element " .. i .. ": " .. v[i + 1] .. ", want " .. want)
      end
      local rows = run.trace:summary()
      print("tiles " .. rows[1].name .. " " .. rows[1].count)
    ]], h.src .. "/ptx/tiled.cu"))
    assert.equal(0, st, err)
    -- 512 elements in tiles of 64 = 8 tiles, each gone through by the 2 warps of its block
    assert.matches("tiles tile 16", out)
    -- the PTX is where messages point: the cache folder, named after the source and its hash
    local p = io.popen("cd " .. h.quote(dir .. "/cache") .. " && ls *.ptx")
    local listing = p:read("*a")
    p:close()
    assert.matches("^tiled%-%x+%.ptx\n$", listing)
    local ptx = h.read(dir .. "/cache/" .. listing:sub(1, -2))
    assert.matches("%.target sm_90", ptx)
    assert.matches("// @mgpu begin load", ptx)
  end)

  it("report nvcc's errors as compile_failed with its log, and check arch", function()
    if not have_nvcc then return pending("nvcc not found") end
    h.write(dir .. "/bad.cu", "__global__ void k(float *x) { x[0] = undefined_name; }\n")
    local st, out, err = run_script(dir, string.format([[
      local dev = require("mgpu").device("emu")
      local ok, e = pcall(dev.load, dev, %q)
      print(e.code, e.message)
      print("log: " .. e.log)
      ok, e = pcall(dev.load, dev, %q, { arch = "volta" })
      print(e.code, e.message)
      local m = dev:load(%q, { arch = "sm_80", nvcc_flags = { "-O1" } })
      print("kernels " .. #m:kernels())
    ]], dir .. "/bad.cu", dir .. "/bad.cu", h.src .. "/ptx/copy.cu"))
    assert.equal(0, st, err)
    assert.matches("compile_failed\t[^\n]*bad%.cu: nvcc failed: [^\n]*identifier \"undefined_name\" is undefined", out)
    assert.matches("\nlog: [^\n]*error", out)
    assert.matches("bad_argument\tarch must be like \"sm_90\"", out)
    assert.matches("kernels %d", out)
    -- uncaught, it ends the script with exit status 3 (bad input), as a JIT error does
    st, _, err = run_script(dir, string.format("require('mgpu').device('emu'):load(%q)", dir .. "/bad.cu"))
    assert.equal(3, st)
    assert.matches("%[compile_failed%]", err)
    local p = io.popen("grep -l 'target sm_80' " .. h.quote(dir .. "/cache") .. "/copy-*.ptx")
    assert.matches("copy%-%x+%.ptx", p:read("*a"))
    p:close()
  end)

  it("let any source include mgpu_markers.h, the same as ptx/'s", function()
    assert.equal(h.read(h.src .. "/ptx/mgpu_markers.h"), nvcc.MARKERS_H)
    if not have_nvcc then return pending("nvcc not found") end
    h.write(dir .. "/mine.cu", '#include "mgpu_markers.h"\n'
      .. 'extern "C" __global__ void mine(float *x) { MGPU_BEGIN("work"); x[threadIdx.x] *= 2.0f; MGPU_END("work"); }\n')
    local st, out, err = run_script(dir, string.format([[
      local dev = require("mgpu").device("emu")
      local x = dev:array("f32", 32, { fill = "ramp" })
      local r = dev:load(%q, { instrument = "warp" }):kernel("mine"):launch { grid = 1, block = 32, args = { x }, profile = { entries = 7 } }
      print(x:read(3), r.trace:summary()[1].name, r.trace:summary()[1].count)
    ]], dir .. "/mine.cu"))
    assert.equal(0, st, err)
    assert.matches("^4%.0\twork\t1", out)
  end)

  it("compile for the device's architecture on the cuda backend (fake driver)", function()
    local fake = os.getenv("MGPU_FAKE_CUDA")
    if not fake then return pending("MGPU_FAKE_CUDA is not set") end
    if not have_nvcc then return pending("nvcc not found") end
    local script = string.format([[
      local mgpu = require "mgpu"
      local dev = mgpu.device("cuda")
      local m = dev:load(%q)
      print("arch " .. dev.arch .. " kernels " .. #m:kernels())
      -- an instrumented module with markers in .funcs goes to the driver too
      local k = dev:load(%q, { instrument = "warp" }):kernel("func_markers")
      print("params " .. #k:params())
    ]], h.src .. "/ptx/copy.cu", h.src .. "/tests/ptx/func_markers.ptx")
    for _, cc in ipairs({ "90", "100" }) do -- sm_90 PTX (func_markers) runs on 10.0 too
      local st, out, err = run_script(dir, script, "MGPU_LIBCUDA=" .. h.quote(fake) .. " FAKE_CUDA_CC=" .. cc)
      assert.equal(0, st, err)
      assert.matches("arch sm_" .. cc .. " kernels %d+\nparams 4\n", out)
      local p = io.popen("grep -l 'target sm_" .. cc .. "$' " .. h.quote(dir .. "/cache") .. "/copy-*.ptx")
      assert.matches("copy%-%x+%.ptx", p:read("*a"))
      p:close()
    end
  end)

  it("say where nvcc was looked for when there is none", function()
    h.write(dir .. "/k.cu", "__global__ void k() {}\n")
    local st, out, err = run_script(dir, string.format([[
      local dev = require("mgpu").device("emu")
      local ok, e = pcall(dev.load, dev, %q)
      print(e.code, e.message)
      ok, e = pcall(dev.load, dev, %q)
      print(e.code, e.message)
    ]], dir .. "/k.cu", dir .. "/none.cu"), "MGPU_NVCC=/nonexistent/nvcc")
    assert.equal(0, st, err)
    assert.matches("not_found\t[^\n]*k%.cu: compiling CUDA C needs nvcc %(the CUDA toolkit%), not found in "
      .. "MGPU_NVCC=/nonexistent/nvcc %(no such file%); set MGPU_NVCC, or load the PTX instead", out)
    assert.matches("\nnot_found\t[^\n]*none%.cu: cannot open", out)
  end)

  it("run an experiment whose module is a .cu, recording the PTX it made", function()
    if not have_nvcc then return pending("nvcc not found") end
    h.write(dir .. "/exp.lua", string.format([[
      return {
        name = "cu_exp", module = %q, kernel = "tiled_scale", instrument = "warp",
        axes = { n = { 256 } }, warmup = 0, repeats = 1,
        setup = function(p, dev)
          local a, c = dev:array("f32", p.n, { fill = "ramp" }), dev:array("f32", p.n)
          return { grid = 2, block = 64, smem = 256, args = { a, c, p.n, 1.0 }, estimate = 16,
                   expect = { tile = 8, load = 8 } }
        end,
      }
    ]], h.src .. "/ptx/tiled.cu"))
    local st, out, err = h.run_env("MGPU_CACHE=" .. h.quote(dir .. "/cache"), dir .. "/exp.lua", "--out", dir .. "/r")
    assert.equal(0, st, err .. out)
    local man = core.json_decode(h.read(dir .. "/r/manifest.json"))
    assert.matches("tiled%.cu$", man.ptx[1].path)
    assert.equal(core.sha256_file(h.src .. "/ptx/tiled.cu"), man.ptx[1].sha256)
    -- the PTX is kept in the results folder (issue 35: a folder that points into the cache is not
    -- self-contained), with nvcc's version
    assert.equal("builds/build-1.ptx", man.compiled.ptx)
    assert.equal(core.sha256_file(dir .. "/r/" .. man.compiled.ptx), man.compiled.sha256)
    assert.matches("^release ", man.compiled.nvcc)
    assert.equal("sm_90", man.compiled.arch)
    assert.same({ "-O3", "-lineinfo" }, man.compiled.nvcc_flags)
  end)
end)
