// hopper_tma.cu - Hopper's bulk copies and mbarrier transactions, one form at a time, for
// tests/c/test_emu_hopper.c (emu against host references): TMA tile loads, stores and
// reductions of 1d-5d boxes (a __grid_constant__ map or one in global memory), cp.async.bulk
// between global and shared memory and within a block's shared::cluster window, bulk
// reductions, and every mbarrier form with its phases and transaction counts.
// Regenerate: nvcc -ptx -arch=sm_90a -O3 -lineinfo -o hopper_tma.ptx hopper_tma.cu
#include <cuda.h>
#include <stdint.h>

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
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(sa(bar)), "r"(parity) : "memory");
}

extern __shared__ __align__(1024) unsigned char dyn[];

// One box at (c0..c4) of `map` into shared memory, completing on an mbarrier; the raw shared
// bytes (the swizzled layout) to out, and the box's bytes the mbarrier expected.
extern "C" __global__ void tma_load(const __grid_constant__ CUtensorMap map, int rank, int c0, int c1, int c2, int c3,
                                    int c4, unsigned bytes, unsigned *out)
{
    __shared__ __align__(8) uint64_t bar;
    if (threadIdx.x == 0) {
        asm volatile("prefetch.tensormap [%0];" ::"l"(&map) : "memory");
        bar_init(&bar, 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t d = sa(dyn), b = sa(&bar);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes) : "memory");
        switch (rank) {
        case 1:
            asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
                         ::"r"(d), "l"(&map), "r"(c0), "r"(b) : "memory");
            break;
        case 2:
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                         ::"r"(d), "l"(&map), "r"(c0), "r"(c1), "r"(b) : "memory");
            break;
        case 3:
            asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                         ::"r"(d), "l"(&map), "r"(c0), "r"(c1), "r"(c2), "r"(b) : "memory");
            break;
        case 4:
            asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];"
                         ::"r"(d), "l"(&map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(b) : "memory");
            break;
        default:
            asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, %3, %4, %5, %6}], [%7], %8;"
                         ::"r"(d), "l"(&map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(b), "l"(0x1000000000000000ull) : "memory");
        }
    }
    bar_wait(&bar, 0);
    for (unsigned i = threadIdx.x; i < bytes / 4; i += blockDim.x) out[i] = ((const unsigned *)dyn)[i];
}

// The same for a map in global memory (a pointer argument), 2d.
extern "C" __global__ void tma_load_gmem_map(const CUtensorMap *map, int c0, int c1, unsigned bytes, unsigned *out)
{
    __shared__ __align__(8) uint64_t bar;
    if (threadIdx.x == 0) {
        asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(map) : "memory");
        bar_init(&bar, 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(sa(&bar)), "r"(bytes) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     ::"r"(sa(dyn)), "l"(map), "r"(c0), "r"(c1), "r"(sa(&bar)) : "memory");
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(sa(&bar)) : "memory");
    }
    bar_wait(&bar, 0);
    for (unsigned i = threadIdx.x; i < bytes / 4; i += blockDim.x) out[i] = ((const unsigned *)dyn)[i];
}

// in (raw bytes) to shared memory, then a TMA store (op < 0) or reduction (op: add, min, max, inc,
// dec, and, or, xor) of the box at (c0, c1) of a 2d map.
extern "C" __global__ void tma_store(const __grid_constant__ CUtensorMap map, int op, int c0, int c1, unsigned bytes,
                                     const unsigned *in)
{
    for (unsigned i = threadIdx.x; i < bytes / 4; i += blockDim.x) ((unsigned *)dyn)[i] = in[i];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t s = sa(dyn);
#define RED(OP) asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta." OP ".tile.bulk_group [%0, {%1, %2}], [%3];" \
                             ::"l"(&map), "r"(c0), "r"(c1), "r"(s) : "memory")
        switch (op) {
        case 0: RED("add"); break;
        case 1: RED("min"); break;
        case 2: RED("max"); break;
        case 3: RED("inc"); break;
        case 4: RED("dec"); break;
        case 5: RED("and"); break;
        case 6: RED("or"); break;
        case 7: RED("xor"); break;
        default:
            asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                         ::"l"(&map), "r"(c0), "r"(c1), "r"(s) : "memory");
        }
#undef RED
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
}

// A 3d store (a box whose third dimension reaches past the tensor: those rows are not written).
extern "C" __global__ void tma_store_3d(const __grid_constant__ CUtensorMap map, int c0, int c1, int c2, unsigned bytes,
                                        const unsigned *in)
{
    for (unsigned i = threadIdx.x; i < bytes / 4; i += blockDim.x) ((unsigned *)dyn)[i] = in[i];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3}], [%4];"
                     ::"l"(&map), "r"(c0), "r"(c1), "r"(c2), "r"(sa(dyn)) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
}

// cp.async.bulk: src (global) -> shared (mbarrier), shared -> shared::cluster of this block
// (mbarrier), shared -> dst (global, bulk_group), then a bulk add-reduction of the same bytes into red.
extern "C" __global__ void bulk_copies(const unsigned *src, unsigned *dst, unsigned *red, unsigned bytes)
{
    __shared__ __align__(8) uint64_t bar[2];
    unsigned char *a = dyn, *b = dyn + bytes;
    if (threadIdx.x == 0) {
        bar_init(&bar[0], 1);
        bar_init(&bar[1], 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&bar[0])), "r"(bytes) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     ::"r"(sa(a)), "l"(src), "r"(bytes), "r"(sa(&bar[0])) : "memory");
    }
    bar_wait(&bar[0], 0);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&bar[1])), "r"(bytes) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     ::"r"(sa(b)), "r"(sa(a)), "r"(bytes), "r"(sa(&bar[1])) : "memory");
    }
    bar_wait(&bar[1], 0);
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(sa(b)), "r"(bytes) : "memory");
        asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%0], [%1], %2;"
                     ::"l"(red), "r"(sa(b)), "r"(bytes) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
}

// The mbarrier forms, one thread, each result to out (see test_emu_hopper.c for the values).
extern "C" __global__ void mbar_forms(unsigned *out)
{
    __shared__ __align__(8) uint64_t bar;
    uint32_t b = sa(&bar);
    uint64_t st0, st1, st2;
    unsigned r, k = 0;
#define TEST(STATE) asm volatile("{ .reg .pred p; mbarrier.test_wait.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" \
                                 : "=r"(r) : "r"(b), "l"(STATE) : "memory"); out[k++] = r
#define TRYP(PAR) asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, 1000; selp.u32 %0, 1, 0, p; }" \
                               : "=r"(r) : "r"(b), "r"(PAR) : "memory"); out[k++] = r
#define COUNT(STATE) asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(r) : "l"(STATE)); out[k++] = r
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 3;" ::"r"(b));
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(st0) : "r"(b) : "memory");
    COUNT(st0);            // 2 pending
    TEST(st0);             // 0: phase 0 not complete
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 %0, [%1], 2;" : "=l"(st1) : "r"(b) : "memory");
    COUNT(st1);            // 0
    TEST(st0);             // 1: phase 0 completed
    TRYP(0);               // 1
    TRYP(1);               // 0: phase 1 pending
    asm volatile("mbarrier.arrive_drop.shared::cta.b64 %0, [%1];" : "=l"(st2) : "r"(b) : "memory");
    COUNT(st2);            // 2 (3 - 1), and 2 expected from now on
    asm volatile("mbarrier.expect_tx.shared::cta.b64 [%0], 32;" ::"r"(b) : "memory");
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0], 2;" ::"r"(b) : "memory");
    TRYP(1);               // 0: 32 bytes pending
    asm volatile("mbarrier.complete_tx.shared::cta.b64 [%0], 16;" ::"r"(b) : "memory");
    TRYP(1);               // 0: 16 bytes pending
    asm volatile("mbarrier.complete_tx.shared::cta.b64 [%0], 16;" ::"r"(b) : "memory");
    TRYP(1);               // 1: phase 1 completed
    asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %0, [%1], 8;" : "=l"(st0) : "r"(b) : "memory");
    COUNT(st0);            // 1 of the 2 now expected
    asm volatile("mbarrier.arrive_drop.expect_tx.shared::cta.b64 _, [%0], 8;" ::"r"(b) : "memory");
    TRYP(0);               // 0: 16 bytes pending, no arrival (1 expected from now on)
    asm volatile("mbarrier.complete_tx.shared::cta.b64 [%0], 16;" ::"r"(b) : "memory");
    TRYP(0);               // 1: phase 2 completed
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(st0) : "r"(b) : "memory");
    COUNT(st0);            // 0: 1 expected, it completed phase 3
    TRYP(1);               // 1
    asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(b) : "memory");
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
    TRYP(0);               // 0: a new barrier in phase 0
    out[k++] = 0xfeed;
#undef TEST
#undef TRYP
#undef COUNT
}

// Virtual time of bulk copies: %clock64 from before the first copy to the end of the wait, in out[0].
// mode 0: one global->shared copy of `bytes`, waited for on its mbarrier; 1: two of them back to back
// (the second's barrier waited for); 2: a shared->global copy, committed and waited for (wait_group 0).
extern "C" __global__ void tma_time(const unsigned *src, unsigned *dst, unsigned bytes, int mode, long long *out)
{
    __shared__ __align__(8) uint64_t bar[2];
    if (threadIdx.x != 0) return;
    bar_init(&bar[0], 1);
    bar_init(&bar[1], 1);
    long long t0 = clock64();
    if (mode < 2) {
        for (int i = 0; i <= mode; i++) {
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&bar[i])), "r"(bytes) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                         ::"r"(sa(dyn + i * bytes)), "l"(src), "r"(bytes), "r"(sa(&bar[i])) : "memory");
        }
        bar_wait(&bar[mode], 0);
    } else {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(sa(dyn)), "r"(bytes) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
    out[0] = clock64() - t0;
}
