// spin.cu - regions of known length, for checking time accuracy: each warp's
// lane 0 spins on %globaltimer for ns[i] nanoseconds inside region "spin",
// and records `events` empty regions back to back in "tick" (the per-event
// cost).  Everything else idles.
#include "mgpu_markers.h"

__device__ __forceinline__ unsigned long long globaltimer()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

extern "C" __global__ void spin(const unsigned *ns, unsigned count, unsigned events, unsigned long long *sink)
{
    unsigned long long acc = 0;
    for (unsigned i = 0; i < count; i++) {
        MGPU_BEGIN("spin");
        unsigned long long t0 = globaltimer();
        while (globaltimer() - t0 < ns[i]) acc++;
        MGPU_END("spin");
    }
    for (unsigned i = 0; i < events; i++) {
        MGPU_BEGIN("tick");
        MGPU_END("tick");
    }
    if (acc == 0xffffffffffffffffull) sink[0] = acc; // keeps the loop
}
