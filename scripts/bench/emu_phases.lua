-- emu_phases.lua: fast.cu kernel 3's per-phase cycles on emu beside the worklog's in-kernel H100
-- profile (issue 32).  The worklog ("Outperforming cuBLAS on H100: a Worklog", cudaforfun.substack.com,
-- Nov 2024) times kernel 3 (M3::matmulKernel3<128, 128, 64, 128, true>, BM = BN = 128, BK = 64, one
-- warpgroup) at M = N = K = 4096 on an H100 SXM with clock64, thread 63 of each block, averaged over
-- blocks: Load 1415 (one K chunk: TMA issue, barrier waits, __syncthreads; per k-iteration), Tensor
-- Core 703 (wgmma.fence .. wgmma.wait_group 0; per k-iteration), Store 4572 (the epilogue's
-- st.global of bf16 into column-major C; once per block).
--   mgpu-harness scripts/bench/emu_phases.lua [N] [MODEL] [check] [NAME=VALUE ...]
-- N (default 4096, a multiple of 128) sets M = N = K; MODEL (default h100-sxm) is emu's device
-- model; "check" fills A and B with values whose product is known and compares C in full (slow at
-- 4096: use it at 512); NAME=VALUE sets a model parameter (model_params, docs/emu.md), a what-if run
-- such as sm_port_bytes_per_clk=48.  MGPU_EMU_THREADS=2 runs the SMs on 2 cores (~1 min at 4096).
--
-- Two launches of the kernel, as tests/corpus/fastcu/matmul.ptx has it (fast.cu's matmul_3.cuh):
--  * plain: the debug variant's own clock64 pairs around the three phases, summed per block by
--    thread 63 into its DB array (the worklog's measurement, word for word, on emu's clock);
--  * instrumented: a copy of the kernel's PTX text with `// @mgpu begin/end` markers put around the
--    same clock64 pairs (found by pattern, their contents checked: the TMA copies and mbarrier waits,
--    the wgmmas up to wait_group, the epilogue's stores) and loaded with instrument = "warp": the
--    trace's per-warp region durations, every warp of every block.  The markers sit outside the
--    kernel's clock pairs, so the region holds the pair's interval plus one clock read and the
--    record's own instructions.
-- Output: a markdown table, one row per phase: published; emu by the kernel's own clock64 (thread
-- 63, plain run: the worklog's method) and its ratio; emu by the markers (mean over every warp and
-- iteration, instrumented run), thread 63's clock64 in that run, and the markers' ratio; then the
-- kernel's time in both runs.  The two runs differ: on emu a record's st.global queues on the SM's
-- store path like any store, so the instrumented run's blocks drift against each other and the
-- split moves (docs/results/emu-phases.md); within a run markers and clock64 agree.
local mgpu = require "mgpu"

local here = (arg and arg[0] or ""):match("^(.*)/scripts/bench/[^/]*$") or "."
local params, pos = require("mgpu.options").model_params(arg)
local N, model, check = 4096, "h100-sxm", false
do
  local rest = {}
  for _, p in ipairs(pos) do
    if p == "check" then check = true else rest[#rest + 1] = p end
  end
  if #rest > 2 then
    error(string.format("%s: not N, a model, check or NAME=VALUE (usage: emu_phases.lua [N] [MODEL] [check] "
      .. "[NAME=VALUE ...])", rest[3]), 0)
  end
  if rest[1] then
    local v = tonumber(rest[1])
    N = v and v == math.floor(v) and math.floor(v) or nil
  end
  if not N or N < 128 or N % 128 ~= 0 then
    error(string.format("N: %s is not a positive multiple of 128 (the kernel's tile)", tostring(rest[1])), 0)
  end
  model = rest[2] or model
end

local KERNEL = "_ZN2M313matmulKernel3ILi128ELi128ELi64ELi128ELb1EEEviiiP13__nv_bfloat16PK14CUtensorMap_stS5_Pi"
local PTX = here .. "/tests/corpus/fastcu/matmul.ptx"
local PUBLISHED = { load = 1415, tc = 703, store = 4572 } -- clock64 cycles, H100 SXM, N = 4096
local PHASES = { { "load", "Load (per k-iteration)" }, { "tc", "Tensor Core (per k-iteration)" },
  { "store", "Store (per block)" } }

-- The module to instrument: the header, the shared array kernel 3 uses and kernel 3's entry, taken
-- from the corpus PTX, with markers around the kernel's six clock64 reads (two per phase).
local function fail(fmt, ...) error(string.format("%s: " .. fmt, PTX, ...), 0) end
local function marked_module()
  local f = assert(io.open(PTX, "rb"))
  local text = f:read("a")
  f:close()
  local head = {}
  for _, pat in ipairs { "\n(%.version[^\n]*)", "\n(%.target[^\n]*)", "\n(%.address_size[^\n]*)",
    "\n(%.shared[^\n]*_ZN2M31sE%[%d+%];)" } do
    head[#head + 1] = text:match(pat) or fail("no line matching %s", pat)
  end
  local s = text:find(".visible .entry " .. KERNEL .. "(", 1, true) or fail("no entry %s", KERNEL)
  local e = text:find("\n%s*// %.globl", s) or #text
  local lines = {}
  for l in (text:sub(s, e) .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
  local clocks = {}
  for i, l in ipairs(lines) do
    if l:match("^%s*mov%.u64%s+%%rd%d+,%s*%%clock64;") then clocks[#clocks + 1] = i end
  end
  if #clocks ~= 6 then fail("kernel 3 has %d clock64 reads, not the 6 of its three timed phases", #clocks) end
  -- what each phase's pair must hold (and the loads' TMA copies of A and B, the 128 stores of C)
  local want = {
    { "cp%.async%.bulk%.tensor", 2, "mbarrier%.try_wait", 2, "bar%.sync", 1 },
    { "wgmma%.fence", 1, "wgmma%.mma_async", 8, "wgmma%.commit_group", 1, "wgmma%.wait_group", 1 },
    { "st%.global%.u16", 128 },
  }
  for p = 1, 3 do
    local from, to = clocks[2 * p - 1], clocks[2 * p]
    for j = 1, #want[p], 2 do
      local n = 0
      for i = from, to do if lines[i]:match(want[p][j]) then n = n + 1 end end
      if n ~= want[p][j + 1] then
        fail("kernel 3's %s phase (lines %d-%d of its entry) has %d %s, not %d", PHASES[p][1], from, to, n,
          want[p][j]:gsub("%%", ""), want[p][j + 1])
      end
    end
  end
  local out = {}
  for _, l in ipairs(head) do out[#out + 1] = l end
  local at = {}
  for p = 1, 3 do at[clocks[2 * p - 1]] = { "begin", PHASES[p][1] }; at[clocks[2 * p]] = { "end", PHASES[p][1] } end
  for i, l in ipairs(lines) do
    local m = at[i]
    if m and m[1] == "begin" then out[#out + 1] = "\t// @mgpu begin " .. m[2] end
    out[#out + 1] = l
    if m and m[1] == "end" then out[#out + 1] = "\t// @mgpu end " .. m[2] end
  end
  return table.concat(out, "\n") .. "\n"
end

local dev = mgpu.device("emu", { model = model, model_params = params })
local source = marked_module()

-- A[i][k] = a(i) s(k), B[j][k] = b(j) s(k), both K-contiguous: C[i][j] = N a(i) b(j), exact in bf16.
local function a_of(i) return i % 4 + 1 end
local function b_of(j) return (j % 3 + 1) * (j % 2 == 0 and 1 or -1) end
local function s_of(k) return (k // 64 + k) % 3 == 0 and -1 or 1 end
local function fill(arr, f)
  local v = {}
  for r = 0, N - 1 do
    local fr = f(r)
    for k = 0, N - 1 do v[r * N + k + 1] = fr * s_of(k) end
  end
  arr:write(v)
end

local a, b = dev:array("bf16", N * N), dev:array("bf16", N * N)
if check then fill(a, a_of); fill(b, b_of) end
local function map_words(arr) -- the kernel takes a pointer to its CUtensorMap: the map's 128 bytes in an array
  local m = dev:tensor_map(arr, { dims = { N, N }, strides = { 2 * N }, box = { 64, 128 }, element_strides = { 1, 1 },
    swizzle = "128B" })
  local bytes, w = m:bytes(), {}
  for j = 0, #bytes // 4 - 1 do w[j + 1] = string.unpack("<I4", bytes, 4 * j + 1) end
  local d = dev:array("u32", #w)
  d:write(w)
  return d
end
local ma, mb = map_words(a), map_words(b)
local blocks = (N // 128) * (N // 128)
local iters = N // 64

local function launch(kernel, profiled)
  local c, db = dev:array("bf16", N * N), dev:array("i32", 6 * blocks)
  local run = kernel:launch { grid = blocks, block = 128, smem = 32768, args = { N, N, N, c, ma, mb, db },
    timeout_s = 3600, profile = profiled and { entries = 4 * iters + 8 } or nil }
  return run, c, db
end

local function check_c(c)
  if not check then return "" end
  local e = {}
  for j = 0, N - 1 do
    local bj = N * b_of(j)
    for i = 0, N - 1 do e[j * N + i + 1] = a_of(i) * bj end -- column-major: C[i][j] at j * M + i
  end
  local ref = dev:array("bf16", N * N)
  ref:write(e)
  local r = c:compare(ref)
  return r.mismatches == 0 and "C right" or string.format("C WRONG: %d of %d elements differ", r.mismatches, N * N)
end

-- plain launch: the kernel's own figures (thread 63 of each block: sum and count per phase)
local t0 = os.clock()
local plain = dev:load(PTX):kernel(KERNEL)
local run, c, db = launch(plain)
local function own_figures(db) -- thread 63's sums / counts, averaged over blocks
  local own, w = { load = 0, tc = 0, store = 0 }, db:read()
  for blk = 0, blocks - 1 do
    local o = 6 * blk
    if w[o + 2] ~= iters or w[o + 4] ~= iters or w[o + 6] ~= 1 then
      error(string.format("block %d's DB counts are %d, %d, %d, not %d, %d, 1", blk, w[o + 2], w[o + 4], w[o + 6],
        iters, iters), 0)
    end
    own.load = own.load + w[o + 1] / iters
    own.tc = own.tc + w[o + 3] / iters
    own.store = own.store + w[o + 5]
  end
  for k, v in pairs(own) do own[k] = v / blocks end
  return own
end
local own = own_figures(db)
local plain_ok = check_c(c)

-- instrumented launch: the markers' regions, per warp
local inst = dev:load({ source = source, name = "matmul_3_phases.ptx" }, { instrument = "warp" }):kernel(KERNEL)
local irun, ic, idb = launch(inst, true)
local iown = own_figures(idb)
local inst_ok = check_c(ic)
-- (trace:summary() gives the same rows without the clock: the dump to /dev/null, as it does, gives both)
local d = irun.trace:dump("/dev/null")
local marked, counts = {}, {}
for _, r in ipairs(d.summary) do
  if PUBLISHED[r.name] then
    marked[r.name], counts[r.name] = d.unit == "ns" and r.mean * d.clock_ghz or r.mean, r.count
  end
end
local cpu = os.clock() - t0

local given = {}
for k, v in pairs(params) do given[#given + 1] = string.format("%s=%s", k, tostring(v)) end
table.sort(given)
print(string.format("fast.cu kernel 3 (M3::matmulKernel3<128, 128, 64, 128, true>) at M = N = K = %d, emu model %s%s",
  N, model, #given > 0 and (" with " .. table.concat(given, " ")) or ""))
print()
print("| phase | published H100 SXM, N = 4096 (thread 63's clock64) | emu: kernel's clock64, thread 63 (plain run) "
  .. "| emu / published | emu: markers, mean over warps (instrumented run) | emu: thread 63's clock64, instrumented run "
  .. "| markers / published |")
print("|---|---|---|---|---|---|---|")
for _, p in ipairs(PHASES) do
  local k = p[1]
  if not marked[k] then error(string.format("the trace has no region %q", k), 0) end
  print(string.format("| %s | %d | %.0f | %.2f | %.0f (%d regions) | %.0f | %.2f |", p[2], PUBLISHED[k], own[k],
    own[k] / PUBLISHED[k], marked[k], counts[k], iown[k], marked[k] / PUBLISHED[k]))
end
print()
print(string.format("kernel time %.1f us (plain, %.0f TFLOPS), %.1f us (instrumented); blocks/SM %s; %s; CPU %.0f s",
  run.time_ns / 1e3, 2.0 * N * N * N / run.time_ns / 1e3, irun.time_ns / 1e3, tostring(run.blocks_per_sm or "?"),
  check and ("plain: " .. plain_ok .. ", instrumented: " .. inst_ok) or "C not checked", cpu))
