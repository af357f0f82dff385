// markers.cu - a kernel with region markers (ptx/mgpu_markers.h), a role for its lanes and a
// __device__ variable: under exec --trace each launch writes a Perfetto trace of its regions, its
// lanes named "... · stager", and the program's results (and the variable, kept across launches)
// are the same as without it.
#include "check.h"
#include "mgpu_markers.h"

__device__ int launches_seen;

__global__ void staged(const float *in, float *out, int n)
{
    __shared__ float tile[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    MGPU_ROLE("stager");
    MGPU_BEGIN("load");
    tile[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    MGPU_END("load");
    MGPU_BEGIN("compute");
    float v = tile[threadIdx.x] + tile[(threadIdx.x + 1) % 128];
    MGPU_END("compute");
    if (i < n) out[i] = v;
    if (i == 0) atomicAdd(&launches_seen, 1);
}

int main()
{
    const int n = 1024;
    float h[n], r[n], *in, *out;
    for (int i = 0; i < n; i++) h[i] = (float)(i % 13);
    CHECK(cudaMalloc(&in, sizeof h));
    CHECK(cudaMalloc(&out, sizeof h));
    CHECK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
    for (int rep = 0; rep < 2; rep++) staged<<<n / 128, 128>>>(in, out, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(r, out, sizeof r, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        int b = i / 128 * 128, t = i % 128;
        EXPECT(r[i] == h[i] + h[b + (t + 1) % 128], "out[%d] = %g", i, r[i]);
    }
    int seen = 0;
    CHECK(cudaMemcpyFromSymbol(&seen, launches_seen, sizeof seen));
    EXPECT(seen == 2, "launches_seen = %d", seen);
    printf("markers: ok\n");
    return 0;
}
