-- mgpu: the Lua face of mgpu-harness.  `require "mgpu"` works inside the
-- mgpu-harness executable (this file is embedded) and from a stock lua5.4 or
-- busted through the `mgpu.core` C module.  Errors are tables with a `code`
-- (see mgpu.errors); tostring(err) gives the message.
local core = require "mgpu.core"

local M = {}

M.VERSION = core.VERSION
M.errors = require "mgpu.errors"

-- Axes of an experiment (see mgpu.axes): mgpu.axis(name, values), mgpu.zip{...}
local axes = require "mgpu.axes"
M.axis = axes.axis
M.zip = axes.zip

-- Runs an experiment table (what an experiment script returns) from Lua:
-- mgpu.run(exp, {set=, out=, resume=, backend=, quiet=, list=}).
-- The options mgpu.run takes (the command line's, as values); another key is a bad_argument.
local RUN_OPTIONS = { "set", "out", "resume", "force", "backend", "quiet", "list", "workers", "devices", "shard",
  "script", "command" }

function M.run(exp, opts)
  if opts ~= nil and type(opts) ~= "table" then
    error(M.errors.new("bad_argument", "mgpu.run(exp, opts): opts must be a table {set=, out=, ...}, got "
      .. type(opts)), 2)
  end
  if opts then require("mgpu.options").check_keys(opts, "mgpu.run's options", RUN_OPTIONS) end
  return require("mgpu.experiment").run(exp, opts)
end

-- A CUDA program run on emu (docs/cudart.md): mgpu.exec{prog=, args={...}, capture=, trace=, probes=, stats=,
-- sms=} -> {status=, launches={{kernel=, grid=, block=, smem=, cycles=, warp_insns=, thread_insns=,
-- error=}, ...}}; the program is one built by `mgpu-harness nvcc` (or nvcc -cudart shared)
function M.exec(opts)
  return core.exec(opts)
end

-- Placeholder in a launch's args for the trace buffer the harness allocates
-- (kernels that write their own trace, Mosaic style); see kernel:launch.
M.TRACE = core.TRACE

-- A null pointer, wherever an array is taken: a launch's args (the parameter gets address 0) and
-- mgpu.struct's ptr fields.  Every array's address is a multiple of 256 (as cuMemAlloc's).
M.null = core.null

-- A device: mgpu.device() or mgpu.device("auto") picks the first CUDA device
-- when a driver and a device are present, else emu (the CPU executor of PTX);
-- "emu", "cuda", "cuda:N" choose; {driver = path} loads another libcuda.
--   dev:load(path | {source=, name=}) -> module;  module:kernel(name) -> kernel
--   dev:array(dtype, n | {values}, {fill="zeros"|"ramp"|"random", seed=, min=, max=, start=, step=})
--   kernel:launch{grid=, block=, smem=, args={...}, profile={scope=, entries=, names={...}}}
--     -> {cycles=, time_ns=, warp_insns=, thread_insns=, backend=, trace=}
--   array:read([i]), array:compare(other, {atol=, rtol=}), #array
--   trace:dump(path, {compat="mosaic"}) -> {events=, summary={...}}
function M.device(kind, opts)
  return core.device(kind, opts)
end

-- Timed launches: mgpu.time(kernel, launch, {warmup=1, repeats=3, flush_l2=true|bytes, before=fn})
-- -> {min=, median=, mean=, stddev=, max=, n=} of time_ns, and the last measured run; another
-- key in the options is a bad_argument naming it
function M.time(kernel, launch, opts)
  local stats, run = require("mgpu.timing").time(kernel, launch, opts)
  return stats, run
end

-- The bytes of a struct passed by value (a kernel's `.param .align A .b8 p[N]`), C layout:
-- mgpu.struct{ {"f32", 0.5}, {"i32", 3}, {"f32", {1, 2, 4}}, {"ptr", array} } -> string
-- (a ptr field takes an array or 0: an integer address would be a pointer no launch can check)
function M.struct(fields)
  return core.struct(fields)
end

-- The output folder of a plain (non-experiment) script: its first argument, else
-- `default`; created when missing.  An option there ("--backend ...") is a
-- bad_argument naming the script's usage: plain scripts take only the folder.
function M.script_dir(default)
  if default ~= nil and type(default) ~= "string" then
    error(M.errors.new("bad_argument", "mgpu.script_dir(default): default must be a folder's path, got "
      .. type(default)), 2)
  end
  local dir = type(arg) == "table" and type(arg[1]) == "string" and arg[1] or default
  if dir == nil then
    error(M.errors.new("bad_argument", "mgpu.script_dir: no output folder: outside a script run by mgpu-harness "
      .. "(no arg[1]) it needs a default, mgpu.script_dir(\"out\")"), 2)
  end
  if dir == "" then -- an unset shell variable: DIR .. "/file" would write into the root folder
    error(M.errors.new("bad_argument", string.format("the output folder is the empty string (an unset shell "
      .. "variable?): mgpu-harness %s [OUT_DIR]", type(arg) == "table" and arg[0] or "script.lua")), 2)
  end
  if dir:sub(1, 1) == "-" then
    error(M.errors.new("bad_argument", string.format("%s takes only an output folder (got %s): mgpu-harness %s [OUT_DIR]",
      arg[0] or "this script", dir, arg[0] or "script.lua")), 0)
  end
  core.mkdir_p(dir)
  return dir
end

-- Sizes of a trace buffer: M.spec{grid=, block=, scope=, entries=}
-- -> {num_traces=, traces_per_block=, num_blocks=, words=, bytes=, scope=}
function M.spec(t)
  return core.spec(t)
end

-- Entries per warpgroup (per trace) needed for `events` events:
-- 3 header words + 2 words per event.
-- The most events a trace can hold: entries are counted in uint32 words, (2^32 - 1 - 3) / 2.
M.MAX_EVENTS = 2147483646

function M.entries_for(events)
  if type(events) ~= "number" or events ~= math.floor(events) or events < 0 or events > M.MAX_EVENTS then
    error(M.errors.new("bad_argument", string.format("entries_for: events must be an integer from 0 to %d (a "
      .. "trace's words are counted in 32 bits), got %s", M.MAX_EVENTS, tostring(events))), 2)
  end
  return 3 + 2 * events
end

-- Dumps a trace buffer file to a Chrome trace JSON file.
-- opts: buffer, meta, out (paths), compat ("mosaic"), clock_ghz, summary (bool)
-- returns {traces=, events=, traces_with_events=, truncated_traces=, bytes=,
--          unit=, clock_ghz=, summary={...}, warnings={...}}
function M.dump(opts)
  if type(opts) ~= "table" then
    error(M.errors.new("bad_argument", "dump expects a table of options, got " .. type(opts)))
  end
  return core.dump(opts)
end

return M
