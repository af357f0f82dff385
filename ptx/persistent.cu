// persistent.cu - a persistent kernel: blocks loop taking work items from a
// global counter (atomicAdd) until none are left; item w sums its row of
// `width` ints into out[w] with a warp reduction (shfl.down) and counts
// processed items per block in done[blockIdx.x].
#include "mgpu_markers.h"

extern "C" __global__ void persistent_rows(const int *__restrict__ in, int *__restrict__ out, unsigned *counter,
                                           unsigned *done, unsigned items, unsigned width)
{
    __shared__ unsigned item;
    for (;;) {
        MGPU_BEGIN("fetch");
        if (threadIdx.x == 0) item = atomicAdd(counter, 1u);
        __syncthreads();
        unsigned w = item;
        __syncthreads();
        MGPU_END("fetch");
        if (w >= items) break;
        MGPU_BEGIN("work");
        int s = 0;
        for (unsigned j = threadIdx.x; j < width; j += 32) s += in[(size_t)w * width + j];
        for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
        if (threadIdx.x == 0) {
            out[w] = s;
            done[blockIdx.x] += 1;
        }
        MGPU_END("work");
    }
}
