// hopper_exited.cu - a cluster peer that has exited (issue 30, item 6), for tests/c/test_emu_hopper.c:
// in a cluster of 2, block rank 1 exits without a cluster barrier; block rank 0, once rank 1 has
// said so in global memory, arrives on rank 1's mbarrier, stores into its shared memory and reads
// the word back (out[0]), as producer/consumer kernels do at small sizes.  CUDA leaves it undefined:
// emu lets it land with a warning naming each line, strict mode faults.  out[1]: rank 0 got there.
// Regenerate: nvcc -ptx -arch=sm_90a -O3 -lineinfo -o hopper_exited.ptx hopper_exited.cu
#include <stdint.h>

__device__ static inline uint32_t sa(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

extern "C" __global__ void __cluster_dims__(2, 1, 1) exited_peer(volatile unsigned *flag, unsigned *out)
{
    __shared__ __align__(8) uint64_t bar;
    __shared__ unsigned word;
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    if (threadIdx.x == 0) {
        word = 0;
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&bar)));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
    if (rank == 1) { // leaves at once, no cluster barrier before it
        if (threadIdx.x == 0) {
            __threadfence();
            *flag = 1;
        }
        return;
    }
    if (threadIdx.x == 0) {
        while (*flag == 0) {}
        for (int i = 0; i < 8; i++) __nanosleep(1000);
        uint32_t rb, rw, v;
        asm volatile("mapa.shared::cluster.u32 %0, %1, 1;" : "=r"(rb) : "r"(sa(&bar)));
        asm volatile("mapa.shared::cluster.u32 %0, %1, 1;" : "=r"(rw) : "r"(sa(&word)));
        asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(rb) : "memory");
        asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(rw), "r"(42u) : "memory");
        asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(rw) : "memory");
        out[0] = v;
        out[1] = 1;
    }
}
