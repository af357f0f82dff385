/* test_cuda_abi.c - core/cuda_api.h declares the driver's enum values itself
 * (the build needs no toolkit); where cuda.h is installed, this checks them
 * against it at compile time. */
#include <cuda.h>
#include <stdio.h>
#define MH_CUDA_API_VALUES_ONLY
#include "cuda_api.h"

#define SAME(a, b) _Static_assert((int)(a) == (int)(b), #a " differs from cuda.h")
SAME(MH_CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY);
SAME(MH_CUDA_ERROR_NO_DEVICE, CUDA_ERROR_NO_DEVICE);
SAME(MH_CUDA_ERROR_INVALID_PTX, CUDA_ERROR_INVALID_PTX);
SAME(MH_CUDA_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_NO_BINARY_FOR_GPU);
SAME(MH_CUDA_ERROR_NOT_FOUND, CUDA_ERROR_NOT_FOUND);
SAME(MH_CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_ILLEGAL_ADDRESS);
SAME(MH_CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
SAME(MH_CUDA_ERROR_MISALIGNED_ADDRESS, CUDA_ERROR_MISALIGNED_ADDRESS);
SAME(MH_CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_FAILED);
SAME(MH_CUDA_ERROR_ILLEGAL_INSTRUCTION, CUDA_ERROR_ILLEGAL_INSTRUCTION);
SAME(MH_CUDA_ERROR_ASSERT, CUDA_ERROR_ASSERT);
SAME(MH_CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER);
SAME(MH_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
SAME(MH_CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER);
SAME(MH_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
SAME(MH_CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_OPTIMIZATION_LEVEL);
SAME(MH_CU_JIT_LOG_VERBOSE, CU_JIT_LOG_VERBOSE);
SAME(MH_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
SAME(MH_CU_DEVICE_ATTRIBUTE_CLOCK_RATE, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
SAME(MH_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
SAME(MH_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
SAME(MH_CU_FUNC_ATTRIBUTE_NUM_REGS, CU_FUNC_ATTRIBUTE_NUM_REGS);
SAME(MH_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);

SAME(MH_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
#include <stddef.h>
_Static_assert(sizeof(mh_CUlaunchAttribute) == sizeof(CUlaunchAttribute), "CUlaunchAttribute size");
_Static_assert(offsetof(mh_CUlaunchAttribute, value) == offsetof(CUlaunchAttribute, value), "CUlaunchAttribute.value");
_Static_assert(sizeof(mh_CUlaunchConfig) == sizeof(CUlaunchConfig), "CUlaunchConfig size");
_Static_assert(offsetof(mh_CUlaunchConfig, sharedMemBytes) == offsetof(CUlaunchConfig, sharedMemBytes), "sharedMemBytes");
_Static_assert(offsetof(mh_CUlaunchConfig, hStream) == offsetof(CUlaunchConfig, hStream), "hStream");
_Static_assert(offsetof(mh_CUlaunchConfig, attrs) == offsetof(CUlaunchConfig, attrs), "attrs");
_Static_assert(offsetof(mh_CUlaunchConfig, numAttrs) == offsetof(CUlaunchConfig, numAttrs), "numAttrs");

int main(void)
{
    puts("core/cuda_api.h matches cuda.h");
    return 0;
}
