// alu_loop.cu - an arithmetic loop (float FMA and an integer LCG per step),
// for the emu speed benchmark and as a compute-bound example.
#include "mgpu_markers.h"

extern "C" __global__ void alu_loop(float *out, unsigned iters)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    float x = (float)t * 1e-3f;
    unsigned h = t;
    MGPU_BEGIN("loop");
    for (unsigned i = 0; i < iters; i++) {
        x = fmaf(x, 1.0001f, 0.5f);
        h = h * 1664525u + 1013904223u;
    }
    MGPU_END("loop");
    out[t] = x + (float)(h & 0xffu);
}
