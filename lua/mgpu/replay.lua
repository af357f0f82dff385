-- mgpu.replay: `mgpu-harness replay RESULTS_DIR [--force]`: re-runs a results
-- folder from its manifest (the same script, --set values and backend) into
-- DIR/replay-<time>/ with the experiment runner, and compares every point with
-- the original run: identical on emu (virtual time), within the timing noise
-- on a GPU.  Refuses when the script, the module or a header it included
-- changed since the run (--force to go on; recorded).
local core = require "mgpu.core"
local errors = require "mgpu.errors"
local options = require "mgpu.options"
local experiment = require "mgpu.experiment"
local files = require "mgpu.files"
local manifest = require "mgpu.manifest"
local results = require "mgpu.results"

local M = {}

local function bad(msg) error(errors.new("bad_argument", msg), 0) end

local function deep_equal(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then return a == b end
  for k, v in pairs(a) do if not deep_equal(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

-- Compares a replayed row with the original.  On emu everything must be
-- identical (its time is virtual); on a GPU the timings must agree within
-- their noise: the medians may differ by the spread (max - min) the two runs
-- showed, or by 5% when that is larger.  Returns ok, reason.
function M.same_row(old, new, backend)
  local fields = { "status", "cycles", "thread_insns", "entries", "attempts" }
  if backend == "emu" then fields[#fields + 1] = "time_ns"; fields[#fields + 1] = "regions" end
  for _, f in ipairs(fields) do
    if not deep_equal(old[f], new[f]) then return false, f .. " differs" end
  end
  if backend ~= "emu" and old.time_ns and new.time_ns then
    local a, b = old.time_ns, new.time_ns
    local noise = math.max(0.05 * a.median, (a.max - a.min) + (b.max - b.min))
    if math.abs(b.median - a.median) > noise then
      return false, string.format("median time %.0f ns -> %.0f ns, more than the noise (%.0f ns)", a.median, b.median, noise)
    end
  end
  return true
end

-- Re-runs a results folder from its manifest into DIR/replay-<time>/ and
-- compares every point (M.same_row): the manifest's points (its axes, --set
-- and selection), the manifest's module, on its backend.  Refuses when the
-- script, the module, a header the .cu included or the PTX nvcc makes of it
-- changed since the run, unless opts.force; a torn line of the run's
-- results.jsonl is a bad_results (file:line).  Holds DIR's lock while it
-- runs, and adds its command to DIR's manifest.
-- Returns {out=, identical=, differ={"key: why", ...}, backend=}.
function M.replay(dir, opts)
  opts = opts or {}
  local man = manifest.read(dir)
  local lock = core.lock(dir .. "/.lock") -- a run going on in DIR: busy, naming it
  local ok, r = pcall(function()
    local what = "replay " .. dir
    if not man.script.sha256 then
      bad(string.format("%s: the run had no script file (%s, run from Lua): replay needs one", what, man.script.path))
    end
    local forced = manifest.check_sources(man, dir, opts.force, what)
    local script = manifest.path(dir, man.script.path)
    -- the run's rows, read (and checked) before anything runs
    local old = {}
    for _, row in ipairs(results.rows(dir, man)) do old[row.key] = row end
    local chunk, err = loadfile(script)
    if not chunk then bad(err) end
    local exp = chunk()
    if type(exp) ~= "table" then
      bad(string.format("%s: %s returns a %s, not an experiment table", what, script, type(exp)))
    end
    local stamp = "replay-" .. os.date("!%Y%m%dT%H%M%SZ")
    local name, n = stamp, 1
    while files.exists(dir .. "/" .. name) do
      n = n + 1
      name = stamp .. "-" .. n
    end
    local out = dir .. "/" .. name
    local command = "mgpu-harness replay " .. dir .. (opts.force and " --force" or "")
    local run = experiment.run(exp, { set = man.set, out = out, quiet = true, script = script, backend = man.backend,
      force = opts.force, manifest = man, manifest_dir = dir, command = command })
    local same, differ = 0, {}
    for _, row in ipairs(run.rows) do
      local o = old[row.key]
      local eq, why = false, "not in the original run"
      if o then eq, why = M.same_row(o, row, man.backend) end
      if eq then same = same + 1 else differ[#differ + 1] = row.key .. ": " .. why end
    end
    manifest.add_command(dir, man, manifest.command(command, "replay",
      { out = name, forced = #forced > 0 and forced or nil, identical = same, differ = #differ }))
    return { out = out, identical = same, differ = differ, backend = man.backend }
  end)
  lock:release()
  if not ok then error(r, 0) end
  return r
end

-- Entry point of `mgpu-harness replay RESULTS_DIR [--force]` (argv: the
-- arguments after "replay"): returns the exit status, 8 when a point differs.
function M.main(argv)
  local dir, force = nil, false
  for _, a in ipairs(argv or {}) do
    if a == "--force" then force = true
    elseif a:sub(1, 2) == "--" then bad("replay: unknown option " .. a .. " (--force)")
    elseif dir then bad("replay takes one results folder")
    else dir = options.arg("replay", "RESULTS_DIR", a) end
  end
  if not dir then bad("usage: mgpu-harness replay RESULTS_DIR [--force]") end
  local r = M.replay(dir, { force = force })
  print(string.format("replay of %s on %s: %d points identical, %d differ -> %s", dir, r.backend, r.identical,
    #r.differ, r.out))
  for _, k in ipairs(r.differ) do print("  differs: " .. k) end
  return #r.differ == 0 and 0 or 8
end

return M
