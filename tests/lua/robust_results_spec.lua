-- robust_results_spec.lua: issue 12's classes for results folders and the
-- Lua side's bad input: point files named by a stable key, --out refusing a
-- folder with results and the folder's lock, --resume repeating the manifest
-- (its --set, axes, sources), torn lines, working from any directory, and
-- experiments, setup tables, manifests and mgpu.time refusing bad input with
-- an error naming the field.
local h = require "helpers"
local mgpu = require "mgpu"
local core = require "mgpu.core"
local results = require "mgpu.results"
local experiment = require "mgpu.experiment"

-- Runs mgpu-harness in the folder cwd; returns exit status, stdout, stderr.
local function run_in(cwd, ...)
  local args = {}
  for i, a in ipairs({ ... }) do args[i] = h.quote(a) end
  local err = os.tmpname()
  local p = io.popen("cd " .. h.quote(cwd) .. " && env -u LD_PRELOAD " .. h.quote(h.exe) .. " " .. table.concat(args, " ")
    .. " 2>" .. err .. "; printf '\n__status %d' $?")
  local out = p:read("*a")
  p:close()
  local status
  out = out:gsub("\n__status (%d+)$", function(s) status = tonumber(s); return "" end)
  local stderr = h.read(err)
  os.remove(err)
  return status, out, stderr
end

local function json(path) return core.json_decode(assert(h.read(path), path .. " missing")) end

local function lines_of(path)
  local t = {}
  for l in (h.read(path) or ""):gmatch("[^\n]+") do t[#t + 1] = l end
  return t
end

-- An experiment script on the tiled kernel: one point per `tiles`, each warp
-- going through tiles/2 tiles (4 warps: the trace closes 2 x tiles of each region).
local function script_text(opts)
  opts = opts or {}
  return string.format([[
return {
  name = "robust",
  module = %q,
  kernel = "tiled_scale",
  instrument = "warp",
  axes = { tiles = { %s } },
  %s
  warmup = 0, repeats = 1,
  setup = function(p, dev)
    local n = 64 * p.tiles
    local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
    %s
    return { grid = 2, block = 64, smem = 256, args = { a, c, n, 1.0 }, estimate = 4 * p.tiles }
  end,
}
]], opts.module or (h.src .. "/ptx/tiled.ptx"), opts.tiles or "2, 4, 6", opts.filter or "", opts.body or "")
end

local function tiled(extra)
  return h.tiled_experiment({ name = "robust", axes = { tiles = { 2, 4, 6 } }, warmup = 0, repeats = 1,
    estimate = function(p) return 4 * p.tiles end }, extra)
end

-- The tiles a point-N.summary.json was made from (each region closes 2 x tiles).
local function summary_tiles(dir, index)
  local s = json(string.format("%s/point-%d.summary.json", dir, index))
  return s.regions[1].count / 2
end

describe("results folders", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.rmdir(dir) end)

  it("name point files by the point's index in the full, unfiltered list the manifest records", function()
    local r = mgpu.run(tiled { filter = function(p) return p.tiles ~= 2 end }, { out = dir, quiet = true })
    assert.equal(2, r.ok)
    local man = json(dir .. "/manifest.json")
    assert.same({ "tiles=2", "tiles=4", "tiles=6" }, man.point_keys)
    assert.same({ 2, 3 }, man.selected)
    local rows = results.read_jsonl(dir .. "/results.jsonl")
    assert.same({ 2, 3 }, { rows[1].index, rows[2].index })
    for _, row in ipairs(rows) do
      assert.equal(string.format("point-%d.trace.json", row.index), row.trace)
      assert.equal(row.point.tiles, summary_tiles(dir, row.index)) -- the file holds the row's point
    end
    assert.is_nil(h.read(dir .. "/point-1.summary.json"))
    assert.matches("\n2,4,ok,", h.read(dir .. "/results.csv"))
  end)

  it("resume only with the manifest's --set: a point file never holds another point than its row", function()
    h.write(dir .. "/exp.lua", script_text())
    local st, _, err = h.run(dir .. "/exp.lua", "--out", dir .. "/r", "--set", "tiles=6,2", "--quiet")
    assert.equal(0, st, err)
    -- the same --set: nothing to redo; another: refused, the folder as it was
    st, _, err = h.run(dir .. "/exp.lua", "--resume", dir .. "/r", "--set", "tiles=6,2", "--quiet")
    assert.equal(0, st, err)
    local before = h.read(dir .. "/r/results.jsonl")
    st, _, err = h.run(dir .. "/exp.lua", "--resume", dir .. "/r", "--set", "tiles=4", "--quiet")
    assert.equal(2, st, err)
    assert.matches("the run was made with %-%-set tiles=6,2, not %-%-set tiles=4", err)
    assert.equal(before, h.read(dir .. "/r/results.jsonl"))
    for _, row in ipairs(results.read_jsonl(dir .. "/r/results.jsonl")) do
      assert.equal(row.point.tiles, summary_tiles(dir .. "/r", row.index))
    end
  end)

  it("refuse --out of a folder that holds a run's results, and a second run while one holds the lock", function()
    local r = mgpu.run(tiled(), { out = dir, quiet = true })
    assert.equal(3, r.ok)
    local before = h.read(dir .. "/results.jsonl")
    local ok, err = pcall(mgpu.run, tiled(), { out = dir, quiet = true })
    assert.is_false(ok)
    assert.equal("bad_argument", err.code)
    assert.matches("already holds the results of a run %(manifest%.json there%): continue it with %-%-resume", err.message)
    assert.equal(before, h.read(dir .. "/results.jsonl"))
    h.write(dir .. "/exp.lua", script_text())
    local st, _, e = h.run(dir .. "/exp.lua", "--out", dir, "--quiet")
    assert.equal(2, st, e)
    assert.matches("already holds the results of a run .*%-%-resume", e)
    -- a run holds the folder's lock: another one (resume included) is refused at once, naming it
    local lock = core.lock(dir .. "/.lock")
    ok, err = pcall(mgpu.run, tiled(), { resume = dir, quiet = true })
    assert.is_false(ok)
    assert.equal("busy", err.code)
    st, _, e = h.run(dir .. "/exp.lua", "--resume", dir, "--quiet")
    assert.equal(1, st, e)
    assert.matches("is held by process %d+: another run is using this folder %[busy%]", e)
    st, _, e = h.run("replay", dir)
    assert.equal(1, st, e)
    assert.matches("%[busy%]", e)
    lock:release()
    assert.equal(before, h.read(dir .. "/results.jsonl"))
    -- an --out of a fresh folder refused before anything was written leaves no folder behind
    ok = pcall(mgpu.run, tiled { module = dir .. "/none.ptx" }, { out = dir .. "/fresh", quiet = true })
    assert.is_false(ok)
    assert.is_nil(h.read(dir .. "/fresh/.lock"))
  end)

  it("resume as the manifest says: its axes, no --out, refusing changed sources unless --force", function()
    os.execute("mkdir -p " .. h.quote(dir .. "/src"))
    h.write(dir .. "/src/k.ptx", h.read(h.src .. "/ptx/tiled.ptx"))
    -- tiles=6 fails on purpose the first time (a file says so)
    local body = string.format("if p.tiles == 6 and io.open(%q) then error('failing on purpose') end", dir .. "/fail")
    h.write(dir .. "/fail", "")
    h.write(dir .. "/exp.lua", script_text { module = "src/k.ptx", body = body })
    local st, _, err = h.run(dir .. "/exp.lua", "--out", dir .. "/r", "--quiet")
    assert.equal(7, st, err)
    os.remove(dir .. "/fail")
    -- usage errors
    st, _, err = h.run(dir .. "/exp.lua", "--resume", dir .. "/r", "--out", dir .. "/other")
    assert.equal(2, st)
    assert.matches("it takes no %-%-out", err)
    st, _, err = h.run(dir .. "/exp.lua", "--out", dir .. "/other", "--force")
    assert.equal(2, st)
    assert.matches("%-%-force goes with %-%-resume", err)
    -- the module changed: refused, naming it
    h.write(dir .. "/src/k.ptx", h.read(h.src .. "/ptx/tiled.ptx") .. "// edited\n")
    st, _, err = h.run(dir .. "/exp.lua", "--resume", dir .. "/r")
    assert.equal(2, st)
    assert.matches("PTX [^ ]*/src/k%.ptx changed since the run %(sha256 %x+%.%.%., now %x+%.%.%.%)", err)
    h.write(dir .. "/src/k.ptx", h.read(h.src .. "/ptx/tiled.ptx"))
    -- the script changed (its axes too): refused; --force runs the manifest's points, and says so
    h.write(dir .. "/exp.lua", script_text { module = "src/k.ptx", tiles = "8" })
    st, _, err = h.run(dir .. "/exp.lua", "--resume", dir .. "/r")
    assert.equal(2, st)
    assert.matches("script [^ ]*/exp%.lua changed since the run", err)
    assert.matches("use %-%-force to go on anyway", err)
    local st2, out
    st2, out, err = h.run(dir .. "/exp.lua", "--resume", dir .. "/r", "--force")
    assert.equal(0, st2, err)
    assert.matches("1 ok, 0 failed, 2 already done", out)
    local rows = results.latest(results.read_jsonl(dir .. "/r/results.jsonl"))
    assert.equal(3, #rows)
    assert.same({ 2, 4, 6 }, { rows[1].point.tiles, rows[2].point.tiles, rows[3].point.tiles })
    for _, row in ipairs(rows) do assert.equal("ok", row.status) end
    -- every command that wrote into the folder, the forced one with what it went past
    local man = json(dir .. "/r/manifest.json")
    assert.equal(2, #man.commands)
    assert.equal("run", man.commands[1].kind)
    assert.equal("resume", man.commands[2].kind)
    assert.matches("%-%-resume [^ ]*/r %-%-force$", man.commands[2].command)
    assert.matches("script [^ ]*/exp%.lua changed since the run", man.commands[2].forced[1])
  end)

  it("refuse a resume when a header the .cu included changed", function()
    -- a stand-in for nvcc: writes tiled.ptx and the make-style dependencies nvcc -MMD writes
    os.execute("mkdir -p " .. h.quote(dir .. "/tools") .. " " .. h.quote(dir .. "/cu"))
    h.write(dir .. "/tools/nvcc", string.format([[#!/bin/sh
out=; dep=; src=
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out=$2; shift ;;
    -MF) dep=$2; shift ;;
    -*) ;;
    *) src=$1 ;;
  esac
  shift
done
cp %q "$out"
d=$(dirname "$src")
if [ -n "$dep" ]; then
  { printf '%%s : %%s' "$out" "$src"; sed -n 's/^#include "\(.*\)"/\1/p' "$src" | while read f; do printf ' \\\n %%s/%%s' "$d" "$f"; done; echo; } > "$dep"
fi
]], h.src .. "/ptx/tiled.ptx"))
    os.execute("chmod +x " .. h.quote(dir .. "/tools/nvcc"))
    h.write(dir .. "/cu/k.cu", '#include "k.h"\n__global__ void tiled_scale() {}\n')
    h.write(dir .. "/cu/k.h", "#define TILE 64\n")
    h.write(dir .. "/exp.lua", script_text { module = dir .. "/cu/k.cu" })
    local env = "MGPU_NVCC=" .. h.quote(dir .. "/tools/nvcc") .. " MGPU_CACHE=" .. h.quote(dir .. "/cache")
    local st, _, err = h.run_env(env, dir .. "/exp.lua", "--out", dir .. "/r", "--quiet")
    assert.equal(0, st, err)
    local man = json(dir .. "/r/manifest.json")
    assert.equal(1, #man.headers)
    assert.equal(dir .. "/cu/k.h", man.headers[1].path)
    assert.equal(core.sha256_file(dir .. "/cu/k.h"), man.headers[1].sha256)
    st, _, err = h.run_env(env, dir .. "/exp.lua", "--resume", dir .. "/r", "--quiet")
    assert.equal(0, st, err)
    h.write(dir .. "/cu/k.h", "#define TILE 128\n")
    st, _, err = h.run_env(env, dir .. "/exp.lua", "--resume", dir .. "/r", "--quiet")
    assert.equal(2, st, err)
    assert.matches("header [^ ]*/cu/k%.h changed since the run", err)
    st, _, err = h.run_env(env, "replay", dir .. "/r")
    assert.equal(2, st, err)
    assert.matches("header [^ ]*/cu/k%.h changed since the run", err)
  end)

  it("set a torn last line aside on resume and redo its point; compare and replay name it", function()
    h.write(dir .. "/exp.lua", script_text())
    local st, _, err = h.run(dir .. "/exp.lua", "--out", dir .. "/r", "--quiet")
    assert.equal(0, st, err)
    local path = dir .. "/r/results.jsonl"
    local whole = h.read(path)
    local ls = lines_of(path)
    assert.equal(3, #ls)
    -- a crash while the third line was written: half of it, no newline
    local cut = ls[3]:sub(1, 40)
    h.write(path, ls[1] .. "\n" .. ls[2] .. "\n" .. cut)
    h.write(dir .. "/r/results.csv", "garbage\n")
    st, _, err = h.run("compare", dir .. "/r", dir .. "/r")
    assert.equal(3, st, err)
    assert.matches("results%.jsonl:3 is torn %(it has no newline at its end, 40 bytes%)", err)
    assert.matches("%[bad_results%]", err)
    st, _, err = h.run("replay", dir .. "/r")
    assert.equal(3, st, err)
    assert.matches("results%.jsonl:3 is torn", err)
    -- resume: set aside (kept, and said), the point redone, the csv rebuilt from the jsonl
    local out
    st, out, err = h.run(dir .. "/exp.lua", "--resume", dir .. "/r")
    assert.equal(0, st, err)
    assert.matches("results%.jsonl:3 is torn .*; set aside in [^ ]*results%.jsonl%.torn: its point runs again", err)
    assert.matches("1 ok, 0 failed, 2 already done", out)
    assert.equal(cut .. "\n", h.read(path .. ".torn"))
    local rows, _, torn = results.read_jsonl(path)
    assert.is_nil(torn)
    assert.equal(3, #rows)
    assert.equal(6, rows[3].point.tiles)
    local csv = lines_of(dir .. "/r/results.csv")
    assert.equal(4, #csv) -- the header and one row per point
    assert.matches("^1,2,ok,", csv[2])
    assert.matches("^3,6,ok,", csv[4])
    local man = json(dir .. "/r/manifest.json")
    assert.same({ line = 3, bytes = 40, reason = "it has no newline at its end", moved_to = "results.jsonl.torn" },
      man.commands[2].torn)
    -- a whole line that is not JSON: torn too when it is the last; before the last, no crash made it
    h.write(path, whole .. "{not json\n")
    st, _, err = h.run("compare", dir .. "/r", dir .. "/r")
    assert.equal(3, st, err)
    assert.matches("results%.jsonl:4 is torn %(it is not a JSON object", err)
    h.write(path, "{not json\n" .. whole)
    st, _, err = h.run(dir .. "/exp.lua", "--resume", dir .. "/r")
    assert.equal(3, st, err)
    assert.matches("results%.jsonl:1: not a JSON object %(a result row%)", err)
  end)

  it("replay and resume from any working directory", function()
    -- the script in a folder of its own, its module found relative to the run's working directory
    os.execute("mkdir -p " .. h.quote(dir .. "/work/exps") .. " " .. h.quote(dir .. "/work/kernels") .. " "
      .. h.quote(dir .. "/elsewhere"))
    h.write(dir .. "/work/kernels/k.ptx", h.read(h.src .. "/ptx/tiled.ptx"))
    h.write(dir .. "/work/exps/exp.lua", script_text { module = "kernels/k.ptx" })
    local st, _, err = run_in(dir .. "/work", "exps/exp.lua", "--out", "res", "--quiet")
    assert.equal(0, st, err)
    local man = json(dir .. "/work/res/manifest.json")
    assert.equal("/", man.script.path:sub(1, 1))
    assert.matches("/work/exps/exp%.lua$", man.script.path)
    assert.matches("^/.*/work/kernels/k%.ptx$", man.ptx[1].path)
    local out
    st, out, err = run_in(dir .. "/elsewhere", "replay", "../work/res")
    assert.equal(0, st, err)
    assert.matches("3 points identical, 0 differ", out)
    st, out, err = run_in(dir .. "/elsewhere", dir .. "/work/exps/exp.lua", "--resume", dir .. "/work/res")
    assert.equal(0, st, err)
    assert.matches("0 ok, 0 failed, 3 already done", out)
    -- replay says what it wrote, in the folder's manifest
    man = json(dir .. "/work/res/manifest.json")
    assert.equal(3, #man.commands)
    assert.equal("replay", man.commands[2].kind)
    assert.matches("^replay%-", man.commands[2].out)
    assert.equal(dir .. "/elsewhere", man.commands[2].cwd)
  end)
end)

describe("bad input to experiments", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.rmdir(dir) end)

  it("refuses entries, repeats and warmup out of range before the first point, naming the field", function()
    local cases = {
      { { entries = 2 }, "^experiment%.entries must be an integer from 3 to 2147483647" },
      { { entries = 1.5 }, "^experiment%.entries must be an integer" },
      { { repeats = 0 }, "^experiment%.repeats must be an integer >= 1 and <= 1000000, got 0" },
      { { repeats = math.huge }, "^experiment%.repeats must be an integer" },
      { { warmup = -1 }, "^experiment%.warmup must be an integer >= 0 and <= 1000000, got %-1" },
      { { warmup = "2" }, "^experiment%.warmup must be an integer >= 0 and <= 1000000, got \"2\"" },
      { { max_entries = 0 }, "^experiment%.max_entries must be an integer from 3" },
      { { retry = "no" }, "^experiment%.retry must be true or false, got string" },
      { { instrument = "block" }, "^experiment%.instrument must be \"warp\" or \"warpgroup\", got block" },
      { { filter = true }, "^experiment%.filter must be a function" },
      { { axes = 5 }, "^experiment%.axes must be a table: a map {name = {values}} or a list of mgpu%.axis" },
      { { axes = { tiles = 5 } }, "^axis tiles: values must be a non%-empty list, got number" },
      { { axes = { tiles = { {} } } }, "^axis tiles: value 1 is a table: axis values are strings, booleans or finite" },
      { { axes = { mgpu.axis("a", { 1 }), b = { 2 } } }, "^experiment%.axes mixes a list of mgpu%.axis/mgpu%.zip with the key b" },
      { { axes = { tiles = { 2, 2 } } }, "^point tiles=2 appears twice in the axes" },
    }
    for _, c in ipairs(cases) do
      local setups = 0
      local exp = tiled(c[1])
      local setup = exp.setup
      exp.setup = function(...) setups = setups + 1; return setup(...) end
      local ok, err = pcall(mgpu.run, exp, { out = dir .. "/r", quiet = true })
      assert.is_false(ok)
      assert.equal("bad_argument", err.code, tostring(err))
      assert.matches(c[2], err.message)
      assert.equal(0, setups)
      assert.is_nil(h.read(dir .. "/r/results.jsonl"))
    end
    h.write(dir .. "/exp.lua", script_text():gsub("repeats = 1", "repeats = 0"))
    local st, _, err = h.run(dir .. "/exp.lua", "--out", dir .. "/r2")
    assert.equal(2, st, err)
    assert.matches("experiment%.repeats must be an integer >= 1 and <= 1000000, got 0 %[bad_argument%]", err)
  end)

  it("names setup's field when check, before or expect is not what it must be", function()
    local cases = {
      { { check = 42 }, "setup's check must be a function%(%) %-> ok, message, got number" },
      { { before = "x" }, "setup's before must be a function called before every launch, got string" },
      { { expect = 3 }, "setup's expect must be a table {region name = count}, got number" },
      { { estimate = -1 }, "setup's estimate must be an integer >= 0 and <= 1073741822, got %-1" },
      { { entries = 1 }, "setup's entries must be an integer from 3 to" },
    }
    for i, c in ipairs(cases) do
      local exp = tiled { axes = { tiles = { 2 } } }
      local setup = exp.setup
      exp.setup = function(...)
        local spec = setup(...)
        for k, v in pairs(c[1]) do spec[k] = v end
        return spec
      end
      local r = mgpu.run(exp, { out = dir .. "/r" .. i, quiet = true })
      assert.equal(1, r.failed)
      local row = results.read_jsonl(dir .. "/r" .. i .. "/results.jsonl")[1]
      assert.equal("bad_argument", row.error.code)
      assert.matches(c[2], row.error.message)
      assert.is_nil(row.error.message:find("experiment%.lua:%d"))
    end
  end)

  it("refuses what an experiment file returns when it is not an experiment, with exit status 2", function()
    -- the Lua side: mgpu.experiment.main is handed what the script returned
    local cases = {
      { 42, "returned a number %(42%), not an experiment: an experiment file returns a table" },
      { "x", "returned a string %(x%), not an experiment" },
      { { name = "n", module = "m.ptx", kernel = "k", stup = function() end }, 'experiment: unknown key "stup"' },
      { { name = "n", module = "m.ptx", kernel = "k" }, "experiment%.setup must be a function" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(experiment.main, c[1], { [0] = "exp.lua" })
      assert.is_false(ok)
      assert.equal("bad_argument", err.code)
      assert.matches(c[2], err.message)
    end
    -- the command line: core/lua/runner.c hands mgpu.experiment.main only a table with a
    -- setup function; anything else a script returns is taken as a plain script's end
    h.write(dir .. "/num.lua", "return 42\n")
    local st, _, err = h.run(dir .. "/num.lua")
    if st == 0 and err == "" then
      return pending("core/lua/runner.c must hand every non-nil value a script returns to mgpu.experiment.main")
    end
    assert.equal(2, st, err)
    assert.matches("returned a number %(42%), not an experiment", err)
    h.write(dir .. "/typo.lua", 'return { name = "n", module = "m.ptx", kernel = "k", stup = function() end }\n')
    st, _, err = h.run(dir .. "/typo.lua")
    assert.equal(2, st, err)
    assert.matches('experiment: unknown key "stup"', err)
    h.write(dir .. "/nosetup.lua", 'return { name = "n", module = "m.ptx", kernel = "k" }\n')
    st, _, err = h.run(dir .. "/nosetup.lua")
    assert.equal(2, st, err)
    assert.matches("experiment%.setup must be a function", err)
  end)

  it("gives a garbage manifest to replay an error naming the field", function()
    os.execute("mkdir -p " .. h.quote(dir .. "/r"))
    h.write(dir .. "/r/results.jsonl", "")
    local cases = {
      { "{not json", "manifest%.json: invalid JSON at line 1" },
      { "[1, 2]", "manifest%.json: not an object" },
      { '{"experiment": 5}', "manifest%.json: experiment must be the experiment's name" },
      { '{"experiment": "x", "script": 5}', "manifest%.json: script%.path must be a path" },
      { '{"experiment": "x", "script": {"path": "/x.lua", "sha256": "zz"}}', "manifest%.json: script%.sha256 must be a hex digest" },
      { '{"experiment": "x", "script": {"path": "/x.lua"}, "ptx": [{"path": 1}]}', "manifest%.json: ptx%[1%]%.path must be a path" },
      { '{"experiment": "x", "script": {"path": "/x.lua"}, "set": {"n": 5}}', "manifest%.json: set must map axis names" },
      { '{"experiment": "x", "script": {"path": "/x.lua"}, "axes": 5}', "manifest%.json: axes must be a list" },
      { '{"experiment": "x", "script": {"path": "/x.lua"}, "axes": [{"kind": "axis", "names": ["n"], "rows": [[1, 2]]}]}',
        "manifest%.json: axes%[1%]%.rows%[1%] must hold 1 value" },
      { '{"experiment": "x", "script": {"path": "/x.lua"}, "axes": [], "point_keys": [], "selected": [3]}',
        "manifest%.json: selected%[1%] must be a point index from 1 to 0" },
    }
    for _, c in ipairs(cases) do
      h.write(dir .. "/r/manifest.json", c[1])
      local st, _, err = h.run("replay", dir .. "/r")
      assert.equal(3, st, c[1] .. ": " .. err)
      assert.matches(c[2], err)
      assert.matches("%[bad_results%]", err)
      assert.is_nil(err:find("%.lua:%d+:")) -- the field, not a line of the library
    end
  end)

  it("has mgpu.time raise only error tables with a code", function()
    local dev = mgpu.device("emu")
    local k = dev:load(h.src .. "/ptx/copy.ptx"):kernel("copy_f32x4")
    local a, b = dev:array("f32", 64), dev:array("f32", 64)
    local launch = { grid = 1, block = 16, args = { a, b, 16 } }
    local cases = {
      { { nil, launch }, "bad_argument", "time: the first argument must be a kernel" },
      { { 5, launch }, "bad_argument", "time: the first argument must be a kernel" },
      { { k, 5 }, "bad_argument", "time: the launch must be a table, got number" },
      { { k, launch, 5 }, "bad_argument", "time: the options must be a table, got number" },
      { { k, launch, { repeats = math.huge } }, "bad_argument", "repeats must be an integer >= 1 and <= 1000000, got inf" },
      { { k, launch, { warmup = 0.5 } }, "bad_argument", "warmup must be an integer" },
      { { k, launch, { before = 5 } }, "bad_argument", "time: before must be a function" },
      { { k, launch, { flush = 5 } }, "bad_argument", "time: flush must be a device array" },
      { { k, launch, { flush_l2 = -1 } }, "bad_argument", "flush_l2 must be an integer >= 1, got %-1" },
      { { k, launch, { before = function() error("boom") end } }, "script_error", "before: .*boom" },
      { { k, launch, { before = function() local t = nil; return t.x end } }, "script_error", "attempt to index" },
      { { k, { grid = 1, block = 16, args = { a } } }, "bad_argument", "takes 3 arguments" },
    }
    for i, c in ipairs(cases) do
      local ok, err = pcall(mgpu.time, c[1][1], c[1][2], c[1][3])
      assert.is_false(ok, "case " .. i)
      assert.equal("table", type(err), "case " .. i .. ": " .. tostring(err))
      assert.equal(c[2], err.code, "case " .. i .. ": " .. tostring(err.message))
      assert.matches(c[3], err.message)
    end
    -- a user's error value passes as it is
    local ok, err = pcall(mgpu.time, k, launch, { before = function() error(mgpu.errors.new("check_failed", "mine")) end })
    assert.is_false(ok)
    assert.equal("check_failed", err.code)
  end)
end)
