-- launches recorded by tests/corpus/shim (do not edit)
launch {
  kernel = "_Z27compute_tf32gemm_async_copyPKfS0_S0_Pfff",
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
    [1] = {bytes = 262144, fnv = "13ac7ab90f8eb9aa", init = "data"},
    [2] = {bytes = 262144, fnv = "0c19f75e6c0ddcf3", init = "data"},
    [3] = {bytes = 262144, fnv = "8fe7c33f03ae345a", init = "data"},
    [4] = {bytes = 262144, fnv = "2469b722f7cd0383", init = "zeros"},
  },
  maps = {
  },
}
-- launches recorded by tests/corpus/shim (do not edit)
launch {
  kernel = "_Z16compute_tf32gemmPKfS0_S0_Pfff",
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
    [1] = {bytes = 262144, fnv = "13ac7ab90f8eb9aa", init = "data"},
    [2] = {bytes = 262144, fnv = "0c19f75e6c0ddcf3", init = "data"},
    [3] = {bytes = 262144, fnv = "8fe7c33f03ae345a", init = "data"},
    [4] = {bytes = 262144, fnv = "2469b722f7cd0383", init = "zeros"},
  },
  maps = {
  },
}
-- launches recorded by tests/corpus/shim (do not edit)
launch {
  kernel = "_Z20simple_wmma_tf32gemmPfS_S_S_iiiff",
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
    [1] = {bytes = 262144, fnv = "13ac7ab90f8eb9aa", init = "data"},
    [2] = {bytes = 262144, fnv = "0c19f75e6c0ddcf3", init = "data"},
    [3] = {bytes = 262144, fnv = "8fe7c33f03ae345a", init = "data"},
    [4] = {bytes = 262144, fnv = "2469b722f7cd0383", init = "zeros"},
  },
  maps = {
  },
}
