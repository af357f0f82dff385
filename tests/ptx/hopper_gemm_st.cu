// hopper_gemm_st.cu - a warp-specialised Hopper GEMM with everything together: TMA loads (128B
// swizzle, a 4-stage ring, B multicast to both blocks of a cluster of 2), full/empty mbarriers,
// setmaxnreg (the producer gives registers to the consumers), wgmma from descriptors, and a stmatrix
// epilogue into a bf16 staging tile that a TMA store writes out.  C = A * B^T (A: M x K, B: N x K,
// bf16, K-major; C: M x N bf16), block tile 128 x 64, K step 64; warpgroup 0 produces, 1 and 2
// consume 64 rows each.  No markers: tests/lua/hopper_spec.lua instruments it with probes (the
// producer waits with .acquire.cluster, the consumers with .acquire.cta, so a probe tells them
// apart); tests/c/test_emu_hopper.c checks it against a host reference; the device check runs it.
// Regenerate: nvcc -ptx -arch=sm_90a -O3 -lineinfo -o hopper_gemm_st.ptx hopper_gemm_st.cu
#include <cuda.h>
#include <cuda_bf16.h>
#include <stdint.h>

#define BM 128
#define BN 64
#define BK 64
#define STAGES 4
#define A_BYTES (BM * BK * 2)
#define B_BYTES (BN * BK * 2)

__device__ static inline uint32_t sa(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

// K-major operand, rows of 128 bytes swizzled (128B), 8-row atoms 1024 bytes apart
__device__ static inline uint64_t desc(uint32_t addr)
{
    return (uint64_t)((addr & 0x3ffff) >> 4) | (uint64_t)1 << 16 | (uint64_t)(1024 >> 4) << 32 | (uint64_t)1 << 62;
}

extern "C" __global__ void __launch_bounds__(384, 1) __cluster_dims__(2, 1, 1)
ws_gemm_st(const __grid_constant__ CUtensorMap ma, const __grid_constant__ CUtensorMap mb,
           const __grid_constant__ CUtensorMap mc, int K)
{
    extern __shared__ __align__(1024) unsigned char smem[];
    unsigned char *sA = smem, *sB = smem + STAGES * A_BYTES, *sC = smem + STAGES * (A_BYTES + B_BYTES);
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    unsigned rank, wg = threadIdx.x / 128, t = threadIdx.x % 128;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN, kt_n = K / BK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&full[s])));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 16;" ::"r"(sa(&empty[s]))); // 8 consumer warps x 2 blocks
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
    if (wg == 0) { // the producer
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        unsigned leader = 0;
        if (t < 32) asm volatile("{ .reg .pred p; elect.sync _|p, 0xffffffff; selp.u32 %0, 1, 0, p; }" : "=r"(leader));
        for (int kt = 0; kt < kt_n; kt++) {
            int s = kt % STAGES;
            unsigned parity = ((kt / STAGES) & 1) ^ 1, done = 0;
            while (!done) // the stage's consumers (of both blocks) are done with it
                asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2, 10000000; selp.u32 %0, 1, 0, p; }"
                             : "=r"(done) : "r"(sa(&empty[s])), "r"(parity) : "memory");
            if (leader) {
                uint32_t f = sa(&full[s]);
                asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(f), "r"(A_BYTES + B_BYTES) : "memory");
                asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                             ::"r"(sa(sA + s * A_BYTES)), "l"(&ma), "r"(kt * BK), "r"(m0), "r"(f) : "memory");
                uint16_t mask = 3; // half of B to both blocks of the cluster
                asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
                             ::"r"(sa(sB + s * B_BYTES + rank * (B_BYTES / 2))), "l"(&mb), "r"(kt * BK),
                               "r"(n0 + (int)rank * (BN / 2)), "r"(f), "h"(mask) : "memory");
            }
        }
    } else { // the consumers: rows 64 (wg - 1) .. of the block tile
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        float d[32];
        for (int i = 0; i < 32; i++) d[i] = 0.0f;
        for (int kt = 0; kt < kt_n; kt++) {
            int s = kt % STAGES;
            unsigned parity = (kt / STAGES) & 1, done = 0;
            while (!done) // the stage's bytes have landed
                asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2, 10000000; selp.u32 %0, 1, 0, p; }"
                             : "=r"(done) : "r"(sa(&full[s])), "r"(parity) : "memory");
            uint32_t a0 = sa(sA + s * A_BYTES + (wg - 1) * 64 * 128), b0 = sa(sB + s * B_BYTES);
            asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
            for (int kk = 0; kk < BK / 16; kk++) {
                uint64_t da = desc(a0 + kk * 32), db = desc(b0 + kk * 32);
                asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, 1, 1, 1, 0, 0;"
                             : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                             : "l"(da), "l"(db));
            }
            asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
            asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
            // the stage is free again, for the producers of both blocks: each warp says so after its own
            // wgmma.wait_group (as in hopper_gemm.cu)
            if (t % 32 == 0) {
                for (unsigned r = 0; r < 2; r++) {
                    uint32_t e;
                    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(e) : "r"(sa(&empty[s])), "r"(r));
                    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(e) : "memory");
                }
            }
        }
        // The epilogue: the accumulators (row 16 warp + lane / 4 + 8 ((i >> 1) & 1), column 8 (i >> 2) +
        // 2 (lane % 4) + (i & 1)) packed to bf16 pairs, four 8 x 8 matrices a stmatrix.x4: column blocks
        // j and j + 1, rows 0-7 and 8-15 of this warp's 16; lane l gives row l % 8 of matrix l / 8.
        unsigned lane = t % 32, w = t / 32, q = lane / 8;
        unsigned row = (wg - 1) * 64 + w * 16 + (q % 2) * 8 + lane % 8;
        for (int j = 0; j < BN / 8; j += 2) {
            uint32_t r[4];
            for (int h = 0; h < 4; h++) {
                __nv_bfloat162 v = __floats2bfloat162_rn(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
                r[h] = *(uint32_t *)&v;
            }
            uint32_t addr = sa(sC + row * (BN * 2) + (8 * j + (q / 2) * 8) * 2);
            asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
                         ::"r"(addr), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
        }
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        asm volatile("bar.sync 1, 256;" ::: "memory");
        if (threadIdx.x == 128) {
            asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
                         ::"l"(&mc), "r"(n0), "r"(m0), "r"(sa(sC)) : "memory");
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
            asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        }
    }
    // no block leaves while the other may still arrive on its barriers or multicast into it
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
