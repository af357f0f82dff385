-- reference.lua: the host references the corpus compares with, computed in double precision
-- from the arrays the kernel read, and the tolerance each output type allows.
--   gemm:      C[m][n] = alpha * sum_k A[m][k] * B[n][k] (+ beta * C0), each matrix in the layout
--              the case names ("mk": row-major M x K, "km": column-major, ...)
--   attention: O = softmax(scale * Q K^T) V per batch and head, [batch][head][seq][dim] arrays
local M = {}

-- |got - want| <= atol + rtol * |want|, by output type (the reference is exact from the inputs:
-- what is left is f32 accumulation order and the output's rounding)
local tolerances = { bf16 = { atol = 0.05, rtol = 1 / 64 }, f16 = { atol = 0.02, rtol = 1 / 256 },
  f32 = { atol = 0.02, rtol = 1 / 256 }, tf32 = { atol = 0.05, rtol = 1 / 128 } }

-- element (r, c) of an R x C matrix held in `layout` ("rc": row-major, "cr": column-major)
local function getter(t, layout, rows, cols, row_name)
  if layout:sub(1, 1) == row_name then
    return function(r, c) return t[r * cols + c + 1] end
  end
  return function(r, c) return t[c * rows + r + 1] end
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

local function gemm(s, arrays)
  local m, n, k = s.m, s.n, s.k
  local A = getter(arrays[s.a]:read(), s.a_layout, m, k, "m")
  local B = getter(arrays[s.b]:read(), s.b_layout, n, k, "n")
  local out = arrays[s.c]
  -- rows of A and of B with k contiguous, for the inner loop
  local ar, br = {}, {}
  for i = 0, m - 1 do local r = {} for kk = 0, k - 1 do r[kk + 1] = A(i, kk) end ar[i] = r end
  for j = 0, n - 1 do local r = {} for kk = 0, k - 1 do r[kk + 1] = B(j, kk) end br[j] = r end
  local alpha, beta = s.alpha or 1, s.beta or 0
  local C0 = beta ~= 0 and getter(arrays[s.c0]:read(), s.c_layout, m, n, "m")
  local want = {}
  local row_major = s.c_layout == "mn"
  for i = 0, m - 1 do
    local a = ar[i]
    for j = 0, n - 1 do
      local b, acc = br[j], 0
      for kk = 1, k do acc = acc + a[kk] * b[kk] end
      acc = alpha * acc
      if C0 then acc = acc + beta * C0(i, j) end
      want[row_major and (i * n + j + 1) or (j * m + i + 1)] = acc
    end
  end
  local got = out:read()
  local total = m * n
  local g = {}
  for i = 1, total do g[i] = got[i] end
  return compare(g, want, s.dtype, function(i)
    local r, c = (i - 1) // n, (i - 1) % n
    if not row_major then r, c = (i - 1) % m, (i - 1) // m end
    return string.format("C[%d][%d]", r, c)
  end)
end

local function attention(s, arrays)
  local q, kt, v = arrays[s.q]:read(), arrays[s.k]:read(), arrays[s.v]:read()
  local out = arrays[s.o]
  local nb, nh, n, d = s.batch, s.heads, s.seq, s.dim
  local scale = s.scale or 1 / math.sqrt(d)
  local want = {}
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
  return compare(g, want, s.dtype, function(i)
    local e = (i - 1) % d
    local row = (i - 1) // d
    return string.format("O[bh %d][%d][%d]", row // n, row % n, e)
  end)
end

-- The number of output elements outside tolerance, the number compared and the first bad one.
function M.check(s, arrays)
  if s.op == "gemm" then return gemm(s, arrays) end
  if s.op == "attention" then return attention(s, arrays) end
  error("reference: unknown op " .. tostring(s.op), 0)
end

return M
