-- mgpu.experiment: runs an experiment file: `mgpu-harness experiment.lua`.
-- A script returns a table (another key is a bad_argument naming it, as in
-- the profile table and the table setup returns):
--   name        experiment name (results go to results/<name>/<timestamp>/)
--   module      PTX file, relative to the script (or the working directory); a .cu file
--               is compiled with nvcc first (arch = "sm_90" by default, the device's on
--               cuda; nvcc_flags = {"-O3", "-lineinfo"} by default), see mgpu.nvcc
--   kernel      kernel name (a C++ template instance as written: "mm_tiled<32>"), or a
--               function(point) returning it
--   defines     a .cu's -D values: a list of axis names ({"TILE"}: -DTILE=<the point's TILE>),
--               a table {NAME = value}, or a function(point) returning one; with a function
--               nvcc_flags, compile-time axes: each distinct build compiled once (mgpu.builds),
--               its PTX kept in DIR/builds/build-N.ptx
--   instrument  "warp" | "warpgroup": profile the kernel from its markers
--   entries     entries per trace of an instrumented kernel when setup gives neither
--               entries nor estimate (default 259)
--   profile     for kernels that write their own trace (args hold mgpu.TRACE):
--               {scope=, entries=, names={...}, staged=, smem_extra=} or a
--               function(point) returning it; staged = true: the kernel stages its
--               events in dynamic shared memory (Mosaic GPU), which is sized for
--               them on top of smem_extra bytes
--   axes        parameter axes (see mgpu.axes); filter = function(point) -> bool
--   setup       function(point, device, entries) -> {grid=, block=, smem=, args={...}, cooperative=,
--               entries = per trace, estimate = events per trace (sizes the trace),
--               check = function() -> ok, msg,
--               before = function() called before every launch (reset counters: warm-up
--               launches, repeats and the launch's retry all run the kernel again),
--               expect = {NAME = count, ...}: how many regions of each name the trace must
--               close (all traces together; a function(count) -> ok may stand for a count),
--               cooperative = true: a cooperative launch (cg::this_grid().sync()),
--               bytes = the bytes the launch reads and writes, flops = its floating-point
--               operations: the row's gbps and gflops (on emu with stats, bytes default to the
--               global bytes the counters saw)}
--   warmup, repeats   launches before / measured (default 1 / 3)
--   min_time, max_noise, max_repeats   measure until sure (mgpu.timing): at least repeats
--               launches, then more until min_time seconds and at most max_noise percent
--               relative standard deviation, up to max_repeats
--   flush_l2    true or a byte count: overwrite that much device memory before each
--               measured launch, for cold-cache timings (true: 128 MiB, over twice an H200's L2)
--   retry       false: no retry of an instrumented launch, no resizing of a kernel's own
--               trace on insufficient_space
--   max_entries upper bound for resizing a kernel's own trace (default 2^20)
--   counters    a number of bins: each point's trace gets an "in flight" counter track per
--               region (how many traces are inside it, per bin of the kernel's span)
--   backend, arch, nvcc_flags, seed   the device kind ("auto"), nvcc's target and flags,
--               a seed recorded in the manifest
--   emu         on emu: {model = "h100-sxm", params = {l2_bytes_per_clk = 6000, ...}}, the device
--               model its virtual time comes from and parameters of it set otherwise (default: the
--               h200 as it is); the manifest's emu_model records every parameter the run used
--   probes      with instrument: probes instead of (or beside) markers, as dev:load takes them
--               ({name=, kernel = true | loop = | around = | from =, to =}; docs/instrumenting.md "probes")
--   stats       true (emu): exact counters per source line for each point (Nsight Compute's metric
--               names; mgpu.stats): point-N.stats.json and .csv, the totals in results.csv
--   timeout_s   a point still running after this many seconds fails as `timeout` and the
--               sweep goes on (emu stops the launch itself; with workers the worker is killed,
--               the one way to stop a hung GPU kernel, or Lua looping inside pcall: a run from
--               a script file with timeout_s has one worker unless --workers says otherwise)
-- Command line: --set name=v1,v2  --list (streamed: any number of points)  --out DIR  --resume DIR
--   [--force]  --backend emu|auto  --quiet (no table; failures still one line each on stderr);
--   a run takes at most MAX_POINTS (10^6) points
--   --workers N|auto [--devices 0,2,3]  points in N worker processes (auto: one per visible GPU
--               on cuda, one per core on emu), the parent the only writer of results.jsonl
--   --shard I/N  only the points of shard I of N (1 <= I <= N): round-robin by point index over
--               the full point list, so every process computes the same split without talking
-- Results folder (mgpu.results, mgpu.manifest): point files are named by the
-- point's index in the full, unfiltered point list the manifest records
-- (point_keys), so they never name another point than the row that names
-- them; --out refuses a folder that holds a run's results; a run holds the
-- folder's lock (DIR/.lock) for its whole life; --resume runs the manifest's
-- points (its axes, --set and selection) and refuses changed sources unless
-- --force; a torn last line of results.jsonl is set aside (results.jsonl.torn)
-- and its point runs again; results.csv is rebuilt from results.jsonl.
local core = require "mgpu.core"
local mgpu = require "mgpu"
local axes = require "mgpu.axes"
local errors = require "mgpu.errors"
local files = require "mgpu.files"
local manifest = require "mgpu.manifest"
local options = require "mgpu.options"
local results = require "mgpu.results"
local timing = require "mgpu.timing"
local builds = require "mgpu.builds"

local M = {}

local point_row, worker_plan, probe_device, run_workers -- defined below, used by run_locked
local list_points -- defined below, used by M.run
local throughput -- defined below, used by attempt_point

-- The keys each table of an experiment may have (see the header).
local EXPERIMENT_KEYS = { "name", "module", "kernel", "instrument", "entries", "profile", "axes", "filter", "setup",
  "warmup", "repeats", "flush_l2", "retry", "max_entries", "counters", "backend", "arch", "nvcc_flags", "seed",
  "timeout_s", "stats", "probes", "defines", "min_time", "max_noise", "max_repeats", "emu" }
local EMU_KEYS = { "model", "params" }
local PROFILE_KEYS = { "scope", "entries", "names", "staged", "smem_extra" }
local SETUP_KEYS = { "grid", "block", "smem", "args", "entries", "estimate", "check", "before", "expect", "cooperative",
  "bytes", "flops" }

local function bad(msg) error(errors.new("bad_argument", msg), 0) end

-- A backend's name (--backend and mgpu.run's backend): emu, cuda, cuda:N or auto.
local function check_backend(b, what)
  if type(b) ~= "string" or not (b == "emu" or b == "cuda" or b == "auto" or b:match("^cuda:%d+$")) then
    bad(string.format("%s takes emu, cuda, cuda:N or auto, not %s", what,
      type(b) == "string" and ("\"" .. b .. "\"") or type(b)))
  end
end

-- A shard {index = I, count = N} (--shard I/N and mgpu.run's shard): integers, 1 <= I <= N <= 10^9.
local function check_shard(sh, what, given)
  local function int(x) return type(x) == "number" and x == math.floor(x) end -- LuaJIT has no math.type
  local ok = type(sh) == "table" and int(sh.index) and int(sh.count)
    and sh.index >= 1 and sh.index <= sh.count and sh.count <= 1000000000
  if ok then
    for k in pairs(sh) do if k ~= "index" and k ~= "count" then ok = false end end
  end
  if not ok then
    bad(string.format("%s with 1 <= I <= N <= 1000000000 (got %s)", what, given or "another value"))
  end
end

-- argv (arg[1..n]) -> options; hand-written: five options do not justify a dependency
function M.parse_args(argv)
  local opts = { set = {} }
  local seen = {} -- an option given twice is refused (but --set, per axis below), an empty value too
  local i = 1
  while i <= #argv do
    local a = argv[i]
    local function value()
      i = i + 1
      if argv[i] == nil then bad(a .. " needs a value") end
      return options.arg(nil, a, argv[i], a ~= "--set" and seen or nil)
    end
    if a == "--set" then
      local kv = value()
      local k, v = kv:match("^([%w_]+)=(.+)$")
      if not k then bad("--set takes name=v1,v2 (got " .. kv .. ")") end
      if opts.set[k] then -- the second would silently replace the first
        bad(string.format("--set %s given twice (%s=%s and %s=%s): give its values in one --set %s=%s,%s", k, k,
          opts.set[k], k, v, k, opts.set[k], v))
      end
      opts.set[k] = v
    elseif a == "--list" then opts.list = true
    elseif a == "--out" then opts.out = value()
    elseif a == "--resume" then opts.resume = value()
    elseif a == "--force" then opts.force = true
    elseif a == "--backend" then
      opts.backend = value()
      check_backend(opts.backend, "--backend") -- here, so --list (which opens no device) refuses it too
    elseif a == "--quiet" or a == "-q" then opts.quiet = true
    elseif a == "--workers" then
      local v = value()
      opts.workers = v == "auto" and "auto" or tonumber(v)
      if opts.workers ~= "auto" and (not opts.workers or opts.workers < 0 or opts.workers > 1024
        or opts.workers ~= math.floor(opts.workers)) then
        bad("--workers takes a number of worker processes from 1 to 1024, auto, or 0 (in this process; got " .. v .. ")")
      end
    elseif a == "--devices" then
      local v = value()
      opts.devices = {}
      for d in v:gmatch("[^,]+") do
        if not d:match("^%d+$") then bad("--devices takes device numbers like 0,2,3 (got " .. v .. ")") end
        opts.devices[#opts.devices + 1] = tonumber(d)
      end
      if #opts.devices == 0 then bad("--devices takes device numbers like 0,2,3 (got " .. v .. ")") end
    elseif a == "--shard" then
      local v = value()
      local si, sn = v:match("^(%d+)/(%d+)$")
      opts.shard = { index = tonumber(si), count = tonumber(sn) } -- digits past 2^63 become a float
      check_shard(opts.shard, "--shard takes I/N", v)
    elseif a == "--worker" then opts.worker = value() -- internal: serve points of that results folder
    elseif a == "" then options.arg(nil, "an argument", a)
    else bad("unknown option " .. a .. " (--set, --list, --out, --resume, --force, --backend, --quiet, --workers, "
      .. "--devices, --shard)") end
    i = i + 1
  end
  if opts.resume and opts.out then
    bad("--resume " .. opts.resume .. " continues the run in that folder: it takes no --out (got --out " .. opts.out .. ")")
  end
  if opts.force and not opts.resume then bad("--force goes with --resume DIR (go on although a source changed)") end
  if opts.devices and not opts.workers then
    bad("--devices goes with --workers N|auto (the devices the workers use): add --workers auto for one per device")
  end
  if opts.shard and opts.resume then
    bad("--resume runs the points of the folder's own shard: it takes no --shard")
  end
  return opts
end

local dirname = files.dirname

local exists = files.exists

local function resolve(script_dir, rel)
  if rel:sub(1, 1) == "/" then return rel end
  local p = script_dir .. "/" .. rel
  if exists(p) then return p end
  return rel
end

-- entries per trace: the 3 header words at least; the kernel gets them as a 32-bit count
local MAX_ENTRIES = 2147483647

local function check_entries(v, what)
  if v ~= nil and (type(v) ~= "number" or v ~= math.floor(v) or v < 3 or v > MAX_ENTRIES) then
    bad(string.format("%s must be an integer from 3 to %d (entries per trace: 3 header words + 2 per event), got %s",
      what, MAX_ENTRIES, tostring(v)))
  end
end

local function check_type(v, what, want, desc)
  if v ~= nil and type(v) ~= want then bad(string.format("%s must be %s, got %s", what, desc, type(v))) end
end

-- The device options an experiment's emu table asks for (core.device's model and model_params), or nil
-- (also on cuda: the table says how emu times the points, and a cuda device refuses emu's options).
local function emu_opts(exp, kind)
  if not exp.emu or (kind and kind:match("^cuda")) then return nil end
  return { model = exp.emu.model, model_params = exp.emu.params }
end

-- Whether two emu models (dev.model tables: name and every parameter) are the same.
local function same_model(a, b)
  for k, v in pairs(a) do if b[k] ~= v then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

-- Every field of an experiment is checked before the first point runs (a
-- bad one is a bad_argument naming it, exit status 2).
local function validate(exp)
  if type(exp) ~= "table" then bad("an experiment is a table {name=, module=, kernel=, setup=, ...}") end
  options.check_keys(exp, "experiment", EXPERIMENT_KEYS)
  if type(exp.profile) == "table" then
    options.check_keys(exp.profile, "experiment.profile", PROFILE_KEYS)
    check_entries(exp.profile.entries, "experiment.profile.entries")
    check_type(exp.profile.staged, "experiment.profile.staged", "boolean", "true or false")
    if exp.profile.smem_extra ~= nil then timing.count(exp.profile.smem_extra, "experiment.profile.smem_extra", 0, 2 ^ 31) end
  elseif exp.profile ~= nil and type(exp.profile) ~= "function" then
    bad("experiment.profile must be a table {scope=, entries=, names=} or a function(point) returning one, got "
      .. type(exp.profile))
  end
  if exp.probes ~= nil and type(exp.probes) ~= "table" then
    bad("experiment.probes must be a list of probe tables {name =, kernel = true | loop = | around = | from =, to =}, got "
      .. type(exp.probes))
  end
  if exp.probes ~= nil and exp.instrument == nil then
    bad("experiment.probes go with instrument = \"warp\" or \"warpgroup\" (the scope the probes' traces have)")
  end
  if exp.instrument ~= nil and exp.instrument ~= "warp" and exp.instrument ~= "warpgroup" then
    bad(string.format("experiment.instrument must be \"warp\" or \"warpgroup\", got %s", tostring(exp.instrument)))
  end
  check_entries(exp.entries, "experiment.entries")
  check_entries(exp.max_entries, "experiment.max_entries")
  timing.count(exp.warmup, "experiment.warmup", 0, timing.MAX_LAUNCHES)
  timing.count(exp.repeats, "experiment.repeats", 1, timing.MAX_LAUNCHES)
  if exp.flush_l2 ~= nil and type(exp.flush_l2) ~= "boolean" then timing.count(exp.flush_l2, "experiment.flush_l2", 1) end
  check_type(exp.retry, "experiment.retry", "boolean", "true or false")
  check_type(exp.filter, "experiment.filter", "function", "a function(point) -> keep")
  check_type(exp.backend, "experiment.backend", "string", "a device kind (\"auto\", \"emu\", \"cuda\")")
  check_type(exp.arch, "experiment.arch", "string", "an nvcc target such as \"sm_90\"")
  if exp.emu ~= nil then
    check_type(exp.emu, "experiment.emu", "table", "{model = \"h100-sxm\", params = {name = number, ...}}")
    options.check_keys(exp.emu, "experiment.emu", EMU_KEYS)
    check_type(exp.emu.model, "experiment.emu.model", "string", "a device model's name (\"h200\", \"h100-sxm\", \"h100-pcie\")")
    if exp.emu.model == "" then bad("experiment.emu.model is empty: a device model's name (\"h200\", \"h100-sxm\", \"h100-pcie\"), or leave it out") end
    check_type(exp.emu.params, "experiment.emu.params", "table", "{name = number, ...} (e.g. {l2_bytes_per_clk = 6000})")
    for k, v in pairs(exp.emu.params or {}) do -- (named as the experiment has them, not as device.model_params)
      if type(k) ~= "string" then
        bad(string.format("experiment.emu.params: a key of type %s (parameters are named: {l2_bytes_per_clk = 6000})", type(k)))
      end
      check_type(v, "experiment.emu.params." .. k, "number", "a number")
    end
  end
  builds.validate(exp) -- kernel, defines, nvcc_flags: values or functions of the point (compile-time axes)
  timing.check_adaptive(exp, "experiment.")
  if exp.axes ~= nil then axes.groups(exp.axes) end -- axes = 5 is refused naming experiment.axes
  if type(exp.name) ~= "string" or not exp.name:match("^[%w_.-]+$") or exp.name:match("^%.+$") then
    -- "." and ".." are folders already: results/../TIME is outside results/
    bad("experiment.name must be a name of letters, digits, _ . - (it names the results folder), not "
      .. (type(exp.name) == "string" and string.format("%q", exp.name) or type(exp.name)))
  end
  if type(exp.module) ~= "string" then bad("experiment.module must be the path of a PTX or .cu file") end
  if type(exp.setup) ~= "function" then bad("experiment.setup must be a function(point, device)") end
  local c = exp.counters
  if c ~= nil and (type(c) ~= "number" or c < 1 or c > 100000 or c ~= math.floor(c)) then
    bad("experiment.counters must be a number of bins from 1 to 100000")
  end
  check_type(exp.stats, "experiment.stats", "boolean", "true or false")
  if exp.seed ~= nil and (type(exp.seed) ~= "number" or exp.seed ~= math.floor(exp.seed)) then
    bad("experiment.seed must be an integer (recorded in the manifest), got " .. tostring(exp.seed))
  end
  local t = exp.timeout_s
  if t ~= nil and (type(t) ~= "number" or not (t > 0) or t == math.huge) then
    bad("experiment.timeout_s must be a number of seconds above 0, got " .. tostring(t))
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

-- The row's throughput (issue 24): setup's bytes and flops over the (plain) kernel's median
-- time: gbps (bytes / ns = GB/s) and gflops; on emu with stats, bytes undeclared are the global
-- memory's bytes the counters saw the kernel ask for (bytes_source "counted", else "declared").
function throughput(row, spec)
  local t = row.time_ns and row.time_ns.median
  local bytes, source = spec.bytes, spec.bytes ~= nil and "declared" or nil
  if bytes == nil and row.stats then
    local ld = row.stats["ptx__bytes_requested_mem_global_op_ld.sum"]
    local st = row.stats["ptx__bytes_requested_mem_global_op_st.sum"]
    if ld or st then bytes, source = (ld or 0) + (st or 0), "counted" end
  end
  row.bytes, row.bytes_source, row.flops = bytes, source, spec.flops
  if t and t > 0 then
    row.gbps = bytes and bytes / t or nil
    row.gflops = spec.flops and spec.flops / t or nil
  end
end

-- The experiment's kernel as it runs for the trace (instrumented when exp.instrument) and, for an
-- instrumented experiment, the same kernel loaded plain: the one that is timed (issue 24).
local function load_kernels(dev, load_path, exp, name)
  if name:find("<", 1, true) then -- a C++ template instance: its mangled name among the module's entries
    name = builds.resolve(files.read_or_fail(load_path), name, load_path)
  end
  if not exp.instrument then return dev:load(load_path):kernel(name), nil end
  local kernel = dev:load(load_path, { instrument = exp.instrument, probes = exp.probes }):kernel(name)
  return kernel, dev:load(load_path):kernel(name)
end

-- The kernels of point i (p) when they depend on the point (compile-time axes, a kernel function):
-- its build's PTX (DIR/builds/build-N.ptx) and its kernel name, loaded once per (build, name).
-- A build that failed to compile fails the point with its error.
local function point_kernels(ctx, i, p)
  local exp = ctx.exp
  local name = builds.kernel_of(exp, p)
  local path, bi = ctx.load_path, nil
  if ctx.builds then
    bi = ctx.builds.of[i]
    local b = ctx.builds.list[bi]
    if b.error then
      error(errors.new(b.error.code, string.format("build %d (nvcc -arch=%s %s): %s", bi, b.arch,
        table.concat(b.flags, " "), b.error.message), { build = bi }), 0)
    end
    path = string.format("%s/builds/build-%d.ptx", ctx.dir, bi)
  end
  ctx.loaded = ctx.loaded or {}
  local key = path .. "\0" .. name
  local k = ctx.loaded[key]
  if not k then
    local ok, kernel, plain = pcall(load_kernels, ctx.dev, path, exp, name)
    k = ok and { kernel, plain } or { err = kernel }
    ctx.loaded[key] = k
  end
  if k.err then error(k.err, 0) end
  return k[1], k[2], bi, name
end

-- One attempt at a point with `entries` per trace (nil: the experiment's choice).
local function attempt_point(ctx, index, point, entries, row)
  local exp = ctx.exp
  local spec = exp.setup(point, ctx.dev, entries)
  if type(spec) ~= "table" then bad("setup must return a table {grid=, block=, args=, ...}") end
  options.check_keys(spec, "setup", SETUP_KEYS)
  -- the fields the runner calls or reads, checked before the launch (check = 42 names setup's check)
  check_type(spec.args, "setup's args", "table", "a list of the kernel's arguments")
  check_type(spec.check, "setup's check", "function", "a function() -> ok, message")
  check_type(spec.before, "setup's before", "function", "a function called before every launch")
  check_type(spec.expect, "setup's expect", "table", "a table {region name = count}")
  check_entries(spec.entries, "setup's entries")
  if spec.estimate ~= nil then timing.count(spec.estimate, "setup's estimate", 0, math.floor((MAX_ENTRIES - 3) / 2)) end
  for _, k in ipairs({ "bytes", "flops" }) do -- what the launch moves and computes: throughput (issue 24)
    local v = spec[k]
    if v ~= nil and (type(v) ~= "number" or v ~= v or v < 0 or v == math.huge) then
      bad(string.format("setup's %s must be a number >= 0 (the %s the launch %s), got %s", k,
        k == "bytes" and "bytes of memory" or "floating-point operations", k == "bytes" and "reads and writes" or
        "does", tostring(v)))
    end
  end
  local launch = { grid = spec.grid, block = spec.block, smem = spec.smem, args = spec.args, timeout_s = exp.timeout_s,
    stats = exp.stats or nil, cooperative = spec.cooperative }
  entries = entries or spec.entries or (spec.estimate and mgpu.entries_for(spec.estimate))
  if exp.instrument then
    -- kernel:launch retries by itself, once, with exactly the entries the kernel
    -- counted, calling setup's before first (the first run changed the inputs)
    launch.profile = { entries = entries or exp.entries or 259, retry = exp.retry ~= false, reset = spec.before }
    -- the trace must fit in device memory: refuse before launching
    local s = core.spec { grid = spec.grid, block = spec.block, scope = exp.instrument, entries = launch.profile.entries,
      partial = true } -- the instrumented code traces a last, partial warp or warpgroup too
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
      check_entries(prof.entries, "experiment.profile(point).entries")
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
  local time_opts = { warmup = exp.warmup, repeats = exp.repeats, flush_l2 = exp.flush_l2, flush = ctx.flush,
    before = spec.before, min_time = exp.min_time, max_noise = exp.max_noise, max_repeats = exp.max_repeats }
  local plain_run -- an instrumented experiment times the plain kernel: its time is the point's time_ns
  if ctx.plain then
    local plain = {}
    for k, v in pairs(launch) do plain[k] = v end
    plain.profile = nil
    row.time_ns, plain_run, ctx.flush = timing.time(ctx.plain, plain, time_opts)
    time_opts.flush = ctx.flush
    launch.stats = nil -- the counters are the plain kernel's (the user's code alone)
    if spec.check then -- the plain kernel's output, checked as the instrumented one's is below
      local ok, msg = spec.check()
      if not ok then
        error(errors.new("check_failed", "check failed (the plain kernel): " .. tostring(msg or "output differs")), 0)
      end
    end
  end
  local time_ns, run
  time_ns, run, ctx.flush = timing.time(ctx.kernel, launch, time_opts)
  for _, a in ipairs(run.attempts or {}) do row.attempts[#row.attempts + 1] = a end
  if plain_run then
    row.instrumented_time_ns = time_ns
    row.overhead = row.time_ns.median > 0 and time_ns.median / row.time_ns.median or nil
  else
    row.time_ns = time_ns
  end
  local counted = plain_run or run
  row.cycles, row.thread_insns = counted.cycles, counted.thread_insns
  row.entries = run.entries or row.entries
  if counted.stats then -- emu's exact counters of the last measured launch (they are the same each launch)
    local stats = require "mgpu.stats"
    stats.write(ctx.dir .. string.format("/point-%d", index), counted.stats)
    row.stats = stats.totals(counted.stats)
    row.stalls = counted.stats.stalls -- the kernel's warp-cycles by stall reason (issue 34)
    row.stats_file = string.format("point-%d.stats.json", index)
  end
  if run.trace then
    row.trace = string.format("point-%d.trace.json", index)
    local ok, dumped = pcall(run.trace.dump, run.trace, ctx.dir .. "/" .. row.trace, { counters = exp.counters })
    if not ok then
      row.trace = nil
      error(dumped, 0)
    end
    row.regions, row.unit, row.timeline = dumped.summary, dumped.unit, dumped.timeline
    -- regions that only threads not writing the trace entered (emu): not in the summary, said beside it
    if run.warnings and #run.warnings > 0 then row.warnings = run.warnings end
    if dumped.clock_ghz then -- the SM clock the times were converted with, and where it came from
      row.clock = { ghz = dumped.clock_ghz, source = dumped.clock_source, timer_step_ns = dumped.timer_step_ns,
        bound = dumped.clock_bound }
    end
    core.write_file(ctx.dir .. string.format("/point-%d.summary.json", index),
      core.json_encode({ unit = dumped.unit, clock = row.clock, regions = dumped.summary, timeline = dumped.timeline,
        warnings = row.warnings }, true) .. "\n")
  end
  throughput(row, spec)
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
    if not overflow and errors.is(err, "kernel_fault") and resizes and ctx.dev.backend ~= "cuda" then
      -- (not on cuda: the fault loses the device for the process, so a retry there cannot run;
      -- the point fails with the fault and the next point gets a fresh worker)
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

-- A results folder's error: a manifest that is not what the runner wrote.
local function bad_results(msg) error(errors.new("bad_results", msg), 0) end

-- "block=64,128 n=4096", or "(none)"
local function fmt_set(set)
  local names = {}
  for k in pairs(set or {}) do names[#names + 1] = tostring(k) end
  table.sort(names)
  for i, k in ipairs(names) do names[i] = k .. "=" .. tostring(set[k]) end
  return #names > 0 and table.concat(names, " ") or "(none)"
end

-- The points of a run: the axis groups, every point of their product (the
-- full, unfiltered list: a point's index in it names its files), their keys,
-- and the indices of the points that run (what the filter kept).  From a
-- manifest (--resume, replay): its axes and its selection, checked against
-- the keys it recorded; a manifest without point_keys (an older harness)
-- gives its --set to the script's axes.
-- The most points one run takes: its manifest lists every point's key.
M.MAX_POINTS = 1000000

-- Whether experiment.filter keeps point p (true without a filter); the filter gets a copy, and its
-- error is raised with the key named.
local function keeps(exp, p)
  if not exp.filter then return true end
  local copy = {}
  for k, v in pairs(p) do copy[k] = v end
  local ok, r = xpcall(exp.filter, as_error, copy)
  if not ok then
    r.message = "experiment.filter: " .. r.message
    error(errors.new(r.code, r.message, r), 0)
  end
  return r
end

local function plan(exp, set, man, where, shard)
  local from_man = man ~= nil and man.point_keys ~= nil
  local groups
  if from_man then
    groups = axes.from_manifest(man.axes, where)
  else
    groups = axes.override(axes.groups(exp.axes), man and man.set or set)
  end
  local count = axes.count(groups)
  if count > M.MAX_POINTS then -- every point is a row, a key in the manifest: refuse before building them
    bad(string.format("the axes make %.0f points, more than the %d one run takes (the manifest lists every point): "
      .. "narrow an axis with --set, or split the sweep into several experiments (--list shows any number of points)",
      count, M.MAX_POINTS))
  end
  local all = axes.expand(groups)
  local keys, seen = {}, {}
  for i, p in ipairs(all) do
    keys[i] = axes.key(groups, p)
    if seen[keys[i]] then
      bad(string.format("point %s appears twice in the axes (points %d and %d): an axis has a value twice", keys[i],
        seen[keys[i]], i))
    end
    seen[keys[i]] = i
  end
  local selected = {}
  if from_man then
    if #keys ~= #man.point_keys then
      bad_results(string.format("%s: point_keys lists %d points, its axes make %d", where, #man.point_keys, #keys))
    end
    for i, k in ipairs(keys) do
      if k ~= man.point_keys[i] then
        bad_results(string.format("%s: point_keys[%d] is %s, its axes make %s", where, i, man.point_keys[i], k))
      end
    end
    for i, v in ipairs(man.selected or keys) do selected[i] = man.selected and v or i end
  else
    for i, p in ipairs(all) do
      if keeps(exp, p) then selected[#selected + 1] = i end
    end
  end
  local filtered = #all - #selected
  local kept = selected -- what the filter kept of the whole sweep (a shard's manifest records it: issue 24)
  if shard and not from_man then -- round-robin by index over the full list: the same split everywhere
    local mine = {}
    for _, i in ipairs(selected) do
      if (i - 1) % shard.count == shard.index - 1 then mine[#mine + 1] = i end
    end
    selected = mine
  end
  -- the whole sweep's kept points (a shard's manifest records them): builds are numbered over them
  local sweep = from_man and man.sweep_selected or kept
  return { groups = groups, names = axes.names(groups), all = all, keys = keys, selected = selected,
    filtered = filtered, kept = kept, sweep = sweep }
end

-- --list: the points this command would run (the shard's with --shard; a resumed folder's own),
-- streamed: each point is made from its index, printed and dropped, so a sweep of 10^6 points
-- lists in constant memory (mgpu.run keeps the rows it returns).  With a .cu module, each
-- point's build and the builds' flags; with a kernel function, each point's kernel.
function list_points(exp, opts, script)
  local src, src_dir = opts.manifest, opts.manifest_dir
  if opts.resume then src, src_dir = manifest.read(opts.resume), opts.resume end
  local keep_rows = not opts.script_file
  local groups, total, each
  if src and src.point_keys then -- a manifest's points (at most MAX_POINTS of them)
    local pl = plan(exp, opts.set, src, src_dir .. "/manifest.json", opts.shard)
    groups, total = pl.groups, #pl.all
    local mine = {}
    for _, i in ipairs(pl.selected) do mine[i] = true end
    each = function(fn) for _, i in ipairs(pl.sweep) do fn(i, pl.all[i], mine[i]) end end
  else
    groups = axes.override(axes.groups(exp.axes), src and src.set or opts.set)
    for _, g in ipairs(groups) do -- a point twice: some axis group has a row twice
      local seen = {}
      for j, r in ipairs(g.rows) do
        local parts = {}
        for k, v in ipairs(r) do parts[k] = tostring(v) end
        local key = table.concat(parts, ",")
        if seen[key] then
          bad(string.format("axis %s has the value %s twice (values %d and %d): every point would appear twice",
            table.concat(g.names, ","), key, seen[key], j))
        end
        seen[key] = j
      end
    end
    total = axes.count(groups)
    each = function(fn)
      for i = 1, total do
        local p = axes.at(groups, i)
        if keeps(exp, p) then fn(i, p, not opts.shard or (i - 1) % opts.shard.count == opts.shard.index - 1) end
      end
    end
  end
  local names = axes.names(groups)
  local is_cu = exp.module:match("%.cu$") ~= nil
  local with_builds = is_cu and builds.varies(exp)
  local with_kernel = type(exp.kernel) == "function"
  local arch = exp.arch or (src and src.compiled and src.compiled.arch) or "sm_90"
  local default_flags = require("mgpu.nvcc").DEFAULT_FLAGS
  -- column widths from the axes' values, not from the points
  local head, width = { "#" }, { #string.format("%.0f", total) }
  for _, g in ipairs(groups) do
    for j, n in ipairs(g.names) do
      local w = #n
      for _, r in ipairs(g.rows) do w = math.max(w, #tostring(r[j])) end
      width[#head + 1] = w; head[#head + 1] = n
    end
  end
  if with_builds then width[#head + 1] = 5; head[#head + 1] = "build" end
  if with_kernel then width[#head + 1] = 6; head[#head + 1] = "kernel" end
  local out = io.stdout
  local function line(cells)
    local parts = {}
    for i, c in ipairs(cells) do
      parts[i] = i < #cells and (c .. string.rep(" ", math.max(0, width[i] - #c))) or c
    end
    out:write(table.concat(parts, "  "), "\n")
  end
  line(head)
  local list, by_key = {}, {}
  local rows, n, kept = {}, 0, 0
  each(function(i, p, mine)
    kept = kept + 1
    local b
    if with_builds then
      local nb = builds.build_of(exp, p, arch, default_flags)
      b = by_key[nb.key]
      if not b then
        nb.index, nb.points = #list + 1, 0
        list[#list + 1], by_key[nb.key], b = nb, nb, nb
      end
    end
    if not mine then return end
    n = n + 1
    if b then b.points = b.points + 1 end
    local cells = { tostring(i) }
    for _, name in ipairs(names) do cells[#cells + 1] = tostring(p[name]) end
    if b then cells[#cells + 1] = tostring(b.index) end
    if with_kernel then cells[#cells + 1] = builds.kernel_of(exp, p) end
    line(cells)
    if keep_rows then rows[n] = { index = i, point = p, status = "listed", build = b and b.index } end
  end)
  local filtered = total - kept
  do
    print(string.format("%d points (%.0f filtered out)", n, filtered))
    if is_cu then
      if #list == 0 then
        list[1] = builds.build_of(exp, {}, arch, default_flags)
        list[1].index, list[1].points = 1, n
      end
      for _, b in ipairs(list) do
        if b.points > 0 then
          print(string.format("build %d: nvcc -ptx -arch=%s %s  (%d point%s)", b.index, b.arch,
            table.concat(b.flags, " "), b.points, b.points == 1 and "" or "s"))
        end
      end
    end
  end
  return { rows = keep_rows and rows or nil, listed = n, ok = 0, failed = 0, skipped = 0, filtered = filtered,
    builds = is_cu and #list or nil }
end

local function holds_results(dir)
  if exists(dir .. "/manifest.json") then return "manifest.json" end
  if exists(dir .. "/results.jsonl") then return "results.jsonl" end
end

-- --out DIR: created when missing, locked, and refused when it holds a run's
-- results (its lock is taken first, so a run going on there is named).
-- Returns the lock and whether the folder was created.
local function claim_out(dir)
  local created = not exists(dir)
  core.mkdir_p(dir)
  local lock = core.lock(dir .. "/.lock")
  local which = holds_results(dir)
  if which then
    lock:release()
    bad(string.format("--out %s already holds the results of a run (%s there): continue it with --resume %s, or give "
      .. "a new folder", dir, which, dir))
  end
  local foreign = results.harness_file(dir)
  if foreign then
    lock:release()
    bad(string.format("--out %s holds %s, which no run wrote there (no manifest.json): the run would overwrite it; "
      .. "give a new folder", dir, foreign))
  end
  return lock, created
end

-- The default folder, results/NAME/TIME (TIME-2, -3 ... when taken), created and locked.
local function new_dir(name)
  local base = "results/" .. name .. "/" .. os.date("!%Y%m%dT%H%M%SZ")
  local dir = base
  for n = 2, 1000 do
    if not exists(dir) then
      core.mkdir_p(dir)
      local ok, lock = pcall(core.lock, dir .. "/.lock")
      if ok and not holds_results(dir) then return dir, lock, true end
      if ok then lock:release() elseif not errors.is(lock, "busy") then error(lock, 0) end
    end
    dir = base .. "-" .. n
  end
  bad("no free results folder under " .. base)
end

-- A point run in this process: its row, status ok or failed (the error as a value).
point_row = function(ctx, i, p)
  local t = ctx.exp.timeout_s -- its Lua code too (setup, check): a count hook stops it (core.xpcall_within)
  local ok, row
  local build, kname
  local function run(c, ii, pp)
    if builds.varies(c.exp) then -- this point's build and kernel
      local pc = {}
      for k, v in pairs(c) do pc[k] = v end
      pc.kernel, pc.plain, build, kname = point_kernels(c, ii, pp)
      local r = run_point(pc, ii, pp)
      c.flush = pc.flush
      return r
    end
    return run_point(c, ii, pp)
  end
  if t then ok, row = core.xpcall_within(t, "point " .. i, run, as_error, ctx, i, p)
  else ok, row = xpcall(run, as_error, ctx, i, p) end
  if not ok then row = { status = "failed", error = row } else row.status = "ok" end
  if ctx.builds and builds.varies(ctx.exp) then row.build = build or ctx.builds.of[i] end
  if type(ctx.exp.kernel) == "function" then row.kernel = kname end
  if ctx.dev.backend == "emu" and (row.time_ns or row.gbps or row.gflops) then row.time_kind = "virtual" end
  return row
end

-- How many workers and which device each slot gets: --workers N or auto (one per visible GPU on
-- cuda, per core on emu), --devices 0,2,3 (GPUs by number; a worker per device unless N says
-- more, which share them round-robin).  Returns n, {devices = {...} (cuda)}, the backend kind.
-- asked: what the user gave that chose cuda and the workers ("--backend cuda", "--workers 2 with
-- the experiment's backend = \"cuda\""), for the message when there is no device.
worker_plan = function(workers, devices, kind, asked)
  local p = core.probe()
  local cuda = p.cuda and p.cuda.available and #p.cuda.devices > 0
  if kind == "auto" then kind = cuda and "cuda" or "emu" end
  if kind:match("^cuda") then
    if not cuda then
      error(errors.new("no_device", (asked or ("--backend " .. kind)) .. ": no CUDA device: "
        .. (p.cuda and p.cuda.detail or "no CUDA driver") .. " (--backend emu runs on the CPU)"), 0)
    end
    if not devices then
      devices = {}
      local first = tonumber(kind:match("^cuda:(%d+)$") or "")
      if first then devices[1] = first else for d = 1, #p.cuda.devices do devices[d] = d - 1 end end
    end
    for _, d in ipairs(devices) do
      if d >= #p.cuda.devices then
        bad(string.format("--devices: there is no CUDA device %d (%d device%s)", d, #p.cuda.devices,
          #p.cuda.devices == 1 and "" or "s"))
      end
    end
    local n = workers == "auto" and #devices or workers
    return n, { devices = devices }, "cuda"
  end
  return workers == "auto" and core.cpus() or workers, nil, kind
end

-- What the parent of workers records of the device, without opening it: its facts from the probe.
probe_device = function(kind, slots)
  local p = core.probe()
  if kind == "cuda" then
    local f = p.cuda.devices[(slots.devices[1] or 0) + 1]
    return { backend = "cuda", name = f.name, arch = f.arch, clock_ghz = f.clock_ghz }
  end
  local f = p.emu.devices[1]
  return { backend = "emu", name = f.name, arch = f.arch, clock_ghz = f.clock_ghz }
end

-- The points in todo on w.n worker processes (mgpu.workers), each the harness itself started on
-- the script with --worker DIR: it serves the folder's points, writing their point files, and
-- answers each with its row; this process is the only writer of results.jsonl.  A worker that
-- dies has its point tried once more on a fresh one, then recorded as worker_lost; a point past
-- timeout_s has its worker killed (timeout).  Returns true when interrupted (Ctrl-C).
run_workers = function(ctx, w, record)
  local exe = assert(core.exe_path())
  local items, by_item = {}, {}
  for n, i in ipairs(w.todo) do items[n], by_item[i] = i, true end
  local pool_opts = {
    workers = w.n, items = items, timeout_s = w.exp.timeout_s and w.exp.timeout_s + 5 or nil,
    timeout_what = w.exp.timeout_s and string.format("timeout_s = %g s (and 5 s more for the worker to stop it "
      .. "itself)", w.exp.timeout_s),
    spawn = function(slot)
      local env = { MGPU_WORKER_SLOT = tostring(slot) }
      local backend = "emu"
      if w.kind == "cuda" then
        local d = w.slots.devices[(slot - 1) % #w.slots.devices + 1]
        env.CUDA_VISIBLE_DEVICES = tostring(d) -- the worker sees its GPU as device 0
        backend = "cuda:0"
      elseif not os.getenv("MGPU_EMU_THREADS") then
        -- emu workers share the machine's cores: each runs its SMs on its share of them (at least
        -- one), not on all of them (N processes x all cores oversubscribed the machine)
        env.MGPU_EMU_THREADS = tostring(math.max(1, math.floor(core.cpus() / w.n)))
      end
      return core.spawn { argv = { exe, w.script, "--worker", w.dir, "--backend", backend }, env = env }
    end,
    on_result = function(i, msg)
      local row = msg.row
      if type(row) ~= "table" then row = { status = "failed", error = errors.new("worker_lost", "the worker's answer held no row") } end
      record(i, row)
    end,
    on_failed = function(i, err)
      record(i, { status = "failed", error = { code = err.code, message = err.message, signal = err.signal,
        exit_status = err.status } })
    end,
    on_noise = function(_, line) io.stderr:write("mgpu-harness: worker: ", line, "\n") end,
  }
  local ok, r = pcall(require("mgpu.workers").run, pool_opts)
  if not ok then
    if errors.is(r, "interrupted") then return true end
    error(r, 0)
  end
  return false
end

-- The run itself, its folder locked.  opts.manifest / opts.manifest_dir:
-- the manifest a replay repeats (resume reads its own).  state.wrote: set
-- once the manifest is written (a failure before leaves no folder behind).
local function run_locked(exp, opts, dir, script, state)
  local script_dir = dirname(script)
  local old = nil                                           -- the manifest resumed
  local src, src_dir = opts.manifest, opts.manifest_dir     -- the manifest whose points run
  local what = opts.resume and ("--resume " .. dir) or "replay"
  local changed = {}
  if opts.resume then
    old = manifest.read(dir)
    src, src_dir = old, dir
    if old.experiment ~= exp.name then
      bad(what .. ": it holds experiment " .. old.experiment .. ", not " .. exp.name)
    end
    if not old.point_keys then
      bad(what .. ": its manifest has no point_keys (an older mgpu-harness wrote it, naming point files otherwise): "
        .. "start a new folder")
    end
    if next(opts.set or {}) ~= nil and not axes.same_set(old.set, opts.set) then
      bad(string.format("%s: the run was made with --set %s, not --set %s: resume runs the manifest's points; leave "
        .. "--set out, or start a new folder", what, fmt_set(old.set), fmt_set(opts.set)))
    end
    changed = manifest.check_sources(old, dir, opts.force, what)
  elseif src then
    changed = manifest.changes(src, src_dir) -- replay refused them, or was forced
  end
  local pl = plan(exp, opts.set, src, src_dir and (src_dir .. "/manifest.json"), opts.shard)

  -- the device: opened here for a run in this process; with workers, each opens its own and
  -- this process only asks what there is (it holds no GPU context a fault could take down)
  local kind = opts.backend or (old and old.backend) or exp.backend or "auto"
  local nworkers, slots
  -- on cuda, a run from a script file uses one worker by default: a fault cuda.h says needs a
  -- relaunch loses the device for the process, and a worker is the process that goes
  local workers = opts.workers or (old and old.workers)
  -- what chose the backend and the workers, as the user gave them (for worker_plan's messages)
  local asked = opts.backend and ("--backend " .. opts.backend)
    or (old and old.backend and string.format("%s: the run's backend %s", what, old.backend))
    or (exp.backend and string.format("the experiment's backend = %q", exp.backend)) or "--backend auto"
  if opts.workers then asked = string.format("--workers %s with %s", tostring(opts.workers), asked) end
  if workers == nil and opts.script_file and kind:match("^cuda") then workers = 1 end
  -- with timeout_s, a run from a script file runs its points in a worker too: Lua code that catches
  -- every error (a setup looping inside pcall) outlives an in-process limit, a killed worker does not
  -- (issue 36); --workers 0 keeps them in this process
  if workers == nil and opts.script_file and exp.timeout_s then workers = 1 end
  if workers == nil and opts.script_file and kind == "auto" then
    local p = core.probe()
    if p.cuda and p.cuda.available and #p.cuda.devices > 0 then workers = 1 end
  end
  if workers and workers ~= 0 then
    nworkers, slots, kind = worker_plan(workers, opts.devices or (old and old.devices), kind, asked)
  end
  local dev = nworkers and probe_device(kind, slots) or mgpu.device(kind, emu_opts(exp, kind))
  -- the emu model the points' virtual times come from (with workers: a device opened here only to
  -- read it, and to refuse a bad parameter before any worker starts)
  local emu_model = dev.backend == "emu" and (dev.model or mgpu.device("emu", emu_opts(exp)).model) or nil
  -- (a run from before manifests recorded emu_model ran the default model: experiments could not set one)
  local old_model = old and (old.emu_model or (old.backend == "emu" and mgpu.device("emu").model or nil))
  if old_model and emu_model and not same_model(old_model, emu_model) then
    bad(string.format("%s: the run's emu model (%s, manifest.json's emu_model) is not this one (%s, experiment.emu): its "
      .. "rows would mix models; resume with the run's, or start a new folder", what, tostring(old_model.name),
      emu_model.name))
  end
  if exp.stats and dev.backend ~= "emu" then
    bad("experiment.stats: exact counters are emu's (on " .. dev.backend .. ", Nsight Compute counts: "
      .. "scripts/device/ncu_stats.lua); run with --backend emu, or leave stats out")
  end
  if old and old.backend and (dev.backend ~= old.backend or (old.device and dev.name ~= old.device)) then
    bad(string.format("%s: the run was on %s (%s), this is %s (%s): its rows would mix devices; resume on the same "
      .. "device, or start a new folder", what, old.backend, tostring(old.device), dev.backend, dev.name))
  end
  -- the module the run loaded, when the script is the one it ran (the run may have found it
  -- relative to its own working directory); a changed script, forced, says which
  local module_path = files.absolute(resolve(script_dir, exp.module))
  if src and src.ptx and src.ptx[1] and exists(script) and src.script.sha256 == core.sha256_file(script) then
    module_path = manifest.path(src_dir, src.ptx[1].path)
  end
  local load_path, compiled, headers = module_path, nil, nil
  local is_cu = module_path:match("%.cu$") ~= nil
  if not is_cu and (exp.defines ~= nil or type(exp.nvcc_flags) == "function") then
    bad(string.format("experiment.%s: the module %s is PTX; defines and nvcc_flags are for a .cu module nvcc compiles",
      exp.defines ~= nil and "defines" or "nvcc_flags", module_path))
  end
  local bp -- the builds (a .cu module): each distinct one compiled once, its PTX kept in DIR/builds
  if is_cu then -- CUDA C: nvcc makes the PTX first (mgpu.nvcc)
    local nvcc = require "mgpu.nvcc"
    local arch = exp.arch or dev.arch
    bp = builds.plan(exp, pl.all, pl.sweep, arch, nvcc.DEFAULT_FLAGS, src and src.builds)
    local need = {}
    for _, i in ipairs(pl.selected) do need[bp.of[i]] = true end
    -- one build for the whole sweep: its compile error is the run's, as before; with compile-time
    -- axes a failing build fails only its points
    local single = #bp.list == 1
    for _, b in ipairs(bp.list) do
      if need[b.index] or (single and b.index == 1) then builds.compile(module_path, b, src_dir, single) end
    end
    local first = bp.list[bp.of[pl.selected[1]] or 1]
    if single and first and first.text then
      load_path = first.cache_path or manifest.path(src_dir, first.prior.ptx)
      compiled = { ptx = string.format("builds/build-%d.ptx", first.index), sha256 = first.sha256, arch = arch,
        nvcc_flags = first.flags, nvcc = first.nvcc }
    end
    for _, b in ipairs(bp.list) do
      if b.deps and not headers then
        headers = {}
        for _, d in ipairs(b.deps) do
          local ok, e = pcall(manifest.entry, d)
          if ok then headers[#headers + 1] = e end
        end
      end
      if b.prior and b.prior.sha256 and b.sha256 and b.prior.sha256 ~= b.sha256 then
        local msg = string.format("the PTX nvcc makes of %s (build %d) now differs from the run's (sha256 %s..., now "
          .. "%s...: another nvcc, arch, flag or header)", module_path, b.index, b.prior.sha256:sub(1, 12),
          b.sha256:sub(1, 12))
        if not opts.force then bad(what .. ": " .. msg .. ": it would not repeat the run; use --force to go on anyway") end
        changed[#changed + 1] = msg
      end
    end
    if src and not src.builds and src.compiled and compiled and src.compiled.sha256 ~= compiled.sha256 then
      local msg = string.format("the PTX nvcc makes of %s now differs from the run's (sha256 %s..., now %s...: "
        .. "another nvcc, arch, flag or header)", module_path, src.compiled.sha256:sub(1, 12), compiled.sha256:sub(1, 12))
      if not opts.force then bad(what .. ": " .. msg .. ": it would not repeat the run; use --force to go on anyway") end
      changed[#changed + 1] = msg
    end
  end
  local kernel, plain
  if not nworkers and not builds.varies(exp) then
    kernel, plain = load_kernels(dev, load_path, exp, exp.kernel)
  end

  -- what a resumed folder holds: its ok points are done; a torn last line
  -- (a crash mid-write) is set aside and its point runs again
  local done, torn_note = {}, nil
  if opts.resume then
    local rows, lines, torn = results.read_jsonl(dir .. "/results.jsonl")
    if torn then
      local moved = results.set_aside(dir, torn)
      io.stderr:write(string.format("mgpu-harness: %s; set aside in %s: its point runs again\n",
        results.torn_text(dir .. "/results.jsonl", torn), moved))
      torn_note = { line = torn.line, bytes = #torn.text, reason = torn.reason, moved_to = "results.jsonl.torn" }
    end
    results.check_rows(dir .. "/results.jsonl", rows, lines, old) -- the readers' one check (issue 25)
    for _, r in ipairs(rows) do
      if r.status == "ok" and type(r.key) == "string" then done[r.key] = true end
    end
  end

  local entry = manifest.command(opts.command or ("mgpu.run(" .. script .. ")"),
    opts.resume and "resume" or (opts.manifest and "replay" or "run"),
    { forced = #changed > 0 and changed or nil, torn = torn_note })
  if old then
    if bp then -- builds the run did not have (or that failed then) are added
      old.builds = {}
      for i, b in ipairs(bp.list) do old.builds[i] = builds.record(b) end
    end
    manifest.add_command(dir, old, entry)
  else
    local man = {
      harness = mgpu.VERSION,
      experiment = exp.name,
      created = os.date("!%Y-%m-%dT%H:%M:%SZ"),
      command = opts.command,
      commands = { entry },                                 -- every command that wrote into the folder
      replay_of = opts.manifest_dir and files.absolute(opts.manifest_dir) or nil,
      script = { path = script, sha256 = exists(script) and core.sha256_file(script) or nil },
      ptx = { manifest.entry(module_path) }, -- the .cu for CUDA C (replay and --resume check these)
      headers = headers,                     -- the headers the .cu included
      compiled = compiled,                   -- and the PTX nvcc made of it (one build: builds/build-1.ptx)
      builds = bp and (function()            -- each build: arch, flags, nvcc's version, its PTX (builds/) and hash
        local t = {}
        for i, b in ipairs(bp.list) do t[i] = builds.record(b) end
        return t
      end)(),
      kernel = type(exp.kernel) == "string" and exp.kernel or "per point (a function: each row's kernel)",
      instrument = exp.instrument,
      axes = (function()
        local t = {}
        for _, g in ipairs(pl.groups) do t[#t + 1] = { kind = g.kind, names = g.names, rows = g.rows } end
        return t
      end)(),
      set = src and src.set or opts.set,
      point_keys = pl.keys,                  -- the full, unfiltered list: point-N is point_keys[N]
      selected = pl.selected,                -- the points the run runs
      points = #pl.selected,
      seed = exp.seed,
      shard = opts.shard,                    -- {index=, count=}: this folder holds shard index of count
      sweep_selected = opts.shard and pl.kept or nil, -- a shard's: the points the filter kept of the whole sweep
      workers = nworkers,                    -- worker processes, and the device each slot used
      devices = slots and slots.devices or nil,
      warmup = exp.warmup or 1,
      repeats = exp.repeats or 3,
      backend = dev.backend,
      device = dev.name,
      clock_ghz = dev.clock_ghz,
      emu_model = emu_model,                 -- emu: its device model, every parameter as the run used it
      min_time = exp.min_time, max_noise = exp.max_noise, max_repeats = exp.max_repeats,
      timing = exp.flush_l2 and "cold" or "hot",  -- cold: L2 flushed before each measured launch
      time_note = dev.backend == "emu" and ("emu times are virtual (deterministic cycles at the stated clock), not GPU "
        .. "timings; GB/s and GFLOP/s over them are virtual too; emu's caches start empty at each launch, so cold (flush_l2) equals hot")
        or nil,
    }
    core.write_file(dir .. "/manifest.json", core.json_encode(man, true) .. "\n")
  end
  state.wrote = true
  if bp then builds.write(dir, bp.list) end

  local ctx = { exp = exp, dev = dev, kernel = kernel, plain = plain, dir = dir, quiet = opts.quiet, tty = core.isatty(2),
    t0 = core.now(), builds = bp, load_path = load_path }
  local todo, nskipped = {}, 0
  for _, i in ipairs(pl.selected) do
    if done[pl.keys[i]] then nskipped = nskipped + 1 else todo[#todo + 1] = i end
  end
  local nok, nfailed, interrupted = 0, 0, false
  local function record(i, row)
    if row.status == "ok" then nok = nok + 1 else nfailed = nfailed + 1 end
    row.index, row.key, row.point = i, pl.keys[i], pl.all[i] -- index: the point's place in point_keys
    results.append(dir, row)
    progress(ctx, nskipped + nok + nfailed, nfailed, #pl.selected)
  end
  if nworkers then
    interrupted = run_workers(ctx, { script = script, dir = dir, kind = kind, slots = slots, n = nworkers,
      todo = todo, exp = exp }, record)
  else
    for _, i in ipairs(todo) do
      local row = point_row(ctx, i, pl.all[i])
      if row.status == "failed" and row.error.code == "interrupted" then
        interrupted = true
        break
      end
      record(i, row)
    end
  end
  -- results.csv from the whole results.jsonl: the latest row of each point, none twice, none missing
  local rows = results.rows(dir)
  results.write_csv(dir, pl.names, rows)
  local summary = string.format("%s: %d ok, %d failed, %d already done, %d filtered out -> %s", exp.name, nok, nfailed,
    nskipped, pl.filtered, dir)
  if not opts.quiet then
    if ctx.tty then io.stderr:write("\n") end
    print(results.table(pl.names, rows, dev.backend == "emu" and "emu time" or "time"))
    print(summary)
  elseif nfailed > 0 then -- -q hides the table, never the failures: each one line, and the counts
    for _, r in ipairs(rows) do
      if r.status ~= "ok" and r.error then
        io.stderr:write(string.format("mgpu-harness: point %d %s failed: %s: %s\n", r.index, tostring(r.key),
          tostring(r.error.code), (tostring(r.error.message):match("[^\n]*"))))
      end
    end
    io.stderr:write(summary, "\n")
  end
  if interrupted then
    io.stderr:write(string.format("mgpu-harness: interrupted; the results folder is consistent: continue with\n"
      .. "  mgpu-harness %s --resume %s\n", script, dir))
  end
  return { dir = dir, rows = rows, ok = nok, failed = nfailed, skipped = nskipped, filtered = pl.filtered,
    interrupted = interrupted }
end

-- Runs exp with opts; returns {dir=, rows=, ok=, failed=, skipped=, filtered=}.
-- opts: set, list, out, resume, force, backend, quiet, script, command (what
-- the manifest records); replay adds manifest and manifest_dir.
function M.run(exp, opts)
  opts = opts or {}
  validate(exp)
  for _, k in ipairs({ "out", "resume" }) do -- a folder: "" would put the results in the root folder
    if opts[k] ~= nil and (type(opts[k]) ~= "string" or opts[k] == "") then
      bad(string.format("%s must be a folder's path (a non-empty string), got %s", k,
        type(opts[k]) == "string" and "the empty string" or type(opts[k])))
    end
  end
  if opts.resume and opts.out then
    bad("--resume " .. opts.resume .. " continues the run in that folder: it takes no --out (got --out " .. opts.out .. ")")
  end
  if opts.backend ~= nil then check_backend(opts.backend, "backend") end
  if opts.shard ~= nil then
    check_shard(opts.shard, "shard takes {index = I, count = N}", type(opts.shard) == "table"
      and string.format("{index = %s, count = %s}", tostring(opts.shard.index), tostring(opts.shard.count))
      or tostring(opts.shard))
    if opts.resume then bad("resume runs the points of the folder's own shard: it takes no shard") end
  end
  local script = files.absolute(opts.script or "experiment.lua")
  if opts.resume and not exists(opts.resume .. "/manifest.json") then
    bad("--resume " .. opts.resume .. ": no manifest.json there (not a results folder)")
  end
  if opts.list then return list_points(exp, opts, script) end
  local dir, lock, created
  if opts.resume then
    dir = opts.resume
    lock = core.lock(dir .. "/.lock") -- busy: another run is using the folder, named by its pid
  elseif opts.out then
    dir = opts.out
    lock, created = claim_out(dir)
  else
    dir, lock, created = new_dir(exp.name)
  end
  local state = {}
  local ok, r = pcall(run_locked, exp, opts, dir, script, state)
  if not ok and created and not state.wrote then -- refused before anything was written: no folder left behind
    os.remove(dir .. "/.lock")
    os.remove(dir)
  end
  lock:release()
  if not ok then error(r, 0) end
  return r
end

-- A worker (`mgpu-harness SCRIPT --worker DIR`, started by run_workers): runs the points of the
-- folder DIR (its manifest, written by the parent, says which module and points) that stdin names,
-- one {"item": I} line each, and answers each on stdout with {"item": I, "ok":, "row":}; it writes
-- the point's files itself (point-I.*), never results.jsonl.  Ends at the end of stdin.
function M.worker(exp, opts)
  validate(exp)
  local dir = opts.worker
  local man = manifest.read(dir)
  local pl = plan(exp, nil, man, dir .. "/manifest.json")
  local dev = mgpu.device(opts.backend or man.backend, emu_opts(exp, opts.backend or man.backend))
  local load_path = manifest.path(dir, man.ptx[1].path)
  local bp
  if load_path:match("%.cu$") then -- the builds the parent compiled: their PTX is in DIR/builds
    local c = man.compiled or {}
    bp = builds.plan(exp, pl.all, pl.sweep, c.arch or (man.builds and man.builds[1] and man.builds[1].arch) or dev.arch,
      require("mgpu.nvcc").DEFAULT_FLAGS, man.builds)
    for _, b in ipairs(bp.list) do
      if b.prior and b.prior.error then b.error = b.prior.error end
    end
    load_path = dir .. "/builds/build-1.ptx"
  end
  local kernel, plain
  if not builds.varies(exp) then kernel, plain = load_kernels(dev, load_path, exp, exp.kernel) end
  local ctx = { exp = exp, dev = dev, kernel = kernel, plain = plain, dir = dir, quiet = true, tty = false, t0 = core.now(),
    builds = bp, load_path = load_path }
  for line in io.lines() do
    local msg = core.json_decode(line, "worker input")
    local i = msg.item
    if type(i) ~= "number" or not pl.all[i] then bad("worker: no point " .. tostring(i) .. " in " .. dir) end
    local row = point_row(ctx, i, pl.all[i])
    if row.status == "failed" and row.error.code == "interrupted" then return 130 end
    -- on cuda, a kernel_fault or no_device may have lost the device for this process: say this
    -- is the last answer and end, so the next point gets a fresh worker
    local last = dev.backend == "cuda" and row.status == "failed" and
      (row.error.code == "kernel_fault" or row.error.code == "no_device")
    io.stdout:write(core.json_encode({ item = i, ok = row.status == "ok", row = row, last = last or nil }), "\n")
    io.stdout:flush()
    if last then return 0 end
  end
  return 0
end

-- `mgpu-harness replay` lives in mgpu.replay; core/main.c's builtin still
-- calls this name, so it forwards (core/main.c can call mgpu.replay's main).
M.replay_main = function(...) return require("mgpu.replay").main(...) end

-- Entry point of `mgpu-harness experiment.lua [options]`: returns the exit
-- status.  exp is what the script returned: anything but a table (a number,
-- true, a string) is refused, as is a table that is not an experiment
-- (validate: a misspelled key, no setup), with exit status 2; a plain script
-- returns nothing and never comes here.
function M.main(exp, argv)
  local script = argv and argv[0] or "the script"
  if type(exp) ~= "table" then
    bad(string.format("%s returned %s, not an experiment: an experiment file returns a table {name=, module=, "
      .. "kernel=, setup=, ...}; a plain script returns nothing", script,
      exp == nil and "nil" or ("a " .. type(exp) .. " (" .. tostring(exp) .. ")")))
  end
  local opts = M.parse_args(argv or {})
  opts.script = argv and argv[0] or opts.script
  opts.script_file = argv ~= nil and argv[0] ~= nil -- run from a file: workers can start it again
  if opts.worker then return M.worker(exp, opts) end
  local cmd = { "mgpu-harness", opts.script }
  for _, a in ipairs(argv or {}) do cmd[#cmd + 1] = a end
  opts.command = table.concat(cmd, " ")
  local r = M.run(exp, opts)
  if r.interrupted then return 130 end
  return r.failed > 0 and 7 or 0
end

return M
