/* device.c - the one device: an H200's properties and attributes (SXM, as
 * CUDA 13 reports them), with emu's SM count (exec --sms) and its device
 * model's clock (MGPU_CUDART_MODEL; emu_model.c); version queries; kernels' attributes (cudaFuncSetAttribute,
 * cudaFuncGetAttributes, registers from ptxas) and the occupancy calculator
 * emu's residency uses (emu_occupancy.h). */
#include "cudart/cudart.h"

#include "emu/emu_occupancy.h"
#include "launch/launch_shape.h"

#include <stdio.h>
#include <string.h>

/* emu's clock: its device model's SM clock (emu_model.c) */
static int clock_khz(void)
{
    cr_state *s = cr_get();
    return (int)((s ? mh_emu_model_of(s->emu)->clock_ghz : mh_emu_model_find(NULL)->clock_ghz) * 1e6 + 0.5);
}
#define CR_MEMORY ((size_t)143771 << 20) /* an H200's 141 GB */

void cr_device_prop_fill(cr_device_prop *p)
{
    cr_state *s = cr_get();
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "NVIDIA H200 (mgpu emu)");
    memcpy(p->uuid.bytes, "mgpu-emu-device", 16);
    p->totalGlobalMem = CR_MEMORY;
    p->sharedMemPerBlock = 48 * 1024;
    p->regsPerBlock = 65536;
    p->warpSize = 32;
    p->memPitch = 2147483647;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024, p->maxThreadsDim[1] = 1024, p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647, p->maxGridSize[1] = 65535, p->maxGridSize[2] = 65535;
    p->totalConstMem = 65536;
    p->major = 9;
    p->minor = 0;
    p->textureAlignment = 512;
    p->texturePitchAlignment = 32;
    p->multiProcessorCount = (int)(s ? mh_emu_num_sms(s->emu) : MH_EMU_DEFAULT_SMS);
    p->canMapHostMemory = 1;
    p->surfaceAlignment = 512;
    p->concurrentKernels = 1;
    p->ECCEnabled = 1;
    p->asyncEngineCount = 3;
    p->unifiedAddressing = 1;
    p->memoryBusWidth = 6144;
    p->l2CacheSize = 50 << 20;
    p->persistingL2CacheMaxSize = 82 << 20;
    p->maxThreadsPerMultiProcessor = 2048;
    p->streamPrioritiesSupported = 1;
    p->globalL1CacheSupported = 1;
    p->localL1CacheSupported = 1;
    p->sharedMemPerMultiprocessor = MH_SM90_SMEM_PER_SM;
    p->regsPerMultiprocessor = 65536;
    p->managedMemory = 1;
    p->concurrentManagedAccess = 1;
    p->computePreemptionSupported = 1;
    p->cooperativeLaunch = 1;
    p->sharedMemPerBlockOptin = MH_SMEM_PER_BLOCK_SM90;
    p->maxBlocksPerMultiProcessor = MH_SM90_MAX_BLOCKS;
    p->accessPolicyMaxWindowSize = 134213632;
    p->reservedSharedMemPerBlock = MH_SM90_SMEM_RESERVED;
    p->hostRegisterSupported = 1;
    p->memoryPoolsSupported = 0;
    p->clusterLaunch = 1;
    p->deviceNumaId = -1;
    p->hostNumaId = -1;
}

/* The attribute's value from the properties (0: an attribute the device does not have). */
static int attribute(int a, int *v)
{
    cr_device_prop p;
    cr_device_prop_fill(&p);
    switch (a) {
    case 1: *v = p.maxThreadsPerBlock; break;
    case 2: case 3: case 4: *v = p.maxThreadsDim[a - 2]; break;
    case 5: case 6: case 7: *v = p.maxGridSize[a - 5]; break;
    case 8: *v = (int)p.sharedMemPerBlock; break;
    case 9: *v = (int)p.totalConstMem; break;
    case 10: *v = 32; break;
    case 11: *v = (int)p.memPitch; break;
    case 12: *v = p.regsPerBlock; break;
    case 13: *v = clock_khz(); break; /* emu's virtual clock */
    case 14: *v = (int)p.textureAlignment; break;
    case 15: *v = 1; break;
    case 16: *v = p.multiProcessorCount; break;
    case 17: case 18: *v = 0; break;
    case 19: *v = 1; break;
    case 20: *v = 0; break; /* cudaComputeModeDefault */
    case 30: *v = (int)p.surfaceAlignment; break;
    case 31: *v = 1; break;
    case 32: *v = 1; break;
    case 33: case 34: case 35: case 50: *v = 0; break;
    case 36: *v = 3201000; break; /* memory clock, kHz */
    case 37: *v = p.memoryBusWidth; break;
    case 38: *v = p.l2CacheSize; break;
    case 39: *v = p.maxThreadsPerMultiProcessor; break;
    case 40: *v = p.asyncEngineCount; break;
    case 41: *v = 1; break;
    case 75: *v = 9; break;
    case 76: *v = 0; break;
    case 78: case 79: case 80: *v = 1; break;
    case 81: *v = (int)p.sharedMemPerMultiprocessor; break;
    case 82: *v = p.regsPerMultiprocessor; break;
    case 83: *v = 1; break;
    case 84: case 85: case 86: *v = 0; break;
    case 87: *v = 2; break;
    case 88: *v = 0; break;
    case 89: *v = 1; break;
    case 90: *v = 1; break;
    case 91: *v = 0; break;
    case 95: *v = 1; break;
    case 97: *v = (int)p.sharedMemPerBlockOptin; break;
    case 98: *v = 0; break;
    case 99: *v = 1; break;
    case 100: case 101: *v = 0; break;
    case 106: *v = p.maxBlocksPerMultiProcessor; break;
    case 108: *v = p.persistingL2CacheMaxSize; break;
    case 109: *v = p.accessPolicyMaxWindowSize; break;
    case 111: *v = (int)p.reservedSharedMemPerBlock; break;
    case 112: case 113: case 114: *v = 0; break;
    case 115: *v = 0; break;
    case 116: case 117: case 118: case 119: *v = 0; break;
    case 120: *v = 1; break;
    case 121: *v = 0; break;
    case 125: *v = 0; break;
    case 126: *v = 4; break;
    case 130: *v = 0; break;
    case 131: case 134: *v = -1; break;
    case 133: *v = 0; break;
    default: return 0;
    }
    return 1;
}

static cudaError_t get_attribute(int *v, int a, int dev)
{
    if (!v) return cr_set(cudaErrorInvalidValue, "cudaDeviceGetAttribute: value is NULL");
    if (dev != 0) return cr_set(cudaErrorInvalidDevice, "cudaDeviceGetAttribute: device %d (emu is device 0)", dev);
    if (!attribute(a, v))
        return cr_set(cudaErrorInvalidValue, "cudaDeviceGetAttribute: attribute %d is not one the stand-in knows (or "
                      "a texture/surface limit)", a);
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaDeviceGetAttribute(int *v, int a, int dev);
cudaError_t cudaDeviceGetAttribute(int *v, int a, int dev) { CR_API(get_attribute(v, a, dev)); }

static cudaError_t get_properties(cr_device_prop *p, int dev)
{
    if (!p) return cr_set(cudaErrorInvalidValue, "cudaGetDeviceProperties: prop is NULL");
    if (dev != 0) return cr_set(cudaErrorInvalidDevice, "cudaGetDeviceProperties: device %d (emu is device 0)", dev);
    cr_device_prop_fill(p);
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaGetDeviceProperties(cr_device_prop *p, int dev);
cudaError_t cudaGetDeviceProperties(cr_device_prop *p, int dev) { CR_API(get_properties(p, dev)); }

static cudaError_t out_int(int *p, int v, const char *call)
{
    if (!p) return cr_set(cudaErrorInvalidValue, "%s: the pointer is NULL", call);
    *p = v;
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaGetDeviceCount(int *n);
cudaError_t cudaGetDeviceCount(int *n) { CR_API(out_int(n, 1, "cudaGetDeviceCount")); }
CR_EXPORT cudaError_t cudaGetDevice(int *d);
cudaError_t cudaGetDevice(int *d) { CR_API(out_int(d, 0, "cudaGetDevice")); }
static cudaError_t set_device(int d)
{
    return d == 0 ? cudaSuccess : cr_set(cudaErrorInvalidDevice, "cudaSetDevice(%d): emu is the one device, 0", d);
}
CR_EXPORT cudaError_t cudaSetDevice(int d);
cudaError_t cudaSetDevice(int d) { CR_API(set_device(d)); }
CR_EXPORT cudaError_t cudaInitDevice(int d, unsigned df, unsigned f);
cudaError_t cudaInitDevice(int d, unsigned df, unsigned f)
{
    (void)df, (void)f;
    CR_API(set_device(d));
}
CR_EXPORT cudaError_t cudaChooseDevice(int *d, const void *prop);
cudaError_t cudaChooseDevice(int *d, const void *prop)
{
    (void)prop;
    CR_API(out_int(d, 0, "cudaChooseDevice"));
}
CR_EXPORT cudaError_t cudaSetDeviceFlags(unsigned f);
cudaError_t cudaSetDeviceFlags(unsigned f) { (void)f; CR_API(cudaSuccess); }
CR_EXPORT cudaError_t cudaGetDeviceFlags(unsigned *f);
cudaError_t cudaGetDeviceFlags(unsigned *f) { CR_API(out_int((int *)f, 0, "cudaGetDeviceFlags")); }
CR_EXPORT cudaError_t cudaDeviceSetCacheConfig(int c);
cudaError_t cudaDeviceSetCacheConfig(int c) { (void)c; CR_API(cudaSuccess); }
CR_EXPORT cudaError_t cudaDeviceGetCacheConfig(int *c);
cudaError_t cudaDeviceGetCacheConfig(int *c) { CR_API(out_int(c, 0, "cudaDeviceGetCacheConfig")); }
CR_EXPORT cudaError_t cudaDeviceSetLimit(int limit, size_t v);
cudaError_t cudaDeviceSetLimit(int limit, size_t v) { (void)limit, (void)v; CR_API(cudaSuccess); }
static cudaError_t get_limit(size_t *v, int limit)
{
    static const size_t vals[] = {1024, 1 << 20, 8 << 20, 2, 2048, 0, 0};
    if (!v || limit < 0 || limit > 6) return cr_set(cudaErrorInvalidValue, "cudaDeviceGetLimit: limit %d", limit);
    *v = vals[limit];
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaDeviceGetLimit(size_t *v, int limit);
cudaError_t cudaDeviceGetLimit(size_t *v, int limit) { CR_API(get_limit(v, limit)); }
static cudaError_t priority_range(int *lo, int *hi)
{
    if (lo) *lo = 0;
    if (hi) *hi = -5;
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int *lo, int *hi);
cudaError_t cudaDeviceGetStreamPriorityRange(int *lo, int *hi) { CR_API(priority_range(lo, hi)); }
CR_EXPORT cudaError_t cudaDriverGetVersion(int *v);
cudaError_t cudaDriverGetVersion(int *v) { CR_API(out_int(v, 13000, "cudaDriverGetVersion")); }
CR_EXPORT cudaError_t cudaRuntimeGetVersion(int *v);
cudaError_t cudaRuntimeGetVersion(int *v) { CR_API(out_int(v, 13000, "cudaRuntimeGetVersion")); }
/* A reset frees nothing here (the program's memory stays valid); it clears a sticky error. */
CR_EXPORT cudaError_t cudaDeviceReset(void);
cudaError_t cudaDeviceReset(void)
{
    cr_lock();
    cr_state *s = cr_get();
    if (s) s->sticky = cudaSuccess;
    cr_unlock();
    return s ? cudaSuccess : cudaErrorInitializationError;
}

/* ---- kernels' attributes and occupancy ---------------------------------------- */

static cudaError_t func_of(const void *func, const char *call, cr_kernel **k)
{
    *k = cr_kernel_of(func);
    if (!*k) return cr_set(cudaErrorInvalidDeviceFunction, "%s: %p is not a registered kernel", call, func);
    return cr_kernel_resolve(*k, call) ? cr_get()->last : cudaSuccess;
}

static cudaError_t func_set(const void *func, int attr, int v)
{
    cr_kernel *k;
    cudaError_t err = func_of(func, "cudaFuncSetAttribute", &k);
    if (err) return err;
    switch (attr) {
    case cudaFuncAttributeMaxDynamicSharedMemorySize:
        if (v < 0 || (uint64_t)v + k->f->shared_bytes > MH_SMEM_PER_BLOCK_SM90)
            return cr_set(cudaErrorInvalidValue, "cudaFuncSetAttribute(%s, MaxDynamicSharedMemorySize, %d): with its "
                          "%llu static bytes more than the %u a block may have", k->short_name, v,
                          (unsigned long long)k->f->shared_bytes, MH_SMEM_PER_BLOCK_SM90);
        k->max_dyn_smem = v;
        return cudaSuccess;
    case cudaFuncAttributePreferredSharedMemoryCarveout:
        if (v < -1 || v > 100) return cr_set(cudaErrorInvalidValue, "cudaFuncSetAttribute: carveout %d", v);
        k->carveout = v;
        return cudaSuccess;
    case cudaFuncAttributeNonPortableClusterSizeAllowed: k->non_portable_cluster = v; return cudaSuccess;
    case cudaFuncAttributeClusterSchedulingPolicyPreference: return cudaSuccess;
    case cudaFuncAttributeRequiredClusterWidth: case cudaFuncAttributeRequiredClusterHeight:
    case cudaFuncAttributeRequiredClusterDepth:
        return cr_set(cudaErrorNotSupported, "cudaFuncSetAttribute(%s): a required cluster size set at run time is "
                      "not supported by the stand-in (use __cluster_dims__ or cudaLaunchKernelEx)", k->short_name);
    default:
        return cr_set(cudaErrorInvalidValue, "cudaFuncSetAttribute(%s): attribute %d", k->short_name, attr);
    }
}
CR_EXPORT cudaError_t cudaFuncSetAttribute(const void *func, int attr, int v);
cudaError_t cudaFuncSetAttribute(const void *func, int attr, int v) { CR_API(func_set(func, attr, v)); }
CR_EXPORT cudaError_t cudaFuncSetCacheConfig(const void *func, int c);
cudaError_t cudaFuncSetCacheConfig(const void *func, int c)
{
    (void)c;
    cr_kernel *k;
    CR_API(func_of(func, "cudaFuncSetCacheConfig", &k));
}

static cudaError_t func_get(cr_func_attributes *a, const void *func)
{
    cr_kernel *k;
    if (!a) return cr_set(cudaErrorInvalidValue, "cudaFuncGetAttributes: attr is NULL");
    cudaError_t err = func_of(func, "cudaFuncGetAttributes", &k);
    if (err) return err;
    memset(a, 0, sizeof *a);
    const mh_ptx_func *f = k->f;
    const mh_ptxas_kernel *pk = cr_kernel_ptxas(k);
    a->sharedSizeBytes = pk && pk->smem >= 0 ? (size_t)pk->smem : f->shared_bytes; /* ptxas says what a GPU allocates */
    a->localSizeBytes = pk && pk->stack > 0 ? (size_t)pk->stack : f->local_bytes;
    a->maxThreadsPerBlock = f->maxntid[0] ? (int)(f->maxntid[0] * (f->maxntid[1] ? f->maxntid[1] : 1) *
                                                  (f->maxntid[2] ? f->maxntid[2] : 1)) : 1024;
    a->numRegs = pk ? pk->regs : 0;
    a->ptxVersion = 90;
    a->binaryVersion = 90;
    a->maxDynamicSharedSizeBytes = k->max_dyn_smem;
    a->preferredShmemCarveout = k->carveout ? k->carveout : -1;
    a->clusterDimMustBeSet = f->explicitcluster;
    a->requiredClusterWidth = (int)f->reqcluster[0];
    a->requiredClusterHeight = (int)f->reqcluster[1];
    a->requiredClusterDepth = (int)f->reqcluster[2];
    a->nonPortableClusterSizeAllowed = k->non_portable_cluster;
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaFuncGetAttributes(cr_func_attributes *a, const void *func);
cudaError_t cudaFuncGetAttributes(cr_func_attributes *a, const void *func) { CR_API(func_get(a, func)); }

int cr_occupancy(cr_kernel *k, int block, size_t smem, int *blocks)
{
    const mh_ptxas_kernel *pk = cr_kernel_ptxas(k);
    mh_occupancy o;
    mh_occupancy_sm90(pk ? pk->regs : 0, k->f->shared_bytes + smem, (uint32_t)block, &o);
    *blocks = o.blocks_per_sm;
    return 0;
}

static cudaError_t occupancy(int *n, const void *func, int block, size_t smem)
{
    cr_kernel *k;
    if (!n) return cr_set(cudaErrorInvalidValue, "cudaOccupancyMaxActiveBlocksPerMultiprocessor: numBlocks is NULL");
    cudaError_t err = func_of(func, "cudaOccupancyMaxActiveBlocksPerMultiprocessor", &k);
    if (err) return err;
    if (block <= 0 || block > 1024)
        return cr_set(cudaErrorInvalidValue, "cudaOccupancyMaxActiveBlocksPerMultiprocessor: block size %d", block);
    cr_occupancy(k, block, smem, n);
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *func, int block, size_t smem);
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *func, int block, size_t smem)
{
    CR_API(occupancy(n, func, block, smem));
}
CR_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *func, int block,
                                                                            size_t smem, unsigned flags);
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *func, int block, size_t smem,
                                                                  unsigned flags)
{
    (void)flags;
    CR_API(occupancy(n, func, block, smem));
}
static cudaError_t dyn_smem(size_t *out, const void *func, int blocks, int block)
{
    cr_kernel *k;
    cudaError_t err = func_of(func, "cudaOccupancyAvailableDynamicSMemPerBlock", &k);
    if (err) return err;
    if (!out || blocks <= 0 || block <= 0) return cr_set(cudaErrorInvalidValue, "cudaOccupancyAvailableDynamicSMemPerBlock");
    size_t per = MH_SM90_SMEM_PER_SM / (size_t)blocks;
    per = per > MH_SM90_SMEM_RESERVED ? (per - MH_SM90_SMEM_RESERVED) / 128 * 128 : 0;
    if (per > MH_SMEM_PER_BLOCK_SM90) per = MH_SMEM_PER_BLOCK_SM90;
    *out = per > k->f->shared_bytes ? per - k->f->shared_bytes : 0;
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *out, const void *func, int blocks, int block);
cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *out, const void *func, int blocks, int block)
{
    CR_API(dyn_smem(out, func, blocks, block));
}

CR_EXPORT cudaError_t cudaDeviceCanAccessPeer(int *can, int dev, int peer);
cudaError_t cudaDeviceCanAccessPeer(int *can, int dev, int peer)
{
    (void)dev, (void)peer;
    CR_API(out_int(can, 0, "cudaDeviceCanAccessPeer"));
}
static cudaError_t func_name(const char **name, const void *func)
{
    cr_kernel *k = cr_kernel_of(func);
    if (!name) return cr_set(cudaErrorInvalidValue, "cudaFuncGetName: name is NULL");
    if (!k) return cr_set(cudaErrorInvalidDeviceFunction, "cudaFuncGetName: %p is not a registered kernel", func);
    *name = k->name;
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaFuncGetName(const char **name, const void *func);
cudaError_t cudaFuncGetName(const char **name, const void *func) { CR_API(func_name(name, func)); }
static cudaError_t pci_bus_id(char *id, int len, int dev)
{
    if (!id || len <= 0 || dev != 0) return cr_set(cudaErrorInvalidValue, "cudaDeviceGetPCIBusId");
    snprintf(id, (size_t)len, "0000:00:00.0");
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaDeviceGetPCIBusId(char *id, int len, int dev);
cudaError_t cudaDeviceGetPCIBusId(char *id, int len, int dev) { CR_API(pci_bus_id(id, len, dev)); }

/* The profiler's start and stop marks (cuda_profiler_api.h): nothing to mark on emu. */
CR_EXPORT cudaError_t cudaProfilerStart(void);
cudaError_t cudaProfilerStart(void) { CR_API(cudaSuccess); }
CR_EXPORT cudaError_t cudaProfilerStop(void);
cudaError_t cudaProfilerStop(void) { CR_API(cudaSuccess); }

/* cudaCreateChannelDesc: a texture or surface format as a struct (channel_descriptor.h's templates
 * call it); it touches no device state, so it is served even though arrays and textures are not
 * (cudaMallocArray, cudaCreateTextureObject: cudaErrorNotSupported with their names). */
struct cr_channel_desc { int x, y, z, w; int f; };
CR_EXPORT struct cr_channel_desc cudaCreateChannelDesc(int x, int y, int z, int w, int f);
struct cr_channel_desc cudaCreateChannelDesc(int x, int y, int z, int w, int f)
{
    return (struct cr_channel_desc){x, y, z, w, f};
}
