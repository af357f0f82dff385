-- compare_spec.lua: `mgpu-harness compare`: two results folders (points by
-- their axis values, launch-time changes against the runs' noise, region
-- medians), two region summaries, the --max-slowdown gate, and its errors.
local h = require "helpers"
local core = require "mgpu.core"
local compare = require "mgpu.compare"
local unpack = table.unpack or unpack -- Lua 5.4 / LuaJIT

-- A results folder with a manifest and one jsonl line per row.
local function folder(dir, experiment, rows, device)
  h.write_results(dir, { experiment = experiment, backend = "cuda", device = device or "NVIDIA H200",
    axes = { { kind = "axis", names = { "n" }, rows = { { 1 }, { 2 }, { 3 } } } } }, rows)
end

local function row(index, n, median, spread, regions)
  return { index = index, key = "n=" .. n, point = { n = n }, status = "ok", unit = "ns",
    time_ns = { min = median - spread, median = median, max = median + spread, mean = median, stddev = 1, n = 5 },
    regions = regions }
end

local function region(name, median) return { name = name, count = 4, median = median, mean = median, p99 = median } end

describe("compare", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.rmdir(dir) end)

  it("matches points by their axis values and weighs time changes against the noise", function()
    folder(dir .. "/a", "sweep", {
      row(1, 1, 1000, 50, { region("load", 400) }),
      row(2, 2, 2000, 10, { region("load", 800) }),
      row(3, 3, 3000, 10),
    })
    folder(dir .. "/b", "sweep", {
      row(1, 2, 2600, 10, { region("load", 1000) }), -- +30% on n=2, beyond 40 ns of noise
      row(2, 1, 1060, 50, { region("load", 400) }),  -- +6% on n=1, within 200 ns of noise
      row(3, 4, 100, 0),
    })
    local r = compare.folders(dir .. "/a", dir .. "/b")
    assert.equal(2, r.matched)
    assert.equal(1, r.only_base)
    assert.equal(1, r.only_new)
    assert.near(30, r.worst, 1e-9)
    assert.matches("\n1%s+1  1.00 us  1.06 us  %+6.0%% %(noise%)  load 0%%", r.table)
    assert.matches("\n2%s+2  2.00 us  2.60 us  %+30.0%%%s+load %+25.0%%", r.table)
    assert.matches("\n3%s+3  3.00 us  %-%s+%-%s+not in the new run", r.table)
    assert.matches("\nnew  4  %-%s+100 ns%s+%-%s+not in the base run", r.table)

    local st, out = h.run("compare", dir .. "/a", dir .. "/b", "--max-slowdown", "25")
    assert.equal(9, st)
    assert.matches("2 compared, 1 only in base, 1 only in new\nslower by 30.0%%, more than %-%-max%-slowdown 25%%", out)
    -- not slower by more than 31%, but point n=3 of base is not in new: the gate cannot pass it
    st, out = h.run("compare", dir .. "/a", dir .. "/b", "--max-slowdown", "31")
    assert.equal(9, st)
    assert.matches("1 point of base not in new", out, 1, true)
    st, out = h.run("compare", dir .. "/a", dir .. "/a", "--max-slowdown", "0")
    assert.equal(0, st)
    assert.matches("\n1  1  1.00 us  1.00 us  0%%  ", out)
  end)

  it("shows failed points and says when the devices differ", function()
    folder(dir .. "/a", "sweep", { row(1, 1, 1000, 0) })
    local failed = row(1, 1, 1000, 0)
    failed.status, failed.time_ns = "failed", nil
    failed.error = { code = "kernel_fault", message = "illegal address in k" }
    folder(dir .. "/b", "sweep", { failed }, "emu (CPU PTX executor)")
    local r = compare.folders(dir .. "/a", dir .. "/b")
    assert.matches("note: different devices", r.title)
    assert.matches("\n1%s+1%s+ok%s+failed%s+%-%s+illegal address in k", r.table)
    assert.equal(-math.huge, r.worst)
  end)

  it("compares two region summaries by name, with their timelines", function()
    local function summary(path, regions, span)
      h.write(path, core.json_encode({ unit = "ns", regions = regions,
        timeline = { span = span, traces = 8, sms = 2, sm_done_min = math.floor(span / 2), sm_done_median = math.floor(span / 2),
          sm_done_max = span } }))
    end
    summary(dir .. "/a.json", { region("load", 1000), region("store", 500), region("old", 10) }, 10000)
    summary(dir .. "/b.json", { region("load", 900), region("store", 600), region("fresh", 7) }, 11000)
    local r = compare.summaries(dir .. "/a.json", dir .. "/b.json")
    assert.matches("\nload%s+4%s+1.00 us%s+900 ns%s+%-10.0%%", r.table)
    assert.matches("\nstore%s+4%s+500 ns%s+600 ns%s+%+20.0%%", r.table)
    assert.matches("\nold%s+4%s+10 ns%s+%-%s+gone", r.table)
    assert.matches("\nfresh%s+4%s+%-%s+7 ns%s+new", r.table)
    assert.matches("span 10.00 us %-> 11.00 us %(%+10.0%%%)", r.title)
    assert.near(20, r.worst, 1e-9)
    local st = h.run("compare", dir .. "/a.json", dir .. "/b.json", "--max-slowdown", "15")
    assert.equal(9, st)
  end)

  it("refuses what it cannot compare, with the reason", function()
    folder(dir .. "/a", "sweep", { row(1, 1, 1000, 0) })
    folder(dir .. "/c", "other", { row(1, 1, 1000, 0) })
    h.write(dir .. "/s.json", core.json_encode({ unit = "ns", regions = {} }))
    h.write(dir .. "/cycles.json", core.json_encode({ unit = "cycles", regions = {} }))
    h.write(dir .. "/x.json", "{\"traceEvents\": []}")
    local cases = {
      { { dir .. "/a", dir .. "/c" }, "is experiment sweep, .* is other" },
      { { dir .. "/a", dir .. "/s.json" }, "two results folders or two summaries" },
      { { dir .. "/s.json", dir .. "/cycles.json" }, "is in ns, .* in cycles" },
      { { dir .. "/s.json", dir .. "/x.json" }, "x.json: not a results folder %(no results.jsonl%) nor a region summary" },
      { { dir .. "/s.json" }, "usage: mgpu%-harness compare BASE NEW" },
      { { dir .. "/s.json", dir .. "/s.json", "--max-slowdown", "fast" }, "takes a percentage" },
      { { dir .. "/s.json", dir .. "/s.json", "--max-slowdown", "0x10" }, "takes a percentage" },
      { { dir .. "/s.json", dir .. "/s.json", "--max-slowdown", "1e400" }, "takes a percentage" },
      { { dir .. "/s.json", dir .. "/s.json", "--bogus" }, "unknown option %-%-bogus" },
      -- a results folder's files for the folders (third hostile round: "invalid JSON at line 2")
      { { dir .. "/a/results.jsonl", dir .. "/a/results.jsonl" }, "results%.jsonl is a file of a results folder: give the folder" },
      { { dir .. "/a/manifest.json", dir .. "/s.json" }, "manifest%.json is a file of a results folder: give the folder" },
    }
    for _, c in ipairs(cases) do
      local st, _, err = h.run("compare", unpack(c[1]))
      assert.equal(2, st, err)
      assert.matches(c[2], err)
    end
    -- malformed results: the file, the line and the field, exit status 3
    folder(dir .. "/bad", "sweep", { row(1, 1, 1000, 0) })
    h.write(dir .. "/bad/results.jsonl", '{"key":"n=1","status":"ok","time_ns":{"median":1}}\n{"key":"n=3","status":"ok"}\n'
      .. '{"key":"n=2","status":"ok","time_ns":{"median":"fast"}}\n')
    -- a line cut short is said, not dropped: before the last line no crash made it (the last: torn)
    folder(dir .. "/cut", "sweep", { row(1, 1, 1000, 0) })
    h.write(dir .. "/cut/results.jsonl", '{"key":"n=1","status":"ok","time_ns":{"median":1}}\ncut sho\n'
      .. '{"key":"n=2","status":"ok","time_ns":{"median":2}}\n')
    os.execute("mkdir -p " .. h.quote(dir .. "/badman"))
    h.write(dir .. "/badman/manifest.json", '{"experiment": "sweep", "axes": [{"names": [1]}]}')
    h.write(dir .. "/badman/results.jsonl", "")
    h.write(dir .. "/r1.json", core.json_encode({ unit = "ns", regions = { { count = 1 } } }))
    h.write(dir .. "/r2.json", core.json_encode({ unit = "ns", regions = { { name = "a", median = "x" } } }))
    h.write(dir .. "/r3.json", core.json_encode({ unit = "ns", regions = {}, timeline = { span = {} } }))
    local malformed = {
      { { dir .. "/a", dir .. "/bad" }, "bad/results%.jsonl:3: time_ns%.median must be a number" },
      { { dir .. "/a", dir .. "/cut" }, "cut/results%.jsonl:2: not a JSON object %(a result row%): column 3: invalid token near 'cut'" },
      { { dir .. "/badman", dir .. "/a" }, "badman/manifest%.json: axes%[1%]: a name that is not a string" },
      { { dir .. "/r1.json", dir .. "/s.json" }, "r1%.json: region 1 has no name" },
      { { dir .. "/s.json", dir .. "/r2.json" }, "r2%.json: region a%.median must be a number" },
      { { dir .. "/r3.json", dir .. "/s.json" }, "r3%.json: timeline%.span must be a number" },
    }
    for _, c in ipairs(malformed) do
      local st, _, err = h.run("compare", unpack(c[1]))
      assert.equal(3, st, err)
      assert.matches(c[2] .. " %[bad_results%]", err)
    end
    local st, _, err = h.run("compare", dir .. "/none.json", dir .. "/s.json")
    assert.equal(1, st, err)
    assert.matches("none.json: cannot open %[io_error%]", err)
  end)
  it("says which point and which regions got slower, and whether the kernel's source changed", function()
    local function man(sha, headers)
      return { experiment = "sweep", backend = "emu", device = "emu",
        axes = { { kind = "axis", names = { "n" }, rows = { { 1 }, { 2 } } } },
        ptx = { { path = "/src/k.cu", sha256 = sha } }, headers = headers,
        compiled = { ptx = "/cache/k.ptx", sha256 = sha .. "0" } }
    end
    local rows_a = { row(1, 1, 1000, 0, { region("load", 400), region("store", 300) }),
      row(2, 2, 2000, 0, { region("load", 800), region("store", 600) }) }
    local rows_b = { row(1, 1, 1100, 0, { region("load", 400), region("store", 360) }), -- +10%
      row(2, 2, 3000, 0, { region("load", 1200), region("store", 660) }) }            -- +50%: the worst
    h.write_results(dir .. "/a", man("aaaa1111", { { path = "/src/k.cuh", sha256 = "cccc" } }), rows_a)
    h.write_results(dir .. "/b", man("bbbb2222", { { path = "/src/k.cuh", sha256 = "dddd" } }), rows_b)
    h.write_results(dir .. "/c", man("aaaa1111", { { path = "/src/k.cuh", sha256 = "cccc" } }), rows_b)
    local st, out = h.run("compare", dir .. "/a", dir .. "/b", "--max-slowdown", "20")
    assert.equal(9, st)
    assert.matches("slower by 50.0%, more than --max-slowdown 20%\n"
      .. "  worst: point 2 (n=2): 2.00 us -> 3.00 us (+50.0%)\n"
      .. "  regions slower there: load +50.0% (median 800 ns -> 1.20 us), store +10.0% (median 600 ns -> 660 ns)\n"
      .. "  the kernel's source changed: module /src/k.cu (sha256 aaaa1111... -> bbbb2222...); header /src/k.cuh "
      .. "(sha256 cccc... -> dddd...)", out, 1, true)
    assert.matches("note: the kernel's source changed", out, 1, true) -- in the title too
    -- the same source: said so, and the title has no note
    st, out = h.run("compare", dir .. "/a", dir .. "/c", "--max-slowdown", "20")
    assert.equal(9, st)
    assert.matches("  the kernel's source is the same in both runs (/src/k.cu, sha256 aaaa1111...)", out, 1, true)
    assert.not_matches("note: the kernel", out, 1, true)
    -- only the PTX nvcc made differs: another nvcc, arch or flags
    local m = man("aaaa1111", { { path = "/src/k.cuh", sha256 = "cccc" } })
    m.compiled.sha256 = "ffff"
    h.write_results(dir .. "/d", m, rows_b)
    st, out = h.run("compare", dir .. "/c", dir .. "/d", "--max-slowdown", "0")
    assert.equal(0, st)
    local r = compare.folders(dir .. "/a", dir .. "/d")
    assert.matches("the PTX nvcc made of it (sha256 aaaa11110... -> ffff...", r.source, 1, true)
    -- compile-time axes (issue 35): build 2's PTX differs, named
    local mb = man("aaaa1111", { { path = "/src/k.cuh", sha256 = "cccc" } })
    mb.builds = { { index = 1, arch = "sm_90", nvcc_flags = {}, sha256 = "1111" },
      { index = 2, arch = "sm_90", nvcc_flags = { "-DT=2" }, sha256 = "2222" } }
    h.write_results(dir .. "/e", mb, rows_b)
    mb.builds[2].sha256 = "3333"
    h.write_results(dir .. "/f", mb, rows_b)
    r = compare.folders(dir .. "/e", dir .. "/f")
    assert.matches("the kernel's source changed: build 2's PTX (sha256 2222... -> 3333...", r.source, 1, true)
    -- the experiment script changed (another grid in setup): said, with the same kernel source
    local ms = man("aaaa1111", { { path = "/src/k.cuh", sha256 = "cccc" } })
    ms.script = { path = "/src/exp.lua", sha256 = "5555" }
    h.write_results(dir .. "/e", ms, rows_a)
    ms.script = { path = "/src/exp.lua", sha256 = "6666" }
    h.write_results(dir .. "/f", ms, rows_b)
    st, out = h.run("compare", dir .. "/e", dir .. "/f", "--max-slowdown", "20")
    assert.equal(9, st)
    assert.matches("the kernel's source is the same in both runs (/src/k.cu, sha256 aaaa1111...); the experiment "
      .. "script changed: /src/exp.lua (sha256 5555... -> 6666...", out, 1, true)
    -- a point ok in BASE that failed in NEW, or is missing from it, fails the gate (it passed them)
    local failed = { row(1, 1, 1000, 0), row(2, 2, 2000, 0) }
    failed[2].status, failed[2].time_ns = "failed", nil
    failed[2].error = { code = "check_failed", message = "wrong output" }
    h.write_results(dir .. "/g", man("aaaa1111", { { path = "/src/k.cuh", sha256 = "cccc" } }),
      { row(1, 1, 1000, 0), row(2, 2, 2000, 0) })
    h.write_results(dir .. "/h", man("aaaa1111", { { path = "/src/k.cuh", sha256 = "cccc" } }), failed)
    h.write_results(dir .. "/i", man("aaaa1111", { { path = "/src/k.cuh", sha256 = "cccc" } }), { row(1, 1, 1000, 0) })
    st, out = h.run("compare", dir .. "/g", dir .. "/h", "--max-slowdown", "0")
    assert.equal(9, st)
    assert.matches("1 point ok in base failed in new, 0 points of base not in new", out, 1, true)
    st, out = h.run("compare", dir .. "/g", dir .. "/i", "--max-slowdown", "0")
    assert.equal(9, st)
    assert.matches("0 points ok in base failed in new, 1 point of base not in new", out, 1, true)
    assert.equal(0, (h.run("compare", dir .. "/g", dir .. "/h"))) -- without the gate: a report, status 0
    -- summaries: the region, and no source to speak of
    local function summary(path, load)
      h.write(path, core.json_encode({ unit = "ns", regions = { region("load", load), region("store", 100) } }))
    end
    summary(dir .. "/s1.json", 1000)
    summary(dir .. "/s2.json", 1300)
    st, out = h.run("compare", dir .. "/s1.json", dir .. "/s2.json", "--max-slowdown", "10")
    assert.equal(9, st)
    assert.matches("  worst: region load: median 1.00 us -> 1.30 us (+30.0%)", out, 1, true)
  end)
end)
