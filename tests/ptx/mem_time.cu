// mem_time.cu - kernels whose virtual time on emu must follow the memory system:
// a strided load (1, 2, 4 ... 32 floats apart: 1 to 32 lines a warp) and a
// shared-memory transpose read with a padding (0: 32-way bank conflicts, 1: none), and
// shared-memory atomics whose lanes hit one word (they serialise) or 32 words in 32 banks.
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -lineinfo -o mem_time.ptx mem_time.cu
extern "C" __global__ void strided(const float *x, float *y, unsigned stride, unsigned reps)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (unsigned r = 0; r < reps; r++) acc += x[(i * stride + r * 32u * stride) & 0xfffff];
  y[i] = acc;
}

// Each warp reads a column of a 32 x (32 + pad) tile: with pad 0 every lane's word is in one bank.
extern "C" __global__ void column_read(float *out, unsigned pad, unsigned reps)
{
  __shared__ float tile[32 * 33];
  unsigned t = threadIdx.x, lane = t & 31, w = t >> 5;
  for (unsigned k = t; k < 32 * 33; k += blockDim.x) tile[k] = (float)k;
  __syncthreads();
  float acc = 0.0f;
  for (unsigned r = 0; r < reps; r++) acc += tile[lane * (32 + pad) + ((w + r) & 31)];
  out[blockIdx.x * blockDim.x + t] = acc;
}

// A histogram in shared memory: lane l adds to bin (l * spread) % 32, so spread 0 puts the
// warp's 32 atomics on one word and spread 1 on 32 words in 32 banks.
extern "C" __global__ void shared_hist(unsigned *out, unsigned spread, unsigned reps)
{
  __shared__ unsigned bins[32];
  unsigned t = threadIdx.x, lane = t & 31;
  if (t < 32) bins[t] = 0;
  __syncthreads();
  for (unsigned r = 0; r < reps; r++) atomicAdd(&bins[(lane * spread + r) & 31], 1u);
  __syncthreads();
  if (t < 32) out[blockIdx.x * 32 + t] = bins[t];
}
