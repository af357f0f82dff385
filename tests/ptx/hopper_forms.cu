// hopper_forms.cu - the Hopper instruction forms hopper_tma.cu and hopper_cluster.cu leave out, one
// at a time, for tests/c/test_emu_hopper.c (emu against host references) and the device check:
// mbarrier.arrive.relaxed (.cta/.cluster), try_wait by state token (with and without a
// suspend-time hint), test_wait.parity, a warp waiting by its state token for another warp;
// barrier.cluster.arrive.relaxed; atom.shared::cluster (every operation, returning the old value);
// st and atom through a generic (mapa.u64) address into another block's shared memory;
// cp.reduce.async.bulk (non-tensor) with every operation and type the ISA lists; .maxclusterrank.
// Regenerate: nvcc -ptx -arch=sm_90a -O3 -lineinfo -o hopper_forms.ptx hopper_forms.cu
#include <stdint.h>

__device__ static inline uint32_t sa(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
#define SREG(NAME) ({ unsigned v_; asm volatile("mov.u32 %0, %%" NAME ";" : "=r"(v_)); v_; })

// One thread; each result to out (test_emu_hopper.c has the values).  A barrier of 2 arrivals.
extern "C" __global__ void mbar_relaxed(unsigned *out)
{
    __shared__ __align__(8) uint64_t bar;
    uint32_t b = sa(&bar);
    uint64_t st0, st1, st2;
    unsigned r, k = 0;
#define PRED(INSN, ...) asm volatile("{ .reg .pred p; " INSN "; selp.u32 %0, 1, 0, p; }" : "=r"(r) : __VA_ARGS__ : "memory"); out[k++] = r
#define COUNT(STATE) asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(r) : "l"(STATE)); out[k++] = r
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 2;" ::"r"(b));
    asm volatile("mbarrier.arrive.relaxed.cta.shared::cta.b64 %0, [%1];" : "=l"(st0) : "r"(b) : "memory");
    COUNT(st0);                                                                          // 0: 1 pending
    PRED("mbarrier.test_wait.parity.shared::cta.b64 p, [%1], 0", "r"(b));                // 1: 0
    PRED("mbarrier.test_wait.parity.shared::cta.b64 p, [%1], 1", "r"(b));                // 2: 1 (phase -1 is complete)
    PRED("mbarrier.try_wait.shared::cta.b64 p, [%1], %2", "r"(b), "l"(st0));             // 3: 0, by state
    PRED("mbarrier.try_wait.acquire.cta.shared::cta.b64 p, [%1], %2, 100", "r"(b), "l"(st0)); // 4: 0, with a hint
    asm volatile("mbarrier.arrive.relaxed.cluster.shared::cta.b64 %0, [%1];" : "=l"(st1) : "r"(b) : "memory");
    COUNT(st1);                                                                          // 5: 0: phase 0 completed
    PRED("mbarrier.try_wait.shared::cta.b64 p, [%1], %2", "r"(b), "l"(st0));             // 6: 1
    PRED("mbarrier.try_wait.relaxed.cluster.shared::cta.b64 p, [%1], %2, 100", "r"(b), "l"(st1)); // 7: 1
    PRED("mbarrier.test_wait.parity.acquire.cta.shared::cta.b64 p, [%1], 0", "r"(b));    // 8: 1
    PRED("mbarrier.test_wait.parity.relaxed.cluster.shared::cta.b64 p, [%1], 1", "r"(b)); // 9: 0: phase 1 pending
    asm volatile("mbarrier.arrive.relaxed.cta.shared::cta.b64 %0, [%1], 1;" : "=l"(st2) : "r"(b) : "memory");
    COUNT(st2);                                                                          // 10: 1
    PRED("mbarrier.try_wait.shared::cta.b64 p, [%1], %2, 100", "r"(b), "l"(st2));        // 11: 0, a state of phase 1
    PRED("mbarrier.test_wait.shared::cta.b64 p, [%1], %2", "r"(b), "l"(st0));            // 12: 1, phase 0's state
    // through the shared::cluster window (this block is rank 0 of a cluster of one)
    uint32_t cb;
    asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(cb) : "r"(b));
    asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" ::"r"(cb) : "memory");
    PRED("mbarrier.test_wait.parity.shared::cta.b64 p, [%1], 1", "r"(b));                // 13: 1: phase 1 completed
    PRED("mbarrier.try_wait.parity.relaxed.cluster.shared::cta.b64 p, [%1], 0, 100", "r"(b)); // 14: 0: phase 2 pending
    PRED("mbarrier.try_wait.shared::cta.b64 p, [%1], %2", "r"(b), "l"(st2));             // 15: 1
    out[k++] = 0xfeed;
#undef PRED
#undef COUNT
}

// Two warps: warp 1's lane 0 arrives (a barrier of 2) and waits by the state its arrive returned
// (try_wait with a suspend-time hint, in a loop); warp 0's lane 0 spins a while, writes `v` to
// shared memory and arrives.  Warp 1 must see v: out[0] = what it read, out[1] = v + 1 written
// after its wait by warp 0 (so the order shows), out[2] the phase the state token names.
extern "C" __global__ void mbar_state_wait(unsigned v, unsigned spins, unsigned *out)
{
    __shared__ __align__(8) uint64_t bar;
    __shared__ unsigned box;
    if (threadIdx.x == 0) {
        box = 0;
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 2;" ::"r"(sa(&bar)));
    }
    __syncthreads();
    if (threadIdx.x == 32) {
        uint64_t st;
        asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(st) : "r"(sa(&bar)) : "memory");
        unsigned done = 0;
        while (!done)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.acquire.cta.shared::cta.b64 p, [%1], %2, 1000000; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(sa(&bar)), "l"(st) : "memory");
        out[0] = *(volatile unsigned *)&box;
        out[2] = (unsigned)(st >> 63);
    }
    if (threadIdx.x == 0) {
        unsigned x = 1;
        for (unsigned i = 0; i < spins; i++) x = x * 1664525u + 1013904223u;
        *(volatile unsigned *)&box = v + (x == 12345u); // x is never 12345 for the spins used
        asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(sa(&bar)) : "memory");
        out[1] = v + 1;
    }
}

// barrier.cluster.arrive.relaxed in a cluster of 2, twice: each block stores into the other's
// box with st.shared::cluster (rank 1 after a long spin), a fence.acq_rel.cluster orders it, the
// relaxed arrive and the wait; then each reads its own box, which must hold the other's value.
extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_relaxed(unsigned spins, unsigned *out)
{
    __shared__ unsigned box[2];
    unsigned rank = SREG("cluster_ctarank"), t = threadIdx.x;
    if (t < 2) box[t] = 0;
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
    for (unsigned round = 0; round < 2; round++) {
        if (t == 0) {
            unsigned x = 1;
            if (rank == 1)
                for (unsigned i = 0; i < spins; i++) x = x * 1664525u + 1013904223u;
            uint32_t peer;
            asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(peer) : "r"(sa(&box[round])), "r"(rank ^ 1));
            asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(peer), "r"(100 * (round + 1) + rank + (x == 12345u)) : "memory");
            asm volatile("fence.acq_rel.cluster;" ::: "memory");
        }
        asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
        asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
        if (t == 0) out[blockIdx.x * 2 + round] = *(volatile unsigned *)&box[round];
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// atom.shared::cluster in a cluster of 4, 64 threads a block: thread t of rank r applies
// operation t % 16 to word t of its right neighbour's a32[] (and of a64[]), each word touched
// by one thread, so every old value is known: out (per block, 256 words) gets the old values
// (0..63), the 64-bit ones (64..127, low and high words), and after a cluster barrier its own
// words as the left neighbour left them (128..191: a32, 192..255: a64 low words).  Then st and
// atom through generic addresses (mapa.u64) into the left neighbour's g[]: stored (t even) or
// atomically added (t odd); out2 (per block, 128 words) gets g[] at the end (0..63) and the
// generic atom's old value plus the high word of the 64-bit atom's (64..127).
extern "C" __global__ void __cluster_dims__(4, 1, 1) dsmem_atoms(const unsigned *init, unsigned *out, unsigned *out2)
{
    __shared__ unsigned a32[64], g[64];
    __shared__ unsigned long long a64[64];
    unsigned rank = SREG("cluster_ctarank"), n = SREG("cluster_nctarank"), t = threadIdx.x;
    unsigned right = (rank + 1) % n, left = (rank + n - 1) % n;
    a32[t] = init[(rank * 64 + t) % 256];
    a64[t] = (unsigned long long)init[(rank * 64 + t + 1) % 256] << 32 | init[(rank * 64 + t + 2) % 256];
    g[t] = 1000 * rank + t;
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
    uint32_t p, q;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(p) : "r"(sa(&a32[t])), "r"(right));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(q) : "r"(sa(&a64[t])), "r"(right));
    unsigned v = init[(t * 7 + rank) % 256], old = 0;
    unsigned long long v64 = (unsigned long long)v << 29 | t, old64 = 0;
    switch (t % 16) {
    case 0: asm volatile("atom.shared::cluster.add.u32 %0, [%1], %2;" : "=r"(old) : "r"(p), "r"(v) : "memory"); break;
    case 1: asm volatile("atom.shared::cluster.min.u32 %0, [%1], %2;" : "=r"(old) : "r"(p), "r"(v) : "memory"); break;
    case 2: asm volatile("atom.shared::cluster.max.u32 %0, [%1], %2;" : "=r"(old) : "r"(p), "r"(v) : "memory"); break;
    case 3: asm volatile("atom.shared::cluster.min.s32 %0, [%1], %2;" : "=r"(old) : "r"(p), "r"(v) : "memory"); break;
    case 4: asm volatile("atom.shared::cluster.max.s32 %0, [%1], %2;" : "=r"(old) : "r"(p), "r"(v) : "memory"); break;
    case 5: asm volatile("atom.shared::cluster.inc.u32 %0, [%1], %2;" : "=r"(old) : "r"(p), "r"(v % 64) : "memory"); break;
    case 6: asm volatile("atom.shared::cluster.dec.u32 %0, [%1], %2;" : "=r"(old) : "r"(p), "r"(v % 64) : "memory"); break;
    case 7: asm volatile("atom.shared::cluster.and.b32 %0, [%1], %2;" : "=r"(old) : "r"(p), "r"(v) : "memory"); break;
    case 8: asm volatile("atom.shared::cluster.or.b32 %0, [%1], %2;" : "=r"(old) : "r"(p), "r"(v) : "memory"); break;
    case 9: asm volatile("atom.shared::cluster.xor.b32 %0, [%1], %2;" : "=r"(old) : "r"(p), "r"(v) : "memory"); break;
    case 10: asm volatile("atom.shared::cluster.exch.b32 %0, [%1], %2;" : "=r"(old) : "r"(p), "r"(v) : "memory"); break;
    case 11: // compare with what is there (swaps) on even ranks, with something else (does not) on odd
        asm volatile("atom.shared::cluster.cas.b32 %0, [%1], %2, %3;" : "=r"(old)
                     : "r"(p), "r"(rank % 2 ? 7u : init[(right * 64 + t) % 256]), "r"(v) : "memory");
        break;
    case 12: {
        float f;
        asm volatile("atom.shared::cluster.add.f32 %0, [%1], %2;" : "=f"(f) : "r"(p), "f"((float)(v % 1000) * 0.25f) : "memory");
        old = __float_as_uint(f);
        break;
    }
    case 13: asm volatile("atom.shared::cluster.add.u64 %0, [%1], %2;" : "=l"(old64) : "r"(q), "l"(v64) : "memory"); break;
    case 14: asm volatile("atom.shared::cluster.max.s64 %0, [%1], %2;" : "=l"(old64) : "r"(q), "l"(v64 << 30) : "memory"); break;
    default: asm volatile("atom.shared::cluster.cas.b64 %0, [%1], %2, %3;" : "=l"(old64)
                          : "r"(q), "l"((unsigned long long)init[(right * 64 + t + 1) % 256] << 32 | init[(right * 64 + t + 2) % 256]),
                            "l"(v64) : "memory");
    }
    // generic addresses into the left neighbour's g[]
    uint64_t gp;
    asm volatile("mapa.u64 %0, %1, %2;" : "=l"(gp) : "l"((uint64_t)(uintptr_t)&g[t]), "r"(left));
    unsigned gold = 0;
    if (t % 2 == 0) asm volatile("st.u32 [%0], %1;" ::"l"(gp), "r"(rank * 10 + t * 3) : "memory");
    else asm volatile("atom.add.u32 %0, [%1], %2;" : "=r"(gold) : "l"(gp), "r"(v) : "memory");
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
    unsigned *o = out + blockIdx.x * 256;
    o[t] = old;
    o[64 + t] = (unsigned)old64;
    o[128 + t] = a32[t];
    o[192 + t] = (unsigned)a64[t];
    out2[blockIdx.x * 128 + t] = g[t];
    out2[blockIdx.x * 128 + 64 + t] = gold + (unsigned)(old64 >> 32);
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// cp.reduce.async.bulk (not tensor), shared::cta -> global with a bulk group: `bytes` of `src` to
// shared memory, then reduced into dst with form `op` (the table in test_emu_hopper.c); with
// op >= 100, op - 100 into shared::cluster of this block (a mbarrier's complete_tx), whose
// result (shared memory after it) goes to dst instead, starting from dst's contents.
extern "C" __global__ void bulk_reduce(const void *src, void *dst, int op, unsigned bytes)
{
    extern __shared__ __align__(128) unsigned char dyn[];
    __shared__ __align__(8) uint64_t bar;
    unsigned char *a = dyn, *b = dyn + bytes;
    for (unsigned i = threadIdx.x; i < bytes / 4; i += blockDim.x) {
        ((unsigned *)a)[i] = ((const unsigned *)src)[i];
        ((unsigned *)b)[i] = ((const unsigned *)dst)[i];
    }
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&bar)));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t s = sa(a);
#define G(FORM) asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group." FORM " [%0], [%1], %2;" ::"l"(dst), "r"(s), "r"(bytes) : "memory"); break
#define C(FORM) asm volatile("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes." FORM " [%0], [%1], %2, [%3];" \
                             ::"r"(sa(b)), "r"(s), "r"(bytes), "r"(sa(&bar)) : "memory"); break
        if (op >= 100)
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&bar)), "r"(bytes) : "memory");
        switch (op) {
        case 0: G("add.u32");
        case 1: G("add.s32");
        case 2: G("add.u64");
        case 3: G("add.f32");
        case 4: G("add.f64");
        case 5: G("add.noftz.f16");
        case 6: G("add.noftz.bf16");
        case 7: G("min.u32");
        case 8: G("min.s32");
        case 9: G("min.u64");
        case 10: G("min.s64");
        case 11: G("min.f16");
        case 12: G("min.bf16");
        case 13: G("max.u32");
        case 14: G("max.s32");
        case 15: G("max.u64");
        case 16: G("max.s64");
        case 17: G("max.f16");
        case 18: G("max.bf16");
        case 19: G("inc.u32");
        case 20: G("dec.u32");
        case 21: G("and.b32");
        case 22: G("and.b64");
        case 23: G("or.b32");
        case 24: G("or.b64");
        case 25: G("xor.b32");
        case 26: G("xor.b64");
        case 100: C("add.u32");
        case 101: C("add.s32");
        case 102: C("add.u64");
        case 103: C("min.u32");
        case 104: C("min.s32");
        case 105: C("max.u32");
        case 106: C("max.s32");
        case 107: C("inc.u32");
        case 108: C("dec.u32");
        case 109: C("and.b32");
        case 110: C("or.b32");
        case 111: C("xor.b32");
        }
#undef G
#undef C
        if (op < 100) {
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
            asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
        }
    }
    if (op >= 100) {
        unsigned done = 0;
        while (!done)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(sa(&bar)) : "memory");
        for (unsigned i = threadIdx.x; i < bytes / 4; i += blockDim.x) ((unsigned *)dst)[i] = ((unsigned *)b)[i];
    }
}

// .maxclusterrank 4 (__launch_bounds__'s third argument): each block writes its cluster's size.
extern "C" __global__ void __launch_bounds__(64, 1, 4) max_rank(unsigned *out)
{
    if (threadIdx.x == 0) out[blockIdx.x] = SREG("cluster_nctarank") * 100 + SREG("cluster_ctarank");
}
