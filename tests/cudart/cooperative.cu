// cooperative.cu - a cooperative launch (cudaLaunchCooperativeKernel) whose grid synchronizes
// with cg::this_grid().sync() between two phases; the same grid through cudaLaunchKernelEx's
// cooperative attribute; and a grid too large to be resident at once
// (cudaErrorCooperativeLaunchTooLarge).
#include "check.h"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void two_phase(int *a, int *b, int n)
{
    cg::grid_group grid = cg::this_grid();
    for (int i = grid.thread_rank(); i < n; i += grid.size()) a[i] = i * 2;
    grid.sync();
    for (int i = grid.thread_rank(); i < n; i += grid.size()) b[i] = a[(i + 1) % n] + a[i];
}

int main()
{
    const int n = 10000;
    int *a, *b;
    CHECK(cudaMalloc(&a, n * sizeof(int)));
    CHECK(cudaMalloc(&b, n * sizeof(int)));
    int sms = 0, per_sm = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, two_phase, 128, 0));
    int nn = n;
    void *args[] = {&a, &b, &nn};
    CHECK(cudaLaunchCooperativeKernel((void *)two_phase, dim3(8), dim3(128), args, 0, 0));
    int *h = new int[n];
    CHECK(cudaMemcpy(h, b, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(h[i] == ((i + 1) % n) * 2 + i * 2, "b[%d] = %d", i, h[i]);

    CHECK(cudaMemset(b, 0, n * sizeof(int)));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(4);
    cfg.blockDim = dim3(256);
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeCooperative;
    attr.val.cooperative = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&cfg, two_phase, a, b, n));
    CHECK(cudaMemcpy(h, b, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(h[i] == ((i + 1) % n) * 2 + i * 2, "b[%d] = %d (launched with Ex)", i, h[i]);

    cudaError_t e = cudaLaunchCooperativeKernel((void *)two_phase, dim3(per_sm * sms + 1), dim3(128), args, 0, 0);
    EXPECT(e == cudaErrorCooperativeLaunchTooLarge, "%d blocks: %s", per_sm * sms + 1, cudaGetErrorName(e));
    cudaGetLastError();
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    delete[] h;
    printf("cooperative: ok\n");
    return 0;
}
