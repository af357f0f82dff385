-- why_spec.lua: emu tells you why (issue 34), on the kernels of tests/ptx/why.cu: strict mode's
-- Hopper hazards (each bug caught naming both .cu lines, the same kernel without the bug clean),
-- stall reasons per line (run.stats.lines[i].stalls, run.stats.stalls, mgpu-harness stats), and
-- faults naming the .cu line.
local h = require "helpers"
local mgpu = require "mgpu"

local ptx = h.src .. "/tests/ptx/why.ptx"

-- the .cu line of the first line of why.cu holding `text`
local function cu_line(text)
  local n = 0
  for l in io.lines(h.src .. "/tests/ptx/why.cu") do
    n = n + 1
    if l:find(text, 1, true) then return n end
  end
  error("why.cu has no line with " .. text)
end

local function floats(n)
  local t = {}
  for i = 1, n do t[i] = i end
  return t
end

-- runs `name` on a strict device; nil on success, else the error
local function strict_run(name, opts)
  local dev = mgpu.device("emu", { strict = true })
  local k = dev:load(ptx):kernel(name)
  local args = {}
  for i, a in ipairs(opts.args) do args[i] = type(a) == "function" and a(dev) or a end
  local ok, err = pcall(k.launch, k, { grid = 1, block = opts.block, args = args })
  if ok then return nil end
  return err
end

local function f32(n, v) return function(dev) return dev:array("f32", v or n) end end
local function u8(n) return function(dev) return dev:array("u8", n) end end

describe("strict mode's Hopper hazards", function()
  it("(a) a wait on the wrong mbarrier parity: the read of the TMA's destination names the read and the copy", function()
    assert.is_nil(strict_run("why_parity", { block = 64, args = { f32(64, floats(64)), f32(64), 0 } }))
    local err = strict_run("why_parity", { block = 64, args = { f32(64, floats(64)), f32(64), 1 } })
    assert.equal("kernel_fault", err.code)
    local read, copy = cu_line("out[threadIdx.x] = buf[threadIdx.x] * 2.0f;"), cu_line("cp.async.bulk.shared::cluster")
    assert.matches("why%.cu:" .. read .. " %(PTX [^)]*why%.ptx:%d+%): why_parity: read of shared 0x%x+, which the async "
      .. "copy at [^ ]*why%.cu:" .. copy .. ", inlined at [^ ]*why%.cu:" .. cu_line("bulk_load(buf, in, sizeof buf, &bar, sizeof buf)")
      .. " %(PTX [^)]*%) is still to write: before any thread of the block saw its "
      .. "mbarrier phase complete", err.message)
  end)

  it("(c) an expect_tx of 128 bytes for a copy of 256: the copy and the expect_tx named", function()
    assert.is_nil(strict_run("why_expect", { block = 64, args = { f32(64, floats(64)), f32(64), 256 } }))
    local err = strict_run("why_expect", { block = 64, args = { f32(64, floats(64)), f32(64), 128 } })
    assert.equal("kernel_fault", err.code)
    local copy, expect = cu_line("cp.async.bulk.shared::cluster"), cu_line("mbarrier.arrive.expect_tx")
    assert.matches("why%.cu:" .. copy .. ", inlined at [^ ]*why%.cu:%d+ %(PTX [^)]*%): why_expect: complete_tx of 256 bytes on the mbarrier at "
      .. "shared 0x%x+, whose phase expects 128 more bytes with every arrival in: expect_tx counted fewer bytes than "
      .. "the copies deliver %(the last expect_tx on it: [^ ]*why%.cu:" .. expect, err.message)
  end)

  it("(a) cp.async read before its wait_group", function()
    assert.is_nil(strict_run("why_cp_async", { block = 32, args = { f32(128, floats(128)), f32(32), 1 } }))
    local err = strict_run("why_cp_async", { block = 32, args = { f32(128, floats(128)), f32(32), 0 } })
    assert.equal("kernel_fault", err.code)
    assert.matches("why%.cu:" .. cu_line("out[t] = buf[4 * t];") .. " .-read of shared 0x0, which the cp%.async at "
      .. "[^ ]*why%.cu:" .. cu_line("cp.async.ca.shared.global") .. " .- is still to write: before the issuing "
      .. "thread's cp%.async%.wait_group/wait_all retired it", err.message)
  end)

  it("(b) a bulk copy over the shared operands of a wgmma not yet retired", function()
    assert.is_nil(strict_run("why_wgmma", { block = 128, args = { u8(2 * 2304), f32(128), 0 } }))
    local err = strict_run("why_wgmma", { block = 128, args = { u8(2 * 2304), f32(128), 1 } })
    assert.equal("kernel_fault", err.code)
    assert.matches("why%.cu:" .. cu_line("cp.async.bulk.shared::cluster") .. ",.-the async copy writes shared 0x%x+, "
      .. "which the wgmma%.mma_async at [^ ]*why%.cu:" .. cu_line("wgmma.mma_async.sync.aligned.m64n8k16") .. " .-"
      .. "still reads: its group was not retired by wgmma%.wait_group", err.message)
  end)

  it("are not checked without strict mode: the buggy kernels run", function()
    local dev = mgpu.device("emu")
    local k = dev:load(ptx):kernel("why_parity")
    k:launch { grid = 1, block = 64, args = { dev:array("f32", floats(64)), dev:array("f32", 64), 1 } }
  end)
end)

describe("faults name the .cu line", function()
  it("a deadlock names the .cu line the warps wait at", function()
    -- without strict mode, an expect_tx short of the copy's bytes leaves the phase incomplete for ever
    local dev = mgpu.device("emu")
    local k = dev:load(ptx):kernel("why_expect")
    local ok, err = pcall(k.launch, k, { grid = 1, block = 64, args = { dev:array("f32", floats(64)),
      dev:array("f32", 64), 128 } })
    assert.is_false(ok)
    assert.equal("kernel_fault", err.code)
    assert.matches("deadlock", err.message)
    assert.matches("why%.cu:" .. cu_line("mbarrier.try_wait.parity") .. "[^(]*%(PTX [^)]*why%.ptx:%d+%)", err.message)
  end)

  it("an out-of-range read: FILE.cu:LINE (PTX file:line)", function()
    local dev = mgpu.device("emu")
    local k = dev:load(ptx):kernel("why_fault")
    local ok, err = pcall(k.launch, k, { grid = 1, block = 32, args = { dev:array("f32", 32), dev:array("f32", 32), 64 } })
    assert.is_false(ok)
    assert.equal("kernel_fault", err.code)
    assert.matches("^[^ ]*why%.cu:" .. cu_line("out[threadIdx.x] = in[threadIdx.x + n];") .. " %(PTX [^)]*why%.ptx:"
      .. err.line .. "%): why_fault: out%-of%-range global read", err.message)
  end)
end)

-- the row of run.stats.lines for why.cu's line holding `text`
local function row(run, text)
  local n = cu_line(text)
  for _, r in ipairs(run.stats.lines) do
    if r.line == n and not r.ptx then return r end
  end
  error("no row for why.cu:" .. n)
end

local P = "smsp__pcsamp_warps_issue_stalled_"

-- the reason with most warp-cycles in a stalls table
local function top(st)
  local best, bv = nil, -1
  for k, v in pairs(st) do if v > bv then best, bv = k, v end end
  return best, bv
end

describe("stall reasons per line (stats = true)", function()
  it("a pointer chase's load line is dominated by long_scoreboard", function()
    local dev = mgpu.device("emu")
    local k = dev:load(ptx):kernel("why_chase")
    local nxt = {}
    for i = 1, 32 do nxt[i] = i % 32 end
    local run = k:launch { grid = 1, block = 32, args = { dev:array("u32", nxt), dev:array("u32", 32), 200 }, stats = true }
    local r = row(run, "p = next[p];")
    assert.equal(P .. "long_scoreboard", (top(r.stalls)))
    assert.is_true(r.stalls[P .. "long_scoreboard"] > 2 * (r.stalls[P .. "selected"] or 0))
    -- the kernel's own: every warp-cycle of the one warp, once
    local sum = 0
    for _, v in pairs(run.stats.stalls) do sum = sum + v end
    assert.is_true(sum > 0 and sum <= run.cycles)
    assert.equal(P .. "long_scoreboard", (top(run.stats.stalls)))
    -- the stall reasons are apart from the other metrics (rows and totals)
    assert.is_nil(r[P .. "selected"])
    assert.is_nil(run.stats.total[P .. "selected"])
  end)

  it("32 warps of ex2 on one SM wait for the special-function pipe: math_pipe_throttle", function()
    -- (issue 32: emu_model.c's pipe rates; before them an ex2 issued a cycle a sub-partition)
    local dev = mgpu.device("emu")
    local k = dev:load(h.src .. "/tests/ptx/microbench.ptx"):kernel("ex2_rate")
    local run = k:launch { grid = 1, block = 1024, args = { 2, dev:array("u64", 2), dev:array("f32", 1024) }, stats = true }
    assert.equal(P .. "math_pipe_throttle", (top(run.stats.stalls)))
  end)

  it("the __syncthreads of a block whose warp 0 works alone is dominated by barrier", function()
    local dev = mgpu.device("emu")
    local k = dev:load(ptx):kernel("why_imbalance")
    local run = k:launch { grid = 1, block = 128, args = { dev:array("f32", 128), 500 }, stats = true }
    local r = row(run, "__syncthreads(); // the other warps wait here for warp 0")
    assert.equal(P .. "barrier", (top(r.stalls)))
    -- three warps wait for warp 0's 500 steps
    assert.is_true(r.stalls[P .. "barrier"] > 3 * 500)
  end)

  it("mgpu-harness stats prints the kernel's top reasons and the lines with most stalled cycles", function()
    local dev = mgpu.device("emu")
    local k = dev:load(ptx):kernel("why_chase")
    local nxt = {}
    for i = 1, 32 do nxt[i] = i % 32 end
    local run = k:launch { grid = 1, block = 32, args = { dev:array("u32", nxt), dev:array("u32", 32), 50 }, stats = true }
    local stats = require "mgpu.stats"
    local dir = os.tmpname()
    os.remove(dir)
    local json = stats.write(dir, run.stats)
    local status, out = h.run("stats", json)
    os.remove(json)
    os.remove(dir .. ".stats.csv")
    assert.equal(0, status)
    assert.matches("warp%-cycles: %d+, by stall reason %(smsp__pcsamp_warps_issue_stalled_%*%): long_scoreboard %d+%%", out)
    assert.matches("the lines where warps spend most cycles, by stall reason:", out, 1, true)
    assert.matches("why%.cu:" .. cu_line("p = next[p];") .. "%s+%d+%s+long_scoreboard %d+%%", out)
  end)
end)

describe("the sweep table", function()
  it("shows a failed point's whole first line of its error", function()
    local results = require "mgpu.results"
    local msg = "/home/u/kernels/gemm_kernel.cu:120 (PTX /home/u/.cache/mgpu-harness/gemm-57bacecd3905.ptx:628): "
      .. "gemm: out-of-range global read of 16 bytes at 0x100000000040 (block (0,0,0), thread (4,0,0))"
    local t = results.table({ "n" }, { { index = 1, point = { n = 1 }, status = "failed",
      error = { code = "kernel_fault", message = msg .. "\nthe second line" } } })
    assert.truthy(t:find(msg, 1, true))
    assert.falsy(t:find("the second line", 1, true))
  end)
end)

describe("regions no one records", function()
  it("warns of a region only lane 5 enters in warp scope (lane 0 writes the trace), naming its .cu line", function()
    local dev = mgpu.device("emu")
    local k = dev:load(ptx, { instrument = "warp" }):kernel("why_lane5")
    local run = k:launch { grid = 1, block = 64, args = { dev:array("f32", 64) } }
    assert.equal(1, #run.warnings)
    assert.matches("^[^ ]*why%.cu:" .. cu_line('MGPU_BEGIN("lane5")') .. " %(PTX [^)]*why%.ptx:%d+%): why_lane5: region "
      .. "lane5 was entered 2 times, only by threads that do not write the trace", run.warnings[1])
    local names = {}
    for _, r in ipairs(run.trace:summary()) do names[r.name] = r.count end
    assert.same({ all = 2 }, names) -- the region the warning is about is not in the summary
    -- warpgroup scope: the same (thread 0 of the warpgroup writes it)
    k = dev:load(ptx, { instrument = "warpgroup" }):kernel("why_lane5")
    run = k:launch { grid = 1, block = 128, args = { dev:array("f32", 128) } }
    assert.equal(1, #run.warnings)
    assert.matches("region lane5 was entered 4 times", run.warnings[1])
    -- a kernel whose every region is recorded has none, and an uninstrumented launch neither
    k = dev:load(ptx, { instrument = "warp" }):kernel("why_pipeline")
    run = k:launch { grid = 1, block = 96, args = { dev:array("f32", floats(256)), dev:array("f32", 96), 4 } }
    assert.same({}, run.warnings)
    k = dev:load(ptx):kernel("why_lane5")
    assert.same({}, k:launch { grid = 1, block = 64, args = { dev:array("f32", 64) } }.warnings)
  end)
end)

describe("regions no one records, in an experiment", function()
  it("are in the point's row and beside its summary (point-N.summary.json)", function()
    local dir = h.tmpdir()
    local r = mgpu.run({ name = "lane5", module = ptx, kernel = "why_lane5", instrument = "warp", warmup = 0, repeats = 1,
      setup = function(_, dev) return { grid = 1, block = 64, args = { dev:array("f32", 64) } } end },
      { out = dir, quiet = true })
    assert.equal(1, r.ok)
    local row = require("mgpu.results").read_jsonl(dir .. "/results.jsonl")[1]
    local f = assert(io.open(dir .. "/point-1.summary.json"))
    local sum = require("mgpu.core").json_decode(f:read("*a"), "summary")
    f:close()
    h.rmdir(dir)
    assert.equal(1, #sum.warnings)
    assert.matches("why_lane5: region lane5 was entered", sum.warnings[1])
    assert.same(sum.warnings, row.warnings)
  end)
end)

-- The Chrome trace format's rules for flow events (v1: "s" starts, "f" ends; both carry name, cat,
-- id, ts, pid, tid; an "f" with "bp": "e" binds to the slice enclosing it, an "s" to the slice
-- enclosing it): every flow has one start and one end, the end not before the start, and each
-- lies inside a slice (a B/E pair) of its own thread.  Returns the flows by name.
local function check_flows(events)
  local slices, starts, ends, named = {}, {}, {}, {}
  local open = {}
  for _, e in ipairs(events) do
    local key = tostring(e.pid) .. "/" .. tostring(e.tid)
    if e.ph == "B" then
      open[key] = open[key] or {}
      table.insert(open[key], e.ts)
    elseif e.ph == "E" then
      local b = table.remove(open[key])
      slices[key] = slices[key] or {}
      table.insert(slices[key], { b, e.ts })
    end
  end
  local function inside(e)
    for _, s in ipairs(slices[tostring(e.pid) .. "/" .. tostring(e.tid)] or {}) do
      if e.ts >= s[1] and e.ts <= s[2] then return true end
    end
    return false
  end
  for _, e in ipairs(events) do
    if e.ph == "s" or e.ph == "f" then
      assert.is_string(e.name)
      assert.equal("mbarrier", e.cat)
      assert.is_number(e.id)
      assert.is_number(e.ts)
      assert.is_number(e.pid)
      assert.is_number(e.tid)
      assert.is_true(inside(e), "flow " .. e.id .. " (" .. e.ph .. ") outside every slice of its thread")
      if e.ph == "s" then
        assert.is_nil(starts[e.id])
        starts[e.id] = e
      else
        assert.equal("e", e.bp)
        assert.is_nil(ends[e.id])
        ends[e.id] = e
      end
    end
  end
  for id, s in pairs(starts) do
    local f = assert(ends[id], "flow " .. id .. " has no end")
    assert.equal(s.name, f.name)
    assert.is_true(f.ts >= s.ts)
    named[s.name] = (named[s.name] or 0) + 1
  end
  for id in pairs(ends) do assert.truthy(starts[id], "flow " .. id .. " has no start") end
  return named
end

describe("flows on emu's timeline", function()
  it("link each TMA completion and arrive to the wait it released, paired and bound to slices", function()
    local dev = mgpu.device("emu")
    local k = dev:load(ptx, { instrument = "warp" }):kernel("why_pipeline")
    local steps = 6
    local run = k:launch { grid = 1, block = 96, args = { dev:array("f32", floats(64 * steps)), dev:array("f32", 96), steps } }
    local path = os.tmpname()
    run.trace:dump(path)
    local f = assert(io.open(path))
    local doc = require("mgpu.core").json_decode(f:read("*a"), path)
    f:close()
    local named = check_flows(doc.traceEvents)
    -- the waits that found their phase incomplete: the consumers' (both warps) on stage 0 at steps
    -- 0, 2, 4 (stage 1's copy has landed by the time they wait for it: it releases nothing), and
    -- the producer's on the empty barrier of stage 0 at steps 2 and 4, released by the last
    -- consumer warp's arrive; TMA flows start on the producer's trace (tid 1), arrives on a consumer's.
    -- Since issue 32's memory timing (shared memory 30 cycles, loads through L1/L2/HBM) the consumers
    -- take longer a step, and the producer finds 4 empty phases incomplete (2 before)
    assert.same({ ["TMA complete_tx"] = 6, ["mbarrier arrive"] = 4 }, named)
    for _, e in ipairs(doc.traceEvents) do
      if e.ph == "s" then assert.equal(e.name == "TMA complete_tx" and 1 or 3, e.tid) end
      if e.ph == "f" then assert.is_true(e.name == "TMA complete_tx" and e.tid >= 2 or e.tid == 1) end
    end
    -- the lanes are labelled by block and warp
    local labels = {}
    for _, e in ipairs(doc.traceEvents) do
      if e.name == "thread_name" then labels[#labels + 1] = e.args.name end
    end
    table.sort(labels)
    assert.same({ "block 0 \u{b7} warp 0", "block 0 \u{b7} warp 1", "block 0 \u{b7} warp 2" }, labels)
    -- Mosaic's dump never has flows
    run.trace:dump(path, { compat = "mosaic" })
    f = assert(io.open(path))
    local mosaic = f:read("*a")
    f:close()
    os.remove(path)
    assert.falsy(mosaic:find('"ph": "s"', 1, true) or mosaic:find('"ph":"s"', 1, true))
  end)

  it("leave a trace without mbarrier waits as it was", function()
    local dev = mgpu.device("emu")
    local k = dev:load(ptx, { instrument = "warp" }):kernel("why_lane5")
    local run = k:launch { grid = 1, block = 64, args = { dev:array("f32", 64) } }
    local path = os.tmpname()
    run.trace:dump(path)
    local f = assert(io.open(path))
    local s = f:read("*a")
    f:close()
    os.remove(path)
    assert.falsy(s:find('"cat":"mbarrier"', 1, true))
  end)
end)

describe("stall reasons in an experiment", function()
  it("are in the point's row and its counters in the report", function()
    local dir = h.tmpdir()
    local r = mgpu.run({ name = "chase", module = ptx, kernel = "why_chase", warmup = 0, repeats = 1, stats = true,
      setup = function(_, dev)
        local nxt = {}
        for i = 1, 32 do nxt[i] = i % 32 end
        return { grid = 1, block = 32, args = { dev:array("u32", nxt), dev:array("u32", 32), 100 } }
      end }, { out = dir, quiet = true })
    assert.equal(1, r.ok)
    local row = require("mgpu.results").read_jsonl(dir .. "/results.jsonl")[1]
    assert.is_true(row.stalls[P .. "long_scoreboard"] > 0)
    assert.equal(0, (h.run("report", dir, "-o", dir .. "/r.html")))
    local html = h.read(dir .. "/r.html")
    h.rmdir(dir)
    assert.matches("stalls: long_scoreboard %d+%%", html)
  end)
end)
