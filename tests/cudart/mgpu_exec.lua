-- mgpu_exec.lua PROG CAPTURE_DIR - mgpu.exec from Lua (tests/cudart/mgpu_exec.sh builds PROG,
-- tests/cudart/vector_add.cu): the program's status, its launches, a capture, and bad options
-- refused with their names.
local mgpu = require "mgpu"
local prog, dir = arg[1], arg[2]
local function expect(cond, ...) if not cond then error(string.format(...), 0) end end

local r = mgpu.exec { prog = prog, capture = dir }
expect(r.status == 0, "vector_add's status is %s", tostring(r.status))
expect(#r.launches == 1, "%d launches, not 1 (the launch refused before running is not one)", #r.launches)
local l = r.launches[1]
expect(l.kernel == "_Z4vaddPKfS0_Pfi" and l.grid[1] == 20 and l.block[1] == 256 and l.smem == 0,
  "launch 1: %s grid %d block %d", l.kernel, l.grid[1], l.block[1])
expect(l.cycles > 0 and l.warp_insns > 0 and l.thread_insns >= l.warp_insns and l.error == 0, "launch 1's counts")
local f = io.open(dir .. "/launches.lua")
expect(f ~= nil, "no %s/launches.lua", dir)
f:close()

local probes = dir .. "-probes.json"
f = assert(io.open(probes, "w"))
f:write('[{"name": "whole", "kernel": true}]')
f:close()
r = mgpu.exec { prog = prog, trace = dir .. "-trace", probes = probes }
f = io.open(dir .. "-trace/launch-1.trace.json")
expect(r.status == 0 and f and f:read("a"):find('"name":"whole"', 1, true), "mgpu.exec{probes=} traced no region whole")
f:close()

-- the device model and parameters of it: the same launch, slower where memory is (latencies x 10)
local slow = mgpu.exec { prog = prog, model = "h100-sxm", model_params = { l2_lat = 2600, hbm_lat = 4800 } }
expect(slow.status == 0 and slow.launches[1].cycles > 3 * l.cycles, "model_params: %d cycles against %d",
  slow.launches[1].cycles, l.cycles)

r = mgpu.exec { prog = "/bin/sh", args = { "-c", "exit 3" } }
expect(r.status == 3 and #r.launches == 0, "sh's status %d", r.status)

for _, bad in ipairs { { opts = { prog = prog, args = { 1 } }, says = "args%[1%] is a number" },
                       { opts = { args = {} }, says = "prog" },
                       { opts = { prog = prog, capure = dir }, says = "capure" },
                       { opts = { prog = prog, probes = probes }, says = "probes goes with trace" },
                       { opts = { prog = prog, model = "a100" }, says = "no device model 'a100'" },
                       { opts = { prog = prog, model_params = { nope = 1 } }, says = "no model parameter 'nope'" },
                       { opts = { prog = prog, model_params = { l2_lat = "x" } }, says = "model_params.l2_lat must be a number" },
                       -- a name holding the list's separators was read as other entries (l2_lat set to 2600)
                       { opts = { prog = prog, model_params = { ["l2_lat=2600,hbm_lat"] = 4800 } },
                         says = "no model parameter 'l2_lat=2600,hbm_lat'" },
                       { opts = { prog = prog, model_params = { ["l2_lat\0x"] = 2600 } }, says = "no model parameter 'l2_lat\\0%.%.%.'" } } do
  local ok, err = pcall(mgpu.exec, bad.opts)
  expect(not ok and mgpu.errors.is(err, "bad_argument") and tostring(err):find(bad.says),
    "mgpu.exec refused %s with: %s", bad.says, tostring(err))
end
print("mgpu_exec: ok")
