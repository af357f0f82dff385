/* emu_occupancy.h - how many blocks of a kernel one sm_90 SM holds at once, computed as
 * the CUDA occupancy calculator does (cuda_occupancy.h, cudaOccMaxActiveBlocksPerMultiprocessor,
 * default shared-memory carveout): the least of the limits from warps (64 per SM), blocks
 * (32), registers (65536 per SM in 4 sub-partitions, allocated per warp in units of 256;
 * applied only when the registers per thread are known, from ptxas or the driver) and
 * shared memory (228 KiB per SM; per block static + dynamic + 1 KiB the driver reserves,
 * in 128-byte granules).  emu's residency uses it, and kernel:info{block=} reports it. */
#ifndef MH_EMU_OCCUPANCY_H
#define MH_EMU_OCCUPANCY_H

#include <stdint.h>

#define MH_SM90_MAX_WARPS 64
#define MH_SM90_MAX_BLOCKS 32
#define MH_SM90_REGS 65536
#define MH_SM90_SMEM_PER_SM 233472u      /* 228 KiB */
#define MH_SM90_SMEM_RESERVED 1024u      /* per block, reserved by the driver (cc 8.0+) */

typedef struct mh_occupancy {
    int blocks_per_sm;          /* 0: one block does not fit */
    int warps_per_sm;
    double occupancy;           /* warps_per_sm / 64 */
    const char *limited_by;     /* "warps", "blocks", "registers", "shared memory" */
    int by_warps, by_blocks, by_regs, by_smem; /* the blocks each limit allows; by_regs -1: registers unknown */
    uint64_t smem_per_block;    /* shared memory a block is allocated (with the reserved KiB, rounded up) */
    int regs_per_block;         /* registers a block is allocated (0: unknown) */
} mh_occupancy;

/* regs_per_thread <= 0: unknown (no register limit); smem: static + dynamic bytes per block */
void mh_occupancy_sm90(int regs_per_thread, uint64_t smem, uint32_t threads, mh_occupancy *out);

#endif
