// one_branch_region.cu - a region that begins on one branch only (refused): the error names this
// file and line through the PTX's .loc as well as the PTX line (tests/lua/numbers_spec.lua).
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -lineinfo -o one_branch_region.ptx one_branch_region.cu
#include "../../ptx/mgpu_markers.h"
extern "C" __global__ void k(float *y, int n)
{
    int i = threadIdx.x;
    if (i < n) {
        MGPU_BEGIN("half");
        y[i] = 1.0f;
    }
    y[i] += 2.0f;
    MGPU_END("half");
}
