-- hopper_spec.lua: the warp-specialised GEMM of tests/ptx/hopper_gemm.cu (TMA with the 128B swizzle
-- into a 3-stage ring, full/empty mbarriers, wgmma, a cluster of 2 with multicast, a TMA store) on
-- emu from Lua, instrumented per warpgroup: the result against a host reference, and the waits of
-- the producer and the consumers as regions with exact counts.
local h = require "helpers"
local mgpu = require "mgpu"

describe("a Hopper GEMM on emu", function()
  it("matches the host and shows the producer's and consumers' waits per warpgroup", function()
    local dev = mgpu.device("emu", { sms = 4 })
    local M, N, K = 256, 128, 256
    local av, bv = {}, {}
    for i = 1, M * K do av[i] = (i * 7) % 9 - 4 end
    for i = 1, N * K do bv[i] = (i * 5) % 7 - 3 end
    local a = dev:array("bf16", av, { shape = { M, K } })
    local b = dev:array("bf16", bv, { shape = { N, K } })
    local c = dev:array("f32", M * N, { shape = { M, N } })
    local ma = dev:tensor_map(a, { box = { 64, 128 }, swizzle = "128B" })
    local mb = dev:tensor_map(b, { box = { 64, 32 }, swizzle = "128B" })
    local mc = dev:tensor_map(c, { box = { 64, 128 } })
    local k = dev:load(h.src .. "/tests/ptx/hopper_gemm.ptx", { instrument = "warpgroup" }):kernel("ws_gemm")
    local smem = 3 * (128 * 64 * 2 + 64 * 64 * 2) + 128 * 64 * 4
    local run = k:launch { grid = { 2, 2 }, block = 384, smem = smem, args = { ma, mb, mc, K } }
    local got, bad = c:read(), 0
    for m = 0, M - 1 do
      for n = 0, N - 1 do
        local acc = 0
        for kk = 0, K - 1 do acc = acc + av[m * K + kk + 1] * bv[n * K + kk + 1] end
        if got[m * N + n + 1] ~= acc then bad = bad + 1 end
      end
    end
    assert.equal(0, bad)
    -- 4 blocks: the producer waits for an empty stage once per K step (4), each consumer for a
    -- full one and runs its MMAs once per K step, then stores once
    local counts = {}
    for _, r in ipairs(run.trace:summary()) do counts[r.name] = r.count end
    assert.same({ empty_wait = 4 * 4, full_wait = 4 * 2 * 4, mma = 4 * 2 * 4, store = 4 * 2 }, counts)
  end)
end)
