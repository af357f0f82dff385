// mbarrier.cu - mbarrier semantics for emu's tests: arrivals with a count,
// transaction bytes (expect_tx / complete_tx), waits by parity and by state,
// a producer warp and a consumer warp that spins until the phase completes,
// two phases in a row, more arrivals at once than are pending (emu faults:
// undefined in PTX), and a phase that never completes (emu reports the deadlock).
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o mbarrier.ptx mbarrier.cu
#include <stdint.h>

__device__ __forceinline__ unsigned smem(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

extern "C" __global__ void mbar_phases(unsigned *out)
{
    __shared__ alignas(8) unsigned long long bar;
    __shared__ unsigned value[2];
    unsigned t = threadIdx.x;
    if (t == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 64;" ::"r"(smem(&bar)));
    __syncthreads();
    for (unsigned phase = 0; phase < 2; phase++) {
        if (t < 32) {
            // producer: 32 threads arrive twice each (64), and 16 transaction bytes come after
            if (t == 0) {
                value[phase] = 100 + phase;
                asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], 16;" ::"r"(smem(&bar)));
            }
            unsigned long long state;
            asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], 2;" : "=l"(state) : "r"(smem(&bar)) : "memory");
            unsigned before;
            asm volatile("{ .reg .pred p; mbarrier.test_wait.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(before) : "r"(smem(&bar)), "l"(state));
            __syncwarp();
            if (t == 0) asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], 16;" ::"r"(smem(&bar)) : "memory");
            __syncwarp();
            unsigned after;
            asm volatile("{ .reg .pred p; mbarrier.test_wait.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(after) : "r"(smem(&bar)), "l"(state));
            out[phase * 64 + t] = before * 10 + after; // 0 then 1: incomplete before the bytes, complete after
        } else {
            // consumer: spins on the phase's parity, then reads what the producer wrote
            unsigned done = 0, spins = 0;
            while (!done) {
                asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                             : "=r"(done) : "r"(smem(&bar)), "r"(phase) : "memory");
                spins++;
            }
            out[phase * 64 + t] = value[phase] + (spins > 0 ? 0 : 1000);
        }
    }
}

extern "C" __global__ void mbar_too_many(unsigned *out)
{
    __shared__ alignas(8) unsigned long long bar;
    if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)));
    __syncthreads();
    // 32 arrivals of one each complete 32 phases; an arrival of 2 where 1 is pending is undefined
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(&bar)) : "memory");
    if (threadIdx.x == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0], 2;" ::"r"(smem(&bar)) : "memory");
    out[threadIdx.x] = 1;
}

extern "C" __global__ void mbar_deadlock(unsigned *out)
{
    // 64 arrivals expected, 32 come: the phase never completes, every warp waits for it
    __shared__ alignas(8) unsigned long long bar;
    if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 64;" ::"r"(smem(&bar)));
    __syncthreads();
    if (threadIdx.x < 32) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(&bar)) : "memory");
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(smem(&bar)) : "memory");
    out[threadIdx.x] = done;
}
