// saxpy.cu - one element a thread (no loop): y = a * x + y, and the same with an FMA loop of
// `iters` steps per element; emubench's kernels for the cost of a warp and a block and for
// emu's footprint (two 16 MiB arrays at 16384 x 256 threads).  Regenerate the PTX with
//   nvcc -ptx -arch=sm_90 -O3 -o saxpy.ptx saxpy.cu
extern "C" __global__ void saxpy(unsigned n, float a, const float *__restrict__ x, float *__restrict__ y)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void fma_loop(unsigned n, const float *__restrict__ x, float *__restrict__ y, unsigned iters)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (unsigned k = 0; k < iters; k++) v = fmaf(v, 1.0001f, 0.5f);
    y[i] = v;
}
