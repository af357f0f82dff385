-- cases.lua: the corpus's cases.  Each names its recorded launch (file, and a piece of the
-- kernel's mangled name that only it has), the PTX, which of the program's allocations are inputs
-- (filled from a seed: the program's own random values are not stored) and the reference
-- (tests/corpus/reference.lua).  Allocation ids are the program's cudaMalloc order.  `xfail`:
-- the message the case must fail with until emu is fixed, `why` the cause (issue 30's items) and
-- what a copy of the PTX with the cause worked around showed.

local fastcu = { launches = "fastcu/launches.lua", ptx = "fastcu/matmul.ptx", inputs = { [2] = "bf16", [3] = "bf16" },
  outputs = { [4] = "bf16" },
  check = { op = "gemm", m = 256, n = 256, k = 256, a = 2, a_layout = "mk", b = 3, b_layout = "nk", c = 4,
    c_layout = "nm", dtype = "bf16" } }

-- NVIDIA cuda-samples' WMMA GEMMs: D = alpha * A B + beta * C, A row-major, B column-major
local function sample(name, dtype)
  return { launches = "samples/" .. name .. ".launches.lua", ptx = "samples/" .. name .. ".ptx",
    inputs = { [1] = dtype, [2] = dtype, [3] = "f32" }, outputs = { [4] = "f32" },
    check = { op = "gemm", m = 256, n = 256, k = 256, a = 1, a_layout = "mk", b = 2, b_layout = "nk", c = 4,
      c_layout = "mn", alpha = 1.1, beta = 1.2, c0 = 3, dtype = dtype == "f32" and "tf32" or "f32" } }
end
local bf16s, tf32s, f16s = sample("bf16TensorCoreGemm", "bf16"), sample("tf32TensorCoreGemm", "f32"),
  sample("cudaTensorCoreGemm", "f16")

-- CUTLASS example 49 (collective builder): D = A B, f16, A row-major, B and D column-major,
-- 128x128x64 tiles, cluster 2x1x1; each ExampleRunner allocates its own A, B, C, D
local function cutlass49(a, b, d)
  return { launches = "cutlass/49_collective_builder.launches.lua", ptx = "cutlass/49_collective_builder.ptx",
    inputs = { [a] = "f16", [b] = "f16" }, outputs = { [d] = "f16" }, retype = true,
    check = { op = "gemm", m = 256, n = 256, k = 256, a = a, a_layout = "mk", b = b, b_layout = "nk", c = d,
      c_layout = "nm", dtype = "f16" }, timeout_s = 30 }
end

-- CUTLASS example 54 (fp8 GEMM, warp-specialised cooperative, cluster 1x2x1, 128x128x128 tiles, the
-- FP8 mainloop that promotes its accumulators to f32 registers), recorded with --alpha=0.5 --beta=0.5
-- --scale_a=2 --scale_b=0.5 --scale_c=2 --scale_d=0.5 --scale_aux=2: e4m3 A row-major, B, C, D and
-- aux column-major; Z = 0.5 A B + C, D = 0.5 relu(Z), aux = 2 Z (e4m3, saturating), amax_d and
-- amax_aux (f32) as max |relu(Z)| and max |Z|
local cutlass54 = { launches = "cutlass/54_hopper_fp8_warp_specialized_gemm.launches.lua",
  ptx = "cutlass/54_hopper_fp8_warp_specialized_gemm.ptx", range = 2,
  inputs = { [1] = "e4m3", [2] = "e4m3", [3] = "e4m3" }, outputs = { [4] = "e4m3", [6] = "e4m3", [8] = "f32", [10] = "f32" },
  check = { op = "gemm", m = 256, n = 256, k = 256, a = 1, a_layout = "mk", b = 2, b_layout = "nk", c = 4, c_layout = "nm",
    dtype = "e4m3", alpha = 0.5, beta = 1, c0 = 3, act = "relu", scale_d = 0.5, aux = 6, aux_dtype = "e4m3", scale_aux = 2,
    amax_d = 8, amax_aux = 10 }, timeout_s = 60 }

-- CUTLASS example 57 (grouped GEMM: the problem list, the matrices' pointers and strides, alpha and
-- beta in device memory; the kernel points its tensor maps at each group's matrices with
-- tensormap.replace): three groups from --benchmark (M x N x K 256x128x128, 128x256x256, 192x64x64),
-- e4m3 A row-major, e5m2 B column-major, f16 C and D column-major, D = alpha_g A B + beta_g C with
-- the example's rand() alphas 4, 3, 4 and betas 1, 0, 0 (recorded words), the FP8 fast-accumulation
-- mainloop; cooperative (256x128x128 tiles, cluster 1x2) and ping-pong (128x128x128, cluster 2x1).
-- Each run allocates A, B, C, D, ref D, alpha, beta anew (ids from `first`).
local function cutlass57(first)
  local a, b, c, d, alpha, beta = first, first + 1, first + 2, first + 3, first + 5, first + 6
  return { launches = "cutlass/57_hopper_grouped_gemm.launches.lua", ptx = "cutlass/57_hopper_grouped_gemm.ptx",
    range = 2, inputs = { [a] = "e4m3", [b] = "e5m2", [c] = "f16" }, outputs = { [d] = "f16" },
    check = { op = "grouped_gemm", groups = { { 256, 128, 128 }, { 128, 256, 256 }, { 192, 64, 64 } }, a = a,
      a_layout = "mk", b = b, b_layout = "nk", c = d, c0 = c, c_layout = "nm", alpha_words = alpha, beta_words = beta,
      dtype = "f16" }, placeholder_maps = true, timeout_s = 60 }
end

-- CUTLASS example 55 (mixed-input GEMM: f16 A times e4m3 B, B converted to f16 in registers on its
-- way to wgmma, optionally scaled and shifted per group of 128 k), recorded with --m=256 --n=256
-- --k=256 --g=128 --alpha=0.5 --beta=0.5 and --mode=0, 1, 2 (convert only, scale, scale and zero);
-- A row-major, B column-major, scale and zero [k / 128][n], C and D row-major (the example swaps A
-- and B for its TMA epilogue), D = 0.5 A Bdq + 0.5 C; its maps over A and the scales are UINT16
local function cutlass55(dequant)
  return { launches = "cutlass/55_hopper_mixed_dtype_gemm.launches.lua", ptx = "cutlass/55_hopper_mixed_dtype_gemm.ptx",
    inputs = { [1] = "f16", [2] = "e4m3", [4] = "f16", [7] = "f16", [8] = "f16" }, outputs = { [5] = "f16" },
    retype = true, check = { op = "gemm", m = 256, n = 256, k = 256, a = 1, a_layout = "mk", b = 2, b_layout = "nk", c = 5,
      c_layout = "mn", alpha = 0.5, beta = 0.5, c0 = 4, dequant = dequant, dtype = "f16" }, timeout_s = 60 }
end

-- CUTLASS example 67 (DeepSeek-style blockwise-scaled fp8 GEMM: warp-specialised cooperative,
-- 128x128x128 tiles, cluster 1x2x1, KernelTmaWarpSpecializedCooperativeFP8Blockwise: each k-block's
-- wgmma result is multiplied by its A and B block scales before it is added to the f32 accumulators),
-- recorded with --m=256 --n=256 --k=256 --alpha=0.5 --beta=0.5 --scale_a=2 --scale_b=0.5 --scale_c=2:
-- e4m3 A row-major, B column-major, one f32 scale per 128 x 128 block of A and of B (the program's
-- values, recorded words, M/N-major), f32 C, D and aux column-major; Z = 0.5 sum_kb sa sb (A B)_kb + C,
-- D = relu(Z), aux = Z (the epilogue scales only fp8 outputs; no amax for f32 ones)
local cutlass67 = { launches = "cutlass/67_hopper_fp8_warp_specialized_gemm_with_blockwise_scaling.launches.lua",
  ptx = "cutlass/67_hopper_fp8_warp_specialized_gemm_with_blockwise_scaling.ptx", range = 2,
  inputs = { [1] = "e4m3", [3] = "e4m3", [5] = "f32" }, outputs = { [6] = "f32", [8] = "f32" },
  check = { op = "gemm", m = 256, n = 256, k = 256, a = 1, a_layout = "mk", b = 3, b_layout = "nk", c = 6, c_layout = "nm",
    dtype = "f32", alpha = 0.5, beta = 1, c0 = 5, act = "relu", aux = 8, aux_dtype = "f32",
    blockscale = { a = 2, b = 4, m = 128, n = 128, k = 128 } }, timeout_s = 60 }

-- CUTLASS example 63 (fp8 GEMM with weight prefetch: a non-persistent warp-specialised kernel whose
-- producer warps load A (the weights) and B (the activations) apart, A's first k-tiles into spare
-- shared memory before B's dependency is released; FP8 fast accumulation, 64x64x128 tiles, no
-- cluster), recorded with --m=256 --n=64 --k=512 --alpha=0.5 --beta=0.5 (prefetch and overlap ratios
-- 0.5, its defaults): e4m3 A row-major, e5m2 B column-major, e4m3 C and D column-major,
-- D = 0.5 A B + 0.5 C (saturating)
local cutlass63 = { launches = "cutlass/63_hopper_gemm_with_weight_prefetch.launches.lua",
  ptx = "cutlass/63_hopper_gemm_with_weight_prefetch.ptx", range = 2,
  inputs = { [1] = "e4m3", [2] = "e5m2", [3] = "e4m3" }, outputs = { [4] = "e4m3" },
  check = { op = "gemm", m = 256, n = 64, k = 512, a = 1, a_layout = "mk", b = 2, b_layout = "nk", c = 4, c_layout = "nm",
    dtype = "e4m3", alpha = 0.5, beta = 0.5, c0 = 3 }, timeout_s = 60 }

-- CUTLASS example 67's groupwise program (fp8 GEMM, A scaled per row and per 128 k, B per 128 x 128
-- block: f32 scales, A's M-major [k / 128][m], B's K-major [n / 128][k / 128]; cooperative,
-- 256x128x128 tiles, cluster 1x2x1, the same FP8 blockwise mainloop), recorded with --m=256 --n=256
-- --k=256: e4m3 A row-major, B column-major, D = the accumulators (bf16, row-major; no C, no
-- epilogue op); its inputs and scales are filled by device kernels (not run): all from a seed here
local cutlass67g = { launches = "cutlass/67_hopper_fp8_warp_specialized_gemm_with_groupwise_scaling.launches.lua",
  ptx = "cutlass/67_hopper_fp8_warp_specialized_gemm_with_groupwise_scaling.ptx", range = 2,
  inputs = { [1] = "e4m3", [3] = "e4m3", [2] = "f32", [4] = "f32" }, outputs = { [5] = "bf16" },
  check = { op = "gemm", m = 256, n = 256, k = 256, a = 1, a_layout = "mk", b = 3, b_layout = "nk", c = 5, c_layout = "mn",
    dtype = "bf16", blockscale = { a = 2, b = 4, m = 1, n = 128, k = 128, b_kmajor = true } }, timeout_s = 60 }

-- CUTLASS example 61 (GEMM with a top-K + softmax epilogue: warp-specialised, 64x64x128 tiles, the
-- whole row of N = 64 in one tile), recorded with --m=256 --n=64 --k=256: f16 A row-major, B
-- column-major, D row-major f16, Z = A B / 256 (alpha 1 / k, no C), each row of D the softmax of its
-- 2 largest values of Z and 0 elsewhere; inputs in [-4, 4] so that a row's values stand apart
local cutlass61 = { launches = "cutlass/61_hopper_gemm_with_topk_and_softmax.launches.lua",
  ptx = "cutlass/61_hopper_gemm_with_topk_and_softmax.ptx", range = 4, retype = true,
  inputs = { [1] = "f16", [2] = "f16" }, outputs = { [3] = "f16" },
  check = { op = "gemm", m = 256, n = 64, k = 256, a = 1, a_layout = "mk", b = 2, b_layout = "nk", c = 3, c_layout = "mn",
    dtype = "f16", alpha = 1 / 256, topk = 2 }, timeout_s = 60 }

-- CUTLASS example 88 (Hopper attention forward, f16, f32 accumulation, --use_fast_math as its build
-- has it), recorded with --b=1 --h=2 --q=256 --k=256 --d=64 --iterations=1 and --mask=no, causal:
-- O = softmax(Q K^T / 8) V and LSE = each row's log-sum-exp (f32), Q, K, V, O [batch][head][seq][dim];
-- its three d=64 kernels (TMA 64x128 tiles; warp-specialised cooperative and ping-pong, 128x64),
-- each runner allocating Q, K, V, O, LSE anew (ids from `first`); its maps are UINT16; inputs in
-- [-3, 3] so that the scores (standard deviation near 3) make a peaked softmax, which a wrong scale shows
local function cutlass88(first, causal)
  return { launches = "cutlass/88_hopper_fmha.launches.lua", ptx = "cutlass/88_hopper_fmha.ptx",
    inputs = { [first] = "f16", [first + 1] = "f16", [first + 2] = "f16" }, outputs = { [first + 3] = "f16", [first + 4] = "f32" },
    retype = true, range = 3, check = { op = "attention", q = first, k = first + 1, v = first + 2, o = first + 3, lse = first + 4,
      batch = 1, heads = 2, seq = 256, dim = 64, causal = causal, dtype = "f16" }, timeout_s = 60 }
end

-- ThunderKittens' H100 attention forward: O = softmax(Q K^T / sqrt(D)) V, bf16 [1][1][768][D]
local function tk(dim)
  return { launches = "tk/mha_h100_d" .. dim .. ".launches.lua", ptx = "tk/mha_h100_d" .. dim .. ".ptx",
    inputs = { [1] = "bf16", [2] = "bf16", [3] = "bf16" }, outputs = { [4] = "bf16" },
    check = { op = "attention", q = 1, k = 2, v = 3, o = 4, batch = 1, heads = 1, seq = 768, dim = dim, dtype = "bf16" } }
end

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
  case(bf16s, { name = "samples_bf16_wmma_async_copy", kernel = "compute_bf16gemm_async_copy" }),
  case(bf16s, { name = "samples_bf16_wmma_shmem", kernel = "compute_bf16gemmP" }),
  case(tf32s, { name = "samples_tf32_wmma_async_copy", kernel = "compute_tf32gemm_async_copy" }),
  case(tf32s, { name = "samples_tf32_wmma_shmem", kernel = "compute_tf32gemmP" }),
  case(f16s, { name = "samples_f16_wmma_shmem", kernel = "compute_gemm" }),
  case(cutlass49(1, 2, 4), { name = "cutlass49_auto_cooperative", kernel = { "WarpSpecializedILi7E", "Cooperative" } }),
  case(cutlass49(1, 2, 4), { name = "cutlass49_u16_maps", kernel = { "WarpSpecializedILi7E", "Cooperative" },
    retype = false }), -- its maps name their type (data_type = "uint16", issue 30 item 5)
  case(cutlass49(8, 9, 11), { name = "cutlass49_5_stages", kernel = { "WarpSpecializedILi5E" } }),
  case(cutlass49(15, 16, 18), { name = "cutlass49_tma_no_ws", kernel = { "MainloopSm90TmaGmmaILi7E" } }),
  case(cutlass49(22, 23, 25), { name = "cutlass49_ws", kernel = { "KernelTmaWarpSpecializedEEEN" } }),
  case(cutlass49(29, 30, 32), { name = "cutlass49_pingpong_tma_store", kernel = { "Pingpong" } }),
  case(cutlass49(36, 37, 39), { name = "cutlass49_cooperative_stream_k", kernel = { "StreamKScheduler" } }),
  case(cutlass49(43, 44, 46), { name = "cutlass49_cooperative_evt", kernel = { "Sm90Compute" } }),
  case(tk(64), { name = "tk_attention_fwd_d64", kernel = "fwd_attend_ker" }),
  case(tk(128), { name = "tk_attention_fwd_d128", kernel = "fwd_attend_ker" }),
  case(fastcu, { name = "fastcu_k11_cluster_hilbert", kernel = "matmulKernel11" }),
  case(cutlass54, { name = "cutlass54_fp8_cooperative", kernel = "GemmUniversal" }),
  case(cutlass57(1), { name = "cutlass57_grouped_cooperative", kernel = { "GroupProblemShape", "Cooperative" } }),
  case(cutlass57(45), { name = "cutlass57_grouped_pingpong", kernel = { "GroupProblemShape", "Pingpong" } }),
  case(cutlass55(nil), { name = "cutlass55_mixed_convert", kernel = "MixedInputILi8" }),
  case(cutlass55({ scale = 7, group = 128 }), { name = "cutlass55_mixed_scale", kernel = { "MixedInput", "float_e4m3_tENS_6half_tEEE" } }),
  case(cutlass55({ scale = 7, zero = 8, group = 128 }), { name = "cutlass55_mixed_scale_zero",
    kernel = { "MixedInput", "float_e4m3_tENS_6half_tESJ_EEE" } }),
  case(fastcu, { name = "fastcu_k12_cluster_tma_store", kernel = "matmulKernel12" }),
  case(cutlass67, { name = "cutlass67_fp8_blockwise", kernel = "Blockwise" }),
  case(cutlass88(1), { name = "cutlass88_fmha_tma", kernel = { "FmhaKernelTmaI", "DefaultFusion" } }),
  case(cutlass88(9), { name = "cutlass88_fmha_cooperative", kernel = { "IndividualTileScheduler", "DefaultFusion" } }),
  case(cutlass88(17), { name = "cutlass88_fmha_pingpong", kernel = { "PersistentTileScheduler", "DefaultFusion" } }),
  case(cutlass88(1, true), { name = "cutlass88_fmha_tma_causal", kernel = { "FmhaKernelTmaI", "CausalFusion" } }),
  case(cutlass88(9, true), { name = "cutlass88_fmha_cooperative_causal", kernel = { "IndividualTileScheduler", "CausalFusion" } }),
  case(cutlass88(17, true), { name = "cutlass88_fmha_pingpong_causal", kernel = { "PersistentTileScheduler", "CausalFusion" } }),
  case(cutlass63, { name = "cutlass63_fp8_weight_prefetch", kernel = "WithPrefetch" }),
  case(cutlass61, { name = "cutlass61_topk_softmax", kernel = "TopK" }),
  case(cutlass67g, { name = "cutlass67_fp8_groupwise", kernel = "GemmUniversal" }),
}
