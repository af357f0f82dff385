// memmix.cu - memory access patterns for checking that a change of how emu computes its memory
// hierarchy's timing keeps every cycle (scripts/bench/memtime_same.lua): a pseudo-random gather
// over n floats (L1 and L2 hits, misses and evictions as n grows), a strided read with partial
// warps, 8-byte loads straddling lines, atomics into a histogram, and ld.cg.
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o memmix.ptx memmix.cu
extern "C" __global__ void gather(const float *x, float *y, unsigned n, unsigned reps, unsigned seed)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x, h = i * 2654435761u + seed;
  float acc = 0.0f;
  for (unsigned r = 0; r < reps; r++) {
    h = h * 1664525u + 1013904223u;
    // lanes of a warp share a neighbourhood half the time (a few lines), else scatter
    unsigned j = (r & 1) ? (h >> 8) % n : ((h >> 13) % (n / 64)) * 64 + (threadIdx.x & 31) * 2;
    acc += x[j % n];
  }
  y[i] = acc;
}

extern "C" __global__ void mixed(const float *x, float *y, unsigned *hist, unsigned n, unsigned reps)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (unsigned r = 0; r < reps; r++) {
    unsigned j = (i * 3u + r * 977u) % (n - 2);
    if ((threadIdx.x + r) % 3) acc += x[j];                              // a partial warp, stride 3
    const double *d = (const double *)(x + ((j * 5u) & ~1u) % (n - 2)); // 8-byte loads
    acc += (float)*d;
    acc += __ldcg(x + (j * 7u) % n);                                     // L2 only
    atomicAdd(hist + (j & 1023), 1u);
    if (r & 1) y[(j * 11u) % n] = acc;                                   // scattered stores
  }
  y[i % n] += acc;
}
