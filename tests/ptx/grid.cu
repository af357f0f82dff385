// grid.cu - kernels whose blocks wait on other blocks, for emu's device-wide
// scheduler: a scan chained by blockIdx (block b waits for b-1's prefix), a
// single-pass scan with decoupled look-back (CUB's scheme: aggregates, then
// inclusive prefixes), a persistent queue (an atomic ticket and per-item
// flags), a cooperative grid.sync() reduction, and a grid-wide spin that
// nothing releases (a deadlock emu must report).
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -lineinfo -o grid.ptx grid.cu
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__device__ int block_sum(int v)
{
  __shared__ int s[1024];
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 0; k /= 2) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  int r = s[0];
  __syncthreads();
  return r;
}

// out[b] = x[0] + ... + x[b] over blocks: block b waits for block b-1's prefix.
extern "C" __global__ void chained_scan(const int *x, int *prefix, volatile unsigned *ready)
{
  unsigned b = blockIdx.x;
  int sum = block_sum(x[b * blockDim.x + threadIdx.x]);
  if (threadIdx.x == 0) {
    int before = 0;
    if (b > 0) {
      while (ready[b - 1] == 0) {}
      __threadfence();
      before = prefix[b - 1];
    }
    prefix[b] = before + sum;
    __threadfence();
    ready[b] = 1;
  }
}

// Inclusive scan of x (one element a thread) in one pass: each block publishes its aggregate
// (state 1), looks back over its predecessors until one has published an inclusive prefix
// (state 2), then publishes its own.  state[b] = value << 2 | flag.
extern "C" __global__ void lookback_scan(const int *x, int *out, unsigned long long *state)
{
  __shared__ int before;
  unsigned b = blockIdx.x, i = b * blockDim.x + threadIdx.x;
  int v = x[i];
  // the block's inclusive scan, in shared memory
  __shared__ int s[1024];
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned k = 1; k < blockDim.x; k *= 2) {
    int t = threadIdx.x >= k ? s[threadIdx.x - k] : 0;
    __syncthreads();
    s[threadIdx.x] += t;
    __syncthreads();
  }
  int agg = s[blockDim.x - 1];
  if (threadIdx.x == 0) {
    volatile unsigned long long *st = state;
    if (b == 0) {
      st[0] = (unsigned long long)(unsigned)agg << 2 | 2;
      before = 0;
    } else {
      st[b] = (unsigned long long)(unsigned)agg << 2 | 1;
      int acc = 0;
      for (int p = (int)b - 1; p >= 0;) {
        unsigned long long w = st[p];
        if ((w & 3) == 0) continue; // not published yet: look again
        acc += (int)(unsigned)(w >> 2);
        if ((w & 3) == 2) break;    // an inclusive prefix: done
        p--;
      }
      __threadfence();
      st[b] = (unsigned long long)(unsigned)(acc + agg) << 2 | 2;
      before = acc;
    }
  }
  __syncthreads();
  out[i] = before + s[threadIdx.x];
}

// A persistent queue: blocks take items by an atomic ticket; item t adds x[t] to item t-1's
// running sum once t-1 has published it (ready[t] = 1).  out[t] = x[0] + ... + x[t].
extern "C" __global__ void persistent_queue(const int *x, int *out, volatile unsigned *ready, unsigned *ticket,
                                            unsigned n, unsigned *taken)
{
  __shared__ unsigned t;
  for (;;) {
    if (threadIdx.x == 0) t = atomicAdd(ticket, 1u);
    __syncthreads();
    unsigned item = t;
    __syncthreads();
    if (item >= n) break;
    if (threadIdx.x == 0) {
      int before = 0;
      if (item > 0) {
        while (ready[item - 1] == 0) {}
        __threadfence();
        before = out[item - 1];
      }
      out[item] = before + x[item];
      __threadfence();
      ready[item] = 1;
      atomicAdd(&taken[blockIdx.x], 1u);
    }
  }
}

// Cooperative: every block adds its part, the grid syncs, every element is divided by the total.
extern "C" __global__ void grid_normalise(float *x, float *partial, float *total, unsigned n)
{
  cg::grid_group g = cg::this_grid();
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.0f;
  __shared__ float s[256];
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 0; k /= 2) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
  g.sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    float t = 0;
    for (unsigned b = 0; b < gridDim.x; b++) t += partial[b];
    *total = t;
  }
  g.sync();
  if (i < n) x[i] = v / *total;
}

// Every block waits for a flag that nothing sets: a deadlock.
extern "C" __global__ void spin_forever(volatile unsigned *flag, unsigned *out)
{
  if (threadIdx.x == 0)
    while (flag[0] == 0) {}
  __syncthreads();
  out[blockIdx.x] = 1;
}
