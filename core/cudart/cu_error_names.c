/* cu_error_names.c - the CUDA driver API's names of the results the stand-ins give: the driver's
 * numbers are the runtime's for these (driver_api.c returns the runtime's codes), so one table
 * serves cuGetErrorName in both stand-ins. */
#include "cudart/cu_error_names.h"

#include <stddef.h>

static const struct { int code; const char *name; } names[] = {
    {0, "CUDA_SUCCESS"}, {1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {3, "CUDA_ERROR_NOT_INITIALIZED"}, {101, "CUDA_ERROR_INVALID_DEVICE"}, {200, "CUDA_ERROR_INVALID_IMAGE"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"}, {218, "CUDA_ERROR_INVALID_PTX"}, {301, "CUDA_ERROR_FILE_NOT_FOUND"},
    {400, "CUDA_ERROR_INVALID_HANDLE"}, {500, "CUDA_ERROR_NOT_FOUND"}, {600, "CUDA_ERROR_NOT_READY"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS"}, {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"}, {710, "CUDA_ERROR_ASSERT"},
    {719, "CUDA_ERROR_LAUNCH_FAILED"}, {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"},
    {801, "CUDA_ERROR_NOT_SUPPORTED"}, {912, "CUDA_ERROR_INVALID_CLUSTER_SIZE"}, {999, "CUDA_ERROR_UNKNOWN"},
};

const char *mh_cu_error_name(int err)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].code == err) return names[i].name;
    return NULL;
}
