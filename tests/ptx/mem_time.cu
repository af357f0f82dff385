// mem_time.cu - kernels whose virtual time on emu must follow the memory system:
// a strided load (1, 2, 4 ... 32 floats apart: 1 to 32 lines a warp) and a
// shared-memory transpose read with a padding (0: 32-way bank conflicts, 1: none).
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
