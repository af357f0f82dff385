// hopper_dynsmem.cu - the dynamic shared array beside a static variable (issue 30, item 2), for
// tests/c/test_emu_hopper.c and the device check: one warpgroup loads A (64 x 64 bf16) and B
// (64 x 64 bf16, K-major) with TMA and the 128B swizzle into `extern __shared__ __align__(DYN_ALIGN)`
// while an mbarrier, a static __shared__ variable, sits beside it; wgmma (descriptors with the same
// swizzle, base offset 0, the start moving 32 bytes along K as CUTLASS's do) gives D = A * B^T
// (f32, row-major).  offs[0]: the dynamic array's shared address, offs[1]: the static's.
// Regenerate (128: hopper_dynsmem.ptx; 1024: hopper_dynsmem_1k.ptx):
//   nvcc -ptx -arch=sm_90a -O3 -lineinfo -o hopper_dynsmem.ptx hopper_dynsmem.cu
//   nvcc -ptx -arch=sm_90a -O3 -lineinfo -DDYN_ALIGN=1024 -o hopper_dynsmem_1k.ptx hopper_dynsmem.cu
#include <cuda.h>
#include <stdint.h>

#ifndef DYN_ALIGN
#define DYN_ALIGN 128
#endif
#define TILE_BYTES (64 * 64 * 2)

__device__ static inline uint32_t sa(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

// K-major, 128-byte rows swizzled (128B), 8-row atoms 1024 bytes apart, base offset 0
__device__ static inline uint64_t desc(uint32_t addr)
{
    return (uint64_t)((addr & 0x3ffff) >> 4) | (uint64_t)1 << 16 | (uint64_t)(1024 >> 4) << 32 | (uint64_t)1 << 62;
}

extern "C" __global__ void __launch_bounds__(128, 1)
dyn_tma_wgmma(const __grid_constant__ CUtensorMap ma, const __grid_constant__ CUtensorMap mb, float *D, unsigned *offs)
{
    __shared__ __align__(8) uint64_t bar;
    extern __shared__ __align__(DYN_ALIGN) unsigned char smem[];
    uint32_t b = sa(&bar), a0 = sa(smem), b0 = sa(smem + TILE_BYTES);
    if (threadIdx.x == 0) {
        offs[0] = a0;
        offs[1] = b;
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(2 * TILE_BYTES) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     ::"r"(a0), "l"(&ma), "r"(0), "r"(0), "r"(b) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     ::"r"(b0), "l"(&mb), "r"(0), "r"(0), "r"(b) : "memory");
    }
    __syncthreads();
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(b) : "memory");
    float d[32];
    for (int i = 0; i < 32; i++) d[i] = 0.0f;
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    for (int kk = 0; kk < 4; kk++) {
        uint64_t da = desc(a0 + kk * 32), db = desc(b0 + kk * 32);
        asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, 1, 1, 1, 0, 0;"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                     : "l"(da), "l"(db));
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    // the accumulators: row 16 warp + lane / 4 + 8 ((i >> 1) & 1), column 8 (i >> 2) + 2 (lane % 4) + (i & 1)
    unsigned w = threadIdx.x / 32, l = threadIdx.x % 32;
    for (int i = 0; i < 32; i++)
        D[(w * 16 + l / 4 + 8 * ((i >> 1) & 1)) * 64 + 8 * (i >> 2) + 2 * (l % 4) + (i & 1)] = d[i];
}
