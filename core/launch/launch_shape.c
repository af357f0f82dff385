/* launch_shape.c - the launch limits of sm_90 devices (see launch_shape.h). */
#include "launch/launch_shape.h"

int mh_launch_shape_check(const mh_ptx_func *f, const uint32_t grid[3], const uint32_t block[3], uint64_t dynamic_smem,
                          uint64_t smem_limit, mh_error *e)
{
    static const uint32_t block_max[3] = {1024, 1024, 64}, grid_max[3] = {2147483647u, 65535, 65535};
    static const char axis[3] = {'x', 'y', 'z'};
    for (int i = 0; i < 3; i++) {
        if (!block[i] || block[i] > block_max[i])
            return mh_fail(e, MH_E_LAUNCH_FAILED, "%s: block.%c = %u: it must be 1 to %u", f->short_name, axis[i], block[i],
                           block_max[i]);
        if (!grid[i] || grid[i] > grid_max[i])
            return mh_fail(e, MH_E_LAUNCH_FAILED, "%s: grid.%c = %u: it must be 1 to %u", f->short_name, axis[i], grid[i],
                           grid_max[i]);
    }
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    if (threads > 1024)
        return mh_fail(e, MH_E_LAUNCH_FAILED, "%s: block %ux%ux%u has %llu threads: at most 1024", f->short_name, block[0],
                       block[1], block[2], (unsigned long long)threads);
    if (f->maxntid[0]) {
        uint32_t m[3] = {f->maxntid[0], f->maxntid[1] ? f->maxntid[1] : 1, f->maxntid[2] ? f->maxntid[2] : 1};
        if (f->reqntid && (block[0] != m[0] || block[1] != m[1] || block[2] != m[2]))
            return mh_fail(e, MH_E_LAUNCH_FAILED, "%s: block %ux%ux%u, but the kernel requires %ux%ux%u (.reqntid)",
                           f->short_name, block[0], block[1], block[2], m[0], m[1], m[2]);
        if (threads > (uint64_t)m[0] * m[1] * m[2])
            return mh_fail(e, MH_E_LAUNCH_FAILED, "%s: %llu threads per block exceed its .maxntid %ux%ux%u", f->short_name,
                           (unsigned long long)threads, m[0], m[1], m[2]);
    }
    if (f->shared_bytes + dynamic_smem > smem_limit)
        return mh_fail(e, MH_E_LAUNCH_FAILED, "%s: %llu bytes of shared memory per block (%llu static + %llu dynamic); "
                       "the device has %llu", f->short_name, (unsigned long long)(f->shared_bytes + dynamic_smem),
                       (unsigned long long)f->shared_bytes, (unsigned long long)dynamic_smem,
                       (unsigned long long)smem_limit);
    return 0;
}
