-- mgpu.timing: timed launches of one kernel: warm-up launches, then repeated
-- measured ones (CUDA events on a GPU, virtual cycles on emu), optionally
-- with the L2 cache flushed before each (cold; back to back: hot), and their
-- statistics.  A fixed count (repeats), or measurement that stops when it is
-- sure (nvbench's habit): at least `repeats` launches, then more until the
-- measured time reaches min_time seconds and the noise (relative standard
-- deviation, in percent) is at most max_noise, up to max_repeats.  The
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
  -- equal times have none (their mean, rounded, may differ from them in the last bit)
  local stddev = #s > 1 and s[1] ~= s[#s] and math.sqrt(sq / (#s - 1)) or 0
  return { min = s[1], max = s[#s], median = s[math.floor((#s + 1) / 2)], mean = mean, n = #s,
    stddev = stddev, noise = mean > 0 and 100 * stddev / mean or 0 }
end

-- The bytes of device memory written before each measured launch to push the
-- kernel's data out of L2 (H200: 50 MB of L2); a number chooses another size.
M.FLUSH_BYTES = 134217728

-- the keys of M.time's options
local TIME_OPTIONS = { "warmup", "repeats", "flush_l2", "flush", "before", "min_time", "max_noise", "max_repeats" }

-- The default cap on measured launches when min_time or max_noise is given.
M.DEFAULT_MAX_REPEATS = 1000

-- The most warm-up or measured launches one call makes: more is a typo (or math.huge).
M.MAX_LAUNCHES = 1000000

-- v: nil, or an integer from min to max (default 2^53); else a bad_argument
-- naming the field ("repeats must be an integer >= 1 and <= 1000000, got 0").
function M.count(v, what, min, max)
  if v == nil then return nil end
  if type(v) ~= "number" or v ~= math.floor(v) or v < min or v > (max or 2 ^ 53) then
    error(errors.new("bad_argument", string.format("%s must be an integer >= %d%s, got %s", what, min,
      max and string.format(" and <= %.0f", max) or "", type(v) == "string" and string.format("%q", v) or tostring(v)),
      { key = what }), 0)
  end
  return v
end
local count = M.count

local function bad(msg) error(errors.new("bad_argument", "time: " .. msg), 0) end

-- min_time (seconds > 0), max_noise (percent > 0) and max_repeats (>= repeats) of t, checked;
-- prefix names the table ("experiment.").
function M.check_adaptive(t, prefix)
  local function num(k, what)
    local v = t[k]
    if v ~= nil and (type(v) ~= "number" or not (v > 0) or v == math.huge) then
      error(errors.new("bad_argument", string.format("%s%s must be %s, got %s", prefix, k, what,
        type(v) == "string" and string.format("%q", v) or tostring(v)), { key = k }), 0)
    end
  end
  num("min_time", "a number of seconds above 0 (measure until the launches took that long)")
  num("max_noise", "a percentage above 0 (stop once the relative standard deviation is at most that)")
  M.count(t.max_repeats, prefix .. "max_repeats", 1, M.MAX_LAUNCHES)
  if t.max_repeats and t.max_repeats < (t.repeats or 1) then
    error(errors.new("bad_argument", string.format("%smax_repeats (%d) must be at least repeats (%d): repeats is the "
      .. "fewest measured launches, max_repeats the most", prefix, t.max_repeats, t.repeats)), 0)
  end
end

-- Whether t asks for measurement that stops when it is sure.
function M.adaptive(t) return t.min_time ~= nil or t.max_noise ~= nil or t.max_repeats ~= nil end

-- Whether v is an object with method `name` (a kernel, an array).
local function has_method(v, name)
  if type(v) ~= "userdata" and type(v) ~= "table" then return false end
  local ok, m = pcall(function() return v[name] end)
  return ok and type(m) == "function"
end

-- f wrapped so that an error that is not an mgpu error value becomes a
-- script_error (with its traceback): every error time raises has a code.
local function user_function(f, what)
  return function()
    local ok, err = xpcall(f, function(e)
      if type(e) == "table" and type(e.code) == "string" then return e end
      return errors.new("script_error", debug.traceback(what .. ": " .. tostring(e), 2))
    end)
    if not ok then error(err, 0) end
  end
end

-- The options checked before the first launch (a wrong one is a bad_argument
-- naming it); a copy, with before wrapped by user_function.
local function checked_options(kernel, launch, opts)
  if not has_method(kernel, "launch") then
    bad("the first argument must be a kernel (module:kernel(name)), got " .. type(kernel))
  end
  if type(opts) ~= "table" then bad("the options must be a table, got " .. type(opts)) end
  options.check_keys(opts, "time", TIME_OPTIONS)
  if type(launch) ~= "table" then bad("the launch must be a table, got " .. type(launch)) end
  count(opts.warmup, "warmup", 0, M.MAX_LAUNCHES)
  count(opts.repeats, "repeats", 1, M.MAX_LAUNCHES)
  M.check_adaptive(opts, "time: ")
  if opts.flush_l2 ~= nil and type(opts.flush_l2) ~= "boolean" then count(opts.flush_l2, "flush_l2", 1) end
  if opts.flush ~= nil and not has_method(opts.flush, "zero") then
    bad("flush must be a device array (the third value time returned), got " .. type(opts.flush))
  end
  if opts.before ~= nil and type(opts.before) ~= "function" then
    bad("before must be a function (called before each launch), got " .. type(opts.before))
  end
  local copy = {}
  for k, v in pairs(opts) do copy[k] = v end
  if copy.before then copy.before = user_function(copy.before, "before") end
  return copy
end

-- Launches `kernel` with `launch` (kernel:launch's table) opts.warmup times
-- (default 1), then opts.repeats times (default 3) measured; opts.flush_l2
-- (true or bytes) zeroes that much device memory before each measured launch
-- (opts.flush: an array to reuse for it); opts.before(): called before every
-- launch; opts.min_time, max_noise, max_repeats: measure until sure (see the
-- top).  Returns the statistics of time_ns (with n, noise in percent, stop:
-- "repeats", "min_time", "max_noise" or "max_repeats", the rule that ended it,
-- and mode: "hot" or "cold") and the last measured run.
-- Another key in opts is a bad_argument naming it.
function M.time(kernel, launch, opts)
  opts = checked_options(kernel, launch, opts or {})
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
  local adaptive = M.adaptive(opts)
  local stop = "repeats"
  if not adaptive then
    for _ = 1, repeats do
      run = go(true)
      times[#times + 1] = run.time_ns
    end
  else
    -- at least `repeats` (at least 2 for a noise), then until min_time and max_noise hold
    local fewest = opts.max_noise and math.max(repeats, 2) or repeats
    local most = math.max(opts.max_repeats or M.DEFAULT_MAX_REPEATS, fewest)
    if opts.max_repeats then fewest = math.min(fewest, opts.max_repeats) end
    local total, need = 0, (opts.min_time or 0) * 1e9
    while true do
      run = go(true)
      times[#times + 1] = run.time_ns
      total = total + (run.time_ns or 0)
      local n = #times
      if n >= fewest and total >= need then
        if not opts.max_noise then
          stop = opts.min_time and "min_time" or "repeats"
          break
        end
        if M.stats(times).noise <= opts.max_noise then
          stop = "max_noise"
          break
        end
      end
      if n >= most then
        stop = "max_repeats"
        break
      end
    end
  end
  if run.attempts and first_attempts then run.attempts = first_attempts end
  local st = M.stats(times)
  st.stop, st.mode = stop, flush and "cold" or "hot"
  return st, run, flush
end

return M
