/* errors.c - the error calls: the last error (reset by cudaGetLastError,
 * except a kernel fault's, which is sticky as on a GPU), names and
 * descriptions of every code of CUDA 13's enum cudaError. */
#include "cudart/cudart.h"

#include <stddef.h>

static const struct { int code; const char *name, *text; } names[] = {
#include "cudart/error_names.inc"
};

static size_t find(cudaError_t e)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].code == e) return i;
    return (size_t)-1;
}

CR_EXPORT const char *cudaGetErrorName(cudaError_t e);
const char *cudaGetErrorName(cudaError_t e)
{
    size_t i = find(e);
    return i == (size_t)-1 ? "cudaErrorUnknown" : names[i].name;
}

CR_EXPORT const char *cudaGetErrorString(cudaError_t e);
const char *cudaGetErrorString(cudaError_t e)
{
    size_t i = find(e);
    return i == (size_t)-1 ? "unrecognized error code" : names[i].text;
}

CR_EXPORT cudaError_t cudaGetLastError(void);
cudaError_t cudaGetLastError(void)
{
    cr_lock();
    cr_state *s = cr_get();
    cudaError_t r = s ? s->last : cudaErrorInitializationError;
    if (s) s->last = s->sticky;
    cr_unlock();
    return r;
}

CR_EXPORT cudaError_t cudaPeekAtLastError(void);
cudaError_t cudaPeekAtLastError(void)
{
    cr_lock();
    cr_state *s = cr_get();
    cudaError_t r = s ? s->last : cudaErrorInitializationError;
    cr_unlock();
    return r;
}
