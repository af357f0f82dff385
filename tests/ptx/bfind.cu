// bfind.cu - bfind on emu (tests/lua/bfind_spec.lua): each form on per-thread values; the same
// instruction cooperative groups' reduce and warp-aggregated atomics compile to (__fns, the
// leader of a coalesced group: cuda-samples' warpAggregatedAtomicsCG stopped at it).
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o bfind.ptx bfind.cu
extern "C" __global__ void bfind_forms(const long long *in, unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long w = in[i];
    int v = (int)w;
    unsigned r[8];
    asm("bfind.u32 %0, %1;" : "=r"(r[0]) : "r"(v));
    asm("bfind.shiftamt.u32 %0, %1;" : "=r"(r[1]) : "r"(v));
    asm("bfind.s32 %0, %1;" : "=r"(r[2]) : "r"(v));
    asm("bfind.shiftamt.s32 %0, %1;" : "=r"(r[3]) : "r"(v));
    asm("bfind.u64 %0, %1;" : "=r"(r[4]) : "l"(w));
    asm("bfind.shiftamt.u64 %0, %1;" : "=r"(r[5]) : "l"(w));
    asm("bfind.s64 %0, %1;" : "=r"(r[6]) : "l"(w));
    asm("bfind.shiftamt.s64 %0, %1;" : "=r"(r[7]) : "l"(w));
    for (int k = 0; k < 8; k++) out[8 * i + k] = r[k];
}
