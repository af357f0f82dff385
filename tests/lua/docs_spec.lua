-- docs_spec.lua: docs/cli.md stays current with the code (issues 24, 26): every option that a
-- command's --help names (core/main.c's usage texts, the Lua commands' own) is on that page,
-- as is every command; a new option without its line in the docs fails here.
local h = require "helpers"

local COMMANDS = { "dump", "instrument", "info", "replay", "compare", "merge", "slurm", "report", "stats", "run",
  "nvcc", "exec" }

-- The options a usage text names: --long ones and -x short ones (not inside words: "sm_90",
-- "warp-specialised"), EXTRA after "--" too.
local function options_of(text)
  local found, seen = {}, {}
  local function add(o)
    if not seen[o] then seen[o], found[#found + 1] = true, o end
  end
  for o in text:gmatch("%-%-[%a][%w%-]*") do add((o:gsub("%-+$", ""))) end
  for pre, o in text:gmatch("([%s%[|,(])(%-%a)[%s,|%]]") do add(o) end
  if text:find("%[%-%- EXTRA") then add("-- EXTRA") end
  return found
end

describe("docs/cli.md", function()
  local doc = h.read(h.src .. "/docs/cli.md")

  it("names every option of every command's --help", function()
    local missing = {}
    local texts = {}
    local st, top = h.run("--help")
    assert.equal(0, st)
    texts["mgpu-harness --help"] = top
    for _, c in ipairs(COMMANDS) do
      local s, out = h.run(c, "--help")
      assert.equal(0, s, c .. " --help")
      assert(#out > 0, c .. " --help printed nothing")
      texts[c] = out
      -- the command itself
      if not doc:find("mgpu-harness " .. c, 1, true) then missing[#missing + 1] = "command " .. c end
    end
    local n = 0
    for what, text in pairs(texts) do
      for _, o in ipairs(options_of(text)) do
        n = n + 1
        -- as written in the docs: `--opt`, `--opt VALUE`, `-q`/`--quiet`, `[--opt ...]`
        local pat = o:gsub("%p", "%%%0") .. "[^%w%-]"
        if not doc:find(pat) then missing[#missing + 1] = what .. ": " .. o end
      end
    end
    assert(n > 40, "found only " .. n .. " options: the usage texts changed shape?")
    table.sort(missing)
    assert.same({}, missing)
  end)

  it("says what -q and slurm --dry-run do as they do it (issue 35)", function()
    assert.truthy(doc:find("each failed point is still one line on stderr", 1, true))
    assert.falsy(doc:find("the summary table is still printed", 1, true))
    assert.truthy(doc:find("writes and submits nothing", 1, true))
  end)

  it("has compare, slurm and report --help explain their options and exit statuses (issue 35)", function()
    for _, c in ipairs({ "compare", "slurm", "report" }) do
      local _, out = h.run(c, "--help")
      assert.matches("exit status: 0 ", out, c)
      assert.matches("%-h, %-%-help", out, c)
    end
    local _, slurm = h.run("slurm", "--help")
    for _, o in ipairs({ "--tasks N", "--out DIR", "--gpus-per-task G", "--partition P", "--time T", "--wait",
      "--dry-run", "--set NAME=V1,V2", "--backend B" }) do
      assert.truthy(slurm:find("\n  " .. o, 1, true), "slurm --help does not explain " .. o)
    end
    -- the top-level help names the stats file as the command does
    local _, top = h.run("--help")
    local _, stats = h.run("stats", "--help")
    local name = stats:match("mgpu%-harness stats (%S+)")
    assert.is_string(name)
    assert.truthy(top:find("mgpu-harness stats " .. name, 1, true), "the top-level help says otherwise than " .. name)
  end)

  it("finds what it looks for (the check itself)", function()
    assert.same({ "--out", "--quiet", "--time", "-q", "-o", "-- EXTRA" },
      options_of("usage: x [--out DIR] [-q|--quiet] [--time T]\n  -o FILE, here-and-there sm_90 [-- EXTRA_ARGS...]"))
  end)
end)

-- The other pages issue 35 found wrong: each claim checked against the code or run as written.
describe("the reference pages", function()
  local dir
  before_each(function() dir = h.tmpdir() end)
  after_each(function() h.rmdir(dir) end)

  it("docs/cuda.md does not say emu refuses TMA (it runs it: docs/emu.md)", function()
    local cuda = h.read(h.src .. "/docs/cuda.md")
    assert.falsy(cuda:find("does not run TMA", 1, true))
    assert.truthy(h.read(h.src .. "/docs/emu.md"):find("cp.async.bulk.tensor", 1, true))
  end)

  it("docs/lua-api.md documents dev:tensor_map's options, and its stats example runs", function()
    local api = h.read(h.src .. "/docs/lua-api.md")
    for _, k in ipairs({ "box", "dims", "strides", "element_strides", "swizzle", "interleave", "l2", "oob", "data_type",
      "offset" }) do
      assert.truthy(api:find("`" .. k .. "`", 1, true) or api:find(k .. " =", 1, true), "tensor_map's " .. k)
    end
    assert.truthy(api:find("dev:tensor_map(array", 1, true))
    local code = api:match("%*%*Exact counters from a plain script%*%*.-```lua\n(.-)```")
    assert.is_string(code, "no stats example")
    code = code:gsub('"ptx/reduce%.ptx"', string.format("%q", h.src .. "/ptx/reduce.ptx"))
    h.write(dir .. "/s.lua", code)
    local st, out, err = h.run(dir .. "/s.lua", dir .. "/out")
    assert.equal(0, st, err .. out)
    st, out, err = h.run("stats", dir .. "/out/reduce.stats.json")
    assert.equal(0, st, err)
    assert.matches("reduce", out)
  end)

  it("README's first command says what setup-deps.sh installs besides the build's needs", function()
    local readme = h.read(h.src .. "/README.md")
    local deps = h.read(h.src .. "/scripts/setup-deps.sh")
    for _, p in ipairs({ "chromium", "slurm-wlm", "munge", "clang" }) do
      assert.truthy(deps:find(p, 1, true), p .. " is no longer installed: update this test")
      assert.truthy(readme:find(p, 1, true), "README does not say setup-deps.sh installs " .. p)
    end
  end)

  it("experiments.md's shortened tile_sweep runs as written", function()
    local text = h.read(h.src .. "/docs/experiments.md")
    local code = text:match("```lua\n(%-%- scripts/examples/tile_sweep%.lua %(shortened%).-)```")
    assert.is_string(code)
    code = code:gsub('"%.%./%.%./ptx/tiled%.ptx"', string.format("%q", h.src .. "/ptx/tiled.ptx"))
    h.write(dir .. "/exp.lua", code)
    local st, out, err = h.run(dir .. "/exp.lua", "--out", dir .. "/r", "--set", "n=4096", "-q")
    assert.equal(0, st, err .. out)
  end)
end)
