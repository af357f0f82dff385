// emu_stats.cu - kernels with known memory counters for emu's exact counters
// (tests/lua/emu_stats_spec.lua): strided global loads (1, 2, 32 floats apart:
// 4, 8 and 32 sectors per request of a full warp), a 32x32 transpose through
// shared memory with and without a word of padding (32-way bank conflicts on the
// column read without it, none with it), a broadcast, a divergent loop, a local
// array indexed at run time (local memory), printf and assert; and a kernel whose
// warps all do the same work between two %globaltimer reads, for the timeline.
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -lineinfo -o emu_stats.ptx emu_stats.cu
#include <cstdio>
#include <cassert>

extern "C" __global__ void ld_stride(const float *in, float *out, int stride)
{
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[t * stride];
  out[t] = v;
}

extern "C" __global__ void transpose32(const float *in, float *out)
{
  __shared__ float tile[32][32];
  int x = threadIdx.x, y = threadIdx.y;
  tile[y][x] = in[y * 32 + x];
  __syncthreads();
  out[y * 32 + x] = tile[x][y];
}

extern "C" __global__ void transpose32_padded(const float *in, float *out)
{
  __shared__ float tile[32][33];
  int x = threadIdx.x, y = threadIdx.y;
  tile[y][x] = in[y * 32 + x];
  __syncthreads();
  out[y * 32 + x] = tile[x][y];
}

extern "C" __global__ void broadcast(const float *in, float *out)
{
  __shared__ float s[32];
  if (threadIdx.x < 32) s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = s[5];
}

// lane l runs the loop l times: its body's loads have 31, 30, ... 1 lanes
extern "C" __global__ void divergent(const int *in, int *out)
{
  int lane = threadIdx.x & 31, acc = 0;
#pragma unroll 1
  for (int i = 0; i < lane; i++) acc += in[i];
  out[threadIdx.x] = acc;
}

// an array indexed at run time lives in local memory
extern "C" __global__ void local_array(int *out, int k)
{
  int a[16];
#pragma unroll
  for (int i = 0; i < 16; i++) a[i] = i * k;
  out[threadIdx.x] = a[(threadIdx.x + k) & 15];
}

extern "C" __global__ void say(int n, float x)
{
  if (threadIdx.x < 2) printf("block %d thread %d: n=%d x=%.2f %s|%5x|%-3c|\n", blockIdx.x, threadIdx.x, n, x, "ok", n, 'a' + threadIdx.x);
  assert(n != 13);
}

// every warp: the same dependent FMAs between two reads of %globaltimer
extern "C" __global__ void same_work(unsigned long long *t, float *sink, int iters)
{
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  float a = threadIdx.x;
#pragma unroll 1
  for (int i = 0; i < iters; i++) a = a * 1.0001f + 0.5f;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if ((threadIdx.x & 31) == 0) { t[2 * w] = t0; t[2 * w + 1] = t1; }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = a;
}
