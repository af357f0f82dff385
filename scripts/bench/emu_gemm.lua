-- emu_gemm.lua: emu's predicted TFLOPS of warp-specialised bf16 GEMMs at a size of your choice
-- (issue 32): fast.cu's kernels as tests/corpus/fastcu/launches.lua recorded them at 256 x 256 x
-- 256, re-launched at N x N x N (their M, N, K, tensor maps, arrays and, for grid-tiled kernels,
-- grids scaled; persistent kernels keep their grid), and the project's tests/ptx/hopper_gemm.cu.
-- The inputs are zeros: only the virtual time is read.  0 names hopper_gemm.cu's ws_gemm.  Kernels
-- 6-9 do not run right on emu yet at 512 and up (exited cluster peers, writes outside C: issue 30
-- item 1's waits, as the corpus's xfails say), 10-12 ask for more shared memory than emu gives
-- (the module's other kernel's static array): they are tried when named, and say so.
--   mgpu-harness scripts/bench/emu_gemm.lua [N] [MODEL] [KERNEL-NUMBERS, default 5,0]
local mgpu = require "mgpu"

local here = (arg and arg[0] or ""):match("^(.*)/scripts/bench/[^/]*$") or "."
local N = tonumber(arg[1] or "4096")
local model = arg[2] or "h100-sxm"
local want = {}
for k in (arg[3] or "5,0"):gmatch("%d+") do want[tonumber(k)] = true end
local dev = mgpu.device("emu", { model = model })
local S = 256 -- the recorded size

local recorded = {}
local env = setmetatable({ launch = function(t) recorded[#recorded + 1] = t end }, { __index = _G })
assert(loadfile(here .. "/tests/corpus/fastcu/launches.lua", "t", env))()

local function scale(v) -- a size of the recording: 256 -> N, 4 (K / 64 at 256) -> N / 64, 512 (a row's bytes) -> 2N
  if v == S then return N elseif v == S // 64 then return N // 64 elseif v == 2 * S then return 2 * N end
  return v
end

local function tflops(ns) return 2.0 * N * N * N / ns / 1e3 end

local function fastcu(l, num)
  local arrays, words = {}, {}
  for id, a in pairs(l.allocs) do
    if a.init == "words" then
      arrays[id] = dev:array("u32", a.bytes // 4)
      words[id] = {}
      for i = 1, a.bytes // 4 do words[id][i] = 0 end
    else
      arrays[id] = dev:array("bf16", (a.bytes // 2) * (N // S) * (N // S))
    end
  end
  local maps = {}
  for m, t in pairs(l.maps) do
    local dims, strides = {}, {}
    for i, v in ipairs(t.dims) do dims[i] = scale(v) end
    for i, v in ipairs(t.strides) do strides[i] = v == 2 * S and 2 * N or v end
    maps[m] = dev:tensor_map(arrays[t.alloc], { dims = dims, strides = strides, box = t.box,
      element_strides = t.element_strides, swizzle = ({ [0] = "none", "32B", "64B", "128B" })[t.swizzle] })
  end
  local mod = dev:load(here .. "/tests/corpus/fastcu/matmul.ptx")
  local k = mod:kernel(l.kernel)
  local args = {}
  for i = 1, 3 do args[i] = N end
  for _, r in ipairs(l.refs) do
    if r.where == "param" then args[r.at] = r.map and maps[r.map] or arrays[r.ptr]
    else
      local bytes = maps[r.map]
      for j = 0, #bytes // 4 - 1 do words[r.at][r.off // 4 + j + 1] = string.unpack("<I4", bytes, 4 * j + 1) end
    end
  end
  for id, w in pairs(words) do arrays[id]:write(w) end
  local grid = { l.grid[1], l.grid[2], l.grid[3] }
  if grid[1] ~= 128 then grid[1] = grid[1] * (N // S) * (N // S) end -- grid-tiled (kernels 2-5)
  local t0 = os.clock()
  local run = k:launch { grid = grid, block = l.block, smem = l.smem, args = args, timeout_s = 3600 }
  print(string.format("| fast.cu kernel %d | %d | %s | %.1f | %.0f | %.0f s |", num, N, model, run.time_ns / 1e3,
    tflops(run.time_ns), os.clock() - t0))
end

print("| kernel | N | model | emu time (us) | emu TFLOPS | CPU |")
print("|---|---|---|---|---|---|")
for _, l in ipairs(recorded) do
  local num = tonumber(l.kernel:match("matmulKernel(%d+)"))
  if num and want[num] then
    local ok, err = pcall(fastcu, l, num)
    if not ok then print(string.format("| fast.cu kernel %d | %d | %s | failed: %s | | |", num, N, model,
      tostring(type(err) == "table" and err.message or err):gsub("\n", " "):sub(1, 200))) end
  end
end
if want[0] then
  local a, b = dev:array("bf16", N * N, { shape = { N, N } }), dev:array("bf16", N * N, { shape = { N, N } })
  local c = dev:array("f32", N * N, { shape = { N, N } })
  local t0 = os.clock()
  local run = dev:load(here .. "/tests/ptx/hopper_gemm.ptx"):kernel("ws_gemm"):launch { grid = { N // 128, N // 64 },
    block = 384, smem = 3 * (128 * 64 * 2 + 64 * 64 * 2) + 128 * 64 * 4, timeout_s = 3600,
    args = { dev:tensor_map(a, { box = { 64, 128 }, swizzle = "128B" }), dev:tensor_map(b, { box = { 64, 32 }, swizzle = "128B" }),
      dev:tensor_map(c, { box = { 64, 128 } }), N } }
  print(string.format("| hopper_gemm.cu ws_gemm | %d | %s | %.1f | %.0f | %.0f s |", N, model, run.time_ns / 1e3,
    tflops(run.time_ns), os.clock() - t0))
end
