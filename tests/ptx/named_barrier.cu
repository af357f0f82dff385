// named_barrier.cu - barriers with a thread count, as warp-specialized
// kernels use them: a producer warp and a consumer warp hand a buffer back
// and forth through barriers 1 (full) and 2 (empty) with bar.sync / bar.arrive,
// while a third warp works apart and meets them only at __syncthreads; and a
// barrier whose count is never reached (emu reports the deadlock).
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o named_barrier.ptx named_barrier.cu
extern "C" __global__ void named_barriers(const unsigned *in, unsigned *out, int rounds)
{
    __shared__ unsigned buf[32];
    unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int r = 0; r < rounds; r++) {
        if (warp == 0) { // producer: waits for an empty buffer (not the first time), fills it
            if (r > 0) asm volatile("bar.sync 2, 64;" ::: "memory");
            buf[lane] = in[r * 32 + lane] * 3;
            asm volatile("bar.arrive 1, 64;" ::: "memory");
        } else if (warp == 1) { // consumer: waits for a full buffer, empties it
            asm volatile("bar.sync 1, 64;" ::: "memory");
            out[r * 32 + lane] = buf[(lane + 1) % 32] + 1;
            if (r + 1 < rounds) asm volatile("bar.arrive 2, 64;" ::: "memory");
        }
    }
    if (warp == 2) out[rounds * 32 + lane] = 1000 + lane;
    __syncthreads();
    if (warp == 2) out[rounds * 32 + lane] += out[lane];
}

extern "C" __global__ void barrier_short(unsigned *out)
{
    // 64 threads arrive at a barrier counting 96: the third warp never comes
    if (threadIdx.x < 64) asm volatile("bar.sync 3, 96;" ::: "memory");
    out[threadIdx.x] = 1;
}
