/* cuda.c - the cuda backend's core over the CUDA Driver API, loaded with
 * dlopen (see cuda.h, cuda_api.h). */
#define _GNU_SOURCE
#include "cuda/cuda.h"
#include "cuda/cuda_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mh_cuda {
    void *lib;
    mh_cuda_fns f;
    char path[256];
};

struct mh_cuda_dev {
    mh_cuda *c;
    CUdevice dev;
    CUcontext ctx;
    int ordinal;
    int cc;                  /* compute capability as 10*major+minor */
    int smem_block;          /* shared memory a block gets without opting in (48 KiB) */
    unsigned generation;
    unsigned retains;        /* of the primary context: one at open, one more after each reset */
    CUevent ev[2];           /* timing events, made once per context */
    CUresult lost;           /* non-zero: an error after which the driver says the process must be
                              * relaunched; every call on the device is refused from then on */
    char lost_why[400];      /* what was lost, and by which call */
};

struct mh_cuda_module {
    mh_cuda_dev *d;
    CUmodule mod;
    unsigned generation;
    char target[24];         /* what the JIT compiled for: "compute_90a" or "context" */
};

static const char *err_name(mh_cuda *c, CUresult r)
{
    const char *s = NULL;
    if (c->f.cuGetErrorName && c->f.cuGetErrorName(r, &s) == 0 && s) return s;
    return "CUDA error";
}

static const char *err_text(mh_cuda *c, CUresult r)
{
    const char *s = NULL;
    if (c->f.cuGetErrorString && c->f.cuGetErrorString(r, &s) == 0 && s) return s;
    return "";
}

/* Errors after which, cuda.h says, "the process is in an inconsistent state and any further CUDA work
 * will return the same error. To continue using CUDA, the process must be terminated and relaunched":
 * a primary-context reset is not promised to bring the device back, so the device is lost for this
 * process (every later call on it is refused with that reason). */
static int process_fatal(CUresult r)
{
    switch (r) {
    case MH_CUDA_ERROR_ILLEGAL_ADDRESS:
    case MH_CUDA_ERROR_LAUNCH_TIMEOUT:
    case MH_CUDA_ERROR_HARDWARE_STACK_ERROR:
    case MH_CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case MH_CUDA_ERROR_MISALIGNED_ADDRESS:
    case MH_CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case MH_CUDA_ERROR_INVALID_PC:
    case MH_CUDA_ERROR_LAUNCH_FAILED:
    case MH_CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case MH_CUDA_ERROR_CONTAINED:
    case MH_CUDA_ERROR_EXTERNAL_DEVICE: return 1;
    default: return 0;
    }
}

/* Errors that leave the context unusable: the process-fatal ones, and a device-side assert, after
 * which cuda.h says "the context cannot be used anymore, and must be destroyed" (a primary-context
 * reset destroys it; allocations are gone, the process may go on). */
static int sticky(CUresult r) { return process_fatal(r) || r == MH_CUDA_ERROR_ASSERT; }

/* The harness's code for a driver result. */
static mh_code map(CUresult r)
{
    if (sticky(r)) return MH_E_KERNEL_FAULT;
    switch (r) {
    case MH_CUDA_ERROR_OUT_OF_MEMORY: return MH_E_NO_MEMORY;
    case MH_CUDA_ERROR_NO_DEVICE:
    case MH_CUDA_ERROR_NOT_INITIALIZED: return MH_E_NO_DEVICE;
    case MH_CUDA_ERROR_INVALID_IMAGE:
    case MH_CUDA_ERROR_NO_BINARY_FOR_GPU:
    case MH_CUDA_ERROR_INVALID_PTX:
    case MH_CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case MH_CUDA_ERROR_UNSUPPORTED_PTX_VERSION: return MH_E_JIT_FAILED;
    case MH_CUDA_ERROR_NOT_FOUND: return MH_E_NOT_FOUND;
    case MH_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: return MH_E_LAUNCH_FAILED;
    default: return MH_E_LAUNCH_FAILED;
    }
}

static int fail_cu(mh_cuda *c, CUresult r, mh_error *e, const char *what)
{
    return mh_fail(e, map(r), "%s: %s (%d): %s", what, err_name(c, r), r, err_text(c, r));
}

static const char LOST_WHY[] = "the driver says a process must be terminated and relaunched to use CUDA again after this "
                               "error, so nothing more runs on this device in this process (a new process can use the GPU)";

/* The refusal of every call on a lost device. */
static int refuse_lost(const mh_cuda_dev *d, mh_error *e)
{
    return mh_fail(e, MH_E_NO_DEVICE, "the CUDA device is lost for this process: %s; %s", d->lost_why, LOST_WHY);
}

#define REFUSE_IF_LOST(d, e) do { if ((d)->lost) return refuse_lost((d), (e)); } while (0)

static void recover(mh_cuda_dev *d);

/* After a sticky error: a process-fatal one loses the device for the process (no reset is tried:
 * none is promised to work), an assert resets the context.  `what` names the call or the kernel;
 * the error's message says which of the two happened. */
static int fail_sticky(mh_cuda_dev *d, CUresult r, mh_error *e, const char *what, const char *verb)
{
    mh_cuda *c = d->c;
    if (process_fatal(r)) {
        d->lost = r;
        snprintf(d->lost_why, sizeof d->lost_why, "%s %s with %s (%d)", what, verb, err_name(c, r), r);
        return mh_fail(e, MH_E_KERNEL_FAULT, "%s %s: %s (%d): %s; the device is lost for this process: %s", what, verb,
                       err_name(c, r), r, err_text(c, r), LOST_WHY);
    }
    recover(d);
    return mh_fail(e, MH_E_KERNEL_FAULT, "%s %s: %s (%d): %s; the device's context was reset (its modules and memory "
                   "are gone) so the next launch can run", what, verb, err_name(c, r), r, err_text(c, r));
}

/* A device call's failure: sticky errors as above, the rest mapped to the harness's codes. */
static int fail_dev(mh_cuda_dev *d, CUresult r, mh_error *e, const char *what)
{
    return sticky(r) ? fail_sticky(d, r, e, what, "failed") : fail_cu(d->c, r, e, what);
}

int mh_cuda_load(const char *lib, mh_cuda **out, mh_error *e)
{
    *out = NULL;
    if (!lib) lib = getenv("MGPU_LIBCUDA");
    if (!lib || !*lib) lib = "libcuda.so.1";
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) return mh_fail(e, MH_E_NO_DEVICE, "cannot load the CUDA driver (%s): %s", lib, dlerror());
    mh_cuda *c = calloc(1, sizeof *c);
    if (!c) return mh_fail(e, MH_E_NO_MEMORY, "out of memory"); /* the library stays: see mh_cuda_unload */
    c->lib = h;
    snprintf(c->path, sizeof c->path, "%s", lib);
#define SYM(name)                                                                                    \
    do {                                                                                             \
        *(void **)&c->f.name = dlsym(h, #name);                                                      \
        if (!c->f.name) {                                                                            \
            mh_fail(e, MH_E_NO_DEVICE, "%s has no %s: a driver older than the harness needs", lib, #name); \
            mh_cuda_unload(c);                                                                       \
            return (int)e->code;                                                                     \
        }                                                                                            \
    } while (0)
    SYM(cuInit); SYM(cuDriverGetVersion); SYM(cuDeviceGetCount); SYM(cuDeviceGet); SYM(cuDeviceGetName);
    SYM(cuDeviceGetAttribute); SYM(cuDeviceTotalMem_v2); SYM(cuDevicePrimaryCtxRetain);
    SYM(cuDevicePrimaryCtxRelease_v2); SYM(cuDevicePrimaryCtxReset_v2); SYM(cuCtxSetCurrent); SYM(cuCtxSynchronize);
    SYM(cuModuleLoadDataEx); SYM(cuModuleUnload); SYM(cuModuleGetFunction); SYM(cuFuncGetAttribute);
    SYM(cuFuncSetAttribute); SYM(cuMemAlloc_v2); SYM(cuMemFree_v2); SYM(cuMemcpyHtoD_v2); SYM(cuMemcpyDtoH_v2);
    SYM(cuMemsetD8_v2); SYM(cuLaunchKernel); SYM(cuEventCreate); SYM(cuEventRecord); SYM(cuEventSynchronize);
    /* CUDA 13's cuda.h maps cuEventElapsedTime to cuEventElapsedTime_v2 (drivers from 12.8 have it);
     * an older driver has only the first name, with the same signature */
    *(void **)&c->f.cuEventElapsedTime = dlsym(h, "cuEventElapsedTime_v2");
    if (!c->f.cuEventElapsedTime) SYM(cuEventElapsedTime);
    SYM(cuEventDestroy_v2); SYM(cuGetErrorName); SYM(cuGetErrorString);
#undef SYM
    *(void **)&c->f.cuLaunchKernelEx = dlsym(h, "cuLaunchKernelEx"); /* optional: clusters and cooperative launches */
    *(void **)&c->f.cuOccupancyMaxActiveBlocksPerMultiprocessor = dlsym(h, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    *(void **)&c->f.cuTensorMapEncodeTiled = dlsym(h, "cuTensorMapEncodeTiled"); /* optional: TMA descriptors */
    CUresult r = c->f.cuInit(0);
    if (r) {
        fail_cu(c, r, e, "cuInit");
        e->code = MH_E_NO_DEVICE;
        mh_cuda_unload(c);
        return (int)e->code;
    }
    *out = c;
    return 0;
}

/* libcuda is never dlclose'd: the driver starts threads of its own, which may outlive every handle
 * the harness closed, and would then run code that is gone.  Loading it again only counts a
 * reference up. */
void mh_cuda_unload(mh_cuda *c)
{
    free(c);
}

int mh_cuda_driver_version(mh_cuda *c, int *version, mh_error *e)
{
    CUresult r = c->f.cuDriverGetVersion(version);
    return r ? fail_cu(c, r, e, "cuDriverGetVersion") : 0;
}

int mh_cuda_device_count(mh_cuda *c, int *n, mh_error *e)
{
    CUresult r = c->f.cuDeviceGetCount(n);
    return r ? fail_cu(c, r, e, "cuDeviceGetCount") : 0;
}

int mh_cuda_device_info(mh_cuda *c, int ordinal, mh_cuda_devinfo *info, mh_error *e)
{
    CUdevice dev;
    CUresult r;
    size_t mem = 0;
    memset(info, 0, sizeof *info);
    if ((r = c->f.cuDeviceGet(&dev, ordinal))) return fail_cu(c, r, e, "cuDeviceGet");
    if ((r = c->f.cuDeviceGetName(info->name, (int)sizeof info->name, dev))) return fail_cu(c, r, e, "cuDeviceGetName");
    struct { int attr; int *out; } q[] = {
        {MH_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info->major},
        {MH_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info->minor},
        {MH_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info->sms},
        {MH_CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &info->clock_khz},
        {MH_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &info->smem_optin},
        {MH_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &info->max_threads},
    };
    for (size_t i = 0; i < sizeof q / sizeof *q; i++)
        if ((r = c->f.cuDeviceGetAttribute(q[i].out, q[i].attr, dev))) return fail_cu(c, r, e, "cuDeviceGetAttribute");
    if ((r = c->f.cuDeviceTotalMem_v2(&mem, dev))) return fail_cu(c, r, e, "cuDeviceTotalMem");
    info->memory = mem;
    return 0;
}

int mh_cuda_open(mh_cuda *c, int ordinal, mh_cuda_dev **out, mh_error *e)
{
    int n = 0;
    *out = NULL;
    if (mh_cuda_device_count(c, &n, e)) return (int)e->code;
    if (ordinal < 0 || ordinal >= n)
        return mh_fail(e, MH_E_NO_DEVICE, "no CUDA device %d (%d device%s)", ordinal, n, n == 1 ? "" : "s");
    mh_cuda_dev *d = calloc(1, sizeof *d);
    if (!d) return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    d->c = c;
    d->ordinal = ordinal;
    CUresult r = c->f.cuDeviceGet(&d->dev, ordinal);
    if (!r) r = c->f.cuDevicePrimaryCtxRetain(&d->ctx, d->dev);
    if (!r) d->retains = 1;
    if (!r) r = c->f.cuCtxSetCurrent(d->ctx);
    int major = 0, minor = 0;
    if (!r) r = c->f.cuDeviceGetAttribute(&major, MH_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev);
    if (!r) r = c->f.cuDeviceGetAttribute(&minor, MH_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev);
    if (!r) r = c->f.cuDeviceGetAttribute(&d->smem_block, MH_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, d->dev);
    if (d->smem_block <= 0) d->smem_block = 48 * 1024;
    d->cc = major * 10 + minor;
    if (r) {
        if (d->retains) c->f.cuDevicePrimaryCtxRelease_v2(d->dev);
        free(d);
        if (process_fatal(r)) /* an earlier fault in this process, on another handle of the device */
            return mh_fail(e, MH_E_NO_DEVICE, "opening the device's primary context: %s (%d): CUDA is lost for this "
                           "process after an earlier fault; %s", err_name(c, r), r, LOST_WHY);
        return fail_cu(c, r, e, "opening the device's primary context");
    }
    *out = d;
    return 0;
}

void mh_cuda_close(mh_cuda_dev *d)
{
    if (!d) return;
    for (int i = 0; i < 2 && !d->lost; i++)
        if (d->ev[i]) d->c->f.cuEventDestroy_v2(d->ev[i]);
    for (unsigned i = 0; i < d->retains; i++) d->c->f.cuDevicePrimaryCtxRelease_v2(d->dev);
    free(d);
}

unsigned mh_cuda_generation(const mh_cuda_dev *d) { return d->generation; }

int mh_cuda_lost(const mh_cuda_dev *d) { return d->lost; }

/* After an assert the context is unusable: reset it and take a new one. */
static void recover(mh_cuda_dev *d)
{
    mh_cuda *c = d->c;
    d->ev[0] = d->ev[1] = NULL; /* they die with the context */
    c->f.cuDevicePrimaryCtxReset_v2(d->dev);
    if (c->f.cuDevicePrimaryCtxRetain(&d->ctx, d->dev) == 0) {
        d->retains++;
        c->f.cuCtxSetCurrent(d->ctx);
    }
    d->generation++;
}

/* "ptxas application ptx input, line 12; error   : ..." -> 12 */
static long log_line(const char *log)
{
    const char *p = strstr(log, ", line ");
    return p ? strtol(p + 7, NULL, 10) : -1;
}

/* "sm_90a" -> 90 and kind 'a'; "sm_90" -> 90 and kind 0; 0 when t is not an
 * sm_ target. */
static int target_cc(const char *t, char *kind)
{
    *kind = 0;
    if (!t || strncmp(t, "sm_", 3) || t[3] < '0' || t[3] > '9') return 0;
    char *end;
    long cc = strtol(t + 3, &end, 10);
    if (cc <= 0 || cc > 9999) return 0;
    if ((*end == 'a' || *end == 'f') && !end[1]) *kind = *end;
    else if (*end) return 0;
    return (int)cc;
}

/* Whether PTX for sm_<cc><kind> runs on a device of compute capability dev:
 * "a" on that exact one, "f" on the same major from that minor on, plain
 * targets on it and every newer one.  On no, a message says why. */
static int target_runs_on(int cc, char kind, int dev, const char *path, const char *target, mh_error *e)
{
    int ok = kind == 'a' ? cc == dev : kind == 'f' ? cc / 10 == dev / 10 && cc <= dev : cc <= dev;
    if (ok) return 0;
    return mh_fail(e, MH_E_JIT_FAILED, "%s: the PTX targets %s, which %s %d.%d%s; this device is sm_%d", path, target,
                   kind == 'a' ? "runs only on compute capability" : kind == 'f' ? "runs on compute capability"
                                                                   : "needs compute capability",
                   cc / 10, cc % 10, kind == 'a' ? "" : kind == 'f' ? " up to the next major" : " or newer", dev);
}

/* One cuModuleLoadDataEx; target 0: the context's. */
static CUresult jit_once(mh_cuda *c, const char *ptx, const mh_cuda_jit *jit, unsigned target, char *info, char *err,
                         size_t log_size, CUmodule *mod)
{
    int opts[9];
    void *vals[9];
    unsigned n = 0;
    info[0] = err[0] = 0;
#define OPT(o, v) (opts[n] = (o), vals[n++] = (void *)(uintptr_t)(v))
    OPT(MH_CU_JIT_INFO_LOG_BUFFER, info);
    OPT(MH_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, log_size);
    OPT(MH_CU_JIT_ERROR_LOG_BUFFER, err);
    OPT(MH_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, log_size);
    OPT(MH_CU_JIT_LOG_VERBOSE, 1);
    OPT(MH_CU_JIT_OPTIMIZATION_LEVEL, jit->opt_level >= 0 && jit->opt_level <= 4 ? jit->opt_level : 4);
    if (jit->max_regs > 0) OPT(MH_CU_JIT_MAX_REGISTERS, jit->max_regs);
    if (target) OPT(MH_CU_JIT_TARGET, target);
#undef OPT
    *mod = NULL;
    return c->f.cuModuleLoadDataEx(mod, ptx, n, opts, vals);
}

int mh_cuda_load_ptx(mh_cuda_dev *d, const char *ptx, const char *path, const mh_cuda_jit *jit, mh_cuda_module **out,
                     char **info_log, mh_error *e)
{
    enum { LOG = 1 << 16 };
    mh_cuda *c = d->c;
    REFUSE_IF_LOST(d, e);
    char kind = 0;
    int cc = target_cc(jit->target, &kind);
    if (cc && target_runs_on(cc, kind, d->cc, path, jit->target, e)) return (int)e->code;
    char *info = calloc(1, LOG), *err = calloc(1, LOG), *err0 = calloc(1, LOG);
    if (!info || !err || !err0) {
        free(info);
        free(err);
        free(err0);
        return mh_fail(e, MH_E_NO_MEMORY, "out of memory");
    }
    CUmodule mod = NULL;
    CUresult r = 0, r0 = 0;
    char used[24] = "context";
    if (kind) {
        /* architecture-specific PTX: compile for exactly that target; a driver
         * that does not take the option gets a second try from the context */
        unsigned t = (kind == 'a' ? MH_CU_TARGET_ARCH_SPECIFIC_BASE : MH_CU_TARGET_FAMILY_BASE) + (unsigned)cc;
        r0 = r = jit_once(c, ptx, jit, t, info, err0, LOG, &mod);
        if (!r) snprintf(used, sizeof used, "compute_%d%c", cc, kind);
    }
    if (!kind || (r && !sticky(r))) r = jit_once(c, ptx, jit, 0, info, err, LOG, &mod);
    int rc = 0;
    if (r && sticky(r)) {
        rc = fail_sticky(d, r, e, path, "could not be loaded");
    } else if (r) {
        /* both tries failed: the one for the PTX's own target speaks of the PTX, unless the driver
         * did not take that target at all (CUDA_ERROR_INVALID_VALUE); the other is a note */
        int first = r0 && r0 != MH_CUDA_ERROR_INVALID_VALUE && err0[0];
        CUresult rr = first ? r0 : r, ro = first ? r : r0;
        const char *log = first ? err0 : err[0] ? err : err0;
        e->line = log_line(log);
        char note[512] = "";
        int v = 0;
        if (rr == MH_CUDA_ERROR_UNSUPPORTED_PTX_VERSION && !c->f.cuDriverGetVersion(&v))
            snprintf(note, sizeof note, "\n(this driver is CUDA %d.%d: the PTX's .version needs a newer one)", v / 1000,
                     v % 1000 / 10);
        else if (r0 && first)
            snprintf(note, sizeof note, "\n(compiled for compute_%d%c; from the context's target too: %s (%d))", cc, kind,
                     err_name(c, ro), ro);
        else if (r0 && r0 != r) /* the first try's answer, when the second's differs */
            snprintf(note, sizeof note, "\n(for compute_%d%c first: %s (%d)%s%.300s)", cc, kind, err_name(c, r0), r0,
                     err0[0] ? ": " : "", err0);
        r = rr;
        rc = mh_fail(e, map(r), "%s: the JIT refused the module: %s (%d)%s%.600s%s", path, err_name(c, r), r,
                     log[0] ? "\n" : "", log, note);
    } else {
        mh_cuda_module *m = calloc(1, sizeof *m);
        if (!m) {
            c->f.cuModuleUnload(mod);
            rc = mh_fail(e, MH_E_NO_MEMORY, "out of memory");
        } else {
            m->d = d;
            m->mod = mod;
            m->generation = d->generation;
            snprintf(m->target, sizeof m->target, "%s", used);
            *out = m;
        }
    }
    if (info_log && !rc) *info_log = info;
    else free(info);
    free(err);
    free(err0);
    return rc;
}

const char *mh_cuda_module_target(const mh_cuda_module *m) { return m->target; }

void mh_cuda_unload_module(mh_cuda_module *m)
{
    if (!m) return;
    if (m->generation == m->d->generation && !m->d->lost) m->d->c->f.cuModuleUnload(m->mod);
    free(m);
}

int mh_cuda_kernel(mh_cuda_module *m, const char *name, void **fn, mh_cuda_kernel_info *info, mh_error *e)
{
    mh_cuda *c = m->d->c;
    REFUSE_IF_LOST(m->d, e);
    if (m->generation != m->d->generation)
        return mh_fail(e, MH_E_LAUNCH_FAILED, "the module was loaded before the device was reset after a fault: load it again");
    CUfunction f;
    CUresult r = c->f.cuModuleGetFunction(&f, m->mod, name);
    if (r && sticky(r)) return fail_dev(m->d, r, e, "cuModuleGetFunction");
    if (r) return mh_fail(e, r == MH_CUDA_ERROR_NOT_FOUND ? MH_E_NOT_FOUND : map(r), "no kernel named \"%s\" (%s)", name,
                          err_name(c, r));
    if (info) {
        memset(info, 0, sizeof *info);
        c->f.cuFuncGetAttribute(&info->regs, MH_CU_FUNC_ATTRIBUTE_NUM_REGS, f);
        c->f.cuFuncGetAttribute(&info->static_smem, MH_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
        c->f.cuFuncGetAttribute(&info->local_bytes, MH_CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f);
        c->f.cuFuncGetAttribute(&info->max_threads, MH_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f);
    }
    *fn = f;
    return 0;
}

int mh_cuda_alloc(mh_cuda_dev *d, uint64_t bytes, uint64_t *addr, mh_error *e)
{
    REFUSE_IF_LOST(d, e);
    CUdeviceptr p = 0;
    CUresult r = d->c->f.cuMemAlloc_v2(&p, bytes ? bytes : 1);
    if (r) return fail_dev(d, r, e, "cuMemAlloc");
    *addr = p;
    return 0;
}

int mh_cuda_free(mh_cuda_dev *d, uint64_t addr, mh_error *e)
{
    REFUSE_IF_LOST(d, e);
    CUresult r = d->c->f.cuMemFree_v2(addr);
    return r ? fail_dev(d, r, e, "cuMemFree") : 0;
}

int mh_cuda_write(mh_cuda_dev *d, uint64_t addr, const void *src, uint64_t bytes, mh_error *e)
{
    REFUSE_IF_LOST(d, e);
    CUresult r = d->c->f.cuMemcpyHtoD_v2(addr, src, bytes);
    return r ? fail_dev(d, r, e, "cuMemcpyHtoD") : 0;
}

int mh_cuda_read(mh_cuda_dev *d, uint64_t addr, void *dst, uint64_t bytes, mh_error *e)
{
    REFUSE_IF_LOST(d, e);
    CUresult r = d->c->f.cuMemcpyDtoH_v2(dst, addr, bytes);
    return r ? fail_dev(d, r, e, "cuMemcpyDtoH") : 0;
}

int mh_cuda_memset(mh_cuda_dev *d, uint64_t addr, int byte, uint64_t bytes, mh_error *e)
{
    REFUSE_IF_LOST(d, e);
    CUresult r = d->c->f.cuMemsetD8_v2(addr, (unsigned char)byte, bytes);
    return r ? fail_dev(d, r, e, "cuMemsetD8") : 0;
}

/* Raises the function's dynamic shared memory limit when the launch needs more than a block gets by
 * default: cuda.h's default is MAX_SHARED_MEMORY_PER_BLOCK (48 KiB) minus the kernel's static shared
 * memory, so it is the sum that decides, and the static part is the driver's figure for the
 * function as compiled. */
static int smem_limit(mh_cuda_dev *d, CUfunction f, const char *name, unsigned smem, mh_error *e)
{
    mh_cuda *c = d->c;
    int st = 0;
    CUresult r = c->f.cuFuncGetAttribute(&st, MH_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
    if (r) return fail_dev(d, r, e, "cuFuncGetAttribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)");
    if ((uint64_t)smem + (uint64_t)(st > 0 ? st : 0) <= (uint64_t)d->smem_block) return 0;
    r = c->f.cuFuncSetAttribute(f, MH_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem);
    if (r && sticky(r)) return fail_dev(d, r, e, "cuFuncSetAttribute");
    if (r)
        return mh_fail(e, MH_E_LAUNCH_FAILED, "%s: %u bytes of dynamic shared memory (with %d static, %llu in all) "
                       "refused: %s (%d): %s", name, smem, st, (unsigned long long)smem + (unsigned long long)st,
                       err_name(c, r), r, err_text(c, r));
    return 0;
}

/* A cooperative grid must be resident at once: the driver's occupancy of the kernel times the SMs. */
static int coop_fits(mh_cuda_dev *d, CUfunction f, const char *name, const unsigned grid[3], const unsigned block[3],
                     unsigned smem, mh_error *e)
{
    mh_cuda *c = d->c;
    int ok = 0, sms = 0, per_sm = 0;
    CUresult r;
    if (!c->f.cuLaunchKernelEx || !c->f.cuOccupancyMaxActiveBlocksPerMultiprocessor)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "%s: a cooperative launch needs cuLaunchKernelEx and the occupancy "
                       "calculator (a CUDA 12 driver)", name);
    if ((r = c->f.cuDeviceGetAttribute(&ok, MH_CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, d->dev)) ||
        (r = c->f.cuDeviceGetAttribute(&sms, MH_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->dev)))
        return sticky(r) ? fail_dev(d, r, e, "cuDeviceGetAttribute") : fail_cu(c, r, e, "cuDeviceGetAttribute");
    if (!ok) return mh_fail(e, MH_E_BAD_ARGUMENT, "%s: this device does not support cooperative launches", name);
    unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
    if ((r = c->f.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, (int)threads, smem)))
        return sticky(r) ? fail_dev(d, r, e, "cuOccupancyMaxActiveBlocksPerMultiprocessor")
                         : fail_cu(c, r, e, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    unsigned long long blocks = (unsigned long long)grid[0] * grid[1] * grid[2];
    if (blocks > (unsigned long long)per_sm * (unsigned long long)sms)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "%s: a cooperative grid of %llu blocks cannot be resident at once: %d "
                       "block%s per SM x %d SMs = %lld (blocks of %llu threads, %u bytes of dynamic shared memory)",
                       name, blocks, per_sm, per_sm == 1 ? "" : "s", sms, (long long)per_sm * sms, threads, smem);
    return 0;
}

int mh_cuda_launch_n(mh_cuda_dev *d, void *fn, const char *name, const unsigned grid[3], const unsigned block[3],
                     const unsigned cluster[3], unsigned smem, void **params, unsigned repeat, float *ms, mh_error *e)
{
    return mh_cuda_launch_ex(d, fn, name, grid, block, cluster, smem, params, repeat, 0, ms, e);
}

int mh_cuda_launch_ex(mh_cuda_dev *d, void *fn, const char *name, const unsigned grid[3], const unsigned block[3],
                      const unsigned cluster[3], unsigned smem, void **params, unsigned repeat, int cooperative,
                      float *ms, mh_error *e)
{
    REFUSE_IF_LOST(d, e);
    if (repeat < 1) repeat = 1;
    int clustered = cluster && (cluster[0] > 1 || cluster[1] > 1 || cluster[2] > 1);
    if (clustered) {
        for (int i = 0; i < 3; i++)
            if (!cluster[i] || grid[i] % cluster[i])
                return mh_fail(e, MH_E_BAD_ARGUMENT, "%s: grid %ux%ux%u is not a whole number of %ux%ux%u clusters", name,
                               grid[0], grid[1], grid[2], cluster[0], cluster[1], cluster[2]);
        if (!d->c->f.cuLaunchKernelEx)
            return mh_fail(e, MH_E_LAUNCH_FAILED, "%s: cluster launches need cuLaunchKernelEx (CUDA 12 driver)", name);
    }
    mh_cuda *c = d->c;
    CUfunction f = fn;
    CUresult r;
    if (smem && smem_limit(d, f, name, smem, e)) return (int)e->code;
    if (cooperative && coop_fits(d, f, name, grid, block, smem, e)) return (int)e->code;
    mh_CUlaunchAttribute attr[2];
    mh_CUlaunchConfig cfg;
    unsigned nattr = 0;
    memset(&cfg, 0, sizeof cfg);
    memset(attr, 0, sizeof attr);
    if (clustered) {
        /* more blocks than sm_90's portable cluster size must be allowed first, on the function */
        unsigned long long blocks = (unsigned long long)cluster[0] * cluster[1] * cluster[2];
        if (blocks > MH_CU_PORTABLE_CLUSTER_BLOCKS &&
            (r = c->f.cuFuncSetAttribute(f, MH_CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1))) {
            if (sticky(r)) return fail_dev(d, r, e, "cuFuncSetAttribute");
            return mh_fail(e, MH_E_LAUNCH_FAILED, "%s: clusters of %llu blocks (more than the portable %d) refused: "
                           "%s (%d): %s", name, blocks, MH_CU_PORTABLE_CLUSTER_BLOCKS, err_name(c, r), r,
                           err_text(c, r));
        }
        attr[nattr].id = MH_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attr[nattr].value.clusterDim.x = cluster[0];
        attr[nattr].value.clusterDim.y = cluster[1];
        attr[nattr].value.clusterDim.z = cluster[2];
        nattr++;
    }
    if (cooperative) { /* the grid may wait on itself: cg::this_grid().sync() */
        attr[nattr].id = MH_CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        attr[nattr].value.cooperative = 1;
        nattr++;
    }
    int ex = nattr > 0;
    if (ex) {
        mh_CUlaunchConfig cf = {grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, NULL, attr, nattr};
        cfg = cf;
    }
    for (int i = 0; ms && i < 2; i++)
        if (!d->ev[i] && (r = c->f.cuEventCreate(&d->ev[i], 0))) return fail_dev(d, r, e, "cuEventCreate");
    CUevent *ev = d->ev;
    /* timed: the device idle first, so that the first event is not recorded behind earlier work and
     * an earlier launch's error is not taken for this one's; then `repeat` launches back to back
     * between the two events (the host's gap before the first launch is counted once, not per
     * launch).  Untimed: the launches and one synchronise. */
    r = 0;
    if (ms && (r = c->f.cuCtxSynchronize())) { /* not this launch's error: work before it failed */
        char what[320];
        snprintf(what, sizeof what, "the work before launching %s", name);
        return sticky(r) ? fail_sticky(d, r, e, what, "failed") : fail_cu(c, r, e, what);
    }
    if (ms) r = c->f.cuEventRecord(ev[0], NULL);
    unsigned done = 0;
    for (; !r && done < repeat; done++) {
        if (ex) r = c->f.cuLaunchKernelEx(&cfg, f, params, NULL);
        else r = c->f.cuLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], smem, NULL, params, NULL);
    }
    int at_launch = r != 0; /* refused (or failed) by a launch call, not found at the synchronise */
    if (!r && ms) r = c->f.cuEventRecord(ev[1], NULL);
    if (!r) r = ms ? c->f.cuEventSynchronize(ev[1]) : c->f.cuCtxSynchronize();
    if (!r && ms) {
        r = c->f.cuEventElapsedTime(ms, ev[0], ev[1]);
        if (!r) *ms /= (float)repeat;
    }
    if (!r) return 0;
    char what[320];
    if (repeat > 1 && at_launch) snprintf(what, sizeof what, "%s (launch %u of %u)", name, done, repeat);
    else if (repeat > 1) snprintf(what, sizeof what, "%s (one of %u launches back to back)", name, repeat);
    else snprintf(what, sizeof what, "%s", name);
    if (sticky(r)) return fail_sticky(d, r, e, what, "faulted");
    return mh_fail(e, map(r), "launching %s: %s (%d): %s", what, err_name(c, r), r, err_text(c, r));
}

int mh_cuda_launch(mh_cuda_dev *d, void *fn, const char *name, const unsigned grid[3], const unsigned block[3],
                   const unsigned cluster[3], unsigned smem, void **params, float *ms, mh_error *e)
{
    return mh_cuda_launch_n(d, fn, name, grid, block, cluster, smem, params, 1, ms, e);
}

int mh_cuda_tensor_map(mh_cuda_dev *d, const mh_tensor_map_spec *s, unsigned char out[MH_TMAP_BYTES], mh_error *e)
{
    REFUSE_IF_LOST(d, e);
    if (mh_tensor_map_check(s, e)) return (int)e->code;
    mh_cuda *c = d->c;
    if (!c->f.cuTensorMapEncodeTiled)
        return mh_fail(e, MH_E_BAD_ARGUMENT, "%s", "tensor maps need cuTensorMapEncodeTiled (a CUDA 12 driver)");
    unsigned long long dims[MH_TMAP_MAX_RANK], strides[MH_TMAP_MAX_RANK];
    unsigned box[MH_TMAP_MAX_RANK], es[MH_TMAP_MAX_RANK];
    for (uint32_t i = 0; i < s->rank; i++) {
        dims[i] = s->dims[i];
        box[i] = s->box[i];
        es[i] = s->elem_strides[i];
        if (i + 1 < s->rank) strides[i] = s->strides[i];
    }
    _Alignas(MH_TMAP_ALIGN) unsigned char map[MH_TMAP_BYTES]; /* as CUDA 13 declares CUtensorMap (the driver wants 64) */
    memset(map, 0, sizeof map);
    CUresult r = c->f.cuTensorMapEncodeTiled(map, s->data_type, s->rank, (void *)(uintptr_t)s->address, dims, strides,
                                             box, es, s->interleave, s->swizzle, s->l2, s->oob);
    if (r && sticky(r)) return fail_dev(d, r, e, "cuTensorMapEncodeTiled");
    if (r) {
        fail_cu(c, r, e, "cuTensorMapEncodeTiled");
        e->code = MH_E_BAD_ARGUMENT; /* the arguments it was given: the driver found a rule the checks missed */
        return (int)e->code;
    }
    memcpy(out, map, sizeof map);
    return 0;
}
