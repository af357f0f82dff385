// spin.cu - regions of known length, for checking time accuracy: every warp
// spins on %globaltimer for ns[i] nanoseconds inside region "spin", starting
// on a tick of the timer (so the spin lasts ns[i] whatever the timer's
// resolution), then records `events` empty regions back to back in "tick"
// (the per-event cost), then spins `pad` ns outside any region so that the
// trace, whose start and exit calibrate the clock, spans at least that long.
// sink[1] gets the timer's step as block 0 saw it (its resolution).
#include "mgpu_markers.h"

__device__ __forceinline__ unsigned long long globaltimer()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

extern "C" __global__ void spin(const unsigned *ns, unsigned count, unsigned events, unsigned pad,
                                unsigned long long *sink)
{
    unsigned long long acc = 0, step = 0;
    for (unsigned i = 0; i < count; i++) {
        unsigned long long t0 = globaltimer(), t;
        while ((t = globaltimer()) == t0) acc++; // wait for the next tick
        step = t - t0;
        MGPU_BEGIN("spin");
        while (globaltimer() - t < ns[i]) acc++;
        MGPU_END("spin");
    }
    for (unsigned i = 0; i < events; i++) {
        MGPU_BEGIN("tick");
        MGPU_END("tick");
    }
    unsigned long long p0 = globaltimer();
    while (globaltimer() - p0 < pad) acc++;
    if (blockIdx.x == 0 && threadIdx.x == 0) sink[1] = step;
    if (acc == 0xffffffffffffffffull) sink[0] = acc; // keeps the loops
}
