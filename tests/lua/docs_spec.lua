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

  it("finds what it looks for (the check itself)", function()
    assert.same({ "--out", "--quiet", "--time", "-q", "-o", "-- EXTRA" },
      options_of("usage: x [--out DIR] [-q|--quiet] [--time T]\n  -o FILE, here-and-there sm_90 [-- EXTRA_ARGS...]"))
  end)
end)
