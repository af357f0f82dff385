/* cuda_api.h - the part of the CUDA Driver API the harness uses, declared
 * here (types, the numeric values of the enums, function signatures) so that
 * the build needs no CUDA toolkit: libcuda is loaded at run time with
 * dlopen, and nothing links against it.  The values are the driver ABI; a
 * test checks them against cuda.h where the toolkit is installed. */
#ifndef MH_CUDA_API_H
#define MH_CUDA_API_H

#include <stddef.h>

#ifndef MH_CUDA_API_VALUES_ONLY /* test_cuda_abi includes the values next to cuda.h */
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
#endif

enum {
    MH_CUDA_SUCCESS = 0,
    MH_CUDA_ERROR_INVALID_VALUE = 1,
    MH_CUDA_ERROR_OUT_OF_MEMORY = 2,
    MH_CUDA_ERROR_NOT_INITIALIZED = 3,
    MH_CUDA_ERROR_NO_DEVICE = 100,
    MH_CUDA_ERROR_INVALID_IMAGE = 200,
    MH_CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    MH_CUDA_ERROR_INVALID_PTX = 218,
    MH_CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221,
    MH_CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    MH_CUDA_ERROR_CONTAINED = 226,
    MH_CUDA_ERROR_INVALID_HANDLE = 400,
    MH_CUDA_ERROR_NOT_FOUND = 500,
    MH_CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    MH_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
    MH_CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    MH_CUDA_ERROR_ASSERT = 710,
    MH_CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
    MH_CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
    MH_CUDA_ERROR_MISALIGNED_ADDRESS = 716,
    MH_CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
    MH_CUDA_ERROR_INVALID_PC = 718,
    MH_CUDA_ERROR_LAUNCH_FAILED = 719,
    MH_CUDA_ERROR_TENSOR_MEMORY_LEAK = 721,
    MH_CUDA_ERROR_EXTERNAL_DEVICE = 911,
    MH_CUDA_ERROR_INVALID_CLUSTER_SIZE = 912,
};

enum {
    MH_CU_JIT_MAX_REGISTERS = 0,
    MH_CU_JIT_INFO_LOG_BUFFER = 3,
    MH_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    MH_CU_JIT_ERROR_LOG_BUFFER = 5,
    MH_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    MH_CU_JIT_OPTIMIZATION_LEVEL = 7,
    MH_CU_JIT_TARGET_FROM_CUCONTEXT = 8,
    MH_CU_JIT_TARGET = 9,
    MH_CU_JIT_LOG_VERBOSE = 12,
};

/* CUjit_target for architecture-specific ("sm_90a") and family ("sm_100f")
 * PTX: the base plus the compute capability as 10*major+minor. */
enum { MH_CU_TARGET_ARCH_SPECIFIC_BASE = 0x10000, MH_CU_TARGET_FAMILY_BASE = 0x20000 };

enum {
    MH_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    MH_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8, /* what a block gets without opting in (48 KiB) */
    MH_CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
    MH_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    MH_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    MH_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    MH_CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
    MH_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

enum { MH_CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2, MH_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4 };

/* cuLaunchKernelEx's configuration (layout checked against cuda.h by test_cuda_abi). */
typedef struct mh_CUlaunchAttribute {
    int id;
    char pad[4];
    union {
        char pad[64];
        struct { unsigned x, y, z; } clusterDim;
        int cooperative;
        void *align_;
    } value;
} mh_CUlaunchAttribute;

typedef struct mh_CUlaunchConfig {
    unsigned gridDimX, gridDimY, gridDimZ;
    unsigned blockDimX, blockDimY, blockDimZ;
    unsigned sharedMemBytes;
    void *hStream;
    mh_CUlaunchAttribute *attrs;
    unsigned numAttrs;
} mh_CUlaunchConfig;

enum {
    MH_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    MH_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    MH_CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
    MH_CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    MH_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    MH_CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14,
};

/* The portable cluster size of sm_90 (cuda.h): larger clusters need the
 * function's NON_PORTABLE_CLUSTER_SIZE_ALLOWED set first. */
enum { MH_CU_PORTABLE_CLUSTER_BLOCKS = 8 };

#ifndef MH_CUDA_API_VALUES_ONLY
/* The driver entry points, resolved by name with dlsym (the _v2 names are
 * the ones cuda.h maps the plain names to; cuEventElapsedTime is CUDA 13's
 * cuEventElapsedTime_v2 where the driver has it, else the old name). */
typedef struct mh_cuda_fns {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDriverGetVersion)(int *);
    CUresult (*cuDeviceGetCount)(int *);
    CUresult (*cuDeviceGet)(CUdevice *, int);
    CUresult (*cuDeviceGetName)(char *, int, CUdevice);
    CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
    CUresult (*cuDeviceTotalMem_v2)(size_t *, CUdevice);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*cuDevicePrimaryCtxRelease_v2)(CUdevice);
    CUresult (*cuDevicePrimaryCtxReset_v2)(CUdevice);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuCtxSynchronize)(void);
    CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
    CUresult (*cuModuleUnload)(CUmodule);
    CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
    CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
    CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
    CUresult (*cuMemFree_v2)(CUdeviceptr);
    CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void *, size_t);
    CUresult (*cuMemcpyDtoH_v2)(void *, CUdeviceptr, size_t);
    CUresult (*cuMemsetD8_v2)(CUdeviceptr, unsigned char, size_t);
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               CUstream, void **, void **);
    CUresult (*cuLaunchKernelEx)(const mh_CUlaunchConfig *, CUfunction, void **, void **); /* NULL: driver < 12.0 */
    CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t);
    /* (CUtensorMap *, data type, rank, address, dims, strides, box, element strides, interleave, swizzle,
     *  L2 promotion, OOB fill); NULL: driver < 12.0 */
    CUresult (*cuTensorMapEncodeTiled)(void *, int, unsigned, void *, const unsigned long long *,
                                       const unsigned long long *, const unsigned *, const unsigned *, int, int, int,
                                       int);
    CUresult (*cuEventCreate)(CUevent *, unsigned);
    CUresult (*cuEventRecord)(CUevent, CUstream);
    CUresult (*cuEventSynchronize)(CUevent);
    CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*cuEventDestroy_v2)(CUevent);
    CUresult (*cuGetErrorName)(CUresult, const char **);
    CUresult (*cuGetErrorString)(CUresult, const char **);
} mh_cuda_fns;
#endif

#endif
