// dynamic_smem.cu - a block reduction in 128 KiB of dynamic shared memory: refused
// (cudaErrorInvalidValue) before cudaFuncSetAttribute raises the kernel's limit, and right after.
#include "check.h"

__global__ void block_sum(const float *in, float *out, int per_block)
{
    extern __shared__ float buf[];
    const float *src = in + (size_t)blockIdx.x * per_block;
    for (int i = threadIdx.x; i < per_block; i += blockDim.x) buf[i] = src[i];
    __syncthreads();
    for (int stride = per_block / 2; stride > 0; stride /= 2) {
        for (int i = threadIdx.x; i < stride; i += blockDim.x) buf[i] += buf[i + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = buf[0];
}

int main()
{
    const int per_block = 32768, blocks = 4; // 128 KiB a block
    const size_t smem = per_block * sizeof(float);
    const int n = per_block * blocks;
    float *h = new float[n], *in, *out, hs[blocks];
    for (int i = 0; i < n; i++) h[i] = (float)(i % 7);
    CHECK(cudaMalloc(&in, n * sizeof(float)));
    CHECK(cudaMalloc(&out, blocks * sizeof(float)));
    CHECK(cudaMemcpy(in, h, n * sizeof(float), cudaMemcpyHostToDevice));
    block_sum<<<blocks, 256, smem>>>(in, out, per_block);
    cudaError_t e = cudaGetLastError();
    EXPECT(e != cudaSuccess, "128 KiB of dynamic shared memory without the attribute was taken");
    CHECK(cudaFuncSetAttribute(block_sum, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    cudaFuncAttributes a;
    CHECK(cudaFuncGetAttributes(&a, block_sum));
    EXPECT(a.maxDynamicSharedSizeBytes == (int)smem, "maxDynamicSharedSizeBytes = %d", a.maxDynamicSharedSizeBytes);
    EXPECT(cudaFuncSetAttribute(block_sum, cudaFuncAttributeMaxDynamicSharedMemorySize, 300 * 1024) ==
               cudaErrorInvalidValue, "300 KiB is more than a block may have");
    cudaGetLastError();
    block_sum<<<blocks, 256, smem>>>(in, out, per_block);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(hs, out, sizeof hs, cudaMemcpyDeviceToHost));
    for (int b = 0; b < blocks; b++) {
        double want = 0;
        for (int i = 0; i < per_block; i++) want += h[b * per_block + i];
        EXPECT(hs[b] == (float)want, "block %d: %g, not %g", b, hs[b], want);
    }
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    delete[] h;
    printf("dynamic_smem: ok\n");
    return 0;
}
