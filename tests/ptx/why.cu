// why.cu - kernels for issue 34 ("emu tells you why"), run by tests/lua/why_spec.lua: each Hopper
// hazard strict mode catches, as a correct kernel and the same kernel with the bug a flag turns on
// (a wait on the wrong mbarrier parity, an expect_tx of fewer bytes than the copy brings, a
// cp.async read before its wait, a bulk copy over a wgmma not yet retired); a pointer chase and a
// block whose warps reach __syncthreads at very different times (stall reasons per line); a
// producer/consumer pair (flows on the timeline); a region only lane 5 enters (the warning for
// regions no one records); and an out-of-range read (a fault naming its .cu line).
// Regenerate: nvcc -ptx -arch=sm_90a -O3 -lineinfo -o why.ptx why.cu
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

// expect `expect` bytes on bar and copy `bytes` bytes from global src to shared dst, completing on bar
__device__ static inline void bulk_load(void *dst, const void *src, unsigned bytes, uint64_t *bar, unsigned expect)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(bar)), "r"(expect) : "memory");
    uint32_t d = sa(dst), b = sa(bar);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(d), "l"(src), "r"(bytes), "r"(b) : "memory");
}

// (a) 64 floats by TMA; every thread waits on phase `parity` (0 right, 1 wrong: it passes at once)
// and reads its float.
extern "C" __global__ void why_parity(const float *in, float *out, unsigned parity)
{
    __shared__ __align__(128) float buf[64];
    __shared__ __align__(8) uint64_t bar;
    if (threadIdx.x == 0) bar_init(&bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) bulk_load(buf, in, sizeof buf, &bar, sizeof buf);
    bar_wait(&bar, parity);
    out[threadIdx.x] = buf[threadIdx.x] * 2.0f;
}

// (c) the same copy of 256 bytes with expect_tx `expect` (256 right, 128 wrong).
extern "C" __global__ void why_expect(const float *in, float *out, unsigned expect)
{
    __shared__ __align__(128) float buf[64];
    __shared__ __align__(8) uint64_t bar;
    if (threadIdx.x == 0) bar_init(&bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) bulk_load(buf, in, sizeof buf, &bar, expect);
    bar_wait(&bar, 0);
    out[threadIdx.x] = buf[threadIdx.x] * 2.0f;
}

// (a) Ampere's cp.async: each thread copies 16 bytes and reads them, after its wait_group when
// `wait` (right), without it (wrong).
extern "C" __global__ void why_cp_async(const float *in, float *out, int wait)
{
    __shared__ __align__(16) float buf[128];
    unsigned t = threadIdx.x;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(sa(&buf[4 * t])), "l"(in + 4 * t) : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    if (wait) asm volatile("cp.async.wait_group 0;" ::: "memory");
    out[t] = buf[4 * t];
    asm volatile("cp.async.wait_all;" ::: "memory");
}

// a K-major shared-memory matrix descriptor without swizzle: core matrices of 8 rows x 16 bytes
__device__ static inline uint64_t desc(const void *p)
{
    return (uint64_t)((sa(p) & 0x3ffff) >> 4) | (uint64_t)(128 >> 4) << 16 | (uint64_t)(256 >> 4) << 32;
}

// (b) one warpgroup: A (64x16 f16) and B (8x16 f16) by TMA, one wgmma m64n8k16 on them; then thread
// 0 loads the next A and B into the same buffer, after wgmma.wait_group 0 (right) or before it
// (early: the consumer never said the buffer is free).
extern "C" __global__ void why_wgmma(const unsigned char *in, float *out, int early)
{
    __shared__ __align__(128) unsigned char ab[2048 + 256];
    __shared__ __align__(8) uint64_t bar;
    if (threadIdx.x == 0) bar_init(&bar, 1);
    __syncthreads();
    if (threadIdx.x == 0) bulk_load(ab, in, sizeof ab, &bar, sizeof ab);
    bar_wait(&bar, 0);
    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    uint64_t da = desc(ab), db = desc(ab + 2048);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, 0, 1, 1, 0, 0;" : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "l"(da), "l"(db) : "memory");
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    if (early && threadIdx.x == 0) bulk_load(ab, in + sizeof ab, sizeof ab, &bar, sizeof ab);
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    if (!early) {
        __syncthreads();
        if (threadIdx.x == 0) bulk_load(ab, in + sizeof ab, sizeof ab, &bar, sizeof ab);
    }
    bar_wait(&bar, 1);
    out[threadIdx.x] = d0 + d1 + d2 + d3 + (float)ab[threadIdx.x];
}

// A pointer chase: each step's load needs the last one's value (stall reasons: long_scoreboard).
extern "C" __global__ void why_chase(const unsigned *next, unsigned *out, int steps)
{
    unsigned p = threadIdx.x;
    for (int i = 0; i < steps; i++) p = next[p];
    out[threadIdx.x] = p;
}

// Warp 0 works `n` steps alone while the block's other warps wait at __syncthreads (barrier).
extern "C" __global__ void why_imbalance(float *out, int n)
{
    float x = threadIdx.x;
    if (threadIdx.x < 32)
        for (int i = 0; i < n; i++) x = x * 1.0001f + 0.5f;
    __syncthreads(); // the other warps wait here for warp 0
    out[threadIdx.x] = x;
}

// A producer warp fills two stages by TMA (full barriers), consumer warps wait for each, add it up
// and release it (empty barriers): flows from each TMA completion and arrive to the wait it released.
extern "C" __global__ void why_pipeline(const float *in, float *out, int steps)
{
    __shared__ __align__(128) float stage[2][64];
    __shared__ __align__(8) uint64_t full[2], empty[2];
    unsigned t = threadIdx.x, warp = t / 32;
    if (t == 0)
        for (int s = 0; s < 2; s++) {
            bar_init(&full[s], 1);
            bar_init(&empty[s], 2); // the two consumer warps' lane 0
        }
    __syncthreads();
    if (warp == 0) {
        MGPU_BEGIN("produce");
        if (t == 0)
            for (int i = 0; i < steps; i++) {
                int s = i % 2;
                if (i >= 2) bar_wait(&empty[s], ((i / 2) - 1) & 1);
                bulk_load(stage[s], in + 64 * i, sizeof stage[s], &full[s], sizeof stage[s]);
            }
        MGPU_END("produce");
    } else {
        MGPU_BEGIN("consume");
        float acc = 0;
        for (int i = 0; i < steps; i++) {
            int s = i % 2;
            bar_wait(&full[s], (i / 2) & 1);
            acc += stage[s][t % 64];
            __syncwarp();
            if (t % 32 == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(sa(&empty[s])) : "memory");
        }
        out[t] = acc;
        MGPU_END("consume");
    }
}

// A region only lane 5 of each warp enters: in warp scope lane 0 writes the trace, so it is lost.
extern "C" __global__ void why_lane5(float *out)
{
    unsigned t = threadIdx.x;
    MGPU_BEGIN("all");
    float x = t;
    if (t % 32 == 5) {
        MGPU_BEGIN("lane5");
        x = x * 3.0f;
        MGPU_END("lane5");
    }
    out[t] = x;
    MGPU_END("all");
}

// An out-of-range read: `n` past the array's end faults on the line of the read.
extern "C" __global__ void why_fault(const float *in, float *out, int n)
{
    out[threadIdx.x] = in[threadIdx.x + n];
}
