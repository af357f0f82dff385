-- launches recorded by tests/corpus/shim (do not edit)
launch {
  kernel = "_Z12warmupKernelv",
  grid = {1024, 1, 1}, block = {1024, 1, 1}, smem = 0,
  params = {
  },
  refs = {
  },
  allocs = {
  },
  maps = {
  },
}
launch {
  kernel = "_Z15sgemmWarptilingILi128ELi128ELi16ELi64ELi64ELi4ELi8ELi4ELi128EEviiiP13__nv_bfloat16S1_S1_",
  grid = {2, 2, 1}, block = {128, 1, 1}, smem = 0,
  params = {
    "00010000",
    "00010000",
    "00010000",
    "00000000027d0000",
    "00000000037d0000",
    "00000000047d0000",
  },
  refs = {
    {where = "param", at = 4, off = 0, ptr = 2, delta = 0},
    {where = "param", at = 5, off = 0, ptr = 3, delta = 0},
    {where = "param", at = 6, off = 0, ptr = 4, delta = 0},
  },
  allocs = {
    [2] = {bytes = 131072, fnv = "dc72bb708dbe6220", init = "data"},
    [3] = {bytes = 131072, fnv = "a13e082da8a3efab", init = "data"},
    [4] = {bytes = 131072, fnv = "83f7c309b5b50383", init = "zeros"},
  },
  maps = {
  },
}
launch {
  kernel = "_ZN2M213matmulKernel2ILi64ELi64ELi64ELi64ELi64ELi16ELi128EEEviiiP13__nv_bfloat16PK14CUtensorMap_stS5_",
  grid = {16, 1, 1}, block = {128, 1, 1}, smem = 0,
  params = {
    "00010000",
    "00010000",
    "00010000",
    "00000000047d0000",
    "00000000067d0000",
    "00000000077d0000",
  },
  refs = {
    {where = "param", at = 4, off = 0, ptr = 4, delta = 0},
    {where = "param", at = 5, off = 0, ptr = 6, delta = 0},
    {where = "param", at = 6, off = 0, ptr = 7, delta = 0},
    {where = "alloc", at = 6, off = 0, map = 1},
    {where = "alloc", at = 7, off = 0, map = 2},
  },
  allocs = {
    [2] = {bytes = 131072, fnv = "dc72bb708dbe6220", init = "data"},
    [3] = {bytes = 131072, fnv = "a13e082da8a3efab", init = "data"},
    [4] = {bytes = 131072, fnv = "83f7c309b5b50383", init = "zeros"},
    [6] = {bytes = 128, fnv = "ef3fba25622ba3a5", init = "words", words = {1347571523,1,1297371989,1,1,1,0,29,}},
    [7] = {bytes = 128, fnv = "7211e5b886889f86", init = "words", words = {1347571523,1,1297371989,1,2,1,0,29,}},
  },
  maps = {
    [1] = {type = 9, rank = 2, alloc = 2, delta = 0, dims = {256, 256}, strides = {512}, box = {64, 64}, element_strides = {1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
    [2] = {type = 9, rank = 2, alloc = 3, delta = 0, dims = {256, 256}, strides = {512}, box = {64, 64}, element_strides = {1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
  },
}
launch {
  kernel = "_ZN2M313matmulKernel3ILi128ELi128ELi64ELi128ELb1EEEviiiP13__nv_bfloat16PK14CUtensorMap_stS5_Pi",
  grid = {4, 1, 1}, block = {128, 1, 1}, smem = 32768,
  params = {
    "00010000",
    "00010000",
    "00010000",
    "00000000047d0000",
    "00000000087d0000",
    "00000000097d0000",
    "00000000017d0000",
  },
  refs = {
    {where = "param", at = 4, off = 0, ptr = 4, delta = 0},
    {where = "param", at = 5, off = 0, ptr = 8, delta = 0},
    {where = "param", at = 6, off = 0, ptr = 9, delta = 0},
    {where = "param", at = 7, off = 0, ptr = 1, delta = 0},
    {where = "alloc", at = 8, off = 0, map = 3},
    {where = "alloc", at = 9, off = 0, map = 4},
  },
  allocs = {
    [1] = {bytes = 131072, fnv = "3735b73346670383", init = "words", words = {4294967295,32768,}},
    [2] = {bytes = 131072, fnv = "dc72bb708dbe6220", init = "data"},
    [3] = {bytes = 131072, fnv = "a13e082da8a3efab", init = "data"},
    [4] = {bytes = 131072, fnv = "83f7c309b5b50383", init = "zeros"},
    [8] = {bytes = 128, fnv = "f4e4114baae59b67", init = "words", words = {1347571523,1,1297371989,1,3,1,0,29,}},
    [9] = {bytes = 128, fnv = "6124e045ac5ab840", init = "words", words = {1347571523,1,1297371989,1,4,1,0,29,}},
  },
  maps = {
    [3] = {type = 9, rank = 2, alloc = 2, delta = 0, dims = {256, 256}, strides = {512}, box = {64, 128}, element_strides = {1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
    [4] = {type = 9, rank = 2, alloc = 3, delta = 0, dims = {256, 256}, strides = {512}, box = {64, 128}, element_strides = {1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
  },
}
launch {
  kernel = "_ZN2M313matmulKernel3ILi128ELi128ELi64ELi128ELb0EEEviiiP13__nv_bfloat16PK14CUtensorMap_stS5_Pi",
  grid = {4, 1, 1}, block = {128, 1, 1}, smem = 32768,
  params = {
    "00010000",
    "00010000",
    "00010000",
    "00000000047d0000",
    "00000000087d0000",
    "00000000097d0000",
    "0000000000000000",
  },
  refs = {
    {where = "param", at = 4, off = 0, ptr = 4, delta = 0},
    {where = "param", at = 5, off = 0, ptr = 8, delta = 0},
    {where = "param", at = 6, off = 0, ptr = 9, delta = 0},
    {where = "alloc", at = 8, off = 0, map = 3},
    {where = "alloc", at = 9, off = 0, map = 4},
  },
  allocs = {
    [2] = {bytes = 131072, fnv = "dc72bb708dbe6220", init = "data"},
    [3] = {bytes = 131072, fnv = "a13e082da8a3efab", init = "data"},
    [4] = {bytes = 131072, fnv = "83f7c309b5b50383", init = "zeros"},
    [8] = {bytes = 128, fnv = "f4e4114baae59b67", init = "words", words = {1347571523,1,1297371989,1,3,1,0,29,}},
    [9] = {bytes = 128, fnv = "6124e045ac5ab840", init = "words", words = {1347571523,1,1297371989,1,4,1,0,29,}},
  },
  maps = {
    [3] = {type = 9, rank = 2, alloc = 2, delta = 0, dims = {256, 256}, strides = {512}, box = {64, 128}, element_strides = {1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
    [4] = {type = 9, rank = 2, alloc = 3, delta = 0, dims = {256, 256}, strides = {512}, box = {64, 128}, element_strides = {1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
  },
}
launch {
  kernel = "_ZN2M413matmulKernel4ILi128ELi128ELi64ELi256ELi5EEEviiiP13__nv_bfloat16PK14CUtensorMap_stS5_",
  grid = {4, 1, 1}, block = {256, 1, 1}, smem = 163840,
  params = {
    "00010000",
    "00010000",
    "00010000",
    "00000000047d0000",
    "000000000a7d0000",
    "000000000b7d0000",
  },
  refs = {
    {where = "param", at = 4, off = 0, ptr = 4, delta = 0},
    {where = "param", at = 5, off = 0, ptr = 10, delta = 0},
    {where = "param", at = 6, off = 0, ptr = 11, delta = 0},
    {where = "alloc", at = 10, off = 0, map = 5},
    {where = "alloc", at = 11, off = 0, map = 6},
  },
  allocs = {
    [2] = {bytes = 131072, fnv = "dc72bb708dbe6220", init = "data"},
    [3] = {bytes = 131072, fnv = "a13e082da8a3efab", init = "data"},
    [4] = {bytes = 131072, fnv = "83f7c309b5b50383", init = "zeros"},
    [10] = {bytes = 128, fnv = "e3f70bd8d0b7b421", init = "words", words = {1347571523,1,1297371989,1,5,1,0,29,}},
    [11] = {bytes = 128, fnv = "66c9376bf514b002", init = "words", words = {1347571523,1,1297371989,1,6,1,0,29,}},
  },
  maps = {
    [5] = {type = 9, rank = 2, alloc = 2, delta = 0, dims = {256, 256}, strides = {512}, box = {64, 128}, element_strides = {1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
    [6] = {type = 9, rank = 2, alloc = 3, delta = 0, dims = {256, 256}, strides = {512}, box = {64, 128}, element_strides = {1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
  },
}
launch {
  kernel = "_ZN2M513matmulKernel5ILi128ELi256ELi64ELi384ELi3EEEviiiP13__nv_bfloat16PK14CUtensorMap_stS5_",
  grid = {2, 1, 1}, block = {384, 1, 1}, smem = 147456,
  params = {
    "00010000",
    "00010000",
    "00010000",
    "00000000047d0000",
    "000000000c7d0000",
    "000000000d7d0000",
  },
  refs = {
    {where = "param", at = 4, off = 0, ptr = 4, delta = 0},
    {where = "param", at = 5, off = 0, ptr = 12, delta = 0},
    {where = "param", at = 6, off = 0, ptr = 13, delta = 0},
    {where = "alloc", at = 12, off = 0, map = 7},
    {where = "alloc", at = 13, off = 0, map = 8},
  },
  allocs = {
    [2] = {bytes = 131072, fnv = "dc72bb708dbe6220", init = "data"},
    [3] = {bytes = 131072, fnv = "a13e082da8a3efab", init = "data"},
    [4] = {bytes = 131072, fnv = "83f7c309b5b50383", init = "zeros"},
    [12] = {bytes = 128, fnv = "e99b62ff1971abe3", init = "words", words = {1347571523,1,1297371989,1,7,1,0,29,}},
    [13] = {bytes = 128, fnv = "82feeb2b60b686cc", init = "words", words = {1347571523,1,1297371989,1,8,1,0,29,}},
  },
  maps = {
    [7] = {type = 9, rank = 2, alloc = 2, delta = 0, dims = {256, 256}, strides = {512}, box = {64, 128}, element_strides = {1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
    [8] = {type = 9, rank = 2, alloc = 3, delta = 0, dims = {256, 256}, strides = {512}, box = {64, 256}, element_strides = {1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
  },
}
launch {
  kernel = "_ZN2M613matmulKernel6ILi128ELi256ELi64ELi384ELi3ELi128EEEviiiP13__nv_bfloat1614CUtensorMap_stS3_",
  grid = {128, 1, 1}, block = {384, 1, 1}, smem = 147456,
  params = {
    "00010000",
    "00010000",
    "00010000",
    "00000000047d0000",
    "434f52505553544d090000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "434f52505553544d0a0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
  },
  refs = {
    {where = "param", at = 4, off = 0, ptr = 4, delta = 0},
    {where = "param", at = 5, off = 0, map = 9},
    {where = "param", at = 6, off = 0, map = 10},
  },
  allocs = {
    [2] = {bytes = 131072, fnv = "dc72bb708dbe6220", init = "data"},
    [3] = {bytes = 131072, fnv = "a13e082da8a3efab", init = "data"},
    [4] = {bytes = 131072, fnv = "83f7c309b5b50383", init = "zeros"},
  },
  maps = {
    [9] = {type = 9, rank = 2, alloc = 2, delta = 0, dims = {256, 256}, strides = {512}, box = {64, 128}, element_strides = {1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
    [10] = {type = 9, rank = 2, alloc = 3, delta = 0, dims = {256, 256}, strides = {512}, box = {64, 256}, element_strides = {1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
  },
}
launch {
  kernel = "_ZN2M713matmulKernel7ILi128ELi256ELi64ELi384ELi3ELi128EEEviiiP13__nv_bfloat1614CUtensorMap_stS3_",
  grid = {128, 1, 1}, block = {384, 1, 1}, smem = 147456,
  params = {
    "00010000",
    "00010000",
    "00010000",
    "00000000047d0000",
    "434f52505553544d0b0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "434f52505553544d0c0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
  },
  refs = {
    {where = "param", at = 4, off = 0, ptr = 4, delta = 0},
    {where = "param", at = 5, off = 0, map = 11},
    {where = "param", at = 6, off = 0, map = 12},
  },
  allocs = {
    [2] = {bytes = 131072, fnv = "dc72bb708dbe6220", init = "data"},
    [3] = {bytes = 131072, fnv = "a13e082da8a3efab", init = "data"},
    [4] = {bytes = 131072, fnv = "83f7c309b5b50383", init = "zeros"},
  },
  maps = {
    [11] = {type = 9, rank = 5, alloc = 2, delta = 0, dims = {64, 256, 4, 1, 1}, strides = {512, 128, 0, 0}, box = {64, 128, 1, 1, 1}, element_strides = {1, 1, 1, 1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
    [12] = {type = 9, rank = 5, alloc = 3, delta = 0, dims = {64, 256, 4, 1, 1}, strides = {512, 128, 0, 0}, box = {64, 256, 1, 1, 1}, element_strides = {1, 1, 1, 1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
  },
}
launch {
  kernel = "_ZN2M813matmulKernel8ILi128ELi256ELi64ELi384ELi3ELi128ELi2ELi1EEEviiiP13__nv_bfloat1614CUtensorMap_stS3_",
  grid = {128, 1, 1}, block = {384, 1, 1}, smem = 147456,
  params = {
    "00010000",
    "00010000",
    "00010000",
    "00000000047d0000",
    "434f52505553544d0d0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "434f52505553544d0e0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
  },
  refs = {
    {where = "param", at = 4, off = 0, ptr = 4, delta = 0},
    {where = "param", at = 5, off = 0, map = 13},
    {where = "param", at = 6, off = 0, map = 14},
  },
  allocs = {
    [2] = {bytes = 131072, fnv = "dc72bb708dbe6220", init = "data"},
    [3] = {bytes = 131072, fnv = "a13e082da8a3efab", init = "data"},
    [4] = {bytes = 131072, fnv = "83f7c309b5b50383", init = "zeros"},
  },
  maps = {
    [13] = {type = 9, rank = 3, alloc = 2, delta = 0, dims = {64, 256, 4}, strides = {512, 128}, box = {64, 128, 1}, element_strides = {1, 1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
    [14] = {type = 9, rank = 3, alloc = 3, delta = 0, dims = {64, 256, 4}, strides = {512, 128}, box = {64, 256, 1}, element_strides = {1, 1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
  },
}
launch {
  kernel = "_ZN2M913matmulKernel9ILi128ELi256ELi64ELi384ELi3ELi128ELi2ELi1EEEviiiP13__nv_bfloat1614CUtensorMap_stS3_",
  grid = {128, 1, 1}, block = {384, 1, 1}, smem = 147456,
  params = {
    "00010000",
    "00010000",
    "00010000",
    "00000000047d0000",
    "434f52505553544d0f0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "434f52505553544d100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
  },
  refs = {
    {where = "param", at = 4, off = 0, ptr = 4, delta = 0},
    {where = "param", at = 5, off = 0, map = 15},
    {where = "param", at = 6, off = 0, map = 16},
  },
  allocs = {
    [2] = {bytes = 131072, fnv = "dc72bb708dbe6220", init = "data"},
    [3] = {bytes = 131072, fnv = "a13e082da8a3efab", init = "data"},
    [4] = {bytes = 131072, fnv = "83f7c309b5b50383", init = "zeros"},
  },
  maps = {
    [15] = {type = 9, rank = 3, alloc = 2, delta = 0, dims = {64, 256, 4}, strides = {512, 128}, box = {64, 128, 1}, element_strides = {1, 1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
    [16] = {type = 9, rank = 3, alloc = 3, delta = 0, dims = {64, 256, 4}, strides = {512, 128}, box = {64, 256, 1}, element_strides = {1, 1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
  },
}
launch {
  kernel = "_ZN3M1014matmulKernel10ILi128ELi256ELi64ELi384ELi3ELi128ELi2ELi1EEEviii14CUtensorMap_stS1_S1_",
  grid = {128, 1, 1}, block = {384, 1, 1}, smem = 213120,
  params = {
    "00010000",
    "00010000",
    "00010000",
    "434f52505553544d130000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "434f52505553544d110000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "434f52505553544d120000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
  },
  refs = {
    {where = "param", at = 4, off = 0, map = 19},
    {where = "param", at = 5, off = 0, map = 17},
    {where = "param", at = 6, off = 0, map = 18},
  },
  allocs = {
    [2] = {bytes = 131072, fnv = "dc72bb708dbe6220", init = "data"},
    [3] = {bytes = 131072, fnv = "a13e082da8a3efab", init = "data"},
    [4] = {bytes = 131072, fnv = "83f7c309b5b50383", init = "zeros"},
  },
  maps = {
    [17] = {type = 9, rank = 3, alloc = 2, delta = 0, dims = {64, 256, 4}, strides = {512, 128}, box = {64, 128, 1}, element_strides = {1, 1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
    [18] = {type = 9, rank = 3, alloc = 3, delta = 0, dims = {64, 256, 4}, strides = {512, 128}, box = {64, 256, 1}, element_strides = {1, 1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
    [19] = {type = 9, rank = 3, alloc = 4, delta = 0, dims = {64, 256, 4}, strides = {512, 128}, box = {64, 256, 2}, element_strides = {1, 1, 1}, interleave = 0, swizzle = 0, l2 = 0, oob = 0},
  },
}
launch {
  kernel = "_ZN3M1114matmulKernel11ILi128ELi256ELi64ELi384ELi3ELi128ELi2ELi1EEEviii14CUtensorMap_stS1_S1_Pi",
  grid = {128, 1, 1}, block = {384, 1, 1}, smem = 213632,
  params = {
    "00010000",
    "00010000",
    "00010000",
    "434f52505553544d160000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "434f52505553544d140000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "434f52505553544d150000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "000000000e7d0000",
  },
  refs = {
    {where = "param", at = 4, off = 0, map = 22},
    {where = "param", at = 5, off = 0, map = 20},
    {where = "param", at = 6, off = 0, map = 21},
    {where = "param", at = 7, off = 0, ptr = 14, delta = 0},
  },
  allocs = {
    [2] = {bytes = 131072, fnv = "dc72bb708dbe6220", init = "data"},
    [3] = {bytes = 131072, fnv = "a13e082da8a3efab", init = "data"},
    [4] = {bytes = 131072, fnv = "83f7c309b5b50383", init = "zeros"},
    [14] = {bytes = 65536, fnv = "dafec9c75fc36be7", init = "words", words = {0,1,4294967295,8191,0,8192,}},
  },
  maps = {
    [20] = {type = 9, rank = 3, alloc = 2, delta = 0, dims = {64, 256, 4}, strides = {512, 128}, box = {64, 128, 1}, element_strides = {1, 1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
    [21] = {type = 9, rank = 3, alloc = 3, delta = 0, dims = {64, 256, 4}, strides = {512, 128}, box = {64, 256, 1}, element_strides = {1, 1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
    [22] = {type = 9, rank = 3, alloc = 4, delta = 0, dims = {64, 256, 4}, strides = {512, 128}, box = {64, 256, 2}, element_strides = {1, 1, 1}, interleave = 0, swizzle = 0, l2 = 0, oob = 0},
  },
}
launch {
  kernel = "_ZN3M1214matmulKernel12ILi128ELi256ELi64ELi384ELi3ELi128ELi2ELi1EEEviii14CUtensorMap_stS1_S1_Pi",
  grid = {128, 1, 1}, block = {384, 1, 1}, smem = 221824,
  params = {
    "00010000",
    "00010000",
    "00010000",
    "434f52505553544d190000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "434f52505553544d170000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "434f52505553544d180000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "000000000f7d0000",
  },
  refs = {
    {where = "param", at = 4, off = 0, map = 25},
    {where = "param", at = 5, off = 0, map = 23},
    {where = "param", at = 6, off = 0, map = 24},
    {where = "param", at = 7, off = 0, ptr = 15, delta = 0},
  },
  allocs = {
    [2] = {bytes = 131072, fnv = "dc72bb708dbe6220", init = "data"},
    [3] = {bytes = 131072, fnv = "a13e082da8a3efab", init = "data"},
    [4] = {bytes = 131072, fnv = "83f7c309b5b50383", init = "zeros"},
    [15] = {bytes = 65536, fnv = "dafec9c75fc36be7", init = "words", words = {0,1,4294967295,8191,0,8192,}},
  },
  maps = {
    [23] = {type = 9, rank = 3, alloc = 2, delta = 0, dims = {64, 256, 4}, strides = {512, 128}, box = {64, 128, 1}, element_strides = {1, 1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
    [24] = {type = 9, rank = 3, alloc = 3, delta = 0, dims = {64, 256, 4}, strides = {512, 128}, box = {64, 256, 1}, element_strides = {1, 1, 1}, interleave = 0, swizzle = 3, l2 = 0, oob = 0},
    [25] = {type = 9, rank = 3, alloc = 4, delta = 0, dims = {64, 256, 4}, strides = {512, 128}, box = {72, 256, 1}, element_strides = {1, 1, 1}, interleave = 0, swizzle = 0, l2 = 0, oob = 0},
  },
}
