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
    local exp = write_exp(dir, { module = h.src .. "/tests/ptx/side_effects.ptx", kernel = "forever_counting",
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
