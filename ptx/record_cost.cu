// record_cost.cu - the cost of recording one event, Mosaic's way against the
// harness's markers, in the same tight loop (one warp; %clock around it), with
// the same number of records per iteration (two: a begin and an end), so that
// both spread the loop's own cost over the same number of events:
//   mosaic_records: `st.shared.v2.u32 [a], {tag, %clock}` by thread 0, as Mosaic
//                   GPU emits it (no bounds check), n/2 iterations of 2 records
//   marker_records: n/2 empty regions from markers (instrument this module)
// out[0] = cycles for the loop (n events in both).
#include "mgpu_markers.h"

static __device__ __forceinline__ void mosaic_record(bool writer, unsigned a, unsigned tag)
{
    asm volatile("{ .reg .pred p; setp.ne.u32 p, %0, 0; @p st.shared.v2.u32 [%1], {%2, %%clock}; }"
                 :: "r"((unsigned)writer), "r"(a), "r"(tag) : "memory");
}

extern "C" __global__ void mosaic_records(unsigned *out, unsigned n)
{
    __shared__ unsigned buf[2 * 4096];
    unsigned base = (unsigned)__cvta_generic_to_shared(buf);
    bool writer = threadIdx.x == 0;
    unsigned t0 = clock();
#pragma unroll 1
    for (unsigned i = 0; i < n / 2; i++) {
        unsigned a = base + 16 * (i & 2047);
        mosaic_record(writer, a, 0u);
        mosaic_record(writer, a + 8, 0x80000000u);
    }
    unsigned t1 = clock();
    if (threadIdx.x == 0) out[0] = t1 - t0;
}

extern "C" __global__ void marker_records(unsigned *out, unsigned n)
{
    unsigned t0 = clock();
#pragma unroll 1
    for (unsigned i = 0; i < n / 2; i++) {
        MGPU_BEGIN("r");
        MGPU_END("r");
    }
    unsigned t1 = clock();
    if (threadIdx.x == 0) out[0] = t1 - t0;
}
