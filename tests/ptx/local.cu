// local.cu - a per-thread array indexed at run time (local memory: .local,
// cvta.local, generic and local loads/stores), for test_emu.
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o local.ptx local.cu
extern "C" __global__ void local_hist(const unsigned *in, unsigned *out, unsigned n)
{
    unsigned h[16];
    for (int k = 0; k < 16; k++) h[k] = 0;
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned i = t; i < n; i += gridDim.x * blockDim.x) h[in[i] & 15] += 1;
    unsigned v = 0;
    for (int k = 0; k < 16; k++) v = v * 3 + h[k];
    out[t] = v;
}
