-- mgpu.experiment: runs an experiment file: `mgpu-harness experiment.lua`.
-- A script returns a table (another key is a bad_argument naming it, as in
-- the profile table and the table setup returns):
--   name        experiment name (results go to results/<name>/<timestamp>/)
--   module      PTX file, relative to the script (or the working directory); a .cu file
--               is compiled with nvcc first (arch = "sm_90" by default, the device's on
--               cuda; nvcc_flags = {"-O3", "-lineinfo"} by default), see mgpu.nvcc
--   kernel      kernel name
--   instrument  "warp" | "warpgroup": profile the kernel from its markers
--   entries     entries per trace of an instrumented kernel when setup gives neither
--               entries nor estimate (default 259)
--   profile     for kernels that write their own trace (args hold mgpu.TRACE):
--               {scope=, entries=, names={...}, staged=, smem_extra=} or a
--               function(point) returning it; staged = true: the kernel stages its
--               events in dynamic shared memory (Mosaic GPU), which is sized for
--               them on top of smem_extra bytes
--   axes        parameter axes (see mgpu.axes); filter = function(point) -> bool
--   setup       function(point, device, entries) -> {grid=, block=, smem=, args={...},
--               entries = per trace, estimate = events per trace (sizes the trace),
--               check = function() -> ok, msg,
--               before = function() called before every launch (reset counters: warm-up
--               launches, repeats and the launch's retry all run the kernel again),
--               expect = {NAME = count, ...}: how many regions of each name the trace must
--               close (all traces together; a function(count) -> ok may stand for a count)}
--   warmup, repeats   launches before / measured (default 1 / 3)
--   flush_l2    true or a byte count: overwrite that much device memory before each
--               measured launch, for cold-cache timings (true: 128 MiB, over twice an H200's L2)
--   retry       false: no retry of an instrumented launch, no resizing of a kernel's own
--               trace on insufficient_space
--   max_entries upper bound for resizing a kernel's own trace (default 2^20)
--   counters    a number of bins: each point's trace gets an "in flight" counter track per
--               region (how many traces are inside it, per bin of the kernel's span)
--   backend, arch, nvcc_flags, seed   the device kind ("auto"), nvcc's target and flags,
--               a seed recorded in the manifest
-- Command line: --set name=v1,v2  --list  --out DIR  --resume DIR  --backend emu|auto  --quiet
local core = require "mgpu.core"
local mgpu = require "mgpu"
local axes = require "mgpu.axes"
local errors = require "mgpu.errors"
local files = require "mgpu.files"
local options = require "mgpu.options"
local results = require "mgpu.results"
local timing = require "mgpu.timing"

local M = {}

-- The keys each table of an experiment may have (see the header).
local EXPERIMENT_KEYS = { "name", "module", "kernel", "instrument", "entries", "profile", "axes", "filter", "setup",
  "warmup", "repeats", "flush_l2", "retry", "max_entries", "counters", "backend", "arch", "nvcc_flags", "seed" }
local PROFILE_KEYS = { "scope", "entries", "names", "staged", "smem_extra" }
local SETUP_KEYS = { "grid", "block", "smem", "args", "entries", "estimate", "check", "before", "expect" }

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
  if type(exp) ~= "table" then bad("an experiment is a table {name=, module=, kernel=, setup=, ...}") end
  options.check_keys(exp, "experiment", EXPERIMENT_KEYS)
  if type(exp.profile) == "table" then options.check_keys(exp.profile, "experiment.profile", PROFILE_KEYS) end
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
  options.check_keys(spec, "setup", SETUP_KEYS)
  local launch = { grid = spec.grid, block = spec.block, smem = spec.smem, args = spec.args }
  entries = entries or spec.entries or (spec.estimate and mgpu.entries_for(spec.estimate))
  if exp.instrument then
    -- kernel:launch retries by itself, once, with exactly the entries the kernel
    -- counted, calling setup's before first (the first run changed the inputs)
    launch.profile = { entries = entries or exp.entries or 259, retry = exp.retry ~= false, reset = spec.before }
    -- the trace must fit in device memory: refuse before launching
    local s = core.spec { grid = spec.grid, block = spec.block, scope = exp.instrument, entries = launch.profile.entries }
    if s.bytes > ctx.dev.memory / 2 then
      error(errors.new("launch_failed", string.format("the trace needs %.0f bytes (%d traces x %d entries x 4): more "
        .. "than half of the device's %.0f bytes", s.bytes, s.num_traces, launch.profile.entries, ctx.dev.memory),
        { required = launch.profile.entries }), 0)
    end
  elseif exp.profile then
    local prof = exp.profile
    if type(prof) == "function" then
      prof = prof(point)
      if type(prof) ~= "table" then bad("experiment.profile(point) must return a table {scope=, entries=, names=}") end
      options.check_keys(prof, "experiment.profile", PROFILE_KEYS)
    end
    launch.profile = { scope = prof.scope, names = prof.names, entries = entries or prof.entries }
    if prof.staged then
      -- the kernel stages its events in dynamic shared memory (Mosaic GPU):
      -- one block's trace (traces per block x entries x 4 bytes), on top of what it needs itself
      local s = core.spec { grid = 1, block = spec.block, scope = prof.scope, entries = launch.profile.entries }
      local extra = prof.smem_extra or 0
      launch.smem = extra + s.bytes
      if launch.smem > ctx.dev.max_smem then
        error(errors.new("launch_failed", string.format(
          "the trace needs %d bytes of shared memory per block (%d traces x %d entries x 4) plus %d: more than the "
            .. "%d bytes of dynamic shared memory a block can have on this device", s.bytes, s.traces_per_block,
          launch.profile.entries, extra, ctx.dev.max_smem), { required = launch.profile.entries }), 0)
      end
    end
  end
  -- this attempt's entries, also when the launch fails (run_point resizes from them)
  row.entries = launch.profile and launch.profile.entries
  local time_ns, run
  time_ns, run, ctx.flush = timing.time(ctx.kernel, launch, { warmup = exp.warmup, repeats = exp.repeats,
    flush_l2 = exp.flush_l2, flush = ctx.flush, before = spec.before })
  for _, a in ipairs(run.attempts or {}) do row.attempts[#row.attempts + 1] = a end
  row.time_ns = time_ns
  row.cycles, row.thread_insns = run.cycles, run.thread_insns
  row.entries = run.entries or row.entries
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

-- Runs a point.  This is resizing, not the launch retry: the retry policy has
-- one place, kernel:launch, which re-runs an instrumented kernel once with
-- exactly the entries it counted (profile.retry, profile.reset = setup's
-- before; see attempt_point), and an instrumented point whose trace still does
-- not fit, or that may not retry (retry = false), fails here as it is.  What
-- stays here is for kernels that write their own trace (exp.profile): they
-- cannot say how many entries they needed, so setup is called again with
-- twice the entries (+1) as its third argument, up to max_entries (a kernel
-- compiled for a fixed capacity must be regenerated or given it).
local function run_point(ctx, index, point)
  local exp = ctx.exp
  local row = { attempts = {} }
  local entries = nil
  local max_entries = exp.max_entries or 1048576
  local resizes = exp.profile ~= nil and not exp.instrument and exp.retry ~= false
  for _ = 1, 40 do
    local ok, err = pcall(attempt_point, ctx, index, point, entries, row)
    if ok then return row end
    local cur = row.entries or entries
    local overflow = errors.is(err, "insufficient_space")
    if not overflow and errors.is(err, "kernel_fault") and resizes then
      -- a kernel writing its own trace without a bounds check overruns a small
      -- buffer; that cannot be told from another fault, so it is said plainly
      overflow = true
      err.message = err.message .. " (taken as a trace buffer overrun: retrying with more entries)"
    end
    if not overflow or not resizes or not cur then error(err, 0) end
    local last = row.attempts[#row.attempts]
    if last and last.entries == cur and not last.error then
      last.error = err.code -- the launch already recorded this attempt
    else
      row.attempts[#row.attempts + 1] = { entries = cur, error = err.code, required = err.required }
    end
    local nxt = cur * 2 + 1
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

-- `mgpu-harness replay` lives in mgpu.replay; core/main.c's builtin still
-- calls this name, so it forwards (core/main.c can call mgpu.replay's main).
M.replay_main = function(...) return require("mgpu.replay").main(...) end

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
