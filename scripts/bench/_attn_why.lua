-- emu_attn.lua: emu's predicted TFLOPS of ThunderKittens' H100 attention forward (issue 32), the
-- kernel tests/corpus/tk/ recorded at batch 1, heads 1, sequence 768 (`fwd_attend_ker<D, false>`:
-- non-causal; a producer warpgroup and three consumers, 192 query rows a block), re-launched at
-- B x H x S: its globals struct (five global layouts of 384 bytes, each a pointer, batch, heads,
-- rows and columns, then its tensor map at +128; then N and the heads ratio at 1920) gets the new
-- sizes, its maps are made over arrays of that size, the grid is (ceil(S / 192), H, B).
-- FLOPs counted as attention benchmarks do: 4 B H S^2 D.  With "check", Q = K = 0 and V[b][h][s][d]
-- depends on (b, h, d) only, so every softmax row is uniform and O must equal V row by row: every
-- (batch, head, row) written, from its own head's V (the other values are zeros: same virtual time).
--   mgpu-harness scripts/bench/emu_attn.lua [B] [H] [S] [D: 64|128] [MODEL] [check]
local mgpu = require "mgpu"

local here = (arg and arg[0] or ""):match("^(.*)/scripts/bench/[^/]*$") or "."
local B, H, S, D = tonumber(arg[1] or "16"), tonumber(arg[2] or "32"), tonumber(arg[3] or "1024"), tonumber(arg[4] or "64")
local model = arg[5] or "h100-sxm"
local check = arg[6] == "check"
assert(D == 64 or D == 128, "D: 64 or 128 (the corpus's two recordings)")
local dev = mgpu.device("emu", { model = model })

local l
local env = { launch = function(t) if not l and t.kernel:find("fwd_attend_ker", 1, true) then l = t end end }
assert(loadfile(string.format("%s/tests/corpus/tk/mha_h100_d%d.launches.lua", here, D), "t", env))()
assert(l, "no fwd_attend_ker recording")

local function unhex(h) return (h:gsub("..", function(b) return string.char(tonumber(b, 16)) end)) end
local function splice(s, off, bytes) return s:sub(1, off) .. bytes .. s:sub(off + #bytes + 1) end

-- the arrays: bf16 B x H x S x D for Q, K, V, O; f32 B x H x S for the log-sum-exp vector
local arrays, maps = {}, {}
for id, a in pairs(l.allocs) do
  arrays[id] = a.bytes == 3072 and dev:array("f32", B * H * S) or dev:array("bf16", B * H * S * D)
end
for m, t in pairs(l.maps) do
  local o = { box = t.box, element_strides = t.element_strides, swizzle = ({ [0] = "none", "32B", "64B", "128B" })[t.swizzle] }
  if t.rank == 5 then -- {64 columns, rows, D / 64, heads, batch}
    o.dims, o.strides = { 64, S, D // 64, H, B }, { 2 * D, 128, 2 * S * D, 2 * H * S * D }
  else -- the f32 vector: {S, 1, heads, batch}
    o.dims, o.strides = { S, 1, H, B }, { 4 * S, 4 * S, 4 * H * S }
  end
  maps[m] = dev:tensor_map(arrays[t.alloc], o)
end

local g = unhex(l.params[1])
for _, r in ipairs(l.refs) do
  if r.map then
    g = splice(g, r.off, maps[r.map]:bytes())
  else -- a layout: its pointer, then batch, heads, rows, columns (the vector's rows are 1, its columns S)
    local vec = string.unpack("<I8", g, r.off + 24 + 1) == 1
    g = splice(g, r.off, string.unpack("c8", mgpu.struct { { "ptr", arrays[r.ptr] } }))
    g = splice(g, r.off + 8, string.pack("<I8<I8<I8<I8", B, H, vec and 1 or S, vec and S or D))
  end
end
g = splice(g, 1920, string.pack("<i4", S)) -- N (the heads ratio after it stays 1)

local qid, kid, vid, oid -- by the layouts' order in the struct: q, k, v, l, o
do
  local ptrs = {}
  for _, r in ipairs(l.refs) do if r.ptr then ptrs[#ptrs + 1] = r end end
  table.sort(ptrs, function(a, b) return a.off < b.off end)
  qid, kid, vid, oid = ptrs[1].ptr, ptrs[2].ptr, ptrs[3].ptr, ptrs[5].ptr
end
local function vval(b, h, d) return (b * 7 + h * 3 + d) % 9 - 4 end
if check then
  local v = {}
  for b = 0, B - 1 do for h = 0, H - 1 do for s = 0, S - 1 do
    local base = ((b * H + h) * S + s) * D
    for d = 0, D - 1 do v[base + d + 1] = vval(b, h, d) end
  end end end
  arrays[vid]:write(v)
end

local k = dev:load(string.format("%s/tests/corpus/tk/mha_h100_d%d.ptx", here, D)):kernel(l.kernel)
local t0 = os.clock()
local run = k:launch { grid = { (S + 191) // 192, H, B }, block = l.block, smem = l.smem, args = { g }, timeout_s = 3600, stats = true }
local cpu = os.clock() - t0
local tf = 4.0 * B * H * S * S * D / run.time_ns / 1e3
local verdict = ""
if check then
  local o, bad = arrays[oid]:read(), 0
  for b = 0, B - 1 do for h = 0, H - 1 do for s = 0, S - 1 do
    local base = ((b * H + h) * S + s) * D
    for d = 0, D - 1 do if o[base + d + 1] ~= vval(b, h, d) then bad = bad + 1 end end
  end end end
  verdict = bad == 0 and " O right |" or string.format(" O WRONG: %d of %d |", bad, B * H * S * D)
end
print("| kernel | B | H | S | D | model | blocks/SM | emu time (us) | emu TFLOPS | CPU |" .. (check and " check |" or ""))
print("|---|---|---|---|---|---|---|---|---|---|" .. (check and "---|" or ""))
print(string.format("| ThunderKittens attention fwd (non-causal) | %d | %d | %d | %d | %s | %s | %.1f | %.0f | %.0f s |%s",
  B, H, S, D, model, tostring(run.blocks_per_sm or "?"), run.time_ns / 1e3, tf, cpu, verdict))
local st = run.stats
local tot = 0
for k, v in pairs(st.stalls) do tot = tot + v end
local ks = {}
for k, v in pairs(st.stalls) do ks[#ks + 1] = k end
table.sort(ks, function(a, b) return st.stalls[a] > st.stalls[b] end)
for _, k in ipairs(ks) do print(string.format("%-22s %6.2f%%", k, 100 * st.stalls[k] / tot)) end
local rows = {}
for _, r in ipairs(st.lines) do if r.stalls then
  local s = 0; for _, v in pairs(r.stalls) do s = s + v end
  rows[#rows + 1] = { r, s } end end
table.sort(rows, function(a, b) return a[2] > b[2] end)
for i = 1, math.min(25, #rows) do
  local r = rows[i][1]
  local top, tv = "", 0
  for k, v in pairs(r.stalls) do if v > tv then top, tv = k, v end end
  print(string.format("%6.2f%% line %s %s | %s %.0f%% | %s", 100 * rows[i][2] / tot, tostring(r.line), tostring(r.file or ""), top, 100 * tv / rows[i][2], (r.text or ""):sub(1, 90)))
end
