// cccl.cu - markers in kernels written with CUDA's own libraries (libcu++'s
// cuda::barrier and cuda::pipeline with memcpy_async, cooperative groups,
// WMMA): what nvcc makes of them (mbarrier, cp.async, wmma, calls into
// libcu++) must instrument and pass ptxas in both scopes; on emu the kernels
// that use what it does not run are refused by name, the others run
// (tests/lua/instrument_spec.lua, tests/ptxas_check.sh).
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -o cccl.ptx cccl.cu
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <mma.h>
#include "../../ptx/mgpu_markers.h"
namespace cg = cooperative_groups;
using barrier = cuda::barrier<cuda::thread_scope_block>;
#pragma nv_diag_suppress static_var_with_dynamic_init // barriers in __shared__, initialised by thread 0

extern "C" __global__ void producer_consumer(const float *in, float *out, int n)
{
    __shared__ float buf[2][256];
    __shared__ barrier full[2], empty[2];
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0) {
        for (int i = 0; i < 2; i++) { init(&full[i], block.size()); init(&empty[i], block.size()); }
    }
    block.sync();
    int tiles = n / 256;
    for (int t = 0; t < tiles; t++) {
        int s = t % 2;
        MGPU_BEGIN("load");
        cuda::memcpy_async(block, buf[s], in + t * 256, sizeof(float) * 256, full[s]);
        full[s].arrive_and_wait();
        MGPU_END("load");
        MGPU_BEGIN("compute");
        out[t * 256 + threadIdx.x] = buf[s][(threadIdx.x + 1) % 256] * 2.0f;
        MGPU_END("compute");
        empty[s].arrive_and_wait();
    }
}

extern "C" __global__ void pipelined(const float *in, float *out, int n)
{
    __shared__ float buf[2][128];
    auto pipe = cuda::make_pipeline();
    int tiles = n / 128;
    for (int t = 0; t < tiles; t++) {
        MGPU_BEGIN("stage");
        pipe.producer_acquire();
        cuda::memcpy_async(&buf[t % 2][threadIdx.x], &in[t * 128 + threadIdx.x], sizeof(float), pipe);
        pipe.producer_commit();
        pipe.consumer_wait();
        MGPU_END("stage");
        out[t * 128 + threadIdx.x] = buf[t % 2][threadIdx.x] + 1.0f;
        pipe.consumer_release();
    }
}

extern "C" __global__ void wmma_gemm(const half *a, const half *b, float *c)
{
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    for (int k = 0; k < 4; k++) {
        MGPU_BEGIN("mma");
        wmma::load_matrix_sync(fa, a + k * 16, 64);
        wmma::load_matrix_sync(fb, b + k * 16, 64);
        wmma::mma_sync(fc, fa, fb, fc);
        MGPU_END("mma");
    }
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}

extern "C" __global__ void grid_sync_kernel(float *x, int n)
{
    auto grid = cg::this_grid();
    MGPU_BEGIN("phase1");
    for (int i = grid.thread_rank(); i < n; i += grid.size()) x[i] += 1.0f;
    MGPU_END("phase1");
    auto tile = cg::tiled_partition<16>(cg::this_thread_block());
    MGPU_BEGIN("reduce");
    float v = x[threadIdx.x % n];
    for (int o = 8; o > 0; o /= 2) v += tile.shfl_down(v, o);
    if (tile.thread_rank() == 0) atomicAdd(&x[0], v);
    MGPU_END("reduce");
}
