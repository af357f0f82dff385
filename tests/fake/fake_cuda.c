/* fake_cuda.c - a stand-in for libcuda.so.1 in tests: the driver entry
 * points the harness uses, backed by host memory, with behaviour chosen by
 * environment variables:
 *   FAKE_CUDA_DEVICES=N     number of devices (default 1)
 *   a PTX containing "FAKE_JIT_ERROR" fails to JIT with a ptxas-style log
 *     naming the line of that text
 *   a kernel named "fault" returns CUDA_ERROR_ILLEGAL_ADDRESS (700), one named
 *     "fault_NNN" the error NNN (fault_710: CUDA_ERROR_ASSERT ...), and every
 *     call but the reset and the releases keeps failing with it until
 *     cuDevicePrimaryCtxReset (sticky)
 *   FAKE_CUDA_STATIC_SMEM=N  every kernel has N bytes of static shared memory;
 *     a launch whose dynamic shared memory exceeds the function's limit (by
 *     default 48 KiB minus the static part, as cuda.h says; raised with
 *     cuFuncSetAttribute up to the opt-in 232448 minus the static part) is
 *     CUDA_ERROR_INVALID_VALUE
 *   a cluster of more than 8 blocks is CUDA_ERROR_INVALID_CLUSTER_SIZE unless
 *     the function allows non-portable sizes (attribute 14), and more than 16
 *     always
 *   fake_calls: a letter per call, in order: S cuCtxSynchronize, R
 *     cuEventRecord, L a launch, W cuEventSynchronize, T cuEventElapsedTime
 *     (a test empties it first)
 *   fake_elapsed_calls[2]: calls of cuEventElapsedTime and of
 *     cuEventElapsedTime_v2, which this fake has unless built with
 *     FAKE_CUDA_OLD (a driver before 12.8)
 *   allocations above 1 GiB fail with CUDA_ERROR_OUT_OF_MEMORY
 *   FAKE_CUDA_CC=NN         compute capability as 10*major+minor (default 90)
 *   PTX with `.target sm_NNa` JITs only for CU_JIT_TARGET compute_NNa (as
 *     ptxas refuses it for plain sm_NN); with FAKE_CUDA_ARCH_FROM_CONTEXT=1
 *     the other way round: the context's target takes it and an explicit
 *     CU_JIT_TARGET is CUDA_ERROR_INVALID_VALUE (a driver without the option)
 *   PTX of `.version 99.x` is CUDA_ERROR_UNSUPPORTED_PTX_VERSION
 *   a function handle from before a reset is CUDA_ERROR_INVALID_HANDLE at launch
 *   fake_event_records: cuEventRecord calls
 *   fake_max_dynamic_smem: the last dynamic shared memory limit a kernel was given
 *   fake_ctx_refs: primary context retains minus releases; fake_resets: resets
 *   fake_set_sticky(r): makes every call fail with r from now on (r 0: clears it)
 *   fake_last_jit_target: the CU_JIT_TARGET of the last JIT (-1: none)
 *   fake_last_launch, fake_last_params: the shape and (FAKE_CUDA_RECORD_PARAMS=N: the first N)
 *     parameters of the last launch
 *   cuTensorMapEncodeTiled writes its arguments into the 128 bytes, as 16
 *     uint64: address, data type, rank, dims[5], strides[4], box[5] and element
 *     strides[5] (16 bits each, from word 12), interleave, swizzle, L2, OOB (word
 *     15, a byte each); a map that is not 128-byte aligned is CUDA_ERROR_INVALID_VALUE
 *     (the driver's documented minimum is 64; CUDA 13 declares CUtensorMap
 *     _Alignas(128), and the harness aligns it so)
 * Never part of the harness: built for the tests only. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
static int sticky_error; /* the error every call returns until a reset, 0: none */
typedef struct {
    char name[60];
    int generation;
    int max_dynamic_smem; /* -1: the default, 48 KiB minus the static part */
    int non_portable;     /* clusters of more than 8 blocks allowed */
} fake_fn; /* a function handle: the same one for the same name until a reset, as the driver's */
static fake_fn fname_store[64];
static int generation;   /* of the context: bumped by a reset, which invalidates function handles */
static int nfuncs;
int fake_last_jit_target = -1;
char fake_calls[256];
int fake_elapsed_calls[2];

static void log_call(char c)
{
    size_t n = strlen(fake_calls);
    if (n + 1 < sizeof fake_calls) {
        fake_calls[n] = c;
        fake_calls[n + 1] = 0;
    }
}

static int static_smem(void)
{
    const char *s = getenv("FAKE_CUDA_STATIC_SMEM");
    return s ? atoi(s) : 0;
}

static int dynamic_limit(const fake_fn *fn)
{
    return fn->max_dynamic_smem >= 0 ? fn->max_dynamic_smem : 49152 - static_smem();
}

static int fake_cc(void)
{
    const char *s = getenv("FAKE_CUDA_CC");
    return s ? atoi(s) : 90;
}

#define STICKY() do { if (sticky_error) return sticky_error; } while (0)

CUresult cuInit(unsigned f) { (void)f; return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int *n)
{
    const char *s = getenv("FAKE_CUDA_DEVICES");
    *n = s ? atoi(s) : 1;
    return 0;
}
CUresult cuDeviceGet(int *d, int i) { int n; cuDeviceGetCount(&n); if (i >= n) return 101; *d = i; return 0; }
CUresult cuDeviceGetName(char *name, int len, int d) { snprintf(name, (size_t)len, "Fake GPU %d", d); return 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, int d)
{
    (void)d;
    switch (attr) {
    case 75: *v = fake_cc() / 10; break; /* major */
    case 76: *v = fake_cc() % 10; break; /* minor */
    case 16: *v = 132; break;      /* SMs */
    case 13: *v = 1980000; break;  /* clock kHz */
    case 97: *v = 232448; break;   /* smem opt-in */
    case 95: *v = 1; break;        /* cooperative launches */
    case 8: *v = 49152; break;     /* smem per block without opting in */
    case 1: *v = 1024; break;
    default: *v = 0;
    }
    return 0;
}
CUresult cuDeviceTotalMem_v2(size_t *m, int d) { (void)d; *m = (size_t)141 << 30; return 0; }
int fake_ctx_refs; /* primary context retains minus releases */
CUresult cuDevicePrimaryCtxRetain(void **ctx, int d) { (void)d; *ctx = (void *)0x1; fake_ctx_refs++; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int d) { (void)d; fake_ctx_refs--; return 0; }
int fake_resets; /* cuDevicePrimaryCtxReset calls */
CUresult cuDevicePrimaryCtxReset_v2(int d) { (void)d; sticky_error = 0; generation++; fake_resets++; return 0; }
/* tests: an error from work the harness did not launch (0: clears it, without a reset) */
void fake_set_sticky(int r) { sticky_error = r; }
CUresult cuCtxSetCurrent(void *c) { (void)c; STICKY(); return 0; }
CUresult cuCtxSynchronize(void) { log_call('S'); STICKY(); return 0; }

CUresult cuModuleLoadDataEx(void **mod, const void *img, unsigned n, int *opts, void **vals)
{
    STICKY();
    const char *ptx = img, *bad = strstr(ptx, "FAKE_JIT_ERROR");
    char *info = NULL, *err = NULL;
    int target = -1;
    for (unsigned i = 0; i < n; i++) {
        if (opts[i] == 3) info = vals[i];
        if (opts[i] == 5) err = vals[i];
        if (opts[i] == 9) target = (int)(uintptr_t)vals[i];
    }
    fake_last_jit_target = target;
    const char *t = strstr(ptx, ".target sm_");
    int cc = t ? atoi(t + 11) : 0;
    int arch_specific = t && t[11 + (cc >= 100 ? 3 : 2)] == 'a';
    if (strstr(ptx, ".version 99.")) return 222;
    if (target >= 0 && getenv("FAKE_CUDA_ARCH_FROM_CONTEXT")) return 1;
    if (arch_specific && target != 0x10000 + cc && !getenv("FAKE_CUDA_ARCH_FROM_CONTEXT")) {
        if (err)
            sprintf(err, "ptxas fatal   : PTX with .target 'sm_%da' cannot be compiled for architecture 'sm_%d'", cc,
                    fake_cc());
        return 218;
    }
    if (bad) {
        int line = 1;
        for (const char *p = ptx; p < bad; p++) line += *p == '\n';
        if (err) sprintf(err, "ptxas application ptx input, line %d; error   : Unknown symbol 'FAKE_JIT_ERROR'", line);
        return 218;
    }
    if (info) strcpy(info, "ptxas info    : 0 bytes gmem");
    *mod = (void *)0x2;
    return 0;
}
CUresult cuModuleUnload(void *m) { (void)m; return 0; }
CUresult cuModuleGetFunction(void **f, void *m, const char *name)
{
    (void)m;
    STICKY();
    if (!strcmp(name, "missing")) return 500;
    for (int i = 0; i < nfuncs && i < 64; i++)
        if (!strcmp(fname_store[i].name, name) && fname_store[i].generation == generation) {
            *f = &fname_store[i];
            return 0;
        }
    fake_fn *fn = &fname_store[nfuncs++ % 64];
    snprintf(fn->name, sizeof fn->name, "%s", name);
    fn->generation = generation;
    fn->max_dynamic_smem = -1;
    fn->non_portable = 0;
    *f = fn;
    return 0;
}
CUresult cuFuncGetAttribute(int *v, int a, void *f)
{
    STICKY();
    *v = a == 4 ? 32 : a == 1 ? static_smem() : a == 8 ? dynamic_limit(f) : a == 14 ? ((fake_fn *)f)->non_portable : 0;
    return 0;
}
int fake_max_dynamic_smem; /* the last CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES set */
CUresult cuFuncSetAttribute(void *f, int a, int v)
{
    STICKY();
    fake_fn *fn = f;
    if (a == 8) {
        if (v < 0 || v + static_smem() > 232448) return 1;
        fake_max_dynamic_smem = fn->max_dynamic_smem = v;
    }
    if (a == 14) fn->non_portable = v;
    return 0;
}
CUresult cuMemAlloc_v2(uint64_t *p, size_t n)
{
    STICKY();
    if (n > (1u << 30)) return 2;
    void *h = calloc(1, n);
    if (!h) return 2;
    *p = (uint64_t)(uintptr_t)h;
    return 0;
}
CUresult cuMemFree_v2(uint64_t p) { free((void *)(uintptr_t)p); return 0; }
CUresult cuMemcpyHtoD_v2(uint64_t d, const void *s, size_t n) { STICKY(); memcpy((void *)(uintptr_t)d, s, n); return 0; }
CUresult cuMemcpyDtoH_v2(void *d, uint64_t s, size_t n) { STICKY(); memcpy(d, (void *)(uintptr_t)s, n); return 0; }
CUresult cuMemsetD8_v2(uint64_t d, unsigned char b, size_t n) { STICKY(); memset((void *)(uintptr_t)d, b, n); return 0; }
unsigned fake_last_launch[7]; /* grid x y z, block x y z, dynamic smem of the last launch */
void *fake_last_params[8];    /* its first parameter pointers (valid while the caller keeps what they point at) */
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void *stream, void **params, void **extra)
{
    (void)stream; (void)extra;
    log_call('L');
    STICKY();
    unsigned shape[7] = {gx, gy, gz, bx, by, bz, smem};
    memcpy(fake_last_launch, shape, sizeof shape);
    const char *rec = getenv("FAKE_CUDA_RECORD_PARAMS"); /* how many the caller has (the driver cannot know) */
    for (int i = 0, n = rec ? atoi(rec) : 0; i < 8; i++) fake_last_params[i] = params && i < n ? params[i] : NULL;
    const fake_fn *fn = f;
    if (fn->generation != generation) return 400; /* CUDA_ERROR_INVALID_HANDLE: from before a reset */
    if ((int)smem > dynamic_limit(fn)) return 1;
    if (!strcmp(fn->name, "fault")) return sticky_error = 700;
    if (!strncmp(fn->name, "fault_", 6) && atoi(fn->name + 6) > 0) return sticky_error = atoi(fn->name + 6);
    return 0;
}
static char events[2];
static int next_event;
typedef struct { int id; char pad[4]; union { char pad[64]; struct { unsigned x, y, z; } dim; } v; } fake_attr;
typedef struct { unsigned gx, gy, gz, bx, by, bz, smem; void *stream; fake_attr *attrs; unsigned nattrs; } fake_cfg;
unsigned fake_last_cluster[3]; /* what the last cuLaunchKernelEx asked for */
int fake_last_cooperative;     /* and whether it was cooperative */
/* the fake's occupancy: 2048 threads an SM, at most 32 blocks */
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int threads, size_t smem)
{
    (void)f; (void)smem;
    STICKY();
    *n = threads > 0 ? 2048 / threads : 0;
    if (*n > 32) *n = 32;
    return 0;
}
CUresult cuLaunchKernelEx(const fake_cfg *cfg, void *f, void **params, void **extra)
{
    fake_last_cooperative = 0;
    for (unsigned i = 0; i < cfg->nattrs; i++)
        if (cfg->attrs[i].id == 2) fake_last_cooperative = *(const int *)&cfg->attrs[i].v;
    for (unsigned i = 0; i < cfg->nattrs; i++)
        if (cfg->attrs[i].id == 4) {
            fake_last_cluster[0] = cfg->attrs[i].v.dim.x;
            fake_last_cluster[1] = cfg->attrs[i].v.dim.y;
            fake_last_cluster[2] = cfg->attrs[i].v.dim.z;
            if (cfg->gx % cfg->attrs[i].v.dim.x) return 1;
            unsigned blocks = cfg->attrs[i].v.dim.x * cfg->attrs[i].v.dim.y * cfg->attrs[i].v.dim.z;
            if (blocks > 16 || (blocks > 8 && !((fake_fn *)f)->non_portable)) return 912;
        }
    return cuLaunchKernel(f, cfg->gx, cfg->gy, cfg->gz, cfg->bx, cfg->by, cfg->bz, cfg->smem, cfg->stream, params, extra);
}
CUresult cuEventCreate(void **e, unsigned f) { (void)f; STICKY(); *e = &events[next_event++ % 2]; return 0; }
int fake_event_records; /* cuEventRecord calls */
CUresult cuEventRecord(void *e, void *s) { (void)e; (void)s; log_call('R'); STICKY(); fake_event_records++; return 0; }
CUresult cuEventSynchronize(void *e) { (void)e; log_call('W'); STICKY(); return 0; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b)
{
    (void)a; (void)b;
    log_call('T');
    fake_elapsed_calls[0]++;
    STICKY();
    *ms = 0.125f;
    return 0;
}
#ifndef FAKE_CUDA_OLD
CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b)
{
    (void)a; (void)b;
    log_call('T');
    fake_elapsed_calls[1]++;
    STICKY();
    *ms = 0.125f;
    return 0;
}
#endif
CUresult cuEventDestroy_v2(void *e) { (void)e; return 0; }
CUresult cuGetErrorName(CUresult r, const char **s)
{
    static const struct { int r; const char *name; } names[] = {
        {700, "CUDA_ERROR_ILLEGAL_ADDRESS"}, {218, "CUDA_ERROR_INVALID_PTX"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
        {500, "CUDA_ERROR_NOT_FOUND"}, {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"}, {1, "CUDA_ERROR_INVALID_VALUE"},
        {400, "CUDA_ERROR_INVALID_HANDLE"}, {702, "CUDA_ERROR_LAUNCH_TIMEOUT"}, {710, "CUDA_ERROR_ASSERT"},
        {714, "CUDA_ERROR_HARDWARE_STACK_ERROR"}, {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
        {716, "CUDA_ERROR_MISALIGNED_ADDRESS"}, {717, "CUDA_ERROR_INVALID_ADDRESS_SPACE"},
        {718, "CUDA_ERROR_INVALID_PC"}, {719, "CUDA_ERROR_LAUNCH_FAILED"}, {721, "CUDA_ERROR_TENSOR_MEMORY_LEAK"},
        {226, "CUDA_ERROR_CONTAINED"}, {911, "CUDA_ERROR_EXTERNAL_DEVICE"}, {912, "CUDA_ERROR_INVALID_CLUSTER_SIZE"},
    };
    *s = "CUDA_ERROR_UNKNOWN";
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (names[i].r == r) *s = names[i].name;
    return 0;
}
CUresult cuGetErrorString(CUresult r, const char **s)
{
    *s = r == 700 ? "an illegal memory access was encountered" : "fake error";
    return 0;
}

CUresult cuTensorMapEncodeTiled(void *map, int type, unsigned rank, void *addr, const unsigned long long *dims,
                                const unsigned long long *strides, const unsigned *box, const unsigned *es,
                                int interleave, int swizzle, int l2, int oob)
{
    STICKY();
    if ((uintptr_t)map % 128 || rank < 1 || rank > 5) return 1;
    uint64_t w[16] = {0};
    w[0] = (uint64_t)(uintptr_t)addr;
    w[1] = (uint64_t)type;
    w[2] = rank;
    for (unsigned i = 0; i < rank; i++) {
        w[3 + i] = dims[i];
        if (i + 1 < rank) w[8 + i] = strides[i];
        unsigned k = 16 * i; /* box then element strides, 16 bits each, from word 12 */
        w[12 + k / 64] |= (uint64_t)box[i] << (k % 64);
        w[12 + (k + 80) / 64] |= (uint64_t)es[i] << ((k + 80) % 64);
    }
    w[15] = (uint64_t)(interleave | swizzle << 8 | l2 << 16 | oob << 24);
    memcpy(map, w, sizeof w);
    return 0;
}
