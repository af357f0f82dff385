// warp_reduce.cu - warp reductions with redux.sync (__reduce_*_sync), over a
// full warp and over the even lanes only (a partial member mask), and a
// __nanosleep.  out[warp * 9 + k] for k: add, min, max (unsigned), min, max
// (signed), and, or, xor over the full warp, and add over the even lanes
// (written by lane 0; the odd lanes write nothing).
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o warp_reduce.ptx warp_reduce.cu
extern "C" __global__ void warp_reduce(const unsigned *x, unsigned *out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x % 32, warp = t / 32;
    unsigned v = x[t];
    __nanosleep(v % 64);
    unsigned r[9];
    r[0] = __reduce_add_sync(0xffffffffu, v);
    r[1] = __reduce_min_sync(0xffffffffu, v);
    r[2] = __reduce_max_sync(0xffffffffu, v);
    r[3] = (unsigned)__reduce_min_sync(0xffffffffu, (int)v);
    r[4] = (unsigned)__reduce_max_sync(0xffffffffu, (int)v);
    r[5] = __reduce_and_sync(0xffffffffu, v);
    r[6] = __reduce_or_sync(0xffffffffu, v);
    r[7] = __reduce_xor_sync(0xffffffffu, v);
    if (lane % 2 == 0) {
        r[8] = __reduce_add_sync(0x55555555u, v);
        if (lane == 0)
            for (int k = 0; k < 9; k++) out[warp * 9 + k] = r[k];
    }
}
