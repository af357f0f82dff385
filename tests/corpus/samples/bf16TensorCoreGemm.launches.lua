-- launches recorded by tests/corpus/shim (do not edit)
launch {
  kernel = "_Z27compute_bf16gemm_async_copyPK13__nv_bfloat16S1_PKfPfff",
  grid = {264, 1, 1}, block = {256, 1, 1}, smem = 73728,
  params = {
    "00000000017d0000",
    "00000000027d0000",
    "00000000037d0000",
    "00000000047d0000",
    "cdcc8c3f",
    "9a99993f",
  },
  refs = {
    {where = "param", at = 1, off = 0, ptr = 1, delta = 0},
    {where = "param", at = 2, off = 0, ptr = 2, delta = 0},
    {where = "param", at = 3, off = 0, ptr = 3, delta = 0},
    {where = "param", at = 4, off = 0, ptr = 4, delta = 0},
  },
  allocs = {
    [1] = {bytes = 131072, fnv = "64b3715d2c0a127a", init = "data"},
    [2] = {bytes = 131072, fnv = "4e33184290ca925b", init = "data"},
    [3] = {bytes = 262144, fnv = "8fe7c33f03ae345a", init = "data"},
    [4] = {bytes = 262144, fnv = "2469b722f7cd0383", init = "zeros"},
  },
  maps = {
  },
}
-- launches recorded by tests/corpus/shim (do not edit)
launch {
  kernel = "_Z16compute_bf16gemmPK13__nv_bfloat16S1_PKfPfff",
  grid = {264, 1, 1}, block = {256, 1, 1}, smem = 73728,
  params = {
    "00000000017d0000",
    "00000000027d0000",
    "00000000037d0000",
    "00000000047d0000",
    "cdcc8c3f",
    "9a99993f",
  },
  refs = {
    {where = "param", at = 1, off = 0, ptr = 1, delta = 0},
    {where = "param", at = 2, off = 0, ptr = 2, delta = 0},
    {where = "param", at = 3, off = 0, ptr = 3, delta = 0},
    {where = "param", at = 4, off = 0, ptr = 4, delta = 0},
  },
  allocs = {
    [1] = {bytes = 131072, fnv = "64b3715d2c0a127a", init = "data"},
    [2] = {bytes = 131072, fnv = "4e33184290ca925b", init = "data"},
    [3] = {bytes = 262144, fnv = "8fe7c33f03ae345a", init = "data"},
    [4] = {bytes = 262144, fnv = "2469b722f7cd0383", init = "zeros"},
  },
  maps = {
  },
}
-- launches recorded by tests/corpus/shim (do not edit)
launch {
  kernel = "_Z20simple_wmma_bf16gemmP13__nv_bfloat16S0_PfS1_iiiff",
  grid = {4, 4, 1}, block = {128, 4, 1}, smem = 0,
  params = {
    "00000000017d0000",
    "00000000027d0000",
    "00000000037d0000",
    "00000000047d0000",
    "00010000",
    "00010000",
    "00010000",
    "cdcc8c3f",
    "9a99993f",
  },
  refs = {
    {where = "param", at = 1, off = 0, ptr = 1, delta = 0},
    {where = "param", at = 2, off = 0, ptr = 2, delta = 0},
    {where = "param", at = 3, off = 0, ptr = 3, delta = 0},
    {where = "param", at = 4, off = 0, ptr = 4, delta = 0},
  },
  allocs = {
    [1] = {bytes = 131072, fnv = "64b3715d2c0a127a", init = "data"},
    [2] = {bytes = 131072, fnv = "4e33184290ca925b", init = "data"},
    [3] = {bytes = 262144, fnv = "8fe7c33f03ae345a", init = "data"},
    [4] = {bytes = 262144, fnv = "2469b722f7cd0383", init = "zeros"},
  },
  maps = {
  },
}
