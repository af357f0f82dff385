// hopper_cluster.cu - thread-block clusters, one feature at a time, for tests/c/test_emu_hopper.c:
// the cluster special registers, barrier.cluster, mapa/getctarank, distributed shared memory
// (ld/st/atom on shared::cluster and generic addresses into another block), an mbarrier arrive
// on another block's barrier, TMA multicast, cp.async.bulk into another block, elect.sync and
// griddepcontrol.
// Regenerate: nvcc -ptx -arch=sm_90a -O3 -lineinfo -o hopper_cluster.ptx hopper_cluster.cu
#include <cuda.h>
#include <stdint.h>

__device__ static inline uint32_t sa(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ static inline void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
#define SREG(NAME) ({ unsigned v_; asm volatile("mov.u32 %0, %%" NAME ";" : "=r"(v_)); v_; })

// Each block's thread 0: the cluster registers, 16 words a block (by blockIdx, x fastest).
extern "C" __global__ void cluster_regs(unsigned *out)
{
    asm volatile("griddepcontrol.wait;" ::: "memory");
    if (threadIdx.x == 0) {
        unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z), *o = out + 16 * b;
        o[0] = SREG("clusterid.x"); o[1] = SREG("clusterid.y"); o[2] = SREG("clusterid.z");
        o[3] = SREG("nclusterid.x"); o[4] = SREG("nclusterid.y"); o[5] = SREG("nclusterid.z");
        o[6] = SREG("cluster_ctaid.x"); o[7] = SREG("cluster_ctaid.y"); o[8] = SREG("cluster_ctaid.z");
        o[9] = SREG("cluster_nctaid.x"); o[10] = SREG("cluster_nctaid.y"); o[11] = SREG("cluster_nctaid.z");
        o[12] = SREG("cluster_ctarank"); o[13] = SREG("cluster_nctarank"); o[14] = ({ unsigned v_; asm volatile("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(v_)); v_; });
        o[15] = 0xc0de;
    }
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

// Distributed shared memory in a cluster of 4 (a 1d grid): every block fills s[] with its rank,
// then (after a cluster barrier) reads its right neighbour's s[] through a generic mapa address
// and its left neighbour's through ld.shared::cluster, adds 1 to every block's counter with
// atom.shared::cluster, stores into the next block's box, and arrives on block 0's mbarrier.
extern "C" __global__ void __cluster_dims__(4, 1, 1) dsmem(unsigned *out)
{
    __shared__ unsigned s[64], box[64], counter;
    __shared__ __align__(8) uint64_t bar;
    unsigned rank = SREG("cluster_ctarank"), n = SREG("cluster_nctarank"), t = threadIdx.x;
    s[t] = rank * 1000 + t;
    if (t == 0) {
        counter = 0;
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sa(&bar)), "r"(n));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    cluster_sync();
    unsigned right = (rank + 1) % n, left = (rank + n - 1) % n, v, lv, owner;
    uint64_t peer;
    asm volatile("mapa.u64 %0, %1, %2;" : "=l"(peer) : "l"((uint64_t)(uintptr_t)s), "r"(right));
    v = ((volatile unsigned *)(uintptr_t)peer)[t];
    uint32_t ls;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ls) : "r"(sa(&s[t])), "r"(left));
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(lv) : "r"(ls) : "memory");
    asm volatile("getctarank.shared::cluster.u32 %0, %1;" : "=r"(owner) : "r"(ls));
    for (unsigned r = 0; r < n; r++) {
        uint32_t c;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(c) : "r"(sa(&counter)), "r"(r));
        asm volatile("red.shared::cluster.add.u32 [%0], 1;" ::"r"(c) : "memory");
    }
    uint32_t nb;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(nb) : "r"(sa(&box[t])), "r"(right));
    asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(nb), "r"(rank + 100) : "memory");
    if (t == 0) {
        uint32_t b0;
        asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(b0) : "r"(sa(&bar)));
        asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(b0) : "memory");
    }
    if (rank == 0) { /* every block's arrival completes phase 0 of block 0's barrier */
        unsigned done = 0;
        while (!done)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(sa(&bar)) : "memory");
    }
    cluster_sync();
    unsigned *o = out + blockIdx.x * 256;
    o[t] = v;
    o[64 + t] = lv;
    o[128 + t] = box[t];
    if (t == 0) o[192] = counter, o[193] = owner;
}

// TMA multicast in a cluster of 2: each block expects the box's bytes on its own barrier; rank 0
// loads the box once into both blocks' shared memory (CTA mask 0b11); then rank 1 copies its
// first 256 bytes into rank 0's `back` with cp.async.bulk.shared::cluster, completing on rank 0's
// second barrier.  Each block writes its tile (and rank 0 `back`) to out.
extern "C" __global__ void __cluster_dims__(2, 1, 1) multicast(const __grid_constant__ CUtensorMap map, unsigned bytes,
                                                               unsigned *out)
{
    extern __shared__ __align__(1024) unsigned char tile[];
    __shared__ __align__(128) unsigned char back[256];
    __shared__ __align__(8) uint64_t bar[2];
    unsigned rank = SREG("cluster_ctarank");
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&bar[0])));
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&bar[1])));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&bar[0])), "r"(bytes) : "memory");
        if (rank == 0)
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 256;" ::"r"(sa(&bar[1])) : "memory");
    }
    cluster_sync();
    if (rank == 0 && threadIdx.x == 0) {
        uint16_t mask = 3;
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
                     ::"r"(sa(tile)), "l"(&map), "r"(0), "r"(0), "r"(sa(&bar[0])), "h"(mask) : "memory");
    }
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(sa(&bar[0])) : "memory");
    if (rank == 1 && threadIdx.x == 0) {
        uint32_t dst, rb;
        asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(dst) : "r"(sa(back)));
        asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(rb) : "r"(sa(&bar[1])));
        asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], 256, [%2];"
                     ::"r"(dst), "r"(sa(tile)), "r"(rb) : "memory");
    }
    if (rank == 0) {
        done = 0;
        while (!done)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(sa(&bar[1])) : "memory");
        for (unsigned i = threadIdx.x; i < 64; i += blockDim.x) out[2 * bytes / 4 + i] = ((unsigned *)back)[i];
    }
    for (unsigned i = threadIdx.x; i < bytes / 4; i += blockDim.x) out[rank * bytes / 4 + i] = ((unsigned *)tile)[i];
    cluster_sync();
}

// elect.sync: the odd lanes elect one of them (the lowest: lane 1); each writes the leader and
// whether it was elected; the even lanes write 0xffff.
extern "C" __global__ void elect(unsigned *out)
{
    unsigned leader = 0x7fff, me = 1;
    if (threadIdx.x & 1)
        asm volatile("{ .reg .pred p; elect.sync %0|p, 0xaaaaaaaa; selp.u32 %1, 1, 0, p; }" : "=r"(leader), "=r"(me));
    out[threadIdx.x] = leader * 2 + me;
}
