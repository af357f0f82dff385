// printf_assert.cu - device printf (the program reads its own stdout back through a file:
// one line per thread, in some order) and a failing device assert (cudaErrorAssert, sticky: the
// calls after it fail with it too, as on a GPU).
#include "check.h"
#include <cassert>
#include <cstring>
#include <unistd.h>

__global__ void hello(int base)
{
    printf("hello from thread %d of block %d: %d\n", threadIdx.x, blockIdx.x, base + threadIdx.x);
}

__global__ void check_positive(const int *v)
{
    assert(v[threadIdx.x] > 0);
}

int main()
{
    char path[] = "/tmp/mgpu_printf_XXXXXX";
    int fd = mkstemp(path);
    EXPECT(fd >= 0, "mkstemp");
    fflush(stdout);
    int saved = dup(1);
    dup2(fd, 1);
    hello<<<2, 4>>>(100);
    CHECK(cudaDeviceSynchronize());
    fflush(stdout);
    dup2(saved, 1);
    FILE *f = fopen(path, "r");
    char line[256];
    int seen = 0, lines = 0;
    while (fgets(line, sizeof line, f)) {
        int t, b, v;
        EXPECT(sscanf(line, "hello from thread %d of block %d: %d", &t, &b, &v) == 3, "line `%s`", line);
        EXPECT(v == 100 + t && t < 4 && b < 2, "line `%s`", line);
        seen |= 1 << (b * 4 + t);
        lines++;
    }
    fclose(f);
    unlink(path);
    EXPECT(lines == 8 && seen == 0xff, "%d lines, threads seen 0x%x", lines, seen);

    int h[32], *d;
    for (int i = 0; i < 32; i++) h[i] = i == 17 ? 0 : 1;
    CHECK(cudaMalloc(&d, sizeof h));
    CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    check_positive<<<1, 32>>>(d);
    cudaError_t e = cudaDeviceSynchronize();
    EXPECT(e == cudaErrorAssert, "the failed assert gave %s", cudaGetErrorName(e));
    EXPECT(cudaMalloc(&d, 4) == cudaErrorAssert, "the assert's error is sticky");
    printf("printf_assert: ok\n");
    return 0;
}
