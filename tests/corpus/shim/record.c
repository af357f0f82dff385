/* A recording stand-in for the CUDA runtime (linked with nvcc -cudart none) and the few driver
 * entry points the corpus programs call.  It runs a program's own host code unchanged: device
 * memory is host memory behind made-up addresses, kernels are not run; the first launch of each
 * kernel is written to $CORPUS_OUT as a `launch{...}` Lua call: shape, cluster, every parameter's
 * bytes, the pointers and tensor maps found in them (and in the device memory they reach), and
 * that memory's state.  $CORPUS_PTX names the PTX whose .entry lists give the parameter sizes.
 * Built only when recording (tests/corpus/record.sh); the tests read what it wrote. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_params.h"

#define FAKE_TOP 0x7d00ull /* device address = (FAKE_TOP + id) << 32 | offset */
#define MAX_ALLOCS 256
#define MAX_KERNELS 256
#define MAX_MAPS 256
#define SMALL_BYTES 65536 /* memory up to this size is searched for pointers and tensor maps */
#define MAX_RUNS 20000   /* memory of fewer runs of equal 32-bit words is written into the recording, */
#define FEW_RUNS 64      /* if there are at most this many or a quarter of its words (else it is the */
                         /* program's data, e.g. random inputs filled on the host: not stored) */

typedef struct { unsigned char *mem; size_t bytes; int written; } alloc;
typedef struct { const void *host_fun; const char *name; int recorded; } kernel;
typedef struct {
    CUtensorMapDataType type; unsigned rank; int alloc; uint64_t delta;
    uint64_t dims[5], strides[5]; unsigned box[5], estrides[5];
    int interleave, swizzle, l2, oob, used; /* used: named by the launch being written */
} tmap;

static alloc allocs[MAX_ALLOCS + 1]; /* id 0 unused */
static int nallocs;
static kernel kernels[MAX_KERNELS];
static int nkernels;
static tmap maps[MAX_MAPS + 1];
static int nmaps;
static const char tm_magic[8] = {'C', 'O', 'R', 'P', 'U', 'S', 'T', 'M'};

static void die(const char *what)
{
    fprintf(stderr, "corpus recorder: %s\n", what);
    exit(90);
}

/* The allocation id and offset of a made-up device address, 0 if it is not one. */
static int find_alloc(uint64_t a, uint64_t *off)
{
    uint64_t top = a >> 32;
    if (top <= FAKE_TOP || top > FAKE_TOP + (uint64_t)nallocs) return 0;
    int id = (int)(top - FAKE_TOP);
    if (!allocs[id].mem || (a & 0xffffffffull) > allocs[id].bytes) return 0;
    *off = a & 0xffffffffull;
    return id;
}

static unsigned char *resolve(const void *p, size_t n)
{
    uint64_t off;
    int id = find_alloc((uint64_t)(uintptr_t)p, &off);
    if (!id) return (unsigned char *)p;
    if (off + n > allocs[id].bytes) die("a copy runs past the end of a device allocation");
    return allocs[id].mem + off;
}

/* ---- memory ---- */
cudaError_t cudaMalloc(void **p, size_t n)
{
    if (nallocs == MAX_ALLOCS) die("more than 256 allocations");
    int id = ++nallocs;
    allocs[id].mem = calloc(n ? n : 1, 1);
    allocs[id].bytes = n;
    if (!allocs[id].mem) die("out of host memory");
    *p = (void *)(uintptr_t)((FAKE_TOP + (uint64_t)id) << 32);
    return cudaSuccess;
}
cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s) { (void)s; return cudaMalloc(p, n); }
cudaError_t cudaMallocHost(void **p, size_t n) { *p = malloc(n ? n : 1); return cudaSuccess; }
cudaError_t cudaHostAlloc(void **p, size_t n, unsigned f) { (void)f; return cudaMallocHost(p, n); }
cudaError_t cudaFreeHost(void *p) { free(p); return cudaSuccess; }
cudaError_t cudaFree(void *p) { (void)p; return cudaSuccess; } /* kept: a launch's record may name it */
cudaError_t cudaFreeAsync(void *p, cudaStream_t s) { (void)p; (void)s; return cudaSuccess; }

static void mark_written(const void *dst)
{
    uint64_t off;
    int id = find_alloc((uint64_t)(uintptr_t)dst, &off);
    if (id) allocs[id].written = 1;
}
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind k)
{
    (void)k;
    memmove(resolve(dst, n), resolve(src, n), n);
    mark_written(dst);
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s)
{
    (void)s;
    return cudaMemcpy(dst, src, n, k);
}
cudaError_t cudaMemset(void *dst, int v, size_t n)
{
    memset(resolve(dst, n), v, n);
    mark_written(dst);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *dst, int v, size_t n, cudaStream_t s) { (void)s; return cudaMemset(dst, v, n); }
/* the driver's memsets (CUTLASS fills its workspace through them): N elements of 1, 2 or 4 bytes */
static CUresult memset_elems(CUdeviceptr dst, uint32_t v, size_t n, size_t size)
{
    unsigned char *p = resolve((const void *)(uintptr_t)dst, n * size);
    for (size_t i = 0; i < n; i++) memcpy(p + i * size, &v, size); /* little-endian: the low bytes */
    mark_written((const void *)(uintptr_t)dst);
    return CUDA_SUCCESS;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) { (void)s; return memset_elems(d, v, n, 1); }
CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) { (void)s; return memset_elems(d, v, n, 2); }
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream s) { (void)s; return memset_elems(d, v, n, 4); }
cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *p)
{
    uint64_t off;
    memset(a, 0, sizeof *a);
    if (find_alloc((uint64_t)(uintptr_t)p, &off)) a->type = cudaMemoryTypeDevice, a->devicePointer = (void *)p;
    else a->type = cudaMemoryTypeUnregistered, a->hostPointer = (void *)p;
    return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t *f, size_t *t) { *f = *t = (size_t)80 << 30; return cudaSuccess; }

/* ---- registration and launch configuration ---- */
void **__cudaRegisterFatBinary(void *fat) { static void *h; h = fat; return &h; }
void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }
void __cudaUnregisterFatBinary(void **h) { (void)h; }
void __cudaRegisterFunction(void **h, const char *host_fun, char *dev_fun, const char *dev_name, int tl, uint3 *tid,
                            uint3 *bid, dim3 *bd, dim3 *gd, int *ws)
{
    (void)h; (void)dev_name; (void)tl; (void)tid; (void)bid; (void)bd; (void)gd; (void)ws;
    if (nkernels == MAX_KERNELS) die("more than 256 kernels");
    kernels[nkernels].host_fun = host_fun;
    kernels[nkernels].name = dev_fun;
    nkernels++;
}
void __cudaRegisterVar(void **h, char *hv, char *dv, const char *name, int ext, size_t size, int c, int g)
{
    (void)h; (void)hv; (void)dv; (void)name; (void)ext; (void)size; (void)c; (void)g;
}

static struct { dim3 grid, block; size_t smem; void *stream; } cfg_stack[16];
static int ncfg;
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t smem, void *stream)
{
    if (ncfg == 16) die("launch configurations nested too deep");
    cfg_stack[ncfg].grid = grid, cfg_stack[ncfg].block = block, cfg_stack[ncfg].smem = smem;
    cfg_stack[ncfg++].stream = stream;
    return 0;
}
cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *smem, void *stream)
{
    if (!ncfg) die("a launch without a configuration");
    ncfg--;
    *grid = cfg_stack[ncfg].grid, *block = cfg_stack[ncfg].block, *smem = cfg_stack[ncfg].smem;
    *(void **)stream = cfg_stack[ncfg].stream;
    return cudaSuccess;
}

/* ---- the recording ---- */
static FILE *out_file(void)
{
    static FILE *f;
    if (f) return f;
    const char *p = getenv("CORPUS_OUT");
    if (!p) die("CORPUS_OUT (the recording to write) is not set");
    f = fopen(p, "w");
    if (!f) die("cannot write $CORPUS_OUT");
    fprintf(f, "-- launches recorded by tests/corpus/shim (do not edit)\n");
    return f;
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static size_t word_runs(const alloc *a)
{
    size_t runs = 0;
    for (size_t w = 0; w < a->bytes / 4; w++)
        runs += !w || memcmp(a->mem + 4 * w, a->mem + 4 * (w - 1), 4);
    return runs;
}

static int few_runs(const alloc *a)
{
    size_t runs = word_runs(a);
    return runs <= MAX_RUNS && (runs <= FEW_RUNS || runs * 4 <= a->bytes / 4);
}

static void hex(FILE *f, const unsigned char *p, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) fprintf(f, "%02x", p[i]);
    fputc('"', f);
}

/* Pointers (8-byte aligned made-up addresses) and tensor maps (64-byte aligned magic) in bytes. */
static void scan(FILE *f, const char *where, int idx, const unsigned char *p, size_t n, int *reach)
{
    for (size_t o = 0; o + 8 <= n; o += 8) {
        uint64_t v, off;
        memcpy(&v, p + o, 8);
        int id = find_alloc(v, &off);
        if (id) {
            fprintf(f, "    {where = \"%s\", at = %d, off = %zu, ptr = %d, delta = %llu},\n", where, idx, o, id,
                    (unsigned long long)off);
            reach[id] = 1;
        }
        if (o % 64 == 0 && o + 128 <= n && !memcmp(p + o, tm_magic, 8)) {
            uint32_t m;
            memcpy(&m, p + o + 8, 4);
            fprintf(f, "    {where = \"%s\", at = %d, off = %zu, map = %u},\n", where, idx, o, m);
            if (m < 1 || m > (uint32_t)nmaps) die("a tensor map this recorder did not make");
            maps[m].used = 1;
            reach[maps[m].alloc] = 1;
        }
    }
}

static void list(FILE *f, const char *key, const uint64_t *v, unsigned n)
{
    fprintf(f, "%s = {", key);
    for (unsigned i = 0; i < n; i++) fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)v[i]);
    fprintf(f, "}, ");
}

static void record(const void *fun, dim3 grid, dim3 block, size_t smem, const unsigned *cluster, void **args)
{
    kernel *k = NULL;
    for (int i = 0; i < nkernels; i++)
        if (kernels[i].host_fun == fun) k = &kernels[i];
    if (!k) die("a launch of a kernel that was never registered");
    if (k->recorded) return;
    k->recorded = 1;
    ptx_entry e;
    const char *ptx = getenv("CORPUS_PTX");
    if (!ptx) die("CORPUS_PTX (the program's PTX, for parameter sizes) is not set");
    if (ptx_entry_params(ptx, k->name, &e)) {
        fprintf(stderr, "corpus recorder: %s: no .entry %s\n", ptx, k->name);
        exit(90);
    }
    FILE *f = out_file();
    int reach[MAX_ALLOCS + 1] = {0};
    for (int m = 1; m <= nmaps; m++) maps[m].used = 0;
    fprintf(f, "launch {\n  kernel = \"%s\",\n  grid = {%u, %u, %u}, block = {%u, %u, %u}, smem = %zu,\n", k->name,
            grid.x, grid.y, grid.z, block.x, block.y, block.z, smem);
    if (cluster) fprintf(f, "  cluster = {%u, %u, %u},\n", cluster[0], cluster[1], cluster[2]);
    fprintf(f, "  params = {\n");
    for (int i = 0; i < e.n; i++) {
        fprintf(f, "    ");
        hex(f, args[i], e.size[i]);
        fprintf(f, ",\n");
    }
    fprintf(f, "  },\n  refs = {\n");
    for (int i = 0; i < e.n; i++) scan(f, "param", i + 1, args[i], e.size[i], reach);
    /* memory reached from memory: follow until nothing new */
    int done[MAX_ALLOCS + 1] = {0}, more = 1;
    while (more) {
        more = 0;
        for (int id = 1; id <= nallocs; id++)
            if (reach[id] && !done[id]) {
                done[id] = more = 1;
                if (allocs[id].bytes <= SMALL_BYTES) scan(f, "alloc", id, allocs[id].mem, allocs[id].bytes, reach);
            }
    }
    fprintf(f, "  },\n  allocs = {\n");
    for (int id = 1; id <= nallocs; id++) {
        if (!reach[id]) continue;
        alloc *a = &allocs[id];
        size_t nz = 0;
        for (size_t i = 0; i < a->bytes; i++) nz += a->mem[i] != 0;
        fprintf(f, "    [%d] = {bytes = %zu, fnv = \"%016llx\", ", id, a->bytes, (unsigned long long)fnv(a->mem, a->bytes));
        if (!a->written) fprintf(f, "init = \"none\"},\n");
        else if (!nz) fprintf(f, "init = \"zeros\"},\n");
        else if (a->bytes % 4 || !few_runs(a)) fprintf(f, "init = \"data\"},\n");
        else { /* 32-bit words, runs as {value, count} */
            fprintf(f, "init = \"words\", words = {");
            size_t nw = a->bytes / 4;
            for (size_t w = 0; w < nw;) {
                uint32_t v, u;
                memcpy(&v, a->mem + 4 * w, 4);
                size_t r = 1;
                while (w + r < nw && (memcpy(&u, a->mem + 4 * (w + r), 4), u == v)) r++;
                fprintf(f, "%u,%zu,", v, r);
                w += r;
            }
            fprintf(f, "}},\n");
        }
    }
    fprintf(f, "  },\n  maps = {\n");
    for (int m = 1; m <= nmaps; m++) {
        tmap *t = &maps[m];
        if (!t->used) continue;
        fprintf(f, "    [%d] = {type = %d, rank = %u, alloc = %d, delta = %llu, ", m, (int)t->type, t->rank, t->alloc,
                (unsigned long long)t->delta);
        list(f, "dims", t->dims, t->rank);
        list(f, "strides", t->strides, t->rank - 1);
        uint64_t b[5], s[5];
        for (unsigned i = 0; i < t->rank; i++) b[i] = t->box[i], s[i] = t->estrides[i];
        list(f, "box", b, t->rank);
        list(f, "element_strides", s, t->rank);
        fprintf(f, "interleave = %d, swizzle = %d, l2 = %d, oob = %d},\n", t->interleave, t->swizzle, t->l2, t->oob);
    }
    fprintf(f, "  },\n}\n");
    fflush(f);
}

cudaError_t cudaLaunchKernel(const void *fun, dim3 grid, dim3 block, void **args, size_t smem, cudaStream_t s)
{
    (void)s;
    record(fun, grid, block, smem, NULL, args);
    return cudaSuccess;
}

/* CUDA 13's <<<>>> stubs: the kernel handle is the host function itself. */
cudaError_t __cudaGetKernel(cudaKernel_t *k, const void *fun)
{
    *k = (cudaKernel_t)fun;
    return cudaSuccess;
}
cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 grid, dim3 block, void **args, size_t smem, cudaStream_t s)
{
    return cudaLaunchKernel((const void *)k, grid, block, args, smem, s);
}
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 grid, dim3 block, void **args, size_t smem, cudaStream_t s)
{
    return cudaLaunchKernel((const void *)k, grid, block, args, smem, s);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *c, const void *fun, void **args)
{
    unsigned cl[3] = {1, 1, 1};
    int has = 0;
    for (unsigned i = 0; i < c->numAttrs; i++)
        if (c->attrs[i].id == cudaLaunchAttributeClusterDimension) {
            cl[0] = c->attrs[i].val.clusterDim.x, cl[1] = c->attrs[i].val.clusterDim.y;
            cl[2] = c->attrs[i].val.clusterDim.z, has = 1;
        }
    record(fun, c->gridDim, c->blockDim, c->dynamicSmemBytes, has ? cl : NULL, args);
    return cudaSuccess;
}

/* ---- tensor maps (the driver's encoder, reached directly or through an entry point) ---- */
CUresult cuTensorMapEncodeTiled(CUtensorMap *m, CUtensorMapDataType type, cuuint32_t rank, void *addr,
                                const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                                const cuuint32_t *es, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                                CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    if (nmaps == MAX_MAPS) die("more than 256 tensor maps");
    if (rank < 1 || rank > 5) return CUDA_ERROR_INVALID_VALUE;
    tmap *t = &maps[++nmaps];
    t->type = type, t->rank = rank, t->interleave = il, t->swizzle = sw, t->l2 = l2, t->oob = oob;
    t->alloc = find_alloc((uint64_t)(uintptr_t)addr, &t->delta);
    if (!t->alloc) die("a tensor map over memory that is not a device allocation");
    for (unsigned i = 0; i < rank; i++) {
        t->dims[i] = dims[i], t->box[i] = box[i], t->estrides[i] = es[i];
        if (i + 1 < rank) t->strides[i] = strides[i];
    }
    memset(m, 0, sizeof *m);
    memcpy(m, tm_magic, 8);
    uint32_t idx = (uint32_t)nmaps;
    memcpy((char *)m + 8, &idx, 4);
    return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult e, const char **s)
{
    *s = e ? "error (corpus recording stand-in)" : "no error";
    return CUDA_SUCCESS;
}

static void *entry_point(const char *sym)
{
    if (!strcmp(sym, "cuTensorMapEncodeTiled")) return (void *)cuTensorMapEncodeTiled;
    fprintf(stderr, "corpus recorder: no stand-in for driver entry point %s\n", sym);
    return NULL;
}
cudaError_t cudaGetDriverEntryPoint(const char *sym, void **fp, unsigned long long fl,
                                    enum cudaDriverEntryPointQueryResult *st)
{
    (void)fl;
    *fp = entry_point(sym);
    if (st) *st = *fp ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
    return *fp ? cudaSuccess : cudaErrorSymbolNotFound;
}
cudaError_t cudaGetDriverEntryPointByVersion(const char *sym, void **fp, unsigned v, unsigned long long fl,
                                             enum cudaDriverEntryPointQueryResult *st)
{
    (void)v, (void)fl;
    *fp = entry_point(sym);
    if (st) *st = *fp ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
    return *fp ? cudaSuccess : cudaErrorSymbolNotFound;
}

/* ---- the device: an H100 SXM as the programs query it ---- */
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d)
{
    (void)d;
    memset(p, 0, sizeof *p);
    strcpy(p->name, "NVIDIA H100 80GB HBM3 (corpus recording stand-in)");
    p->major = 9, p->minor = 0, p->multiProcessorCount = 132, p->warpSize = 32;
    p->maxThreadsPerBlock = 1024, p->maxThreadsPerMultiProcessor = 2048, p->regsPerBlock = 65536;
    p->regsPerMultiprocessor = 65536, p->sharedMemPerBlock = 49152, p->sharedMemPerBlockOptin = 232448;
    p->sharedMemPerMultiprocessor = 233472, p->totalGlobalMem = (size_t)80 << 30, p->l2CacheSize = 50 << 20;
    p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024, p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 0x7fffffff, p->maxGridSize[1] = p->maxGridSize[2] = 65535;
    p->memoryBusWidth = 5120, p->maxBlocksPerMultiProcessor = 32;
    p->totalConstMem = 65536, p->concurrentKernels = 1, p->cooperativeLaunch = 1;
    return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *p, int d) { return cudaGetDeviceProperties(p, d); }
cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int d)
{
    struct cudaDeviceProp p;
    cudaGetDeviceProperties(&p, d);
    switch (a) {
    case cudaDevAttrMultiProcessorCount: *v = p.multiProcessorCount; break;
    case cudaDevAttrComputeCapabilityMajor: *v = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *v = 0; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = (int)p.sharedMemPerBlockOptin; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *v = (int)p.sharedMemPerMultiprocessor; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *v = (int)p.sharedMemPerBlock; break;
    case cudaDevAttrMaxThreadsPerBlock: *v = 1024; break;
    case cudaDevAttrWarpSize: *v = 32; break;
    case cudaDevAttrL2CacheSize: *v = p.l2CacheSize; break;
    case cudaDevAttrClockRate: *v = 1980000; break;
    case cudaDevAttrMaxRegistersPerBlock: *v = 65536; break;
    default: fprintf(stderr, "corpus recorder: device attribute %d answered 0\n", (int)a); *v = 0;
    }
    return cudaSuccess;
}
cudaError_t cudaGetDevice(int *d) { *d = 0; return cudaSuccess; }
cudaError_t cudaSetDevice(int d) { (void)d; return cudaSuccess; }
cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return cudaSuccess; }
cudaError_t cudaDriverGetVersion(int *v) { *v = 13000; return cudaSuccess; }
cudaError_t cudaRuntimeGetVersion(int *v) { *v = 13000; return cudaSuccess; }
cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
cudaError_t cudaDeviceReset(void) { return cudaSuccess; }
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
cudaError_t cudaPeekAtLastError(void) { return cudaSuccess; }
const char *cudaGetErrorString(cudaError_t e) { return e ? "error (corpus recording stand-in)" : "no error"; }
const char *cudaGetErrorName(cudaError_t e) { return e ? "cudaError" : "cudaSuccess"; }
cudaError_t cudaFuncSetAttribute(const void *f, enum cudaFuncAttribute a, int v) { (void)f; (void)a; (void)v; return cudaSuccess; }
cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *a, const void *f)
{
    (void)f;
    memset(a, 0, sizeof *a);
    a->maxThreadsPerBlock = 1024, a->numRegs = 168, a->ptxVersion = 90, a->binaryVersion = 90;
    a->maxDynamicSharedSizeBytes = 232448;
    return cudaSuccess;
}
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *f, int b, size_t s)
{
    (void)f; (void)b; (void)s;
    *n = 1;
    return cudaSuccess;
}
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *f, int b, size_t s, unsigned fl)
{
    (void)fl;
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, f, b, s);
}
cudaError_t cudaOccupancyMaxActiveClusters(int *n, const void *f, const cudaLaunchConfig_t *c)
{
    (void)f;
    unsigned cs = 1;
    for (unsigned i = 0; i < c->numAttrs; i++)
        if (c->attrs[i].id == cudaLaunchAttributeClusterDimension)
            cs = c->attrs[i].val.clusterDim.x * c->attrs[i].val.clusterDim.y * c->attrs[i].val.clusterDim.z;
    *n = 132 / (int)cs;
    return cudaSuccess;
}

/* ---- streams and events: nothing runs, so everything is already done ---- */
cudaError_t cudaStreamCreate(cudaStream_t *s) { *s = NULL; return cudaSuccess; }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned f) { (void)f; *s = NULL; return cudaSuccess; }
cudaError_t cudaStreamDestroy(cudaStream_t s) { (void)s; return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t s) { (void)s; return cudaSuccess; }
cudaError_t cudaEventCreate(cudaEvent_t *e) { static int ev; *e = (cudaEvent_t)&ev; return cudaSuccess; }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned f) { (void)f; return cudaEventCreate(e); }
cudaError_t cudaEventDestroy(cudaEvent_t e) { (void)e; return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { (void)e; (void)s; return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t e) { (void)e; return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) { (void)a; (void)b; *ms = 1; return cudaSuccess; }
