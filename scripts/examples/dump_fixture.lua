-- dump_fixture.lua: the example a new user runs first.  It takes a real trace
-- buffer that a JAX Mosaic GPU kernel wrote on an H200 (264 blocks, each
-- warpgroup recording Init and 8 x step{load, store}), dumps it to a
-- Perfetto trace in real nanoseconds (the H200's SM clock, 1.98 GHz, was
-- measured with the capture), and prints the region summary.
--   mgpu-harness scripts/examples/dump_fixture.lua [OUT_DIR]
local mgpu = require "mgpu"

local here = (arg and arg[0] or ""):match("^(.*)/scripts/examples/[^/]*$") or "."
local fixture = here .. "/tests/fixtures/mosaic-h200/wg_264blocks_nested"
local out_dir = mgpu.script_dir("results/dump_fixture")

local r = mgpu.dump {
  buffer = fixture .. ".bin",
  meta = fixture .. ".meta.json",
  out = out_dir .. "/trace.json",
  clock_ghz = 1.98,
  summary = true,
}

print(string.format("%d traces, %d events -> %s/trace.json (open it in https://ui.perfetto.dev)",
  r.traces_with_events, r.events, out_dir))
print(string.format("%-8s %7s %10s %10s %10s %10s", "region", "count", "mean", "median", "p99", "max"))
for _, row in ipairs(r.summary) do
  print(string.format("%-8s %7d %7.0f %s %7d %s %7d %s %7d %s", row.name, row.count, row.mean, r.unit,
    row.median, r.unit, row.p99, r.unit, row.max, r.unit))
end

-- The same buffer in Mosaic-compatible mode gives what JAX itself writes.
mgpu.dump { buffer = fixture .. ".bin", meta = fixture .. ".meta.json", out = out_dir .. "/trace.jax-compat.json",
  compat = "mosaic" }
print("Mosaic-compatible trace: " .. out_dir .. "/trace.jax-compat.json")
