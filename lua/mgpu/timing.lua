-- mgpu.timing: timed launches of one kernel: warm-up launches, then repeated
-- measured ones (CUDA events on a GPU, virtual cycles on emu), optionally
-- with the L2 cache flushed before each, and their statistics.  The
-- experiment runner and scripts (mgpu.time) share it.
local errors = require "mgpu.errors"
local options = require "mgpu.options"

local M = {}

-- min, max, median, mean, stddev (sample) and n of a list of numbers; nil for none
function M.stats(xs)
  if #xs == 0 then return nil end
  local s = {}
  for i, x in ipairs(xs) do s[i] = x end
  table.sort(s)
  local sum, sq = 0, 0
  for _, x in ipairs(s) do sum = sum + x end
  local mean = sum / #s
  for _, x in ipairs(s) do sq = sq + (x - mean) ^ 2 end
  return { min = s[1], max = s[#s], median = s[math.floor((#s + 1) / 2)], mean = mean, n = #s,
    stddev = #s > 1 and math.sqrt(sq / (#s - 1)) or 0 }
end

-- The bytes of device memory written before each measured launch to push the
-- kernel's data out of L2 (H200: 50 MB of L2); a number chooses another size.
M.FLUSH_BYTES = 134217728

-- the keys of M.time's options
local TIME_OPTIONS = { "warmup", "repeats", "flush_l2", "flush", "before" }

local function count(v, what, min)
  if v == nil then return nil end
  if type(v) ~= "number" or v ~= math.floor(v) or v < min then
    error(errors.new("bad_argument", string.format("%s must be an integer >= %d, got %s", what, min, tostring(v))), 0)
  end
  return v
end

-- Launches `kernel` with `launch` (kernel:launch's table) opts.warmup times
-- (default 1), then opts.repeats times (default 3) measured; opts.flush_l2
-- (true or bytes) zeroes that much device memory before each measured launch
-- (opts.flush: an array to reuse for it); opts.before(): called before every
-- launch.  Returns the statistics of time_ns and the last measured run.
-- Another key in opts is a bad_argument naming it.
function M.time(kernel, launch, opts)
  opts = opts or {}
  if type(opts) ~= "table" then error(errors.new("bad_argument", "time: the options must be a table"), 0) end
  options.check_keys(opts, "time", TIME_OPTIONS)
  if type(launch) ~= "table" then error(errors.new("bad_argument", "time: the launch must be a table"), 0) end
  if launch.time == false then error(errors.new("bad_argument", "time: the launch has time = false"), 0) end
  local warmup = count(opts.warmup, "warmup", 0) or 1
  local repeats = count(opts.repeats, "repeats", 1) or 3
  local flush = opts.flush
  if opts.flush_l2 and not flush then
    local bytes = opts.flush_l2 == true and M.FLUSH_BYTES or count(opts.flush_l2, "flush_l2", 1)
    flush = kernel:device():array("u8", bytes)
  end
  -- once a launch of an instrumented kernel had to retry with the entries it needed, the next
  -- launches get those entries at once (the retry happens after the first launch that did not
  -- fit, not after every one); run.attempts is that first launch's (the point's story)
  local prof = launch.profile
  if type(prof) == "table" then
    local copy, p = {}, {}
    for k, v in pairs(launch) do copy[k] = v end
    for k, v in pairs(prof) do p[k] = v end
    copy.profile, launch, prof = p, copy, p
  end
  local first_attempts
  local function go(measured)
    if opts.before then opts.before() end
    if measured and flush then flush:zero() end
    local r = kernel:launch(launch)
    if r.attempts and not first_attempts then first_attempts = r.attempts end
    if r.entries and type(prof) == "table" and prof.entries ~= nil then prof.entries = r.entries end
    return r
  end
  for _ = 1, warmup do go(false) end
  local times, run = {}, nil
  for _ = 1, repeats do
    run = go(true)
    times[#times + 1] = run.time_ns
  end
  if run.attempts and first_attempts then run.attempts = first_attempts end
  return M.stats(times), run, flush
end

return M
