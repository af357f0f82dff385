/* driver_api.c - the CUDA Driver API for programs built by `mgpu-harness nvcc` (the stand-in's static
 * library serves both APIs in one process, on one emu device): devices and the one context,
 * modules loaded from PTX text, a fat binary (in memory or a file) or refused when they hold only
 * machine code (a cubin: emu runs PTX), their functions and globals, memory, launches (kernelParams
 * or the `extra` buffer), streams, events, function attributes and occupancy.  Each call is the
 * runtime call of the same meaning (memory.c, streams.c, launch.c, device.c), its cudaError_t
 * given back as the CUresult of the same number (CUDA numbers both alike) except where noted.
 * Programs that NVRTC compiles to PTX and load with cuModuleLoadData are the natural case. */
#include "cudart/cudart.h"

#include "base/demangle.h"

#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef uint64_t CUdeviceptr;
enum { CU_OK = 0, CU_INVALID_VALUE = 1,
       CU_NO_BINARY_FOR_GPU = 209, CU_INVALID_HANDLE = 400 };

/* the runtime calls served here (their definitions are in the other files of the stand-in) */
cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaFree(void *p);
cudaError_t cudaMallocHost(void **p, size_t n);
cudaError_t cudaFreeHost(void *p);
cudaError_t cudaHostAlloc(void **p, size_t n, unsigned flags);
cudaError_t cudaHostGetDevicePointer(void **out, void *p, unsigned flags);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, cudaStream_t st);
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t st);
cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total);
cudaError_t cudaDeviceGetAttribute(int *v, int a, int dev);
cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned flags, int priority);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaStreamQuery(cudaStream_t s);
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaFuncGetAttributes(cr_func_attributes *a, const void *func);
cudaError_t cudaFuncSetAttribute(const void *func, int attr, int v);
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *func, int block, size_t smem);
cudaError_t cudaLaunchKernel(const void *func, cr_dim3 grid, cr_dim3 block, void **args, size_t smem, cudaStream_t st);
cudaError_t cudaLaunchCooperativeKernel(const void *func, cr_dim3 grid, cr_dim3 block, void **args, size_t smem,
                                        cudaStream_t st);

/* The runtime's error as the driver's: the same number, but for the few the two APIs number apart. */
static CUresult cu(cudaError_t e)
{
    switch (e) {
    case cudaErrorInvalidDeviceFunction: return CU_INVALID_HANDLE;
    case cudaErrorInvalidConfiguration: return CU_INVALID_VALUE;
    case cudaErrorNoKernelImageForDevice: return CU_NO_BINARY_FOR_GPU;
    default: return (CUresult)e;
    }
}

/* ---- devices and the one context ---------------------------------------------------------- */

static struct { unsigned magic; } the_context = {0x43545854u};
#define CTX ((void *)&the_context)

CR_EXPORT CUresult cuDeviceGet(int *dev, int ordinal);
CUresult cuDeviceGet(int *dev, int ordinal)
{
    if (!dev) return CU_INVALID_VALUE;
    if (ordinal != 0) return cu(cr_set(cudaErrorInvalidDevice, "cuDeviceGet: device %d: emu is device 0, the only one", ordinal));
    *dev = 0;
    return CU_OK;
}
CR_EXPORT CUresult cuDeviceGetCount(int *n);
CUresult cuDeviceGetCount(int *n) { return cu(cudaGetDeviceCount(n)); }
CR_EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, int dev);
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) { return cu(cudaDeviceGetAttribute(v, attr, dev)); }

static CUresult device_check(int dev, const char *call)
{
    return dev == 0 ? CU_OK : cu(cr_set(cudaErrorInvalidDevice, "%s: device %d: emu is device 0, the only one", call, dev));
}
CR_EXPORT CUresult cuDeviceGetName(char *name, int len, int dev);
CUresult cuDeviceGetName(char *name, int len, int dev)
{
    if (!name || len <= 0) return CU_INVALID_VALUE;
    CUresult r = device_check(dev, "cuDeviceGetName");
    if (r) return r;
    cr_device_prop p;
    cr_device_prop_fill(&p);
    snprintf(name, (size_t)len, "%s", p.name);
    return CU_OK;
}
CR_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, int dev);
CUresult cuDeviceTotalMem_v2(size_t *bytes, int dev)
{
    if (!bytes) return CU_INVALID_VALUE;
    CUresult r = device_check(dev, "cuDeviceTotalMem");
    if (r) return r;
    cr_device_prop p;
    cr_device_prop_fill(&p);
    *bytes = p.totalGlobalMem;
    return CU_OK;
}
CR_EXPORT CUresult cuDeviceComputeCapability(int *major, int *minor, int dev);
CUresult cuDeviceComputeCapability(int *major, int *minor, int dev)
{
    if (!major || !minor) return CU_INVALID_VALUE;
    CUresult r = device_check(dev, "cuDeviceComputeCapability");
    if (r) return r;
    *major = 9;
    *minor = 0;
    return CU_OK;
}

/* Contexts: one, the device's primary context; creating, pushing or retaining it gives it,
 * destroying or releasing it keeps it (emu's state lives as long as the process). */
CR_EXPORT CUresult cuCtxCreate_v2(void **ctx, unsigned flags, int dev);
CUresult cuCtxCreate_v2(void **ctx, unsigned flags, int dev)
{
    (void)flags;
    if (!ctx) return CU_INVALID_VALUE;
    CUresult r = device_check(dev, "cuCtxCreate");
    if (!r) *ctx = CTX;
    return r;
}
CR_EXPORT CUresult cuCtxCreate_v4(void **ctx, void *params, unsigned flags, int dev);
CUresult cuCtxCreate_v4(void **ctx, void *params, unsigned flags, int dev)
{
    (void)params;
    return cuCtxCreate_v2(ctx, flags, dev);
}
CR_EXPORT CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev);
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { return cuCtxCreate_v2(ctx, 0, dev); }
CR_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(int dev);
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { return device_check(dev, "cuDevicePrimaryCtxRelease"); }
CR_EXPORT CUresult cuDevicePrimaryCtxReset_v2(int dev);
CUresult cuDevicePrimaryCtxReset_v2(int dev) { return device_check(dev, "cuDevicePrimaryCtxReset"); }
static CUresult ctx_check(void *ctx, const char *call)
{
    return !ctx || ctx == CTX ? CU_OK
                              : cu(cr_set(cudaErrorInvalidResourceHandle, "%s: %p is not the context of the driver "
                                          "API stand-in", call, ctx));
}
CR_EXPORT CUresult cuCtxDestroy_v2(void *ctx);
CUresult cuCtxDestroy_v2(void *ctx) { return ctx ? ctx_check(ctx, "cuCtxDestroy") : CU_INVALID_VALUE; }
CR_EXPORT CUresult cuCtxSetCurrent(void *ctx);
CUresult cuCtxSetCurrent(void *ctx) { return ctx_check(ctx, "cuCtxSetCurrent"); }
CR_EXPORT CUresult cuCtxPushCurrent_v2(void *ctx);
CUresult cuCtxPushCurrent_v2(void *ctx) { return ctx ? ctx_check(ctx, "cuCtxPushCurrent") : CU_INVALID_VALUE; }
CR_EXPORT CUresult cuCtxGetCurrent(void **ctx);
CUresult cuCtxGetCurrent(void **ctx)
{
    if (!ctx) return CU_INVALID_VALUE;
    *ctx = CTX;
    return CU_OK;
}
CR_EXPORT CUresult cuCtxPopCurrent_v2(void **ctx);
CUresult cuCtxPopCurrent_v2(void **ctx)
{
    if (ctx) *ctx = CTX;
    return CU_OK;
}
CR_EXPORT CUresult cuCtxGetDevice(int *dev);
CUresult cuCtxGetDevice(int *dev)
{
    if (!dev) return CU_INVALID_VALUE;
    *dev = 0;
    return CU_OK;
}
CR_EXPORT CUresult cuCtxSynchronize(void);
CUresult cuCtxSynchronize(void) { return cu(cudaDeviceSynchronize()); }

/* ---- modules -------------------------------------------------------------------------------- */

#define WRAPPER_MAGIC 0x466243b1u
#define FATBIN_MAGIC 0xBA55ED50u

/* A module of the program's own making: m->wrapper NULL and the PTX given, or a wrapper of ours
 * around a fat binary (kept, as its data, as long as the process). */
static CUresult module_new(void **out, const void *image, size_t file_len, const char *what)
{
    if (!out || !image) return cu(cr_set(cudaErrorInvalidValue, "%s: the module or the image pointer is NULL", what));
    const unsigned char *b = image;
    /* the magics byte by byte: a short PTX text ends (NUL) before any is read past it */
    int elf = b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
    uint32_t magic = b[0] == 0x50 && b[1] == 0xed && b[2] == 0x55 && b[3] == 0xba   ? FATBIN_MAGIC
                     : b[0] == 0xb1 && b[1] == 0x43 && b[2] == 0x62 && b[3] == 0x46 ? WRAPPER_MAGIC
                                                                                    : 0;
    if (elf)
        return cu(cr_set(cudaErrorNotSupported, "%s: the image is a cubin (machine code for one GPU); emu runs PTX: load "
                         "the PTX (nvcc -ptx) or a fat binary with compute_90 PTX in it (nvcc -fatbin "
                         "-gencode arch=compute_90a,code=compute_90a)", what));
    cr_state *s = cr_get();
    cr_module *m = calloc(1, sizeof *m);
    if (!s || !m) return free(m), cu(cr_set(cudaErrorMemoryAllocation, "%s: out of memory", what));
    if (magic == FATBIN_MAGIC || magic == WRAPPER_MAGIC) {
        if (magic == FATBIN_MAGIC) { /* a fat binary's data, as a .fatbin file holds it: our own wrapper */
            uint32_t *w = calloc(4, sizeof(uint64_t));
            if (!w) return free(m), cu(cr_set(cudaErrorMemoryAllocation, "%s: out of memory", what));
            w[0] = WRAPPER_MAGIC;
            w[1] = 1;
            memcpy(w + 2, &image, sizeof image);
            m->wrapper = w;
        } else {
            m->wrapper = image;
        }
    } else { /* PTX text, NUL-terminated (or a file's length) */
        size_t n = file_len ? file_len : strlen(image);
        if (!(m->ptx = malloc(n + 1))) return free(m), cu(cr_set(cudaErrorMemoryAllocation, "%s: out of memory", what));
        memcpy(m->ptx, image, n);
        m->ptx[n] = 0;
        m->ptx_len = n;
        const char *t = strstr(m->ptx, ".target");
        unsigned sm = 0;
        if (t && sscanf(t, ".target sm_%u", &sm) == 1) snprintf(m->arch, sizeof m->arch, "compute_%u", sm);
        else snprintf(m->arch, sizeof m->arch, "ptx");
    }
    m->index = (int)s->nmods;
    if (cr_push((void ***)&s->mods, &s->nmods, &s->cap_mods, m)) {
        free(m->ptx), free(m);
        return cu(cr_set(cudaErrorMemoryAllocation, "%s: out of memory", what));
    }
    if (cr_module_parse(m)) { /* said at load, as the driver does; the module is not kept (no handle names it) */
        int no_ptx = m->wrapper && !m->ptx;
        CUresult r = cu(cr_set(no_ptx ? cudaErrorNoKernelImageForDevice : cudaErrorInvalidPtx, "%s: %s", what,
                               m->err.message));
        s->nmods--; /* the last one: pushed above */
        mh_ptx_free(&m->ptxm);
        if (magic == FATBIN_MAGIC) free((void *)m->wrapper); /* our own wrapper, not the caller's image */
        free(m->ptx), free(m);
        return r;
    }
    *out = m;
    return CU_OK;
}

CR_EXPORT CUresult cuModuleLoadData(void **mod, const void *image);
CUresult cuModuleLoadData(void **mod, const void *image)
{
    cr_lock();
    CUresult r = cu(cr_ready());
    if (!r) r = module_new(mod, image, 0, "cuModuleLoadData");
    cr_unlock();
    return r;
}
CR_EXPORT CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *options, void **values);
CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *options, void **values)
{
    (void)n, (void)options, (void)values; /* the JIT's options (log buffers, optimisation level): nothing to do on emu */
    return cuModuleLoadData(mod, image);
}
CR_EXPORT CUresult cuModuleLoadFatBinary(void **mod, const void *image);
CUresult cuModuleLoadFatBinary(void **mod, const void *image) { return cuModuleLoadData(mod, image); }
CR_EXPORT CUresult cuModuleLoad(void **mod, const char *path);
CUresult cuModuleLoad(void **mod, const char *path)
{
    if (!path) return CU_INVALID_VALUE;
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n = -1;
    if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET) && (buf = malloc((size_t)n + 1)) &&
        fread(buf, 1, (size_t)n, f) == (size_t)n) {
        buf[n] = 0;
    } else {
        free(buf);
        buf = NULL;
    }
    if (f) fclose(f);
    cr_lock();
    CUresult r = cu(cr_ready());
    if (!r && !buf) r = cu(cr_set(cudaErrorFileNotFound, "cuModuleLoad: cannot read %s", path));
    else if (!r && n < 4) r = cu(cr_set(cudaErrorInvalidKernelImage, "cuModuleLoad: %s is not a module (%ld bytes)", path, n));
    else if (!r) r = module_new(mod, buf, (size_t)n, "cuModuleLoad");
    cr_unlock();
    if (r) free(buf); /* else kept: a fat binary's wrapper points into it */
    return r;
}
CR_EXPORT CUresult cuModuleUnload(void *mod);
CUresult cuModuleUnload(void *mod) { (void)mod; return CU_OK; /* kept: launches.lua is written at exit */ }

static cr_module *module_of(void *mod)
{
    cr_state *s = cr_get();
    for (size_t i = 0; s && mod && i < s->nmods; i++)
        if (s->mods[i] == mod) return mod;
    return NULL;
}

CR_EXPORT CUresult cuModuleGetFunction(void **fn, void *mod, const char *name);
CUresult cuModuleGetFunction(void **fn, void *mod, const char *name)
{
    if (!fn || !name) return CU_INVALID_VALUE;
    cr_lock();
    CUresult r = cu(cr_ready());
    cr_module *m = r ? NULL : module_of(mod);
    cr_state *s = cr_get();
    if (!r && !m) r = cu(cr_set(cudaErrorInvalidResourceHandle, "cuModuleGetFunction: %p is not a module", mod));
    for (size_t i = 0; !r && i < s->nkernels; i++) /* asked before: the same function */
        if (s->kernels[i]->mod == m && !strcmp(s->kernels[i]->name, name)) {
            *fn = s->kernels[i];
            cr_unlock();
            return CU_OK;
        }
    const mh_ptx_func *f = r ? NULL : mh_ptx_find(&m->ptxm, name);
    if (!r && (!f || !f->is_entry))
        r = cu(cr_set(cudaErrorSymbolNotFound, "cuModuleGetFunction: the module has no kernel (.entry) named %s", name));
    cr_kernel *k = r ? NULL : calloc(1, sizeof *k);
    if (!r && (!k || !(k->name = strdup(name)) || !(k->short_name = mh_short_name(name)) ||
               cr_push((void ***)&s->kernels, &s->nkernels, &s->cap_kernels, k))) {
        if (k) free(k->name), free(k->short_name), free(k);
        k = NULL;
        r = cu(cr_set(cudaErrorMemoryAllocation, "cuModuleGetFunction: out of memory"));
    }
    if (k) {
        k->host_fun = k; /* the CUfunction is the handle the runtime's calls take too */
        k->mod = m;
        k->max_dyn_smem = 48 * 1024;
        if (cr_kernel_resolve(k, "cuModuleGetFunction")) r = cu(s->last);
        else *fn = k;
    }
    cr_unlock();
    return r;
}

CR_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, void *mod, const char *name);
CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, void *mod, const char *name)
{
    if (!name) return CU_INVALID_VALUE;
    cr_lock();
    CUresult r = cu(cr_ready());
    cr_module *m = r ? NULL : module_of(mod);
    if (!r && !m) r = cu(cr_set(cudaErrorInvalidResourceHandle, "cuModuleGetGlobal: %p is not a module", mod));
    const mh_ptx_var *v = NULL;
    for (uint32_t i = 0; !r && i < m->ptxm.nvars; i++)
        if (m->ptxm.vars[i].func < 0 && !strcmp(m->ptxm.vars[i].name, name) &&
            (m->ptxm.vars[i].space == MH_SP_GLOBAL || m->ptxm.vars[i].space == MH_SP_CONST))
            v = &m->ptxm.vars[i];
    if (!r && !v) r = cu(cr_set(cudaErrorSymbolNotFound, "cuModuleGetGlobal: the module has no .global or .const %s", name));
    if (!r) {
        if (dptr) *dptr = m->data_addr + v->offset;
        if (bytes) *bytes = v->size;
    }
    cr_unlock();
    return r;
}

/* ---- memory ------------------------------------------------------------------------------- */

CR_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n);
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    void *v = NULL;
    CUresult r = p ? cu(cudaMalloc(&v, n)) : CU_INVALID_VALUE;
    if (!r) *p = (CUdeviceptr)(uintptr_t)v;
    return r;
}
CR_EXPORT CUresult cuMemFree_v2(CUdeviceptr p);
CUresult cuMemFree_v2(CUdeviceptr p) { return cu(cudaFree((void *)(uintptr_t)p)); }
CR_EXPORT CUresult cuMemAllocHost_v2(void **p, size_t n);
CUresult cuMemAllocHost_v2(void **p, size_t n) { return cu(cudaMallocHost(p, n)); }
CR_EXPORT CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags);
CUresult cuMemHostAlloc(void **p, size_t n, unsigned flags) { return cu(cudaHostAlloc(p, n, flags)); }
CR_EXPORT CUresult cuMemFreeHost(void *p);
CUresult cuMemFreeHost(void *p) { return cu(cudaFreeHost(p)); }
CR_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags);
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags)
{
    void *v = NULL;
    CUresult r = d ? cu(cudaHostGetDevicePointer(&v, p, flags)) : CU_INVALID_VALUE;
    if (!r) *d = (CUdeviceptr)(uintptr_t)v;
    return r;
}
CR_EXPORT CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total);
CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total) { return cu(cudaMemGetInfo(free_b, total)); }

#define DPTR(x) ((void *)(uintptr_t)(x))
enum { H2D = 1, D2H = 2, D2D = 3, DEFAULT = 4 };
CR_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n);
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *h, size_t n) { return cu(cudaMemcpyAsync(DPTR(d), h, n, H2D, NULL)); }
CR_EXPORT CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n);
CUresult cuMemcpyDtoH_v2(void *h, CUdeviceptr d, size_t n) { return cu(cudaMemcpyAsync(h, DPTR(d), n, D2H, NULL)); }
CR_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n);
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { return cu(cudaMemcpyAsync(DPTR(d), DPTR(s), n, D2D, NULL)); }
CR_EXPORT CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n);
CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) { return cu(cudaMemcpyAsync(DPTR(d), DPTR(s), n, DEFAULT, NULL)); }
CR_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, cudaStream_t st);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, cudaStream_t st)
{
    return cu(cudaMemcpyAsync(DPTR(d), h, n, H2D, st));
}
CR_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, cudaStream_t st);
CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, cudaStream_t st)
{
    return cu(cudaMemcpyAsync(h, DPTR(d), n, D2H, st));
}
CR_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, cudaStream_t st);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, cudaStream_t st)
{
    return cu(cudaMemcpyAsync(DPTR(d), DPTR(s), n, D2D, st));
}
CR_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n);
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { return cu(cudaMemsetAsync(DPTR(d), v, n, NULL)); }

/* cuMemsetD16/D32: elements wider than a byte (memory.c's cr_memset, as cudaMemset) */
static CUresult set_wide(CUdeviceptr d, uint32_t v, size_t n, int size, const char *call)
{
    cr_lock();
    CUresult r = cu(cr_ready());
    if (!r) r = cu(cr_memset(DPTR(d), v, n, size, call));
    cr_unlock();
    return r;
}
CR_EXPORT CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n);
CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) { return set_wide(d, v, n, 2, "cuMemsetD16"); }
CR_EXPORT CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n);
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned v, size_t n) { return set_wide(d, v, n, 4, "cuMemsetD32"); }

/* ---- launches, functions -------------------------------------------------------------------- */

#define LAUNCH_PARAM_END ((void *)0)
#define LAUNCH_PARAM_BUFFER_POINTER ((void *)1)
#define LAUNCH_PARAM_BUFFER_SIZE ((void *)2)

static cr_kernel *function_of(void *fn)
{
    cr_state *s = cr_get();
    for (size_t i = 0; s && fn && i < s->nkernels; i++)
        if (s->kernels[i] == fn) return fn;
    return NULL;
}

static CUresult launch(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned smem, cudaStream_t st, void **params, void **extra, int coop, const char *call)
{
    cr_lock();
    cr_kernel *k = function_of(fn);
    void *args[256];
    CUresult r = cu(cr_ready());
    if (!r && !k) r = cu(cr_set(cudaErrorInvalidResourceHandle, "%s: %p is not a function of cuModuleGetFunction", call, fn));
    if (!r && !k->f && cr_kernel_resolve(k, call)) r = cu(cr_get()->last);
    if (!r && !params && extra) { /* the arguments packed in a buffer at the parameters' offsets */
        const unsigned char *buf = NULL;
        size_t size = 0, got_size = 0;
        for (size_t i = 0; extra[i] != LAUNCH_PARAM_END && i < 64; i += 2) {
            if (extra[i] == LAUNCH_PARAM_BUFFER_POINTER) buf = extra[i + 1];
            else if (extra[i] == LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1]) size = *(size_t *)extra[i + 1], got_size = 1;
            else { r = cu(cr_set(cudaErrorInvalidValue, "%s: extra[%zu] is not a launch parameter key", call, i)); break; }
        }
        const mh_ptx_func *f = r ? NULL : k->f;
        if (!r && (!buf || !got_size))
            r = cu(cr_set(cudaErrorInvalidValue, "%s: extra needs CU_LAUNCH_PARAM_BUFFER_POINTER and _SIZE", call));
        else if (!r && f->nparams > 256)
            r = cu(cr_set(cudaErrorInvalidValue, "%s: kernel %s has more than 256 parameters", call, k->short_name));
        for (uint32_t i = 0; !r && i < f->nparams; i++) {
            if ((size_t)f->params[i].offset + f->params[i].size > size) {
                r = cu(cr_set(cudaErrorInvalidValue, "%s: kernel %s: the buffer of %zu bytes ends before parameter %u (at "
                              "%u, %u bytes)", call, k->short_name, size, i, f->params[i].offset, f->params[i].size));
                break;
            }
            args[i] = (void *)(uintptr_t)(buf + f->params[i].offset);
        }
        params = args;
    }
    cr_unlock();
    if (r) return r;
    cr_dim3 g = {gx, gy, gz}, b = {bx, by, bz};
    return cu(coop ? cudaLaunchCooperativeKernel(k, g, b, params, smem, st) : cudaLaunchKernel(k, g, b, params, smem, st));
}
CR_EXPORT CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                  unsigned bz, unsigned smem, cudaStream_t st, void **params, void **extra);
CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, cudaStream_t st, void **params, void **extra)
{
    return launch(fn, gx, gy, gz, bx, by, bz, smem, st, params, extra, 0, "cuLaunchKernel");
}
CR_EXPORT CUresult cuLaunchCooperativeKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                             unsigned bz, unsigned smem, cudaStream_t st, void **params);
CUresult cuLaunchCooperativeKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned smem, cudaStream_t st, void **params)
{
    return launch(fn, gx, gy, gz, bx, by, bz, smem, st, params, NULL, 1, "cuLaunchCooperativeKernel");
}

/* cuFuncGetAttribute: CU_FUNC_ATTRIBUTE_* 0-9 are cudaFuncAttributes' fields */
CR_EXPORT CUresult cuFuncGetAttribute(int *v, int attr, void *fn);
CUresult cuFuncGetAttribute(int *v, int attr, void *fn)
{
    if (!v) return CU_INVALID_VALUE;
    cr_func_attributes a;
    CUresult r = cu(cudaFuncGetAttributes(&a, fn));
    if (r) return r;
    switch (attr) {
    case 0: *v = a.maxThreadsPerBlock; break;
    case 1: *v = (int)a.sharedSizeBytes; break;
    case 2: *v = (int)a.constSizeBytes; break;
    case 3: *v = (int)a.localSizeBytes; break;
    case 4: *v = a.numRegs; break;
    case 5: *v = a.ptxVersion; break;
    case 6: *v = a.binaryVersion; break;
    case 7: *v = a.cacheModeCA; break;
    case 8: *v = a.maxDynamicSharedSizeBytes; break;
    case 9: *v = a.preferredShmemCarveout; break;
    default: return cu(cr_set(cudaErrorInvalidValue, "cuFuncGetAttribute: attribute %d is not served (0-9 are)", attr));
    }
    return CU_OK;
}
CR_EXPORT CUresult cuFuncSetAttribute(void *fn, int attr, int v);
CUresult cuFuncSetAttribute(void *fn, int attr, int v) { return cu(cudaFuncSetAttribute(fn, attr, v)); }
CR_EXPORT CUresult cuFuncSetCacheConfig(void *fn, int config);
CUresult cuFuncSetCacheConfig(void *fn, int config)
{
    (void)config; /* a preference emu's model does not act on */
    return function_of(fn) ? CU_OK : CU_INVALID_HANDLE;
}
CR_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *fn, int block, size_t smem);
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *fn, int block, size_t smem)
{
    return cu(cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, fn, block, smem));
}

/* cuOccupancyMaxPotentialBlockSize: the block size (a multiple of 32 up to the limit, the kernel's
 * and the device's) with the most threads resident on an SM, the larger size on a tie, its dynamic
 * shared memory from the callback when one is given; the grid that fills every SM with it. */
CR_EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, void *fn, size_t (*smem_of)(int),
                                                    size_t smem, int limit);
CUresult cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, void *fn, size_t (*smem_of)(int), size_t smem,
                                          int limit)
{
    if (!min_grid || !block) return CU_INVALID_VALUE;
    int maxt = 0, sms = 0, best = 0, best_blocks = 0;
    CUresult r = cuFuncGetAttribute(&maxt, 0, fn);
    if (!r) r = cu(cudaDeviceGetAttribute(&sms, 16 /* multiprocessor count */, 0));
    if (r) return r;
    if (limit <= 0 || limit > maxt) limit = maxt;
    for (int b = limit - limit % 32; b >= 32; b -= 32) {
        int n = 0;
        r = cu(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, fn, b, smem_of ? smem_of(b) : smem));
        if (r) return r;
        if (n * b > best_blocks * best) best = b, best_blocks = n;
    }
    if (!best) return cu(cr_set(cudaErrorInvalidValue, "cuOccupancyMaxPotentialBlockSize: no block size up to %d fits", limit));
    *block = best;
    *min_grid = best_blocks * sms;
    return CU_OK;
}

/* ---- streams and events ------------------------------------------------------------------- */

CR_EXPORT CUresult cuStreamCreate(cudaStream_t *s, unsigned flags);
CUresult cuStreamCreate(cudaStream_t *s, unsigned flags) { return cu(cudaStreamCreateWithPriority(s, flags, 0)); }
CR_EXPORT CUresult cuStreamCreateWithPriority(cudaStream_t *s, unsigned flags, int priority);
CUresult cuStreamCreateWithPriority(cudaStream_t *s, unsigned flags, int priority)
{
    return cu(cudaStreamCreateWithPriority(s, flags, priority));
}
CR_EXPORT CUresult cuStreamDestroy_v2(cudaStream_t s);
CUresult cuStreamDestroy_v2(cudaStream_t s) { return cu(cudaStreamDestroy(s)); }
CR_EXPORT CUresult cuStreamSynchronize(cudaStream_t s);
CUresult cuStreamSynchronize(cudaStream_t s) { return cu(cudaStreamSynchronize(s)); }
CR_EXPORT CUresult cuStreamQuery(cudaStream_t s);
CUresult cuStreamQuery(cudaStream_t s) { return cu(cudaStreamQuery(s)); }
CR_EXPORT CUresult cuStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags);
CUresult cuStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags) { return cu(cudaStreamWaitEvent(s, e, flags)); }
CR_EXPORT CUresult cuEventCreate(cudaEvent_t *e, unsigned flags);
CUresult cuEventCreate(cudaEvent_t *e, unsigned flags) { return cu(cudaEventCreateWithFlags(e, flags)); }
CR_EXPORT CUresult cuEventRecord(cudaEvent_t e, cudaStream_t s);
CUresult cuEventRecord(cudaEvent_t e, cudaStream_t s) { return cu(cudaEventRecord(e, s)); }
CR_EXPORT CUresult cuEventSynchronize(cudaEvent_t e);
CUresult cuEventSynchronize(cudaEvent_t e) { return cu(cudaEventSynchronize(e)); }
CR_EXPORT CUresult cuEventQuery(cudaEvent_t e);
CUresult cuEventQuery(cudaEvent_t e) { return cu(cudaEventQuery(e)); }
CR_EXPORT CUresult cuEventElapsedTime_v2(float *ms, cudaEvent_t a, cudaEvent_t b);
CUresult cuEventElapsedTime_v2(float *ms, cudaEvent_t a, cudaEvent_t b) { return cu(cudaEventElapsedTime(ms, a, b)); }
CR_EXPORT CUresult cuEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b);
CUresult cuEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) { return cu(cudaEventElapsedTime(ms, a, b)); }
CR_EXPORT CUresult cuEventDestroy_v2(cudaEvent_t e);
CUresult cuEventDestroy_v2(cudaEvent_t e) { return cu(cudaEventDestroy(e)); }
