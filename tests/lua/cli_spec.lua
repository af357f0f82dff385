-- cli_spec.lua: the mgpu-harness command line: dump on the fixtures, exit
-- codes, messages naming the file and the problem, no partial output.
local h = require "helpers"

describe("mgpu-harness", function()
  it("prints its version and help", function()
    local st, out = h.run("--version")
    assert.equal(0, st)
    assert.matches("^mgpu%-harness %d+%.%d+%.%d+", out)
    st, out = h.run("--help")
    assert.equal(0, st)
    assert.matches("dump BUFFER", out)
    st, out = h.run("dump", "--help")
    assert.equal(0, st)
    assert.matches("%-%-compat mosaic", out)
  end)

  it("info lists the backends, with or without a CUDA driver", function()
    local st, out = h.run_env("MGPU_LIBCUDA=/nonexistent/libcuda.so.1", "info")
    assert.equal(0, st)
    assert.matches("emu%s+available", out)
    assert.matches("cuda%s+not available: cannot load the CUDA driver %(/nonexistent/libcuda%.so%.1%)", out)
    -- and whether .cu modules can be compiled
    st, out = h.run_env("MGPU_NVCC=/nonexistent/nvcc", "info")
    assert.equal(0, st)
    assert.matches("\nnvcc: not found %(MGPU_NVCC=/nonexistent/nvcc %(no such file%)%): %.cu modules cannot be loaded", out)
    st, out = h.run_env("MGPU_NVCC=" .. h.exe, "info") -- any existing file stands for nvcc here
    assert.matches("\nnvcc: " .. h.exe:gsub("%p", "%%%0") .. " %(%.cu modules compile with it%)", out)
    local fake = os.getenv("MGPU_FAKE_CUDA")
    if fake then
      st, out = h.run_env("MGPU_LIBCUDA=" .. fake, "info")
      assert.equal(0, st)
      assert.matches("cuda%s+driver 13%.0, 1 device", out)
      assert.matches("0: Fake GPU 0, sm_90, 132 SMs, 1%.98 GHz", out)
    end
  end)

  it("rejects an unknown command with status 2", function()
    local st, _, err = h.run("frobnicate")
    assert.equal(2, st)
    assert.matches("unknown command `frobnicate`", err)
  end)
end)

describe("mgpu-harness dump", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.rmdir(dir) end)

  local function fixture(name)
    return h.fixtures .. "/" .. name .. ".bin", h.fixtures .. "/" .. name .. ".meta.json"
  end

  it("writes what JAX wrote for each fixture in --compat mosaic", function()
    for _, name in ipairs({ "wg_1block", "warp_1block", "wg_264blocks_nested" }) do
      local buf, meta = fixture(name)
      local out = dir .. "/" .. name .. ".json"
      local st, _, err = h.run("dump", buf, "--meta", meta, "--compat", "mosaic", "-o", out)
      assert.equal(0, st, err)
      assert.equal(h.read(h.fixtures .. "/" .. name .. ".jax.json"), h.read(out))
    end
  end)

  it("writes to stdout without -o", function()
    local buf, meta = fixture("wg_1block")
    local st, out = h.run("dump", buf, "--meta", meta, "--compat", "mosaic")
    assert.equal(0, st)
    assert.equal(h.read(h.fixtures .. "/wg_1block.jax.json"), out)
  end)

  it("prints a summary table and writes summary JSON", function()
    local buf, meta = fixture("wg_264blocks_nested")
    local out, sj = dir .. "/t.json", dir .. "/s.json"
    local st, stdout, err = h.run("dump", buf, "--meta", meta, "-o", out, "--clock-ghz", "1.98",
      "--summary", "--summary-json", sj)
    assert.equal(0, st, err)
    assert.matches("region%s+count%s+total%s+mean%s+min%s+median%s+p99%s+max", stdout)
    assert.matches("\nstep%s+2112%s", stdout) -- 264 traces x 8 steps
    assert.matches("\nInit%s+264%s", stdout)
    local cjson = require "cjson"
    local s = cjson.decode(h.read(sj))
    assert.equal("ns", s.unit)
    local by = {}
    for _, r in ipairs(s.regions) do by[r.name] = r end
    assert.equal(2112, by.load.count)
    assert.is_true(by.load.min <= by.load.median and by.load.median <= by.load.p99 and by.load.p99 <= by.load.max)
    local t = cjson.decode(h.read(out))
    assert.equal("ns", t.otherData.time_unit)
    -- the timeline, computed again from the trace's own events: span, SMs, when each SM's last event was
    local lo, hi, sm_last = math.huge, -math.huge, {}
    for _, ev in ipairs(t.traceEvents) do
      if ev.ph ~= "M" then
        lo, hi = math.min(lo, ev.ts), math.max(hi, ev.ts)
        sm_last[ev.pid] = math.max(sm_last[ev.pid] or -math.huge, ev.ts)
      end
    end
    local done = {}
    for _, v in pairs(sm_last) do done[#done + 1] = v - lo end
    table.sort(done)
    local tl = s.timeline
    assert.equal(264, tl.traces)
    assert.equal(#done, tl.sms)
    assert.equal(132, tl.sms)
    assert.near((hi - lo) * 1000, tl.span, 0.5)
    assert.near(done[1] * 1000, tl.sm_done_min, 0.5)
    assert.near(done[math.floor((#done + 1) / 2)] * 1000, tl.sm_done_median, 0.5)
    assert.near(done[#done] * 1000, tl.sm_done_max, 0.5)
    assert.near(by.load.total / tl.span, by.load.concurrency, 1e-9)
    assert.matches("\nspan 50%.82 us from the first event to the last: 264 traces on 132 SMs\n", stdout)
    assert.matches("\nSMs done %(last event, from the first%): first SM 27%.85 us, median 46%.59 us, last 50%.82 us",
      stdout)
  end)

  it("adds in-flight counters on request, and refuses bad bin counts and Mosaic mode", function()
    local buf, meta = fixture("wg_264blocks_nested")
    local out = dir .. "/c.json"
    local st, _, err = h.run("dump", buf, "--meta", meta, "-o", out, "--clock-ghz", "1.98", "--counters", "50")
    assert.equal(0, st, err)
    local t = require("cjson").decode(h.read(out))
    local n, peak = 0, 0
    for _, ev in ipairs(t.traceEvents) do
      if ev.ph == "C" and ev.name == "step" then
        n = n + 1
        peak = math.max(peak, ev.args["in flight"])
      end
    end
    assert.equal(51, n)
    assert.is_true(peak > 200 and peak <= 264) -- at most every warpgroup at once
    for _, bad in ipairs({ "0", "-3", "100001", "2.5", "x" }) do
      st, _, err = h.run("dump", buf, "--meta", meta, "-o", out, "--counters", bad)
      assert.equal(2, st)
      assert.matches("%-%-counters takes a number of bins from 1 to 100000, not `" .. bad:gsub("%p", "%%%0") .. "`", err)
    end
    st, _, err = h.run("dump", buf, "--meta", meta, "-o", dir .. "/m.json", "--compat", "mosaic", "--counters", "5")
    assert.equal(2, st)
    assert.matches("counters are for the default mode", err)
    assert.is_nil(h.read(dir .. "/m.json"))
  end)

  it("says the times are cycles when no clock rate is known", function()
    local buf, meta = fixture("wg_1block")
    local st, out = h.run("dump", buf, "--meta", meta)
    assert.equal(0, st)
    local t = require("cjson").decode(out)
    assert.equal("cycles", t.otherData.time_unit)
  end)

  it("reads .npy buffers", function()
    local raw = h.read(h.fixtures .. "/wg_1block.bin")
    local header = "{'descr': '<u4', 'fortran_order': False, 'shape': (1024,), }"
    header = header .. string.rep(" ", 64 - (10 + #header + 1) % 64) .. "\n"
    h.write(dir .. "/b.npy", "\x93NUMPY\1\0" .. h.le(#header, 2) .. header .. raw)
    local st, out, err = h.run("dump", dir .. "/b.npy", "--meta", h.fixtures .. "/wg_1block.meta.json",
      "--compat", "mosaic")
    assert.equal(0, st, err)
    assert.equal(h.read(h.fixtures .. "/wg_1block.jax.json"), out)
  end)

  describe("on bad input", function()
    local out
    before_each(function()
      out = dir .. "/out.json"
      h.write(out, "precious")
    end)
    -- every failure leaves the existing output file untouched and no temporary behind
    after_each(function()
      assert.equal("precious", h.read(out))
      local p = io.popen("ls " .. h.quote(dir))
      local listing = p:read("*a")
      p:close()
      assert.not_matches("%.tmp%.", listing)
    end)

    it("usage errors exit 2", function()
      local st, _, err = h.run("dump", "--meta", "m.json")
      assert.equal(2, st)
      assert.matches("needs a BUFFER", err)
      st, _, err = h.run("dump", "b.bin")
      assert.equal(2, st)
      assert.matches("needs %-%-meta", err)
      st, _, err = h.run("dump", "b.bin", "--meta", "m.json", "--compat", "triton")
      assert.equal(2, st)
      assert.matches("takes `mosaic`, not `triton`", err)
      st, _, err = h.run("dump", "b.bin", "--meta", "m.json", "--clock-ghz", "fast")
      assert.equal(2, st)
      assert.matches("clock rate in GHz", err)
      st, _, err = h.run("dump", "b.bin", "--meta")
      assert.equal(2, st)
      assert.matches("needs a value", err)
      st, _, err = h.run("dump", "b.bin", "--bogus")
      assert.equal(2, st)
      assert.matches("unknown option `%-%-bogus`", err)
    end)

    it("a missing buffer is an I/O error naming it", function()
      h.meta(dir .. "/m.json", { entries = 8 })
      local st, _, err = h.run("dump", dir .. "/none.bin", "--meta", dir .. "/m.json", "-o", out)
      assert.equal(1, st)
      assert.matches("none%.bin: cannot open", err)
    end)

    it("a buffer whose size is not a multiple of 4 exits 3", function()
      h.meta(dir .. "/m.json", { entries = 8 })
      h.write(dir .. "/b.bin", "123456")
      local st, _, err = h.run("dump", dir .. "/b.bin", "--meta", dir .. "/m.json", "-o", out)
      assert.equal(3, st)
      assert.matches("b%.bin: size 6 bytes is not a multiple of 4", err)
    end)

    it("a buffer of the wrong length says what the meta expects", function()
      h.meta(dir .. "/m.json", { entries = 8, block = 64 })
      h.write_words(dir .. "/b.bin", { 0, 0, 0, 0, 0, 0, 0, 0 })
      local st, _, err = h.run("dump", dir .. "/b.bin", "--meta", dir .. "/m.json", "-o", out)
      assert.equal(3, st)
      assert.matches("has 8 words but the meta describes 2 traces x 8 entries = 16 words", err)
    end)

    it("meta problems name the file and the field", function()
      h.write_words(dir .. "/b.bin", { 0, 0, 0, 0, 0, 0, 0, 0 })
      local cases = {
        { '{"grid": [1], "block": [32], "trace_scope": "warp", "names": {}}', 'field "entries_per_warpgroup" is missing' },
        { '{"grid": "one", "block": [32], "entries_per_warpgroup": 8, "names": {}}', 'field "grid" must be an array' },
        { '{"grid": [1], "block": [32], "entries_per_warpgroup": 8, "trace_scope": "cta", "names": {}}', '"trace_scope" must be' },
        { '{"grid": [1], "block": [32], "entries_per_warpgroup": 8, "trace_scope": "warp", "names": {"a": "x"}}', 'names%["a"%] must be' },
        { '{"grid": [1], "block": [32], "entries_per_warpgroup": 8, "trace_scope": "warp", "names": {"a": 2147483648}}', 'below 2%^31' },
        { '{"grid": [1], "block": [96], "entries_per_warpgroup": 8, "trace_scope": "warpgroup", "names": {}}', 'not a multiple of the warpgroup size' },
        { '{"grid": [1], "block": [32],\n "entries_per_warpgroup": 8,,}', 'invalid JSON at line 2' },
      }
      for _, c in ipairs(cases) do
        h.write(dir .. "/m.json", c[1])
        local st, _, err = h.run("dump", dir .. "/b.bin", "--meta", dir .. "/m.json", "-o", out)
        assert.equal(3, st, err)
        assert.matches("m%.json: ", err)
        assert.matches(c[2], err)
      end
    end)

    it("insufficient space exits 4 and says how many entries were needed", function()
      h.meta(dir .. "/m.json", { entries = 8 })
      h.write_words(dir .. "/b.bin", { 0, 3, 10, 0, 0, 0, 0, 0 })
      local st, _, err = h.run("dump", dir .. "/b.bin", "--meta", dir .. "/m.json", "-o", out)
      assert.equal(4, st)
      assert.matches("needed the most, 13 entries", err)
      assert.matches("required entries_per_warpgroup: 13 %(have 8%)", err)
      st, _, err = h.run("dump", dir .. "/b.bin", "--meta", dir .. "/m.json", "-o", out, "--compat", "mosaic")
      assert.equal(4, st)
      assert.matches("Insufficient space to capture a full trace", err)
    end)

    it("an odd event count exits 5", function()
      h.meta(dir .. "/m.json", { entries = 8 })
      h.write_words(dir .. "/b.bin", { 0, 3, 3, 0, 0, 0, 0, 0 })
      local st, _, err = h.run("dump", dir .. "/b.bin", "--meta", dir .. "/m.json", "-o", out, "--compat", "mosaic")
      assert.equal(5, st)
      assert.matches("odd number of trace events", err)
    end)

    it("unknown name ids and unbalanced ends name the trace", function()
      h.meta(dir .. "/m.json", { entries = 8, block = 64 })
      h.write_words(dir .. "/b.bin", { 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 2, 9, 100, 0, 0, 0 })
      local st, _, err = h.run("dump", dir .. "/b.bin", "--meta", dir .. "/m.json", "-o", out)
      assert.equal(3, st)
      assert.matches("trace 1 %(block 0 · warp 1%): event 0 has unknown name id 9", err)
      h.write_words(dir .. "/b.bin", { 0, 0, 2, 0x80000001, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 })
      st, _, err = h.run("dump", dir .. "/b.bin", "--meta", dir .. "/m.json", "-o", out)
      assert.equal(3, st)
      assert.matches("ends \"load\" but no region is open", err)
    end)
  end)
end)

describe("mgpu-harness dump -o DEVICE", function()
  it("writes to /dev/null in place and leaves it a device", function()
    local st, _, err = h.run("dump", h.fixtures .. "/wg_1block.bin", "--meta", h.fixtures .. "/wg_1block.meta.json",
      "-o", "/dev/null")
    assert.equal(0, st, err)
    local p = io.popen("stat -c %F /dev/null")
    local kind = p:read("*a")
    p:close()
    assert.matches("character special file", kind)
  end)
  it("names the option the user gave when cuda has no device: --backend, --workers, the experiment's", function()
    local dir = h.tmpdir()
    h.write(dir .. "/exp.lua", "return { name = 'nodev', module = " .. string.format("%q", h.src .. "/ptx/copy.ptx")
      .. ", kernel = 'copy_f32x4', setup = function() error('not reached') end }")
    h.write(dir .. "/exp_cuda.lua", "return { name = 'nodev', backend = 'cuda', module = "
      .. string.format("%q", h.src .. "/ptx/copy.ptx") .. ", kernel = 'copy_f32x4', setup = function() end }")
    local env = "MGPU_LIBCUDA=/nonexistent/libcuda.so.1"
    local st, _, err = h.run_env(env, dir .. "/exp.lua", "--backend", "cuda", "--out", dir .. "/r1")
    assert.equal(1, st, err)
    assert.matches("--backend cuda: no CUDA device: cannot load the CUDA driver", err, 1, true)
    assert.not_matches("--workers", err, 1, true)
    st, _, err = h.run_env(env, dir .. "/exp.lua", "--backend", "cuda:1", "--workers", "2", "--out", dir .. "/r2")
    assert.equal(1, st, err)
    assert.matches("--workers 2 with --backend cuda:1: no CUDA device", err, 1, true)
    st, _, err = h.run_env(env, dir .. "/exp_cuda.lua", "--out", dir .. "/r3")
    assert.equal(1, st, err)
    assert.matches('the experiment\'s backend = "cuda": no CUDA device', err, 1, true)
    h.rmdir(dir)
  end)
end)
