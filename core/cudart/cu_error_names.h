/* cu_error_names.h - the CUDA driver API's names of the results the stand-ins give
 * (CUDA_ERROR_*), shared by the runtime stand-in's driver calls (driver.c) and the
 * libcuda.so.1 stand-in (libcuda.c), so both name an error alike. */
#ifndef MH_CU_ERROR_NAMES_H
#define MH_CU_ERROR_NAMES_H

/* The driver's name of result err ("CUDA_ERROR_OUT_OF_MEMORY"), or NULL for a number it has none for. */
const char *mh_cu_error_name(int err);

#endif
