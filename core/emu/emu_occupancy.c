/* emu_occupancy.c - the sm_90 occupancy calculator (see emu_occupancy.h). */
#include "emu/emu_occupancy.h"

#include <string.h>

static int round_up(int x, int unit) { return (x + unit - 1) / unit * unit; }

void mh_occupancy_sm90(int regs_per_thread, uint64_t smem, uint32_t threads, mh_occupancy *out)
{
    memset(out, 0, sizeof *out);
    int warps = (int)((threads + 31) / 32);
    if (warps < 1) warps = 1;
    out->by_warps = warps > MH_SM90_MAX_WARPS ? 0 : MH_SM90_MAX_WARPS / warps;
    out->by_blocks = MH_SM90_MAX_BLOCKS;
    /* registers: per warp in units of 256, per sub-partition (cudaOccMaxBlocksPerSMRegsLimit) */
    if (regs_per_thread > 0) {
        int per_warp = round_up(regs_per_thread * 32, 256);
        int assumed = per_warp * round_up(warps, 4); /* the hardware's per-block check */
        out->regs_per_block = per_warp * warps;
        if (regs_per_thread > 256 || assumed > MH_SM90_REGS || out->regs_per_block > MH_SM90_REGS) out->by_regs = 0;
        else out->by_regs = (MH_SM90_REGS / 4 / per_warp) * 4 / warps;
    } else {
        out->by_regs = -1;
    }
    /* shared memory (cudaOccMaxBlocksPerSMSmemLimit with the default carveout: all 228 KiB) */
    out->smem_per_block = (smem + MH_SM90_SMEM_RESERVED + 127) / 128 * 128;
    out->by_smem = out->smem_per_block > MH_SM90_SMEM_PER_SM ? 0 : (int)(MH_SM90_SMEM_PER_SM / out->smem_per_block);
    int best = out->by_warps;
    out->limited_by = "warps";
    if (out->by_blocks < best) { best = out->by_blocks; out->limited_by = "blocks"; }
    if (out->by_regs >= 0 && out->by_regs < best) { best = out->by_regs; out->limited_by = "registers"; }
    if (out->by_smem < best) { best = out->by_smem; out->limited_by = "shared memory"; }
    out->blocks_per_sm = best;
    out->warps_per_sm = best * warps;
    out->occupancy = (double)out->warps_per_sm / MH_SM90_MAX_WARPS;
}
