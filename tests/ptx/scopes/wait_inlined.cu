// wait_inlined.cu - a producer/consumer pipeline of 8 stages whose consumer waits on each
// stage's mbarrier with CUTLASS's wait (ClusterBarrier::wait: an asm block with its own
// predicate and labels), inlined 8 times by the unrolled loop: every copy has its own
// LAB_WAIT and DONE, local to its { } block (issue 30, item 1).  Two more asm blocks declare
// a register t of different types in sibling blocks (.b32, then .b64).
// out[s * 32 + lane] = the sum over stages 0..s of in[k * 32 + lane] * (k + 1);
// wide[lane] = 0x100000000 * lane + 7 (written through the .b64 t).
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o wait_inlined.ptx wait_inlined.cu
#include <stdint.h>

__device__ __forceinline__ unsigned smem(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void wait(const uint64_t *bar, unsigned phase)
{
    asm volatile("{\n\t"
                 ".reg .pred P1;\n\t"
                 "LAB_WAIT:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n\t"
                 "@P1 bra DONE;\n\t"
                 "bra LAB_WAIT;\n\t"
                 "DONE:\n\t"
                 "}" ::"r"(smem(bar)), "r"(phase) : "memory");
}

extern "C" __global__ void wait_inlined(unsigned *out, const unsigned *in, unsigned long long *wide)
{
    __shared__ alignas(8) uint64_t full[8];
    __shared__ unsigned buf[8][32];
    unsigned t = threadIdx.x, lane = t % 32;
    if (t < 8) asm volatile("mbarrier.init.shared::cta.b64 [%0], 32;" ::"r"(smem(&full[t])));
    __syncthreads();
    if (t < 32) { // producer: fills the stages in reverse order, so the consumer waits on each
#pragma unroll
        for (int s = 7; s >= 0; s--) {
            buf[s][lane] = in[s * 32 + lane] * (s + 1);
            asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(&full[s])) : "memory");
        }
    } else { // consumer
        unsigned acc = 0;
#pragma unroll
        for (int s = 0; s < 8; s++) {
            wait(&full[s], 0);
            acc += buf[s][lane];
            out[s * 32 + lane] = acc;
        }
        unsigned lo;
        unsigned long long w;
        asm volatile("{ .reg .b32 t; mov.b32 t, %1; add.u32 %0, t, 7; }" : "=r"(lo) : "r"(lane));
        asm volatile("{ .reg .b64 t; mov.b64 t, {%1, %2}; mov.b64 %0, t; }" : "=l"(w) : "r"(lo), "r"(lane));
        wide[lane] = w;
    }
}
