-- roles_spec.lua: lanes named by role (issue 34): "// @mgpu role NAME" (MGPU_ROLE) in a
-- warp-specialised producer/consumer kernel (tests/ptx/roles.cu) labels each lane of the default
-- dump "block B · warpgroup W · ROLE", through trace:save and `mgpu-harness dump` too; role events
-- are no regions (the summary, Mosaic's dump); a bad role name is an error naming its line; and the
-- flows of that trace pass the strict check of tests/lua/flow_check.lua, which refuses each kind of
-- malformed flow.
local h = require "helpers"
local mgpu = require "mgpu"
local core = require "mgpu.core"
local flow_check = require "flow_check"

local function read_json(path)
  local doc = core.json_decode(assert(h.read(path)), path)
  return doc
end

local function labels(doc)
  local t = {}
  for _, e in ipairs(doc.traceEvents) do
    if e.name == "thread_name" then t[#t + 1] = e.args.name end
  end
  table.sort(t)
  return t
end

local function producer_consumer()
  local dev = mgpu.device("emu")
  local k = dev:load(h.src .. "/tests/ptx/roles.ptx", { instrument = "warpgroup" }):kernel("roles")
  local steps, input = 6, {}
  for i = 1, 128 * steps do input[i] = i end
  return k:launch { grid = 2, block = 384, args = { dev:array("f32", input), dev:array("f32", 2 * 256), steps } }
end

local B = " \u{b7} "
local expected = {}
for b = 0, 1 do
  expected[#expected + 1] = "block " .. b .. B .. "warpgroup 0" .. B .. "producer"
  expected[#expected + 1] = "block " .. b .. B .. "warpgroup 1" .. B .. "consumer"
  expected[#expected + 1] = "block " .. b .. B .. "warpgroup 2" .. B .. "consumer"
end
table.sort(expected)

describe("lanes named by role", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.rmdir(dir) end)

  it("label a producer/consumer kernel's warpgroups, its flows strictly well formed", function()
    local run = producer_consumer()
    run.trace:dump(dir .. "/t.json")
    local doc = read_json(dir .. "/t.json")
    assert.same(expected, labels(doc))
    local r = flow_check.check(doc)
    assert.is_true(r.by_name["TMA complete_tx"] > 0 and r.by_name["mbarrier arrive"] > 0)
    -- roles are no regions: not in the summary, no slice named after one
    local names = {}
    for _, row in ipairs(run.trace:summary()) do names[#names + 1] = row.name end
    table.sort(names)
    assert.same({ "consume", "produce" }, names)
    for _, e in ipairs(doc.traceEvents) do assert.is_false(e.name == "producer" or e.name == "consumer") end
    -- nor in Mosaic's dump
    run.trace:dump(dir .. "/m.json", { compat = "mosaic" })
    assert.falsy(h.read(dir .. "/m.json"):find("producer", 1, true))
  end)

  it("travel through trace:save and mgpu-harness dump", function()
    local run = producer_consumer()
    local saved = run.trace:save(dir .. "/run")
    local meta = read_json(saved.meta)
    assert.same({ "consume", "produce" }, (function() local t = {} for k in pairs(meta.names) do t[#t + 1] = k end table.sort(t) return t end)())
    assert.is_number(meta.roles.producer)
    assert.is_number(meta.roles.consumer)
    assert.is_nil(meta.partial) -- whole warpgroups: no "partial" (it was true for every instrumented launch)
    local st, _, err = h.run("dump", saved.buffer, "--meta", saved.meta, "--calib", saved.calib, "-o", dir .. "/cli.json", "-q")
    assert.equal(0, st, err)
    assert.same(expected, labels(read_json(dir .. "/cli.json")))
  end)

  it("leave Mosaic's dump as it is for the buffer without the roles' events", function()
    -- one warp trace: role 7 at 100, region 1 from 110 to 150, role 7 again at 160; and the same without the roles
    local with = { 1000, 0, 8, 7, 100, 1, 110, 1 + 0x80000000, 150, 7, 160, 0, 0 }
    local without = { 1000, 0, 4, 1, 110, 1 + 0x80000000, 150, 0, 0, 0, 0, 0, 0 }
    h.write_words(dir .. "/with.bin", with)
    h.write_words(dir .. "/without.bin", without)
    h.meta(dir .. "/without.meta.json", { entries = 13, names = { load = 1 } })
    h.write(dir .. "/with.meta.json", '{"grid": [1, 1, 1], "block": [32, 1, 1], "entries_per_warpgroup": 13, '
      .. '"trace_scope": "warp", "names": {"load": 1}, "roles": {"producer": 7}}')
    for _, mode in ipairs({ "mosaic", "default" }) do
      local flag, value = "--clock-ghz", "1"
      if mode == "mosaic" then flag, value = "--compat", "mosaic" end
      local st, _, err = h.run("dump", dir .. "/with.bin", "--meta", dir .. "/with.meta.json", "-o", dir .. "/a.json", "-q", flag, value)
      assert.equal(0, st, err)
      st, _, err = h.run("dump", dir .. "/without.bin", "--meta", dir .. "/without.meta.json", "-o", dir .. "/b.json", "-q", flag, value)
      assert.equal(0, st, err)
      if mode == "mosaic" then
        assert.equal(h.read(dir .. "/b.json"), h.read(dir .. "/a.json"))
      else
        local a, b = read_json(dir .. "/a.json"), read_json(dir .. "/b.json")
        assert.same({ "block 0" .. B .. "warp 0" .. B .. "producer" }, labels(a))
        assert.same({ "block 0" .. B .. "warp 0" }, labels(b))
      end
    end
  end)

  it("refuse a bad role name, naming its line", function()
    local dev = mgpu.device("emu")
    local function load(marker)
      local path = dir .. "/k.ptx"
      h.write(path, ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n" .. marker .. "\nret;\n}\n")
      local ok, err = pcall(dev.load, dev, path, { instrument = "warp" })
      assert.is_false(ok)
      return err
    end
    local err = load("// @mgpu role two words")
    assert.equal("ptx_syntax", err.code)
    assert.matches('k%.ptx:6[^\n]*bad role name "two words": a role is one word of letters, digits', err.message)
    err = load("// @mgpu role " .. string.rep("r", 49))
    assert.matches("bad role name", err.message)
    assert.matches("at most 48 characters", err.message)
    err = load("// @mgpu role")
    assert.equal("ptx_syntax", err.code)
    assert.matches("k%.ptx:6: marker without", err.message)
    -- and in a meta file
    h.write(dir .. "/m.json", '{"grid": [1,1,1], "block": [32,1,1], "entries_per_warpgroup": 5, "trace_scope": "warp", '
      .. '"names": {"a": 0}, "roles": {"x y": 1}}')
    h.write_words(dir .. "/b.bin", { 0, 0, 0, 0, 0 })
    local st, _, stderr = h.run("dump", dir .. "/b.bin", "--meta", dir .. "/m.json", "-o", dir .. "/o.json")
    assert.is_not.equal(0, st)
    assert.matches('bad role name "x y"', stderr)
    h.write(dir .. "/m.json", '{"grid": [1,1,1], "block": [32,1,1], "entries_per_warpgroup": 5, "trace_scope": "warp", '
      .. '"names": {"a": 0}, "roles": ["x"]}')
    st, _, stderr = h.run("dump", dir .. "/b.bin", "--meta", dir .. "/m.json", "-o", dir .. "/o.json")
    assert.is_not.equal(0, st)
    assert.matches('field "roles" must be an object', stderr)
    -- a role's id: said to be a role's, not a name's, when it is out of range or shared
    h.write(dir .. "/m.json", '{"grid": [1,1,1], "block": [32,1,1], "entries_per_warpgroup": 5, "trace_scope": "warp", '
      .. '"names": {"a": 0}, "roles": {"x": 0}}')
    st, _, stderr = h.run("dump", dir .. "/b.bin", "--meta", dir .. "/m.json", "-o", dir .. "/o.json")
    assert.is_not.equal(0, st)
    assert.matches('name "a" and role "x" share id 0', stderr, 1, true)
    h.write(dir .. "/m.json", '{"grid": [1,1,1], "block": [32,1,1], "entries_per_warpgroup": 5, "trace_scope": "warp", '
      .. '"names": {"a": 0}, "roles": {"x": 2147483648}}')
    st, _, stderr = h.run("dump", dir .. "/b.bin", "--meta", dir .. "/m.json", "-o", dir .. "/o.json")
    assert.is_not.equal(0, st)
    assert.matches('role "x" has id 2147483648', stderr, 1, true)
    -- a role's event in a buffer whose meta has no roles (one from before roles, or hand-made)
    h.write_words(dir .. "/r.bin", { 1000, 0, 2, 7, 100 })
    h.write(dir .. "/m.json", '{"grid": [1,1,1], "block": [32,1,1], "entries_per_warpgroup": 5, "trace_scope": "warp", '
      .. '"names": {"a": 0}}')
    st, _, stderr = h.run("dump", dir .. "/r.bin", "--meta", dir .. "/m.json", "-o", dir .. "/o.json", "--clock-ghz", "1")
    assert.is_not.equal(0, st)
    assert.matches("unknown name id 7 (not in the meta's names or roles)", stderr, 1, true)
  end)
end)

describe("roles elsewhere", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.rmdir(dir) end)

  it("mgpu-harness instrument --roles writes them apart from --names", function()
    local st, _, err = h.run("instrument", h.src .. "/tests/ptx/roles.ptx", "--scope", "warpgroup", "-o", dir .. "/i.ptx",
      "--names", dir .. "/n.json", "--roles", dir .. "/r.json")
    assert.equal(0, st, err)
    assert.matches("2 region names, 2 roles", err)
    local n, r = read_json(dir .. "/n.json"), read_json(dir .. "/r.json")
    assert.is_number(n.produce)
    assert.is_nil(n.producer)
    assert.is_number(r.producer)
    assert.is_number(r.consumer)
    assert.is_nil(r.produce)
  end)

  it("come from probes: {role =, around = MNEMONIC} in a kernel without role markers", function()
    local dev = mgpu.device("emu")
    local m = dev:load(h.src .. "/tests/ptx/why.ptx", { instrument = "warp", probes = {
      { role = "producer", around = "cp.async.bulk" }, { role = "consumer", around = "ld.shared" } } })
    local input = {}
    for i = 1, 64 * 4 do input[i] = i end
    local run = m:kernel("why_pipeline"):launch { grid = 1, block = 96, args = { dev:array("f32", input), dev:array("f32", 96), 4 } }
    run.trace:dump(dir .. "/p.json")
    assert.same({ "block 0" .. B .. "warp 0" .. B .. "producer", "block 0" .. B .. "warp 1" .. B .. "consumer",
      "block 0" .. B .. "warp 2" .. B .. "consumer" }, labels(read_json(dir .. "/p.json")))
    -- a role probe is no region, and takes a role name and around only
    local names = {}
    for _, row in ipairs(run.trace:summary()) do names[#names + 1] = row.name end
    table.sort(names)
    assert.same({ "consume", "produce" }, names)
    local function refused(probe)
      local ok, err = pcall(dev.load, dev, h.src .. "/tests/ptx/why.ptx", { instrument = "warp", probes = { probe } })
      assert.is_false(ok)
      return tostring(err)
    end
    assert.matches('probes%[1%]%.role: bad role name "a b"', refused({ role = "a b", around = "ld.shared" }))
    assert.matches("a role probe takes around = MNEMONIC", refused({ role = "p", kernel = true }))
    assert.matches("has a name and a role", refused({ role = "p", name = "q", around = "ld.shared" }))
  end)

  it("warns of a role only threads that do not write the trace took (emu)", function()
    local path = dir .. "/k.ptx"
    h.write(path, ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n.reg .b32 %r<2>;\n"
      .. ".reg .pred %p<2>;\nmov.u32 %r1, %tid.x;\nsetp.ne.u32 %p1, %r1, 5;\n// @mgpu begin all\n@%p1 bra $L_end;\n"
      .. "// @mgpu role lonely\n$L_end:\n// @mgpu end all\nret;\n}\n")
    local dev = mgpu.device("emu")
    local run = dev:load(path, { instrument = "warp" }):kernel("k"):launch { grid = 1, block = 64, args = {} }
    assert.equal(1, #run.warnings)
    assert.matches("k%.ptx:12: k: role lonely was taken 1 times, only by threads that do not write the trace", run.warnings[1])
  end)
end)

describe("the strict flow check", function()
  -- a valid trace: two threads, one slice each, a flow from the first to the second
  local function doc()
    return { traceEvents = {
      { name = "thread_name", ph = "M", pid = 1, tid = 1, args = { name = "a" } },
      { name = "thread_name", ph = "M", pid = 1, tid = 2, args = { name = "b" } },
      { name = "x", ph = "B", ts = 0, pid = 1, tid = 1 }, { name = "x", ph = "E", ts = 10, pid = 1, tid = 1 },
      { name = "y", ph = "B", ts = 5, pid = 1, tid = 2 }, { name = "y", ph = "E", ts = 20, pid = 1, tid = 2 },
      { name = "arrive", cat = "mbarrier", ph = "s", id = 1, ts = 3, pid = 1, tid = 1 },
      { name = "arrive", cat = "mbarrier", ph = "f", bp = "e", id = 1, ts = 8, pid = 1, tid = 2 },
    } }
  end
  local function refuses(change, why)
    local d = doc()
    change(d.traceEvents)
    local ok, err = pcall(flow_check.check, d)
    assert.is_false(ok, "accepted: " .. why)
    assert.matches(why, err, 1, true)
  end

  it("accepts a well-formed flow and refuses each malformed one", function()
    assert.equal(1, flow_check.check(doc()).flows)
    refuses(function(ev) ev[8].bp = nil end, "without \"bp\": \"e\"")
    refuses(function(ev) table.remove(ev, 8) end, "a start with no end")
    refuses(function(ev) table.remove(ev, 7) end, "an end with no start")
    refuses(function(ev) ev[8].ts = 6; ev[7].ts = 7; ev[4].ts = 9 end, "ends before its start")
    refuses(function(ev) ev[7].ts = 12 end, "outside every slice")
    refuses(function(ev) ev[8].ts = 20 end, "outside every slice") -- at its slice's very end
    refuses(function(ev) ev[8].name = "tma" end, "ends a flow that started as")
    refuses(function(ev) ev[8].id = 2 end, "a start with no end")
    refuses(function(ev) ev[7].id = 1.5; ev[8].id = 1.5 end, "id is not a positive integer")
    refuses(function(ev) ev[7].cat = nil end, "no cat")
    refuses(function(ev) table.remove(ev, 2) end, "has no thread_name")
    refuses(function(ev) ev[#ev + 1] = { name = "arrive", cat = "mbarrier", ph = "s", id = 1, ts = 4, pid = 1, tid = 1 } end, "a second s")
    refuses(function(ev) ev[4].name = "z" end, "E closes")
  end)
end)
