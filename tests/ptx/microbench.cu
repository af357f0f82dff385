// microbench.cu - microbenchmarks of the quantities emu's device model holds (issue 32), one
// kernel each, for tests/c/test_emu_clock.c (emu against the published figures) and for the
// device check (scripts/device/microbench.lua: the same kernels on a GPU, to re-fit the model).
// Each writes what it measured in %clock64 cycles to out[] (stream_read: the host times the
// launch); single-thread kernels keep one dependent chain so the cycles are the latency.
// Regenerate: nvcc -ptx -arch=sm_90a -O3 -lineinfo -o microbench.ptx microbench.cu
#include <stdint.h>

__device__ static inline uint32_t sa(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }


// ring[i] = the address of node (i + 1) % n, nodes `step` bytes apart (one node per 128-byte line
// for step 128): every hop of the chase is a new line
extern "C" __global__ void chase_init(unsigned char *ring, unsigned n, unsigned step)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        *(unsigned char **)(ring + (size_t)i * step) = ring + (size_t)((i + 1) % n) * step;
}

// one thread: `warm` hops (filling the caches the ring fits in), then `hops` timed ones;
// out[0] cycles a hop, out[1] the last node (keeps the chain alive)
extern "C" __global__ void chase(unsigned char *ring, unsigned warm, unsigned hops, long long *out)
{
    unsigned char *p = ring;
    for (unsigned i = 0; i < warm; i++) p = *(unsigned char *volatile *)p;
    long long t0 = clock64();
    for (unsigned i = 0; i < hops; i++) p = *(unsigned char **)p;
    long long t1 = clock64();
    out[0] = (t1 - t0) / hops;
    out[1] = (long long)p;
}

// the same chase with ld.global.cg (__ldcg: "cache at global level", L2 only): a ring that fits
// in L1 still takes the L2's latency a hop
extern "C" __global__ void chase_cg(unsigned char *ring, unsigned warm, unsigned hops, long long *out)
{
    unsigned char *p = ring;
    for (unsigned i = 0; i < warm; i++) p = (unsigned char *)__ldcg((const unsigned long long *)p);
    long long t0 = clock64();
    for (unsigned i = 0; i < hops; i++) p = (unsigned char *)__ldcg((const unsigned long long *)p);
    long long t1 = clock64();
    out[0] = (t1 - t0) / hops;
    out[1] = (long long)p;
}

// shared memory's latency: a chase through 1024 words of shared memory, each holding the next
// one's shared-memory address, so a hop is one ld.shared [r] (an index chase puts a shift and an
// add between the loads in the PTX, which ptxas folds into the address and emu would time)
extern "C" __global__ void smem_chase(unsigned hops, long long *out)
{
    __shared__ unsigned s[1024];
    if (threadIdx.x != 0) return;
    for (unsigned i = 0; i < 1024; i++) s[i] = sa(&s[(i + 33) % 1024]);
    unsigned j = sa(&s[0]);
    long long t0 = clock64();
    for (unsigned i = 0; i < hops; i++) asm volatile("ld.volatile.shared.u32 %0, [%0];" : "+r"(j));
    long long t1 = clock64();
    out[0] = (t1 - t0) / hops;
    out[1] = j;
}

// distributed shared memory's latency: block 0 of a cluster of 2 chases through block 1's words
extern "C" __global__ void __cluster_dims__(2, 1, 1) dsmem_chase(unsigned hops, long long *out)
{
    __shared__ unsigned s[1024];
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    if (threadIdx.x == 0)
        for (unsigned i = 0; i < 1024; i++) s[i] = (i + 33) % 1024;
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
    if (rank == 0 && threadIdx.x == 0) {
        uint32_t base;
        asm volatile("mapa.shared::cluster.u32 %0, %1, 1;" : "=r"(base) : "r"(sa(s)));
        unsigned j = 0;
        long long t0 = clock64();
        for (unsigned i = 0; i < hops; i++)
            asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(j) : "r"(base + 4 * j) : "memory");
        long long t1 = clock64();
        out[0] = (t1 - t0) / hops;
        out[1] = j;
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// streaming read bandwidth: every thread sums float4s a grid stride apart (the host divides the
// bytes by the launch's time); the sums go to sums[] so nothing is dropped
extern "C" __global__ void stream_read(const float4 *a, float *sums, unsigned n4)
{
    float s = 0.0f;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        float4 v = a[i];
        s += v.x + v.y + v.z + v.w;
    }
    sums[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// the L2's latency under load: block 0's thread 0 waits `delay` cycles (the other blocks' first
// pass brings the buffer, the ring's nodes among it, into L2), then chases `hops` nodes of the ring
// laid in `buf` (out[0] cycles a hop); blocks 1.. read the whole buffer `passes` times, each a
// slice a grid stride apart (more than an SM's L1, so they go to L2), and block 1 writes the
// cycles its passes took to out[2] (the host turns them into the load's bytes a cycle)
extern "C" __global__ void loaded_chase(unsigned char *buf, unsigned n4, unsigned passes, unsigned delay,
                                        unsigned hops, long long *out, float *sink)
{
    if (blockIdx.x == 0) {
        if (threadIdx.x) return;
        long long t = clock64();
        while (clock64() - t < delay) {}
        unsigned char *p = buf;
        long long t0 = clock64();
        for (unsigned i = 0; i < hops; i++) p = *(unsigned char **)p;
        long long t1 = clock64();
        out[0] = (t1 - t0) / hops;
        out[1] = (long long)p;
        return;
    }
    const float4 *a = (const float4 *)buf;
    float s = 0.0f;
    long long t0 = clock64();
    for (unsigned k = 0; k < passes; k++)
        for (unsigned i = (blockIdx.x - 1) * blockDim.x + threadIdx.x; i < n4; i += (gridDim.x - 1) * blockDim.x) {
            float4 v = a[i];
            s += v.x + v.y + v.z + v.w;
        }
    __syncthreads();
    if (blockIdx.x == 1 && threadIdx.x == 0) out[2] = clock64() - t0;
    sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// `iters` rounds of: the calling threads arrive on the mbarrier at `bar` (a shared address) and
// wait for its phase; the cycles a round
__device__ __forceinline__ long long arrive_wait_rounds(unsigned bar, unsigned iters)
{
    long long t0 = clock64();
    for (unsigned i = 0; i < iters; i++) {
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
        unsigned done = 0;
        while (!done)
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(done) : "r"(bar), "r"(i & 1) : "memory");
    }
    return (clock64() - t0) / iters;
}

// an mbarrier's round trip: one thread arrives and waits for the phase, `iters` times
extern "C" __global__ void mbar_roundtrip(unsigned iters, long long *out)
{
    __shared__ __align__(8) uint64_t bar;
    if (threadIdx.x != 0) return;
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&bar)));
    out[0] = arrive_wait_rounds(sa(&bar), iters);
}

// per-thread arrivals (libcu++'s cuda::barrier): the 32 threads of one warp each arrive on one
// mbarrier (count 32) and wait for the phase, `iters` times; out[0] cycles a round.  Against
// mbar_roundtrip's one thread, the difference over 31 is what each further lane's arrival costs
// (emu_model.c's mbar_lane_clk)
extern "C" __global__ void mbar_warp(unsigned iters, long long *out)
{
    __shared__ __align__(8) uint64_t bar;
    if (threadIdx.x >= 32) return;
    if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 32;" ::"r"(sa(&bar)));
    __syncwarp();
    long long cycles = arrive_wait_rounds(sa(&bar), iters);
    if (threadIdx.x == 0) out[0] = cycles;
}

// a TMA bulk copy of `bytes` from global memory (cold: not read before) into shared memory,
// waited for on its mbarrier: out[0] its cycles
extern "C" __global__ void tma_bulk(const unsigned char *src, unsigned bytes, long long *out)
{
    extern __shared__ __align__(128) unsigned char dyn[];
    __shared__ __align__(8) uint64_t bar;
    if (threadIdx.x != 0) return;
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&bar)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    long long t0 = clock64();
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&bar)), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(sa(dyn)), "l"(src), "r"(bytes), "r"(sa(&bar)) : "memory");
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(sa(&bar)) : "memory");
    out[0] = clock64() - t0;
}

// a chase through a ring (chase_init's) by bulk copies, as the TMA latency benchmark of [P25]'s
// authors does (HPMLL/NVIDIA-Hopper-Benchmark tma_lat_random: 16 bytes a hop into shared memory,
// an mbarrier wait, the next address read from what landed): `warm` hops, then `hops` timed;
// out[0] cycles a hop, out[1] the last node
extern "C" __global__ void tma_chase(const unsigned char *ring, unsigned warm, unsigned hops, long long *out)
{
    __shared__ __align__(16) const unsigned char *node[2];
    __shared__ __align__(8) uint64_t bar;
    if (threadIdx.x != 0) return;
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&bar)));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    const unsigned char *p = ring;
    unsigned phase = 0;
    long long t0 = 0;
    for (unsigned i = 0; i < warm + hops; i++) {
        if (i == warm) t0 = clock64();
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 16;" ::"r"(sa(&bar)) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 16, [%2];"
                     ::"r"(sa(node)), "l"(p), "r"(sa(&bar)) : "memory");
        unsigned done = 0;
        while (!done)
            asm volatile("{ .reg .pred q; mbarrier.try_wait.parity.shared::cta.b64 q, [%1], %2; selp.u32 %0, 1, 0, q; }"
                         : "=r"(done) : "r"(sa(&bar)), "r"(phase) : "memory");
        phase ^= 1;
        p = ((const unsigned char *volatile *)node)[0];
    }
    out[0] = (clock64() - t0) / hops;
    out[1] = (long long)p;
}

// K-major bf16 operand in shared memory without swizzle: 8x8 core matrices, 128 bytes each
__device__ static inline uint64_t desc(uint32_t addr)
{
    return (uint64_t)((addr & 0x3ffff) >> 4) | (uint64_t)(128 >> 4) << 16 | (uint64_t)(256 >> 4) << 32;
}

// back-to-back wgmma m64n256k16 bf16 (f32 accumulators) of each warpgroup from shared memory:
// out[0] the cycles of `iters` of them (each 64 x 256 x 16 multiply-adds); the tiles' contents do
// not matter to the rate (zeros)
extern "C" __global__ void __launch_bounds__(256, 1) wgmma_rate(unsigned iters, long long *out, float *sink)
{
    __shared__ __align__(128) unsigned char a[64 * 16 * 2], b[256 * 16 * 2];
    for (unsigned i = threadIdx.x; i < sizeof a; i += blockDim.x) a[i] = 0;
    for (unsigned i = threadIdx.x; i < sizeof b; i += blockDim.x) b[i] = 0;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    float d[128];
    for (int i = 0; i < 128; i++) d[i] = 0.0f;
    uint64_t da = desc(sa(a)), db = desc(sa(b));
    long long t0 = clock64();
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    for (unsigned it = 0; it < iters; it++) {
            asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, 1, 1, 1, 0, 0;"
                         : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
                         : "l"(da), "l"(db));
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    long long t1 = clock64();
    if (threadIdx.x == 0) out[0] = t1 - t0;
    float s = 0.0f;
    for (int i = 0; i < 128; i++) s += d[i];
    sink[threadIdx.x] = s;
}

// the issue model's pipes (emu_model.c's pipe_rate): a block of 1024 threads (8 warps a
// sub-partition) runs `iters` rounds of 8 independent chains of one operation; out[0] the
// cycles thread 0 saw from before the first round to after the block's last (a __syncthreads
// each side), so the SM's rate is 1024 x 8 x 16 x iters over it.  FP32 fma: 128 a cycle an SM
// (CUDA C++ Programming Guide, cc 9.0); ex2.approx (the special-function unit): 16.
extern "C" __global__ void __launch_bounds__(1024, 1) fma_rate(unsigned iters, long long *out, float *sink)
{
    float x[8];
    for (int j = 0; j < 8; j++) x[j] = threadIdx.x * 1e-3f + j;
    __syncthreads();
    long long t0 = clock64();
    for (unsigned it = 0; it < iters; it++) {
#pragma unroll
        for (int u = 0; u < 16; u++)
#pragma unroll
            for (int j = 0; j < 8; j++) x[j] = fmaf(x[j], 0.999f, 1e-3f);
    }
    __syncthreads();
    long long t1 = clock64();
    if (threadIdx.x == 0) out[0] = t1 - t0;
    float s = 0.0f;
    for (int j = 0; j < 8; j++) s += x[j];
    sink[threadIdx.x] = s;
}

extern "C" __global__ void __launch_bounds__(1024, 1) ex2_rate(unsigned iters, long long *out, float *sink)
{
    float x[8];
    for (int j = 0; j < 8; j++) x[j] = -(threadIdx.x * 1e-4f + j * 1e-2f);
    __syncthreads();
    long long t0 = clock64();
    for (unsigned it = 0; it < iters; it++) {
#pragma unroll
        for (int u = 0; u < 16; u++)
#pragma unroll
            for (int j = 0; j < 8; j++) asm("ex2.approx.ftz.f32 %0, %0;" : "+f"(x[j]));
    }
    __syncthreads();
    long long t1 = clock64();
    if (threadIdx.x == 0) out[0] = t1 - t0;
    float s = 0.0f;
    for (int j = 0; j < 8; j++) s += x[j];
    sink[threadIdx.x] = s;
}

// result latency (emu_model.c's lat: the issue model's register scoreboard): one warp runs `iters`
// rounds of 64 f32 fmas, each on the one before (fma_chain), or of 128 on 8 chains in turn
// (fma_ilp: inline asm, so that the PTX keeps them interleaved: emu issues PTX in its order, and
// nvcc's order pairs dependent fmas that ptxas would spread), or of 64 dependent ex2.approx
// (ex2_chain); out[0] the cycles from before the first
// round to after the last, so an instruction takes out[0] / (64 or 128 iters) cycles: a chain's
// latency (about 4 for an fma
// on Ampere and Ada, whose figures NVIDIA gave Mesa's compiler; 14-18 for ex2 measured on Ada and
// Blackwell), and 8 chains one a cycle (the sub-partition's issue rate)
extern "C" __global__ void fma_chain(unsigned iters, long long *out, float *sink)
{
    float x = threadIdx.x * 1e-3f, a = 0.999f + x * 1e-9f, b = 1e-3f;
    __syncwarp();
    long long t0 = clock64();
#pragma unroll 1
    for (unsigned it = 0; it < iters; it++) {
#pragma unroll
        for (int u = 0; u < 64; u++) x = fmaf(x, a, b);
    }
    long long t1 = clock64();
    if (threadIdx.x == 0) out[0] = t1 - t0;
    sink[threadIdx.x] = x;
}

extern "C" __global__ void fma_ilp(unsigned iters, long long *out, float *sink)
{
    float x[8], a = 0.999f + threadIdx.x * 1e-9f, b = 1e-3f;
    for (int j = 0; j < 8; j++) x[j] = threadIdx.x * 1e-3f + j;
    __syncwarp();
    long long t0 = clock64();
#pragma unroll 1
    for (unsigned it = 0; it < iters; it++) {
#pragma unroll
        for (int u = 0; u < 16; u++)
#pragma unroll
            for (int j = 0; j < 8; j++) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x[j]) : "f"(a), "f"(b));
    }
    long long t1 = clock64();
    if (threadIdx.x == 0) out[0] = t1 - t0;
    float s = 0.0f;
    for (int j = 0; j < 8; j++) s += x[j];
    sink[threadIdx.x] = s;
}

extern "C" __global__ void ex2_chain(unsigned iters, long long *out, float *sink)
{
    float x = -(threadIdx.x * 1e-4f);
    __syncwarp();
    long long t0 = clock64();
#pragma unroll 1
    for (unsigned it = 0; it < iters; it++) {
#pragma unroll
        for (int u = 0; u < 64; u++) asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(x));
    }
    long long t1 = clock64();
    if (threadIdx.x == 0) out[0] = t1 - t0;
    sink[threadIdx.x] = x;
}

// one SM's way from L2 and its way to L2 (emu_model.c's sm_port_bytes_per_clk, each way): one
// block of 1024 threads reads n4 float4 (through L2: ld.cg) and, with `write`, stores each to b;
// out[0] its cycles.  Reads and writes travel on links of their own: the copy takes about what the
// read alone takes, not the sum
extern "C" __global__ void __launch_bounds__(1024, 1) port_copy(const float4 *a, float4 *b, unsigned n4, unsigned write,
                                                                long long *out)
{
    float s = 0.0f;
    __syncthreads();
    long long t0 = clock64();
    for (unsigned i = threadIdx.x; i + 3 * 1024 < n4; i += 4 * 1024) {
        float4 v[4];
#pragma unroll
        for (int u = 0; u < 4; u++) v[u] = __ldcg(a + i + u * 1024);
        if (write) {
#pragma unroll
            for (int u = 0; u < 4; u++) b[i + u * 1024] = v[u];
        } else {
#pragma unroll
            for (int u = 0; u < 4; u++) s += v[u].x + v[u].y + v[u].z + v[u].w;
        }
    }
    __syncthreads();
    long long t1 = clock64();
    if (threadIdx.x == 0) out[0] = t1 - t0;
    if (s == 1234.5f) b[threadIdx.x] = make_float4(s, s, s, s); // keeps the read alive
}

// streaming write: every thread stores float4s a grid stride apart (the host divides the bytes by
// the launch's time). A burst larger than the L2, made right after a read that left the L2 clean,
// shows how much of it the L2 takes in before the HBM's bandwidth binds (emu's l2_dirty_frac)
extern "C" __global__ void stream_write(float4 *a, unsigned n4, float v)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x)
        a[i] = make_float4(v, v, v, v);
}
