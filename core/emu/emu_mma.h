/* emu_mma.h - the tensor-core instructions on emu (emu_mma.c), called by emu_exec_insn. */
#ifndef MH_EMU_MMA_H
#define MH_EMU_MMA_H

#include "emu/emu_internal.h"

/* Runs MH_OP_MMA instruction `in` for warp w: `mask` the lanes at it (step_warp waited for the
 * whole warp), `emask` those whose guard holds.  0, or -1 after a kernel_fault (emu_fault). */
int emu_mma_exec(ctx *c, warp *w, const mh_ptx_insn *in, uint32_t mask, uint32_t emask);

#endif
