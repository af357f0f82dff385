-- reference.lua: the host references the corpus compares with, computed in double precision
-- from the arrays the kernel read, and the tolerance each output type allows.
--   gemm:      C[m][n] = alpha * sum_k A[m][k] * B[n][k] (+ beta * C0), each matrix in the layout
--              the case names ("mk": row-major M x K, "km": column-major, ...).  With an epilogue
--              (CUTLASS's scaled fp8 ones): Z = that; C = scale_d * act(Z) (act "relu" or none),
--              aux = scale_aux * Z (another output in C's layout), amax_d = max |act(Z)| and
--              amax_aux = max |Z| (one f32 each); fp8 outputs saturate at the format's largest value.
--              With `dequant` (CUTLASS's mixed-input GEMMs): B[n][k] is first scale[k // group][n] * B
--              (+ zero[k // group][n]), each step rounded to f16 as the kernel's mul.f16 and add.f16 do.
--              With `blockscale` (CUTLASS's blockwise-scaled fp8 GEMMs): each k-block's partial sum is
--              multiplied by scale_a[k // bk][m // bm] * scale_b[k // bk][n // bn] (f32 or their words,
--              M/N-major; B's K-major with b_kmajor)
--              With `topk` (CUTLASS's top-K + softmax epilogue): each row of C is the softmax of its
--              topk largest values there and 0 elsewhere
--   grouped_gemm: that gemm per group, each group's matrices packed one after another in the arrays
--              (as CUTLASS example 57 allocates them), alpha and beta per group from f32 arrays
--   attention: O = softmax(scale * Q K^T) V per batch and head, [batch][head][seq][dim] arrays
--              (`causal`: row i sees keys 0..i; `lse`: also each row's log-sum-exp, f32 [batch][head][seq])
local M = {}

-- |got - want| <= atol + rtol * |want|, by output type (the reference is exact from the inputs:
-- what is left is f32 accumulation order and the output's rounding)
-- (fp8: one step of its mantissa, 3 or 2 bits, and a few of its smallest subnormals)
local tolerances = { bf16 = { atol = 0.05, rtol = 1 / 64 }, f16 = { atol = 0.02, rtol = 1 / 256 },
  f32 = { atol = 0.02, rtol = 1 / 256 }, tf32 = { atol = 0.05, rtol = 1 / 128 },
  e4m3 = { atol = 1 / 256, rtol = 1 / 8 }, e5m2 = { atol = 1 / 4096, rtol = 1 / 4 } }
local largest = { e4m3 = 448, e5m2 = 57344 } -- fp8 conversions saturate (satfinite)

-- element (r, c) of an R x C matrix held in `layout` ("rc": row-major, "cr": column-major)
local function getter(t, layout, rows, cols, row_name)
  if layout:sub(1, 1) == row_name then
    return function(r, c) return t[r * cols + c + 1] end
  end
  return function(r, c) return t[c * rows + r + 1] end
end

-- x rounded to f16 (to nearest, ties to even; subnormals too; |x| within f16's range)
local function f16(x)
  local a = math.abs(x)
  if a == 0 then return x end
  local e = math.floor(math.log(a, 2))
  if a / 2.0 ^ e >= 2 then e = e + 1 elseif a / 2.0 ^ e < 1 then e = e - 1 end
  if e < -14 then e = -14 end
  local step = 2.0 ^ (e - 10)
  local q = a / step
  local whole = math.floor(q)
  local frac = q - whole
  if frac > 0.5 or (frac == 0.5 and whole % 2 == 1) then whole = whole + 1 end
  return (x < 0 and -1 or 1) * whole * step
end

local function compare(got, want, dtype, index_name)
  local tol = tolerances[dtype] or tolerances.f32
  local bad, first = 0, nil
  for i = 1, #want do
    local g, w = got[i], want[i]
    if not (math.abs(g - w) <= tol.atol + tol.rtol * math.abs(w)) then
      bad = bad + 1
      first = first or string.format("%s: %.6g, reference %.6g", index_name(i), g, w)
    end
  end
  return bad, #want, first
end

-- An array's f32 values from its 32-bit words (the recording stores small memory as words).
local function f32s(arr)
  local v = {}
  for i, w in ipairs(arr:read()) do v[i] = string.unpack("<f", string.pack("<I4", w)) end
  return v
end

local function gemm(s, arrays)
  local m, n, k = s.m, s.n, s.k
  local A = getter(arrays[s.a]:read(), s.a_layout, m, k, "m")
  local B = getter(arrays[s.b]:read(), s.b_layout, n, k, "n")
  local out = arrays[s.c]
  -- rows of A and of B with k contiguous, for the inner loop
  local ar, br = {}, {}
  for i = 0, m - 1 do local r = {} for kk = 0, k - 1 do r[kk + 1] = A(i, kk) end ar[i] = r end
  for j = 0, n - 1 do local r = {} for kk = 0, k - 1 do r[kk + 1] = B(j, kk) end br[j] = r end
  local dq = s.dequant
  if dq then -- scale[k // group][n] (n contiguous), zero likewise
    local sc, zr = arrays[dq.scale]:read(), dq.zero and arrays[dq.zero]:read()
    for j = 0, n - 1 do
      local r = br[j]
      for kk = 0, k - 1 do
        local at = (kk // dq.group) * n + j + 1
        local v = f16(r[kk + 1] * sc[at])
        if zr then v = f16(v + zr[at]) end
        r[kk + 1] = v
      end
    end
  end
  local bs = s.blockscale
  local sa, sb, mb, nb, nkb
  if bs then -- f32 (or their words), M-major: scale_a[k // bs.k][m // bs.m], scale_b likewise (b_kmajor: [n // bs.n][k // bs.k])
    local function values(arr)
      local v = arr:read()
      return math.type(v[1]) == "integer" and f32s(arr) or v
    end
    sa, sb = values(arrays[bs.a]), values(arrays[bs.b])
    mb, nb, nkb = (m + bs.m - 1) // bs.m, (n + bs.n - 1) // bs.n, (k + bs.k - 1) // bs.k
    if #sa < mb * nkb or #sb < nb * nkb then
      error(string.format("reference: block scales hold %d and %d values, %d and %d needed", #sa, #sb, mb * nkb, nb * nkb), 0)
    end
  end
  local alpha, beta = s.alpha or 1, s.beta or 0
  local C0 = beta ~= 0 and getter(arrays[s.c0]:read(), s.c_layout, m, n, "m")
  local want, z = {}, {}
  local row_major = s.c_layout == "mn"
  local relu = s.act == "relu"
  if s.act and not relu then error("reference: unknown activation " .. tostring(s.act), 0) end
  local scale_d = s.scale_d or 1
  local amax_d, amax_z = 0, 0
  local function sat(x, dtype)
    local top = largest[dtype]
    return top and math.max(-top, math.min(top, x)) or x
  end
  for i = 0, m - 1 do
    local a = ar[i]
    for j = 0, n - 1 do
      local b, acc = br[j], 0
      if bs then -- each k-block's sum times its two scales
        for kb = 0, nkb - 1 do
          local part = 0
          for kk = kb * bs.k + 1, math.min(k, (kb + 1) * bs.k) do part = part + a[kk] * b[kk] end
          local b_at = bs.b_kmajor and (j // bs.n) * nkb + kb or j // bs.n + kb * nb
          acc = acc + sa[i // bs.m + kb * mb + 1] * sb[b_at + 1] * part
        end
      else
        for kk = 1, k do acc = acc + a[kk] * b[kk] end
      end
      acc = alpha * acc
      if C0 then acc = acc + beta * C0(i, j) end
      local at = row_major and (i * n + j + 1) or (j * m + i + 1)
      local d = relu and math.max(acc, 0) or acc
      amax_d, amax_z = math.max(amax_d, math.abs(d)), math.max(amax_z, math.abs(acc))
      want[at], z[at] = sat(scale_d * d, s.dtype), acc
    end
  end
  if s.topk then -- each row: softmax over its topk largest values, the others 0 (CUTLASS's TopKSoftmax)
    for i = 0, m - 1 do
      local function at(j) return row_major and (i * n + j + 1) or (j * m + i + 1) end
      local top = {}
      for j = 0, n - 1 do top[j + 1] = z[at(j)] end
      table.sort(top, function(x, y) return x > y end)
      local floor, sum = top[s.topk], 0
      for t = 1, s.topk do sum = sum + math.exp(top[t] - top[1]) end
      for j = 0, n - 1 do
        local v = z[at(j)]
        want[at(j)] = v < floor and 0 or math.exp(v - top[1]) / sum
      end
    end
  end
  local function name(what)
    return function(i)
      local r, c = (i - 1) // n, (i - 1) % n
      if not row_major then r, c = (i - 1) % m, (i - 1) // m end
      return string.format("%s[%d][%d]", what, r, c)
    end
  end
  local function first_n(t, count)
    local g = {}
    for i = 1, count do g[i] = t[i] end
    return g
  end
  local bad, total, first = compare(first_n(out:read(), m * n), want, s.dtype, name("C"))
  local function add(b, t, f) bad, total, first = bad + b, total + t, first or f end
  if s.aux then -- the pre-activation output
    local w = {}
    for i = 1, m * n do w[i] = sat((s.scale_aux or 1) * z[i], s.aux_dtype) end
    add(compare(first_n(arrays[s.aux]:read(), m * n), w, s.aux_dtype, name("aux")))
  end
  if s.amax_d then add(compare({ arrays[s.amax_d]:read()[1] }, { amax_d }, "f32", function() return "amax_d" end)) end
  if s.amax_aux then
    add(compare({ arrays[s.amax_aux]:read()[1] }, { amax_z }, "f32", function() return "amax_aux" end))
  end
  return bad, total, first
end

local function grouped_gemm(s, arrays)
  local whole = {}
  for _, id in ipairs({ s.a, s.b, s.c, s.c0 }) do whole[id] = whole[id] or arrays[id]:read() end
  local alpha, beta = f32s(arrays[s.alpha_words]), f32s(arrays[s.beta_words])
  local at = { a = 0, b = 0, c = 0 } -- each group's first element
  local bad, total, first = 0, 0, nil
  for g, p in ipairs(s.groups) do
    local m, n, k = p[1], p[2], p[3]
    local function slice(id, from, count)
      return { read = function()
        local t = {}
        for i = 1, count do t[i] = whole[id][from + i] end
        return t
      end }
    end
    local part = { [1] = slice(s.a, at.a, m * k), [2] = slice(s.b, at.b, n * k), [3] = slice(s.c, at.c, m * n),
      [4] = slice(s.c0, at.c, m * n) }
    local b, t, f = gemm({ m = m, n = n, k = k, a = 1, a_layout = s.a_layout, b = 2, b_layout = s.b_layout, c = 3,
      c_layout = s.c_layout, alpha = alpha[g], beta = beta[g], c0 = 4, dtype = s.dtype }, part)
    bad, total, first = bad + b, total + t, first or (f and string.format("group %d: %s", g - 1, f))
    at.a, at.b, at.c = at.a + m * k, at.b + n * k, at.c + m * n
  end
  return bad, total, first
end

local function attention(s, arrays)
  local q, kt, v = arrays[s.q]:read(), arrays[s.k]:read(), arrays[s.v]:read()
  local out = arrays[s.o]
  local nb, nh, n, d = s.batch, s.heads, s.seq, s.dim
  local scale = s.scale or 1 / math.sqrt(d)
  local want, lse = {}, {}
  for bh = 0, nb * nh - 1 do
    local base = bh * n * d
    for i = 0, n - 1 do
      local p, mx = {}, -math.huge
      local last = s.causal and i or n - 1
      for j = 0, last do
        local acc = 0
        for e = 0, d - 1 do acc = acc + q[base + i * d + e + 1] * kt[base + j * d + e + 1] end
        acc = acc * scale
        p[j] = acc
        if acc > mx then mx = acc end
      end
      local sum = 0
      for j = 0, last do p[j] = math.exp(p[j] - mx); sum = sum + p[j] end
      lse[bh * n + i + 1] = mx + math.log(sum)
      for e = 0, d - 1 do
        local acc = 0
        for j = 0, last do acc = acc + p[j] * v[base + j * d + e + 1] end
        want[base + i * d + e + 1] = acc / sum
      end
    end
  end
  local got = out:read()
  local g = {}
  for i = 1, #want do g[i] = got[i] end
  local bad, total, first = compare(g, want, s.dtype, function(i)
    local e = (i - 1) % d
    local row = (i - 1) // d
    return string.format("O[bh %d][%d][%d]", row // n, row % n, e)
  end)
  if s.lse then -- the log-sum-exp of each row's scaled scores, f32 [batch][head][seq]
    local lg, lgot = {}, arrays[s.lse]:read()
    for i = 1, #lse do lg[i] = lgot[i] end
    local b, t, f = compare(lg, lse, "f32", function(i)
      return string.format("LSE[bh %d][%d]", (i - 1) // n, (i - 1) % n)
    end)
    bad, total, first = bad + b, total + t, first or f
  end
  return bad, total, first
end

-- The number of output elements outside tolerance, the number compared and the first bad one.
function M.check(s, arrays)
  if s.op == "gemm" then return gemm(s, arrays) end
  if s.op == "grouped_gemm" then return grouped_gemm(s, arrays) end
  if s.op == "attention" then return attention(s, arrays) end
  error("reference: unknown op " .. tostring(s.op), 0)
end

return M
