-- memtime_same.lua: cycles and output hashes of launches that exercise emu's memory hierarchy in
-- virtual time (L1 and L2 hits, misses in flight, evictions, partial warps, straddling loads,
-- atomics, ld.cg, scattered stores; two device models), to check that a change of how emu computes
-- the model (core/emu/emu_memtime.c) keeps every cycle: run it with the build before and after the
-- change and diff the two outputs (also with MGPU_EMU_THREADS=1 and 2).
--   mgpu-harness scripts/bench/memtime_same.lua
local mgpu = require "mgpu"

local here = (arg and arg[0] or ""):match("^(.*)/scripts/bench/[^/]*$") or "."

local function hash(t) -- the values' integer parts x 16, hashed (products below 2^53: exact in Lua 5.4 and LuaJIT)
  local h = 0
  for i = 1, #t do h = (h * 65599 + math.floor(t[i] * 16) % 4294967296) % 4294967296 end
  return string.format("%08x", math.floor(h))
end

for _, model in ipairs { "h200", "h100-sxm" } do
  local dev = mgpu.device("emu", { model = model })
  local m = dev:load(here .. "/scripts/bench/ptx/memmix.ptx")
  for _, n in ipairs { 1 << 16, 1 << 20, 10 << 20, 16 << 20 } do -- 256 KiB, 4, 40 and 64 MiB of floats
    local x = dev:array("f32", n, { fill = "ramp" })
    local y = dev:array("f32", 264 * 256)
    local r = m:kernel("gather"):launch { grid = 264, block = 256, args = { x, y, n, 32, 7 } }
    print(string.format("%-8s gather n=%-9d cycles %-8d warp_insns %-8d y %s", model, n, r.cycles, r.warp_insns,
      hash(y:read())))
  end
  local n = 4 << 20
  local x, y, hist = dev:array("f32", n, { fill = "ramp" }), dev:array("f32", n), dev:array("u32", 1024)
  local r = m:kernel("mixed"):launch { grid = 132, block = 256, args = { x, y, hist, n, 6 } }
  print(string.format("%-8s mixed  n=%-9d cycles %-8d warp_insns %-8d hist %s", model, n, r.cycles, r.warp_insns,
    hash(hist:read())))
end
