/* ptx_effects.h - what a decoded instruction does to its operands: whether
 * o[0] is a destination, and which operand is the address of a store or an
 * atomic.  Shared by emu's strict mode and the analysis of which kernel
 * parameters a kernel may write through (launch/writes.c). */
#ifndef MH_PTX_EFFECTS_H
#define MH_PTX_EFFECTS_H

#include "frontend/ptx.h"
#include "frontend/ptx_mma.h"

/* Whether the instruction writes its first operand (a register or a vector of them). */
static inline int mh_ptx_writes_dst(const mh_ptx_insn *in)
{
    switch (in->op) {
    case MH_OP_ST: case MH_OP_RED: case MH_OP_MBARRIER_INIT: case MH_OP_CP_ASYNC: case MH_OP_BRA: case MH_OP_RET:
    case MH_OP_BAR: return in->cmp == MH_BAR_RED; /* bar.red writes d when the barrier opens */
    case MH_OP_EXIT: case MH_OP_MEMBAR: case MH_OP_PREFETCH: case MH_OP_TRAP: case MH_OP_CALL:
    case MH_OP_NOP: case MH_OP_MMA: case MH_OP_TMA: return 0; /* MMA, TMA: their operands are in their records */
    case MH_OP_MBARRIER:
        return mh_mb_addr_opnd(in->cmp) != 0 && in->o[0].kind == MH_OPK_REG;
    default: return 1;
    }
}

/* The address operand of an instruction that writes memory (st, atom, red), else NULL. */
static inline const mh_ptx_opnd *mh_ptx_store_address(const mh_ptx_insn *in)
{
    if (in->op == MH_OP_ST || in->op == MH_OP_RED) return &in->o[0];
    if (in->op == MH_OP_ATOM) return &in->o[1];
    /* stmatrix, wmma.store: their address as o[0] (kind in cmp) */
    if (in->op == MH_OP_MMA && in->nopnds && (in->cmp == MH_MMA_STMATRIX || in->cmp == MH_MMA_WMMA_STORE)) return &in->o[0];
    return NULL;
}

#endif
