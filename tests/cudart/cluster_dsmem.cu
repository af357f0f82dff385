// cluster_dsmem.cu - thread-block clusters: a kernel launched with cudaLaunchKernelEx and a
// cluster dimension of 4, each block reading its neighbours' shared memory (distributed shared
// memory, cluster.map_shared_rank) after cluster.sync(); and a kernel with __cluster_dims__
// launched with <<<>>>.
#include "check.h"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void ring(const int *in, int *out)
{
    __shared__ int mine[128];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank(), size = cluster.num_blocks();
    mine[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x];
    cluster.sync();
    int *next = cluster.map_shared_rank(mine, (rank + 1) % size);
    out[blockIdx.x * 128 + threadIdx.x] = mine[threadIdx.x] + 1000 * next[threadIdx.x] + (int)rank;
    cluster.sync(); // the neighbour's shared memory stays until everyone has read it
}

__global__ void __cluster_dims__(2, 1, 1) pairs(int *out)
{
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0) out[blockIdx.x] = (int)(cluster.block_rank() * 10 + cluster.num_blocks());
}

int main()
{
    const int blocks = 8, n = blocks * 128;
    int *h = new int[n], *in, *out;
    for (int i = 0; i < n; i++) h[i] = i % 97;
    CHECK(cudaMalloc(&in, n * sizeof(int)));
    CHECK(cudaMalloc(&out, n * sizeof(int)));
    CHECK(cudaMemcpy(in, h, n * sizeof(int), cudaMemcpyHostToDevice));
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(128);
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 4;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&cfg, ring, (const int *)in, out));
    int *r = new int[n];
    CHECK(cudaMemcpy(r, out, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int b = 0; b < blocks; b++)
        for (int t = 0; t < 128; t++) {
            int rank = b % 4, nb = b - rank + (rank + 1) % 4;
            int want = h[b * 128 + t] + 1000 * h[nb * 128 + t] + rank;
            EXPECT(r[b * 128 + t] == want, "block %d thread %d: %d, not %d", b, t, r[b * 128 + t], want);
        }
    attr.val.clusterDim.x = 3; // 8 blocks are not a whole number of clusters of 3
    cudaError_t e = cudaLaunchKernelEx(&cfg, ring, (const int *)in, out);
    EXPECT(e != cudaSuccess, "a grid of 8 in clusters of 3 was launched");
    cudaGetLastError();
    pairs<<<6, 32>>>(out);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(r, out, 6 * sizeof(int), cudaMemcpyDeviceToHost));
    for (int b = 0; b < 6; b++) EXPECT(r[b] == (b % 2) * 10 + 2, "pairs: block %d: %d", b, r[b]);
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    delete[] h;
    delete[] r;
    printf("cluster_dsmem: ok\n");
    return 0;
}
