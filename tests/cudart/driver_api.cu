// driver_api.cu - a program of the CUDA Driver API (as cuda-samples' *Drv and NVRTC programs are):
// a module from PTX text (cuModuleLoadData, as NVRTC's output is loaded), its kernel and a
// .global variable, memory, launches with kernelParams and with the `extra` buffer, cuMemsetD32,
// events, function attributes and occupancy, and the refusals: a cubin image, a missing file, an unknown kernel.
// nvcc-flags: -lcuda
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CU(x)                                                                                             \
    do {                                                                                                  \
        CUresult r_ = (x);                                                                                \
        if (r_ != CUDA_SUCCESS) {                                                                         \
            const char *n_ = "?";                                                                         \
            cuGetErrorName(r_, &n_);                                                                      \
            fprintf(stderr, "%s:%d: %s: %s (%d)\n", __FILE__, __LINE__, #x, n_, (int)r_);                   \
            exit(1);                                                                                      \
        }                                                                                                 \
    } while (0)
#define EXPECT(c, ...)                                                                                    \
    do {                                                                                                  \
        if (!(c)) { fprintf(stderr, "%s:%d: expected %s: ", __FILE__, __LINE__, #c);                      \
                    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); }                         \
    } while (0)

// y[i] = a * x[i] + y[i] + bias, bias a .global of the module
static const char ptx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .global .f32 bias = 0f3F000000;
.visible .entry saxpy(.param .u64 x, .param .u64 y, .param .f32 a, .param .u32 n)
{
  .reg .pred %p;
  .reg .b32 %r<5>;
  .reg .f32 %f<6>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  ld.param.f32 %f1, [a];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r2, %r2, %r3, %r4;
  setp.ge.u32 %p, %r2, %r1;
  @%p bra DONE;
  mul.wide.u32 %rd3, %r2, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.f32 %f2, [%rd4];
  ld.global.f32 %f3, [%rd5];
  ld.global.f32 %f5, [bias];
  fma.rn.f32 %f4, %f1, %f2, %f3;
  add.f32 %f4, %f4, %f5;
  st.global.f32 [%rd5], %f4;
DONE:
  ret;
}
)";

int main()
{
    CU(cuInit(0));
    int count = 0, major = 0, minor = 0;
    CU(cuDeviceGetCount(&count));
    EXPECT(count == 1, "one device, got %d", count);
    CUdevice dev;
    CU(cuDeviceGet(&dev, 0));
    EXPECT(cuDeviceGet(&dev, 1) == CUDA_ERROR_INVALID_DEVICE, "a second device");
    CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    EXPECT(major == 9 && minor == 0, "compute capability 9.0, got %d.%d", major, minor);
    char name[256];
    CU(cuDeviceGetName(name, sizeof name, dev));
    size_t total = 0;
    CU(cuDeviceTotalMem(&total, dev));
    EXPECT(total > (size_t)1 << 30, "device memory %zu", total);
    CUcontext ctx;
    CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU(cuCtxSetCurrent(ctx));

    CUmodule mod;
    CU(cuModuleLoadData(&mod, ptx));
    CUfunction f;
    CU(cuModuleGetFunction(&f, mod, "saxpy"));
    CUfunction none;
    EXPECT(cuModuleGetFunction(&none, mod, "nothing") == CUDA_ERROR_NOT_FOUND, "an unknown kernel");
    CUdeviceptr bias;
    size_t bias_size = 0;
    CU(cuModuleGetGlobal(&bias, &bias_size, mod, "bias"));
    EXPECT(bias_size == 4, "bias is 4 bytes, got %zu", bias_size);
    int regs = 0, maxt = 0;
    CU(cuFuncGetAttribute(&maxt, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
    CU(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
    EXPECT(maxt >= 128, "max threads %d", maxt);
    int min_grid = 0, best = 0, sms = 0;
    CU(cuOccupancyMaxPotentialBlockSize(&min_grid, &best, f, nullptr, 0, 0));
    CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    EXPECT(best % 32 == 0 && best >= 32 && best <= maxt && min_grid >= sms && min_grid % sms == 0,
           "potential block %d, grid %d (%d SMs)", best, min_grid, sms);

    const unsigned n = 1000;
    float hx[n], hy[n];
    for (unsigned i = 0; i < n; i++) hx[i] = (float)i, hy[i] = 1.0f;
    CUdeviceptr x, y;
    CU(cuMemAlloc(&x, n * sizeof(float)));
    CU(cuMemAlloc(&y, n * sizeof(float)));
    CU(cuMemcpyHtoD(x, hx, sizeof hx));
    CU(cuMemcpyHtoD(y, hy, sizeof hy));
    CUevent start, stop;
    CU(cuEventCreate(&start, CU_EVENT_DEFAULT));
    CU(cuEventCreate(&stop, CU_EVENT_DEFAULT));
    float a = 2.0f;
    unsigned nn = n;
    void *params[] = {&x, &y, &a, &nn};
    CU(cuEventRecord(start, 0));
    CU(cuLaunchKernel(f, (n + 127) / 128, 1, 1, 128, 1, 1, 0, 0, params, nullptr));
    CU(cuEventRecord(stop, 0));
    CU(cuEventSynchronize(stop));
    float ms = 0;
    CU(cuEventElapsedTime(&ms, start, stop));
    EXPECT(ms > 0, "the launch took %g ms (virtual)", ms);
    CU(cuMemcpyDtoH(hy, y, sizeof hy));
    for (unsigned i = 0; i < n; i++) EXPECT(hy[i] == 2.0f * i + 1.5f, "y[%u] = %g", i, hy[i]);

    // the same through the extra buffer: the parameters at their offsets (8, 8, 4, 4 bytes)
    struct { CUdeviceptr x, y; float a; unsigned n; } buf = {x, y, -1.0f, n};
    size_t size = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    CU(cuLaunchKernel(f, (n + 127) / 128, 1, 1, 128, 1, 1, 0, 0, nullptr, extra));
    CU(cuMemcpyDtoH(hy, y, sizeof hy));
    for (unsigned i = 0; i < n; i++) EXPECT(hy[i] == (2.0f * i + 1.5f) - i + 0.5f, "y[%u] = %g after extra", i, hy[i]);
    size_t short_size = 12;
    void *bad[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &short_size, CU_LAUNCH_PARAM_END};
    EXPECT(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, nullptr, bad) == CUDA_ERROR_INVALID_VALUE, "a short buffer");

    CU(cuMemsetD32(y, 0x40400000u, n)); // 3.0f
    CU(cuMemcpyDtoH(hy, y, sizeof hy));
    EXPECT(hy[0] == 3.0f && hy[n - 1] == 3.0f, "memset: %g %g", hy[0], hy[n - 1]);
    float b2 = 10.0f;
    CU(cuMemcpyHtoD(bias, &b2, 4)); // a module global written by the host
    CU(cuLaunchKernel(f, (n + 127) / 128, 1, 1, 128, 1, 1, 0, 0, params, nullptr));
    CU(cuMemcpyDtoH(hy, y, sizeof hy));
    EXPECT(hy[5] == 2.0f * 5 + 3.0f + 10.0f, "with the new bias: %g", hy[5]);

    CUmodule m2;
    const char elf[] = "\177ELF\2\1\1";
    EXPECT(cuModuleLoadData(&m2, elf) == CUDA_ERROR_NOT_SUPPORTED, "a cubin");
    EXPECT(cuModuleLoad(&m2, "/nonexistent/k.ptx") == CUDA_ERROR_FILE_NOT_FOUND, "a missing file");
    EXPECT(cuModuleLoadData(&m2, ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k( {\n") ==
               CUDA_ERROR_INVALID_PTX, "bad PTX");
    EXPECT(cuModuleLoadData(&m2, "x") == CUDA_ERROR_INVALID_PTX, "a one-character image is PTX text, and bad");
    const char *en = nullptr;
    CU(cuGetErrorName(CUDA_ERROR_INVALID_PTX, &en));
    EXPECT(!strcmp(en, "CUDA_ERROR_INVALID_PTX"), "the name %s", en);

    CU(cuEventDestroy(start));
    CU(cuEventDestroy(stop));
    CU(cuMemFree(x));
    CU(cuMemFree(y));
    CU(cuModuleUnload(mod));
    CU(cuDevicePrimaryCtxRelease(dev));
    printf("driver_api: ok (%.4f ms of virtual time)\n", ms);
    return 0;
}
