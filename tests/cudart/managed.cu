// managed.cu - managed memory the host touches directly (cudaMallocManaged), a __managed__
// variable, prefetch and advice (accepted), and cudaPointerGetAttributes telling the kinds apart.
#include "check.h"

__managed__ int total;

__global__ void square_sum(int *v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        v[i] = v[i] * v[i];
        atomicAdd(&total, v[i]);
    }
}

int main()
{
    const int n = 3000;
    int *v;
    CHECK(cudaMallocManaged(&v, n * sizeof(int)));
    for (int i = 0; i < n; i++) v[i] = i % 50;
    total = 0;
    int dev = 0;
    CHECK(cudaGetDevice(&dev));
    square_sum<<<(n + 255) / 256, 256>>>(v, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    long want = 0;
    for (int i = 0; i < n; i++) {
        int x = i % 50;
        EXPECT(v[i] == x * x, "v[%d] = %d", i, v[i]);
        want += x * x;
    }
    EXPECT(total == want, "total = %d, not %ld", total, want);
    cudaPointerAttributes a;
    CHECK(cudaPointerGetAttributes(&a, v));
    EXPECT(a.type == cudaMemoryTypeManaged, "managed memory's type is %d", (int)a.type);
    int *d;
    CHECK(cudaMalloc(&d, 16));
    CHECK(cudaPointerGetAttributes(&a, d));
    EXPECT(a.type == cudaMemoryTypeDevice, "device memory's type is %d", (int)a.type);
    CHECK(cudaFree(d));
    CHECK(cudaFree(v));
    printf("managed: ok\n");
    return 0;
}
