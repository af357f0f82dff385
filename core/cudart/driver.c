/* driver.c - the driver API a runtime program reaches: cudaGetDriverEntryPoint
 * (ByVersion) hands out cuTensorMapEncodeTiled (on emu's encoding, checked
 * against the allocation the tensor lies in), cuGetErrorName/String,
 * cuDriverGetVersion and cuInit; those are also exported under their own
 * names (a program built by `mgpu-harness nvcc` that calls them directly).
 * Another symbol is NULL with cudaDriverEntryPointSymbolNotFound and a
 * message naming it. */
#include "cudart/cudart.h"
#include "cudart/cu_error_names.h"
#include "cudart/tensor_map_encode.h"

#include <stdio.h>
#include <string.h>

/* The encoding, called directly by both exported names: a call through an exported name would
 * bind to the libcuda.so.1 stand-in's, which forwards here (an endless loop). */
static int encode_tiled(void *map, int dtype, uint32_t rank, void *addr, const uint64_t *dims,
                        const uint64_t *strides, const uint32_t *box, const uint32_t *elem_strides, int interleave,
                        int swizzle, int l2, int oob)
{
    cr_lock();
    uint64_t bytes = 0;
    cr_alloc *a = cr_get() ? cr_alloc_of((uint64_t)(uintptr_t)addr) : NULL;
    if (a) bytes = a->addr + a->size - (uint64_t)(uintptr_t)addr;
    int r = a || !addr ? mh_cu_tensor_map_tiled(map, dtype, rank, addr, dims, strides, box, elem_strides, interleave,
                                               swizzle, l2, oob, bytes)
                       : (cr_say("cuTensorMapEncodeTiled: global address %p is not in an allocation of "
                                 "cudaMalloc/cudaMallocManaged", addr), 1);
    cr_unlock();
    return r;
}
CR_EXPORT int cuTensorMapEncodeTiled(void *map, int dtype, uint32_t rank, void *addr, const uint64_t *dims,
                                     const uint64_t *strides, const uint32_t *box, const uint32_t *elem_strides,
                                     int interleave, int swizzle, int l2, int oob);
int cuTensorMapEncodeTiled(void *map, int dtype, uint32_t rank, void *addr, const uint64_t *dims,
                           const uint64_t *strides, const uint32_t *box, const uint32_t *elem_strides, int interleave,
                           int swizzle, int l2, int oob)
{
    return encode_tiled(map, dtype, rank, addr, dims, strides, box, elem_strides, interleave, swizzle, l2, oob);
}

/* The same, for the libcuda.so.1 stand-in to forward to (it finds it in the process). */
CR_EXPORT int mgpu_cudart_tensor_map_tiled(void *map, int dtype, uint32_t rank, void *addr, const uint64_t *dims,
                                           const uint64_t *strides, const uint32_t *box,
                                           const uint32_t *elem_strides, int interleave, int swizzle, int l2, int oob);
int mgpu_cudart_tensor_map_tiled(void *map, int dtype, uint32_t rank, void *addr, const uint64_t *dims,
                                 const uint64_t *strides, const uint32_t *box, const uint32_t *elem_strides,
                                 int interleave, int swizzle, int l2, int oob)
{
    return encode_tiled(map, dtype, rank, addr, dims, strides, box, elem_strides, interleave, swizzle, l2, oob);
}

CR_EXPORT int cuInit(unsigned flags);
int cuInit(unsigned flags) { (void)flags; return 0; }
CR_EXPORT int cuDriverGetVersion(int *v);
int cuDriverGetVersion(int *v)
{
    if (!v) return 1;
    *v = 13000;
    return 0;
}
const char *cudaGetErrorString(cudaError_t e);
CR_EXPORT int cuGetErrorString(int err, const char **s);
int cuGetErrorString(int err, const char **s)
{
    if (!s) return 1;
    *s = mh_cu_error_name(err) ? cudaGetErrorString(err) : NULL; /* the same numbers, the same meanings */
    return *s ? 0 : 1;
}
CR_EXPORT int cuGetErrorName(int err, const char **s);
int cuGetErrorName(int err, const char **s)
{
    if (!s) return 1;
    *s = mh_cu_error_name(err);
    return *s ? 0 : 1;
}

void *cr_driver_entry(const char *name)
{
    static const struct { const char *name; void *fn; } table[] = {
        {"cuTensorMapEncodeTiled", (void *)encode_tiled},
        {"cuInit", (void *)cuInit},
        {"cuDriverGetVersion", (void *)cuDriverGetVersion},
        {"cuGetErrorString", (void *)cuGetErrorString},
        {"cuGetErrorName", (void *)cuGetErrorName},
    };
    for (size_t i = 0; name && i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(name, table[i].name)) return table[i].fn;
    return NULL;
}

static cudaError_t entry_point(const char *sym, void **fn, int *status, const char *call)
{
    if (!sym || !fn) return cr_set(cudaErrorInvalidValue, "%s: symbol or funcPtr is NULL", call);
    *fn = cr_driver_entry(sym);
    if (status) *status = *fn ? 0 : 1;
    if (!*fn) cr_say("%s(\"%s\"): the driver API stand-in has no %s (it has cuTensorMapEncodeTiled, cuInit, "
                     "cuDriverGetVersion, cuGetErrorString, cuGetErrorName)", call, sym, sym);
    return cudaSuccess;
}
CR_EXPORT cudaError_t cudaGetDriverEntryPoint(const char *sym, void **fn, unsigned long long flags, int *status);
cudaError_t cudaGetDriverEntryPoint(const char *sym, void **fn, unsigned long long flags, int *status)
{
    (void)flags;
    CR_API(entry_point(sym, fn, status, "cudaGetDriverEntryPoint"));
}
CR_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *sym, void **fn, unsigned version,
                                                       unsigned long long flags, int *status);
cudaError_t cudaGetDriverEntryPointByVersion(const char *sym, void **fn, unsigned version, unsigned long long flags,
                                             int *status)
{
    (void)flags, (void)version;
    CR_API(entry_point(sym, fn, status, "cudaGetDriverEntryPointByVersion"));
}
CR_ALIAS(cudaGetDriverEntryPoint_ptsz, cudaGetDriverEntryPoint)
CR_ALIAS(cudaGetDriverEntryPointByVersion_ptsz, cudaGetDriverEntryPointByVersion)
