-- mgpu.experiment: runs an experiment file: `mgpu-harness experiment.lua`.
-- A script returns a table:
--   name        experiment name (results go to results/<name>/<timestamp>/)
--   module      PTX file, relative to the script (or the working directory); a .cu file
--               is compiled with nvcc first (arch = "sm_90" by default, the device's on
--               cuda; nvcc_flags = {"-O3", "-lineinfo"} by default), see mgpu.nvcc
--   kernel      kernel name
--   instrument  "warp" | "warpgroup": profile the kernel from its markers
--   profile     for kernels that write their own trace (args hold mgpu.TRACE):
--               {scope=, entries=, names={...}} or a function(point) returning it
--   axes        parameter axes (see mgpu.axes); filter = function(point) -> bool
--   setup       function(point, device, entries) -> {grid=, block=, smem=, args={...},
--               estimate = events per trace (sizes the trace), check = function() -> ok, msg,
--               before = function() called before every launch (reset counters: warm-up
--               launches, repeats and retries all run the kernel again),
--               expect = {NAME = count, ...}: how many regions of each name the trace must
--               close (all traces together; a function(count) -> ok may stand for a count)}
--   warmup, repeats   launches before / measured (default 1 / 3)
--   flush_l2    true or a byte count: overwrite that much device memory before each
--               measured launch, for cold-cache timings (true: 128 MiB, over twice an H200's L2)
--   retry       false: no automatic retry on insufficient_space
--   max_entries upper bound for the doubling retry (default 2^20)
--   counters    a number of bins: each point's trace gets an "in flight" counter track per
--               region (how many traces are inside it, per bin of the kernel's span)
-- Command line: --set name=v1,v2  --list  --out DIR  --resume DIR  --backend emu|auto  --quiet
local core = require "mgpu.core"
local mgpu = require "mgpu"
local axes = require "mgpu.axes"
local errors = require "mgpu.errors"
local files = require "mgpu.files"
local results = require "mgpu.results"
local timing = require "mgpu.timing"

local M = {}

M.MAX_SMEM = 232448 -- dynamic shared memory per block on sm_90 (H100/H200), opt-in maximum

local function bad(msg) error(errors.new("bad_argument", msg), 0) end

-- argv (arg[1..n]) -> options; hand-written: five options do not justify a dependency
function M.parse_args(argv)
  local opts = { set = {} }
  local i = 1
  while i <= #argv do
    local a = argv[i]
    local function value()
      i = i + 1
      if argv[i] == nil then bad(a .. " needs a value") end
      return argv[i]
    end
    if a == "--set" then
      local kv = value()
      local k, v = kv:match("^([%w_]+)=(.+)$")
      if not k then bad("--set takes name=v1,v2 (got " .. kv .. ")") end
      opts.set[k] = v
    elseif a == "--list" then opts.list = true
    elseif a == "--out" then opts.out = value()
    elseif a == "--resume" then opts.resume = value()
    elseif a == "--backend" then opts.backend = value()
    elseif a == "--quiet" or a == "-q" then opts.quiet = true
    else bad("unknown option " .. a .. " (--set, --list, --out, --resume, --backend, --quiet)") end
    i = i + 1
  end
  return opts
end

local function dirname(path) return path:match("^(.*)/[^/]*$") or "." end

local exists = files.exists

local function resolve(script_dir, rel)
  if rel:sub(1, 1) == "/" then return rel end
  local p = script_dir .. "/" .. rel
  if exists(p) then return p end
  return rel
end

local function validate(exp)
  if type(exp.name) ~= "string" or not exp.name:match("^[%w_.-]+$") then
    bad("experiment.name must be a name of letters, digits, _ . - (it names the results folder)")
  end
  if type(exp.module) ~= "string" then bad("experiment.module must be the path of a PTX or .cu file") end
  if type(exp.kernel) ~= "string" then bad("experiment.kernel must name the kernel") end
  if type(exp.setup) ~= "function" then bad("experiment.setup must be a function(point, device)") end
  local c = exp.counters
  if c ~= nil and (type(c) ~= "number" or c < 1 or c > 100000 or c ~= math.floor(c)) then
    bad("experiment.counters must be a number of bins from 1 to 100000")
  end
end

-- Turns any error into {code, message}; script errors keep file:line and a traceback.
local function as_error(e)
  if errors.is(e) then return { code = e.code, message = e.message, required = e.required, capacity = e.capacity } end
  return { code = "script_error", message = debug.traceback(tostring(e), 2) }
end

-- setup's `expect = {NAME = count | function(count) -> ok}` against the
-- regions the point's trace closed; the first mismatch fails the point.
local function check_expect(expect, row, index)
  if type(expect) ~= "table" then bad("setup's expect must be a table {region name = count}") end
  if not row.regions then
    error(errors.new("check_failed", string.format("point %d: expect needs a trace, and this launch has none", index)), 0)
  end
  local got = {}
  for _, g in ipairs(row.regions) do got[g.name] = g.count end
  local names = {}
  for name in pairs(expect) do names[#names + 1] = tostring(name) end
  table.sort(names)
  for _, name in ipairs(names) do
    local want, count = expect[name], got[name] or 0
    local ok
    if type(want) == "function" then
      ok = want(count)
    elseif type(want) == "number" then
      ok = count == want
    else
      bad(string.format("expect.%s must be a count or a function(count)", name))
    end
    if not ok then
      local what = type(want) == "number" and string.format("expected %d", want) or "the expectation refused it"
      error(errors.new("check_failed", string.format("region %s: the trace closed %d, %s", name, count, what),
        { region = name, count = count }), 0)
    end
  end
end

-- One attempt at a point with `entries` per trace (nil: the experiment's choice).
local function attempt_point(ctx, index, point, entries, row)
  local exp = ctx.exp
  local spec = exp.setup(point, ctx.dev, entries)
  if type(spec) ~= "table" then bad("setup must return a table {grid=, block=, args=, ...}") end
  local launch = { grid = spec.grid, block = spec.block, smem = spec.smem, args = spec.args }
  entries = entries or spec.entries or (spec.estimate and mgpu.entries_for(spec.estimate))
  if exp.instrument then
    -- the launch retries by itself with the exact count, unless setup resets state
    -- before each launch (then the retry happens here, around setup)
    launch.profile = { entries = entries or exp.entries or 259, retry = exp.retry ~= false and not spec.before }
    -- the trace must fit in device memory: refuse before launching
    local function prod(v)
      if type(v) ~= "table" then return v or 1 end
      return (v[1] or 1) * (v[2] or 1) * (v[3] or 1)
    end
    local traces = prod(spec.grid) * math.floor(prod(spec.block) / (exp.instrument == "warp" and 32 or 128))
    local bytes = traces * launch.profile.entries * 4
    if bytes > ctx.dev.memory / 2 then
      error(errors.new("launch_failed", string.format("the trace needs %.0f bytes (%d traces x %d entries x 4): more "
        .. "than half of the device's %.0f bytes", bytes, traces, launch.profile.entries, ctx.dev.memory),
        { required = launch.profile.entries }), 0)
    end
  elseif exp.profile then
    local prof = type(exp.profile) == "function" and exp.profile(point) or exp.profile
    launch.profile = { scope = prof.scope, names = prof.names, entries = entries or prof.entries }
    if prof.staged then
      -- the kernel stages its events in dynamic shared memory (Mosaic GPU):
      -- traces per block x entries x 4 bytes, on top of what it needs itself
      local b = type(spec.block) == "table" and spec.block or { spec.block }
      local threads = (b[1] or 1) * (b[2] or 1) * (b[3] or 1)
      local per_block = math.floor(threads / (prof.scope == "warp" and 32 or 128))
      local bytes = per_block * launch.profile.entries * 4
      launch.smem = (prof.smem_extra or 0) + bytes
      if launch.smem > M.MAX_SMEM then
        error(errors.new("launch_failed", string.format(
          "the trace needs %d bytes of shared memory per block (%d traces x %d entries x 4) plus %d: more than the "
            .. "%d bytes (227 KiB) a block can have on sm_90", bytes, per_block, launch.profile.entries,
          prof.smem_extra or 0, M.MAX_SMEM), { required = launch.profile.entries }), 0)
      end
    end
  end
  local time_ns, run
  time_ns, run, ctx.flush = timing.time(ctx.kernel, launch, { warmup = exp.warmup, repeats = exp.repeats,
    flush_l2 = exp.flush_l2, flush = ctx.flush, before = spec.before })
  for _, a in ipairs(run.attempts or {}) do row.attempts[#row.attempts + 1] = a end
  row.time_ns = time_ns
  row.cycles, row.thread_insns = run.cycles, run.thread_insns
  row.entries = run.entries or (launch.profile and launch.profile.entries)
  if run.trace then
    row.trace = string.format("point-%d.trace.json", index)
    local ok, dumped = pcall(run.trace.dump, run.trace, ctx.dir .. "/" .. row.trace, { counters = exp.counters })
    if not ok then
      row.trace = nil
      error(dumped, 0)
    end
    row.regions, row.unit, row.timeline = dumped.summary, dumped.unit, dumped.timeline
    if dumped.clock_ghz then -- the SM clock the times were converted with, and where it came from
      row.clock = { ghz = dumped.clock_ghz, source = dumped.clock_source, timer_step_ns = dumped.timer_step_ns,
        bound = dumped.clock_bound }
    end
    core.write_file(ctx.dir .. string.format("/point-%d.summary.json", index),
      core.json_encode({ unit = dumped.unit, clock = row.clock, regions = dumped.summary, timeline = dumped.timeline },
        true) .. "\n")
  end
  if spec.expect ~= nil then check_expect(spec.expect, row, index) end
  if spec.check then
    local ok, msg = spec.check()
    if not ok then error(errors.new("check_failed", "check failed: " .. tostring(msg or "output differs")), 0) end
  end
  return launch.profile and launch.profile.entries
end

-- Runs a point, retrying when the trace did not fit: with exactly the entries
-- an instrumented kernel reported, else (kernels that write their own trace)
-- with twice as many, up to max_entries.  setup is called again for each
-- attempt with the entries as its third argument (a kernel compiled for a
-- fixed capacity must be regenerated or given it as an argument).
local function run_point(ctx, index, point)
  local exp = ctx.exp
  local row = { attempts = {} }
  local entries = nil
  local max_entries = exp.max_entries or 1048576
  for _ = 1, 40 do
    local ok, err = pcall(attempt_point, ctx, index, point, entries, row)
    if ok then return row end
    local cur = row.entries or entries
    local overflow = errors.is(err, "insufficient_space")
    if not overflow and errors.is(err, "kernel_fault") and exp.profile then
      -- a kernel writing its own trace without a bounds check overruns a small
      -- buffer; that cannot be told from another fault, so it is said plainly
      overflow = true
      err.message = err.message .. " (taken as a trace buffer overrun: retrying with more entries)"
    end
    if not overflow or exp.retry == false or not cur then error(err, 0) end
    local nxt
    if exp.instrument and err.required then
      nxt = err.required -- the kernel counted past its capacity
    else
      local last = row.attempts[#row.attempts]
      if last and last.entries == cur and not last.error then
        last.error = err.code -- the launch already recorded this attempt
      else
        row.attempts[#row.attempts + 1] = { entries = cur, error = err.code, required = err.required }
      end
      nxt = cur * 2 + 1
    end
    if nxt > max_entries then
      err.message = err.message .. string.format(" (retry stopped: %d entries would exceed max_entries %d)", nxt, max_entries)
      error(err, 0)
    end
    entries = nxt
  end
  error(errors.new("insufficient_space", "trace still did not fit after 40 attempts"), 0)
end

local function progress(ctx, done, failed, total)
  if ctx.quiet or not ctx.tty then return end
  local elapsed = core.now() - ctx.t0
  local eta = done > 0 and (total - done) * elapsed / done or 0
  io.stderr:write(string.format("\r[%d/%d] %d failed  elapsed %.1fs  ETA %.1fs ", done, total, failed, elapsed, eta))
  if done == total then io.stderr:write("\n") end
end

-- Runs exp with opts; returns {dir=, rows=, ok=, failed=, skipped=, filtered=}.
function M.run(exp, opts)
  opts = opts or {}
  validate(exp)
  local script = opts.script or "experiment.lua"
  local script_dir = dirname(script)
  local groups = axes.override(axes.groups(exp.axes), opts.set)
  local points, filtered = axes.expand(groups, exp.filter)
  local names = axes.names(groups)
  if opts.list then
    local rows = {}
    for i, p in ipairs(points) do rows[i] = { index = i, point = p, status = "listed" } end
    print(results.table(names, rows, "time"))
    print(string.format("%d points (%d filtered out)", #points, filtered))
    return { rows = rows, ok = 0, failed = 0, skipped = 0, filtered = filtered }
  end

  local dev = mgpu.device(opts.backend or exp.backend or "auto")
  local module_path = resolve(script_dir, exp.module)
  local load_path, compiled = module_path, nil
  if module_path:match("%.cu$") then -- CUDA C: nvcc makes the PTX first (mgpu.nvcc)
    local arch, flags = exp.arch or dev.arch, exp.nvcc_flags or require("mgpu.nvcc").DEFAULT_FLAGS
    load_path = require("mgpu.nvcc").compile(module_path, { arch = arch, nvcc_flags = flags })
    compiled = { ptx = load_path, sha256 = core.sha256_file(load_path), arch = arch, nvcc_flags = flags }
  end
  local module = dev:load(load_path, exp.instrument and { instrument = exp.instrument } or nil)
  local kernel = module:kernel(exp.kernel)

  local dir = opts.resume or opts.out
  if not dir then
    local base = "results/" .. exp.name .. "/" .. os.date("!%Y%m%dT%H%M%SZ")
    dir = base
    local n = 1
    while exists(dir .. "/manifest.json") do
      n = n + 1
      dir = base .. "-" .. n
    end
  end
  core.mkdir_p(dir)
  local done = {}
  if opts.resume then
    if not exists(dir .. "/manifest.json") then bad("--resume " .. dir .. ": no manifest.json there") end
    local man = files.read_json(dir .. "/manifest.json")
    if man.experiment ~= exp.name then
      bad("--resume " .. dir .. ": it holds experiment " .. tostring(man.experiment) .. ", not " .. exp.name)
    end
    for _, r in ipairs(results.read_jsonl(dir .. "/results.jsonl")) do
      if r.status == "ok" then done[r.key] = true end
    end
  end
  local ptx_hash = core.sha256_file(module_path)
  local manifest = {
    harness = mgpu.VERSION,
    experiment = exp.name,
    created = os.date("!%Y-%m-%dT%H:%M:%SZ"),
    command = opts.command,
    script = { path = script, sha256 = exists(script) and core.sha256_file(script) or nil },
    ptx = { { path = module_path, sha256 = ptx_hash } }, -- the .cu for CUDA C (replay checks these)
    compiled = compiled,                                  -- and the PTX nvcc made of it
    kernel = exp.kernel,
    instrument = exp.instrument,
    axes = (function()
      local t = {}
      for _, g in ipairs(groups) do t[#t + 1] = { kind = g.kind, names = g.names, rows = g.rows } end
      return t
    end)(),
    set = opts.set,
    points = #points,
    seed = exp.seed,
    warmup = exp.warmup or 1,
    repeats = exp.repeats or 3,
    backend = dev.backend,
    device = dev.name,
    clock_ghz = dev.clock_ghz,
    time_note = dev.backend == "emu" and "emu times are virtual (deterministic cycles at the stated clock), not GPU timings" or nil,
  }
  if not opts.resume or not exists(dir .. "/manifest.json") then
    core.write_file(dir .. "/manifest.json", core.json_encode(manifest, true) .. "\n")
  end

  local ctx = { exp = exp, dev = dev, kernel = kernel, dir = dir, quiet = opts.quiet, tty = core.isatty(2), t0 = core.now() }
  local nok, nfailed, nskipped = 0, 0, 0
  local interrupted = false
  for i, p in ipairs(points) do
    local key = axes.key(groups, p)
    if done[key] then
      nskipped = nskipped + 1
    else
      local ok, row = xpcall(run_point, as_error, ctx, i, p)
      if not ok and row.code == "interrupted" then
        interrupted = true
        break
      end
      if ok then
        row.status = "ok"
        nok = nok + 1
      else
        row = { status = "failed", error = row }
        nfailed = nfailed + 1
      end
      row.index, row.key, row.point = i, key, p
      results.append(dir, row)
    end
    progress(ctx, i, nfailed, #points)
  end
  local rows = results.latest(results.read_jsonl(dir .. "/results.jsonl"))
  results.write_csv(dir, names, rows)
  if not opts.quiet then
    if ctx.tty then io.stderr:write("\n") end
    print(results.table(names, rows, dev.backend == "emu" and "emu time" or "time"))
    print(string.format("%s: %d ok, %d failed, %d already done, %d filtered out -> %s", exp.name, nok, nfailed,
      nskipped, filtered, dir))
  end
  if interrupted then
    io.stderr:write(string.format("mgpu-harness: interrupted; the results folder is consistent: continue with\n"
      .. "  mgpu-harness %s --resume %s\n", script, dir))
  end
  return { dir = dir, rows = rows, ok = nok, failed = nfailed, skipped = nskipped, filtered = filtered,
    interrupted = interrupted }
end

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
-- compares every point (M.same_row).  Refuses when the script or a PTX file
-- changed since the run, unless opts.force.
function M.replay(dir, opts)
  opts = opts or {}
  local man = files.read_json(dir .. "/manifest.json")
  local function same_file(entry, what)
    local ok, now = pcall(core.sha256_file, entry.path)
    if not ok then bad(string.format("%s %s of the run is gone", what, entry.path)) end
    if now ~= entry.sha256 and not opts.force then
      bad(string.format("%s %s changed since the run (sha256 %s..., now %s...): replay would not repeat it; "
        .. "use --force to replay anyway", what, entry.path, entry.sha256:sub(1, 12), now:sub(1, 12)))
    end
  end
  same_file(man.script, "script")
  for _, p in ipairs(man.ptx or {}) do same_file(p, "PTX") end
  local chunk, err = loadfile(man.script.path)
  if not chunk then bad(err) end
  local exp = chunk()
  local out = dir .. "/replay-" .. os.date("!%Y%m%dT%H%M%SZ")
  local r = M.run(exp, { set = man.set, out = out, quiet = true, script = man.script.path, backend = man.backend,
    command = "mgpu-harness replay " .. dir })
  local old = {}
  for _, row in ipairs(results.latest(results.read_jsonl(dir .. "/results.jsonl"))) do old[row.key] = row end
  local same, differ = 0, {}
  for _, row in ipairs(r.rows) do
    local o = old[row.key]
    local eq, why = false, "not in the original run"
    if o then eq, why = M.same_row(o, row, man.backend) end
    if eq then same = same + 1 else differ[#differ + 1] = row.key .. ": " .. why end
  end
  return { out = out, identical = same, differ = differ, backend = man.backend }
end

function M.replay_main(argv)
  local dir, force = nil, false
  for _, a in ipairs(argv or {}) do
    if a == "--force" then force = true
    elseif a:sub(1, 2) == "--" then bad("replay: unknown option " .. a .. " (--force)")
    elseif dir then bad("replay takes one results folder")
    else dir = a end
  end
  if not dir then bad("usage: mgpu-harness replay RESULTS_DIR [--force]") end
  local r = M.replay(dir, { force = force })
  print(string.format("replay of %s on %s: %d points identical, %d differ -> %s", dir, r.backend, r.identical,
    #r.differ, r.out))
  for _, k in ipairs(r.differ) do print("  differs: " .. k) end
  return #r.differ == 0 and 0 or 8
end

-- Entry point of `mgpu-harness experiment.lua [options]`: returns the exit status.
function M.main(exp, argv)
  local opts = M.parse_args(argv or {})
  opts.script = argv and argv[0] or opts.script
  local cmd = { "mgpu-harness", opts.script }
  for _, a in ipairs(argv or {}) do cmd[#cmd + 1] = a end
  opts.command = table.concat(cmd, " ")
  local r = M.run(exp, opts)
  if r.interrupted then return 130 end
  return r.failed > 0 and 7 or 0
end

return M
