-- flops_sweep.lua: scripts/examples/tile_sweep.lua over 8 points (block x n) with
-- declared bytes and flops large enough that the throughput axes read in TB/s and
-- TFLOP/s: the widest tick labels a sweep figure has (tests/report_browser.sh checks
-- that no label crosses a figure's edge; issue 35 saw "00 TFLOP/s").
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or "."
local base = dofile(here .. "/../../scripts/examples/tile_sweep.lua")
local exp = {}
for k, v in pairs(base) do exp[k] = v end
exp.name = "flops_sweep"
exp.module = "../../ptx/tiled.ptx"
exp.axes = { block = { 64, 128 }, n = { 4096, 8192, 16384, 32768 } }
exp.filter = nil
exp.setup = function(p, dev)
  local spec = base.setup(p, dev)
  spec.bytes, spec.flops = p.n * 1e5, p.n * 3e5
  return spec
end
return exp
