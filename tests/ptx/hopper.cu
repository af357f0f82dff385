// hopper.cu - Hopper-only kernels (sm_90a) with markers: a thread-block
// cluster (__cluster_dims__, distributed shared memory, cluster barriers) and
// a warp-specialized TMA kernel (a __grid_constant__ CUtensorMap, mbarrier
// expect_tx / try_wait, cp.async.bulk.tensor, setmaxnreg).  They must
// instrument and pass ptxas -arch=sm_90a in both scopes; emu refuses both by
// name (tests/lua/instrument_spec.lua, tests/ptxas_check.sh).  On a GPU the
// device check gives tma_like a 16 x 4 box of an f32 tensor and checks what
// the two consumer warpgroups write (scripts/device/check.lua).
// Regenerate: nvcc -ptx -arch=sm_90a -O3 -o hopper.ptx hopper.cu
#include <cuda.h>
#include <cooperative_groups.h>
#include "../../ptx/mgpu_markers.h"
namespace cg = cooperative_groups;

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1) clustered(float *x)
{
    cg::cluster_group cluster = cg::this_cluster();
    __shared__ float s[128];
    MGPU_BEGIN("local");
    s[threadIdx.x] = x[blockIdx.x * 128 + threadIdx.x];
    cluster.sync();
    MGPU_END("local");
    MGPU_BEGIN("remote");
    float *peer = cluster.map_shared_rank(s, (cluster.block_rank() + 1) % 2);
    x[blockIdx.x * 128 + threadIdx.x] = peer[threadIdx.x];
    cluster.sync();
    MGPU_END("remote");
}

extern "C" __global__ void __launch_bounds__(384, 1) tma_like(const __grid_constant__ CUtensorMap tmap, float *out)
{
    __shared__ alignas(128) float tile[64];
    __shared__ alignas(8) unsigned long long bar;
    unsigned wg = threadIdx.x / 128;
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"((unsigned)__cvta_generic_to_shared(&bar)));
        asm volatile("fence.proxy.async.shared::cta;");
    }
    __syncthreads();
    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        MGPU_BEGIN("producer");
        if (threadIdx.x == 0) {
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 256;" :: "r"((unsigned)__cvta_generic_to_shared(&bar)));
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                :: "r"((unsigned)__cvta_generic_to_shared(tile)), "l"(&tmap), "r"(0), "r"(0), "r"((unsigned)__cvta_generic_to_shared(&bar)) : "memory");
        }
        MGPU_END("producer");
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        MGPU_BEGIN("consumer");
        unsigned done = 0;
        while (!done) {
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                : "=r"(done) : "r"((unsigned)__cvta_generic_to_shared(&bar)));
        }
        out[threadIdx.x] = tile[(threadIdx.x - 128) % 64]; // the box: 64 floats
        MGPU_END("consumer");
    }
}
