// roles.cu - a warp-specialised producer/consumer kernel whose lanes name their roles (MGPU_ROLE,
// issue 34), for tests/lua/roles_spec.lua in warpgroup scope: warpgroup 0 produces, its thread 0
// copying each stage into shared memory with a bulk copy; warpgroups 1.. consume, each one's
// thread 0 arriving on the stage's empty barrier when the warpgroup has read it.  The roles are
// named where a real kernel's setmaxnreg.dec / .inc sit (left out: ptxas gives this kernel 18
// registers, fewer than setmaxnreg's least, 24).
// Regenerate: nvcc -ptx -arch=sm_90a -O3 -lineinfo -o roles.ptx roles.cu
#include <stdint.h>
#include "../../ptx/mgpu_markers.h"

__device__ static inline uint32_t sa(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ static inline void bar_init(uint64_t *bar, unsigned n)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sa(bar)), "r"(n));
    asm volatile("fence.mbarrier_init.release.cluster;");
    asm volatile("fence.proxy.async.shared::cta;");
}

__device__ static inline void bar_wait(uint64_t *bar, unsigned parity)
{
    unsigned done = 0;
    uint32_t b = sa(bar);
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(b), "r"(parity) : "memory");
}

extern "C" __global__ void __launch_bounds__(384) roles(const float *in, float *out, int steps)
{
    __shared__ __align__(128) float stage[2][128];
    __shared__ __align__(8) uint64_t full[2], empty[2];
    unsigned t = threadIdx.x, wg = t / 128, consumers = blockDim.x / 128 - 1;
    if (t == 0)
        for (int s = 0; s < 2; s++) {
            bar_init(&full[s], 1);
            bar_init(&empty[s], consumers); // each consumer warpgroup's thread 0
        }
    __syncthreads();
    if (wg == 0) {
        MGPU_ROLE("producer");
        MGPU_BEGIN("produce");
        if (t == 0)
            for (int i = 0; i < steps; i++) {
                int s = i % 2;
                if (i >= 2) bar_wait(&empty[s], ((i / 2) - 1) & 1);
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&full[s])), "r"((unsigned)sizeof stage[s]) : "memory");
                asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                             ::"r"(sa(stage[s])), "l"(in + 128 * i), "r"((unsigned)sizeof stage[s]), "r"(sa(&full[s])) : "memory");
            }
        MGPU_END("produce");
    } else {
        MGPU_ROLE("consumer");
        MGPU_BEGIN("consume");
        float acc = 0;
        for (int i = 0; i < steps; i++) {
            int s = i % 2;
            bar_wait(&full[s], (i / 2) & 1);
            acc += stage[s][t % 128];
            asm volatile("bar.sync %0, 128;" ::"r"(wg) : "memory"); // this warpgroup has read the stage
            if (t % 128 == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(sa(&empty[s])) : "memory");
        }
        out[t - 128] = acc;
        MGPU_END("consume");
    }
}
