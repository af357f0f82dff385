// device_query.cu - the device as a program sees it (cudaGetDeviceProperties read through
// nvcc's own struct, so its layout is checked against the attributes), occupancy
// (cudaOccupancyMaxActiveBlocksPerMultiprocessor) sizing a persistent grid that takes work
// items from an atomic counter, cudaFuncGetAttributes, and a call outside the supported set
// (cudaErrorNotSupported, named on stderr).
#include "check.h"
#include <cstring>

__device__ unsigned next_item;

__global__ void persistent(const int *in, int *out, unsigned items)
{
    __shared__ unsigned item;
    for (;;) {
        if (threadIdx.x == 0) item = atomicAdd(&next_item, 1u);
        __syncthreads();
        unsigned it = item;
        __syncthreads();
        if (it >= items) return;
        out[it * blockDim.x + threadIdx.x] = in[it * blockDim.x + threadIdx.x] * 3 + (int)it;
    }
}

int main()
{
    int count = 0, dev = -1;
    CHECK(cudaGetDeviceCount(&count));
    CHECK(cudaGetDevice(&dev));
    EXPECT(count >= 1 && dev == 0, "%d devices, device %d", count, dev);
    cudaDeviceProp p;
    memset(&p, 0xff, sizeof p);
    CHECK(cudaGetDeviceProperties(&p, 0));
    int v;
    struct { cudaDeviceAttr a; long want; const char *what; } attrs[] = {
        {cudaDevAttrMultiProcessorCount, p.multiProcessorCount, "multiProcessorCount"},
        {cudaDevAttrMaxSharedMemoryPerBlockOptin, (long)p.sharedMemPerBlockOptin, "sharedMemPerBlockOptin"},
        {cudaDevAttrMaxSharedMemoryPerMultiprocessor, (long)p.sharedMemPerMultiprocessor, "sharedMemPerMultiprocessor"},
        {cudaDevAttrMaxThreadsPerMultiProcessor, p.maxThreadsPerMultiProcessor, "maxThreadsPerMultiProcessor"},
        {cudaDevAttrMaxBlocksPerMultiprocessor, p.maxBlocksPerMultiProcessor, "maxBlocksPerMultiProcessor"},
        {cudaDevAttrL2CacheSize, p.l2CacheSize, "l2CacheSize"},
        {cudaDevAttrComputeCapabilityMajor, p.major, "major"},
        {cudaDevAttrComputeCapabilityMinor, p.minor, "minor"},
        {cudaDevAttrCooperativeLaunch, p.cooperativeLaunch, "cooperativeLaunch"},
        {cudaDevAttrClusterLaunch, p.clusterLaunch, "clusterLaunch"},
        {cudaDevAttrMaxGridDimY, p.maxGridSize[1], "maxGridSize[1]"},
        {cudaDevAttrWarpSize, p.warpSize, "warpSize"},
    };
    for (auto &a : attrs) {
        CHECK(cudaDeviceGetAttribute(&v, a.a, 0));
        EXPECT(v == a.want, "%s: the attribute says %d, the properties %ld", a.what, v, a.want);
    }
    EXPECT(p.major == 9 && p.minor == 0 && p.warpSize == 32 && p.sharedMemPerBlockOptin == 232448 &&
           p.regsPerMultiprocessor == 65536 && p.managedMemory == 1 && p.reserved[55] == 0,
           "an H100/H200's properties (sm_%d%d, %zu bytes opt-in)", p.major, p.minor, p.sharedMemPerBlockOptin);
    printf("%s: %d SMs, %zu bytes, L2 %d\n", p.name, p.multiProcessorCount, p.totalGlobalMem, p.l2CacheSize);

    const int threads = 128;
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persistent, threads, 0));
    EXPECT(per_sm >= 1 && per_sm <= 16, "%d blocks per SM", per_sm);
    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, persistent));
    EXPECT(fa.sharedSizeBytes == 4 && fa.maxThreadsPerBlock == 1024, "static smem %zu", fa.sharedSizeBytes);
    const unsigned items = 3000;
    int *in, *out, *h = new int[items * threads];
    for (unsigned i = 0; i < items * threads; i++) h[i] = (int)(i % 1000);
    CHECK(cudaMalloc(&in, items * threads * sizeof(int)));
    CHECK(cudaMalloc(&out, items * threads * sizeof(int)));
    CHECK(cudaMemcpy(in, h, items * threads * sizeof(int), cudaMemcpyHostToDevice));
    unsigned zero = 0;
    CHECK(cudaMemcpyToSymbol(next_item, &zero, sizeof zero));
    persistent<<<per_sm * p.multiProcessorCount, threads>>>(in, out, items);
    CHECK(cudaGetLastError());
    int *r = new int[items * threads];
    CHECK(cudaMemcpy(r, out, items * threads * sizeof(int), cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < items * threads; i++)
        EXPECT(r[i] == h[i] * 3 + (int)(i / threads), "out[%u] = %d", i, r[i]);

    cudaGraph_t g;
    EXPECT(cudaGraphCreate(&g, 0) == cudaErrorNotSupported, "graphs are outside the supported set");
    EXPECT(cudaGetLastError() == cudaErrorNotSupported, "the last error names it");
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    delete[] h;
    delete[] r;
    printf("device_query: ok (%d blocks per SM x %d SMs)\n", per_sm, p.multiProcessorCount);
    return 0;
}
