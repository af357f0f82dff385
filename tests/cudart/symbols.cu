// symbols.cu - __constant__ and __device__ variables: cudaMemcpyToSymbol (with an offset),
// cudaMemcpyFromSymbol, cudaGetSymbolAddress/Size, a __device__ array with an initialiser,
// and a __device__ counter that keeps its value from one launch to the next.
#include "check.h"

__constant__ float coef[8];
__device__ int table[4] = {10, 20, 30, 40};
__device__ unsigned counter;

__global__ void poly(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = 0;
    for (int k = 7; k >= 0; k--) v = v * x[i] + coef[k];
    y[i] = v + table[i % 4];
    atomicAdd(&counter, 1u);
}

int main()
{
    const int n = 1000;
    float hc[8] = {1, 0.5f, 0.25f, 0, 0, 0, 0, 0};
    CHECK(cudaMemcpyToSymbol(coef, hc, 4 * sizeof(float)));
    CHECK(cudaMemcpyToSymbol(coef, hc + 4, 4 * sizeof(float), 4 * sizeof(float), cudaMemcpyHostToDevice));
    size_t size = 0;
    CHECK(cudaGetSymbolSize(&size, coef));
    EXPECT(size == sizeof hc, "coef is %zu bytes", size);
    void *cp = nullptr;
    CHECK(cudaGetSymbolAddress(&cp, counter));
    CHECK(cudaMemset(cp, 0, sizeof(unsigned)));
    EXPECT(cudaMemcpyToSymbol(coef, hc, 64) == cudaErrorInvalidValue, "a copy past the symbol's end");
    float *hx = new float[n], *hy = new float[n], *x, *y;
    for (int i = 0; i < n; i++) hx[i] = (i % 10) * 0.1f;
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    CHECK(cudaMalloc(&y, n * sizeof(float)));
    CHECK(cudaMemcpy(x, hx, n * sizeof(float), cudaMemcpyHostToDevice));
    for (int rep = 0; rep < 2; rep++) poly<<<(n + 127) / 128, 128>>>(x, y, n);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(hy, y, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        float want = 1 + 0.5f * hx[i] + 0.25f * hx[i] * hx[i] + 10 * (1 + i % 4);
        EXPECT(fabsf(hy[i] - want) < 1e-5f, "y[%d] = %g, not %g", i, hy[i], want);
    }
    unsigned count = 0;
    CHECK(cudaMemcpyFromSymbol(&count, counter, sizeof count));
    EXPECT(count == 2 * n, "the counter is %u after two launches, not %d", count, 2 * n);
    int t[4];
    CHECK(cudaMemcpyFromSymbol(t, table, sizeof t));
    EXPECT(t[0] == 10 && t[3] == 40, "table = %d .. %d", t[0], t[3]);
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    delete[] hx;
    delete[] hy;
    printf("symbols: ok\n");
    return 0;
}
