-- experiment_stats_spec.lua: an experiment's stats = true (emu): each point's
-- exact counters in point-N.stats.json/.csv, the totals in its row and in
-- results.csv, and `mgpu-harness stats` reading them back.
local h = require "helpers"
local mgpu = require "mgpu"
local core = require "mgpu.core"
local results = require "mgpu.results"

describe("an experiment with stats = true", function()
  it("writes each point's counters and puts the totals in results.csv", function()
    local dir = h.tmpdir()
    local r = mgpu.run({
      name = "stats_test", module = h.src .. "/ptx/copy.ptx", kernel = "copy_f32x4",
      axes = { n4 = { 32, 64 } }, warmup = 0, repeats = 1, stats = true,
      setup = function(p, dev)
        return { grid = 1, block = 32, args = { dev:array("f32", 4 * p.n4), dev:array("f32", 4 * p.n4), p.n4 } }
      end,
    }, { out = dir .. "/r", quiet = true })
    assert.equal(2, r.ok)
    local rows = results.latest(results.read_rows(dir .. "/r/results.jsonl"))
    local key = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
    -- one float4 load per thread and iteration: 32 and 64 float4s are 1 and 2 warp requests
    assert.equal(1, rows[1].stats[key])
    assert.equal(2, rows[2].stats[key])
    assert.equal("point-1.stats.json", rows[1].stats_file)
    local st = core.json_decode(io.open(dir .. "/r/point-2.stats.json"):read("*a"))
    assert.equal(2, st.total[key])
    local csv = io.open(dir .. "/r/results.csv"):read("*a")
    assert.matches("stats%." .. key:gsub("%p", "%%%0"), csv)
    local status, out = h.run("stats", dir .. "/r/point-2.stats.json", "--top", "2")
    assert.equal(0, status)
    assert.matches("global: 4 requests", out)
    local ok, err = pcall(mgpu.run, { name = "x", module = "m.ptx", kernel = "k", setup = function() end, stats = 1 },
      { out = dir .. "/bad", quiet = true })
    assert.is_false(ok)
    assert.matches("experiment.stats must be true or false", err.message)
    h.rmdir(dir)
  end)
end)
