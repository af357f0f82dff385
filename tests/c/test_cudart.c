/* test_cudart.c - the CUDA runtime stand-in (core/cudart) without nvcc: a fat
 * binary made here (one uncompressed PTX entry, as nvcc lays it out) is
 * registered as nvcc's start-up code would, then the program's calls:
 * memory, <<<>>>'s sequence and cudaLaunchKernel, a __device__ counter kept
 * across launches and its symbol copies, launch errors (cleared by
 * cudaGetLastError), events in virtual time, a call outside the supported set,
 * the driver entry point, a fat binary without PTX, and last a kernel fault's
 * sticky error. */
#include "check.h"
#include "cudart/cudart.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the stand-in's entry points, as a program's headers declare them */
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun, const char *deviceName, int thread_limit,
                            void *tid, void *bid, void *bDim, void *gDim, int *wSize);
void __cudaRegisterVar(void **h, char *hostVar, char *deviceAddress, const char *deviceName, int ext, size_t size,
                       int constant, int global);
unsigned __cudaPushCallConfiguration(cr_dim3 grid, cr_dim3 block, size_t smem, cudaStream_t stream);
cudaError_t __cudaPopCallConfiguration(cr_dim3 *grid, cr_dim3 *block, size_t *smem, cudaStream_t *stream);
cudaError_t __cudaGetKernel(cudaKernel_t *out, const void *hostFun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, cr_dim3 grid, cr_dim3 block, void **args, size_t smem,
                               cudaStream_t stream);
cudaError_t cudaLaunchKernel(const void *func, cr_dim3 grid, cr_dim3 block, void **args, size_t smem,
                             cudaStream_t stream);
cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaFree(void *p);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, int kind);
cudaError_t cudaMemcpyToSymbol(const void *sym, const void *src, size_t n, size_t off, int kind);
cudaError_t cudaMemcpyFromSymbol(void *dst, const void *sym, size_t n, size_t off, int kind);
cudaError_t cudaGetLastError(void);
cudaError_t cudaDeviceSynchronize(void);
const char *cudaGetErrorName(cudaError_t e);
cudaError_t cudaEventCreate(cudaEvent_t *e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaGraphCreate(void);
cudaError_t cudaGetDriverEntryPoint(const char *sym, void **fn, unsigned long long flags, int *status);
cudaError_t cudaGetDeviceProperties(cr_device_prop *p, int dev);

static const char PTX[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".global .align 4 .u32 counter;\n"
    ".visible .entry add_one(.param .u64 p, .param .u32 n)\n{\n"
    "  .reg .pred %p<2>;\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<6>;\n"
    "  ld.param.u64 %rd1, [p];\n  ld.param.u32 %r1, [n];\n"
    "  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n  setp.ge.s32 %p1, %r5, %r1;\n  @%p1 bra DONE;\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n  mul.wide.s32 %rd3, %r5, 4;\n  add.s64 %rd4, %rd2, %rd3;\n"
    "  ld.global.f32 %r6, [%rd4];\n  add.f32 %r6, %r6, 0f3F800000;\n  st.global.f32 [%rd4], %r6;\n"
    "  atom.global.add.u32 %r7, [counter], 1;\n"
    "DONE:\n  ret;\n}\n"
    /* a C++ kernel's mangled name: void scale<128>(float*) */
    ".visible .entry _Z5scaleILi128EEvPf(.param .u64 q)\n{\n  ret;\n}\n";

/* a fat binary as nvcc lays it out: header, one entry (kind, header size, payload size, arch, flags) */
static unsigned char *fatbin(int kind, const void *payload, size_t n, size_t *len)
{
    size_t pay = (n + 1 + 7) & ~(size_t)7;
    unsigned char *f = calloc(1, 16 + 64 + pay);
    uint32_t magic = 0xBA55ED50u, ehs = 64, arch = 90;
    uint16_t ver = 1, hs = 16, k = (uint16_t)kind;
    uint64_t size = 64 + pay, psz = pay, flags = 0x11;
    memcpy(f, &magic, 4), memcpy(f + 4, &ver, 2), memcpy(f + 6, &hs, 2), memcpy(f + 8, &size, 8);
    unsigned char *e = f + 16;
    memcpy(e, &k, 2), memcpy(e + 4, &ehs, 4), memcpy(e + 8, &psz, 8), memcpy(e + 28, &arch, 4), memcpy(e + 40, &flags, 8);
    memcpy(e + 64, payload, n);
    *len = 16 + 64 + pay;
    return f;
}

static void add_one_stub(void) {}
static void scale_stub(void) {}

/* What the stand-in wrote on stderr while `call` ran (its messages), into buf. */
#define STDERR_OF(buf, call)                                                                                           \
    do {                                                                                                               \
        FILE *tmp_ = tmpfile();                                                                                        \
        int saved_ = dup(2);                                                                                           \
        fflush(stderr);                                                                                                \
        dup2(fileno(tmp_), 2);                                                                                         \
        call;                                                                                                          \
        fflush(stderr);                                                                                                \
        dup2(saved_, 2);                                                                                               \
        close(saved_);                                                                                                 \
        rewind(tmp_);                                                                                                  \
        size_t n_ = fread(buf, 1, sizeof buf - 1, tmp_);                                                               \
        buf[n_] = 0;                                                                                                   \
        fclose(tmp_);                                                                                                  \
    } while (0)
static void elf_only_stub(void) {}
static unsigned counter_shadow;

int main(void)
{
    size_t len;
    unsigned char *fb = fatbin(1, PTX, sizeof PTX - 1, &len);
    struct { uint32_t magic, version; const void *data; void *unused; } wrapper = {0x466243b1u, 1, fb, NULL};
    void **h = __cudaRegisterFatBinary(&wrapper);
    CHECK(h != NULL);
    __cudaRegisterFunction(h, (const char *)add_one_stub, "add_one", "add_one", -1, NULL, NULL, NULL, NULL, NULL);
    __cudaRegisterVar(h, (char *)&counter_shadow, "counter", "counter", 0, 4, 0, 0);
    __cudaRegisterFunction(h, (const char *)scale_stub, "_Z5scaleILi128EEvPf", "_Z5scaleILi128EEvPf", -1, NULL, NULL, NULL,
                           NULL, NULL);
    unsigned char *elf = fatbin(2, "\x7f" "ELF", 4, &len);
    struct { uint32_t magic, version; const void *data; void *unused; } wrapper2 = {0x466243b1u, 1, elf, NULL};
    void **h2 = __cudaRegisterFatBinary(&wrapper2);
    __cudaRegisterFunction(h2, (const char *)elf_only_stub, "k", "k", -1, NULL, NULL, NULL, NULL, NULL);

    float host[300], *d = NULL;
    for (int i = 0; i < 300; i++) host[i] = (float)i;
    CHECK(cudaMalloc((void **)&d, sizeof host) == cudaSuccess);
    CHECK(cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess);
    unsigned zero = 0, count = 99;
    CHECK(cudaMemcpyToSymbol(&counter_shadow, &zero, 4, 0, cudaMemcpyHostToDevice) == cudaSuccess);

    /* <<<>>> as nvcc 13 emits it: push, the stub's pop, the kernel handle, __cudaLaunchKernel */
    int n = 300;
    void *args[] = {&d, &n};
    cr_dim3 g = {3, 1, 1}, b = {128, 1, 1}, g2, b2;
    size_t smem;
    cudaStream_t st;
    cudaKernel_t k = NULL;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess);
    CHECK(cudaEventRecord(e0, NULL) == cudaSuccess);
    __cudaPushCallConfiguration(g, b, 0, NULL);
    CHECK(__cudaPopCallConfiguration(&g2, &b2, &smem, &st) == cudaSuccess && g2.x == 3 && b2.x == 128);
    CHECK(__cudaGetKernel(&k, (const void *)add_one_stub) == cudaSuccess && k != NULL);
    CHECK(__cudaLaunchKernel(k, g2, b2, args, smem, st) == cudaSuccess);
    CHECK(cudaLaunchKernel((const void *)add_one_stub, g, b, args, 0, NULL) == cudaSuccess);
    CHECK(cudaEventRecord(e1, NULL) == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost) == cudaSuccess);
    int right = 1;
    for (int i = 0; i < 300; i++) right &= host[i] == (float)i + 2;
    CHECK(right);
    CHECK(cudaMemcpyFromSymbol(&count, &counter_shadow, 4, 0, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(count == 600); /* the __device__ counter kept its value from the first launch to the second */
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess && ms > 0);
    CHECK(cudaEventDestroy(e0) == cudaSuccess && cudaEventDestroy(e1) == cudaSuccess);
    /* a handle that is none (destroyed, or garbage) is refused without being read */
    CHECK(cudaEventRecord(e0, NULL) == cudaErrorInvalidResourceHandle);
    CHECK(cudaEventRecord((cudaEvent_t)(uintptr_t)0x10, NULL) == cudaErrorInvalidResourceHandle);
    CHECK(cudaLaunchKernel((const void *)add_one_stub, g, b, args, 0, (cudaStream_t)(uintptr_t)0x20) ==
          cudaErrorInvalidResourceHandle);

    /* errors: a launch configuration (cleared by cudaGetLastError), unknown calls and kernels */
    cr_dim3 big = {2048, 1, 1};
    CHECK(cudaLaunchKernel((const void *)add_one_stub, g, big, args, 0, NULL) == cudaErrorInvalidConfiguration);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaLaunchKernel((const void *)main, g, b, args, 0, NULL) == cudaErrorInvalidDeviceFunction);
    /* a launch message names a C++ kernel as its author wrote it, not mangled */
    char said[2000];
    STDERR_OF(said, CHECK(cudaLaunchKernel((const void *)scale_stub, g, big, args, 0, NULL) == cudaErrorInvalidConfiguration));
    CHECK_CONTAINS(said, "cudaLaunchKernel: kernel scale<128>: grid (3, 1, 1) block (2048, 1, 1) is not a launch configuration");
    CHECK(strstr(said, "_Z5scale") == NULL);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    CHECK(cudaLaunchKernel((const void *)elf_only_stub, g, b, NULL, 0, NULL) == cudaErrorNoKernelImageForDevice);
    CHECK(cudaGraphCreate() == cudaErrorNotSupported);
    CHECK_STR(cudaGetErrorName(cudaGetLastError()), "cudaErrorNotSupported");
    void *fn = NULL;
    int q = -1;
    CHECK(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, 0, &q) == cudaSuccess && fn && q == 0);
    CHECK(cudaGetDriverEntryPoint("cuLaunchKernel", &fn, 0, &q) == cudaSuccess && !fn && q == 1);
    cr_device_prop p;
    CHECK(cudaGetDeviceProperties(&p, 0) == cudaSuccess && p.major == 9 && p.warpSize == 32);
    CHECK(offsetof(cr_device_prop, sharedMemPerBlockOptin) == 672 && sizeof(cr_device_prop) == 1008); /* CUDA 13's layout (tests/cudart checks it
                                                                       * against nvcc's header too) */

    /* a fault is sticky: every later call returns it */
    n = 1000; /* past the 300 floats of d */
    CHECK(cudaLaunchKernel((const void *)add_one_stub, (cr_dim3){8, 1, 1}, b, args, 0, NULL) == cudaErrorIllegalAddress);
    CHECK(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    CHECK(cudaMalloc((void **)&d, 16) == cudaErrorIllegalAddress);
    free(fb);
    free(elf);
    return check_report("test_cudart");
}
