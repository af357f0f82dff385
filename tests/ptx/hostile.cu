// hostile.cu - kernels of issue 36's hostile round (tests/robust/round4.sh, class emu): a spin
// on a flag that counts its polls in a register (a deadlock emu reports, naming the load), a
// wgmma.mma_async that only some warps of the warpgroup run, and a shfl.sync whose source lane
// did not execute it (faults a GPU gives as a hang or an undefined value; emu names the line),
// and a read past a small shared array.
// Regenerate: nvcc -ptx -arch=sm_90a -O3 -o hostile.ptx hostile.cu
#include <stdint.h>

extern "C" __global__ void spin_count(volatile unsigned *flag, unsigned *out)
{
    unsigned n = 0;
    while (flag[0] == 0) n++;
    out[blockIdx.x * blockDim.x + threadIdx.x] = n;
}

// the first `warps` warps of the warpgroup run one m64n8k16 wgmma on zeroed tiles
extern "C" __global__ void wgmma_some(float *out, unsigned warps)
{
    __shared__ alignas(1024) unsigned char s[2048];
    for (unsigned i = threadIdx.x; i < sizeof s; i += blockDim.x) s[i] = 0;
    __syncthreads();
    float d0 = 1, d1 = 1, d2 = 1, d3 = 1;
    uint32_t a = (uint32_t)__cvta_generic_to_shared(s);
    uint64_t da = (uint64_t)((a & 0x3ffff) >> 4) | 8ull << 16 | 16ull << 32;
    uint64_t db = da + (1024 >> 4);
    if (threadIdx.x < 32 * warps) {
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, 1, 1, 1, 0, 0;"
                     : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "l"(da), "l"(db));
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    }
    out[threadIdx.x] = d0 + d1 + d2 + d3;
}

// the first `lanes` lanes of the warp shuffle with a full member mask, each reading lane + 1
extern "C" __global__ void shfl_some(unsigned *out, unsigned lanes)
{
    unsigned v = threadIdx.x * 10;
    if (threadIdx.x < lanes) v = __shfl_sync(0xffffffffu, v, (threadIdx.x + 1) % 32);
    out[threadIdx.x] = v;
}

// reads s[threadIdx.x + i] of a 128-byte shared array: i = 32 reads past it (the block has no
// more shared memory; a GPU faults, emu used to round the block's shared memory up to 1 KiB)
extern "C" __global__ void smem_past(float *out, int i)
{
    __shared__ float s[32];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x + i];
}
