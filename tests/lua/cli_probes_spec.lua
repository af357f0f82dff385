-- cli_probes_spec.lua: `mgpu-harness instrument --probes FILE` (issue 24): the same probes as
-- dev:load's probes = {...}, from a .json or a .lua file, checked by the same reader; the PTX it
-- writes, launched on emu, records what the Lua API's instrumented kernel records.
local h = require "helpers"
local mgpu = require "mgpu"
local core = require "mgpu.core"

local triton = h.src .. "/tests/ptx/probes_triton.ptx"

local PROBES = {
  { name = "kernel", kernel = true },
  { name = "row", loop = true },
  { name = "sync", around = "bar.sync" },
  { name = "tree", from = "$L__BB0_3", to = "$L__BB0_8" },
  { name = "lines", from = 82, to = 87 },
}

local tmp
local function path(name) return tmp .. "/" .. name end

-- row_sum on emu: its output and the region counts of its trace
local function row_sum(dev, k, extra, profile)
  local n = 300
  local x = dev:array("f32", 3 * n, { fill = "ramp" })
  local y = dev:array("f32", 3)
  local args = { x, y, n, dev:array("u8", 16), dev:array("u8", 16) }
  for _, a in ipairs(extra or {}) do args[#args + 1] = a end
  local run = k:launch { grid = 3, block = 128, smem = 512, args = args, profile = profile }
  local c = {}
  for _, r in ipairs(run.trace:summary()) do c[r.name] = r.count end
  return c, y:read()
end

describe("instrument --probes", function()
  setup(function()
    tmp = os.tmpname()
    os.remove(tmp)
    assert(os.execute("mkdir -p " .. h.quote(tmp)))
    h.write(path("p.json"), core.json_encode(PROBES))
    h.write(path("p.lua"), "-- the probes of cli_probes_spec\nreturn " .. [[{
      { name = "kernel", kernel = true }, { name = "row", loop = true }, { name = "sync", around = "bar.sync" },
      { name = "tree", from = "$L__BB0_3", to = "$L__BB0_8" }, { name = "lines", from = 82, to = 87 } }]])
  end)
  teardown(function() os.execute("rm -rf " .. h.quote(tmp)) end)

  it("writes the same PTX from a .json and a .lua list, which records what dev:load's probes record", function()
    local st, _, err = h.run("instrument", triton, "--probes", path("p.json"), "-o", path("j.ptx"), "--names",
      path("j.names.json"))
    assert.equal(0, st, err)
    assert.matches("16 probe points in 1 kernel, 6 region names", err, 1, true)
    st, _, err = h.run("instrument", triton, "--probes", path("p.lua"), "-o", path("l.ptx"))
    assert.equal(0, st, err)
    assert.equal(h.read(path("j.ptx")), h.read(path("l.ptx")))
    -- the Lua API's kernel, instrumented by the harness
    local dev = mgpu.device("emu")
    local want, want_y = row_sum(dev, dev:load(triton, { instrument = "warp", probes = PROBES }):kernel("row_sum"))
    assert.same({ kernel = 12, ["row@17"] = 30, ["row@22"] = 84, sync = 96, tree = 12, lines = 12 }, want)
    -- the command's PTX, launched as a kernel that writes its own trace: its three parameters
    -- (trace, entries, calibration words) given by hand, the names from --names
    local names = core.json_decode(h.read(path("j.names.json")))
    local k = dev:load(path("j.ptx")):kernel("row_sum")
    local got, got_y = row_sum(dev, k, { mgpu.TRACE, 256, dev:array("u32", 12 * 4) },
      { scope = "warp", entries = 256, names = names })
    assert.same(want, got)
    assert.same(want_y, got_y)
  end)

  it("refuses a bad file naming it and the probe, with the statuses of docs/cli.md", function()
    local cases = {
      { "missing.json", nil, 1, "missing.json: cannot open" },
      { "p.txt", "[]", 2, "p.txt: a probe list is a .json file" },
      { "syntax.json", '[{"name": "x"', 2, "syntax.json: invalid JSON at line" },
      { "object.json", '{"name": "x", "kernel": true}', 2, "object.json: probes must be a list {{...}, {...}} without holes or names" },
      { "type.json", '[{"name": "k", "kernel": true}, {"name": "x", "loop": 3}]', 2,
        "type.json: probes[2].loop must be true or a label" },
      { "key.lua", 'return {{name = "k", kernel = true}, {name = "b", aroun = "bar"}}', 2,
        'key.lua: probes[2]: unknown option "aroun"' },
      { "none.lua", 'return {{name = "k", kernel = true}, {name = "b", around = "nosuch"}}', 2,
        'around = "nosuch" matches nothing in any kernel (probes[2])' },
      { "error.lua", 'error("no probes today")', 2, "error.lua:1: no probes today" },
      { "io.lua", 'return io.lines("/etc/passwd")', 2, "io.lua:1: attempt to index a nil value" },
      { "notlist.lua", "return 42", 2, "notlist.lua: probes must be a list of tables" },
      -- the chunk reads no files (last hostile pass); its print writes to stderr (below)
      { "dofile.lua", 'return dofile("/etc/passwd")', 2, "attempt to call a nil value (global 'dofile')" },
      -- a file that never returns is stopped (it hung instrument)
      { "loop.lua", "while true do end", 2, "loop.lua: the probe file ran past its time limit of 5 s" },
    }
    for _, c in ipairs(cases) do
      if c[2] then h.write(path(c[1]), c[2]) end
      local st, out, err = h.run("instrument", triton, "--probes", path(c[1]), "-o", path("out.ptx"))
      assert.equal(c[3], st, c[1] .. ": " .. err)
      assert.matches(c[4], err, 1, true)
      assert.equal("", out)
    end
    assert.is_nil(h.read(path("out.ptx"))) -- nothing written by a refused command
    -- an empty value and twice are usage errors, as for every option
    assert.equal(2, (h.run("instrument", triton, "--probes", "")))
    assert.equal(2, (h.run("instrument", triton, "--probes", path("p.json"), "--probes", path("p.lua"))))
    -- the output naming the probe file is refused before anything is written
    local st, _, err = h.run("instrument", triton, "--probes", path("p.json"), "-o", path("p.json"))
    assert.equal(2, st)
    assert.matches("p.json", err, 1, true)
    -- print, of the base library, writes to stderr: stdout is the PTX (issue 36)
    h.write(path("print.lua"), 'print("hello from the probes") return {{name = "k", kernel = true}}')
    local out
    st, out, err = h.run("instrument", triton, "--probes", path("print.lua"))
    assert.equal(0, st, err)
    assert.matches("hello from the probes", err, 1, true)
    assert.is_nil(out:find("hello", 1, true))
    assert.matches("^//", out)
  end)
end)
