/* cudart_abi.h - the CUDA runtime's types as a program compiled against CUDA 13's
 * headers passes them (driver_types.h, vector_types.h): error codes, dim3, the
 * device properties, function attributes and the extensible launch
 * configuration.  Declared here, not included, so that the stand-in builds
 * where no CUDA toolkit is installed; tests/cudart/device_query.cu checks the
 * layout against nvcc's headers where there is one. */
#ifndef MH_CUDART_ABI_H
#define MH_CUDART_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int cudaError_t; /* enum cudaError: the values below */
enum {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidSymbol = 13,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidKernelImage = 200,
    cudaErrorNoKernelImageForDevice = 209,
    cudaErrorInvalidPtx = 218,
    cudaErrorFileNotFound = 301,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorSymbolNotFound = 500,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorLaunchTimeout = 702,
    cudaErrorAssert = 710,
    cudaErrorLaunchFailure = 719,
    cudaErrorCooperativeLaunchTooLarge = 720,
    cudaErrorNotSupported = 801,
    cudaErrorInvalidClusterSize = 912,
    cudaErrorUnknown = 999,
};

typedef struct { unsigned x, y, z; } cr_dim3; /* dim3 and uint3: 12 bytes, passed in two registers */

typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef void *cudaKernel_t;

enum { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice,
       cudaMemcpyDefault };

typedef struct { char bytes[16]; } cr_uuid;

/* struct cudaDeviceProp of CUDA 13 (field for field) */
typedef struct cr_device_prop {
    char name[256];
    cr_uuid uuid;
    char luid[8];
    unsigned int luidDeviceNodeMask;
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    size_t texturePitchAlignment;
    int multiProcessorCount;
    int integrated;
    int canMapHostMemory;
    int maxTexture1D;
    int maxTexture1DMipmap;
    int maxTexture2D[2];
    int maxTexture2DMipmap[2];
    int maxTexture2DLinear[3];
    int maxTexture2DGather[2];
    int maxTexture3D[3];
    int maxTexture3DAlt[3];
    int maxTextureCubemap;
    int maxTexture1DLayered[2];
    int maxTexture2DLayered[3];
    int maxTextureCubemapLayered[2];
    int maxSurface1D;
    int maxSurface2D[2];
    int maxSurface3D[3];
    int maxSurface1DLayered[2];
    int maxSurface2DLayered[3];
    int maxSurfaceCubemap;
    int maxSurfaceCubemapLayered[2];
    size_t surfaceAlignment;
    int concurrentKernels;
    int ECCEnabled;
    int pciBusID;
    int pciDeviceID;
    int pciDomainID;
    int tccDriver;
    int asyncEngineCount;
    int unifiedAddressing;
    int memoryBusWidth;
    int l2CacheSize;
    int persistingL2CacheMaxSize;
    int maxThreadsPerMultiProcessor;
    int streamPrioritiesSupported;
    int globalL1CacheSupported;
    int localL1CacheSupported;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    int managedMemory;
    int isMultiGpuBoard;
    int multiGpuBoardGroupID;
    int hostNativeAtomicSupported;
    int pageableMemoryAccess;
    int concurrentManagedAccess;
    int computePreemptionSupported;
    int canUseHostPointerForRegisteredMem;
    int cooperativeLaunch;
    size_t sharedMemPerBlockOptin;
    int pageableMemoryAccessUsesHostPageTables;
    int directManagedMemAccessFromHost;
    int maxBlocksPerMultiProcessor;
    int accessPolicyMaxWindowSize;
    size_t reservedSharedMemPerBlock;
    int hostRegisterSupported;
    int sparseCudaArraySupported;
    int hostRegisterReadOnlySupported;
    int timelineSemaphoreInteropSupported;
    int memoryPoolsSupported;
    int gpuDirectRDMASupported;
    unsigned int gpuDirectRDMAFlushWritesOptions;
    int gpuDirectRDMAWritesOrdering;
    unsigned int memoryPoolSupportedHandleTypes;
    int deferredMappingCudaArraySupported;
    int ipcEventSupported;
    int clusterLaunch;
    int unifiedFunctionPointers;
    int deviceNumaConfig;
    int deviceNumaId;
    int mpsEnabled;
    int hostNumaId;
    unsigned int gpuPciDeviceID;
    unsigned int gpuPciSubsystemID;
    int hostNumaMultinodeIpcSupported;
    int reserved[56];
} cr_device_prop;

/* struct cudaFuncAttributes */
typedef struct cr_func_attributes {
    size_t sharedSizeBytes, constSizeBytes, localSizeBytes;
    int maxThreadsPerBlock, numRegs, ptxVersion, binaryVersion, cacheModeCA, maxDynamicSharedSizeBytes,
        preferredShmemCarveout, clusterDimMustBeSet, requiredClusterWidth, requiredClusterHeight,
        requiredClusterDepth, clusterSchedulingPolicyPreference, nonPortableClusterSizeAllowed;
    int reserved[16];
} cr_func_attributes;

enum { cudaFuncAttributeMaxDynamicSharedMemorySize = 8, cudaFuncAttributePreferredSharedMemoryCarveout = 9,
       cudaFuncAttributeClusterDimMustBeSet = 10, cudaFuncAttributeRequiredClusterWidth = 11,
       cudaFuncAttributeRequiredClusterHeight = 12, cudaFuncAttributeRequiredClusterDepth = 13,
       cudaFuncAttributeNonPortableClusterSizeAllowed = 14,
       cudaFuncAttributeClusterSchedulingPolicyPreference = 15 };

/* cudaLaunchAttribute and cudaLaunchConfig_t */
enum { cudaLaunchAttributeIgnore = 0, cudaLaunchAttributeAccessPolicyWindow = 1, cudaLaunchAttributeCooperative = 2,
       cudaLaunchAttributeSynchronizationPolicy = 3, cudaLaunchAttributeClusterDimension = 4,
       cudaLaunchAttributeClusterSchedulingPolicyPreference = 5,
       cudaLaunchAttributeProgrammaticStreamSerialization = 6, cudaLaunchAttributeProgrammaticEvent = 7,
       cudaLaunchAttributePriority = 8, cudaLaunchAttributeMemSyncDomainMap = 9,
       cudaLaunchAttributeMemSyncDomain = 10, cudaLaunchAttributePreferredClusterDimension = 11,
       cudaLaunchAttributeLaunchCompletionEvent = 12, cudaLaunchAttributeDeviceUpdatableKernelNode = 13,
       cudaLaunchAttributePreferredSharedMemoryCarveout = 14 };

typedef struct cr_launch_attribute {
    int id;
    char pad[4];
    union {
        char pad[64];
        int cooperative;
        struct { unsigned x, y, z; } clusterDim;
        int priority;
        unsigned sharedMemCarveout;
    } val;
} cr_launch_attribute;

typedef struct cr_launch_config {
    cr_dim3 gridDim, blockDim;
    size_t dynamicSmemBytes;
    cudaStream_t stream;
    cr_launch_attribute *attrs;
    unsigned numAttrs;
} cr_launch_config;

/* cudaPointerAttributes */
enum { cudaMemoryTypeUnregistered = 0, cudaMemoryTypeHost = 1, cudaMemoryTypeDevice = 2, cudaMemoryTypeManaged = 3 };
typedef struct cr_pointer_attributes {
    int type;
    int device;
    void *devicePointer;
    void *hostPointer;
    long reserved[8];
} cr_pointer_attributes;

#endif
