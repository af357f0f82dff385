-- mgpu.workers: a pool of worker processes that run items (a sweep's points)
-- one at a time each, handed out as workers become free.  The protocol is one
-- JSON line each way: the parent writes {"item": I} to a worker's stdin, the
-- worker answers {"item": I, ...its result...} on stdout ("last": true when it
-- ends after that answer, e.g. after a fault that lost its GPU: it is
-- replaced without its next item being charged).  A worker that
-- dies (signal, exit, lost pipe) has its item reported lost with how it
-- ended, and is replaced; an item running past timeout_s has its worker
-- killed (the one way to stop a hung GPU kernel) and is reported as timed
-- out.  An item lost is tried once more on a fresh worker (a timeout is
-- not: it would hang again).  Processes, not threads: a sticky fault, a
-- crash or an out-of-memory kill in one worker cannot take the pool down.
local core = require "mgpu.core"
local errors = require "mgpu.errors"

local M = {}

-- How a process ended, in words and as facts.
local function ended(st)
  if not st then return "its output ended", {} end
  if st.signal then return string.format("killed by signal %d", st.signal), { signal = st.signal } end
  return string.format("exited with status %d", st.exited or -1), { status = st.exited }
end

-- Runs every item of opts.items (a list of values the worker understands) on
-- opts.workers processes made by opts.spawn(slot) (a core.spawn process).
-- opts.on_result(item, msg) gets each answer; opts.on_failed(item, err) each
-- item given up on (err: a worker_lost or timeout error value);
-- opts.on_progress(done, total) after each; opts.timeout_s (nil: none) and opts.timeout_what (the
-- limit in words, for the message: "timeout_s = 1 s (...)");
-- opts.retries (default 1) for lost items; opts.stop() -> true stops early
-- (Ctrl-C: the running items are abandoned, their workers killed).
-- Returns {done=, failed=, lost=, timeouts=, workers_started=}.
local function run(opts, slots)
  local n = math.max(1, math.min(opts.workers, #opts.items))
  local queue, tries = {}, {}
  for i, it in ipairs(opts.items) do queue[i] = it end
  local stats = { done = 0, failed = 0, lost = 0, timeouts = 0, workers_started = 0 }
  local total = #opts.items

  local function start(slot)
    stats.workers_started = stats.workers_started + 1
    slots[slot] = { proc = opts.spawn(slot), item = nil, since = nil }
  end
  local function finish(item, ok)
    if ok then stats.done = stats.done + 1 else stats.failed = stats.failed + 1 end
    if opts.on_progress then opts.on_progress(stats.done + stats.failed, total) end
  end
  local function give_up(slot, item, code, why, facts)
    local s = slots[slot]
    s.proc:kill(9)
    s.proc:wait(true)
    slots[slot] = nil
    if item == nil then return end
    tries[item] = (tries[item] or 0) + 1
    if code == "worker_lost" and tries[item] <= (opts.retries or 1) then
      table.insert(queue, 1, item) -- once more, on a fresh worker, before the rest
      if opts.on_retry then opts.on_retry(item, why) end
      return
    end
    if code == "timeout" then stats.timeouts = stats.timeouts + 1 else stats.lost = stats.lost + 1 end
    facts = facts or {}
    facts.item = item
    opts.on_failed(item, errors.new(code, why, facts))
    finish(item, false)
  end
  local function hand_out(slot)
    local s = slots[slot]
    local item = table.remove(queue, 1)
    if item == nil then return end
    local ok = s.proc:write(core.json_encode({ item = item }) .. "\n")
    s.item, s.since = item, core.now()
    if not ok then
      local how, facts = ended(s.proc:wait(false))
      give_up(slot, item, "worker_lost", "the worker's pipe broke (" .. how .. ")", facts)
    end
  end

  for slot = 1, n do start(slot) end
  for slot = 1, n do hand_out(slot) end
  while true do
    if opts.stop and opts.stop() then break end
    local procs, which, busy = {}, {}, 0
    for slot = 1, n do
      if slots[slot] then procs[#procs + 1], which[#which + 1] = slots[slot].proc, slot end
      if slots[slot] and slots[slot].item ~= nil then busy = busy + 1 end
    end
    if busy == 0 and #queue == 0 then break end
    if #procs > 0 then core.poll(procs, 0.05) end
    for _, slot in ipairs(which) do
      local s = slots[slot]
      local lines, open = s.proc:lines()
      for _, line in ipairs(lines) do
        local ok, msg = pcall(core.json_decode, line, "worker")
        if ok and type(msg) == "table" and msg.item ~= nil and msg.item == s.item then
          local item = s.item
          s.item, s.since = nil, nil
          opts.on_result(item, msg)
          finish(item, msg.ok ~= false)
          if msg.last then s.retiring = true else hand_out(slot) end -- last: it ends; a fresh one follows
        elseif opts.on_noise then
          opts.on_noise(slot, line) -- a line that is not an answer: shown, not taken for one
        end
      end
      if slots[slot] and not open then
        local how, facts = ended(s.proc:wait(true))
        give_up(slot, s.item, "worker_lost", "the worker running it " .. how, facts) -- (none: a retiring one)
      elseif slots[slot] and s.item ~= nil and opts.timeout_s and core.now() - s.since > opts.timeout_s then
        give_up(slot, s.item, "timeout", string.format("it ran past %s: its worker was killed",
          opts.timeout_what or string.format("timeout_s = %g s", opts.timeout_s)))
      end
      if not slots[slot] and #queue > 0 then
        start(slot)
        hand_out(slot)
      end
    end
  end
  for slot = 1, n do -- done (or stopped): the workers end with their stdin, or are killed
    local s = slots[slot]
    if s then
      s.proc:close_stdin()
      if s.item ~= nil then s.proc:kill(9) end
    end
  end
  for slot = 1, n do
    local s = slots[slot]
    if s and not s.proc:wait(false) then
      local t0 = core.now()
      while not s.proc:wait(false) and core.now() - t0 < 5 do core.poll({ s.proc }, 0.05); s.proc:lines() end
      if not s.proc:wait(false) then s.proc:kill(9); s.proc:wait(true) end
    end
  end
  stats.abandoned = #queue
  return stats
end

function M.run(opts)
  local slots = {}
  local ok, r = pcall(run, opts, slots)
  if not ok then -- an error (Ctrl-C's interrupted) on the way: no worker is left behind
    for _, s in pairs(slots) do
      s.proc:kill(9)
      s.proc:wait(true)
    end
    error(r, 0)
  end
  return r
end

return M
