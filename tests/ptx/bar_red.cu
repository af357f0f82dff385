// bar_red.cu - __syncthreads_count, __syncthreads_and and __syncthreads_or (bar.red.popc.u32,
// bar.red.and.pred, bar.red.or.pred: what CUB's block algorithms, and so Thrust's sort, use),
// three rounds a block with the block's threads' votes from the input, and a block whose last
// warp is partial (tests/lua/bar_red_spec.lua checks them against the host's count).
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o bar_red.ptx bar_red.cu
extern "C" __global__ void votes(const int *in, int *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int acc = 0;
    for (int round = 0; round < 3; round++) {
        int v = in[t * 3 + round];
        int count = __syncthreads_count(v > 0);
        int all = __syncthreads_and(v > 0);
        int any = __syncthreads_or(v > 0);
        acc = acc * 1000 + count * 4 + all * 2 + any;
    }
    out[t] = acc;
}
