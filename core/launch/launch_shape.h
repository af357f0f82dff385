/* launch_shape.h - the launch limits of a CUDA device of compute capability
 * 9.0 (H100/H200), checked before a launch reaches either backend, so that
 * emu refuses what a GPU would and the driver never sees a wrong shape:
 * grid and block dimensions, threads per block, the kernel's .maxntid /
 * .reqntid, and shared memory per block (static + dynamic). */
#ifndef MH_LAUNCH_SHAPE_H
#define MH_LAUNCH_SHAPE_H

#include <stdint.h>
#include "base/error.h"
#include "frontend/ptx.h"

/* Shared memory a block can have on sm_90 (227 KiB, with the opt-in). */
#define MH_SMEM_PER_BLOCK_SM90 232448u

/* MH_E_LAUNCH_FAILED naming the kernel and the limit when the launch of f
 * with grid, block and dynamic_smem bytes does not fit; smem_limit is the
 * device's shared memory per block. */
int mh_launch_shape_check(const mh_ptx_func *f, const uint32_t grid[3], const uint32_t block[3], uint64_t dynamic_smem,
                          uint64_t smem_limit, mh_error *e);

#endif
