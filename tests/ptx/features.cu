// features.cu - one module with many CUDA features, to show the front end
// takes what nvcc emits for them: printf (vprintf) and assert (__assertfail)
// calls, redux.sync and match.any.sync, cooperative groups' reduce, a CAS
// loop, clock64, __nanosleep, half arithmetic, and WMMA (tensor cores), each
// kernel inside marker regions.  Every kernel instruments and passes ptxas;
// emu runs k_cg, k_atomics and k_half and names what stops the others.
// Regenerate: nvcc -ptx -arch=sm_90 -O3 -I../../ptx -o features.ptx features.cu
#include <cstdio>
#include <cassert>
#include <cuda_fp16.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <mma.h>
#include "mgpu_markers.h"
namespace cg = cooperative_groups;

extern "C" __global__ void k_printf(int *x) { MGPU_BEGIN("p"); if (threadIdx.x == 0) printf("x=%d\n", x[0]); MGPU_END("p"); }
extern "C" __global__ void k_assert(int *x) { MGPU_BEGIN("a"); assert(x[threadIdx.x] >= 0); MGPU_END("a"); }
extern "C" __global__ void k_redux(unsigned *x, unsigned *out) {
  MGPU_BEGIN("r");
  unsigned v = __reduce_add_sync(0xffffffff, x[threadIdx.x]);
  unsigned m = __match_any_sync(0xffffffff, x[threadIdx.x] & 3);
  if (threadIdx.x == 0) out[0] = v; out[1 + threadIdx.x] = m;
  MGPU_END("r");
}
extern "C" __global__ void k_cg(float *x, float *out) {
  auto tile = cg::tiled_partition<16>(cg::this_thread_block());
  MGPU_BEGIN("cg");
  float s = cg::reduce(tile, x[threadIdx.x], cg::plus<float>());
  if (tile.thread_rank() == 0) out[threadIdx.x / 16] = s;
  MGPU_END("cg");
}
extern "C" __global__ void k_atomics(int *c, unsigned long long *t) {
  MGPU_BEGIN("at");
  int old = c[0], assumed;
  do { assumed = old; old = atomicCAS(c, assumed, assumed + 1); } while (assumed != old);
  atomicMax(c + 1, (int)threadIdx.x);
  t[threadIdx.x] = clock64();
  __nanosleep(100);
  MGPU_END("at");
}
extern "C" __global__ void k_half(const __half *a, __half *b) {
  MGPU_BEGIN("h");
  __half x = a[threadIdx.x];
  b[threadIdx.x] = __hadd(__hmul(x, x), __float2half(1.0f));
  MGPU_END("h");
}
extern "C" __global__ void k_wmma(const __half *a, const __half *b, float *c) {
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  MGPU_BEGIN("mma");
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
  MGPU_END("mma");
}
