/* cuda_backend.h - the CUDA driver behind the backend interface (launch/backend.h). */
#ifndef MH_CUDA_BACKEND_H
#define MH_CUDA_BACKEND_H

#include "launch/backend.h"

extern const mh_backend mh_cuda_backend;

#endif
