// tma.cu - Hopper's tensor memory accelerator from a runtime program: cuTensorMapEncodeTiled
// through cudaGetDriverEntryPointByVersion, the CUtensorMap as a __grid_constant__ parameter,
// a 2-D tile loaded with cp.async.bulk.tensor and completed on an mbarrier; a box past the
// tensor's edge is filled with zeros.  Built with -DDIRECT_DRIVER (and -lcuda), it calls the
// driver's cuTensorMapEncodeTiled itself: under exec, the libcuda.so.1 stand-in's.
#include "check.h"
#include <cstring>
#include <cuda.h>
#include <cudaTypedefs.h>

constexpr int TILE = 32;

__global__ void tile_scale(const __grid_constant__ CUtensorMap map, float *out, int width, int height)
{
    __shared__ alignas(128) float tile[TILE * TILE];
    __shared__ alignas(8) unsigned long long bar;
    int x0 = blockIdx.x * TILE, y0 = blockIdx.y * TILE;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar), s = (unsigned)__cvta_generic_to_shared(tile);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(TILE * TILE * 4) : "memory");
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
                     "%3}], [%4];" ::"r"(s), "l"(&map), "r"(x0), "r"(y0), "r"(b) : "memory");
    }
    asm volatile("{\n .reg .pred p;\n WAIT%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra WAIT%=;\n}"
                 ::"r"(b) : "memory");
    for (int i = threadIdx.x; i < TILE * TILE; i += blockDim.x) {
        int x = x0 + i % TILE, y = y0 + i / TILE;
        out[(blockIdx.y * gridDim.x + blockIdx.x) * TILE * TILE + i] = 2 * tile[i] + (x < width && y < height ? 0 : 1);
    }
}

int main()
{
    const int width = 80, height = 64; // 80 is not a whole number of 32-wide tiles: the last box runs past
    float *h = new float[width * height], *d, *out;
    for (int i = 0; i < width * height; i++) h[i] = (float)(i % 251);
    CHECK(cudaMalloc(&d, width * height * sizeof(float)));
    CHECK(cudaMemcpy(d, h, width * height * sizeof(float), cudaMemcpyHostToDevice));
    const int gx = (width + TILE - 1) / TILE, gy = height / TILE;
    CHECK(cudaMalloc(&out, gx * gy * TILE * TILE * sizeof(float)));

#ifdef DIRECT_DRIVER
    auto encode = cuTensorMapEncodeTiled;
    // the stand-in names the driver's errors as the driver does (it said CUDA_ERROR_UNKNOWN for all but 0 and 1)
    const char *name = nullptr, *text = nullptr;
    EXPECT(cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &name) == CUDA_SUCCESS && name &&
           !strcmp(name, "CUDA_ERROR_OUT_OF_MEMORY"), "cuGetErrorName(2): %s", name ? name : "(null)");
    EXPECT(cuGetErrorString(CUDA_ERROR_INVALID_PTX, &text) == CUDA_SUCCESS && text && *text, "cuGetErrorString(218)");
    EXPECT(cuGetErrorName((CUresult)12345, &name) != CUDA_SUCCESS, "cuGetErrorName(12345) was taken");
#else
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
    EXPECT(fn && q == cudaDriverEntryPointSuccess, "cuTensorMapEncodeTiled was not found");
    auto encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
#endif
    CUtensorMap map;
    cuuint64_t dims[2] = {width, height}, strides[1] = {width * sizeof(float)};
    cuuint32_t box[2] = {TILE, TILE}, es[2] = {1, 1};
    CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d, dims, strides, box, es,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    EXPECT(r == CUDA_SUCCESS, "cuTensorMapEncodeTiled: %d", (int)r);
    cuuint64_t bad_strides[1] = {width * sizeof(float) + 4}; // not a multiple of 16
    EXPECT(encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d, dims, bad_strides, box, es,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS, "a stride of %llu bytes was taken",
           (unsigned long long)bad_strides[0]);
    r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
               CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    EXPECT(r == CUDA_SUCCESS, "cuTensorMapEncodeTiled: %d", (int)r);
    tile_scale<<<dim3(gx, gy), 128>>>(map, out, width, height);
    CHECK(cudaGetLastError());
    float *o = new float[gx * gy * TILE * TILE];
    CHECK(cudaMemcpy(o, out, gx * gy * TILE * TILE * sizeof(float), cudaMemcpyDeviceToHost));
    for (int by = 0; by < gy; by++)
        for (int bx = 0; bx < gx; bx++)
            for (int i = 0; i < TILE * TILE; i++) {
                int x = bx * TILE + i % TILE, y = by * TILE + i / TILE;
                float want = x < width ? 2 * h[y * width + x] : 1; // past the edge: zero fill, + 1
                float got = o[(by * gx + bx) * TILE * TILE + i];
                EXPECT(got == want, "tile (%d, %d) element %d: %g, not %g", bx, by, i, got, want);
            }
    CHECK(cudaFree(d));
    CHECK(cudaFree(out));
    delete[] h;
    delete[] o;
    printf("tma: ok\n");
    return 0;
}
