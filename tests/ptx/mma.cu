// mma.cu - warp-level tensor-core instructions for emu's semantics tests (tests/c/test_emu_mma.c):
// mma.sync in every shape and type class emu runs, each lane building its fragments from
// row-major tiles by the PTX ISA's fragment tables (groupID = lane / 4, threadID_in_group =
// lane % 4); ldmatrix / stmatrix (x1, x2, x4, .trans) and movmatrix; the WMMA API; and two
// GEMMs: mma.sync fed by ldmatrix (bf16, f32 accumulators) and WMMA (f16, f32 accumulators).
// Tiles hold one element's bits per 32-bit word (f64: two words).
// Regenerate: nvcc -ptx -arch=sm_90a -O3 -lineinfo -o mma.ptx mma.cu
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>
#include <stdint.h>

__device__ __forceinline__ int gid() { return (threadIdx.x & 31) >> 2; }
__device__ __forceinline__ int tig() { return threadIdx.x & 3; }

// A[row][col] of element i of this lane's A fragment (PTX ISA 9.7.14.5: mma.m16n8k*)
template <int CLS> __device__ __forceinline__ void apos(int i, int &r, int &c)
{
  int g = gid(), t = tig();
  if (CLS == 0) { r = g + ((i == 2 || i == 3 || i == 6 || i == 7) ? 8 : 0); c = t * 2 + (i & 1) + (i >= 4 ? 8 : 0); }  // 16-bit k16
  if (CLS == 1) { r = g + (i >= 2 ? 8 : 0); c = t * 2 + (i & 1); }                                               // 16-bit k8
  if (CLS == 2) { r = g + ((i == 1 || i == 3) ? 8 : 0); c = t + (i >= 2 ? 4 : 0); }                                // tf32 k8
  if (CLS == 3) { r = g + (i ? 8 : 0); c = t; }                                                                   // tf32 k4
  if (CLS == 4) { r = g + (((i >= 4 && i < 8) || i >= 12) ? 8 : 0); c = t * 4 + (i & 3) + (i >= 8 ? 16 : 0); }    // 8-bit k32
  if (CLS == 5) { r = g + (i >= 4 ? 8 : 0); c = t * 4 + (i & 3); }                                               // 8-bit k16
}
// B[k][n] of element i of this lane's B fragment
template <int CLS> __device__ __forceinline__ void bpos(int i, int &k, int &n)
{
  int g = gid(), t = tig();
  n = g;
  if (CLS == 0) k = t * 2 + (i & 1) + (i >= 2 ? 8 : 0);
  if (CLS == 1) k = t * 2 + (i & 1);
  if (CLS == 2) k = t + (i ? 4 : 0);
  if (CLS == 3) k = t;
  if (CLS == 4) k = t * 4 + (i & 3) + (i >= 4 ? 16 : 0);
  if (CLS == 5) k = t * 4 + i;
}
// C/D m16n8: c0, c1 row g; c2, c3 row g + 8; column 2t + (i & 1)
__device__ __forceinline__ void cpos(int i, int &r, int &c) { r = gid() + (i >= 2 ? 8 : 0); c = tig() * 2 + (i & 1); }

// this lane's fragments: elements packed low first, `bits` each
template <int ACLS, int BCLS, int BITS, int K>
__device__ void frags(const uint32_t *A, const uint32_t *B, uint32_t *a, int na, uint32_t *b, int nb)
{
  int per = 32 / BITS;
  uint32_t m = BITS == 32 ? 0xffffffffu : (1u << BITS) - 1;
  for (int j = 0; j < na; j++) a[j] = 0;
  for (int j = 0; j < nb; j++) b[j] = 0;
  for (int i = 0; i < na * per; i++) {
    int r, c;
    apos<ACLS>(i, r, c);
    a[i / per] |= (A[r * K + c] & m) << (BITS * (i % per));
  }
  for (int i = 0; i < nb * per; i++) {
    int k, n;
    bpos<BCLS>(i, k, n);
    b[i / per] |= (B[k * 8 + n] & m) << (BITS * (i % per));
  }
}

__device__ void cfrag32(const uint32_t *C, uint32_t *c)
{
  for (int i = 0; i < 4; i++) { int r, col; cpos(i, r, col); c[i] = C[r * 8 + col]; }
}
__device__ void dstore32(uint32_t *D, const uint32_t *d)
{
  for (int i = 0; i < 4; i++) { int r, col; cpos(i, r, col); D[r * 8 + col] = d[i]; }
}

#define MMA_4_4_2(NAME, INSN, ACLS, BCLS, BITS, K)                                                                  \
  extern "C" __global__ void NAME(const uint32_t *A, const uint32_t *B, const uint32_t *C, uint32_t *D)           \
  {                                                                                                                \
    uint32_t a[4], b[2], c[4], d[4];                                                                              \
    frags<ACLS, BCLS, BITS, K>(A, B, a, 4, b, 2);                                                                 \
    cfrag32(C, c);                                                                                                \
    asm volatile(INSN " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"                                  \
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                                                 \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]), \
                   "r"(c[3]));                                                                                     \
    dstore32(D, d);                                                                                               \
  }
#define MMA_4_2_1(NAME, INSN, ACLS, BCLS, BITS, K)                                                                  \
  extern "C" __global__ void NAME(const uint32_t *A, const uint32_t *B, const uint32_t *C, uint32_t *D)           \
  {                                                                                                                \
    uint32_t a[2], b[1], c[4], d[4];                                                                              \
    frags<ACLS, BCLS, BITS, K>(A, B, a, 2, b, 1);                                                                 \
    cfrag32(C, c);                                                                                                \
    asm volatile(INSN " {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"                                              \
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                                                 \
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));                   \
    dstore32(D, d);                                                                                               \
  }

MMA_4_4_2(mma_f16_k16, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 0, 0, 16, 16)
MMA_4_4_2(mma_bf16_k16, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 0, 0, 16, 16)
MMA_4_2_1(mma_f16_k8, "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", 1, 1, 16, 8)
MMA_4_2_1(mma_bf16_k8, "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32", 1, 1, 16, 8)
MMA_4_4_2(mma_tf32_k8, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 2, 2, 32, 8)
MMA_4_4_2(mma_s8_k32, "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32", 4, 4, 8, 32)
MMA_4_4_2(mma_s8u8_k32, "mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32", 4, 4, 8, 32)
MMA_4_2_1(mma_u8_k16, "mma.sync.aligned.m16n8k16.row.col.s32.u8.u8.s32", 5, 5, 8, 16)
MMA_4_4_2(mma_e4m3_k32, "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", 4, 4, 8, 32)
MMA_4_4_2(mma_e5m2_k32, "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32", 4, 4, 8, 32)

// tf32 m16n8k4: A 2 registers, B 1
extern "C" __global__ void mma_tf32_k4(const uint32_t *A, const uint32_t *B, const uint32_t *C, uint32_t *D)
{
  uint32_t a[2], b[1], c[4], d[4];
  frags<3, 3, 32, 4>(A, B, a, 2, b, 1);
  cfrag32(C, c);
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
  dstore32(D, d);
}

// f16 accumulators: C and D are 2 registers of f16x2 (c0 c1 | c2 c3); C, D tiles hold half bits
extern "C" __global__ void mma_f16_k16_f16acc(const uint32_t *A, const uint32_t *B, const uint32_t *C, uint32_t *D)
{
  uint32_t a[4], b[2], c[2], d[2];
  frags<0, 0, 16, 16>(A, B, a, 4, b, 2);
  int r, col;
  cpos(0, r, col); c[0] = (C[r * 8 + col] & 0xffff) | C[r * 8 + col + 1] << 16;
  cpos(2, r, col); c[1] = (C[r * 8 + col] & 0xffff) | C[r * 8 + col + 1] << 16;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
               : "=r"(d[0]), "=r"(d[1])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
  cpos(0, r, col); D[r * 8 + col] = d[0] & 0xffff; D[r * 8 + col + 1] = d[0] >> 16;
  cpos(2, r, col); D[r * 8 + col] = d[1] & 0xffff; D[r * 8 + col + 1] = d[1] >> 16;
}

// f64 m8n8k4: A[g][t], B[t][g], C/D row g, columns 2t and 2t + 1 (tiles of doubles)
extern "C" __global__ void mma_f64(const double *A, const double *B, const double *C, double *D)
{
  int g = gid(), t = tig();
  double a = A[g * 4 + t], b = B[t * 8 + g], c0 = C[g * 8 + 2 * t], c1 = C[g * 8 + 2 * t + 1], d0, d1;
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};"
               : "=d"(d0), "=d"(d1) : "d"(a), "d"(b), "d"(c0), "d"(c1));
  D[g * 8 + 2 * t] = d0;
  D[g * 8 + 2 * t + 1] = d1;
}

// ldmatrix: shared memory holds four 8x8 b16 matrices (matrix j at 128 j, row r at 16 r) copied
// from src; lane l gives the address of row l % 8 of matrix l / 8; out[4 l + j] = register j
__device__ void fill_smem(uint16_t *s, const uint32_t *src)
{
  for (int i = threadIdx.x; i < 256; i += 32) s[i] = (uint16_t)src[i];
  __syncwarp();
}
#define LDM(NAME, SUFFIX, N, REGS, ...)                                                                             \
  extern "C" __global__ void NAME(const uint32_t *src, uint32_t *out)                                                \
  {                                                                                                                  \
    __shared__ __align__(128) uint16_t s[256];                                                                       \
    fill_smem(s, src);                                                                                               \
    int l = threadIdx.x;                                                                                             \
    uint32_t addr = (uint32_t)__cvta_generic_to_shared(s + (l / 8) * 64 + (l % 8) * 8);                              \
    uint32_t r[4] = {0, 0, 0, 0};                                                                                    \
    asm volatile("ldmatrix.sync.aligned.m8n8." SUFFIX ".shared.b16 " REGS ", [%" #N "];" : __VA_ARGS__ : "r"(addr));          \
    for (int j = 0; j < 4; j++) out[4 * l + j] = r[j];                                                               \
  }
LDM(ldmatrix_x1, "x1", 1, "{%0}", "=r"(r[0]))
LDM(ldmatrix_x2, "x2", 2, "{%0,%1}", "=r"(r[0]), "=r"(r[1]))
LDM(ldmatrix_x4, "x4", 4, "{%0,%1,%2,%3}", "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]))
LDM(ldmatrix_x2_trans, "x2.trans", 2, "{%0,%1}", "=r"(r[0]), "=r"(r[1]))
LDM(ldmatrix_x4_trans, "x4.trans", 4, "{%0,%1,%2,%3}", "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]))

// stmatrix: register j of lane l holds src[4 l + j]; shared memory (as in ldmatrix) copied to out
#define STM(NAME, SUFFIX, N, REGS, ...)                                                                              \
  extern "C" __global__ void NAME(const uint32_t *src, uint32_t *out)                                                \
  {                                                                                                                  \
    __shared__ __align__(128) uint16_t s[256];                                                                       \
    int l = threadIdx.x;                                                                                             \
    for (int i = l; i < 256; i += 32) s[i] = 0xdead;                                                                 \
    __syncwarp();                                                                                                    \
    uint32_t r[4];                                                                                                   \
    for (int j = 0; j < 4; j++) r[j] = src[4 * l + j];                                                               \
    uint32_t addr = (uint32_t)__cvta_generic_to_shared(s + (l / 8) * 64 + (l % 8) * 8);                              \
    asm volatile("stmatrix.sync.aligned.m8n8." SUFFIX ".shared.b16 [%0], " REGS ";" :: "r"(addr), __VA_ARGS__ : "memory");     \
    __syncwarp();                                                                                                    \
    for (int i = l; i < 256; i += 32) out[i] = s[i];                                                                 \
  }
STM(stmatrix_x1, "x1", 1, "{%1}", "r"(r[0]))
STM(stmatrix_x4, "x4", 4, "{%1,%2,%3,%4}", "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]))
STM(stmatrix_x2_trans, "x2.trans", 2, "{%1,%2}", "r"(r[0]), "r"(r[1]))

// movmatrix: lane l's register src[l]; out[l] = the transposed fragment's register
extern "C" __global__ void movmatrix_trans(const uint32_t *src, uint32_t *out)
{
  uint32_t d, a = src[threadIdx.x];
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(d) : "r"(a));
  out[threadIdx.x] = d;
}

// ---- the WMMA API (nvcc's wmma.load / wmma.mma / wmma.store) ----
using namespace nvcuda;

// one 16x16x16 tile: D = A (row-major) * B (col-major) + C (row-major), f16 in, f32 out
extern "C" __global__ void wmma_f16_tile(const __half *A, const __half *B, const float *C, float *D)
{
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::load_matrix_sync(a, A, 16);
  wmma::load_matrix_sync(b, B, 16);
  wmma::load_matrix_sync(c, C, 16, wmma::mem_row_major);
  wmma::mma_sync(c, a, b, c);
  wmma::store_matrix_sync(D, c, 16, wmma::mem_col_major);
}

// m32n8k16 bf16 with a scaled accumulator (element-wise on the fragment) stored row-major
extern "C" __global__ void wmma_bf16_m32n8(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *D)
{
  wmma::fragment<wmma::matrix_a, 32, 8, 16, __nv_bfloat16, wmma::col_major> a;
  wmma::fragment<wmma::matrix_b, 32, 8, 16, __nv_bfloat16, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 32, 8, 16, float> c;
  wmma::fill_fragment(c, 1.0f);
  wmma::load_matrix_sync(a, A, 32);
  wmma::load_matrix_sync(b, B, 8);
  wmma::mma_sync(c, a, b, c);
  for (int i = 0; i < c.num_elements; i++) c.x[i] *= 2.0f;
  wmma::store_matrix_sync(D, c, 8, wmma::mem_row_major);
}

// m8n32k16 s8 -> s32, and m16n16k8 tf32 -> f32, f16 accumulators at m16n16k16
extern "C" __global__ void wmma_s8_m8n32(const signed char *A, const signed char *B, int *D)
{
  wmma::fragment<wmma::matrix_a, 8, 32, 16, signed char, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 8, 32, 16, signed char, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 8, 32, 16, int> c;
  wmma::fill_fragment(c, 0);
  wmma::load_matrix_sync(a, A, 16);
  wmma::load_matrix_sync(b, B, 32);
  wmma::mma_sync(c, a, b, c);
  wmma::store_matrix_sync(D, c, 32, wmma::mem_row_major);
}

extern "C" __global__ void wmma_tf32_k8(const float *A, const float *B, float *D)
{
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> c;
  wmma::fill_fragment(c, 0.0f);
  wmma::load_matrix_sync(a, A, 8);
  wmma::load_matrix_sync(b, B, 16);
  // (the inputs are exact in tf32: no wmma::__float_to_tf32, a cvt.rna.tf32 emu does not run)
  wmma::mma_sync(c, a, b, c);
  wmma::store_matrix_sync(D, c, 16, wmma::mem_row_major);
}

extern "C" __global__ void wmma_f16_f16acc(const __half *A, const __half *B, __half *D)
{
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::col_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, __half> c;
  wmma::fill_fragment(c, __float2half(0.5f));
  wmma::load_matrix_sync(a, A, 16);
  wmma::load_matrix_sync(b, B, 16);
  wmma::mma_sync(c, a, b, c);
  wmma::store_matrix_sync(D, c, 16, wmma::mem_row_major);
}

// WMMA GEMM: C[M][N] = A[M][K] (row-major f16) * B[K][N] (row-major f16), f32; one warp per
// 16x16 tile of C, through shared memory staging of A and B tiles
extern "C" __global__ void wmma_gemm(const __half *A, const __half *B, float *C, int M, int N, int K)
{
  __shared__ __align__(32) __half sa[4][16 * 16], sb[4][16 * 16];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int tm = blockIdx.y * 2 + warp / 2, tn = blockIdx.x * 2 + warp % 2;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k = 0; k < K; k += 16) {
    for (int i = lane; i < 256; i += 32) {
      sa[warp][i] = A[(tm * 16 + i / 16) * K + k + i % 16];
      sb[warp][i] = B[(k + i / 16) * N + tn * 16 + i % 16];
    }
    __syncwarp();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b;
    wmma::load_matrix_sync(a, sa[warp], 16);
    wmma::load_matrix_sync(b, sb[warp], 16);
    wmma::mma_sync(acc, a, b, acc);
    __syncwarp();
  }
  wmma::store_matrix_sync(C + tm * 16 * N + tn * 16, acc, N, wmma::mem_row_major);
}

// mma.sync GEMM (bf16 in, f32 out): C[M][N] = A[M][K] (row-major) * B (stored as Bt[N][K]);
// a block of 4 warps computes a 64x64 tile, each warp 16 rows x 64 columns (8 m16n8k16 per
// k-step), with A and B tiles staged in shared memory and read by ldmatrix.x4 / .x2
extern "C" __global__ void mma_gemm(const __nv_bfloat16 *A, const __nv_bfloat16 *Bt, float *C, int M, int N, int K)
{
  __shared__ __align__(128) __nv_bfloat16 sa[64 * 32], sb[64 * 32];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int m0 = blockIdx.y * 64, n0 = blockIdx.x * 64;
  float acc[8][4] = {};
  for (int k0 = 0; k0 < K; k0 += 32) {
    for (int i = threadIdx.x; i < 64 * 32 / 8; i += blockDim.x) {  // 16-byte chunks
      int r = i / 4, c = (i % 4) * 8;
      *(uint4 *)&sa[r * 32 + c] = *(const uint4 *)&A[(size_t)(m0 + r) * K + k0 + c];
      *(uint4 *)&sb[r * 32 + c] = *(const uint4 *)&Bt[(size_t)(n0 + r) * K + k0 + c];
    }
    __syncthreads();
    for (int kk = 0; kk < 32; kk += 16) {
      uint32_t a[4];
      // lanes 0-15: rows 0-15 at column kk; lanes 16-31: rows 0-15 at column kk + 8
      uint32_t aaddr = (uint32_t)__cvta_generic_to_shared(&sa[(warp * 16 + lane % 16) * 32 + kk + (lane / 16) * 8]);
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                   : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(aaddr));
      for (int j = 0; j < 8; j++) {
        uint32_t b[2];
        // lanes 0-7: n rows at column kk; lanes 8-15: at kk + 8
        uint32_t baddr = (uint32_t)__cvta_generic_to_shared(&sb[(j * 8 + lane % 8) * 32 + kk + ((lane / 8) % 2) * 8]);
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(b[0]), "=r"(b[1]) : "r"(baddr));
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+f"(acc[j][0]), "+f"(acc[j][1]), "+f"(acc[j][2]), "+f"(acc[j][3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
      }
    }
    __syncthreads();
  }
  int g = lane / 4, t = lane % 4;
  for (int j = 0; j < 8; j++)
    for (int i = 0; i < 4; i++) {
      int r = m0 + warp * 16 + g + (i >= 2 ? 8 : 0), c = n0 + j * 8 + t * 2 + (i & 1);
      C[(size_t)r * N + c] = acc[j][i];
    }
}
