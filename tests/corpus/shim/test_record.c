/* The recording stand-in, driven as nvcc's host code drives it: a kernel registered, memory
 * allocated and copied, a tensor map encoded, then launched twice with a struct parameter that
 * holds a pointer into an allocation and the map, and a pointer to memory that holds another
 * pointer.  The recording must name each where it lies, store the small memory word by word, and
 * hold the first launch only.  (ctest corpus_shim; needs CUDA's headers, not nvcc.)
 *   test_record WORK_DIR */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void **__cudaRegisterFatBinary(void *fat);
void __cudaRegisterFunction(void **h, const char *host_fun, char *dev_fun, const char *dev_name, int tl, uint3 *tid,
                            uint3 *bid, dim3 *bd, dim3 *gd, int *ws);

static const char ptx[] = ".version 8.0\n.target sm_90a\n.address_size 64\n"
                          ".visible .entry kern(\n\t.param .align 64 .b8 kern_param_0[256],\n"
                          "\t.param .u64 .ptr .align 1 kern_param_1,\n\t.param .u32 kern_param_2\n)\n{\n\tret;\n}\n";

static int failures;
static void expect(const char *text, const char *what)
{
    if (!strstr(text, what)) {
        printf("FAIL: the recording lacks %s\n", what);
        failures++;
    }
}

static void host_kernel(void) {}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    char ptx_path[512], out_path[512];
    snprintf(ptx_path, sizeof ptx_path, "%s/kern.ptx", argv[1]);
    snprintf(out_path, sizeof out_path, "%s/launches.lua", argv[1]);
    FILE *f = fopen(ptx_path, "w");
    if (!f) return 2;
    fputs(ptx, f);
    fclose(f);
    setenv("CORPUS_PTX", ptx_path, 1);
    setenv("CORPUS_OUT", out_path, 1);

    void **h = __cudaRegisterFatBinary(NULL);
    __cudaRegisterFunction(h, (const char *)host_kernel, "kern", "kern", -1, NULL, NULL, NULL, NULL, NULL);
    float *a, *b;
    void **table;
    cudaMalloc((void **)&a, 1024 * sizeof(float));
    cudaMalloc((void **)&b, 1024 * sizeof(float));
    cudaMalloc((void **)&table, 3 * sizeof(void *));
    unsigned *data, host_data[1024]; /* the program's own values (no runs): not stored */
    cudaMalloc((void **)&data, sizeof host_data);
    for (unsigned i = 0; i < 1024; i++) host_data[i] = i * 2654435761u;
    cudaMemcpy(data, host_data, sizeof host_data, cudaMemcpyHostToDevice);
    void *host_table[3] = {b, b + 16, data}; /* memory holding pointers */
    cudaMemcpy(table, host_table, sizeof host_table, cudaMemcpyHostToDevice);
    float minus_inf = -INFINITY; /* a driver memset fills 4-byte words (CUTLASS's amax workspace) */
    unsigned mi;
    memcpy(&mi, &minus_inf, 4);
    if (cuMemsetD32Async((CUdeviceptr)(uintptr_t)(b + 32), mi, 4, NULL) != CUDA_SUCCESS) return printf("FAIL: cuMemsetD32Async\n"), 1;
    CUtensorMap map;
    cuuint64_t dims[2] = {32, 32}, strides[1] = {128};
    cuuint32_t box[2] = {32, 8}, es[2] = {1, 1};
    if (cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, a, dims, strides, box, es,
                               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
        return printf("FAIL: cuTensorMapEncodeTiled\n"), 1;
    struct { unsigned n; float *p; char pad[112]; CUtensorMap m; } params; /* 256 bytes, the map at 128 */
    memset(&params, 0, sizeof params);
    params.n = 7, params.p = a + 16, params.m = map;
    unsigned count = 3;
    void *args[3] = {&params, &table, &count};
    dim3 grid = {2, 1, 1}, block = {128, 1, 1};
    if (sizeof params != 256) return printf("FAIL: the test's struct is %zu bytes, not 256\n", sizeof params), 1;
    if (cudaLaunchKernel((const void *)host_kernel, grid, block, args, 4096, NULL) != cudaSuccess) return 1;
    count = 4; /* a second launch of the same kernel is not recorded */
    cudaLaunchKernel((const void *)host_kernel, grid, block, args, 4096, NULL);

    f = fopen(out_path, "r");
    if (!f) return printf("FAIL: no recording at %s\n", out_path), 1;
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    expect(text, "kernel = \"kern\"");
    expect(text, "grid = {2, 1, 1}, block = {128, 1, 1}, smem = 4096");
    expect(text, "\"03000000\"");                                            /* the u32, as bytes */
    expect(text, "{where = \"param\", at = 1, off = 8, ptr = 1, delta = 64}"); /* a + 16 floats */
    expect(text, "{where = \"param\", at = 1, off = 128, map = 1}");
    expect(text, "{where = \"param\", at = 2, off = 0, ptr = 3, delta = 0}");
    expect(text, "{where = \"alloc\", at = 3, off = 8, ptr = 2, delta = 64}");
    expect(text, "[1] = {type = 7, rank = 2, alloc = 1, delta = 0, dims = {32, 32}, strides = {128}, box = {32, 8}");
    expect(text, "swizzle = 3");
    expect(text, "init = \"words\"");
    expect(text, "[2] = {bytes = 4096, fnv = ");
    expect(text, "init = \"words\", words = {0,32,4286578688,4,0,988,}");
    expect(text, "[1] = {bytes = 4096, ");
    expect(text, "init = \"none\"");
    expect(text, "[4] = {bytes = 4096, fnv = \"1282681738593545\", init = \"data\"}");
    if (strstr(text, "\"04000000\"")) printf("FAIL: the second launch was recorded\n"), failures++;
    if (failures) {
        printf("%s", text);
        return 1;
    }
    printf("ok: the recording names the pointers, the map and the memory as launched\n");
    return 0;
}
