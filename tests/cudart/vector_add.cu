// vector_add.cu - the classic: copies in, a kernel, a copy out, every call checked;
// and the errors a careless program meets: a launch with too many threads
// (cudaErrorInvalidConfiguration, then cleared by cudaGetLastError).
#include "check.h"

__global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

int main()
{
    const int n = 5000;
    float *ha = (float *)malloc(n * 4), *hb = (float *)malloc(n * 4), *hc = (float *)malloc(n * 4);
    for (int i = 0; i < n; i++) { ha[i] = i * 0.5f; hb[i] = 1000.0f - i; }
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, n * 4));
    CHECK(cudaMalloc(&b, n * 4));
    CHECK(cudaMalloc(&c, n * 4));
    CHECK(cudaMemcpy(a, ha, n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, hb, n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(c, 0, n * 4));
    vadd<<<(n + 255) / 256, 256>>>(a, b, c, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(hc, c, n * 4, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) EXPECT(hc[i] == ha[i] + hb[i], "c[%d] = %g, not %g", i, hc[i], ha[i] + hb[i]);

    vadd<<<1, 2048>>>(a, b, c, n); // more threads than a block may have
    cudaError_t e = cudaGetLastError();
    EXPECT(e == cudaErrorInvalidConfiguration, "%s", cudaGetErrorName(e));
    EXPECT(cudaGetLastError() == cudaSuccess, "the error was not cleared");
    EXPECT(cudaMemcpy(hc, c, n * 8, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue, "a copy past the end");

    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    free(ha), free(hb), free(hc);
    printf("vector_add: ok\n");
    return 0;
}
