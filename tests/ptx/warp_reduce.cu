// warp_reduce.cu - warp reductions with redux.sync (__reduce_*_sync), over a
// full warp and over the even lanes only (a partial member mask), and a
// __nanosleep; and match.all.sync.  out[warp * 12 + k] for k: add, min, max
// (unsigned), min, max (signed), and, or, xor over the full warp, add over the
// even lanes (written by lane 0; the odd lanes write nothing), match_all of
// the warp index (the full mask) and of x (0), and their predicates (1 + 2*0).
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o warp_reduce.ptx warp_reduce.cu
extern "C" __global__ void warp_reduce(const unsigned *x, unsigned *out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x % 32, warp = t / 32;
    unsigned v = x[t];
    __nanosleep(v % 64);
    unsigned r[12];
    r[0] = __reduce_add_sync(0xffffffffu, v);
    r[1] = __reduce_min_sync(0xffffffffu, v);
    r[2] = __reduce_max_sync(0xffffffffu, v);
    r[3] = (unsigned)__reduce_min_sync(0xffffffffu, (int)v);
    r[4] = (unsigned)__reduce_max_sync(0xffffffffu, (int)v);
    r[5] = __reduce_and_sync(0xffffffffu, v);
    r[6] = __reduce_or_sync(0xffffffffu, v);
    r[7] = __reduce_xor_sync(0xffffffffu, v);
    int same_warp, same_x;
    r[9] = __match_all_sync(0xffffffffu, warp, &same_warp);
    r[10] = __match_all_sync(0xffffffffu, v, &same_x);
    r[11] = (unsigned)same_warp + 2u * (unsigned)same_x;
    if (lane % 2 == 0) {
        r[8] = __reduce_add_sync(0x55555555u, v);
        if (lane == 0)
            for (int k = 0; k < 12; k++) out[warp * 12 + k] = r[k];
    }
}
