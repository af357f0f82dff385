-- emu_gemm.lua: emu's predicted TFLOPS of warp-specialised bf16 GEMMs at a size of your choice
-- (issue 32): fast.cu's kernels as tests/corpus/fastcu/launches.lua recorded them at 256 x 256 x
-- 256, re-launched at N x N x N (their M, N, K, tensor maps, arrays and, for grid-tiled kernels,
-- grids scaled; persistent kernels keep their grid), and the project's tests/ptx/hopper_gemm.cu.
-- The inputs are zeros (with "check": known values, C compared): only the virtual time is read.
-- 0 names hopper_gemm.cu's ws_gemm.  Kernels 6-12 need M / 128 a multiple of 16 and N / 256 of 8
-- (their tile groups): they run right from 2048 on (docs/results/emu-gemm-tflops.md).  Kernel 3's
-- second recording (the debug variant) takes an argument the record lacks: it says so.
-- At N = 4096 each fast.cu row also gives the worklog's published H100 figure and emu / published.
--   mgpu-harness scripts/bench/emu_gemm.lua [N] [MODEL] [KERNEL-NUMBERS, default 5,0] [check] [NAME=VALUE ...]
-- NAME=VALUE arguments set parameters of the model (model_params, docs/emu.md): a what-if run,
-- e.g. l2_bytes_per_clk=5760.
local mgpu = require "mgpu"

local here = (arg and arg[0] or ""):match("^(.*)/scripts/bench/[^/]*$") or "."
local params, pos = require("mgpu.options").model_params(arg)
if #pos > 4 then -- (a misspelt NAME=VALUE, "l2-lat=300", was taken for a fifth argument and ignored)
  error(string.format("%s: not N, a model, kernel numbers, check or NAME=VALUE (usage: emu_gemm.lua [N] [MODEL] "
    .. "[KERNEL-NUMBERS] [check] [NAME=VALUE ...])", pos[5]), 0)
end
local N = tonumber(pos[1] or "4096")
local model = pos[2] or "h100-sxm"
local want = {}
for k in (pos[3] or "5,0"):gmatch("%d+") do want[tonumber(k)] = true end
local check = pos[4] == "check"
local dev = mgpu.device("emu", { model = model, model_params = params })
local S = 256 -- the recorded size

local recorded = {}
local env = setmetatable({ launch = function(t) recorded[#recorded + 1] = t end }, { __index = _G })
assert(loadfile(here .. "/tests/corpus/fastcu/launches.lua", "t", env))()

local function scale(v) -- a size of the recording: 256 -> N, 4 (K / 64 at 256) -> N / 64, 512 (a row's bytes) -> 2N
  if v == S then return N elseif v == S // 64 then return N // 64 elseif v == 2 * S then return 2 * N end
  return v
end

local function tflops(ns) return 2.0 * N * N * N / ns / 1e3 end

-- The worklog's H100 SXM figures at 4096 x 4096 x 4096 (TFLOPS), kernel by kernel, as
-- docs/results/emu-gemm-tflops.md cites them (cudaforfun.substack.com/p/outperforming-cublas-on-h100-a-worklog).
-- Kernel 5: 631, the worklog's figure with setmaxnreg (240 registers to the consumers, 24 to the
-- producer), as fast.cu's matmul_5.cuh and the recorded PTX have it; its 610 is before that step.
local published = { [2] = 317, [3] = 423, [4] = 498, [5] = 631, [6] = 660, [7] = 704, [8] = 734, [9] = 747,
  [10] = 758, [11] = 764 }
local function beside(num, tf)
  local p = N == 4096 and published[num]
  if not p then return "| | |" end
  return string.format("| %d | %.2f |", p, tf / p)
end

-- Kernels 11 and 12 read their tiles' order from an int array the host fills (fast.cu's
-- createHilbert): per cluster of 2 blocks (64 of the 128 blocks' rows of 128 entries, the rest
-- unused), the tiles (row << 16 | column, a tile BM x CLUSTER_M = 256 by BN = 256) along a Hilbert
-- curve over the tile grid, dealt round-robin to the 64 clusters, then -1.  The recording holds the
-- 256 x 256 schedule (one tile); at N it is made again here: the same curve, the same dealing.
local function hilbert_xy(n, d) -- the d-th point of the Hilbert curve over an n x n grid (n a power of 2)
  local x, y, t, s = 0, 0, d, 1
  while s < n do
    local rx = (t // 2) & 1
    local ry = (t ~ rx) & 1
    if ry == 0 then
      if rx == 1 then x, y = s - 1 - x, s - 1 - y end
      x, y = y, x
    end
    x, y, t, s = x + s * rx, y + s * ry, t // 4, s * 2
  end
  return x, y
end

local function hilbert_schedule(words, tiles_m, tiles_n, clusters, len)
  local dim = 1
  while dim < math.max(tiles_m, tiles_n) do dim = dim * 2 end
  local pos = {}
  for i = 1, clusters do pos[i] = {} end
  local core = 1
  for d = 0, dim * dim - 1 do
    local x, y = hilbert_xy(dim, d)
    if x < tiles_m and y < tiles_n then
      local p = pos[core]
      p[#p + 1] = (x << 16) | y
      core = core % clusters + 1
    end
  end
  for i = 1, clusters * len do words[i] = 0xffffffff end
  for i = 1, clusters do
    assert(#pos[i] <= len, "hilbert schedule: more tiles per cluster than the kernel's 128 entries")
    for j, v in ipairs(pos[i]) do words[(i - 1) * len + j] = v end
  end
end

-- With "check" (a 4th argument) A and B get values whose product is known, and C is compared in
-- full: A[i][k] = a(i) s(k), B[j][k] = b(j) s(k) (both K-contiguous, as fast.cu keeps them; s = +-1
-- in a pattern across and within K tiles, so a K tile paired with the wrong one changes the sum),
-- hence C = K a(i) b(j), exact in bf16.  Slower (tables of N^2 values), same virtual time.
local function a_of(i) return i % 4 + 1 end
local function b_of(j) return (j % 3 + 1) * ((j // 7) % 2 == 0 and 1 or -1) end
local function s_of(k) return (k * 7 + k // 64) % 3 == 0 and -1 or 1 end
local function operand(arr, f)
  local v, sk = {}, {}
  for k = 0, N - 1 do sk[k] = s_of(k) end
  for r = 0, N - 1 do
    local fr, base = f(r), r * N
    for k = 0, N - 1 do v[base + k + 1] = fr * sk[k] end
  end
  arr:write(v)
end
local function check_c(c)
  local best
  for _, layout in ipairs { "row-major", "column-major" } do
    local e = {}
    for i = 0, N - 1 do
      local ai = N * a_of(i)
      for j = 0, N - 1 do e[(layout == "row-major" and i * N + j or j * N + i) + 1] = ai * b_of(j) end
    end
    local ref = dev:array("bf16", N * N)
    ref:write(e)
    e = nil
    local r = c:compare(ref)
    if not best or r.mismatches < best.mismatches then best = { layout = layout, mismatches = r.mismatches } end
    if r.mismatches == 0 then break end
  end
  return best.mismatches == 0 and ("C right (" .. best.layout .. ")")
    or string.format("C WRONG: %d of %d elements differ (%s)", best.mismatches, N * N, best.layout)
end

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
  for i, hex in ipairs(l.params) do -- a null pointer the recording passed (kernel 3's DB array when off)
    if i > 3 and hex:match("^0+$") then args[i] = 0 end
  end
  for _, r in ipairs(l.refs) do
    if r.where == "param" then args[r.at] = r.map and maps[r.map] or arrays[r.ptr]
    else
      local bytes = maps[r.map]:bytes() -- the map's 128 bytes
      for j = 0, #bytes // 4 - 1 do words[r.at][r.off // 4 + j + 1] = string.unpack("<I4", bytes, 4 * j + 1) end
    end
  end
  if num == 11 or num == 12 then -- the tile schedule (clusters of 2 along M, tiles 256 x 256, 64 clusters)
    for _, r in ipairs(l.refs) do
      if r.ptr and words[r.ptr] then hilbert_schedule(words[r.ptr], N // 256, N // 256, 64, 128) end
    end
  end
  for id, w in pairs(words) do arrays[id]:write(w) end
  local grid = { l.grid[1], l.grid[2], l.grid[3] }
  if grid[1] ~= 128 then grid[1] = grid[1] * (N // S) * (N // S) end -- grid-tiled (kernels 2-5)
  local data, cid = {}, nil
  for id, a in pairs(l.allocs) do
    if a.init == "data" then data[#data + 1] = id elseif a.init == "zeros" then cid = id end
  end
  table.sort(data)
  if check then operand(arrays[data[1]], a_of); operand(arrays[data[2]], b_of); collectgarbage() end
  local t0 = os.clock()
  local run = k:launch { grid = grid, block = l.block, smem = l.smem, args = args, timeout_s = 3600 }
  local cpu = os.clock() - t0
  -- kernel 3 was recorded twice: its DB build (the worklog's in-kernel profiling: clock64 pairs and
  -- a per-block array, scripts/bench/emu_phases.lua) and the plain one, which the worklog's 423 is of
  local what = l.kernel:match("matmulKernel3ILi128ELi128ELi64ELi128ELb1E") and num .. " (DB build)" or tostring(num)
  print(string.format("| fast.cu kernel %s | %d | %s | %s | %.1f | %.0f %s %.0f s |%s", what, N, model,
    tostring(run.blocks_per_sm or "?"), run.time_ns / 1e3, tflops(run.time_ns), beside(num, tflops(run.time_ns)),
    cpu, check and (" " .. check_c(arrays[cid]) .. " |") or ""))
end

print("| kernel | N | model | blocks/SM | emu time (us) | emu TFLOPS | published TFLOPS (N = 4096) | emu / published | CPU |")
print("|---|---|---|---|---|---|---|---|---|")
for _, l in ipairs(recorded) do
  local num = tonumber(l.kernel:match("matmulKernel(%d+)"))
  if num and want[num] then
    local ok, err = pcall(fastcu, l, num)
    if not ok then print(string.format("| fast.cu kernel %d | %d | %s | | failed: %s | | | | |", num, N, model,
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
  print(string.format("| hopper_gemm.cu ws_gemm | %d | %s | %s | %.1f | %.0f | | | %.0f s |", N, model,
    tostring(run.blocks_per_sm or "?"), run.time_ns / 1e3, tflops(run.time_ns), os.clock() - t0))
end
