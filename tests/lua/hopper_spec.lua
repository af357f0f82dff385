-- hopper_spec.lua: the warp-specialised GEMM of tests/ptx/hopper_gemm.cu (TMA with the 128B swizzle
-- into a 3-stage ring, full/empty mbarriers, wgmma, a cluster of 2 with multicast, a TMA store) on
-- emu from Lua, instrumented per warpgroup: the result against a host reference, and the waits of
-- the producer and the consumers as regions with exact counts; and tests/ptx/hopper_gemm_st.cu (TMA,
-- setmaxnreg, wgmma and a stmatrix epilogue together), instrumented with probes, whose timeline shows
-- the consumers' MMAs inside the producer's waits for the stages they are computing on.
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

  it("runs the GEMM with TMA, setmaxnreg, wgmma and stmatrix; probes show MMAs overlapping the producer's waits", function()
    local dev = mgpu.device("emu", { sms = 4 })
    local M, N, K = 256, 128, 512
    local av, bv = {}, {}
    for i = 1, M * K do av[i] = (i * 7) % 9 - 4 end
    for i = 1, N * K do bv[i] = (i * 5) % 7 - 3 end
    local a = dev:array("bf16", av, { shape = { M, K } })
    local b = dev:array("bf16", bv, { shape = { N, K } })
    local c = dev:array("bf16", M * N, { shape = { M, N } })
    local ma = dev:tensor_map(a, { box = { 64, 128 }, swizzle = "128B" })
    local mb = dev:tensor_map(b, { box = { 64, 32 }, swizzle = "128B" })
    local mc = dev:tensor_map(c, { box = { 64, 128 } })
    -- no markers in the kernel: the producer's waits (.acquire.cluster) and TMA loads, the consumers'
    -- waits (.acquire.cta), their MMAs (the wait for their wgmma group) and the epilogue's stmatrix
    local k = dev:load(h.src .. "/tests/ptx/hopper_gemm_st.ptx", { instrument = "warpgroup", probes = {
      { name = "empty_wait", around = "mbarrier.try_wait.parity.acquire.cluster" },
      { name = "load", around = "cp.async.bulk.tensor.2d.shared::cluster" },
      { name = "full_wait", around = "mbarrier.try_wait.parity.acquire.cta" },
      { name = "mma", around = "wgmma.wait_group" },
      { name = "epilogue", around = "stmatrix" },
    } }):kernel("ws_gemm_st")
    local smem = 4 * (128 * 64 * 2 + 64 * 64 * 2) + 128 * 64 * 2
    local run = k:launch { grid = { 2, 2 }, block = 384, smem = smem, args = { ma, mb, mc, K } }
    -- the reference: exact integer sums rounded once to bf16 (to nearest, ties to even)
    local function bf16(x)
      if x == 0 then return 0 end
      local ax, e = math.abs(x), 0
      while 2.0 ^ (e + 1) <= ax do e = e + 1 end
      local ulp = 2.0 ^ (e - 7)
      local q = ax / ulp
      local f = math.floor(q)
      if q - f > 0.5 or (q - f == 0.5 and f % 2 == 1) then f = f + 1 end
      return (x < 0 and -1 or 1) * f * ulp
    end
    local got, bad = c:read(), 0
    for m = 0, M - 1 do
      for n = 0, N - 1 do
        local acc = 0
        for kk = 0, K - 1 do acc = acc + av[m * K + kk + 1] * bv[n * K + kk + 1] end
        if got[m * N + n + 1] ~= bf16(acc) then bad = bad + 1 end
      end
    end
    assert.equal(0, bad)
    -- 4 blocks, 8 K steps: the producer waits for a stage and issues 2 loads (A, its half of B) a
    -- step; each consumer waits for a full stage and runs its MMAs a step, then 4 stmatrix.x4
    local counts = {}
    for _, r in ipairs(run.trace:summary()) do counts[r.name] = r.count end
    assert.same({ empty_wait = 4 * 8, load = 4 * 16, full_wait = 4 * 2 * 8, mma = 4 * 2 * 8, epilogue = 4 * 2 * 4 }, counts)
    -- the timeline: regions per block and warpgroup from the dump's B/E events
    local dir = h.tmpdir()
    run.trace:dump(dir .. "/t.json")
    local t = require("cjson").decode(h.read(dir .. "/t.json"))
    h.rmdir(dir)
    local names, open, iv = {}, {}, {}
    for _, ev in ipairs(t.traceEvents) do
      if ev.ph == "M" and ev.name == "thread_name" then names[ev.pid .. "/" .. ev.tid] = ev.args.name end
    end
    for _, ev in ipairs(t.traceEvents) do
      local key = ev.pid .. "/" .. tostring(ev.tid) .. "/" .. ev.name
      if ev.ph == "B" then open[key] = ev.ts
      elseif ev.ph == "E" then
        local blk, wg = names[ev.pid .. "/" .. ev.tid]:match("^block (%b()) · warpgroup (%d+)$")
        iv[#iv + 1] = { block = blk, wg = tonumber(wg), name = ev.name, b = open[key], e = ev.ts }
      end
    end
    -- each step's MMAs start after the producer issued that step's two loads (before issue 32 the
    -- first 4 steps' MMAs also lay inside the producer's waits; with the memory hierarchy's latency
    -- the instrumentation's own atomics now pace the producer, so it rarely waits for a stage)
    local loads, mmas, ordered = {}, {}, 0
    for _, p in ipairs(iv) do
      if p.name == "load" then loads[p.block] = loads[p.block] or {}; table.insert(loads[p.block], p.e) end
      if p.name == "mma" then
        local key = p.block .. p.wg
        mmas[key] = mmas[key] or { block = p.block }
        table.insert(mmas[key], p.b)
      end
    end
    for _, l in pairs(loads) do table.sort(l) end
    for _, m in pairs(mmas) do
      table.sort(m)
      for k, b in ipairs(m) do
        if b >= loads[m.block][2 * k] then ordered = ordered + 1 end
      end
    end
    assert.equal(4 * 2 * 8, ordered)
    -- a stage comes back to the producer only when the MMAs that read it are done: step k's loads
    -- (k > 4 stages) start after every consumer warpgroup of the block has ended its MMA wait of
    -- step k - 4.  (This used to assert that no load overlapped any MMA wait: true on emu only while
    -- the probes' own stores queued behind the TMA's bytes on one SM port; with the SM's way to L2
    -- apart from its fills, issue 32, the producer runs ahead into the next steps' MMAs, as the
    -- ring of 4 stages lets it.)
    local ends = {}
    for _, p in ipairs(iv) do
      if p.name == "mma" then
        ends[p.block] = ends[p.block] or {}
        ends[p.block][p.wg] = ends[p.block][p.wg] or {}
        table.insert(ends[p.block][p.wg], p.e)
      end
    end
    local released = 0
    for blk, l in pairs(loads) do
      for _, e in pairs(ends[blk]) do
        table.sort(e)
        for k = 5, #e do
          if l[2 * k - 1] >= e[k - 4] then released = released + 1 end
        end
      end
    end
    assert.equal(4 * 2 * 4, released)
  end)

  it("lets an access to an exited cluster peer land with a warning per line; strict mode faults", function()
    for _, strict in ipairs { false, true } do
      local dev = mgpu.device("emu", { sms = 4, strict = strict })
      local flag, out = dev:array("u32", 1), dev:array("u32", 2)
      local k = dev:load(h.src .. "/tests/ptx/hopper_exited.ptx"):kernel("exited_peer")
      local ok, run = pcall(k.launch, k, { grid = 2, block = 32, args = { flag, out } })
      if strict then
        assert.is_false(ok)
        assert.equal("kernel_fault", run.code)
        -- the .cu line first, then the PTX line (issue 34)
        assert.matches("hopper_exited%.cu:%d+ %(PTX [^)]*hopper_exited%.ptx:132%): exited_peer: shared::cluster write",
          run.message)
      else
        assert.is_true(ok)
        assert.same({ 42, 1 }, out:read())
        assert.equal(3, #run.warnings)
        assert.truthy(run.warnings[2]:find("hopper_exited.ptx:137): exited_peer: shared::cluster write at 0x", 1, true))
        assert.truthy(run.warnings[2]:find("block rank 1 of the cluster has exited", 1, true))
      end
    end
  end)

  it("makes tensor maps of a named data type based at an offset into the array (emu and the driver's)", function()
    local dev = mgpu.device("emu", { sms = 4 })
    local k = dev:load(h.src .. "/tests/ptx/hopper_tma.ptx"):kernel("tma_load")
    local function load(map, bytes)
      local out = dev:array("u32", math.floor(bytes / 4))
      k:launch { grid = 1, block = 128, smem = bytes, args = { map, 2, 0, 0, 0, 0, 0, bytes, out } }
      return out:read()
    end
    -- tf32 over f32, from row 2 of a 16 x 32 array: rows 2 .. 9
    local f = dev:array("f32", 16 * 32, { fill = "ramp", shape = { 16, 32 } })
    local got = load(dev:tensor_map(f, { data_type = "tfloat32", offset = 2 * 32 * 4, dims = { 32, 8 }, box = { 32, 8 } }), 1024)
    local function f32_bits(n) -- of a positive integer below 2^24 (no string.pack: LuaJIT runs this spec too)
      local e = math.floor(math.log(n) / math.log(2))
      return (127 + e) * 2 ^ 23 + (n - 2 ^ e) * 2 ^ (23 - e)
    end
    for i = 1, 256 do assert.equal(f32_bits(64 + i - 1), got[i]) end
    -- uint16 over f16 bits: the same shape, the same bytes
    local hv = {}
    for i = 1, 8 * 16 do hv[i] = (i % 13) * 0.5 - 3 end
    local hf = dev:array("f16", hv, { shape = { 8, 16 } })
    local a = load(dev:tensor_map(hf, { data_type = "uint16", box = { 16, 8 } }), 256)
    local b = load(dev:tensor_map(hf, { box = { 16, 8 } }), 256)
    assert.same(b, a)
    -- what is refused, and why
    local bad = {
      { { data_type = "tf32", box = { 32, 8 } }, "data_type = \"tf32\" %(uint8, uint16" },
      { { data_type = "uint8", box = { 32, 8 } }, "data_type = \"uint8\" has elements of 8 bits, the array's %(f32%) 32: give dims" },
      { { offset = 8, dims = { 32, 8 }, box = { 32, 8 } }, "the tensor's address must be 16%-byte aligned %(0x%x+, the array's start plus the offset%)" },
      { { offset = 2048, box = { 32, 8 } }, "offset = 2048 bytes, at or past the end of the array's 2048" },
      { { offset = 16, box = { 32, 8 } }, "the tensor spans 2048 bytes, the array has 2032 after the offset" },
      { { data_type = "16u4_align16b", dims = { 1024, 2 }, box = { 128, 2 } }, "data type 16u4_align16b %(packed values%) is for sm_100" },
    }
    for _, c in ipairs(bad) do
      local ok, err = pcall(dev.tensor_map, dev, f, c[1])
      assert.is_false(ok)
      assert.equal("bad_argument", err.code)
      assert.matches("tensor map: " .. c[2], err.message)
    end
    -- the driver gets the type and the address (the fake driver writes them into the map's words)
    local cu = mgpu.device("cuda", { driver = os.getenv("MGPU_FAKE_CUDA") })
    local function word(m, i) -- the i-th little-endian 64-bit word (no string.unpack: LuaJIT runs this spec too)
      local v = 0
      for b = 8, 1, -1 do v = v * 256 + m:byte(8 * i + b) end
      return v
    end
    local c = cu:array("f32", 16 * 32)
    local m0 = cu:tensor_map(c, { dims = { 32, 16 }, box = { 32, 8 } })
    local m1 = cu:tensor_map(c, { data_type = "tfloat32_ftz", offset = 256, dims = { 32, 8 }, box = { 32, 8 } })
    assert.same({ 7, 12 }, { word(m0, 1), word(m1, 1) })
    assert.equal(word(m0, 0) + 256, word(m1, 0))
  end)
  it("keeps a tensor map's array alive while the map is reachable (a collection between map and launch)", function()
    local dev = mgpu.device("emu", { sms = 4 })
    local k = dev:load(h.src .. "/tests/ptx/hopper_tma.ptx"):kernel("tma_load")
    -- the array is reachable only through the map once this returns
    local function map_of_ramp()
      local a = dev:array("u32", 8 * 32, { fill = "ramp", shape = { 8, 32 } })
      return dev:tensor_map(a, { box = { 32, 8 } })
    end
    local map = map_of_ramp()
    collectgarbage()
    collectgarbage()
    for _ = 1, 4 do dev:array("u32", 8 * 32) end -- memory the collected array's could be reused for
    local out = dev:array("u32", 256)
    k:launch { grid = 1, block = 128, smem = 1024, args = { map, 2, 0, 0, 0, 0, 0, 1024, out } }
    local got = out:read()
    for i = 1, 256 do assert.equal(i - 1, got[i]) end
    -- what existing callers do with the map's bytes still works
    assert.equal(128, #map)
    assert.equal("MGPUTMAP", map:sub(1, 8))
    assert.equal(map:bytes(), map:sub(1, 128))
    assert.equal(130, #("<" .. map .. ">"))
    assert.equal(map:bytes(), ("" .. map))
    assert.truthy(tostring(map):find("tensor map", 1, true))
    assert.equal(map_of_ramp():bytes():sub(1, 8), map:bytes():sub(1, 8))
  end)
end)
