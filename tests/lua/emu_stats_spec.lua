-- emu_stats_spec.lua: emu as a microscope (issue 13): the issue model's timeline
-- (warps that interleave, residency and waves), exact memory counters per source
-- line (k:launch{stats = true}), printf and assert in kernels, and kernel:info
-- from ptxas with an occupancy.  The kernels are tests/ptx/emu_stats.cu; the counts
-- are what the access patterns give, worked out in the comments.
local h = require "helpers"
local mgpu = require "mgpu"

local ptx = h.src .. "/tests/ptx/emu_stats.ptx"

local function core_json(path)
  local f = assert(io.open(path))
  local s = f:read("*a")
  f:close()
  return require("mgpu.core").json_decode(s, path)
end

-- the row of run.stats.lines for source line `line`
local function row(run, line)
  for _, r in ipairs(run.stats.lines) do
    if r.line == line then return r end
  end
  error("no row for line " .. line)
end

local GLD_REQ, GLD_SEC = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
local GST_REQ, GST_SEC = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
local SLD_REQ, SLD_WF, SLD_BC = "ptx__inst_executed_op_shared_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
local SST_REQ, SST_WF, SST_BC = "ptx__inst_executed_op_shared_st.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"

describe("emu's issue model", function()
  it("gives the warps of a block doing the same work the same durations, and a grid of twice the resident blocks two waves", function()
    local dev = mgpu.device("emu", { sms = 2 })
    local k = dev:load(ptx):kernel("same_work")
    -- 256 threads: 8 warps a block, 8 blocks (64 warps) an SM; 2 SMs x 8 x 2 = two waves
    local nb, warps = 32, 32 * 8
    local t = dev:array("u64", 2 * warps)
    local run = k:launch { grid = nb, block = 256, args = { t, dev:array("f32", nb * 256), 200 } }
    assert.equal(8, run.blocks_per_sm)
    local v = t:read()
    local first_end, second_start = 0, math.huge
    local lo, hi = math.huge, 0
    for w = 0, warps - 1 do
      local t0, t1 = v[2 * w + 1], v[2 * w + 2]
      lo, hi = math.min(lo, t1 - t0), math.max(hi, t1 - t0)
      local b = math.floor(w / 8)
      if b < 16 then first_end = math.max(first_end, t1) else second_start = math.min(second_start, t0) end
    end
    -- 200 iterations of about 4 instructions, 16 warps sharing each sub-partition: ~7.3 us each at
    -- the default model's 1.755 GHz (8.6 at emu's old 1.5 GHz: issue 32)
    assert.is_true(lo > 7000, "duration " .. lo)
    assert.is_true((hi - lo) / lo < 0.02, "durations from " .. lo .. " to " .. hi .. " ns")
    -- blocks 16..31 (the second wave) start once the first wave's have finished
    assert.is_true(second_start > first_end, "second wave starts at " .. second_start .. ", the first ends at " .. first_end)
    -- the same launch on a fresh device: the same times, word for word
    local dev2 = mgpu.device("emu", { sms = 2 })
    local t2 = dev2:array("u64", 2 * warps)
    local run2 = dev2:load(ptx):kernel("same_work"):launch { grid = nb, block = 256,
      args = { t2, dev2:array("f32", nb * 256), 200 } }
    assert.same(v, t2:read())
    assert.equal(run.cycles, run2.cycles)
  end)

  it("runs a block's warps side by side: a warp's time does not include the warps before it", function()
    local dev = mgpu.device("emu")
    local t = dev:array("u64", 2 * 4)
    dev:load(ptx):kernel("same_work"):launch { grid = 1, block = 128, args = { t, dev:array("f32", 128), 50 } }
    local v = t:read()
    -- four warps, one per sub-partition: each alone on its own, all start within a few cycles
    for w = 1, 3 do
      assert.is_true(math.abs(v[2 * w + 1] - v[1]) < 10, "warp " .. w .. " starts " .. (v[2 * w + 1] - v[1]) .. " ns late")
      -- the same duration (to the nanosecond %globaltimer rounds cycles to)
      assert.is_true(math.abs((v[2] - v[1]) - (v[2 * w + 2] - v[2 * w + 1])) <= 1)
    end
  end)
end)

describe("emu's exact counters (launch{stats = true})", function()
  local dev, m
  before_each(function()
    dev = mgpu.device("emu")
    m = dev:load(ptx)
  end)

  it("count global sectors per request: 4, 8 and 32 for floats 1, 2 and 32 apart", function()
    for stride, sectors in pairs { [1] = 4, [2] = 8, [32] = 32 } do
      local run = m:kernel("ld_stride"):launch { grid = 1, block = 256, stats = true,
        args = { dev:array("f32", 256 * 32), dev:array("f32", 256), stride } }
      local ld, st = row(run, 15), row(run, 16) -- float v = in[t * stride]; out[t] = v;
      assert.equal("  float v = in[t * stride];", ld.source)
      assert.matches("emu_stats%.cu$", ld.file)
      assert.is_false(ld.ptx)
      assert.equal(8, ld[GLD_REQ]) -- one request per warp
      assert.equal(8 * sectors, ld[GLD_SEC])
      assert.equal(8 * 32 * 4, ld["ptx__bytes_requested_mem_global_op_ld.sum"])
      assert.equal(8, st[GST_REQ])
      assert.equal(32, st[GST_SEC])
      assert.equal(sectors, run.stats.total["l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio"])
      assert.equal(8 * sectors, run.stats.total[GLD_SEC])
    end
  end)

  it("count bank conflicts: a 32x32 transpose has 32-way conflicts on the column read, none with a word of padding", function()
    local a, b = dev:array("f32", 1024, { fill = "ramp" }), dev:array("f32", 1024)
    local run = m:kernel("transpose32"):launch { grid = 1, block = { 32, 32 }, args = { a, b }, stats = true }
    assert.equal(32, b:read(2)) -- out[0][1] = in[1][0]
    local st, ld = row(run, 23), row(run, 25)
    -- tile[y][x] = ...: a warp (one y) writes 32 consecutive words, one wavefront each
    assert.equal(32, st[SST_REQ])
    assert.equal(32, st[SST_WF])
    assert.is_nil(st[SST_BC]) -- zero counters are left out of the rows
    -- ... = tile[x][y]: 32 words 32 apart, all in one bank: 32 wavefronts per request
    assert.equal(32, ld[SLD_REQ])
    assert.equal(32 * 32, ld[SLD_WF])
    assert.equal(32 * 31, ld[SLD_BC])
    assert.equal(32 * 31, run.stats.total[SLD_BC])
    run = m:kernel("transpose32_padded"):launch { grid = 1, block = { 32, 32 }, args = { a, b }, stats = true }
    assert.equal(32, b:read(2))
    ld = row(run, 34)
    assert.equal(32, ld[SLD_REQ])
    assert.equal(32, ld[SLD_WF]) -- tile[32][33]: the column's words fall in 32 banks
    assert.is_nil(ld[SLD_BC])
    assert.equal(0, run.stats.total[SLD_BC])
  end)

  it("count a broadcast as free, the lanes of a divergent loop, and local memory as a GPU lays it out", function()
    local run = m:kernel("broadcast"):launch { grid = 1, block = 64, stats = true,
      args = { dev:array("f32", 64), dev:array("f32", 64) } }
    local r = row(run, 42) -- out[threadIdx.x] = s[5]: every lane reads one word
    assert.equal(2, r[SLD_REQ])
    assert.equal(2, r[SLD_WF])
    assert.is_nil(r[SLD_BC])
    -- lane l loops l times: requests 31 a warp, of 31, 30 ... 1 lanes (496 a warp), one sector each
    run = m:kernel("divergent"):launch { grid = 1, block = 64, stats = true,
      args = { dev:array("i32", 64, { fill = "ramp" }), dev:array("i32", 64) } }
    r = row(run, 50)
    assert.equal(2 * 31, r[GLD_REQ])
    assert.equal(2 * 31, r[GLD_SEC])
    assert.equal(2 * 496 * 4, r["ptx__bytes_requested_mem_global_op_ld.sum"])
    assert.is_true(r["ptx__thread_inst_executed.sum"] < 32 * r["ptx__inst_executed.sum"]) -- divergence
    local tot = run.stats.total
    assert.equal(run.warp_insns, tot["ptx__inst_executed.sum"])
    assert.equal(run.thread_insns, tot["ptx__thread_inst_executed_pred_on.sum"])
    assert.equal(tot["ptx__thread_inst_executed.sum"] / tot["ptx__inst_executed.sum"],
      tot["ptx__thread_inst_executed_per_inst_executed.ratio"])
    -- int a[16] indexed at run time: 4 st.local.v4 a warp, 16 bytes a lane (words interleaved
    -- by thread: 16 sectors each); the load of a[(t + k) & 15]: 32 lanes in 32 sectors
    run = m:kernel("local_array"):launch { grid = 1, block = 64, stats = true, args = { dev:array("i32", 64), 3 } }
    r = row(run, 59)
    assert.equal(2 * 4, r["l1tex__t_requests_pipe_lsu_mem_local_op_st.sum"])
    assert.equal(2 * 4 * 16, r["l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"])
    r = row(run, 60)
    assert.equal(2, r["l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum"])
    assert.equal(2 * 32, r["l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"])
  end)

  it("report a module without line information per PTX line, and leave the run as it is without stats", function()
    local cp = dev:load(h.src .. "/tests/ptx/cp_async.ptx")
    local n = 3
    local function launch(stats)
      local out = dev:array("f32", 4 * 128 * n)
      local run = cp:kernel("stage"):launch { grid = 1, block = 128, stats = stats,
        args = { dev:array("f32", 4 * 128 * n, { fill = "ramp" }), out, dev:array("f32", 128, { fill = "ramp" }),
          dev:array("f32", 128), n } }
      return run, out:read()
    end
    local run, out = launch(true)
    local plain, out2 = launch(false)
    assert.same(out, out2)
    assert.equal(plain.cycles, run.cycles)
    assert.equal(plain.warp_insns, run.warp_insns)
    assert.is_nil(plain.stats)
    local r = row(run, 48) -- cp.async.cg 16 bytes a lane: 512 bytes a warp, 16 sectors
    assert.is_true(r.ptx)
    assert.matches("cp_async%.ptx$", r.file)
    assert.matches("^%s*cp%.async%.cg%.shared%.global", r.source)
    assert.equal(4, r["l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum"])
    assert.equal(64, r["l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum"])
    -- ld.shared.v4 of consecutive float4s: a quarter warp a wavefront, 4 a request, no conflict
    r = row(run, 216)
    assert.equal(4, r[SLD_REQ])
    assert.equal(16, r[SLD_WF])
    assert.is_nil(r[SLD_BC])
    -- the zero-filling copy (source size 0) reads nothing
    assert.is_nil(row(run, 239)["l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum"])
    assert.equal(0, run.stats.total["l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"])
  end)
end)

describe("mgpu.stats", function()
  local stats = require "mgpu.stats"

  it("prints the worst coalescing and bank-conflict lines first, and writes the counters as JSON and CSV", function()
    local dev = mgpu.device("emu")
    local m = dev:load(ptx)
    local run = m:kernel("transpose32"):launch { grid = 1, block = { 32, 32 }, stats = true,
      args = { dev:array("f32", 1024), dev:array("f32", 1024) } }
    local text = stats.report(run.stats)
    assert.matches("shared: 64 requests, 1056 wavefronts, 992 bank conflicts", text, 1, true)
    local conflicts = text:match("shared memory, most bank conflicts first:\n[^\n]*\n([^\n]*)")
    assert.matches("^  emu_stats%.cu:25 +32 +1024 +992 +32%.0 +out%[y %* 32 %+ x%] = tile%[x%]%[y%];$", conflicts)
    run = m:kernel("ld_stride"):launch { grid = 4, block = 256, stats = true,
      args = { dev:array("f32", 1024 * 32), dev:array("f32", 1024), 32 } }
    text = stats.report(run.stats, { top = 2 })
    local worst = text:match("worst coalescing first[^\n]*\n[^\n]*\n([^\n]*)")
    assert.matches("^  emu_stats%.cu:15 +load +32 +1024 +32%.0 +13%% +float v = in%[t %* stride%];$", worst)
    assert.matches("%.%.%. 3 more", text)
    local prefix = os.tmpname()
    local json, csv = stats.write(prefix, run.stats)
    local back = core_json(json)
    assert.equal(run.stats.total["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"],
      back.total["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"])
    local f = io.open(csv)
    local head = f:read("*l")
    local n = 0
    for _ in f:lines() do n = n + 1 end
    f:close()
    assert.equal(#run.stats.lines, n)
    assert.matches("^file,line,ptx,source,ptx__inst_executed%.sum,", head)
    -- the totals as results.csv columns
    local rows = { { stats = stats.totals(run.stats) }, {} }
    local cols = stats.csv_columns(rows)
    assert.equal("stats.ptx__inst_executed.sum", cols[1])
    assert.equal(run.warp_insns, stats.csv_values(rows[1], cols)[1])
    assert.is_nil(stats.csv_values(rows[2], cols)[1])
    -- mgpu-harness stats FILE: the same text
    local out = {}
    local write = io.write
    io.write = function(s) out[#out + 1] = s end
    local ok, rc = pcall(stats.main, { json, "--top", "2" })
    io.write = write
    assert.is_true(ok, rc)
    assert.equal(0, rc)
    assert.equal(text, table.concat(out))
    local bad_ok, err = pcall(stats.main, { json, "--top", "x" })
    assert.is_false(bad_ok)
    assert.equal("bad_argument", err.code)
    os.remove(json)
    os.remove(csv)
    os.remove(prefix)
  end)
end)

describe("printf and assert in kernels on emu", function()
  it("prints after the launch in a fixed order, into run.printf, with C's conversions", function()
    local dev = mgpu.device("emu")
    local k = dev:load(ptx):kernel("say")
    local run = k:launch { grid = 2, block = 32, args = { 255, 2.5 }, printf = false }
    assert.same({ "block 0 thread 0: n=255 x=2.50 ok|   ff|a  |", "block 0 thread 1: n=255 x=2.50 ok|   ff|b  |",
      "block 1 thread 0: n=255 x=2.50 ok|   ff|a  |", "block 1 thread 1: n=255 x=2.50 ok|   ff|b  |" }, run.printf)
    -- written to the harness's stdout (printf = true, the default)
    local script = os.tmpname() .. ".lua"
    local f = io.open(script, "w")
    f:write(("local mgpu = require 'mgpu'; local dev = mgpu.device('emu'); "
      .. "dev:load(%q):kernel('say'):launch { grid = 1, block = 1, args = { 1, 0.25 } }; print('after')"):format(ptx))
    f:close()
    local st, out = h.run(script)
    os.remove(script)
    assert.equal(0, st)
    assert.equal("block 0 thread 0: n=1 x=0.25 ok|    1|a  |\nafter\n", out)
  end)

  it("reports a failed assert as a kernel fault naming its message, file, line, function, block and thread", function()
    local dev = mgpu.device("emu")
    local k = dev:load(ptx):kernel("say")
    local ok, err = pcall(k.launch, k, { grid = 3, block = 32, args = { 13, 0 }, printf = false })
    assert.is_false(ok)
    assert.equal("kernel_fault", err.code)
    assert.matches("assertion `n != 13` failed at .*emu_stats%.cu:66 in .*say.*%(block %(0,0,0%), thread %(0,0,0%)%)",
      err.message)
  end)
end)

describe("kernel:info on emu", function()
  local have_ptxas = os.execute("command -v ptxas >/dev/null 2>&1 || test -x /usr/local/cuda/bin/ptxas")
  if have_ptxas == 0 then have_ptxas = true end -- LuaJIT: a number

  it("gives ptxas's registers, spills and stack, and the occupancy of a block size", function()
    if not have_ptxas then return pending("ptxas is not installed") end
    local dev = mgpu.device("emu")
    local m = dev:load(ptx)
    local i = m:kernel("transpose32"):info { block = 1024 }
    assert.equal("ptxas", i.registers_from)
    assert.is_true(i.registers > 0 and i.registers < i.ptx_registers + 8)
    assert.equal(0, i.spill_stores)
    assert.equal(4096, i.static_smem)
    -- 1024 threads: 32 warps, two blocks fill the SM's 64 warps
    assert.equal(2, i.occupancy.blocks_per_sm)
    assert.equal(64, i.occupancy.warps_per_sm)
    assert.equal(100, i.occupancy.percent)
    assert.equal("warps", i.occupancy.limited_by)
    assert.equal(4096 + 1024, i.occupancy.smem_per_block) -- with the KiB the driver reserves
    -- 200 KiB of dynamic shared memory a block: one block an SM
    local o = m:kernel("transpose32"):info({ block = 128, smem = 200 * 1024 }).occupancy
    assert.equal(1, o.blocks_per_sm)
    assert.equal("shared memory", o.limited_by)
    local s = m:kernel("say"):info()
    assert.equal(40, s.stack) -- printf's argument buffer
    local ok, err = pcall(m:kernel("say").info, m:kernel("say"), { smem = 1 })
    assert.is_false(ok)
    assert.equal("bad_argument", err.code)
  end)

  it("says the registers are unknown without ptxas, rather than the PTX's virtual count", function()
    local script = os.tmpname() .. ".lua"
    local f = io.open(script, "w")
    f:write(("local mgpu = require 'mgpu'; local i = mgpu.device('emu'):load(%q):kernel('ld_stride'):info { block = 256 }; "
      .. "print(i.registers, i.ptx_registers > 0, i.note, i.occupancy.blocks_per_sm, i.occupancy.limits.registers)"):format(ptx))
    f:close()
    local st, out = h.run_env("MGPU_PTXAS=none", script)
    os.remove(script)
    assert.equal(0, st)
    assert.equal("nil\ttrue\tregisters unknown: ptxas is turned off (MGPU_PTXAS=none)\t8\tnil\n", out)
  end)
end)
