// side_effects.cu - kernels whose second run would differ from their first:
// an atomic sum into one word, an in-place update, and one that only reads.
// The retry of a trace that did not fit must not let them see their own
// effects (tests/lua/robust_launch_spec.lua).  A kernel that never ends is
// here too, for the launch's stop and budget.
// nvcc -ptx -arch=sm_90 -O3 -lineinfo -I../../ptx side_effects.cu
#include "mgpu_markers.h"

extern "C" __global__ void atomic_sum(const float *x, float *sum, int n)
{
    MGPU_BEGIN("add");
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        MGPU_BEGIN("item");
        atomicAdd(sum, x[i]);
        MGPU_END("item");
    }
    MGPU_END("add");
}

extern "C" __global__ void scale_in_place(float *x, float a, float b, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        MGPU_BEGIN("update");
        x[i] = x[i] * a + b;
        MGPU_END("update");
    }
}

extern "C" __global__ void forever(int *flag)
{
    MGPU_BEGIN("spin");
    while (*(volatile int *)flag == 0) {
    }
    MGPU_END("spin");
}

// Never ends either, but is not a deadlock: it counts its tries while it waits (its
// registers change), so emu runs it until its time limit, budget or Ctrl-C instead of
// reporting a deadlock as it does for `forever`.
extern "C" __global__ void forever_counting(int *flag, int *tries)
{
    MGPU_BEGIN("spin");
    int n = 0;
    while (*(volatile int *)flag == 0) n++;
    MGPU_END("spin");
    tries[threadIdx.x] = n;
}

// Never ends in any test's time and reads no memory while it runs: a computation (its
// registers change every round), which no rule of emu's can take for a spin, so emu runs it
// until its time limit, budget or Ctrl-C (`forever_counting` polls a word that nothing
// changes: emu reports that as a deadlock since the third hostile round's spin rule).
extern "C" __global__ void forever_computing(int *flag, int *tries)
{
    MGPU_BEGIN("spin");
    unsigned x = threadIdx.x + (unsigned)*flag;
    for (unsigned long long i = 0; i < (1ull << 62); i++) x = x * 1664525u + 1013904223u;
    MGPU_END("spin");
    tries[threadIdx.x] = (int)x;
}
