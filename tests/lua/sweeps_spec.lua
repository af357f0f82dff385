-- sweeps_spec.lua: sweeps beyond one process (issue 14), from the command
-- line: --workers gives the rows a single process gives (word for word on emu
-- but for wall-clock fields), a worker killed mid-point is replaced and the
-- point tried again, a point past timeout_s fails as timeout and the sweep goes
-- on, shards merge into the single run, and --workers auto on cuda starts one
-- worker per device of the fake driver with CUDA_VISIBLE_DEVICES set.
local h = require "helpers"
local core = require "mgpu.core"
local results = require "mgpu.results"

-- An experiment file: the tiled kernel over 8 points; extra Lua inserted into setup.
local function write_exp(dir, opts)
  opts = opts or {}
  h.write(dir .. "/exp.lua", string.format([[
local mgpu = require "mgpu"
local core = require "mgpu.core"
return {
  name = "sweep_test", module = %q, kernel = %q, instrument = "warp",
  axes = { tiles = { 1, 2, 3, 4 }, alpha = { 1.0, 2.0 } },
  warmup = 0, repeats = 1, timeout_s = %s,
  setup = function(p, dev)
    %s
    local n = 64 * p.tiles
    local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
    return { grid = 2, block = 64, smem = 256, args = { a, c, n, p.alpha }, estimate = 1 }
  end,
}
]], opts.module or (h.src .. "/ptx/tiled.ptx"), opts.kernel or "tiled_scale", tostring(opts.timeout or "nil"),
    opts.setup or ""))
  return dir .. "/exp.lua"
end

-- The rows of a folder by key, without the fields that are wall clock.
local function rows_of(dir)
  local out = {}
  for _, r in ipairs(results.latest(results.read_rows(dir .. "/results.jsonl"))) do
    r.wall_s = nil
    out[r.key] = core.json_encode(r)
  end
  return out
end

describe("sweeps", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.rmdir(dir) end)

  it("give with --workers 2 the rows and traces of one process", function()
    local exp = write_exp(dir)
    local st = h.run(exp, "--out", dir .. "/one", "--quiet")
    assert.equal(0, st)
    st = h.run(exp, "--out", dir .. "/two", "--workers", "2", "--quiet")
    assert.equal(0, st)
    local a, b = rows_of(dir .. "/one"), rows_of(dir .. "/two")
    local n = 0
    for k, v in pairs(a) do
      n = n + 1
      assert.equal(v, b[k], k)
    end
    assert.equal(8, n)
    for i = 1, 8 do
      local f = string.format("/point-%d.trace.json", i)
      assert.equal(io.open(dir .. "/one" .. f):read("*a"), io.open(dir .. "/two" .. f):read("*a"), f)
    end
    local man = core.json_decode(io.open(dir .. "/two/manifest.json"):read("*a"))
    assert.equal(2, man.workers)
  end)

  it("give emu workers their share of the cores (MGPU_EMU_THREADS), or what the user set", function()
    -- each point writes the MGPU_EMU_THREADS its worker process sees (before: unset, so every
    -- worker's emu ran its SMs on all the machine's cores: N x cores threads)
    local exp = write_exp(dir, { setup = string.format([[
    local f = io.open(%q .. "/env-" .. p.tiles .. "-" .. p.alpha, "w")
    f:write(tostring(os.getenv("MGPU_EMU_THREADS"))); f:close()]], dir) })
    local function seen()
      local v = {}
      for _, t in ipairs({ 1, 2, 3, 4 }) do
        for _, a in ipairs({ "1.0", "2.0" }) do
          local f = assert(io.open(string.format("%s/env-%d-%s", dir, t, a)))
          v[f:read("*a")] = true
          f:close()
        end
      end
      return v
    end
    assert.equal(0, (h.run_env("-u MGPU_EMU_THREADS", exp, "--out", dir .. "/a", "--workers", "2", "--quiet")))
    assert.same({ [tostring(math.max(1, math.floor(core.cpus() / 2)))] = true }, seen())
    assert.equal(0, (h.run_env("MGPU_EMU_THREADS=3", exp, "--out", dir .. "/b", "--workers", "2", "--quiet")))
    assert.same({ ["3"] = true }, seen())
  end)

  it("replace a worker killed mid-point and run its point again", function()
    local exp = write_exp(dir, { setup = string.format([[
    if p.tiles == 3 and p.alpha == 2.0 and not io.open(%q) then
      io.open(%q, "w"):close()
      os.execute("kill -9 " .. core.getpid())
    end]], dir .. "/killed", dir .. "/killed") })
    local st, out, err = h.run(exp, "--out", dir .. "/r", "--workers", "2", "--quiet")
    assert.equal(0, st, err)
    local rows = results.latest(results.read_rows(dir .. "/r/results.jsonl"))
    assert.equal(8, #rows)
    for _, r in ipairs(rows) do assert.equal("ok", r.status, r.key) end
    assert.is_not_nil(io.open(dir .. "/killed"))
  end)

  it("record worker_lost when the point kills its worker again, and go on", function()
    local exp = write_exp(dir, { setup = [[
    if p.tiles == 2 and p.alpha == 1.0 then os.execute("kill -9 " .. core.getpid()) end]] })
    local st = h.run(exp, "--out", dir .. "/r", "--workers", "2", "--quiet")
    assert.equal(7, st) -- a point failed
    local rows = results.latest(results.read_rows(dir .. "/r/results.jsonl"))
    assert.equal(8, #rows)
    local lost = 0
    for _, r in ipairs(rows) do
      if r.status ~= "ok" then
        lost = lost + 1
        assert.equal("worker_lost", r.error.code)
        assert.equal(9, r.error.signal)
        assert.matches("killed by signal 9", r.error.message)
      end
    end
    assert.equal(1, lost)
  end)

  it("fail a point past timeout_s as timeout, in one process and with workers, and go on", function()
    h.write(dir .. "/flag.lua", "")
    local exp = write_exp(dir, { module = h.src .. "/tests/ptx/side_effects.ptx", kernel = "forever_computing",
      timeout = 0.3, setup = [[
    if p.tiles ~= 2 then
      local f = dev:array("i32", { 1 })
      return { grid = 1, block = 32, args = { f, dev:array("i32", 32) } }
    end
    do return { grid = 1, block = 32, args = { dev:array("i32", 1), dev:array("i32", 32) } } end]] })
    for _, w in ipairs({ {}, { "--workers", "2" } }) do
      local out = dir .. "/r" .. #w
      local args = { exp, "--out", out, "--quiet" }
      for _, a in ipairs(w) do args[#args + 1] = a end
      local t0 = core.now()
      local st, _, err = h.run((table.unpack or unpack)(args))
      assert.equal(7, st, err)
      assert.is_true(core.now() - t0 < 30)
      local rows = results.latest(results.read_rows(out .. "/results.jsonl"))
      assert.equal(8, #rows)
      local timeouts = 0
      for _, r in ipairs(rows) do
        if r.point.tiles == 2 then
          assert.equal("failed", r.status)
          assert.equal("timeout", r.error.code)
          timeouts = timeouts + 1
        else
          assert.equal("ok", r.status)
        end
      end
      assert.equal(2, timeouts)
    end
  end)

  it("split into shards that merge into the single run, and resume what a merge misses", function()
    local exp = write_exp(dir)
    assert.equal(0, (h.run(exp, "--out", dir .. "/one", "--quiet")))
    for i = 1, 3 do
      assert.equal(0, (h.run(exp, "--out", dir .. "/s" .. i, "--shard", i .. "/3", "--quiet")))
    end
    local st, out = h.run("merge", dir .. "/m", dir .. "/s1", dir .. "/s2", dir .. "/s3")
    assert.equal(0, st)
    assert.matches("8 of 8 points, 8 ok, 0 missing", out)
    local a, b = rows_of(dir .. "/one"), rows_of(dir .. "/m")
    for k, v in pairs(a) do assert.equal(v, b[k], k) end
    -- again: the same
    st = h.run("merge", dir .. "/m", dir .. "/s1", dir .. "/s2", dir .. "/s3")
    assert.equal(0, st)
    assert.equal(8, #results.read_rows(dir .. "/m/results.jsonl"))
    -- two shards of three: the missing points named with their shard, then resumed
    st, out = h.run("merge", dir .. "/m2", dir .. "/s1", dir .. "/s3")
    assert.equal(1, st)
    assert.matches("missing: point 2 %(.-%), owed by shard 2/3", out)
    assert.equal(0, (h.run(exp, "--resume", dir .. "/m2", "--quiet")))
    b = rows_of(dir .. "/m2")
    for k, v in pairs(a) do assert.equal(v, b[k], k) end
    -- a shard given as the output and as a source is refused, and left as it was (issue 25)
    local err
    local before = io.open(dir .. "/s1/manifest.json"):read("*a")
    st, out, err = h.run("merge", dir .. "/s1", dir .. "/s1", dir .. "/s2")
    assert.equal(2, st)
    assert.matches("holds a run's results that no merge made %(it is also one of the folders to merge%)", err)
    assert.equal(before, io.open(dir .. "/s1/manifest.json"):read("*a"))
    -- folders of another sweep are refused, naming what differs
    local other = write_exp(dir .. "/", { kernel = "tiled_scale" })
    h.write(dir .. "/other.lua", io.open(other):read("*a"):gsub("alpha = { 1.0, 2.0 }", "alpha = { 3.0 }"))
    assert.equal(0, (h.run(dir .. "/other.lua", "--out", dir .. "/o", "--quiet")))
    st, out, err = h.run("merge", dir .. "/m3", dir .. "/s1", dir .. "/o")
    assert.equal(2, st)
    assert.matches("differ in script", err)
  end)

  it("start one worker per device of the fake driver on cuda, each with its CUDA_VISIBLE_DEVICES", function()
    local fake = os.getenv("MGPU_FAKE_CUDA")
    if not fake then return end
    local exp = write_exp(dir, { setup = string.format([[
    local f = io.open(%q .. string.format("/cvd-%%d-%%g", p.tiles, p.alpha), "w")
    f:write(os.getenv("CUDA_VISIBLE_DEVICES") or "unset", " ", os.getenv("MGPU_WORKER_SLOT") or "?")
    f:close()]], dir) })
    local st, _, err = h.run_env("MGPU_LIBCUDA=" .. fake .. " FAKE_CUDA_DEVICES=3", exp, "--out", dir .. "/c",
      "--workers", "auto", "--backend", "cuda", "--quiet")
    assert.equal(0, st, err)
    local man = core.json_decode(io.open(dir .. "/c/manifest.json"):read("*a"))
    assert.equal(3, man.workers)
    assert.same({ 0, 1, 2 }, man.devices)
    assert.equal("cuda", man.backend)
    local seen = {}
    for _, t in ipairs({ 1, 2, 3, 4 }) do
      for _, a in ipairs({ 1.0, 2.0 }) do
        local f = io.open(string.format("%s/cvd-%d-%g", dir, t, a))
        local cvd, slot = f:read("*a"):match("^(%S+) (%S+)$")
        f:close()
        assert.equal(tostring(tonumber(slot) - 1), cvd) -- slot k (1-based) uses device k - 1
        seen[cvd] = true
      end
    end
    assert.same({ ["0"] = true, ["1"] = true, ["2"] = true }, seen)
  end)
end)

-- Compile-time axes (issue 35): a templated kernel swept over its template argument and a -D
-- axis, each build compiled once (nvcc counted through a wrapper), a failing build failing only
-- its points, the folder replayable without nvcc and without the cache.
local nvcc = require "mgpu.nvcc"
local have_nvcc = nvcc.find() ~= nil

local TEMPLATED_CU = [[
#ifndef SCALE
#define SCALE 1
#endif
template <int TILE>
__global__ void scale_tiled(const float *a, float *c, int n) {
  int i = blockIdx.x * TILE + threadIdx.x;
  if (i < n) c[i] = a[i] * SCALE + TILE;
}
template __global__ void scale_tiled<32>(const float *, float *, int);
template __global__ void scale_tiled<64>(const float *, float *, int);
]]

local function write_templated(dir, scales, extra)
  h.write(dir .. "/k.cu", TEMPLATED_CU)
  h.write(dir .. "/exp.lua", string.format([[
return {
  name = "templated", module = "k.cu",
  kernel = function(p) return "scale_tiled<" .. p.tile .. ">" end,
  defines = { "SCALE" },
  axes = { tile = { 32, 64 }, SCALE = { %s } },
  warmup = 0, repeats = 1, %s
  setup = function(p, dev)
    local n = 128
    local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
    return { grid = n // p.tile, block = p.tile, args = { a, c, n },
      check = function()
        local v = c:read()
        for i = 1, n do
          if v[i] ~= (i - 1) * p.SCALE + p.tile then return false, "element " .. i .. ": " .. v[i] end
        end
        return true
      end }
  end,
}
]], scales, extra or ""))
  -- nvcc through a wrapper that counts the compiles (not `nvcc --version`)
  h.write(dir .. "/nvcc", string.format([[#!/bin/sh
case "$*" in *-ptx*) echo x >> %q ;; esac
exec %q "$@"
]], dir .. "/compiles", nvcc.find()))
  os.execute("chmod +x " .. h.quote(dir .. "/nvcc"))
  return dir .. "/exp.lua", "MGPU_NVCC=" .. h.quote(dir .. "/nvcc") .. " MGPU_CACHE=" .. h.quote(dir .. "/cache")
end

local function count_lines(path)
  local n = 0
  for _ in (h.read(path) or ""):gmatch("\n") do n = n + 1 end
  return n
end

describe("compile-time axes", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.rmdir(dir) end)

  it("sweep a template argument and a -D axis: 4 points, 2 compiles, the PTX kept in the folder", function()
    if not have_nvcc then return pending("nvcc not found") end
    local exp, env = write_templated(dir, "2, 3")
    local st, out, err = h.run_env(env, exp, "--list")
    assert.equal(0, st, err)
    assert.matches("build 1: nvcc %-ptx %-arch=sm_90 %-O3 %-lineinfo %-DSCALE=2  %(2 points%)", out)
    assert.matches("build 2: nvcc %-ptx %-arch=sm_90 %-O3 %-lineinfo %-DSCALE=3  %(2 points%)", out)
    assert.matches("scale_tiled<64>", out)
    st, out, err = h.run_env(env, exp, "--out", dir .. "/r")
    assert.equal(0, st, err .. out)
    assert.equal(2, count_lines(dir .. "/compiles"))
    local man = core.json_decode(h.read(dir .. "/r/manifest.json"))
    assert.equal(2, #man.builds)
    for i, b in ipairs(man.builds) do
      assert.equal(string.format("builds/build-%d.ptx", i), b.ptx)
      assert.equal(core.sha256_file(dir .. "/r/" .. b.ptx), b.sha256)
      assert.matches("^release %d+", b.nvcc)
      assert.equal(2, b.points)
    end
    assert.same({ "-O3", "-lineinfo", "-DSCALE=3" }, man.builds[2].nvcc_flags)
    assert.equal("per point (a function: each row's kernel)", man.kernel) -- not "function"
    st, _, err = h.run("report", dir .. "/r", "-o", dir .. "/r.html")
    assert.equal(0, st, err)
    assert.matches("<dt>builds</dt><dd>2 %(release [^<]*; their PTX in builds/%)</dd>", h.read(dir .. "/r.html"))
    local rows = results.latest(results.read_rows(dir .. "/r/results.jsonl"))
    assert.equal(4, #rows)
    for _, r in ipairs(rows) do
      assert.equal("ok", r.status, r.key)
      assert.equal(r.point.SCALE == 2 and 1 or 2, r.build)
      assert.equal("scale_tiled<" .. r.point.tile .. ">", r.kernel)
    end
    -- workers load the builds' PTX from the folder: the same rows, no compile more
    st, _, err = h.run_env(env, exp, "--out", dir .. "/w", "--workers", "2", "--quiet")
    assert.equal(0, st, err)
    assert.equal(4, count_lines(dir .. "/compiles"))
    -- shards compile only the builds their points need, numbered over the whole sweep: merged,
    -- the folder has every build and equals the single run
    st, _, err = h.run_env(env, exp, "--out", dir .. "/s1", "--shard", "1/2", "-q")
    assert.equal(0, st, err)
    st, _, err = h.run_env(env, exp, "--out", dir .. "/s2", "--shard", "2/2", "-q")
    assert.equal(0, st, err)
    st, _, err = h.run("merge", dir .. "/m", dir .. "/s1", dir .. "/s2")
    assert.equal(0, st, err)
    local merged = core.json_decode(h.read(dir .. "/m/manifest.json"))
    assert.equal(2, #merged.builds)
    for i, b in ipairs(merged.builds) do
      assert.equal(man.builds[i].sha256, b.sha256)
      assert.equal(b.sha256, core.sha256_file(dir .. "/m/builds/build-" .. i .. ".ptx"))
    end
    for _, r in ipairs(results.latest(results.read_rows(dir .. "/m/results.jsonl"))) do
      assert.equal(r.point.SCALE == 2 and 1 or 2, r.build)
    end
    -- replayable with the cache removed and no nvcc at all
    h.rmdir(dir .. "/cache")
    st, out, err = h.run_env("MGPU_NVCC=/nonexistent/nvcc MGPU_CACHE=" .. h.quote(dir .. "/cache2"), "replay", dir .. "/r")
    assert.equal(0, st, err .. out)
    assert.matches("4 points identical, 0 differ", out)
  end)

  it("fail only the points of a build that does not compile", function()
    if not have_nvcc then return pending("nvcc not found") end
    local exp, env = write_templated(dir, '2, "undefined_name"')
    local st, out, err = h.run_env(env, exp, "--out", dir .. "/r", "-q")
    assert.equal(7, st, err .. out)
    local rows = results.latest(results.read_rows(dir .. "/r/results.jsonl"))
    local ok, failed = 0, 0
    for _, r in ipairs(rows) do
      if r.status == "ok" then ok = ok + 1 else
        failed = failed + 1
        assert.equal("compile_failed", r.error.code)
        assert.matches("^build 2 %(nvcc %-arch=sm_90 %-O3 %-lineinfo %-DSCALE=undefined_name%)", r.error.message)
      end
    end
    assert.equal(2, ok)
    assert.equal(2, failed)
    assert.is_string(h.read(dir .. "/r/builds/build-2.log"))
    -- -q still says what failed (issue 35: it printed nothing but exit 7)
    assert.matches("point 3 SCALE=undefined_name,tile=32 failed: compile_failed", err)
  end)

  it("say which arch an sm_90a instruction needs, naming a PTX file that still exists", function()
    if not have_nvcc then return pending("nvcc not found") end
    h.write(dir .. "/w.cu", '__global__ void k(float *o) { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); o[0] = 1; }\n')
    h.write(dir .. "/s.lua", string.format([[
      local dev = require("mgpu").device("emu")
      local ok, e = pcall(dev.load, dev, %q)
      print(e.code, e.message)
    ]], dir .. "/w.cu"))
    local st, out, err = h.run_env("MGPU_CACHE=" .. h.quote(dir .. "/cache"), dir .. "/s.lua")
    assert.equal(0, st, err)
    assert.matches('^compile_failed\t.*not supported on %.target \'sm_90\'.*arch = "sm_90a"', out)
    assert.not_matches("%.tmp", out)
    local ptx = out:match("ptxas (%S+%-failed%.ptx)")
    assert.is_string(ptx, out)
    assert.is_string(h.read(ptx:gsub(",$", "")))
  end)

  it("name a template instance the module does not have, and the ones it has", function()
    if not have_nvcc then return pending("nvcc not found") end
    local builds = require "mgpu.builds"
    local text = ".visible .entry _Z11scale_tiledILi32EEvPKfPfi(\n.visible .entry _Z11scale_tiledILi64EEvPKfPfi(\n"
    assert.equal("_Z11scale_tiledILi64EEvPKfPfi", builds.resolve(text, "scale_tiled<64>", "k.ptx"))
    assert.equal("plain", builds.resolve(text, "plain", "k.ptx"))
    local ok, e = pcall(builds.resolve, text, "scale_tiled<16>", "k.ptx")
    assert.is_false(ok)
    assert.matches("k%.ptx has no such instance of scale_tiled %(it has scale_tiled<32>, scale_tiled<64>%)", e.message)
    ok, e = pcall(builds.resolve, ".entry _Z4gemmIfLi128EEvPf(\n.entry _Z4gemmI6__halfLin4EEvPf(\n", "gemm<double, 1>", "k")
    assert.matches("it has gemm<float, 128>, gemm<__half, %-4>", e.message)
    assert.equal("not_found", e.code) -- as a kernel name the module lacks
    text = ".entry _Z4gemmIfLi128EEvPf(\n.entry _Z4gemmI6__halfLi128EEvPf(\n.entry _Z4flagILb1EEvv("
    assert.equal("_Z4gemmIfLi128EEvPf", builds.resolve(text, "gemm<float, 128>", "k.ptx"))
    assert.equal("_Z4gemmI6__halfLi128EEvPf", builds.resolve(text, "gemm<__half,128>", "k.ptx"))
    assert.equal("_Z4flagILb1EEvv", builds.resolve(text, "flag<true>", "k.ptx"))
  end)
end)

describe("sweep size", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.rmdir(dir) end)

  local function big(n)
    h.write(dir .. "/big.lua", string.format([[
local v = {}
for i = 1, %d do v[i] = i end
return { name = "big", module = %q, kernel = "tiled_scale", axes = { a = v, b = v, c = v },
  setup = function() return { grid = 1, block = 32, args = {} } end }
]], n, h.src .. "/ptx/tiled.ptx"))
    return dir .. "/big.lua"
  end

  it("list 10^6 points streamed, and refuse to run more than 10^6 at once", function()
    local exp = big(100)
    local p = io.popen("/usr/bin/time -f '%M' " .. h.quote(h.exe) .. " " .. h.quote(exp) .. " --list 2>" ..
      h.quote(dir .. "/mem") .. " | tail -1")
    local last = p:read("*a")
    p:close()
    assert.matches("1000000 points %(0 filtered out%)", last)
    local kb = tonumber((h.read(dir .. "/mem") or ""):match("(%d+)%s*$"))
    -- (not under AddressSanitizer, whose shadow memory and quarantine make the RSS no measure)
    if kb and not os.getenv("ASAN_OPTIONS") then assert.is_true(kb < 200 * 1024, "listing took " .. kb .. " KiB") end
    local st, _, err = h.run(big(101), "--out", dir .. "/r")
    assert.equal(2, st)
    assert.matches("the axes make 1030301 points, more than the 1000000 one run takes", err)
    assert.is_nil(h.read(dir .. "/r/manifest.json"))
  end)
end)

describe("slurm --dry-run", function()
  it("prints the scripts and the sbatch command, and writes nothing, not even DIR (issue 35)", function()
    local dir = h.tmpdir()
    local exp = write_exp(dir)
    local st, out, err = h.run_env("MGPU_SBATCH=/nonexistent/sbatch", "slurm", exp, "--tasks", "2", "--out",
      dir .. "/sweep", "--dry-run")
    assert.equal(0, st, err)
    assert.matches("#SBATCH %-%-array=1,2", out)
    assert.matches("slurm/merge%.sh %(not written%)", out)
    assert.matches("nothing was written or submitted", out)
    assert.is_nil(h.read(dir .. "/sweep/slurm/array.sh"))
    assert.is_false(os.rename(dir .. "/sweep", dir .. "/sweep2") and true or false)
    h.rmdir(dir)
  end)
end)

describe("a manifest's builds", function()
  it("are checked before use: a bad_results naming the field", function()
    local builds = require "mgpu.builds"
    for _, c in ipairs({ { { { index = 1, arch = "sm_90", nvcc_flags = "-O3" } }, "builds%[1%]%.nvcc_flags must be a list" },
      { { { index = 2, arch = "sm_90", nvcc_flags = {} } }, "builds%[1%]%.index must be 1" },
      { { { index = 1, arch = "sm_90", nvcc_flags = {}, ptx = "../../etc/passwd" } }, "builds%[1%]%.ptx must be builds/build%-N%.ptx" } }) do
      local ok, e = pcall(builds.plan, { kernel = "k" }, {}, {}, "sm_90", {}, c[1])
      assert.is_false(ok)
      assert.equal("bad_results", e.code)
      assert.matches(c[2], e.message)
    end
  end)
end)
