-- cases.lua: the corpus's cases.  Each names its recorded launch (file, and a piece of the
-- kernel's mangled name that only it has), the PTX, which of the program's allocations are inputs
-- (filled from a seed: the program's own random values are not stored) and the reference
-- (tests/corpus/reference.lua).  Allocation ids are the program's cudaMalloc order.  `xfail`:
-- the message the case must fail with until emu is fixed (SOURCES.md says which issue item).
local fastcu = { launches = "fastcu/launches.lua", ptx = "fastcu/matmul.ptx", inputs = { [2] = "bf16", [3] = "bf16" },
  outputs = { [4] = "bf16" },
  check = { op = "gemm", m = 256, n = 256, k = 256, a = 2, a_layout = "mk", b = 3, b_layout = "nk", c = 4,
    c_layout = "nm", dtype = "bf16" } }

local function case(base, t)
  for k, v in pairs(base) do if t[k] == nil then t[k] = v end end
  return t
end

return {
  case(fastcu, { name = "fastcu_k1_warptiling", kernel = "sgemmWarptiling", -- A M x K, B K x N, C M x N, all row-major
    check = { op = "gemm", m = 256, n = 256, k = 256, a = 2, a_layout = "mk", b = 3, b_layout = "kn", c = 4, c_layout = "mn",
      dtype = "bf16" } }),
  case(fastcu, { name = "fastcu_k2_tma_wgmma", kernel = "matmulKernel2" }),
  case(fastcu, { name = "fastcu_k3_tma_wgmma_128", kernel = "matmulKernel3ILi128ELi128ELi64ELi128ELb1" }),
  case(fastcu, { name = "fastcu_k4_producer_consumer", kernel = "matmulKernel4" }),
  case(fastcu, { name = "fastcu_k5_setmaxnreg", kernel = "matmulKernel5" }),
  case(fastcu, { name = "fastcu_k6_tma_store_c", kernel = "matmulKernel6",
    xfail = "mismatch", why = "issue 30 item 2: dynamic shared array offset and 128B swizzle" }),
  case(fastcu, { name = "fastcu_k7_hilbert", kernel = "matmulKernel7",
    xfail = "run by lanes 0x00000001", why = "issue 30 item 1: labels of inlined { } blocks" }),
  case(fastcu, { name = "fastcu_k8_cluster_multicast", kernel = "matmulKernel8",
    xfail = "run by lanes 0x00000001", why = "issue 30 item 1: labels of inlined { } blocks" }),
  case(fastcu, { name = "fastcu_k9_cluster_q", kernel = "matmulKernel9",
    xfail = "run by lanes 0x00000001", why = "issue 30 item 1: labels of inlined { } blocks" }),
  case(fastcu, { name = "fastcu_k10_cluster_tma_store", kernel = "matmulKernel10",
    xfail = "bytes of shared memory per block", why = "emu counts the module's static __shared__ array of another kernel (fast.cu M3::s, 32 KiB) against this one" }),
  case(fastcu, { name = "fastcu_k11_cluster_hilbert", kernel = "matmulKernel11",
    xfail = "bytes of shared memory per block", why = "emu counts the module's static __shared__ array of another kernel (fast.cu M3::s, 32 KiB) against this one" }),
  case(fastcu, { name = "fastcu_k12_cluster_tma_store", kernel = "matmulKernel12",
    xfail = "bytes of shared memory per block", why = "emu counts the module's static __shared__ array of another kernel (fast.cu M3::s, 32 KiB) against this one" }),
}
