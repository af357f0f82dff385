-- helpers.lua: shared by the specs: paths, running the executable, writing
-- trace buffers, meta files and results folders, and the tiled_scale experiment.
local core = require "mgpu.core"
local M = {}

M.exe = assert(os.getenv("MGPU_HARNESS"), "MGPU_HARNESS must name the mgpu-harness binary")
M.src = assert(os.getenv("MGPU_SOURCE_DIR"), "MGPU_SOURCE_DIR must name the source tree")
M.fixtures = M.src .. "/tests/fixtures/mosaic-h200"

local function quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end
M.quote = quote

-- Runs mgpu-harness with args; returns exit status, stdout, stderr.
function M.run(...)
  return M.run_env("", ...)
end

-- The same with environment assignments first: run_env("A=1 B=2", args...)
function M.run_env(env, ...)
  local args = {}
  for i, a in ipairs({ ... }) do args[i] = quote(a) end
  local err = os.tmpname()
  -- the exit status comes back as the last stdout line (popen:close gives it
  -- on Lua 5.2+ only, and the specs also run under LuaJIT)
  -- without LD_PRELOAD: the sanitizer runtime preloaded for lua5.4 (ASan builds) is linked into
  -- mgpu-harness already, and would crash the programs it starts (nvcc)
  local p = io.popen("env -u LD_PRELOAD " .. env .. " " .. quote(M.exe) .. " " .. table.concat(args, " ") .. " 2>" .. err
    .. "; printf '\n__status %d' $?")
  local out = p:read("*a")
  p:close()
  local status
  out = out:gsub("\n__status (%d+)$", function(s) status = tonumber(s); return "" end)
  local f = io.open(err)
  local stderr = f:read("*a")
  f:close()
  os.remove(err)
  return status, out, stderr
end

M.read = require("mgpu.files").read -- the file's bytes, nil when it cannot be opened

function M.write(path, data)
  local f = assert(io.open(path, "wb"))
  f:write(data)
  f:close()
end

-- Little-endian bytes of an unsigned integer (string.pack is Lua 5.3+).
function M.le(v, bytes)
  local t = {}
  for i = 1, bytes do
    t[i] = string.char(v % 256)
    v = math.floor(v / 256)
  end
  return table.concat(t)
end

-- Writes words (array of integers) as little-endian uint32.
function M.write_words(path, words)
  local parts = {}
  for i, w in ipairs(words) do parts[i] = M.le(w, 4) end
  M.write(path, table.concat(parts))
end

-- A meta JSON for grid x block threads, scope, entries, names {name=id}.
function M.meta(path, t)
  local names = {}
  for name, id in pairs(t.names or { Init = 0, load = 1, store = 2 }) do
    names[#names + 1] = string.format("%q: %d", name, id)
  end
  table.sort(names)
  M.write(path, string.format(
    '{"grid": [%d, 1, 1], "block": [%d, 1, 1], "entries_per_warpgroup": %d, "trace_scope": %q, "names": {%s}}',
    t.grid or 1, t.block or 32, t.entries, t.scope or "warp", table.concat(names, ", ")))
end

-- A results folder at dir: manifest.json holding the table manifest, results.jsonl the rows.
function M.write_results(dir, manifest, rows)
  os.execute("mkdir -p " .. quote(dir))
  M.write(dir .. "/manifest.json", core.json_encode(manifest))
  local lines = {}
  for i, r in ipairs(rows) do lines[i] = core.json_encode(r) end
  M.write(dir .. "/results.jsonl", table.concat(lines, "\n") .. "\n")
end

-- An experiment of ptx/tiled.ptx's tiled_scale (warp scope) over the axis tiles: a point scales
-- 64 x tiles floats in 2 blocks of 64.  t's fields go over these (name, axes, warmup, repeats,
-- and any other), but for two that shape setup's result: estimate (a number, or a function of
-- the point) and more (a function (p, n) of fields added to it).  extra's fields, setup too, go
-- over the whole.
function M.tiled_experiment(t, extra)
  local estimate, more = t.estimate, t.more
  local exp = {
    module = M.src .. "/ptx/tiled.ptx",
    kernel = "tiled_scale",
    instrument = "warp",
    setup = function(p, dev)
      local n = 64 * p.tiles
      local a, c = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n)
      local r = { grid = 2, block = 64, smem = 256, args = { a, c, n, 1.0 } }
      if type(estimate) == "function" then r.estimate = estimate(p) else r.estimate = estimate end
      for k, v in pairs(more and more(p, n) or {}) do r[k] = v end
      return r
    end,
  }
  for k, v in pairs(t) do
    if k ~= "estimate" and k ~= "more" then exp[k] = v end
  end
  for k, v in pairs(extra or {}) do exp[k] = v end
  return exp
end

function M.tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p " .. quote(d)))
  return d
end

function M.rmdir(d)
  os.execute("rm -rf " .. quote(d))
end

return M
