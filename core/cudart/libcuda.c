/* libcuda.c - the libcuda.so.1 stand-in `mgpu-harness exec` puts first on the
 * library path: the few driver calls a runtime program makes for Hopper's
 * tensor maps (cuTensorMapEncodeTiled, cuGetProcAddress for it, cuInit,
 * cuDriverGetVersion, cuGetErrorName/String).  The encoding is the runtime
 * stand-in's when it is in the process (it knows the allocations: the map is
 * checked against the array), else done here unchecked against it.  Any
 * other driver call is missing: the program fails when it links or calls it. */
#include "cudart/cu_error_names.h"
#include "cudart/foreign_libs.h"
#include "cudart/tensor_map_encode.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int (*tiled_fn)(void *, int, uint32_t, void *, const uint64_t *, const uint64_t *, const uint32_t *,
                        const uint32_t *, int, int, int, int);

EXPORT int cuTensorMapEncodeTiled(void *map, int dtype, uint32_t rank, void *addr, const uint64_t *dims,
                                  const uint64_t *strides, const uint32_t *box, const uint32_t *elem_strides,
                                  int interleave, int swizzle, int l2, int oob);
int cuTensorMapEncodeTiled(void *map, int dtype, uint32_t rank, void *addr, const uint64_t *dims,
                           const uint64_t *strides, const uint32_t *box, const uint32_t *elem_strides, int interleave,
                           int swizzle, int l2, int oob)
{
    tiled_fn rt = (tiled_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "mgpu_cudart_tensor_map_tiled");
    if (rt) return rt(map, dtype, rank, addr, dims, strides, box, elem_strides, interleave, swizzle, l2, oob);
    return mh_cu_tensor_map_tiled(map, dtype, rank, addr, dims, strides, box, elem_strides, interleave, swizzle, l2,
                                  oob, 0);
}

/* loaded by one of NVIDIA's libraries (cuBLAS opens libcuda.so.1 itself), it is named here */
__attribute__((constructor)) static void say_foreign(void) { cr_say_foreign_libraries(); }

EXPORT int cuInit(unsigned flags);
int cuInit(unsigned flags) { (void)flags; return 0; }
EXPORT int cuDriverGetVersion(int *v);
int cuDriverGetVersion(int *v)
{
    if (!v) return 1;
    *v = 13000;
    return 0;
}
EXPORT int cuGetErrorString(int err, const char **s);
int cuGetErrorString(int err, const char **s)
{
    if (!s) return 1;
    const char *name = mh_cu_error_name(err);
    if (!name) return 1; /* CUDA_ERROR_INVALID_VALUE, as the driver answers an unknown number */
    /* the runtime stand-in's description when it is in the process (the numbers mean the same), else the name */
    const char *(*rt)(int) = (const char *(*)(int))(uintptr_t)dlsym(RTLD_DEFAULT, "cudaGetErrorString");
    *s = rt ? rt(err) : name;
    return 0;
}
EXPORT int cuGetErrorName(int err, const char **s);
int cuGetErrorName(int err, const char **s)
{
    if (!s) return 1;
    *s = mh_cu_error_name(err);
    return *s ? 0 : 1;
}

static void *entry(const char *name)
{
    if (!name) return NULL;
    if (!strcmp(name, "cuTensorMapEncodeTiled")) return (void *)cuTensorMapEncodeTiled;
    if (!strcmp(name, "cuInit")) return (void *)cuInit;
    if (!strcmp(name, "cuDriverGetVersion")) return (void *)cuDriverGetVersion;
    if (!strcmp(name, "cuGetErrorString")) return (void *)cuGetErrorString;
    if (!strcmp(name, "cuGetErrorName")) return (void *)cuGetErrorName;
    return NULL;
}
EXPORT int cuGetProcAddress_v2(const char *sym, void **fn, int version, uint64_t flags, int *status);
int cuGetProcAddress_v2(const char *sym, void **fn, int version, uint64_t flags, int *status)
{
    (void)version, (void)flags;
    if (!fn) return 1;
    *fn = entry(sym);
    if (status) *status = *fn ? 0 : 1;
    static int said;
    if (!*fn && sym && *sym && !said) { /* NVIDIA's runtime asks for the whole driver ("" first, then cuInit, ...) */
        said = 1;
        fprintf(stderr, "mgpu cudart: cuGetProcAddress(\"%s\"): the libcuda.so.1 stand-in serves only "
                "cuTensorMapEncodeTiled, cuInit, cuDriverGetVersion and cuGetErrorName/String. A program linked with "
                "NVIDIA's CUDA runtime (nvcc's default -cudart static; NVIDIA's libraries carry one too) asks it for the "
                "whole driver and stops (\"insufficient driver\"): build the program with `mgpu-harness nvcc`, or nvcc "
                "-cudart shared, to run it on emu (docs/cudart.md)\n", sym);
        fflush(stderr);
    }
    return *fn ? 0 : 500; /* CUDA_ERROR_NOT_FOUND */
}
EXPORT int cuGetProcAddress(const char *sym, void **fn, int version, uint64_t flags, int *status);
int cuGetProcAddress(const char *sym, void **fn, int version, uint64_t flags, int *status)
{
    return cuGetProcAddress_v2(sym, fn, version, flags, status);
}
