/* unsupported.c - every runtime call the stand-in does not serve
 * (unsupported.def: graphs, arrays and textures, memory pools, IPC, peers,
 * external memory, libraries, logs ...): it says so with its name on stderr
 * and returns cudaErrorNotSupported, so a program fails where it would have
 * gone wrong, never with a silent success.  The arguments are not read. */
#include "cudart/cudart.h"

static cudaError_t unsupported(const char *name)
{
    cr_lock();
    cudaError_t r = cr_ready();
    if (r == cudaSuccess)
        r = cr_set(cudaErrorNotSupported, "%s is not supported by the CUDA runtime stand-in on emu "
                   "(docs/cudart.md lists what is)", name);
    cr_unlock();
    return r;
}

#define CR_UNSUPPORTED(name) \
    CR_EXPORT cudaError_t name(void); \
    cudaError_t name(void) { return unsupported(#name); }
#include "cudart/unsupported.def"
