-- trace_viewer.lua: the trace tests/trace_viewer.py loads into a real viewer: emu's run of the
-- producer/consumer kernel (tests/ptx/roles.ptx, warpgroup scope, 2 blocks, 6 steps), its lanes
-- named by role and its mbarrier waits linked by flows.  usage: mgpu-harness trace_viewer.lua SRC OUT.json
local mgpu = require "mgpu"
local src, out = arg[1], arg[2]
local dev = mgpu.device("emu")
local k = dev:load(src .. "/tests/ptx/roles.ptx", { instrument = "warpgroup" }):kernel("roles")
local steps, input = 6, {}
for i = 1, 128 * steps do input[i] = i end
local run = k:launch { grid = 2, block = 384, args = { dev:array("f32", input), dev:array("f32", 2 * 256), steps } }
run.trace:dump(out)
