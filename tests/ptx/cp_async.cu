// cp_async.cu - Ampere-style asynchronous copies to shared memory (cp.async
// .cg 16 bytes double-buffered, .ca 4 bytes with a zero-filling source size,
// commit_group / wait_group), for test_emu.
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o cp_async.ptx cp_async.cu
#include <cuda_pipeline.h>
extern "C" __global__ void stage(const float4 *in, float4 *out, const float *sc, float *so, int n)
{
    __shared__ float4 buf[2][128];
    __shared__ float s1[128];
    int t = threadIdx.x;
    __pipeline_memcpy_async(&buf[0][t], &in[t], sizeof(float4));
    __pipeline_commit();
    for (int k = 1; k < n; k++) {
        __pipeline_memcpy_async(&buf[k & 1][t], &in[k * 128 + t], sizeof(float4));
        __pipeline_commit();
        __pipeline_wait_prior(1);
        __syncthreads();
        out[(k - 1) * 128 + t] = buf[(k - 1) & 1][(t + 1) % 128];
        __syncthreads();
    }
    __pipeline_wait_prior(0);
    __syncthreads();
    out[(n - 1) * 128 + t] = buf[(n - 1) & 1][(t + 1) % 128];
    __pipeline_memcpy_async(&s1[t], &sc[t], 4, t & 1 ? 4 : 0); // odd threads: 4 bytes zero-filled (source size 0)
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    so[t] = s1[127 - t];
}
