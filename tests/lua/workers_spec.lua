-- workers_spec.lua: the worker pool (lua/mgpu/workers.lua) with real
-- processes (tests/lua/workers/fake_worker.lua run by mgpu-harness): items
-- handed out and answered, a worker that exits mid-item replaced and its item
-- tried again, a hung one killed at the timeout, and no process left behind.
local h = require "helpers"
local core = require "mgpu.core"
local workers = require "mgpu.workers"

describe("the worker pool", function()
  it("runs every item once, replaces a worker that died and kills one past the timeout", function()
    local dir = h.tmpdir()
    local mark = dir .. "/crashed"
    local pids = {}
    local results, failed, retried, noise = {}, {}, {}, 0
    local items = {}
    for i = 1, 9 do items[i] = i end
    local st = workers.run {
      workers = 3, items = items, timeout_s = 1,
      spawn = function()
        local p = core.spawn { argv = { h.exe, h.src .. "/tests/lua/workers/fake_worker.lua", mark },
          env = { LD_PRELOAD = "" } }
        pids[#pids + 1] = p
        return p
      end,
      on_result = function(item, msg) results[item] = msg.square end,
      on_failed = function(item, err) failed[item] = err end,
      on_retry = function(item) retried[#retried + 1] = item end,
      on_noise = function() noise = noise + 1 end,
    }
    for _, i in ipairs({ 1, 2, 3, 4, 6, 7, 8, 9 }) do assert.equal(i * i, results[i]) end
    assert.same({ 3 }, retried)                  -- exited once: tried again on a fresh worker
    assert.equal("timeout", failed[5].code)      -- never answered: its worker killed
    assert.is_nil(results[5])
    assert.equal(1, noise)
    assert.same({ done = 8, failed = 1, lost = 0, timeouts = 1, abandoned = 0 },
      { done = st.done, failed = st.failed, lost = st.lost, timeouts = st.timeouts, abandoned = st.abandoned })
    assert.equal(4, st.workers_started)          -- 3, and one after the exit (nothing was left after the timeout)
    for _, p in ipairs(pids) do assert.is_not_nil(p:wait(false)) end -- every one reaped
    h.rmdir(dir)
  end)
end)
