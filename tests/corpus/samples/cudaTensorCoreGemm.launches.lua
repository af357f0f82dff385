-- launches recorded by tests/corpus/shim (do not edit)
launch {
  kernel = "_Z12compute_gemmPK6__halfS1_PKfPfff",
  grid = {132, 1, 1}, block = {256, 1, 1}, smem = 65536,
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
    [1] = {bytes = 131072, fnv = "869bfc3ffc610677", init = "data"},
    [2] = {bytes = 131072, fnv = "99437e16f72eaab3", init = "data"},
    [3] = {bytes = 262144, fnv = "8fe7c33f03ae345a", init = "data"},
    [4] = {bytes = 262144, fnv = "2469b722f7cd0383", init = "zeros"},
  },
  maps = {
  },
}
